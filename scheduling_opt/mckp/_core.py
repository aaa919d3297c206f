"""The core expansion of Pisinger's minimal algorithm (step 3 of :mod:`scheduling_opt.mckp.core`).

States are the core groups' total weights, a dense window of integers, with
their best value (-inf: no state); every group outside the core sits at its
LP choice. After every group the states whose bound cannot beat the
incumbent, or that a lighter state dominates, or that can no longer get
under the capacity are dropped, and the window is trimmed to the live ones.
Each group costs O(k' * window): one ``np.add`` and one ``np.maximum`` per
live item, as the capacity DP, plus O(window) for the bounds.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field

import numpy as np

from scheduling_opt.mckp._hull import Relaxation, segment_starts
from scheduling_opt.mckp.model import FloatArray, IntArray, Mckp

_NEG = -np.inf
_BIG = np.iinfo(np.int64).max

#: DP cells (float64) the core keeps for reconstruction before it hands the
#: instance to the capacity DP: 2^22 cells, 32 MiB, ``dp``'s own row budget.
CORE_CELLS = 1 << 22
#: Work (item passes over a state) the core may always spend, however small
#: the capacity DP's estimate.
HANDOVER_FLOOR = 200_000


#: What pruning a row costs, in item passes over it (about 14 numpy passes
#: against 2 per item), counted in the core's work against the hand-over budget.
PRUNE_WORK = 7


#: A pruning that drops less than this share of the states doubles the
#: interval to the next one, up to :data:`PRUNE_EVERY` groups.
PRUNE_GAIN = 0.05
PRUNE_EVERY = 8


def tolerance(n: int, scale: float) -> float:
    """The float rounding a sum of ``n`` values of total size ``scale`` may carry.

    Examples
    --------
    >>> tolerance(1000, 1e6) < 1e-5
    True
    """
    return max(1e-12, 4.0 * (n + 8) * 2.0**-52) * (1.0 + scale)


@dataclass(frozen=True, slots=True)
class Precision:
    """How much a bound must exceed an incumbent to keep a state or an item.

    With integer values (their sums exact in floats) a better solution is a
    whole unit better; otherwise better by more than the float rounding of
    the sums, :func:`tolerance` over three times the groups' top values: a
    state value is at most their sum T, and a bound ``pi + lam (C - mu)``
    matters only near the incumbent (at most T), so its term ``lam (C -
    mu)`` is then at most 2 T in size (``lam * C`` itself may overflow).
    """

    tol: float
    integral: bool

    @classmethod
    def of(cls, inp: Mckp, lp: Relaxation) -> Precision:
        h = lp.hulls
        tops = h.v[h.start[1:][h.start[1:] > h.start[:-1]] - 1]
        scale = 3.0 * float(tops.sum())
        tol = tolerance(inp.n_groups, scale)
        values = inp.values[h.items[0]]
        integral = tol < 0.25 and scale < 2.0**50 and bool(np.all(values == np.floor(values)))
        return cls(tol, integral)

    def threshold(self, value: float) -> float:
        """What a bound must reach to beat an incumbent of ``value``."""
        return value + 1.0 - self.tol if self.integral else value + self.tol


@dataclass(slots=True)
class _Row:
    """One core step: the group added, its live items, and the states after it."""

    group: int
    w: list[int]
    v: list[np.float64]  # numpy scalars: the exact additions of the forward pass
    item: list[int]
    lo: int
    f: FloatArray


@dataclass(frozen=True, slots=True)
class _Candidates:
    """Every group's useful items, "nothing" (weight 0, value 0, item -1) first, by weight.

    Group g's candidates are ``start[g]:start[g+1]``; ``rc`` is each one's
    reduced cost against its group's LP choice at the LP dual ``lam``.
    """

    start: IntArray
    w: IntArray
    v: FloatArray
    item: IntArray
    dw: IntArray
    dv: FloatArray
    rc: FloatArray

    @classmethod
    def of(cls, inp: Mckp, lp: Relaxation, aw: IntArray, av: FloatArray) -> _Candidates:
        n = inp.n_groups
        idx, group = lp.hulls.items
        start = segment_starts(group, n) + np.arange(n + 1)
        real = np.arange(len(idx)) + group + 1
        size = len(idx) + n
        w, v = np.zeros(size, np.int64), np.zeros(size)
        item, owner = np.full(size, -1, np.int64), np.empty(size, np.int64)
        w[real], v[real] = inp.weights[idx], inp.values[idx]
        item[real] = idx - inp.offsets[group]
        owner[real] = group
        owner[start[:-1]] = np.arange(n)
        dw, dv = w - aw[owner], v - av[owner]
        return cls(start, w, v, item, dw, dv, dv - lp.lam * dw)


def _dp_work(maxw: IntArray, count: IntArray, capacity: int) -> float:
    """Cell updates of the capacity DP over these groups (its windows, in index order)."""
    total = float(maxw.sum())
    cap = min(float(capacity), total)
    cum = np.cumsum(maxw.astype(np.float64))
    hi = np.minimum(cum, cap)
    lo = np.maximum(cap - (total - cum), 0.0)
    return float((count * (hi - lo + 1)).sum())


@dataclass(slots=True)
class CoreSearch:
    """The expansion, from the LP relaxation and an incumbent value."""

    inp: Mckp
    z: float  # the LP bound
    precision: Precision
    value: float  # the incumbent's value
    cand: _Candidates
    aw: IntArray  # per group its LP choice: weight, value, item (-1: nothing)
    av: FloatArray
    aitem: IntArray
    up: FloatArray  # per group its steepest gaining gradient (-inf: none)
    down: FloatArray  # its gentlest losing gradient (inf: none)
    minw: IntArray  # its lightest live weight
    by_up: list[int]  # the groups that can gain weight, steepest first
    by_down: list[int]  # the groups that can lose weight, gentlest first
    first: int  # the break group
    dp_work: float  # the capacity DP's work (cell updates), estimated
    count: IntArray  # per group its live items
    rows: list[_Row] = field(default_factory=list)
    best: tuple[int, int, float] | None = None  # step, core weight, core value
    open_bound: float | None = None  # the best bound of a live state when stopped or handed over
    handed_over: bool = False

    @classmethod
    def of(cls, inp: Mckp, lp: Relaxation, value: float, precision: Precision) -> CoreSearch:
        """Reduce the items and order the groups (step 2); ``lp`` must have a break."""
        n, h = inp.n_groups, lp.hulls
        taken = lp.level > 0
        vertex = np.where(taken, h.start[:-1] + lp.level - 1, 0)
        aw = np.where(taken, h.w[vertex], 0).astype(np.int64)
        av = np.where(taken, h.v[vertex], 0.0)
        aitem = np.where(taken, h.item[vertex] - inp.offsets[:-1], -1)
        cand = _Candidates.of(inp, lp, aw, av)
        live = lp.value + cand.rc >= precision.threshold(value)
        starts = cand.start[:-1]
        with np.errstate(divide="ignore", invalid="ignore"):
            grad = cand.dv / np.where(cand.dw == 0, 1, cand.dw)
        up = np.maximum.reduceat(np.where(live & (cand.dw > 0), grad, _NEG), starts)
        down = np.minimum.reduceat(np.where(live & (cand.dw < 0), grad, np.inf), starts)
        minw = np.minimum.reduceat(np.where(live, cand.w, _BIG), starts)
        maxw = np.maximum.reduceat(np.where(live, cand.w, 0), starts)
        count = np.add.reduceat((live & (cand.item >= 0)).astype(np.int64), starts)
        first = int(h.group[lp.brk])
        ids = np.arange(n)
        gains = np.flatnonzero((up > _NEG) & (ids != first))
        loses = np.flatnonzero((down < np.inf) & (ids != first))
        return cls(
            inp,
            lp.value,
            precision,
            value,
            cand,
            aw,
            av,
            aitem,
            up,
            down,
            minw,
            gains[np.lexsort((gains, -up[gains]))].tolist(),
            loses[np.lexsort((loses, down[loses]))].tolist(),
            first,
            _dp_work(maxw, count, inp.capacity),
            count,
        )

    def _items(self, g: int) -> tuple[list[int], list[np.float64], list[int]]:
        """Group g's items that can still beat the incumbent and no lighter one beats."""
        c = self.cand
        a, b = int(c.start[g]), int(c.start[g + 1])
        keep = np.flatnonzero(self.z + c.rc[a:b] >= self.precision.threshold(self.value)) + a
        v = c.v[keep]
        record = v > np.maximum.accumulate(np.concatenate([[_NEG], v[:-1]]))
        keep = keep[record]
        return c.w[keep].tolist(), list(c.v[keep]), c.item[keep].tolist()

    def run(self, deadline: float) -> None:
        """Expand the core until the incumbent is proven, or time or work runs out."""
        cap = self.inp.capacity
        in_core = np.zeros(self.inp.n_groups, bool)
        # Weight and value of the groups outside the core, and their lightest live total.
        w_out, v_out, m_out = int(self.aw.sum()), float(self.av.sum()), int(self.minw.sum())
        lo, f = 0, np.zeros(1)
        ups, downs = self.by_up, self.by_down
        pu = pd = 0
        g = self.first
        cells, work = 0, 0.0
        # The items and groups still outside the core that can move.
        movable = np.zeros(self.inp.n_groups, bool)
        movable[ups + downs] = True
        left_groups = int(movable.sum())
        left_items = int(self.count[movable].sum())
        last_top = self.z  # the best bound of a live state so far
        top_up = top_down = self.z
        every = 1  # prune every this many groups
        rest = 0  # groups before the next pruning
        tmp = np.empty(0)
        clock = time.perf_counter
        while True:
            if self.z < self.precision.threshold(self.value):
                self.open_bound = None  # the incumbent meets the LP bound
                return
            w, v, item = self._items(g)
            if movable[g]:
                left_groups -= 1
                left_items -= int(self.count[g])
            in_core[g] = True
            w_out -= int(self.aw[g])
            v_out -= float(self.av[g])
            m_out -= int(self.minw[g])
            while pu < len(ups) and in_core[ups[pu]]:
                pu += 1
            while pd < len(downs) and in_core[downs[pd]]:
                pd += 1
            hi = lo + len(f) - 1
            lo2, hi2 = lo + w[0], min(hi + w[-1], cap - m_out)
            if lo2 > hi2:  # no state can get under the capacity any more
                self.open_bound = None
                return
            if hi2 - lo2 + 1 > CORE_CELLS:  # huge weights: a row this wide is no use
                self.handed_over = True
                self.open_bound = last_top
                return
            new = np.full(hi2 - lo2 + 1, _NEG)
            if len(tmp) < len(new):
                tmp = np.empty(2 * len(new))
            for wj, vj in zip(w, v, strict=True):
                if clock() > deadline:
                    self.open_bound = last_top
                    return
                x, y = max(lo + wj, lo2), min(hi + wj, hi2)
                if x <= y:
                    t = tmp[: y - x + 1]
                    np.add(f[x - wj - lo : y - wj - lo + 1], vj, out=t)
                    dst = new[x - lo2 : y - lo2 + 1]
                    np.maximum(dst, t, out=dst)
                    work += y - x + 1
            fit = min(cap - w_out - lo2, len(new) - 1)  # the states up to here fit
            if fit >= 0:
                k = int(np.argmax(new[: fit + 1]))
                if new[k] > _NEG and float(new[k]) + v_out > self.value:
                    self.value = float(new[k]) + v_out
                    self.best = (len(self.rows) + 1, lo2 + k, float(new[k]))
            if rest > 0:  # the last prunings dropped little: skip this one
                rest -= 1
                lo, f = lo2, new
                self.rows.append(_Row(g, w, v, item, lo, f))
            else:
                lam_up = float(self.up[ups[pu]]) if pu < len(ups) else 0.0
                lam_down = float(self.down[downs[pd]]) if pd < len(downs) else math.inf
                top_up, top_down, a, b = self._prune(new, lo2, fit, w_out, v_out, lam_up, lam_down)
                work += PRUNE_WORK * len(new)
                lo, f = (lo2 + a, new[a : b + 1]) if a >= 0 else (lo2, new[:0])
                self.rows.append(_Row(g, w, v, item, lo, f))
                if a < 0:
                    self.open_bound = None
                    return
                # Pruning that keeps nearly everything is done ever more rarely.
                every = 1 if len(f) < (1 - PRUNE_GAIN) * len(new) else min(2 * every, PRUNE_EVERY)
                rest = every - 1
                last_top = max(top_up, top_down)
            cells += len(f)
            if pu == len(ups) and pd == len(downs):
                self.open_bound = None  # every group that can move is in the core
                return
            # Hand over when finishing here looks dearer than the whole DP: at
            # worst the work spent so far, under the DP's own, is lost.
            ahead = (left_items + PRUNE_WORK * left_groups) * len(f)
            if cells > CORE_CELLS or (work > HANDOVER_FLOOR and work + ahead > self.dp_work):
                self.handed_over = True
                self.open_bound = last_top
                return
            if clock() > deadline:
                self.open_bound = last_top
                return
            down_first = pd < len(downs) and (pu == len(ups) or top_down > top_up)
            g = downs[pd] if down_first else ups[pu]

    def _prune(
        self,
        f: FloatArray,
        lo: int,
        fit: int,
        w_out: int,
        v_out: float,
        lam_up: float,
        lam_down: float,
    ) -> tuple[float, float, int, int]:
        """Drop dominated and hopeless states in place.

        A state of core weight ``lo + i`` has total weight ``mu = lo + i +
        w_out`` and value ``f[i] + v_out``; its bound uses ``lam_up`` when
        ``mu <= C`` (``i <= fit``) and ``lam_down`` above. Returns the best
        live bound on each side and the first and last live states (-1, -1
        when none is left).
        """
        m, s = len(f), max(fit + 1, 0)
        slack = float(self.inp.capacity - w_out - lo) - np.arange(m, dtype=np.float64)
        ub = np.empty(m)
        for part, lam in ((slice(0, s), lam_up), (slice(s, m), lam_down)):
            if lam == math.inf:  # nothing outside the core can lose weight
                ub[part] = _NEG
                continue
            # Huge gradients overflow to +inf (state kept) or -inf (state far
            # above C: its true bound is below 0, under any incumbent).
            with np.errstate(over="ignore", invalid="ignore"):
                np.multiply(slack[part], lam, out=ub[part])
                ub[part] += v_out
                ub[part] += f[part]
        dead = ~(ub >= self.precision.threshold(self.value))  # NaN (inf - inf): no state
        dead[1:] |= f[1:] <= np.maximum.accumulate(f)[:-1]
        np.copyto(f, _NEG, where=dead)
        alive = ~dead
        first = int(np.argmax(alive))
        if not alive[first]:
            return _NEG, _NEG, -1, -1
        last = m - 1 - int(np.argmax(alive[::-1]))
        top_up = float(np.max(ub[:s], where=alive[:s], initial=_NEG))
        top_down = float(np.max(ub[s:], where=alive[s:], initial=_NEG))
        return top_up, top_down, first, last

    def trace(self) -> list[int | None]:
        """The incumbent state's choice: the core groups traced back, the rest at the LP."""
        assert self.best is not None
        step, kappa, target = self.best
        choice: list[int | None] = [None if i < 0 else i for i in self.aitem.tolist()]
        for t in range(step, 0, -1):
            row = self.rows[t - 1]
            prev_lo, prev_f = (
                (0, np.zeros(1)) if t == 1 else (self.rows[t - 2].lo, self.rows[t - 2].f)
            )
            if t < step:
                target = float(row.f[kappa - row.lo])
            # The forward pass's own float additions, redone: equality is exact.
            found = next(
                (
                    j
                    for j, (wj, vj) in enumerate(zip(row.w, row.v, strict=True))
                    if 0 <= kappa - wj - prev_lo < len(prev_f)
                    and prev_f[kappa - wj - prev_lo] + vj == target
                ),
                -1,
            )
            if found < 0:
                raise AssertionError("core reconstruction lost its path")
            kappa -= row.w[found]
            choice[row.group] = None if row.item[found] < 0 else row.item[found]
        return choice
