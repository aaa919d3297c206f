"""Aryl's two-phase allocation (method ``two-phase``, the default).

Phase one runs shortest-job-first on the inelastic workload (inelastic jobs
and elastic jobs' base demand); phase two gives the remaining GPUs to elastic
jobs' flexible demand with a multiple-choice knapsack solved exactly by
:func:`scheduling_opt.mckp.dp` (Aryl §5.2, Appendix D, Algorithm 2).
Complexity: O(n log n + MCKP), the MCKP being O(sum_j (max_j - min_j) * C'),
plus the O(n^2) simulation of the resulting plan.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence

import numpy as np

from scheduling_opt.allocation.model import LINEAR, AllocationDecision, AllocationInput, Scaling
from scheduling_opt.allocation.simulate import solution_of
from scheduling_opt.mckp import Mckp, dp
from scheduling_opt.model import Job
from scheduling_opt.solution import Seed, Solution


def knapsack_groups(jobs: Sequence[Job], capacity: int, scaling: Scaling = LINEAR) -> Mckp:
    """Aryl's phase-two MCKP: one group per elastic job, item w = w extra workers.

    Weight ``w * D_j`` (the flexible GPUs; Algorithm 2 line 17 writes
    ``(w + w_min) D_j``, docs/allocation.md says why not); value
    ``T(min) - T(min + w)``, the JCT reduction over the running time at base
    demand (``T_base * w / (w + min)`` when linear).

    Parameters
    ----------
    jobs : sequence of Job
        The elastic jobs (one group each, in this order).
    capacity : int
        GPUs left after phase one.
    scaling : Scaling, optional

    Returns
    -------
    Mckp

    Examples
    --------
    >>> g = knapsack_groups([Job("A", 2, 4, 50.0)], 4)
    >>> g.group(0)[0].tolist(), [round(v, 2) for v in g.group(0)[1].tolist()]
    ([1, 2], [33.33, 50.0])

    References
    ----------
    Aryl (EuroSys '22) §5.2 and Appendix D.
    """
    weights, values = [], []
    for j in jobs:
        extra = np.arange(1, j.max_workers - j.min_workers + 1)
        base = scaling.time(j, j.min_workers)
        weights.append(extra * j.gpus_per_worker)
        values.append(np.array([base - scaling.time(j, j.min_workers + int(w)) for w in extra]))
    return Mckp.from_arrays(weights, values, capacity)


def sjf_key(
    scaling: Scaling, workers: Callable[[Job], int]
) -> Callable[[tuple[int, Job]], tuple[float, int]]:
    """Sort key of ``(queue index, job)``: running time at ``workers(job)``, then queue order."""
    return lambda item: (scaling.time(item[1], workers(item[1])), item[0])


def two_phase(
    inp: AllocationInput, *, seed: Seed = None, time_limit: float | None = None
) -> Solution[AllocationDecision]:
    """Aryl Algorithm 2: SJF on the base demand, then an MCKP on flexible demand.

    Phase one walks queued jobs by running time at base demand (shortest
    first) and admits each whose base demand fits, skipping the others.
    Phase two solves :func:`knapsack_groups` over admitted and running
    elastic jobs with the GPUs left, exactly, by dynamic programming.

    Parameters
    ----------
    inp : AllocationInput
    seed : int, numpy Generator or None
        Unused (deterministic).
    time_limit : float, optional
        Unused (bounded by work).

    Returns
    -------
    Solution[AllocationDecision]
        Status ``feasible``; objective the average JCT; ``bound``
        :func:`~scheduling_opt.allocation.lower_bound`; ``start_now`` in
        admission (SJF) order; ``knapsack_value`` the phase-two value.

    Examples
    --------
    >>> from scheduling_opt.model import Job
    >>> inp = AllocationInput((Job("A", 2, 3, 100.0), Job("B", 2, 6, 20.0)), 8)
    >>> sol = two_phase(inp)
    >>> dict(sol.decision.workers), sol.objective
    ({'A': 3, 'B': 5}, 62.0)

    References
    ----------
    Aryl (EuroSys '22) §5.2, Appendix D (Algorithm 2).
    """
    start = time.perf_counter()
    order = sorted(enumerate(inp.queued()), key=sjf_key(inp.scaling, lambda j: j.min_workers))
    room, admitted = inp.capacity, []
    for _, job in order:
        if job.min_gpus <= room:
            admitted.append(job)
            room -= job.min_gpus
    chosen = {j.id for j in admitted}
    elastic = [j for j in inp.jobs if j.elastic and (j.id in chosen or j.id in inp.running)]
    knapsack = dp(knapsack_groups(elastic, room, inp.scaling))
    assert knapsack.decision is not None  # the DP always decides
    workers = {
        j.id: j.min_workers if j.id in chosen or j.id in inp.running else 0 for j in inp.jobs
    }
    for job, item in zip(elastic, knapsack.decision.choice, strict=True):
        if item is not None:
            workers[job.id] += item + 1
    return solution_of(
        inp,
        workers,
        start,
        started=[j.id for j in admitted],
        knapsack_value=knapsack.objective,
    )
