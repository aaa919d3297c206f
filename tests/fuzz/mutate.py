"""Hostile mutations of instance files, and the capped CLI runner that judges them (issue 17).

A *seed* is an instance document: every curated file of ``instances/`` and
every generated quick-suite instance (``scheduling-opt generate PROBLEM
--size S --seed 0``, produced in-process by the same generator and writer).
A *mutant* is a seed after one to three mutations at nodes reached by a
random descent from the root (so top-level sections are hit often, deep
leaves sometimes): delete, duplicate, retype, hostile numbers (huge,
negative, zero, subnormal, NaN/Infinity literals, 10^400 literals), scaling,
long or odd strings, deep nesting, list <-> object swaps, unknown and
duplicate keys, empty containers, and huge counts (a list element repeated
up to 10,000 times with fresh ids).

Every random choice goes through a :class:`Draw`: :class:`HypothesisDraw`
in the test (hypothesis derandomized in CI, and it shrinks a failing mutant),
:class:`NumpyDraw` in ``benchmarks/fuzz.py --long`` (seeded, fast).

Each mutant is run through ``validate``, ``solve --json --method M
--time-limit 5`` (M drawn among the problem's methods; the default limit of
60 s would exceed the time cap) and ``solve --verify --time-limit 2``, each
in its own process with an address-space cap (``RLIMIT_AS``) and a wall-time
cap; :func:`complaints` lists what is wrong with a run: an exit code other
than 0 or 2, not exactly one stderr line on exit 2, a traceback, a time or
memory cap hit.
"""

from __future__ import annotations

import contextlib
import copy
import json
import os
import resource
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol, TypeVar

import numpy as np

T = TypeVar("T")

ROOT = Path(__file__).resolve().parents[2]
INSTANCES = ROOT / "instances"

#: Address-space cap of every CLI process (bytes): RLIMIT_AS, set before exec.
MEMORY_CAP = 2 << 30
#: Wall-time cap of every CLI process (seconds); the runs ask for 2 s and 5 s.
TIME_CAP = 20.0
#: Time limit of the plain ``solve`` run (any method) and of the ``--verify`` run.
SOLVE_LIMIT = 5.0
VERIFY_LIMIT = 2.0


# --------------------------------------------------------------------------- draws


class Draw(Protocol):
    """The source of every random choice of a mutation."""

    def integer(self, lo: int, hi: int) -> int:
        """An integer in [lo, hi]."""

    def choice(self, options: Sequence[T]) -> T:
        """One of ``options``."""


class NumpyDraw:
    """Draws from a seeded numpy Generator (the ``--long`` mode)."""

    def __init__(self, rng: np.random.Generator) -> None:
        self.rng = rng

    def integer(self, lo: int, hi: int) -> int:
        return int(self.rng.integers(lo, hi + 1))

    def choice(self, options: Sequence[T]) -> T:
        return options[int(self.rng.integers(len(options)))]


class HypothesisDraw:
    """Draws through hypothesis' ``st.data()`` (the CI test; shrinkable)."""

    def __init__(self, data: Any) -> None:
        from hypothesis import strategies as st

        self.data, self.st = data, st

    def integer(self, lo: int, hi: int) -> int:
        return int(self.data.draw(self.st.integers(lo, hi)))

    def choice(self, options: Sequence[T]) -> T:
        index: int = self.data.draw(self.st.integers(0, len(options) - 1))
        return options[index]


# --------------------------------------------------------------------------- seeds


@dataclass(frozen=True)
class Seed:
    """One instance document to mutate: its name, problem, JSON value and methods."""

    name: str
    problem: str
    doc: Any
    methods: tuple[str, ...]


def seeds() -> list[Seed]:
    """Every curated instance, then every generated quick-suite instance (seed 0)."""
    from scheduling_opt.io.instance import dumps
    from scheduling_opt.registry import get_problem, problem_names

    methods = {n: tuple(m.name for m in get_problem(n).methods) for n in problem_names()}
    out = []
    for path in sorted(INSTANCES.glob("*.json")):
        doc = json.loads(path.read_text(encoding="utf-8"))
        out.append(Seed(path.name, doc["problem"], doc, methods[doc["problem"]]))
    for name in problem_names():
        problem = get_problem(name)
        if problem.generate is None:
            continue
        for size in problem.sizes.get("quick", ()):
            text = dumps(problem.generate(size, 0))
            out.append(Seed(f"{name}-{size}-s0", name, json.loads(text), methods[name]))
    return out


