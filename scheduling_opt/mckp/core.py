"""Pisinger's minimal algorithm for the MCKP (method ``core``, the default).

1. Solve the LP relaxation on the groups' upper convex hulls
   (:mod:`scheduling_opt.mckp._hull`, O(m log m) in numpy). Every group
   takes its LP choice ``a_g``; one group ``r`` holds the break increment,
   of efficiency ``lam`` (the LP dual). The greedy completion of the LP is
   the first incumbent; when the LP bound cannot beat it, it is optimal and
   nothing else runs.
2. Reduce: item i of group g is useless when even the Lagrangian bound with
   i forced, ``z_LP + (v_i - v_a) - lam (w_i - w_a)``, cannot beat the
   incumbent; a group left with its LP choice only is fixed there.
3. Expand a core of groups around ``r`` by dynamic programming
   (:mod:`scheduling_opt.mckp._core`). Every group outside the core sits
   at its LP choice. Outside the core, ``lam_up`` is the steepest gradient
   by which a group can still gain weight (``max (v_j - v_a) / (w_j - w_a)``
   over its heavier live items) and ``lam_down`` the gentlest by which one
   can lose weight; since ``lam_up <= lam <= lam_down``, a state of total
   weight ``mu`` and value ``pi`` can reach at most ``pi + lam_up (C - mu)``
   when ``mu <= C`` and ``pi + lam_down (C - mu)`` otherwise (Pisinger's
   bound). States that cannot beat the incumbent, that a lighter state
   dominates, or that can no longer get under the capacity are dropped after
   every group. The next group is the one defining ``lam_up`` or
   ``lam_down`` (Pisinger's two orders of the groups), on the side whose
   best state bound is higher. The search ends when no state is left or
   every group that can move is in the core: the incumbent is optimal.

Before all this, weights are divided by their greatest common divisor
(the capacity rounded down), an exact reduction that closes the bound on
instances such as even weights under an odd capacity.

Claims: ``optimal`` only from that argument. With integer values a state
must be able to gain a whole unit, with real values more than the float
rounding of the sums (:func:`~scheduling_opt.mckp._core.tolerance`), so
``optimal`` means optimal up to that rounding, as the capacity DP's float
sums. Stopped by the time limit, it answers with the incumbent and the best
bound of a live state (``time_limit``). When the bounds do not close (a
strongly correlated instance with no exact fill) it hands the instance to
:func:`~scheduling_opt.mckp.dp`, with the time left, as soon as finishing
the core looks dearer than the whole capacity DP, or when its rows would pass
:data:`~scheduling_opt.mckp._core.CORE_CELLS` (to HiGHS,
:func:`~scheduling_opt.mckp.exact`, when ``dp``'s tables would not fit:
huge weights); see :func:`hand_over`.

Complexity: O(m log m) for the LP, the reduction and the two orders, then
O(sum over the core's groups of k_g' * window) for the DP (window: the live
state range). On 144 generated instances (the four classes, n = 200 to
5,000, C = 4n to 10^5, three seeds) the LP and greedy alone proved 93; the
others took a core of 1 to 95 groups (median 4), never a hand-over
(docs/mckp.md).

References
----------
D. Pisinger, "A minimal algorithm for the multiple-choice knapsack problem",
European Journal of Operational Research 83 (1995) 394-410.
"""

from __future__ import annotations

import time

import numpy as np

from scheduling_opt.errors import InstanceTooLargeError, SolverError
from scheduling_opt.mckp._core import CoreSearch, Precision
from scheduling_opt.mckp._hull import relax
from scheduling_opt.mckp.dp import dp
from scheduling_opt.mckp.exact import exact
from scheduling_opt.mckp.greedy import best_single, greedy_choice
from scheduling_opt.mckp.model import Mckp, MckpDecision, decision_of
from scheduling_opt.solution import Seed, Solution, Status, named, time_limit_of


