"""The simulator's resource model: how large a run may be, checked before anything is allocated.

A run holds the cluster (per server: its spec, its free-GPU entries and
both sharing slots of each GPU), the jobs (their records, the heap, the
output) and, in a sweep, every finished run's per-job results. Measured on
this machine (2026-11-27, ``benchmarks/bench_sim_limits.py``, load average
10-12; memory traced by ``tracemalloc``): about 0.4 KB and 2.3 us of CPU
per 8-GPU server, 16 bytes per GPU, 1.5 KB per job while a run is live and
0.8 KB per job in each kept result. Each number a caller may ask for
gets a limit far above real clusters and traces, so that a run at the
limit still fits in memory and starts in seconds; a number beyond it is
refused in one line that names the limit
(:class:`~scheduling_opt.errors.InstanceTooLargeError`), never discovered
as an out-of-memory error or an hour-long loop:

- :data:`MAX_SERVERS` servers (100,000: 40 MB and 0.23 s of CPU with one
  job), :data:`MAX_GPUS_PER_SERVER` GPUs per server (a placement scans a
  server's GPUs) and :data:`MAX_GPUS` GPUs in all;
- :data:`MAX_JOBS` jobs per workload (the full Chronus-Philly trace has
  30,746), :data:`MAX_RUNS` runs per sweep and :data:`MAX_JOB_RECORDS`
  per-job results kept in memory by a sweep (runs x jobs, about 1 KB each);
- the clock: every time and duration at most :data:`MAX_TIME` trace units
  (minutes for Chronus-Philly: 1,900 years), where a float still resolves
  1.2e-7 of a unit, so that sums of times stay exact enough to order
  events and never overflow; :data:`MAX_ROUNDS` policy rounds over the
  workload's nominal horizon in round mode, or wake-ups of a policy that
  decides at a fixed period (Chronus' lease term: one job of 10^9 minutes
  was 5 x 10^7 calls), and :data:`MAX_TIMELINE_ROWS` timeline samples.

Workers (``--workers``) are not refused but capped at the runs to do and
the machine's cores (:func:`usable_workers`): a process pool of 1,000
workers for six runs only spends time forking.

The checks reuse the file readers' number rules
(:func:`scheduling_opt.jsonpath.read_int`, :func:`~scheduling_opt.jsonpath.read_number`:
no booleans, no NaN, no subnormals, numpy scalars accepted) and name the
argument the caller passed; the CLI names its options instead
(:mod:`scheduling_opt.sim.cli.options`). Each check is O(1), except
:func:`check_rounds` (O(jobs)).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterable

from scheduling_opt.errors import InstanceTooLargeError, InvalidInstanceError
from scheduling_opt.jsonpath import read_int, read_number

#: Largest time or duration on the simulator's clock (trace units).
MAX_TIME = 1e9
#: Most servers of a simulated cluster.
MAX_SERVERS = 100_000
#: Most GPUs of one server (a default placement scans a server's GPUs).
MAX_GPUS_PER_SERVER = 1_024
#: Most GPUs of a simulated cluster (two sharing slots per GPU).
MAX_GPUS = 1_000_000
#: Most jobs of one workload (a trace's rows, a synthetic workload's size).
MAX_JOBS = 1_000_000
#: Most runs of one sweep (policies x seeds x workloads).
MAX_RUNS = 10_000
#: Most per-job results a sweep keeps in memory (runs x jobs, about 1 KB each).
MAX_JOB_RECORDS = 5_000_000
#: Most policy calls at fixed intervals (round mode, a periodic policy) over the nominal horizon.
MAX_ROUNDS = 100_000
#: Most timeline samples written for a sweep (all runs).
MAX_TIMELINE_ROWS = 1_000_000
#: Range of a server's compute factor relative to a V100 (T4 = 0.25).
MIN_COMPUTE, MAX_COMPUTE = 1e-3, 1e3

_TINY = sys.float_info.min
#: What the server and GPU limits protect, for the errors.
SERVER_COST = "each server costs about 0.4 KB and 2.3 us to set up"
GPU_SCAN = "a placement scans a server's GPUs"


def count(value: object, name: str, maximum: int, *, minimum: int = 1, why: str = "") -> int:
    """An integer in ``[minimum, maximum]`` (a plain int; a numpy integer is converted).

    Parameters
    ----------
    value : object
        What the caller passed.
    name : str
        The argument's name, used in the error.
    maximum : int
        The resource limit; a larger value raises
        :class:`~scheduling_opt.errors.InstanceTooLargeError`.
    minimum : int, default 1
    why : str, optional
        What the limit protects, shown in the error.

    Returns
    -------
    int

    Raises
    ------
    InvalidInstanceError
        Not an integer, or below ``minimum``.
    InstanceTooLargeError
        Above ``maximum``.

    Examples
    --------
    >>> count(8, "servers", MAX_SERVERS)
    8
    >>> count(10**9, "servers", MAX_SERVERS)
    Traceback (most recent call last):
    ...
    scheduling_opt.errors.InstanceTooLargeError: servers: must be at most 100,000, got 1,000,000,000
    """
    if type(value) is int and minimum <= value <= maximum:
        return value  # the common case, without the reader's conversions
    number = read_int(value, name, minimum) if not _big_int(value) else value
    assert isinstance(number, int)
    if number > maximum:
        reason = f" ({why})" if why else ""
        raise InstanceTooLargeError(name, f"must be at most {maximum:,}{reason}, got {number:,}")
    return number


def _big_int(value: object) -> bool:
    # read_int refuses beyond 2**53 as "magnitude"; a count that large is over
    # every limit here, which is the clearer message.
    return type(value) is int and value > 2**53


def clock(value: object, name: str, *, positive: bool = False) -> float:
    """A time or duration on the simulator's clock: finite, >= 0 (> 0 if ``positive``), <= MAX_TIME.

    Ints are kept as given (a workload's content hash is the ``repr`` of its
    jobs); numpy scalars become Python numbers.

    Parameters
    ----------
    value : object
    name : str
        The argument's name, used in the error.
    positive : bool, default False
        Refuse 0.

    Returns
    -------
    float

    Raises
    ------
    InvalidInstanceError
        Not a number, NaN, infinite, subnormal, negative (or 0 when
        ``positive``), or above :data:`MAX_TIME`.

    Examples
    --------
    >>> clock(61.0, "submit")
    61.0
    >>> clock(1e308, "work", positive=True)
    Traceback (most recent call last):
    ...
    scheduling_opt.errors.InvalidInstanceError: work: must be at most 1e15 in magnitude, got 1e+308
    >>> clock(2e9, "work")
    Traceback (most recent call last):
    ...
    scheduling_opt.errors.InvalidInstanceError: work: must be at most 1e+09 (the simulator's clock limit, in trace units), got 2000000000.0
    """
    if (
        type(value) is float
        and 0.0 <= value <= MAX_TIME
        and (value >= _TINY or (value == 0.0 and not positive))
    ):
        return value  # the common case, without the reader's conversions
    number = read_number(value, name, 0)
    if positive and number <= 0:
        raise InvalidInstanceError(name, f"must be > 0, got {number!r}")
    if number > MAX_TIME:
        raise InvalidInstanceError(
            name,
            f"must be at most {MAX_TIME:g} (the simulator's clock limit, in trace units), "
            f"got {number!r}",
        )
    return number


def compute(value: object, name: str) -> float:
    """A compute factor relative to a V100, in [MIN_COMPUTE, MAX_COMPUTE].

    Below it a job's running time would leave the clock (a 1e-300 factor
    makes any work infinite); above it no GPU exists.

    Examples
    --------
    >>> compute(0.25, "compute")
    0.25
    """
    number = read_number(value, name)
    if not MIN_COMPUTE <= number <= MAX_COMPUTE:
        raise InvalidInstanceError(
            name, f"must be in [{MIN_COMPUTE:g}, {MAX_COMPUTE:g}] (V100 = 1), got {number!r}"
        )
    return number


def fraction(value: object, name: str, *, closed: bool = False) -> float:
    """A number in [0, 1) (in [0, 1] when ``closed``).

    Examples
    --------
    >>> fraction(0.43, "share_slowdown")
    0.43
    """
    number = read_number(value, name)
    if not (0.0 <= number <= 1.0 if closed else 0.0 <= number < 1.0):
        raise InvalidInstanceError(
            name, f"must be in [0, 1{']' if closed else ')'}, got {number!r}"
        )
    return number


def check_cluster(servers: int, gpus: int, name: str = "servers") -> None:
    """Refuse a cluster of more than MAX_SERVERS servers or MAX_GPUS GPUs (before building it).

    Examples
    --------
    >>> check_cluster(120, 960)
    >>> check_cluster(1000, 8_000_000, "gpus_per_server")
    Traceback (most recent call last):
    ...
    scheduling_opt.errors.InstanceTooLargeError: gpus_per_server: the cluster would have 8,000,000 GPUs; at most 1,000,000 (two sharing slots each)
    """
    count(servers, name, MAX_SERVERS, why=SERVER_COST)
    if gpus > MAX_GPUS:
        raise InstanceTooLargeError(
            name,
            f"the cluster would have {gpus:,} GPUs; at most {MAX_GPUS:,} (two sharing slots each)",
        )


def check_sweep(runs: int, jobs: int, name: str = "configs") -> None:
    """Refuse a sweep of more than MAX_RUNS runs or MAX_JOB_RECORDS kept per-job results.

    ``jobs`` is the workload's job count (the largest one's, for several).

    Examples
    --------
    >>> check_sweep(6, 5_217)
    >>> check_sweep(6_000_000, 5_217, "seeds")
    Traceback (most recent call last):
    ...
    scheduling_opt.errors.InstanceTooLargeError: seeds: 6,000,000 runs; at most 10,000 per sweep
    """
    if runs > MAX_RUNS:
        raise InstanceTooLargeError(name, f"{runs:,} runs; at most {MAX_RUNS:,} per sweep")
    if runs * jobs > MAX_JOB_RECORDS:
        raise InstanceTooLargeError(
            name,
            f"{runs:,} runs of {jobs:,} jobs keep {runs * jobs:,} job results in memory "
            f"(about 1 KB each); at most {MAX_JOB_RECORDS:,}",
        )


def nominal_horizon(spans: Iterable[tuple[float, float]]) -> float:
    """Length of the union of ``(submit, work)`` intervals ``[submit, submit + work]``.

    The time the workload keeps the cluster busy at nominal speed with no
    queueing: the stretch over which a round-mode run calls its policy at
    least. ``spans`` sorted by submit time (a workload's order). O(jobs).

    Examples
    --------
    >>> nominal_horizon([(0.0, 10.0), (5.0, 10.0), (100.0, 1.0)])
    16.0
    """
    total = 0.0
    start = end = -1.0
    for submit, work in spans:
        if submit > end:
            total += end - start
            start, end = submit, submit + work
        else:
            end = max(end, submit + work)
    return total + (end - start)


def check_rounds(
    spans: Iterable[tuple[float, float]], round_length: float, name: str = "round_length"
) -> None:
    """Refuse a round length that gives more than MAX_ROUNDS rounds over the nominal horizon.

    Examples
    --------
    >>> check_rounds([(0.0, 100.0)], 1.0, "round_length")
    >>> check_rounds([(0.0, 100.0)], 1e-5, "round_length")
    Traceback (most recent call last):
    ...
    scheduling_opt.errors.InstanceTooLargeError: round_length: 1e-05 gives 10,000,000 rounds over the workload's 100 time units at nominal speed; at most 100,000 (a round length of at least 0.001)
    """
    round_length = clock(round_length, name, positive=True)
    horizon = nominal_horizon(spans)
    rounds = horizon / round_length
    if rounds > MAX_ROUNDS:
        raise InstanceTooLargeError(
            name,
            f"{round_length:g} gives {rounds:,.0f} rounds over the workload's {horizon:g} time "
            f"units at nominal speed; at most {MAX_ROUNDS:,} (a round length of at least "
            f"{horizon / MAX_ROUNDS:.3g})",
        )


def check_timeline(spans: Iterable[float], step: float, name: str = "step") -> None:
    """Refuse a timeline step that is no time > 0, or gives more than MAX_TIMELINE_ROWS samples.

    ``spans``: each run's length from its first to its last change.

    Examples
    --------
    >>> check_timeline([1440.0], 60.0)
    >>> check_timeline([1440.0], 1e-6)
    Traceback (most recent call last):
    ...
    scheduling_opt.errors.InstanceTooLargeError: step: 1e-06 gives 1,440,000,000 timeline rows; at most 1,000,000 (a step of at least 0.00144)
    """
    step = clock(step, name, positive=True)
    spans = list(spans)
    rows = sum(span / step for span in spans)
    if rows > MAX_TIMELINE_ROWS:
        raise InstanceTooLargeError(
            name,
            f"{step:g} gives {rows:,.0f} timeline rows; at most {MAX_TIMELINE_ROWS:,} "
            f"(a step of at least {sum(spans) / MAX_TIMELINE_ROWS:.3g})",
        )


def check_calls(
    spans: Iterable[tuple[float, float]],
    round_length: float | None,
    period: float | None,
    policy: str,
) -> None:
    """Refuse a run whose policy would be called at fixed intervals more than MAX_ROUNDS times.

    Round mode calls the policy every ``round_length``; a policy with a
    ``period`` (Chronus' lease term, ONES' schedule interval) wakes itself
    up that often while jobs are left. Both count over the nominal horizon
    (:func:`nominal_horizon`); the error names ``round_length`` or
    ``policy``. O(jobs).

    Examples
    --------
    >>> check_calls([(0.0, 1e9)], None, 20.0, "chronus")
    Traceback (most recent call last):
    ...
    scheduling_opt.errors.InstanceTooLargeError: policy: chronus decides every 20 time units: 50,000,000 decisions over the workload's 1e+09 time units at nominal speed; at most 100,000
    """
    spans = list(spans)
    if round_length is not None:
        check_rounds(spans, round_length)
    if period is not None:
        horizon = nominal_horizon(spans)
        calls = horizon / clock(period, "policy", positive=True)
        if calls > MAX_ROUNDS:
            raise InstanceTooLargeError(
                "policy",
                f"{policy} decides every {period:g} time units: {calls:,.0f} decisions over "
                f"the workload's {horizon:g} time units at nominal speed; at most {MAX_ROUNDS:,}",
            )


def usable_workers(workers: int, runs: int) -> int:
    """``workers`` capped at ``runs`` and at the cores this process may use (at least 1).

    Examples
    --------
    >>> usable_workers(1000, 1)
    1
    """
    try:
        cores = len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        cores = os.cpu_count() or 1
    return max(1, min(workers, runs, cores))
