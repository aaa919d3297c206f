"""What an initial allocation leads to: every job's completion time (Aryl Table 3).

When jobs finish, their GPUs go first to queued jobs in queue order at their
base demand, then to running elastic jobs up to their maximum; nothing is
shrunk or preempted. O(n^2) per allocation (n events, O(n) each). Also the
cheap lower bound on the average JCT and the Solution every planner returns.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence

from scheduling_opt.allocation.model import (
    LINEAR,
    TOLERANCE,
    AllocationDecision,
    AllocationInput,
    Scaling,
)
from scheduling_opt.errors import InvalidInstanceError
from scheduling_opt.model import Job
from scheduling_opt.solution import Solution, Status


def simulate_elastic(
    jobs: Sequence[Job],
    capacity: int,
    allocation: Mapping[str, int],
    *,
    scaling: Scaling = LINEAR,
) -> dict[str, float]:
    """Completion time of every job when ``allocation`` runs from time 0.

    Parameters
    ----------
    jobs : sequence of Job
        In queue order.
    capacity : int
        GPUs for these jobs (running base demand included).
    allocation : mapping of str to int
        Job id -> workers (0 or absent: queued).
    scaling : Scaling, optional

    Returns
    -------
    dict of str to float
        Each job's completion time.

    Raises
    ------
    InvalidInstanceError
        An unknown job, workers outside 0 or min..max, more GPUs than
        ``capacity``, or queued jobs that can never start.

    Examples
    --------
    >>> from scheduling_opt.model import Job
    >>> a, b = Job("A", 2, 6, 50.0), Job("B", 2, 6, 20.0)
    >>> {k: round(v, 2) for k, v in simulate_elastic([a, b], 8, {"A": 4, "B": 4}).items()}
    {'A': 60.0, 'B': 30.0}

    References
    ----------
    Aryl (EuroSys '22) §5.2, Table 3.
    """
    _check_allocation(jobs, capacity, allocation)
    workers = {j.id: int(allocation.get(j.id, 0)) for j in jobs}
    left = {j.id: 1.0 for j in jobs}
    done: dict[str, float] = {}
    now = 0.0
    while len(done) < len(jobs):
        if not any(workers[j.id] for j in jobs if j.id not in done):
            _hand_out(jobs, capacity, workers, done)
        active = [j for j in jobs if j.id not in done and workers[j.id]]
        if not active:
            raise InvalidInstanceError("capacity", f"{capacity} GPUs cannot run the queued jobs")
        finish = {j.id: left[j.id] * scaling.time(j, workers[j.id]) for j in active}
        step = min(finish.values())
        now += step
        for j in active:
            if finish[j.id] <= step * (1 + TOLERANCE):
                done[j.id] = now
                workers[j.id] = 0
            else:
                left[j.id] -= step / scaling.time(j, workers[j.id])
        _hand_out(jobs, capacity, workers, done)
    return {j.id: done[j.id] for j in jobs}


def _hand_out(
    jobs: Sequence[Job], capacity: int, workers: dict[str, int], done: Mapping[str, float]
) -> None:
    room = capacity - sum(workers[j.id] * j.gpus_per_worker for j in jobs)
    for j in jobs:
        if j.id not in done and not workers[j.id] and j.min_gpus <= room:
            workers[j.id] = j.min_workers
            room -= j.min_gpus
    for j in jobs:
        if j.id not in done and workers[j.id]:
            extra = min(j.max_workers - workers[j.id], room // j.gpus_per_worker)
            workers[j.id] += extra
            room -= extra * j.gpus_per_worker


def _check_allocation(jobs: Sequence[Job], capacity: int, allocation: Mapping[str, int]) -> None:
    known = {j.id for j in jobs}
    for job_id in allocation:
        if job_id not in known:
            raise InvalidInstanceError("allocation", f"unknown job {job_id!r}")
    used = 0
    for j in jobs:
        k = allocation.get(j.id, 0)
        if k and not j.min_workers <= k <= j.max_workers:
            raise InvalidInstanceError(
                f"allocation.{j.id}", f"must be 0 or {j.min_workers}..{j.max_workers}, got {k}"
            )
        used += k * j.gpus_per_worker
    if used > capacity:
        raise InvalidInstanceError("allocation", f"uses {used} GPUs of {capacity}")


def average_jct(inp: AllocationInput, workers: Mapping[str, int]) -> tuple[float, dict[str, float]]:
    """Average and per-job JCT of ``workers`` under :func:`simulate_elastic`.

    Parameters
    ----------
    inp : AllocationInput
    workers : mapping of str to int
        Job id -> workers now.

    Returns
    -------
    (float, dict of str to float)

    Raises
    ------
    InvalidInstanceError
        An allocation :func:`simulate_elastic` refuses.

    Examples
    --------
    >>> from scheduling_opt.model import Job
    >>> inp = AllocationInput((Job("A", 2, 3, 100.0), Job("B", 2, 6, 20.0)), 8)
    >>> average_jct(inp, {"A": 3, "B": 5})[0]
    62.0

    References
    ----------
    Aryl (EuroSys '22) §5.1.
    """
    jct = simulate_elastic(inp.jobs, inp.total_gpus, workers, scaling=inp.scaling)
    return (sum(jct.values()) / len(jct) if jct else 0.0), jct


def lower_bound(inp: AllocationInput) -> float:
    """A cheap lower bound on the optimal average JCT: each job alone at its maximum.

    No job finishes before its running time at ``max_workers`` (its
    ``duration``, under any scaling), whatever the allocation; O(n).

    Parameters
    ----------
    inp : AllocationInput

    Returns
    -------
    float
        A lower bound on the average JCT of every allocation.

    Examples
    --------
    >>> from scheduling_opt.model import Job
    >>> lower_bound(AllocationInput((Job("A", 2, 3, 100.0), Job("B", 2, 6, 20.0)), 8))
    60.0

    References
    ----------
    Aryl (EuroSys '22) §5.1 (the JCT model).
    """
    if not inp.jobs:
        return 0.0
    return sum(inp.scaling.time(j, j.max_workers) for j in inp.jobs) / len(inp.jobs)


def solution_of(
    inp: AllocationInput,
    workers: Mapping[str, int],
    start: float,
    *,
    started: Sequence[str] | None = None,
    status: Status = Status.FEASIBLE,
    knapsack_value: float | None = None,
    message: str = "",
) -> Solution[AllocationDecision]:
    """The Solution of a plan: simulated JCTs, the cheap bound, time since ``start``.

    ``started``: the queued jobs that start now in the planner's order
    (default: queue order).
    """
    value, jct = average_jct(inp, workers)
    if started is None:
        started = [j.id for j in inp.queued() if workers.get(j.id, 0)]
    decision = AllocationDecision(dict(workers), tuple(started), jct, value, knapsack_value)
    bound = None if status is Status.OPTIMAL else min(lower_bound(inp), value)
    return Solution(
        status,
        value,
        decision,
        bound=bound,
        seconds=time.perf_counter() - start,
        message=message,
    )
