"""The memory split's MCKP through HiGHS (method ``exact-highs``), a cross-check of ``exact``.

The model of :func:`~scheduling_opt.memory_split.exact.to_mckp` solved by
:func:`scheduling_opt.mckp.exact` (binary per chunk count above the
minimum). Exponential in the worst case; HiGHS' dual bound is reported.
"""

from __future__ import annotations

import time

from scheduling_opt import mckp
from scheduling_opt.memory_split._solution import infeasible, solution_of
from scheduling_opt.memory_split.exact import base_speed, from_choice, to_mckp
from scheduling_opt.memory_split.model import MemorySplitDecision, MemorySplitInput
from scheduling_opt.solution import Seed, Solution, named


@named("exact-highs")
def exact_highs(
    inp: MemorySplitInput, *, seed: Seed = None, time_limit: float | None = None
) -> Solution[MemorySplitDecision]:
    """The split's MCKP solved by HiGHS (method ``exact-highs``; ``exact-milp`` in release 0.2).

    Parameters
    ----------
    inp : MemorySplitInput
    seed : int, numpy Generator or None
        Unused.
    time_limit : float, optional
        Seconds for HiGHS (default :data:`~scheduling_opt.solution.DEFAULT_TIME_LIMIT`).

    Returns
    -------
    Solution[MemorySplitDecision]
        ``optimal``, ``time_limit`` (incumbent and dual bound) or ``infeasible``.

    Raises
    ------
    SolverError
        If HiGHS fails.

    Examples
    --------
    >>> from scheduling_opt.memory_split import MemorySplitInput, OpportunisticJob, PRESETS
    >>> job = OpportunisticJob("sr", 4.0, PRESETS["sr"])
    >>> sol = exact_highs(MemorySplitInput(8.0, (job,), 6.0, 1.0), time_limit=10)
    >>> sol.status.value, dict(sol.decision.chunks)
    ('optimal', {'sr': 2})

    References
    ----------
    AntMan (OSDI '20) §3.3.
    """
    start = time.perf_counter()
    if not inp.minimums_fit():
        return infeasible(start)
    sol = mckp.exact(to_mckp(inp), time_limit=time_limit)
    base = base_speed(inp)
    bound = None if sol.bound is None else base + sol.bound
    chunks = None if sol.decision is None else from_choice(inp, sol.decision.choice)
    return solution_of(inp, chunks, sol.status, start, bound=bound, message=sol.message)