# --------------------------------------------------------------------------- mutations


@dataclass(frozen=True)
class Raw:
    """JSON text written verbatim (NaN, 1e400, a 10^5-deep array, duplicate keys)."""

    text: str


def dump(value: Any) -> str:
    """JSON text of a document that may hold :class:`Raw` nodes (compact)."""
    if isinstance(value, Raw):
        return value.text
    if isinstance(value, dict):
        return "{" + ",".join(f"{json.dumps(k)}:{dump(v)}" for k, v in value.items()) + "}"
    if isinstance(value, list):
        return "[" + ",".join(dump(v) for v in value) + "]"
    if isinstance(value, float) and value != value:
        return "NaN"
    return json.dumps(value)


HOSTILE_NUMBERS: tuple[Any, ...] = (
    0,
    -1,
    -0.0,
    0.5,
    1.5,
    -2.5,
    10**6,
    10**9,
    2**31,
    2**53,
    2**53 + 1,
    2**63,
    2**64,
    10**15,
    1e15,
    1e16,
    9e307,
    1e308,
    -1e308,
    1e-300,
    1e-320,
    5e-324,
    Raw("NaN"),
    Raw("Infinity"),
    Raw("-Infinity"),
    Raw("1e400"),
    Raw("-1e400"),
    Raw("1" + "0" * 40),
    Raw("9" * 5000),
    Raw("-0"),
)

ODD_STRINGS: tuple[str, ...] = (
    "",
    " ",
    "x" * 100_000,
    "line\nbreak",
    "nul\u0000byte",
    "NaN",
    "1e9",
    "\u00e9\u4e2d\U0001f600",
    "training",
    "inference",
    "linear",
)


def _retype(value: Any, draw: Draw) -> Any:
    options: list[Any] = [None, True, False, "text", [], {}, 0, 1.0, [value], {"value": value}]
    return draw.choice(options)


def _number(value: Any, draw: Draw) -> Any:
    if isinstance(value, (int, float)) and not isinstance(value, bool) and draw.integer(0, 2) == 0:
        factor = draw.choice([-1, 10, 1000, 10**6, 10**9, 10**-3, 10**-9])
        scaled = value * factor
        return int(scaled) if isinstance(value, int) and float(factor).is_integer() else scaled
    return draw.choice(HOSTILE_NUMBERS)


def _nest(value: Any, draw: Draw) -> Any:
    depth = draw.choice([10, 1_000, 100_000])
    opener, closer = draw.choice([("[", "]"), ('{"a":', "}")])
    return Raw(opener * depth + "0" + closer * depth)


def _swap(value: Any, draw: Draw) -> Any:
    if isinstance(value, list):
        return {str(i): v for i, v in enumerate(value)}
    if isinstance(value, dict):
        return list(value.values())
    return [value]


def _grow(value: Any, draw: Draw) -> Any:
    if not isinstance(value, list) or not value:
        return value
    times = draw.choice([2, 10, 100, 1_000, 10_000])
    template = value[draw.integer(0, len(value) - 1)]
    fresh = draw.integer(0, 1) == 1
    out = list(value)
    for i in range(times):
        item = copy.deepcopy(template) if times <= 100 else template
        if fresh and isinstance(item, dict) and isinstance(item.get("id"), str):
            item = {**item, "id": f"{item['id']}~{i}"}
        out.append(item)
    return out


def _duplicate_key(value: Any, draw: Draw) -> Any:
    if not isinstance(value, dict) or not value:
        return value
    keys = list(value)
    key = draw.choice(keys)
    items = [f"{json.dumps(k)}:{dump(v)}" for k, v in value.items()]
    items.append(f"{json.dumps(key)}:{dump(_retype(value[key], draw))}")
    return Raw("{" + ",".join(items) + "}")


def _empty(value: Any, draw: Draw) -> Any:
    return [] if isinstance(value, list) else {} if isinstance(value, dict) else value


