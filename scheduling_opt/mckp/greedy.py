"""The LP-relaxation greedy of the MCKP (method ``greedy``) and the LP bound.

The LP relaxation of the MCKP only uses each group's upper convex hull, and
is solved by walking the hull increments by decreasing efficiency (Sinha and
Zoltners); the greedy takes the whole increments that fit and compares with
the best single item. Both are O(m log m) for m items and vectorized in
numpy (:mod:`scheduling_opt.mckp._hull`), which is why the greedy reports
the LP optimum as its ``bound`` (Aryl §5.2 uses the MCKP; the greedy is the
classic heuristic for it).
"""

from __future__ import annotations

import time

import numpy as np
from numpy.typing import ArrayLike

from scheduling_opt.errors import InvalidInstanceError
from scheduling_opt.mckp._hull import Relaxation, hulls, relax
from scheduling_opt.mckp.model import Mckp, MckpDecision, decision_of
from scheduling_opt.solution import Seed, Solution, Status, named


def upper_hull(weights: ArrayLike, values: ArrayLike) -> list[int]:
    """Indices of a group's LP-undominated items, by increasing weight.

    The upper convex hull of the items and the empty choice (0, 0): the items
    an LP relaxation may use. Incremental efficiencies along it decrease.

    Parameters
    ----------
    weights, values : array_like
        One group's item weights (integers) and values.

    Returns
    -------
    list of int
        Item indices on the hull, by increasing weight.

    Raises
    ------
    InvalidInstanceError
        Lengths that differ, non-integer or negative weights, non-finite values.

    Examples
    --------
    >>> upper_hull([1, 2, 3], [5.0, 6.0, 9.0])
    [0, 2]

    References
    ----------
    Sinha and Zoltners, "The multiple-choice knapsack problem", Oper. Res. 1979.
    """
    w = np.asarray(weights).reshape(-1)
    v = np.asarray(values, np.float64).reshape(-1)
    if len(w) != len(v):
        raise InvalidInstanceError("values", f"{len(v)} values for {len(w)} weights")
    if len(w) and not np.issubdtype(w.dtype, np.integer):
        raise InvalidInstanceError("weights", "must be integers")
    if np.any(w < 0) or not np.all(np.isfinite(v)):
        raise InvalidInstanceError("weights", "weights must be >= 0 and values finite")
    w = w.astype(np.int64)
    one = Mckp(int(w.max()) if len(w) else 0, w, v, np.array([0, len(w)]))
    items: list[int] = hulls(one).item.tolist()
    return items


def lp_bound(inp: Mckp) -> float:
    """The optimum of the LP relaxation: an upper bound on the MCKP optimum.

    Parameters
    ----------
    inp : Mckp

    Returns
    -------
    float
        The LP optimum (0 for an instance with no useful item).

    Examples
    --------
    >>> from scheduling_opt.mckp import Mckp
    >>> lp_bound(Mckp.from_groups([[(2, 3.0)], [(2, 2.0)]], 3))
    4.0

    References
    ----------
    Sinha and Zoltners, Oper. Res. 1979 (the LP of the MCKP); Aryl §5.2.
    """
    return relax(inp).value


@named("greedy")
def greedy(
    inp: Mckp, *, seed: Seed = None, time_limit: float | None = None
) -> Solution[MckpDecision]:
    """The LP-relaxation greedy (method ``greedy``), a heuristic with the LP bound.

    Walk all groups' hull increments by decreasing efficiency; take an
    increment when it is its group's next one and fits, else freeze that
    group; keep scanning after the first misfit. Finally compare with the
    best single item, which bounds the greedy's loss (as in the 0-1 case).

    Parameters
    ----------
    inp : Mckp
    seed : int, numpy Generator or None
        Unused (deterministic).
    time_limit : float, optional
        Unused (O(m log m) work).

    Returns
    -------
    Solution[MckpDecision]
        Status ``feasible``; ``bound`` is :func:`lp_bound` (>= the optimum).

    Examples
    --------
    >>> from scheduling_opt.mckp import Mckp
    >>> sol = greedy(Mckp.from_groups([[(2, 3.0)], [(2, 2.0)]], 3))
    >>> sol.status.value, sol.objective, sol.bound, round(sol.gap, 3)
    ('feasible', 3.0, 4.0, 0.25)

    References
    ----------
    Sinha and Zoltners, Oper. Res. 1979; Aryl (EuroSys '22) §5.2.
    """
    start = time.perf_counter()
    lp = relax(inp)
    choice = greedy_choice(inp, lp)
    decision = decision_of(inp, choice)
    single = best_single(inp)
    if single is not None and single[0] > decision.value:
        choice = [None] * inp.n_groups
        choice[single[1]] = single[2]
        decision = decision_of(inp, choice)
    return Solution(
        Status.FEASIBLE,
        decision.value,
        decision,
        bound=max(lp.value, decision.value),
        seconds=time.perf_counter() - start,
    )


