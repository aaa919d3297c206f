"""The optimal memory split as a multiple-choice knapsack, solved by DP (method ``exact``).

One group per job; its items are the chunk counts above its minimum, valued
by the speed gained over the minimum; the capacity is what the minimums
leave. :func:`scheduling_opt.mckp.dp` solves it exactly (AntMan §3.3 uses a
greedy; this is the optimum it is compared with). Complexity O(n K C) for n
jobs, K <= C chunks per job and C spare chunks.
"""

from __future__ import annotations

import time
from collections.abc import Sequence

import numpy as np

from scheduling_opt.mckp import Mckp, dp, lp_bound
from scheduling_opt.memory_split._solution import infeasible, solution_of
from scheduling_opt.memory_split.model import MemorySplitDecision, MemorySplitInput
from scheduling_opt.solution import Seed, Solution, named


def to_mckp(inp: MemorySplitInput) -> Mckp:
    """One group per job: items are grants above its minimum, valued by the speed gained.

    Choosing no item means the minimum, so every job runs; weights are chunks
    above the minimum and the capacity is what the minimums leave (the
    minimums must fit: see :meth:`MemorySplitInput.minimums_fit`).

    Parameters
    ----------
    inp : MemorySplitInput

    Returns
    -------
    Mckp

    Raises
    ------
    InvalidInstanceError
        ``capacity`` when the minimums do not fit.

    Examples
    --------
    >>> from scheduling_opt.memory_split import MemorySplitInput, OpportunisticJob, PRESETS
    >>> job = OpportunisticJob("sr", 4.0, PRESETS["sr"])
    >>> to_mckp(MemorySplitInput(8.0, (job,), 4.0, 1.0)).group(0)[0].tolist()
    [1, 2, 3]

    References
    ----------
    AntMan (OSDI '20) §3.3.
    """
    capacity = inp.capacity - sum(lo for lo, _ in inp.bounds())
    weights, values = [], []
    for job in inp.jobs:
        # Grants beyond the spare chunks cannot be chosen: listing them would
        # only grow the MCKP (n jobs x 10^5 chunks) without changing its optimum.
        table = inp.speed_table(job)[: max(capacity, 0) + 1]
        weights.append(np.arange(1, len(table)))
        values.append(table[1:] - table[0])
    return Mckp.from_arrays(weights, values, capacity)


def base_speed(inp: MemorySplitInput) -> float:
    """The sum of the jobs' speeds at their minimums (the MCKP's zero)."""
    return float(sum(float(inp.speed_table(j)[0]) for j in inp.jobs))


def from_choice(inp: MemorySplitInput, choice: Sequence[int | None]) -> list[int]:
    """Chunk counts of an MCKP choice of :func:`to_mckp`."""
    return [
        lo + (0 if c is None else c + 1) for (lo, _), c in zip(inp.bounds(), choice, strict=True)
    ]


def upper_bound(inp: MemorySplitInput) -> float | None:
    """The LP-relaxation bound on the aggregate speed (None when the minimums do not fit).

    Costs O(m log m) for m chunk counts over all jobs, more than the greedy
    itself on large GPUs, hence a separate function.

    Parameters
    ----------
    inp : MemorySplitInput

    Returns
    -------
    float or None
        An upper bound on the summed speed of every split.

    Examples
    --------
    >>> from scheduling_opt.memory_split import MemorySplitInput, OpportunisticJob, PRESETS
    >>> job = OpportunisticJob("sr", 4.0, PRESETS["sr"])
    >>> upper_bound(MemorySplitInput(8.0, (job,), 4.0, 1.0))
    1.0

    References
    ----------
    AntMan (OSDI '20) §3.3; Sinha and Zoltners, Oper. Res. 1979 (MCKP LP).
    """
    if not inp.minimums_fit():
        return None
    return base_speed(inp) + lp_bound(to_mckp(inp))


@named("exact")
def exact(
    inp: MemorySplitInput, *, seed: Seed = None, time_limit: float | None = None
) -> Solution[MemorySplitDecision]:
    """The optimal split: the MCKP of :func:`to_mckp` by the knapsack DP (method ``exact``).

    Parameters
    ----------
    inp : MemorySplitInput
    seed : int, numpy Generator or None
        Unused.
    time_limit : float, optional
        Seconds (default :data:`~scheduling_opt.solution.DEFAULT_TIME_LIMIT`)
        for :func:`scheduling_opt.mckp.dp`.

    Returns
    -------
    Solution[MemorySplitDecision]
        ``optimal``, or ``infeasible`` (no decision) when the minimums do not
        fit, or ``time_limit`` (the MCKP greedy's split and the LP bound) when
        the time limit stopped the DP.

    Raises
    ------
    InstanceTooLargeError
        A knapsack beyond :func:`scheduling_opt.mckp.dp`'s table limits.

    Examples
    --------
    >>> from scheduling_opt.memory_split import MemorySplitInput, OpportunisticJob, PRESETS
    >>> jobs = (
    ...     OpportunisticJob("vgg", 10.0, PRESETS["vgg"]),
    ...     OpportunisticJob("resnet", 10.0, PRESETS["resnet"]),
    ... )
    >>> sol = exact(MemorySplitInput(32.0, jobs, guarantee_gb=21.0, chunk_gb=1.0))
    >>> sol.status.value, dict(sol.decision.chunks), round(sol.objective, 4)
    ('optimal', {'vgg': 1, 'resnet': 10}, 1.35)

    References
    ----------
    AntMan (OSDI '20) §3.3, Figure 10; Aryl (EuroSys '22) Appendix D (the DP).
    """
    start = time.perf_counter()
    if not inp.minimums_fit():
        return infeasible(start)
    sol = dp(to_mckp(inp), time_limit=time_limit)
    assert sol.decision is not None  # the DP always decides (its greedy when stopped)
    bound = None if sol.bound is None else base_speed(inp) + sol.bound
    return solution_of(
        inp,
        from_choice(inp, sol.decision.choice),
        sol.status,
        start,
        bound=bound,
        message=sol.message,
    )