REPLACEMENTS: dict[str, Callable[[Any, Draw], Any]] = {
    "retype": _retype,
    "number": _number,
    "string": lambda value, draw: draw.choice(ODD_STRINGS),
    "nest": _nest,
    "swap": _swap,
    "grow": _grow,
    "duplicate-key": _duplicate_key,
    "empty": _empty,
}
OPERATIONS = ("delete", "duplicate", "unknown-key", *REPLACEMENTS)


def _descend(doc: Any, draw: Draw) -> tuple[Any, Any] | None:
    """A (container, key) reached by a random walk from the root (None: the root itself)."""
    parent: Any = None
    key: Any = None
    node = doc
    while isinstance(node, (dict, list)) and node:
        if parent is not None and draw.integer(0, 3) == 0:
            break
        parent = node
        key = draw.choice(list(node)) if isinstance(node, dict) else draw.integer(0, len(node) - 1)
        node = node[key]
    return None if parent is None else (parent, key)


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


#: Operations aimed at a kind of node (a type-preserving mutation reaches the
#: solvers instead of stopping at the reader): the node is drawn among those
#: of that kind, first a top-level section, then a node inside it.
TARGETS: dict[str, Callable[[Any], bool]] = {
    "number": _is_number,
    "grow": lambda value: isinstance(value, list) and bool(value),
    "string": lambda value: isinstance(value, str),
}


def _spots(node: Any, want: Callable[[Any], bool], out: list[tuple[Any, Any]]) -> None:
    items = node.items() if isinstance(node, dict) else enumerate(node)
    for key, value in items:
        if want(value):
            out.append((node, key))
        if isinstance(value, (dict, list)) and len(out) < 100_000:
            _spots(value, want, out)


def _target(doc: Any, draw: Draw, want: Callable[[Any], bool]) -> tuple[Any, Any] | None:
    """A (container, key) holding a node that ``want`` accepts, or None if there is none."""
    if not isinstance(doc, dict):
        return None
    sections = []
    for key, value in doc.items():
        found: list[tuple[Any, Any]] = [(doc, key)] if want(value) else []
        if isinstance(value, (dict, list)):
            _spots(value, want, found)
        if found:
            sections.append(found)
    if not sections:
        return None
    found = draw.choice(sections)
    return found[draw.integer(0, len(found) - 1)]


def mutate_once(doc: Any, draw: Draw) -> tuple[Any, str]:
    """One mutation of ``doc`` in place (the new root returned); with a description."""
    op = draw.choice(OPERATIONS)
    aimed = op in TARGETS and draw.integer(0, 2) > 0
    spot = _target(doc, draw, TARGETS[op]) if aimed else None
    spot = spot or _descend(doc, draw)
    if spot is None:
        return _retype(doc, draw), f"{op}@root"
    parent, key = spot
    where = f"{op}@{key!r}"
    if op == "delete":
        del parent[key]
    elif op == "duplicate":
        if isinstance(parent, list):
            parent.insert(key, copy.deepcopy(parent[key]))
        else:
            parent[key] = [parent[key], copy.deepcopy(parent[key])]
    elif op == "unknown-key":
        target = parent[key] if isinstance(parent[key], dict) else parent
        if isinstance(target, dict):
            target[draw.choice(["zz_unknown", "id", "params", "Jobs", ""])] = draw.choice(
                [1, "x", None, [], {}]
            )
    else:
        parent[key] = REPLACEMENTS[op](parent[key], draw)
    return doc, where


def mutant(seed: Seed, draw: Draw) -> tuple[str, str]:
    """A mutated copy of ``seed``'s document as JSON text, and what was done to it."""
    doc = copy.deepcopy(seed.doc)
    done = []
    for _ in range(draw.integer(1, 3)):
        doc, what = mutate_once(doc, draw)
        done.append(what)
        if isinstance(doc, Raw):
            break  # the root became raw text: nothing left to walk into
    return dump(doc), f"{seed.name}: {'; '.join(done)}"


# --------------------------------------------------------------------------- running


@dataclass
class Run:
    """One capped CLI process: its command, exit code, output, wall time and peak memory."""

    args: list[str]
    returncode: int
    stdout: str
    stderr: str
    seconds: float
    maxrss_kb: int
    timed_out: bool = False
    #: CPU time of the run when it reports its own (:mod:`tests.fuzz.preloaded`).
    cpu_seconds: float = 0.0


