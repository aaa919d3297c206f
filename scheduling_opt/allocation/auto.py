"""The ``auto`` portfolio of ``allocation`` (the default method): the enumeration when small.

A size test, :func:`~scheduling_opt.allocation.allocation_count` (O(n), no
listing), picks the branch: at most :data:`AUTO_EXACT_COUNT` initial
allocations are enumerated by :func:`~scheduling_opt.allocation.exact`
(proven optimum, about 10 us per allocation: 0.1-1.3 ms measured, the time of
:func:`~scheduling_opt.allocation.two_phase` itself); larger instances get
the better of Aryl's two-phase allocation and the max-elastic baseline (two
O(n log n + MCKP) planners, each simulated in O(n^2)). Aryl (EuroSys '22)
§5.1-§5.2.
"""

from __future__ import annotations

import time

from scheduling_opt.allocation.exact import allocation_count, exact
from scheduling_opt.allocation.max_elastic import max_elastic
from scheduling_opt.allocation.model import TOLERANCE, AllocationDecision, AllocationInput
from scheduling_opt.allocation.two_phase import two_phase
from scheduling_opt.errors import InstanceTooLargeError
from scheduling_opt.solution import Seed, Solution, Status, named, time_limit_of

#: Largest enumeration ``auto`` runs. 128 until 2026-11-26; the quiet
#: standard bench then marked ``auto`` dominated by ``exact`` at n5 (2.30 ms
#: with a 0.67% gap against 2.42 ms optimal): the planners' branch costs
#: 0.3-1.8 ms there, the enumeration 1.4-3.7 ms up to 256 allocations (n5,
#: median of 5 runs), 5-15 ms at 320-1,280 (n6).
AUTO_EXACT_COUNT = 256


@named("auto")
def auto(
    inp: AllocationInput, *, seed: Seed = None, time_limit: float | None = None
) -> Solution[AllocationDecision]:
    """The proven optimum when the enumeration is small, else the better of two planners.

    Parameters
    ----------
    inp : AllocationInput
    seed : int, numpy Generator or None
        Unused (every branch is deterministic).
    time_limit : float, optional
        Seconds for the whole call (default
        :data:`~scheduling_opt.solution.DEFAULT_TIME_LIMIT`).

    Returns
    -------
    Solution[AllocationDecision]
        ``optimal`` only when the enumeration finished (``message`` starts
        with ``auto: exact``); otherwise ``feasible``, the smaller average JCT
        of :func:`~scheduling_opt.allocation.two_phase` and
        :func:`~scheduling_opt.allocation.max_elastic` (two-phase on a tie),
        with the cheap lower bound (``message`` names the planner kept).

    Raises
    ------
    InstanceTooLargeError
        Both planners refuse the instance (simulation or knapsack limits).

    Examples
    --------
    >>> from scheduling_opt.model import Job
    >>> inp = AllocationInput((Job("A", 2, 6, 50.0), Job("B", 2, 6, 20.0)), 8)
    >>> sol = auto(inp)
    >>> sol.status.value, round(sol.objective, 2), sol.message
    ('optimal', 41.67, 'auto: exact (26 of 36 allocations evaluated)')

    References
    ----------
    Aryl (EuroSys '22) §5.2 (two-phase) and Table 3 (the optimum).
    """
    start = time.perf_counter()
    limit = time_limit_of(time_limit)
    if allocation_count(inp) <= AUTO_EXACT_COUNT:
        found = exact(inp, seed=seed, time_limit=limit)
        if found.status is Status.OPTIMAL:
            return found.with_(
                seconds=time.perf_counter() - start, message=f"auto: exact ({found.message})"
            )
    best: Solution[AllocationDecision] | None = None
    name, refused = "", None
    for label, planner in (("two-phase", two_phase), ("max-elastic", max_elastic)):
        left = limit - (time.perf_counter() - start)
        if left <= 0 and best is not None:
            break
        try:
            sol = planner(inp, seed=seed, time_limit=max(left, 1e-3))
        except InstanceTooLargeError as e:
            refused = e
            continue
        assert sol.objective is not None
        if best is None or (
            best.objective is not None and sol.objective < best.objective * (1 - TOLERANCE)
        ):
            best, name = sol, label
    if best is None:
        assert refused is not None
        raise refused
    return best.with_(
        status=Status.FEASIBLE, seconds=time.perf_counter() - start, message=f"auto: {name}"
    )