@named("core")
def core(
    inp: Mckp, *, seed: Seed = None, time_limit: float | None = None
) -> Solution[MckpDecision]:
    """Exact MCKP by Pisinger's minimal algorithm (method ``core``, the default).

    Parameters
    ----------
    inp : Mckp
        The instance.
    seed : int, numpy Generator or None
        Unused (deterministic); accepted for the common convention.
    time_limit : float, optional
        Seconds (default :data:`~scheduling_opt.solution.DEFAULT_TIME_LIMIT`),
        checked before every item's pass over the states; the LP and the
        greedy before it (O(m log m)) always run.

    Returns
    -------
    Solution[MckpDecision]
        ``optimal`` (bound = objective) when proven; ``time_limit`` with the
        incumbent and the best bound of a live state otherwise.

    Raises
    ------
    InstanceTooLargeError
        Only when the bounds do not close on weights so huge that neither
        the core's rows nor ``dp``'s fit and HiGHS fails too (values above
        its infinity, 1e20): see :func:`hand_over`.

    Examples
    --------
    >>> from scheduling_opt.mckp import Mckp
    >>> p = Mckp.from_groups([[(1, 60.0), (2, 90.0), (3, 100.0)], [(1, 20.0), (2, 30.0)]], 3)
    >>> sol = core(p)
    >>> sol.status.value, sol.objective, sol.decision.choice
    ('optimal', 110.0, (1, 0))

    References
    ----------
    Pisinger, EJOR 83 (1995) 394-410; Aryl (EuroSys '22) §5.2 (the MCKP).
    """
    start = time.perf_counter()
    deadline = start + time_limit_of(time_limit)
    if not np.any((inp.values > 0) & (inp.weights <= inp.capacity)):
        # Nothing fits and is worth something: choosing nothing is optimal.
        nothing = decision_of(inp, [None] * inp.n_groups)
        return Solution(Status.OPTIMAL, 0.0, nothing, seconds=time.perf_counter() - start)
    work = scaled(inp)
    lp = relax(work)
    choice = greedy_choice(work, lp)
    incumbent = decision_of(inp, choice)
    single = best_single(inp)
    if single is not None and single[0] > incumbent.value:
        choice = [None] * inp.n_groups
        choice[single[1]] = single[2]
        incumbent = decision_of(inp, choice)
    precision = Precision.of(work, lp)
    open_bound = None
    if lp.broken and lp.value >= precision.threshold(incumbent.value):
        search = CoreSearch.of(work, lp, incumbent.value, precision)
        search.run(deadline)
        if search.handed_over:
            handed = hand_over(inp, deadline)
            if handed.status is not Status.OPTIMAL and search.best is not None:
                # Stopped by the time limit too: keep the better incumbent and
                # the tighter of the two (valid) bounds.
                mine = decision_of(inp, search.trace())
                if handed.objective is None or mine.value > handed.objective:
                    bounds = [b for b in (handed.bound, search.open_bound) if b is not None]
                    return Solution(
                        Status.TIME_LIMIT,
                        mine.value,
                        mine,
                        bound=max(min(bounds), mine.value) if bounds else None,
                        seconds=time.perf_counter() - start,
                        message="the time limit stopped the dp after the core: core incumbent",
                    )
            return handed.with_(seconds=time.perf_counter() - start)
        if search.best is not None:
            incumbent = decision_of(inp, search.trace())
        open_bound = search.open_bound
    if open_bound is None:
        return Solution(
            Status.OPTIMAL, incumbent.value, incumbent, seconds=time.perf_counter() - start
        )
    return Solution(
        Status.TIME_LIMIT,
        incumbent.value,
        incumbent,
        bound=max(open_bound, incumbent.value),
        seconds=time.perf_counter() - start,
        message="the time limit stopped the core search: incumbent, best state bound",
    )


def hand_over(inp: Mckp, deadline: float) -> Solution[MckpDecision]:
    """``dp`` with the time left, or HiGHS (``exact``) when ``dp``'s tables would not fit.

    Examples
    --------
    >>> from scheduling_opt.mckp import Mckp
    >>> hand_over(Mckp.from_groups([[(2**40, 3.0)], [(2**41, 4.0)]], 2**41), 1e18).objective
    4.0
    """
    left = max(deadline - time.perf_counter(), 1e-3)
    try:
        return dp(inp, time_limit=left)
    except InstanceTooLargeError:
        try:
            return exact(inp, time_limit=max(deadline - time.perf_counter(), 1e-3))
        except SolverError as failed:  # values beyond HiGHS' infinity (1e20)
            raise InstanceTooLargeError(
                "groups",
                "the core's bounds do not close, no DP row fits weights this large "
                f"and {failed} (method greedy answers with its LP bound)",
            ) from failed


def scaled(inp: Mckp) -> Mckp:
    """``inp`` with weights divided by the gcd of the useful ones (capacity rounded down).

    Only items that fit and are worth something can be chosen; their weights
    are multiples of the gcd d, so any choice's weight is too and fits C iff
    it fits d * floor(C / d). Other weights are divided rounding up, which
    keeps an item heavier than C heavier than floor(C / d).

    Examples
    --------
    >>> p = scaled(Mckp.from_groups([[(4, 1.0), (15, 2.0)], [(6, 1.0)]], 11))
    >>> p.capacity, p.weights.tolist()
    (5, [2, 8, 3])
    """
    useful = (inp.values > 0) & (inp.weights <= inp.capacity)
    d = int(np.gcd.reduce(inp.weights[useful])) if useful.any() else 0
    if d <= 1:
        return inp
    return Mckp(inp.capacity // d, -(-inp.weights // d), inp.values, inp.offsets)