def _limit_memory(cap: int) -> Callable[[], None]:
    def apply() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (cap, cap))

    return apply


def run_cli(
    args: Sequence[str], *, time_cap: float = TIME_CAP, memory_cap: int = MEMORY_CAP
) -> Run:
    """``python -m scheduling_opt.cli ARGS`` under the caps, in its own session.

    The wall-time cap kills the whole process group (CBC runs as a child);
    the peak resident memory comes from ``wait4`` (the process and the
    children it waited for).
    """
    argv = [sys.executable, "-m", "scheduling_opt.cli", *args]
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        start = time.perf_counter()
        proc = subprocess.Popen(
            argv,
            stdout=out,
            stderr=err,
            stdin=subprocess.DEVNULL,
            cwd=ROOT,
            preexec_fn=_limit_memory(memory_cap),
            start_new_session=True,
        )
        timed_out = False
        while True:
            pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
            if pid:
                break
            if time.perf_counter() - start > time_cap:
                timed_out = True
                os.killpg(proc.pid, signal.SIGKILL)
                pid, status, usage = os.wait4(proc.pid, 0)
                break
            time.sleep(0.01)
        seconds = time.perf_counter() - start
        proc.returncode = os.waitstatus_to_exitcode(status)
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)  # nothing of the run may outlive it
        out.seek(0)
        err.seek(0)
        return Run(
            list(args),
            proc.returncode,
            out.read().decode("utf-8", "replace"),
            err.read().decode("utf-8", "replace"),
            seconds,
            int(usage.ru_maxrss),
            timed_out,
        )


def commands(path: str, method: str) -> list[list[str]]:
    """The three runs of a mutant: validate, solve with ``method``, solve --verify."""
    return [
        ["validate", path],
        ["solve", path, "--json", "--method", method, "--time-limit", f"{SOLVE_LIMIT:g}"],
        ["solve", path, "--verify", "--time-limit", f"{VERIFY_LIMIT:g}"],
    ]


def complaints(run: Run) -> list[str]:
    """What is wrong with a run (empty: it behaved)."""
    found = []
    if run.timed_out:
        found.append(f"hang: killed after {run.seconds:.1f} s")
    elif run.returncode not in (0, 2):
        found.append(f"exit {run.returncode}")
    if "Traceback" in run.stderr or "Traceback" in run.stdout:
        found.append("traceback")
    if "MemoryError" in run.stderr or "bad_alloc" in run.stderr:
        found.append("memory cap hit")
    if run.returncode == 2 and len(run.stderr.splitlines()) != 1:
        found.append(f"{len(run.stderr.splitlines())} stderr lines on exit 2")
    return found


@dataclass
class Case:
    """One mutant and its three runs."""

    seed: str
    what: str
    runs: list[Run] = field(default_factory=list)

    def complaints(self) -> list[str]:
        return [
            f"{' '.join(r.args[:1] + r.args[2:])}: {c}: {r.stderr.strip()[:300]!r}"
            for r in self.runs
            for c in complaints(r)
        ]


def run_mutant(
    text: str,
    method: str,
    what: str,
    seed: str,
    *,
    parallel: bool = True,
    folder: str | None = None,
) -> Case:
    """Write the mutant to a temporary file and run the three commands on it.

    Each command runs in a process forked from a server that has already
    imported the CLI (:func:`tests.fuzz.preloaded.run_cli_preloaded`: the
    same caps, exit status and output as :func:`run_cli`, without the 1-1.5 s
    of CPU a fresh interpreter spends importing numpy, scipy and OR-Tools,
    which was most of the fuzz's time in CI).
    """
    # Imported here: preloaded imports this module.
    from tests.fuzz.preloaded import run_cli_preloaded

    case = Case(seed, what)
    with tempfile.TemporaryDirectory(dir=folder) as tmp:
        path = os.path.join(tmp, "mutant.json")
        Path(path).write_text(text, encoding="utf-8", errors="surrogatepass")
        cmds = commands(path, method)
        if parallel:
            from concurrent.futures import ThreadPoolExecutor

            with ThreadPoolExecutor(len(cmds)) as pool:
                case.runs = list(pool.map(run_cli_preloaded, cmds))
        else:
            case.runs = [run_cli_preloaded(c) for c in cmds]
    return case
