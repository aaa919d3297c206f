"""Pisinger's minimal algorithm for the MCKP (method ``core``, the default).

1. Solve the LP relaxation on the groups' upper convex hulls
   (:mod:`scheduling_opt.mckp._hull`, O(m log m) in numpy). Every group
   takes its LP choice ``a_g``; one group ``r`` holds the fractional
   (break) increment, of efficiency ``lam``, the LP dual. The greedy
   completion of the LP is the first incumbent; when the LP bound does not
   exceed it, it is optimal and nothing else runs.
2. Reduce: item i of group g is useless when even the Lagrangian bound with
   i forced, ``z_LP + (v_i - v_a) - lam (w_i - w_a)``, cannot beat the
   incumbent. A group left with its LP choice only is fixed there.
3. Expand a core of groups around ``r`` by dynamic programming. The states
   are the core groups' total weights (a dense window of integers) with
   their best value; every group outside the core sits at its LP choice.
   Outside the core, ``lam_up`` is the steepest gradient by which a group can
   still gain weight (``max (v_j - v_a) / (w_j - w_a)`` over its heavier
   live items) and ``lam_down`` the gentlest by which one can lose it; a
   state of total weight ``mu`` and value ``pi`` can then reach at most
   ``pi + lam_up (C - mu)`` when ``mu <= C`` and ``pi + lam_down (C - mu)``
   otherwise (an exchange argument: ``lam_up <= lam <= lam_down``). States
   whose bound cannot beat the incumbent, states dominated by a lighter one
   and states that can no longer get under the capacity are dropped after
   every group. The next group is the one that defines ``lam_up`` or
   ``lam_down`` (groups sorted by those gradients, as Pisinger's two
   stacks), on the side whose best state bound is higher. The search stops
   when no state is left (the incumbent is optimal) or every group that can
   still move is in the core.

Claims: ``optimal`` only from that argument; with integer values a state
must be able to gain a whole unit, with real values more than the float
rounding of the sums (:func:`tolerance`), so ``optimal`` means optimal up to
that rounding, as the capacity DP's float sums. Stopped by the time limit,
it answers with the incumbent and the highest bound of a live state
(``time_limit``). When the core's rows would pass :data:`CORE_CELLS` (the
bounds do not close, as on a strongly correlated instance with no exact
fill), it hands over to the capacity DP, :func:`~scheduling_opt.mckp.dp`,
with the time left.

Complexity: O(m log m) for the LP, reduction and ordering, then
O(sum over core groups of k_g' * window) for the DP, where window is the
live state range; the core is usually a few groups (docs/mckp.md has the
measurements).

References
----------
D. Pisinger, "A minimal algorithm for the multiple-choice knapsack problem",
European Journal of Operational Research 83 (1995) 394-410.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field

import numpy as np

from scheduling_opt.mckp._hull import Relaxation, relax, segment_starts
from scheduling_opt.mckp.dp import dp
from scheduling_opt.mckp.greedy import best_single, greedy_choice
from scheduling_opt.mckp.model import FloatArray, IntArray, Mckp, MckpDecision, decision_of
from scheduling_opt.solution import Seed, Solution, Status, time_limit_of

#: DP cells (float64) the core keeps for reconstruction before it hands the
#: instance to the capacity DP: 2^22 cells, 32 MiB, as ``dp``'s own budget.
CORE_CELLS = 1 << 22

_NEG = -np.inf


def tolerance(n: int, scale: float) -> float:
    """The float rounding a sum of ``n`` values of total size ``scale`` may carry.

    Examples
    --------
    >>> tolerance(1000, 1e6) < 1e-5
    True
    """
    return max(1e-12, 4.0 * (n + 8) * 2.0**-52) * (1.0 + scale)


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
        checked before every item's pass over the state window; the LP and
        greedy before it (O(m log m)) always run.

    Returns
    -------
    Solution[MckpDecision]
        ``optimal`` (bound = objective) when proven; ``time_limit`` with the
        incumbent and the best live state bound otherwise.

    Raises
    ------
    InstanceTooLargeError
        Only through the hand-over to :func:`~scheduling_opt.mckp.dp` (its
        table limits), when the core's bounds do not close.

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
    lp = relax(inp)
    choice = greedy_choice(inp, lp)
    incumbent = decision_of(inp, choice)
    single = best_single(inp)
    if single is not None and single[0] > incumbent.value:
        choice = [None] * inp.n_groups
        choice[single[1]] = single[2]
        incumbent = decision_of(inp, choice)
    precision = Precision.of(inp, lp)
    open_bound = None
    if lp.broken and lp.value >= precision.threshold(incumbent.value):
        search = _Search.of(inp, lp, incumbent.value, precision)
        search.run(deadline)
        if search.handed_over:
            left = max(deadline - time.perf_counter(), 1e-3)
            return dp(inp, time_limit=left).with_(seconds=time.perf_counter() - start)
        if search.best is not None:
            choice = search.trace()
            incumbent = decision_of(inp, choice)
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


@dataclass(frozen=True, slots=True)
class Precision:
    """How much a bound must exceed an incumbent to keep a state or an item.

    With integer values (and sums exact in floats) a better solution is a
    whole unit better; otherwise better by more than the float rounding of
    the sums, :func:`tolerance` over the sum of the groups' top values and
    ``lam * C`` (every state value and bound is at most that).
    """

    tol: float
    integral: bool

    @classmethod
    def of(cls, inp: Mckp, lp: Relaxation) -> Precision:
        h = lp.hulls
        tops = h.v[h.start[1:][h.start[1:] > h.start[:-1]] - 1]
        scale = float(tops.sum()) + lp.lam * inp.capacity
        tol = tolerance(inp.n_groups, scale)
        values = inp.values[h.items[0]]
        integral = tol < 0.25 and scale < 2.0**50 and bool(np.all(values == np.floor(values)))
        return cls(tol, integral)

    def threshold(self, value: float) -> float:
        """A bound must reach this to beat an incumbent of ``value``."""
        return value + 1.0 - self.tol if self.integral else value + self.tol


@dataclass(slots=True)
class _Row:
    """One core step: the group added, its items, and the states after it."""

    group: int
    w: IntArray
    v: list[np.float64]
    item: list[int]
    lo: int
    f: FloatArray


@dataclass(slots=True)
class _Search:
    """The state of the core expansion (step 3 of the module docstring)."""

    inp: Mckp
    lam: float
    z: float
    precision: Precision
    value: float  # incumbent value
    # Candidate items by group (each group starts with "nothing", weight 0, item -1).
    cs: IntArray
    cw: IntArray
    cv: FloatArray
    citem: IntArray
    rc: FloatArray  # reduced costs against the LP choice
    # Per group: LP choice, gradients, lightest live weight.
    aw: IntArray
    av: FloatArray
    aitem: IntArray
    up: FloatArray
    down: FloatArray
    minw: IntArray
    order_up: list[int]
    order_down: list[int]
    first: int  # the break group
    rows: list[_Row] = field(default_factory=list)
    best: tuple[int, int, float] | None = None  # step, state weight, core value
    open_bound: float | None = None
    handed_over: bool = False

    @classmethod
    def of(cls, inp: Mckp, lp: Relaxation, value: float, precision: Precision) -> _Search:
        n = inp.n_groups
        h = lp.hulls
        idx, group = h.items
        # The candidates of every group, "nothing" (weight 0, value 0, item -1) first.
        cs = segment_starts(group, n) + np.arange(n + 1)
        real = np.arange(len(idx)) + group + 1
        cw = np.zeros(len(idx) + n, np.int64)
        cv = np.zeros(len(idx) + n)
        citem = np.full(len(idx) + n, -1, np.int64)
        cgroup = np.empty(len(idx) + n, np.int64)
        cw[real], cv[real] = inp.weights[idx], inp.values[idx]
        citem[real] = idx - inp.offsets[group]
        cgroup[real] = group
        cgroup[cs[:-1]] = np.arange(n)
        taken = lp.level > 0
        vertex = np.where(taken, h.start[:-1] + lp.level - 1, 0)
        if len(h.w):
            aw = np.where(taken, h.w[vertex], 0).astype(np.int64)
            av = np.where(taken, h.v[vertex], 0.0)
            aitem = np.where(taken, h.item[vertex] - inp.offsets[:-1], -1)
        else:
            aw, av, aitem = np.zeros(n, np.int64), np.zeros(n), np.full(n, -1, np.int64)
        dw = cw - aw[cgroup]
        dv = cv - av[cgroup]
        search = cls(
            inp,
            lp.lam,
            lp.value,
            precision,
            value,
            cs,
            cw,
            cv,
            citem,
            dv - lp.lam * dw,
            aw,
            av,
            aitem,
            np.zeros(0),
            np.zeros(0),
            np.zeros(0, np.int64),
            [],
            [],
            int(h.group[lp.brk]),
        )
        search._gradients(dw, dv)
        return search

    def threshold(self, value: float) -> float:
        """A state or item must reach this bound to beat an incumbent of ``value``."""
        return self.precision.threshold(value)

    def _gradients(self, dw: IntArray, dv: FloatArray) -> None:
        n = self.inp.n_groups
        live = self.z + self.rc >= self.threshold(self.value)
        heavier, lighter = live & (dw > 0), live & (dw < 0)
        with np.errstate(divide="ignore", invalid="ignore"):
            grad = dv / np.where(dw == 0, 1, dw)
        starts = self.cs[:-1]
        if n:
            self.up = np.maximum.reduceat(np.where(heavier, grad, _NEG), starts)
            self.down = np.minimum.reduceat(np.where(lighter, grad, np.inf), starts)
            self.minw = np.minimum.reduceat(np.where(live, self.cw, np.iinfo(np.int64).max), starts)
        ids = np.arange(n)
        can_up = np.flatnonzero((self.up > _NEG) & (ids != self.first))
        can_down = np.flatnonzero((self.down < np.inf) & (ids != self.first))
        self.order_up = can_up[np.lexsort((can_up, -self.up[can_up]))].tolist()
        self.order_down = can_down[np.lexsort((can_down, self.down[can_down]))].tolist()

    def run(self, deadline: float) -> None:
        """Expand the core until the incumbent is proven, or time or memory runs out."""
        inp, cap = self.inp, self.inp.capacity
        in_core = np.zeros(inp.n_groups, bool)
        w_out = int(self.aw.sum())  # weight and value of the groups outside the core
        v_out = float(self.av.sum())
        m_out = int(self.minw.sum())  # their lightest live total
        lo, f = 0, np.zeros(1)
        ups, downs = self.order_up, self.order_down
        pu = pd = 0
        g = self.first
        cells = 0
        last_top = self.z  # the best bound of a state of the last row
        tmp = np.empty(0)
        clock = time.perf_counter
        while True:
            theta = self.threshold(self.value)
            a, b = int(self.cs[g]), int(self.cs[g + 1])
            keep = np.flatnonzero(self.z + self.rc[a:b] >= theta) + a
            w, v = self.cw[keep], self.cv[keep]
            record = v > np.maximum.accumulate(np.concatenate([[_NEG], v[:-1]]))
            keep, w, v = keep[record], w[record], v[record]
            in_core[g] = True
            w_out -= int(self.aw[g])
            v_out -= float(self.av[g])
            m_out -= int(self.minw[g])
            while pu < len(ups) and in_core[ups[pu]]:
                pu += 1
            while pd < len(downs) and in_core[downs[pd]]:
                pd += 1
            lam_up = float(self.up[ups[pu]]) if pu < len(ups) else 0.0
            lam_down = float(self.down[downs[pd]]) if pd < len(downs) else math.inf
            hi = lo + len(f) - 1
            lo2 = lo + int(w[0])
            hi2 = min(hi + int(w[-1]), cap - m_out)
            if lo2 > hi2:
                self.open_bound = None
                return
            new = np.full(hi2 - lo2 + 1, _NEG)
            if len(tmp) < len(new):
                tmp = np.empty(2 * len(new))
            vs = list(v)
            for wj, vj in zip(w.tolist(), vs, strict=True):
                if clock() > deadline:
                    self.open_bound = last_top
                    return
                x, y = max(lo + wj, lo2), min(hi + wj, hi2)
                if x > y:
                    continue
                t = tmp[: y - x + 1]
                np.add(f[x - wj - lo : y - wj - lo + 1], vj, out=t)
                dst = new[x - lo2 : y - lo2 + 1]
                np.maximum(dst, t, out=dst)
            step = len(self.rows) + 1
            split = min(cap - w_out - lo2, len(new) - 1)  # states up to here fit
            if split >= 0:
                k = int(np.argmax(new[: split + 1]))
                if new[k] > _NEG and float(new[k]) + v_out > self.value:
                    self.value = float(new[k]) + v_out
                    self.best = (step, lo2 + k, float(new[k]))
                    theta = self.threshold(self.value)
            top_up, top_down = self._prune(new, lo2, split, w_out, v_out, lam_up, lam_down, theta)
            last_top = max(top_up, top_down)
            live = np.flatnonzero(new > _NEG)
            self.rows.append(_Row(g, w, vs, self.citem[keep].tolist(), lo2, new))
            if len(live) == 0:
                self.open_bound = None
                return
            lo, f = lo2 + int(live[0]), new[live[0] : live[-1] + 1]
            self.rows[-1].lo, self.rows[-1].f = lo, f
            cells += len(f)
            if cells > CORE_CELLS:
                self.handed_over = True
                return
            if pu == len(ups) and pd == len(downs):
                self.open_bound = None  # every group that can move is in the core
                return
            down_first = pd < len(downs) and (pu == len(ups) or top_down > top_up)
            g = downs[pd] if down_first else ups[pu]
            if clock() > deadline:
                self.open_bound = last_top
                return

    def _prune(
        self,
        f: FloatArray,
        lo: int,
        split: int,
        w_out: int,
        v_out: float,
        lam_up: float,
        lam_down: float,
        theta: float,
    ) -> tuple[float, float]:
        """Drop dominated and hopeless states in place; the best bound on each side."""
        cap = self.inp.capacity
        dead = np.zeros(len(f), bool)
        dead[1:] = f[1:] <= np.maximum.accumulate(f)[:-1]
        slack = cap - w_out - lo - np.arange(len(f), dtype=np.float64)
        ub = np.empty(len(f))
        s = max(split + 1, 0)
        np.add(f[:s] + v_out, lam_up * slack[:s], out=ub[:s])
        with np.errstate(invalid="ignore"):
            np.add(f[s:] + v_out, lam_down * slack[s:], out=ub[s:])
        ub[np.isnan(ub)] = _NEG
        dead |= ub < theta
        f[dead] = _NEG
        ub[dead] = _NEG
        top_up = float(ub[:s].max()) if s else _NEG
        top_down = float(ub[s:].max()) if s < len(f) else _NEG
        return top_up, top_down

    def trace(self) -> list[int | None]:
        """The incumbent state's choice: core groups traced back, the rest at the LP."""
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
            found = -1
            for j, (wj, vj) in enumerate(zip(row.w.tolist(), row.v, strict=True)):
                k = kappa - wj - prev_lo
                if 0 <= k < len(prev_f) and prev_f[k] + vj == target:
                    found = j
                    break
            if found < 0:
                raise AssertionError("core reconstruction lost its path")
            kappa -= int(row.w[found])
            item = row.item[found]
            choice[row.group] = None if item < 0 else item
        return choice
