"""The simulator's checks as the command line sees them: option names in errors, up-front checks.

The library's constructors and functions name the argument a caller
passed (``servers: must be at most 100,000 ...``); ``scheduling-opt
simulate`` and ``reproduce`` run the same checks and show their own option
instead (``--servers: ...``) through :func:`as_options`, one mapping from
argument to option, so each rule is written once. The rest are checks only
a command needs before it runs anything: the output folder
(:func:`output_folder`) and a trace read once up front (:func:`preload_trace`),
so that a malformed or empty trace is one line before any run starts, and
the sweep's size is known.
"""

from __future__ import annotations

import argparse
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path

from scheduling_opt.errors import InvalidInstanceError
from scheduling_opt.sim.workload import BUNDLED, Workload, load_trace

#: The bundled workloads ``--workload`` names.
WORKLOADS = (BUNDLED, "synthetic")
#: Servers of a trace file or the synthetic workload (Chronus' C120).
TRACE_SERVERS = 120


def add_source(parser: argparse.ArgumentParser) -> None:
    """``--trace FILE`` or ``--workload NAME``, one of them (``simulate``, ``bound``)."""
    src = parser.add_mutually_exclusive_group()
    src.add_argument("--trace", metavar="FILE", help="a Chronus-Philly CSV (full trace by path)")
    src.add_argument(
        "--workload",
        choices=WORKLOADS,
        help=f"a bundled workload (default {BUNDLED}: P_MIX2's first day) or 'synthetic'",
    )


#: The option of ``simulate`` and ``reproduce`` behind each library argument.
OPTIONS: dict[str, str] = {
    "servers": "--servers",
    "gpus_per_server": "--gpus-per-server",
    "seed": "--seeds",
    "configs": "--seeds",
    "restart_cost": "--restart-cost",
    "preemption_cost": "--preemption-cost",
    "round_length": "--round",
    "start_overhead": "--start-overhead",
    "resize_cost": "--resize-cost",
    "arrival_step": "--arrival-step",
    "skip": "--skip",
    "policy": "--policy",
    "name": "--policy",
    "policy_params": "--policy",
    "plugins": "--plugin",
    "jobs": "--synthetic-jobs",
    "workers": "--workers",
    "executor": "--executor",
    "step": "--timeline-step",
    "traces": "--traces",
}


@contextmanager
def as_options(names: Mapping[str, str] = OPTIONS) -> Iterator[None]:
    """Re-raise an :class:`~scheduling_opt.errors.InvalidInstanceError` of a library argument
    under its command-line option (``servers`` -> ``--servers``); others pass unchanged.

    Examples
    --------
    >>> from scheduling_opt.sim.cluster import ClusterSpec
    >>> with as_options():
    ...     ClusterSpec.uniform(0, 8)
    Traceback (most recent call last):
    ...
    scheduling_opt.errors.InvalidInstanceError: --servers: must be >= 1, got 0
    """
    try:
        yield
    except InvalidInstanceError as e:
        option = names.get(e.path)
        if option is None:
            raise
        raise type(e)(option, e.reason) from None


def output_folder(text: str, option: str = "--out") -> Path:
    """Create the folder ``text`` and its ``cache`` subfolder now, or name ``option`` in one line.

    Done before any run, so that a file in the way (``--out FILE/sub``) or a
    folder that cannot be written fails at once, not after the runs.

    Examples
    --------
    >>> import tempfile, os
    >>> with tempfile.NamedTemporaryFile() as f:
    ...     output_folder(os.path.join(f.name, "sub"))  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    scheduling_opt.errors.InvalidInstanceError: --out: cannot create folder .../sub: Not a directory
    """
    folder = Path(text)
    for path in (folder, folder / "cache"):
        try:
            path.mkdir(parents=True, exist_ok=True)
        except OSError as e:
            raise InvalidInstanceError(
                option, f"cannot create folder {path}: {e.strerror or e}"
            ) from None
    return folder


def preload_trace(text: str, option: str = "--trace") -> Workload:
    """Read a trace file once up front (its errors name ``file:line column``); refuse one with no job.

    Examples
    --------
    >>> import tempfile
    >>> from scheduling_opt.io.traces import COLUMNS
    >>> with tempfile.NamedTemporaryFile("w", suffix=".csv") as f:
    ...     _ = f.write(",".join(COLUMNS) + "\\n"); f.flush()
    ...     preload_trace(f.name)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    scheduling_opt.errors.InvalidInstanceError: /tmp/....csv: no jobs to simulate (the trace has a header and no rows)
    """
    path = Path(text)
    if not path.is_file():
        raise InvalidInstanceError(
            text, "no such trace file" if not path.exists() else "not a file"
        )
    workload = load_trace(path)
    if not workload.jobs:
        raise InvalidInstanceError(
            text,
            "no jobs to simulate (the trace has a header and no rows)"
            if _rows(path) == 0
            else "no jobs to simulate (every row asks for 0 GPUs, which are skipped)",
        )
    return workload


def _rows(path: Path) -> int:
    from scheduling_opt.io.traces import iter_trace

    return sum(1 for _ in iter_trace(path))
