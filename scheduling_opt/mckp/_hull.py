"""The MCKP's LP relaxation in numpy: upper convex hulls, increments, LP optimum.

The LP relaxation of the MCKP only uses each group's upper convex hull
through the empty choice (0, 0); it is solved by taking the hulls'
increments by decreasing efficiency until the capacity is reached, the
first increment that does not fit being the fractional one (Sinha and
Zoltners 1979; Pisinger 1995, §2). Everything here is vectorized over all
groups at once, for ``greedy`` and for the core algorithm of
:mod:`scheduling_opt.mckp.core`.

Complexity: O(m log m) for m items: one sort of the items within their
groups, at most :data:`PASSES` vectorized O(m) passes that drop the points
under their neighbours' chord, a plain monotone chain (O(k) per group) for
the rare group still changing after them, and one sort of the increments.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from scheduling_opt.mckp.model import FloatArray, IntArray, Mckp

#: Vectorized passes before the groups still changing finish in a monotone
#: chain: a pass drops every point under its neighbours' chord at once, and
#: random groups of 16 items settle in 3-5 passes; an adversarial group can
#: need one pass per item, which the chain does in O(k) instead.
PASSES = 12


@dataclass(frozen=True, slots=True)
class Hulls:
    """Every group's upper hull (strict vertices, no (0, 0)), flat, by group then weight.

    ``start[g]:start[g+1]`` are group g's vertices; ``item`` is a vertex's
    flat item index into the instance's arrays. ``dw``, ``dv`` and ``eff``
    describe the increment that ends at the vertex (from the previous vertex,
    or from (0, 0)); a zero-weight first vertex has efficiency inf.
    """

    group: IntArray
    item: IntArray
    w: IntArray
    v: FloatArray
    start: IntArray
    dw: IntArray
    dv: FloatArray
    eff: FloatArray
    #: :func:`sorted_items`, which the hulls were built from: (flat index, group).
    items: tuple[IntArray, IntArray]


def sorted_items(inp: Mckp) -> tuple[IntArray, IntArray]:
    """Useful items (value > 0, weight <= C), one per (group, weight): (flat index, group).

    Sorted by group, then weight; of the items of a group that weigh the
    same, the most valuable (then the first) stays, as in a sort by
    (weight, -value, index).
    """
    n, cap = inp.n_groups, inp.capacity
    w_all, v_all = inp.weights, inp.values
    idx = np.flatnonzero((v_all > 0) & (w_all <= cap))
    group = np.repeat(np.arange(n, dtype=np.int64), inp.sizes())[idx]
    if len(idx) == 0:
        return idx.astype(np.int64), group
    m = len(idx)
    if n * (cap + 1) * m < 2**62:
        # The position packed under the (group, weight) key: sorting the values
        # (no argsort, no stable merge) gives the stable order, ties by position.
        packed = np.sort((group * (cap + 1) + w_all[idx]) * m + np.arange(m))
        perm = packed % m
        key = packed // m
        idx, group = idx[perm], group[perm]
        new_run = np.ones(m, bool)
        np.not_equal(key[1:], key[:-1], out=new_run[1:])
        if new_run.all():  # no two items of a group weigh the same: every one stays
            return idx, group
        return _best_of_runs(idx, group, v_all[idx], new_run)
    w, v = w_all[idx], v_all[idx]
    if n * (cap + 1) < 2**62:
        # One integer key sorts faster than a lexsort; stable keeps index order.
        key = group * (cap + 1) + w
        if not np.all(key[1:] >= key[:-1]):  # groups often come sorted by weight
            perm = np.argsort(key, kind="stable")
            idx, group, w, v = idx[perm], group[perm], w[perm], v[perm]
    else:
        perm = np.lexsort((w, group))
        idx, group, w, v = idx[perm], group[perm], w[perm], v[perm]
    new_run = np.ones(len(idx), bool)
    new_run[1:] = (group[1:] != group[:-1]) | (w[1:] != w[:-1])
    return _best_of_runs(idx, group, v, new_run)


def _best_of_runs(
    idx: IntArray, group: IntArray, v: FloatArray, new_run: NDArray[np.bool_]
) -> tuple[IntArray, IntArray]:
    """Of each run of equal (group, weight) items, the most valuable, then the first.

    An item alone in its run stays; the choice runs over the items of longer
    runs only (usually a small part).
    """
    alone = new_run.copy()
    alone[:-1] &= new_run[1:]
    multi = np.flatnonzero(~alone)
    if len(multi) == 0:
        return idx, group
    starts = new_run[multi]
    run = np.cumsum(starts) - 1
    vm = v[multi]
    best = np.maximum.reduceat(vm, np.flatnonzero(starts))
    cand = np.flatnonzero(vm == best[run])
    first = np.ones(len(cand), bool)
    first[1:] = run[cand[1:]] != run[cand[:-1]]
    alone[multi[cand[first]]] = True
    return idx[alone], group[alone]


def segment_starts(group: IntArray, n: int) -> IntArray:
    """Offsets (n + 1) of the runs of a sorted group array (empty groups allowed)."""
    return np.searchsorted(group, np.arange(n + 1)).astype(np.int64)


def hulls(inp: Mckp) -> Hulls:
    """Every group's upper convex hull through (0, 0), vectorized.

    A point stays when it lies strictly above the chord of its neighbours
    (the same test, ``(v_i - v_p) (w_n - w_p) <= (v_n - v_p) (w_i - w_p)``
    drops it, as the monotone chain of :func:`~scheduling_opt.mckp.upper_hull`);
    a point under a chord of two points is under the hull, so dropping all
    such points at once and repeating leaves exactly the strict vertices.
    Each group ends at its lightest most valuable item.
    """
    n = inp.n_groups
    items = sorted_items(inp)
    idx, group = items
    w, v = inp.weights[idx], inp.values[idx]
    if len(idx):
        # Items heavier than the lightest most valuable one of their group are dominated.
        start = segment_starts(group, n)
        nonempty = np.flatnonzero(start[1:] > start[:-1])
        top = np.maximum.reduceat(v, start[nonempty])
        gtop = np.full(n, np.inf)
        gtop[nonempty] = top
        at_top = np.flatnonzero(v == gtop[group])
        first = np.ones(len(at_top), bool)
        first[1:] = group[at_top[1:]] != group[at_top[:-1]]
        last = np.full(n, -1, np.int64)
        last[group[at_top[first]]] = at_top[first]
        keep = np.arange(len(idx)) <= last[group]
        idx, group, w, v = idx[keep], group[keep], w[keep], v[keep]
    idx, group, w, v = _strict_vertices(idx, group, w, v)
    start = segment_starts(group, n)
    head = np.zeros(len(idx), bool)
    head[start[:-1][start[:-1] < start[1:]]] = True
    prev_w = np.where(head, 0, np.roll(w, 1))
    prev_v = np.where(head, 0.0, np.roll(v, 1))
    dw = w - prev_w
    dv = v - prev_v
    with np.errstate(divide="ignore"):
        eff = np.where(dw == 0, np.inf, dv / np.maximum(dw, 1))
    return Hulls(group, idx, w, v, start, dw, dv, eff, items)


def _reflex(group: IntArray, w: IntArray, v: FloatArray) -> NDArray[np.bool_]:
    """Points on or under the chord of their neighbours (the first and last of a group never)."""
    m = len(w)
    head = np.ones(m, bool)
    head[1:] = group[1:] != group[:-1]
    tail = np.ones(m, bool)
    tail[:-1] = group[1:] != group[:-1]
    inner: NDArray[np.bool_] = ~tail & ~(head & (w == 0))
    if not inner.any():
        return inner
    wf, vf = w.astype(np.float64), v
    wp = np.where(head, 0.0, np.roll(wf, 1))
    vp = np.where(head, 0.0, np.roll(vf, 1))
    wn, vn = np.roll(wf, -1), np.roll(vf, -1)
    with np.errstate(over="ignore", invalid="ignore"):
        left = (vf - vp) * (wn - wp)
        right = (vn - vp) * (wf - wp)
        out: NDArray[np.bool_] = left <= right
        # Products of huge values and weights overflow: compare the slopes then.
        bad = ~(np.isfinite(left) & np.isfinite(right))
        if bad.any():
            slope_in = (vf - vp) / np.maximum(wf - wp, 1.0)
            slope_out = (vn - vp) / np.maximum(wn - wp, 1.0)
            out = np.where(bad, slope_in <= slope_out, out)
    reflex: NDArray[np.bool_] = inner & out
    return reflex


def _strict_vertices(
    idx: IntArray, group: IntArray, w: IntArray, v: FloatArray
) -> tuple[IntArray, IntArray, IntArray, FloatArray]:
    for _ in range(PASSES):
        drop = _reflex(group, w, v)
        if not drop.any():
            return idx, group, w, v
        keep = ~drop
        idx, group, w, v = idx[keep], group[keep], w[keep], v[keep]
    # Groups still changing: finish each with a monotone chain.
    drop = _reflex(group, w, v)
    if not drop.any():
        return idx, group, w, v
    busy = np.zeros(int(group.max()) + 1, bool)
    busy[group[drop]] = True
    keep = ~busy[group]
    for g in np.flatnonzero(busy).tolist():
        at = np.flatnonzero(group == g)
        keep[at[_chain(w[at].tolist(), v[at].tolist())]] = True
    return idx[keep], group[keep], w[keep], v[keep]


def _chain(ws: list[int], vs: list[float]) -> list[int]:
    """Positions of the strict upper hull of one group's points (sorted, distinct weights)."""
    hull: list[tuple[int, float, int]] = [(0, 0.0, -1)]
    for i, (wi, vi) in enumerate(zip(ws, vs, strict=True)):
        if wi == 0:
            hull = [(0, vi, i)]
            continue
        while len(hull) >= 2:
            (w1, v1, _), (w2, v2, _) = hull[-2], hull[-1]
            if _under(w1, v1, w2, v2, wi, vi):
                hull.pop()
            else:
                break
        hull.append((wi, vi, i))
    return [i for _, _, i in hull if i >= 0]


