"""The max-elastic baseline of Aryl's allocation (method ``max-elastic``).

Shortest job (at maximum demand) first, each job as many workers as fit up to
its maximum (Aryl §7.1's elastic baseline). O(n log n), plus the O(n^2)
simulation of the plan.
"""

from __future__ import annotations

import time

from scheduling_opt.allocation.model import AllocationDecision, AllocationInput
from scheduling_opt.allocation.simulate import plan_deadline, solution_of
from scheduling_opt.allocation.two_phase import sjf_key
from scheduling_opt.solution import Seed, Solution, named


@named("max-elastic")
def max_elastic(
    inp: AllocationInput, *, seed: Seed = None, time_limit: float | None = None
) -> Solution[AllocationDecision]:
    """Elastic jobs at their maximum: shortest (at max demand) first, as many workers as fit.

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
    >>> dict(max_elastic(inp).decision.workers)
    {'A': 2, 'B': 6}

    References
    ----------
    Aryl (EuroSys '22) §7.1.
    """
    start = time.perf_counter()
    plan_deadline(inp, time_limit)  # refuses a plan too large to simulate
    order = sorted(enumerate(inp.jobs), key=sjf_key(inp.scaling, lambda j: j.max_workers))
    room, workers, started = inp.capacity, {j.id: 0 for j in inp.jobs}, []
    for _, job in order:
        running = job.id in inp.running
        if not running and job.min_gpus > room:
            continue
        if not running:
            room -= job.min_gpus
            started.append(job.id)
        extra = min(job.max_workers - job.min_workers, room // job.gpus_per_worker)
        workers[job.id] = job.min_workers + extra
        room -= extra * job.gpus_per_worker
    in_order = [j for j in (x.id for x in inp.jobs) if j in started]
    return solution_of(inp, workers, start, started=in_order)
