"""The FIFO baseline of Aryl's allocation (method ``fifo``): no elasticity, no reordering.

Queued jobs start in queue order at their full demand until the first that
does not fit blocks the rest (Aryl §7.1's FIFO baseline). O(n), plus the
O(n^2) simulation of the plan.
"""

from __future__ import annotations

import time

from scheduling_opt.allocation.model import AllocationDecision, AllocationInput
from scheduling_opt.allocation.simulate import plan_deadline, solution_of
from scheduling_opt.solution import Seed, Solution


def fifo(
    inp: AllocationInput, *, seed: Seed = None, time_limit: float | None = None
) -> Solution[AllocationDecision]:
    """No elasticity, no reordering: queued jobs in order at their full demand.

    Running elastic jobs keep their current workers; the first queued job
    whose maximum demand does not fit blocks the rest of the queue.

    Parameters
    ----------
    inp : AllocationInput
    seed : int, numpy Generator or None
        Unused.
    time_limit : float, optional
        Only checked against the plan's simulation cost (the planning is O(n log n)).

    Returns
    -------
    Solution[AllocationDecision]
        Status ``feasible`` with the cheap lower bound.

    Raises
    ------
    InstanceTooLargeError
        A plan too large to simulate (:func:`~scheduling_opt.allocation.plan_deadline`).

    Examples
    --------
    >>> from scheduling_opt.model import Job
    >>> inp = AllocationInput((Job("A", 2, 6, 50.0), Job("B", 2, 6, 20.0)), 8)
    >>> sol = fifo(inp)
    >>> dict(sol.decision.workers), sol.decision.start_now
    ({'A': 6, 'B': 0}, ('A',))

    References
    ----------
    Aryl (EuroSys '22) §7.1 (baselines).
    """
    start = time.perf_counter()
    plan_deadline(inp, time_limit)  # refuses a plan too large to simulate
    by_id = {j.id: j for j in inp.jobs}
    room = inp.capacity - sum(
        (k - by_id[i].min_workers) * by_id[i].gpus_per_worker for i, k in inp.running.items()
    )
    workers = {j.id: inp.running.get(j.id, 0) for j in inp.jobs}
    started = []
    for job in inp.queued():
        if job.max_gpus > room:
            break
        workers[job.id] = job.max_workers
        room -= job.max_gpus
        started.append(job.id)
    return solution_of(inp, workers, start, started=started)