def _under(w1: int, v1: float, w2: int, v2: float, w3: int, v3: float) -> bool:
    """Whether (w2, v2) lies on or under the chord from (w1, v1) to (w3, v3)."""
    left, right = (v2 - v1) * (w3 - w1), (v3 - v1) * (w2 - w1)
    if np.isfinite(left) and np.isfinite(right):
        return bool(left <= right)
    return bool((v2 - v1) / (w2 - w1) <= (v3 - v1) / (w3 - w1))


@dataclass(frozen=True, slots=True)
class Relaxation:
    """The LP relaxation solved on the hulls.

    Increments are taken by decreasing efficiency (ties: group, then
    position along the hull); ``brk`` is the hull vertex that ends the first
    increment that does not fit (the break increment; -1 when all fit),
    ``room`` the capacity left for it. ``level[g]``: how many of group g's
    vertices the LP takes whole (0: nothing). ``value`` is the LP optimum and
    ``lam`` the break increment's efficiency (the LP dual; 0 without a break).
    """

    hulls: Hulls
    brk: int
    room: int
    level: IntArray
    value: float
    lam: float

    @property
    def broken(self) -> bool:
        """Whether an increment does not fit (the LP optimum is fractional or tight)."""
        return self.brk >= 0

    def after(self) -> NDArray[np.bool_]:
        """Which hull vertices' increments come after the break's in LP order."""
        h = self.hulls
        later = np.arange(len(h.eff)) > self.brk
        mask: NDArray[np.bool_] = (h.eff < self.lam) | ((h.eff == self.lam) & later)
        return mask


