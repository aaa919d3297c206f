"""The FIFO baseline of Aryl's allocation (method ``fifo``): no elasticity, no reordering.

Queued jobs start in queue order at their full demand until the first that
does not fit blocks the rest (Aryl §7.1's FIFO baseline: "no capacity loaning
or elastic scaling"). O(n), plus the O(n^2) simulation of the plan.

Running elastic jobs keep their current workers as far as ``capacity`` holds
them. ``capacity`` counts their flexible GPUs, and it can be smaller than
those (the inference cluster took servers back): then the flexible workers
that no longer fit are scaled in, running jobs in queue order keeping theirs
first. Our reading: the paper's baseline never *chooses* to scale, but no
scheduler can keep more GPUs than there are (the answer used to exceed the
capacity; the checker refused it).
"""

from __future__ import annotations

import time

from scheduling_opt.allocation.model import AllocationDecision, AllocationInput
from scheduling_opt.allocation.simulate import plan_deadline, solution_of
from scheduling_opt.solution import Seed, Solution, named


@named("fifo")
def fifo(
    inp: AllocationInput, *, seed: Seed = None, time_limit: float | None = None
) -> Solution[AllocationDecision]:
    """No elasticity, no reordering: queued jobs in order at their full demand.

    Running elastic jobs keep their current workers (those the capacity
    cannot hold are scaled in, in queue order); the first queued job whose
    maximum demand does not fit blocks the rest of the queue.

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

    A running job whose flexible GPUs exceed the capacity is scaled in first:

    >>> jobs = (Job("j0", 1, 1, 1.0), Job("j1", 1, 1, 1.0), Job("j2", 1, 2, 1.0, 2))
    >>> sol = fifo(AllocationInput(jobs, 1, {"j2": 2}))
    >>> dict(sol.decision.workers), sol.decision.start_now
    ({'j0': 1, 'j1': 0, 'j2': 1}, ('j0',))

    References
    ----------
    Aryl (EuroSys '22) §7.1 (baselines).
    """
    start = time.perf_counter()
    plan_deadline(inp, time_limit)  # refuses a plan too large to simulate
    room = inp.capacity
    workers = {j.id: 0 for j in inp.jobs}
    for job in inp.jobs:
        if job.id in inp.running:
            flexible = inp.running[job.id] - job.min_workers
            kept = min(flexible, room // job.gpus_per_worker)
            workers[job.id] = job.min_workers + kept
            room -= kept * job.gpus_per_worker
    started = []
    for job in inp.queued():
        if job.max_gpus > room:
            break
        workers[job.id] = job.max_workers
        room -= job.max_gpus
        started.append(job.id)
    return solution_of(inp, workers, start, started=started)
