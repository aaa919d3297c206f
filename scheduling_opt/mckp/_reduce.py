"""Exact reductions of the MCKP before the DP: dominance and Lagrangian fixing.

Items that cannot be in any optimal solution are dropped: non-positive values,
items heavier than the capacity, items dominated within their group, and
items whose Lagrangian reduced cost proves them useless (Pisinger's reduction
for the MCKP, applied to Aryl's Appendix D DP). O(m log m) for m items.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from scheduling_opt.mckp.model import TOLERANCE, FloatArray, IntArray, Mckp


@dataclass(frozen=True, slots=True)
class Padded:
    """Groups as (n, k) arrays; columns sorted by weight; dropped items have value -inf."""

    w: IntArray
    v: FloatArray
    index: IntArray  # original item index within its group


def pad(problem: Mckp) -> Padded:
    """Useful items of each group in an (n, kmax) array, dominated ones dropped.

    An item is dropped when it cannot be in any optimal solution: value <= 0
    (choosing nothing is at least as good), weight > capacity, or another item
    of its group weighs no more and is worth at least as much (ties keep the
    lighter, then the earlier item, so the result is deterministic).
    """
    n, sizes = problem.n_groups, problem.sizes()
    kmax = int(sizes.max()) if n else 0
    w = np.zeros((n, kmax), np.int64)
    v = np.full((n, kmax), -np.inf)
    col = np.arange(len(problem.weights)) - np.repeat(problem.offsets[:-1], sizes)
    row = np.repeat(np.arange(n), sizes)
    useful = (problem.values > 0) & (problem.weights <= problem.capacity)
    w[row[useful], col[useful]] = problem.weights[useful]
    v[row[useful], col[useful]] = problem.values[useful]
    w[v == -np.inf] = np.iinfo(np.int64).max // 4
    by_value = np.argsort(-v, axis=1, kind="stable")
    order = np.take_along_axis(
        by_value, np.argsort(np.take_along_axis(w, by_value, 1), axis=1, kind="stable"), 1
    )
    w, v = np.take_along_axis(w, order, 1), np.take_along_axis(v, order, 1)
    best_before = np.maximum.accumulate(np.concatenate([np.zeros((n, 1)), v[:, :-1]], 1), 1)
    v[v <= best_before] = -np.inf
    w[v == -np.inf] = 0
    return Padded(w, v, order)


def _select(p: Padded, lam: float) -> tuple[NDArray[np.bool_], IntArray, FloatArray]:
    """Per group the item maximizing ``v - lam * w`` (lightest on ties) if positive."""
    score = p.v - lam * p.w
    arg = np.argmax(score, axis=1)
    best = np.take_along_axis(score, arg[:, None], 1)[:, 0]
    return best > 0, arg, np.maximum(best, 0.0)


def _lagrange(p: Padded, capacity: int) -> tuple[float, float, float]:
    """A multiplier ``lam``, the bound L(lam) and a feasible value (a lower bound).

    L(lam) = lam * C + sum_g max(0, max_i v_gi - lam * w_gi) bounds the optimum
    from above for every lam >= 0; bisection moves lam towards the LP dual. The
    lower bound starts from the (feasible) choice at the upper multiplier and
    greedily upgrades groups towards the choice at the lower one.
    """
    n = len(p.w)
    if n == 0 or p.w.shape[1] == 0:
        return 0.0, 0.0, 0.0
    rows = np.arange(n)

    def at(lam: float) -> tuple[int, float, FloatArray, IntArray, NDArray[np.bool_]]:
        take, arg, gain = _select(p, lam)
        weight = int(p.w[rows, arg][take].sum())
        return weight, lam * capacity + float(gain.sum()), gain, arg, take

    low = at(0.0)
    if low[0] <= capacity:
        return 0.0, low[1], float(p.v[rows, low[3]][low[4]].sum())
    finite = (p.v > -np.inf) & (p.w > 0)
    lo, hi = 0.0, float((p.v[finite] / p.w[finite]).max()) * (1 + 1e-9) + 1e-12
    high = at(hi)
    for _ in range(30):
        mid = 0.5 * (lo + hi)
        got = at(mid)
        if got[0] > capacity:
            lo, low = mid, got
        else:
            hi, high = mid, got
        if hi - lo <= 1e-12 * hi:
            break
    lam, bound = (lo, low[1]) if low[1] < high[1] else (hi, high[1])
    # L is piecewise linear: where the lines of lo and hi cross is the LP dual
    # itself when one breakpoint separates them (a tighter bound, more fixing).
    w_lo, w_hi = low[0], high[0]
    if w_lo != w_hi:
        cross = (_val(p, low) - _val(p, high)) / (w_lo - w_hi)
        if lo <= cross <= hi and (got := at(cross))[1] < bound:
            lam, bound = cross, got[1]
    return lam, bound, _upgrade(p, capacity, high[3], high[4], low[3], low[4])


def _val(p: Padded, sel: tuple[int, float, FloatArray, IntArray, NDArray[np.bool_]]) -> float:
    return float(p.v[np.arange(len(p.w)), sel[3]][sel[4]].sum())


def _upgrade(
    p: Padded,
    capacity: int,
    arg_hi: IntArray,
    take_hi: NDArray[np.bool_],
    arg_lo: IntArray,
    take_lo: NDArray[np.bool_],
) -> float:
    rows = np.arange(len(p.w))
    w_hi = np.where(take_hi, p.w[rows, arg_hi], 0)
    v_hi = np.where(take_hi, p.v[rows, arg_hi], 0.0)
    dw = np.where(take_lo, p.w[rows, arg_lo], 0) - w_hi
    dv = np.where(take_lo, p.v[rows, arg_lo], 0.0) - v_hi
    room, value = capacity - int(w_hi.sum()), float(v_hi.sum())
    cand = np.flatnonzero(dv > 0)
    eff = dv[cand] / np.maximum(dw[cand], 1e-300)
    for g in cand[np.argsort(-eff, kind="stable")].tolist():
        if dw[g] <= room:
            room -= int(dw[g])
            value += float(dv[g])
    return value


def fix(p: Padded, capacity: int) -> NDArray[np.bool_]:
    """Items that may be in an optimal solution (Lagrangian reduced-cost fixing).

    Forcing item i of group g gives the bound L(lam) - gain_g + (v_i - lam w_i);
    when that is below a known feasible value, no optimal solution holds i.
    Exact for any lam; the tolerance only keeps more items, never fewer.
    """
    keep = p.v > -np.inf
    # Values near the float range may overflow lam * w to inf; the comparison
    # below keeps such items, so the warnings carry no information.
    with np.errstate(over="ignore", invalid="ignore"):
        lam, bound, lower = _lagrange(p, capacity)
        _, _, gain = _select(p, lam)
        forced = bound - gain[:, None] + (p.v - lam * p.w)
        slack = TOLERANCE * (1.0 + abs(lower) + abs(bound))
    # Written as 'not provably useless' so that a NaN (inf - inf on values near
    # the float range) keeps the item instead of dropping it.
    return keep & ~(forced < lower - slack)
