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
from scheduling_opt.allocation.simulate import SECONDS_PER_STEP, plan_deadline, solution_of
from scheduling_opt.errors import InstanceTooLargeError
from scheduling_opt.mckp import Mckp, MckpDecision, dp
from scheduling_opt.model import Job
from scheduling_opt.solution import Seed, Solution, named

#: Largest phase-two knapsack (items: extra workers that fit, over all jobs).
KNAPSACK_ITEM_LIMIT = 1_000_000


def knapsack_groups(jobs: Sequence[Job], capacity: int, scaling: Scaling = LINEAR) -> Mckp:
    """Aryl's phase-two MCKP: one group per elastic job, item w = w extra workers.

    Only the items that fit the capacity are listed (at most
    ``capacity // gpus_per_worker`` per job), so the size of a group never
    grows with a job's ``max_workers`` beyond what the free GPUs allow.

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
        # Only items that fit can be chosen: a job allowed 10^9 workers on 8
        # free GPUs is 8 items, not 10^9.
        extra = np.arange(1, min(j.max_workers - j.min_workers, capacity // j.gpus_per_worker) + 1)
        base = scaling.time(j, j.min_workers)
        weights.append(extra * j.gpus_per_worker)
        values.append(base - scaling.times(j, j.min_workers + extra))
    return Mckp.from_arrays(weights, values, capacity)


def sjf_key(
    scaling: Scaling, workers: Callable[[Job], int]
) -> Callable[[tuple[int, Job]], tuple[float, int]]:
    """Sort key of ``(queue index, job)``: running time at ``workers(job)``, then queue order."""
    return lambda item: (scaling.time(item[1], workers(item[1])), item[0])


def flexible_workers(
    elastic: Sequence[Job],
    room: int,
    scaling: Scaling = LINEAR,
    *,
    time_limit: float | None = None,
) -> tuple[dict[str, int], Solution[MckpDecision]]:
    """Algorithm 2's phase two alone: the extra workers of each elastic job, and the knapsack.

    The exact MCKP (:func:`knapsack_groups`, :func:`scheduling_opt.mckp.dp`)
    over ``room`` GPUs; a job the knapsack leaves out gets no extra worker
    (absent from the mapping). For a caller that needs the allocation but
    not the simulated JCT of the plan (:func:`two_phase`'s objective, O(n^2)):
    a simulator's scheduler sharing free GPUs among running jobs at every
    call. Cost: the MCKP, O(sum_j (max_j - min_j) x room).

    Parameters
    ----------
    elastic : sequence of Job
        The elastic jobs at their base demand.
    room : int
        GPUs for their flexible demand.
    scaling : Scaling, optional
    time_limit : float, optional
        Seconds for the DP (its greedy choice past them, said by the
        knapsack's ``message``).

    Returns
    -------
    tuple of (dict of str to int, Solution[MckpDecision])

    Examples
    --------
    >>> extra, _ = flexible_workers([Job("A", 2, 3, 100.0), Job("B", 2, 6, 20.0)], 4)
    >>> extra
    {'A': 1, 'B': 3}
    """
    knapsack = dp(knapsack_groups(elastic, room, scaling), time_limit=time_limit)
    assert knapsack.decision is not None  # the DP always decides
    extra = {
        job.id: item + 1
        for job, item in zip(elastic, knapsack.decision.choice, strict=True)
        if item is not None
    }
    return extra, knapsack


@named("two-phase")
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
        Seconds (default :data:`~scheduling_opt.solution.DEFAULT_TIME_LIMIT`):
        if it stops the phase-two DP, the knapsack's greedy choice is used
        (``message`` says so); the answer stays ``feasible``.

    Returns
    -------
    Solution[AllocationDecision]
        Status ``feasible``; objective the average JCT; ``bound``
        :func:`~scheduling_opt.allocation.lower_bound`; ``start_now`` in
        admission (SJF) order; ``knapsack_value`` the phase-two value.

    Raises
    ------
    InstanceTooLargeError
        A plan too large to simulate (:func:`~scheduling_opt.allocation.plan_deadline`)
        or more than :data:`KNAPSACK_ITEM_LIMIT` knapsack items.

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
    deadline = plan_deadline(inp, time_limit)
    order = sorted(enumerate(inp.queued()), key=sjf_key(inp.scaling, lambda j: j.min_workers))
    room, admitted = inp.capacity, []
    for _, job in order:
        if job.min_gpus <= room:
            admitted.append(job)
            room -= job.min_gpus
    chosen = {j.id for j in admitted}
    elastic = [j for j in inp.jobs if j.elastic and (j.id in chosen or j.id in inp.running)]
    items = sum(min(j.max_workers - j.min_workers, room // j.gpus_per_worker) for j in elastic)
    if items > KNAPSACK_ITEM_LIMIT:
        raise InstanceTooLargeError(
            "jobs",
            f"the phase-two knapsack has {items:.3g} items (extra workers that fit), "
            f"above the limit {KNAPSACK_ITEM_LIMIT:.0e}",
        )
    # The DP keeps part of the time for the simulation of the plan.
    budget = max(deadline - time.perf_counter() - len(inp.jobs) ** 2 * SECONDS_PER_STEP, 1e-3)
    extra, knapsack = flexible_workers(elastic, room, inp.scaling, time_limit=budget)
    workers = {
        j.id: j.min_workers + extra.get(j.id, 0) if j.id in chosen or j.id in inp.running else 0
        for j in inp.jobs
    }
    return solution_of(
        inp,
        workers,
        start,
        started=[j.id for j in admitted],
        knapsack_value=knapsack.objective,
        message=knapsack.message,
    )
