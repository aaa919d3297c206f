"""Multiple-choice knapsack (MCKP): the exact core shared by the allocation solvers.

Items come in groups; pick at most one item per group so that the total
(integer, >= 0) weight stays within the capacity and the total (real) value is
largest. Aryl §5.2 and Appendix D (Algorithm 2, ``MaxValueDP``) solve its
phase two with it; ONES' exact baseline and AntMan's memory split reuse it.

Every algorithm is ``fn(inp: Mckp, *, seed=None, time_limit=None) ->
Solution[MckpDecision]``: :func:`core` (Pisinger's minimal algorithm: the LP
on the upper hulls, then a DP over a core of groups; exact, the default),
:func:`dp` (the exact DP over capacity, its independent cross-check),
:func:`exact` (HiGHS), :func:`exact_pulp` (PuLP/CBC), :func:`exact_cpsat`
(CP-SAT) and :func:`greedy` (LP greedy, with the LP bound). Complexity:
``core`` O(m log m) plus a DP over its core (see
:mod:`scheduling_opt.mckp.core`), ``dp`` pseudo-polynomial (O(m log m +
sum_g k_g' * window_g), see :mod:`scheduling_opt.mckp.dp`), ``greedy``
O(m log m), the MILPs exponential in the worst case.

Examples
--------
>>> from scheduling_opt.mckp import as_mckp, core, dp
>>> p = as_mckp([[(1, 60.0), (2, 90.0)], [(1, 20.0)]], capacity=2)
>>> sol = core(p)
>>> sol.objective, sol.decision.choice
(90.0, (1, None))
>>> dp(p).objective
90.0
"""

from scheduling_opt.mckp.check import check
from scheduling_opt.mckp.core import core
from scheduling_opt.mckp.dp import dp
from scheduling_opt.mckp.exact import exact
from scheduling_opt.mckp.exact_cpsat import exact_cpsat, value_scale
from scheduling_opt.mckp.exact_pulp import exact_pulp
from scheduling_opt.mckp.greedy import greedy, lp_bound, upper_hull
from scheduling_opt.mckp.model import (
    TOLERANCE,
    GroupsLike,
    Mckp,
    MckpDecision,
    as_mckp,
    evaluate,
)

__all__ = [
    "TOLERANCE",
    "GroupsLike",
    "Mckp",
    "MckpDecision",
    "as_mckp",
    "check",
    "core",
    "dp",
    "evaluate",
    "exact",
    "exact_cpsat",
    "exact_pulp",
    "greedy",
    "lp_bound",
    "upper_hull",
    "value_scale",
]
