"""The exact allocation by enumeration (method ``exact``), for small instances.

Every initial allocation (queued jobs 0 or min..max workers, running jobs
min..max) that fits is simulated and the smallest average JCT kept. There is
no MILP: the objective is the JCT of an event-driven schedule in which
finished jobs' GPUs are handed on in queue order, so completion times are
not a linear (nor a fixed-order) function of the initial allocation
(docs/allocation.md). O(prod_j choices_j * n^2); refused above
:data:`EXACT_LIMIT` allocations.
"""

from __future__ import annotations

import math
import time
from collections.abc import Iterable

from scheduling_opt.allocation.model import TOLERANCE, AllocationDecision, AllocationInput
from scheduling_opt.allocation.simulate import average_jct, plan_deadline, solution_of
from scheduling_opt.errors import InstanceTooLargeError
from scheduling_opt.model import Job
from scheduling_opt.solution import Seed, Solution, Status, named, time_limit_of

#: The exact method refuses instances with more initial allocations than this.
EXACT_LIMIT = 200_000


def _top(inp: AllocationInput, job: Job) -> int:
    """The most workers ``job`` can get: its maximum, within the GPUs there are."""
    return min(job.max_workers, max(inp.total_gpus // job.gpus_per_worker, job.min_workers))


def _choices(inp: AllocationInput) -> list[range | list[int]]:
    out: list[range | list[int]] = []
    for j in inp.jobs:
        # Largest first: among allocations of equal JCT the first found runs the most.
        span = range(_top(inp, j), j.min_workers - 1, -1)
        out.append(span if j.id in inp.running else [*span, 0])
    return out


def _magnitude(count: int) -> str:
    """``6.96e+16``; an integer beyond float range (1000 jobs) as ``~10^1234``."""
    try:
        return f"{count:.3g}"
    except OverflowError:
        return f"~10^{len(str(count)) - 1}"


def allocation_count(inp: AllocationInput) -> int:
    """Initial allocations :func:`exact` may enumerate (a product of ranges).

    Parameters
    ----------
    inp : AllocationInput

    Returns
    -------
    int
        The product over jobs of their choices (queued: 0 or min..max),
        counting only worker counts that fit the GPUs there are; computed
        without listing them (a job may allow 2**53 workers).

    Examples
    --------
    >>> from scheduling_opt.model import Job
    >>> allocation_count(AllocationInput((Job("A", 2, 3, 100.0), Job("B", 2, 6, 20.0)), 8))
    18

    References
    ----------
    Aryl (EuroSys '22) §5.2.
    """
    return math.prod(
        _top(inp, j) - j.min_workers + (1 if j.id in inp.running else 2) for j in inp.jobs
    )


def _feasible(inp: AllocationInput) -> Iterable[dict[str, int]]:
    choices, jobs = _choices(inp), inp.jobs
    budget = inp.total_gpus
    current: dict[str, int] = {}

    def walk(i: int, room: int) -> Iterable[dict[str, int]]:
        if i == len(jobs):
            yield dict(current)
            return
        for k in choices[i]:
            need = k * jobs[i].gpus_per_worker
            if need <= room:
                current[jobs[i].id] = k
                yield from walk(i + 1, room - need)

    yield from walk(0, budget)


@named("exact")
def exact(
    inp: AllocationInput, *, seed: Seed = None, time_limit: float | None = None
) -> Solution[AllocationDecision]:
    """The initial allocation minimizing average JCT under the simulator (method ``exact``).

    Parameters
    ----------
    inp : AllocationInput
    seed : int, numpy Generator or None
        Unused.
    time_limit : float, optional
        Seconds (default :data:`~scheduling_opt.solution.DEFAULT_TIME_LIMIT`);
        checked every 256 allocations.

    Returns
    -------
    Solution[AllocationDecision]
        ``optimal`` after a full enumeration; ``time_limit`` with the best so
        far and :func:`~scheduling_opt.allocation.lower_bound` as its bound.
        ``message`` says how many allocations were evaluated.

    Raises
    ------
    InstanceTooLargeError
        More than :data:`EXACT_LIMIT` allocations to enumerate.

    Examples
    --------
    >>> from scheduling_opt.model import Job
    >>> inp = AllocationInput((Job("A", 2, 6, 50.0), Job("B", 2, 6, 20.0)), 8)
    >>> sol = exact(inp)
    >>> sol.status.value, round(sol.objective, 2), dict(sol.decision.workers)
    ('optimal', 41.67, {'A': 2, 'B': 6})

    References
    ----------
    Aryl (EuroSys '22) §5.1-§5.2, Table 3 (the optimum it compares with).
    """
    start = time.perf_counter()
    limit = time_limit_of(time_limit)
    plan_deadline(inp, limit)  # the same simulation budget as every planner
    count = allocation_count(inp)
    if count > EXACT_LIMIT:
        raise InstanceTooLargeError(
            "jobs",
            f"{_magnitude(count)} allocations to enumerate, more than the exact method's "
            f"limit {EXACT_LIMIT}",
        )
    best: dict[str, int] | None = None
    best_value, seen = math.inf, 0
    status = Status.OPTIMAL
    for workers in _feasible(inp):
        seen += 1
        value, _ = average_jct(inp, workers)
        if value < best_value * (1 - TOLERANCE):
            best, best_value = workers, value
        if seen % 256 == 0 and time.perf_counter() - start > limit:
            status = Status.TIME_LIMIT
            break
    assert best is not None  # all-zero queued / running at min always fits
    return solution_of(
        inp, best, start, status=status, message=f"{seen} of {count} allocations evaluated"
    )