def greedy_choice(inp: Mckp, lp: Relaxation) -> list[int | None]:
    """The greedy's choice (before the single-item check) from the LP relaxation.

    The LP takes the increments before the break whole; after it the greedy
    keeps scanning and takes an increment when it is its group's next one and
    fits. An increment heavier than the room left at the break never fits and
    blocks the rest of its group, so only the increments before a group's
    first such one are scanned (in Python, usually few).

    Parameters
    ----------
    inp : Mckp
    lp : Relaxation
        ``inp``'s LP relaxation (:func:`~scheduling_opt.mckp._hull.relax`).

    Returns
    -------
    list of (int or None)
        Per group the chosen item's index, or None.

    Examples
    --------
    >>> from scheduling_opt.mckp import Mckp
    >>> from scheduling_opt.mckp._hull import relax
    >>> p = Mckp.from_groups([[(2, 3.0)], [(2, 2.0)], [(1, 0.5)]], 3)
    >>> greedy_choice(p, relax(p))
    [0, None, 0]
    """
    h = lp.hulls
    level = lp.level.copy()
    if lp.broken:
        room = lp.room
        pos = np.arange(len(h.item)) - h.start[h.group]
        ahead = pos >= level[h.group]
        big = np.where(ahead & (h.dw > room), pos, np.iinfo(np.int64).max)
        block = np.full(inp.n_groups, np.iinfo(np.int64).max)
        some = np.flatnonzero(h.start[1:] > h.start[:-1])
        block[some] = np.minimum.reduceat(big, h.start[some])
        cand = np.flatnonzero(lp.after() & ahead & (pos < block[h.group]))
        cand = cand[np.argsort(-h.eff[cand], kind="stable")]  # LP order
        lv = level.tolist()
        groups, steps, dws = h.group[cand].tolist(), pos[cand].tolist(), h.dw[cand].tolist()
        for g, s, dw in zip(groups, steps, dws, strict=True):
            if room == 0:
                break
            if lv[g] == s and dw <= room:
                room -= dw
                lv[g] = s + 1
        level = np.array(lv, np.int64)
    choice: list[int | None] = [None] * inp.n_groups
    chosen = np.flatnonzero(level > 0)
    items = h.item[h.start[chosen] + level[chosen] - 1] - inp.offsets[chosen]
    for g, i in zip(chosen.tolist(), items.tolist(), strict=True):
        choice[g] = i
    return choice


def best_single(inp: Mckp) -> tuple[float, int, int] | None:
    """The most valuable single item that fits: (value, group, item), or None.

    Parameters
    ----------
    inp : Mckp

    Returns
    -------
    (float, int, int) or None
        Its value, group and index in the group (the first of equal values);
        None when no item fits with a positive value.

    Examples
    --------
    >>> from scheduling_opt.mckp import Mckp
    >>> best_single(Mckp.from_groups([[(2, 3.0)], [(4, 9.0), (3, 5.0)]], 3))
    (5.0, 1, 1)
    """
    ok = np.flatnonzero((inp.weights <= inp.capacity) & (inp.values > 0))
    if len(ok) == 0:
        return None
    i = int(ok[np.argmax(inp.values[ok])])
    g = int(np.searchsorted(inp.offsets, i, side="right")) - 1
    return float(inp.values[i]), g, i - int(inp.offsets[g])
