"""The LP-relaxation greedy of the MCKP (method ``greedy``) and the LP bound.

The LP relaxation of the MCKP only uses each group's upper convex hull, and
is solved by walking the hull increments by decreasing efficiency (Sinha and
Zoltners); the greedy takes the whole increments that fit and compares with
the best single item. Both are O(m log m) for m items, which is why the
greedy reports the LP optimum as its ``bound`` (Aryl §5.2 uses the MCKP; the
greedy is the classic heuristic for it).
"""

from __future__ import annotations

import math
import time

import numpy as np
from numpy.typing import ArrayLike

from scheduling_opt.errors import InvalidInstanceError
from scheduling_opt.mckp.model import Mckp, MckpDecision, decision_of
from scheduling_opt.solution import Seed, Solution, Status

Step = tuple[float, int, int]  # efficiency, group, hull position


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
    order = sorted(range(len(w)), key=lambda i: (int(w[i]), -float(v[i]), i))
    hull: list[tuple[int, float, int]] = [(0, 0.0, -1)]
    for i in order:
        wi, vi = int(w[i]), float(v[i])
        if vi <= hull[-1][1]:
            continue
        if wi == hull[-1][0]:
            hull.pop()
        while len(hull) >= 2:
            (w1, v1, _), (w2, v2, _) = hull[-2], hull[-1]
            if (v2 - v1) * (wi - w1) <= (vi - v1) * (w2 - w1):
                hull.pop()
            else:
                break
        hull.append((wi, vi, i))
    return [i for _, _, i in hull if i >= 0]


def _increments(inp: Mckp) -> tuple[list[Step], list[list[int]]]:
    steps: list[Step] = []
    hulls: list[list[int]] = []
    cap = inp.capacity
    for g in range(inp.n_groups):
        w, v = inp.group(g)
        fits = [i for i in range(len(w)) if w[i] <= cap]
        hull = [fits[i] for i in upper_hull(w[fits], v[fits])]
        hulls.append(hull)
        pw, pv = 0, 0.0
        for s, i in enumerate(hull):
            dw, dv = int(w[i]) - pw, float(v[i]) - pv
            steps.append((math.inf if dw == 0 else dv / dw, g, s))
            pw, pv = int(w[i]), float(v[i])
    steps.sort(key=lambda t: (-t[0], t[1], t[2]))
    return steps, hulls


def _lp_value(inp: Mckp, steps: list[Step], hulls: list[list[int]]) -> float:
    room, total = float(inp.capacity), 0.0
    level = [0] * inp.n_groups
    for eff, g, s in steps:
        if level[g] != s:
            continue
        w, v = inp.group(g)
        i, prev = hulls[g][s], hulls[g][s - 1] if s else -1
        dw = float(w[i]) - (float(w[prev]) if s else 0.0)
        dv = float(v[i]) - (float(v[prev]) if s else 0.0)
        if dw <= room:
            room -= dw
            total += dv
            level[g] = s + 1
        else:
            return total + eff * room
    return total


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
    steps, hulls = _increments(inp)
    return _lp_value(inp, steps, hulls)


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
    steps, hulls = _increments(inp)
    level = [0] * inp.n_groups
    frozen = [False] * inp.n_groups
    room = inp.capacity
    for _, g, s in steps:
        if frozen[g] or level[g] != s:
            continue
        w, _ = inp.group(g)
        dw = int(w[hulls[g][s]]) - (int(w[hulls[g][s - 1]]) if s else 0)
        if dw <= room:
            room -= dw
            level[g] = s + 1
        else:
            frozen[g] = True
    choice: list[int | None] = [hulls[g][lv - 1] if lv else None for g, lv in enumerate(level)]
    decision = decision_of(inp, choice)
    single = _best_single(inp)
    if single is not None and single[0] > decision.value:
        choice = [None] * inp.n_groups
        choice[single[1]] = single[2]
        decision = decision_of(inp, choice)
    bound = max(_lp_value(inp, steps, hulls), decision.value)
    return Solution(
        Status.FEASIBLE,
        decision.value,
        decision,
        bound=bound,
        seconds=time.perf_counter() - start,
    )


def _best_single(inp: Mckp) -> tuple[float, int, int] | None:
    ok = np.flatnonzero((inp.weights <= inp.capacity) & (inp.values > 0))
    if len(ok) == 0:
        return None
    i = int(ok[np.argmax(inp.values[ok])])
    g = int(np.searchsorted(inp.offsets, i, side="right")) - 1
    return float(inp.values[i]), g, i - int(inp.offsets[g])