#: Candidates below which the weighted selection of the break sorts them.
SELECT_SORT = 2048


def relax(inp: Mckp, h: Hulls | None = None) -> Relaxation:
    """The LP relaxation of ``inp`` (its hulls computed unless given).

    The break increment is found by a weighted selection (Pisinger's
    partitioning, here with numpy's median): halve the candidate
    efficiencies around their median until the break is among few of them,
    then sort those: O(m) expected, no sort of all the increments.
    """
    h = hulls(inp) if h is None else h
    cap = inp.capacity
    exact = inp.n_groups * (cap + 1) < 2**62  # every sum of increments fits in int64

    def total(ids: IntArray) -> int:
        return int(h.dw[ids].sum()) if exact else sum(h.dw[ids].tolist())

    n_vertices = len(h.eff)
    brk, room, lam = -1, cap, 0.0
    everything = np.arange(n_vertices)
    if total(everything) > cap:
        cand, above = everything, 0
        while len(cand) > SELECT_SORT:
            e = h.eff[cand]
            pivot = np.partition(e, len(e) // 2)[len(e) // 2]
            high = cand[e > pivot]
            w_high = total(high)
            if above + w_high > cap:
                cand = high
                continue
            ties = cand[e == pivot]
            if above + w_high + total(ties) > cap:
                above += w_high
                cand = ties
                break
            above += w_high + total(ties)
            cand = cand[e < pivot]
        ordered = cand[np.argsort(-h.eff[cand], kind="stable")]
        dws = h.dw[ordered].tolist()
        for j, dw in zip(ordered.tolist(), dws, strict=True):
            if above + dw > cap:
                brk, room = j, cap - above
                break
            above += dw
        lam = float(h.eff[brk])
    if brk >= 0:
        taken = (h.eff > lam) | ((h.eff == lam) & (everything < brk))
    else:
        taken = np.ones(n_vertices, bool)
    level = np.bincount(h.group[taken], minlength=inp.n_groups).astype(np.int64)
    value = float(h.dv[taken].sum())
    if brk >= 0:
        value += lam * room
    return Relaxation(h, brk, room, level, value, lam)
