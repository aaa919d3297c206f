"""What an initial allocation leads to: every job's completion time (Aryl Table 3).

When jobs finish, their GPUs go first to queued jobs in queue order at their
base demand, then to running elastic jobs up to their maximum; nothing is
shrunk or preempted. O(n^2) per allocation (n events, O(n) each). Also the
cheap lower bound on the average JCT and the Solution every planner returns.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence

import numpy as np

from scheduling_opt.allocation.model import (
    LINEAR,
    TOLERANCE,
    AllocationDecision,
    AllocationInput,
    Scaling,
)
from scheduling_opt.errors import InstanceTooLargeError, InvalidInstanceError
from scheduling_opt.model import Job
from scheduling_opt.solution import Solution, Status, time_limit_of

#: Largest n^2 (n jobs) a plan's simulation may cost: every method simulates
#: its plan in O(n^2) Python steps (about 8 s at the limit, n = 2,000).
SIMULATION_LIMIT = 4_000_000
#: Seconds per simulation step, to refuse a plan that cannot be simulated
#: within the time limit: n = 1,000 jobs took 0.4 s on an idle 2-core machine
#: and 1.6-2.3 s at a load of 17; 1 us per step sits between the two.
SECONDS_PER_STEP = 1e-6
#: How far past its time limit a method may end (within 0.5 s).
SLACK = 0.5


def plan_deadline(inp: AllocationInput, time_limit: float | None) -> float:
    """The deadline (``time.perf_counter`` time) of a planner, after checking its budget.

    Every planner ends by simulating its plan, O(n^2) for n jobs; an input
    whose simulation cannot fit :data:`SIMULATION_LIMIT`, or the time limit
    plus :data:`SLACK`, is refused up front, in one line naming the estimate
    and the limit.

    Parameters
    ----------
    inp : AllocationInput
    time_limit : float or None
        The caller's time limit (None: the default).

    Returns
    -------
    float
        ``time.perf_counter()`` plus the time limit.

    Raises
    ------
    InstanceTooLargeError
        More than :data:`SIMULATION_LIMIT` steps, or an estimated simulation
        time above the time limit plus :data:`SLACK`.

    Examples
    --------
    >>> inp = AllocationInput((Job("A", 2, 6, 50.0),), 8)
    >>> plan_deadline(inp, 1.0) > 0
    True

    References
    ----------
    Aryl (EuroSys '22) §5.2, Table 3 (the simulated JCT).
    """
    limit = time_limit_of(time_limit)
    steps = len(inp.jobs) ** 2
    if steps > SIMULATION_LIMIT:
        raise InstanceTooLargeError(
            "jobs",
            f"{len(inp.jobs)} jobs: simulating a plan costs n^2 = {steps:.3g} steps, "
            f"above the limit {SIMULATION_LIMIT:.0e}",
        )
    if steps * SECONDS_PER_STEP > limit + SLACK:
        raise InstanceTooLargeError(
            "jobs",
            f"{len(inp.jobs)} jobs: simulating a plan takes about "
            f"{steps * SECONDS_PER_STEP:.2g} s, more than the time limit {limit:g} s",
        )
    return time.perf_counter() + limit


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
        A negative or non-integer ``capacity``, an unknown job, workers that
        are not an integer (1.5, True) or outside 0 or min..max, more GPUs
        than ``capacity``, or queued jobs that can never start.

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
    if isinstance(capacity, bool) or not isinstance(capacity, (int, np.integer)) or capacity < 0:
        raise InvalidInstanceError("capacity", f"must be an integer >= 0, got {capacity!r}")
    known = {j.id for j in jobs}
    for job_id in allocation:
        if job_id not in known:
            raise InvalidInstanceError("allocation", f"unknown job {job_id!r}")
    used = 0
    for j in jobs:
        k = allocation.get(j.id, 0)
        # 1.5 workers used to run as 1 and True as 1: refuse what a file would.
        if isinstance(k, bool) or not isinstance(k, (int, np.integer)):
            raise InvalidInstanceError(f"allocation.{j.id}", f"must be an integer, got {k!r}")
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
        An allocation :func:`simulate_elastic` refuses, or a running job
        outside its min..max workers (``workers.<id>``).

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
    for job in inp.jobs:
        if job.id not in inp.running:
            continue
        job_id, got = job.id, workers.get(job.id, 0)
        if isinstance(got, (int, np.integer)) and not job.min_workers <= got <= job.max_workers:
            raise InvalidInstanceError(
                f"workers.{job_id}",
                f"running job keeps {job.min_workers}..{job.max_workers} workers, got {got}",
            )
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
