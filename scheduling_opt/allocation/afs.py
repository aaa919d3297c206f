"""The AFS baseline of Aryl's allocation (method ``afs``), as Aryl §7.1 implements it.

Base demand first in queue order, then one worker at a time to the job with
the largest throughput gain per GPU (AFS, Hwang et al., NSDI '21). O(n C)
for C free GPUs, plus the O(n^2) simulation of the plan.
"""

from __future__ import annotations

import time

from scheduling_opt.allocation.model import AllocationDecision, AllocationInput, Scaling
from scheduling_opt.allocation.simulate import plan_deadline, solution_of
from scheduling_opt.errors import InstanceTooLargeError
from scheduling_opt.model import Job
from scheduling_opt.solution import Seed, Solution, named

#: Largest number of (worker, job) steps of the one-by-one hand-out under
#: sublinear scaling (linear scaling hands out a job's workers at once).
AFS_WORK_LIMIT = 20_000_000


def _throughput_gain(scaling: Scaling, job: Job, k: int) -> float:
    return (1 / scaling.time(job, k + 1) - 1 / scaling.time(job, k)) / job.gpus_per_worker


@named("afs")
def afs(
    inp: AllocationInput, *, seed: Seed = None, time_limit: float | None = None
) -> Solution[AllocationDecision]:
    """AFS: base demand first, then worker by worker to the best throughput gain per GPU.

    Queued jobs get their base demand in queue order when it fits; then one
    worker at a time goes to the job with the largest throughput gain per GPU,
    throughput being the job's progress rate 1 / T(workers).

    Parameters
    ----------
    inp : AllocationInput
    seed : int, numpy Generator or None
        Unused.
    time_limit : float, optional
        Seconds (default :data:`~scheduling_opt.solution.DEFAULT_TIME_LIMIT`):
        the hand-out stops there and the plan so far is returned
        (``message`` says so; every intermediate plan is valid).

    Returns
    -------
    Solution[AllocationDecision]
        Status ``feasible`` with the cheap lower bound.

    Raises
    ------
    InstanceTooLargeError
        A plan too large to simulate (:func:`~scheduling_opt.allocation.plan_deadline`),
        or, under sublinear scaling, more than :data:`AFS_WORK_LIMIT` steps
        (linear scaling then hands out each picked job's workers at once).

    Examples
    --------
    >>> from scheduling_opt.model import Job
    >>> inp = AllocationInput((Job("A", 2, 6, 50.0), Job("B", 2, 6, 20.0)), 8)
    >>> dict(afs(inp).decision.workers)
    {'A': 2, 'B': 6}

    References
    ----------
    Aryl (EuroSys '22) §7.1; Hwang et al., "Elastic resource sharing for
    distributed deep learning" (AFS), NSDI '21.
    """
    start = time.perf_counter()
    deadline = plan_deadline(inp, time_limit)
    steps = min(
        sum(j.max_workers - j.min_workers for j in inp.jobs),
        inp.capacity // min((j.gpus_per_worker for j in inp.jobs), default=1),
    )
    # Under linear scaling a job's gain per GPU is the same at every size, so
    # the one-by-one loop keeps picking the job it picked (up to rounding
    # noise): beyond the work limit its workers are handed out at once.
    at_once = steps * len(inp.jobs) > AFS_WORK_LIMIT
    if at_once and inp.scaling.exponent != 1:
        raise InstanceTooLargeError(
            "jobs",
            f"afs would hand out up to {steps:.3g} workers one by one over "
            f"{len(inp.jobs)} jobs ({steps * len(inp.jobs):.3g} steps), "
            f"above its limit {AFS_WORK_LIMIT:.0e}",
        )
    room, workers, started = inp.capacity, {}, []
    for job in inp.jobs:
        base = job.id in inp.running or job.min_gpus <= room
        if base and job.id not in inp.running:
            room -= job.min_gpus
            started.append(job.id)
        workers[job.id] = job.min_workers if base else 0
    while True:
        best: tuple[float, int, Job] | None = None
        for i, job in enumerate(inp.jobs):
            k = workers[job.id]
            if k and k < job.max_workers and job.gpus_per_worker <= room:
                cand = (-_throughput_gain(inp.scaling, job, k), i, job)
                best = cand if best is None or cand[:2] < best[:2] else best
        if best is None:
            return solution_of(inp, workers, start, started=started)
        job = best[2]
        add = min(job.max_workers - workers[job.id], room // job.gpus_per_worker) if at_once else 1
        workers[job.id] += add
        room -= add * job.gpus_per_worker
        if time.perf_counter() > deadline:
            return solution_of(
                inp, workers, start, started=started, message="stopped by the time limit"
            )
