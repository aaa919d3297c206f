"""Multiple-choice knapsack (MCKP): the exact core shared by the allocation solvers.

Items come in groups; pick at most one item per group so that the total
(integer, >= 0) weight stays within the capacity and the total (real) value is
largest. Aryl §5.2 and Appendix D (Algorithm 2, ``MaxValueDP``) solve its
phase two with it; ONES' exact baseline and AntMan's memory split reuse it.

Methods: ``dp`` (exact dynamic program over capacity, numpy-vectorized),
``exact`` (MILP, HiGHS via scipy), ``exact-pulp`` (the same model written
independently in PuLP/CBC), ``exact-cpsat`` (CP-SAT on values scaled to
integers) and ``greedy`` (the LP-relaxation heuristic on each group's upper
convex hull).

Library API (what a scheduler, ONES or AntMan call directly):

- :class:`Mckp` -- the immutable instance as flat numpy arrays
  (``weights``, ``values``, ``offsets`` with group ``g`` = items
  ``offsets[g]:offsets[g+1]``, ``capacity``). Build it with
  :meth:`Mckp.from_groups` (lists of ``(weight, value)`` pairs) or
  :meth:`Mckp.from_arrays` (one weight array and one value array per group).
- :func:`solve_dp`, :func:`solve_greedy`, :func:`solve_highs`,
  :func:`solve_cbc`, :func:`solve_cpsat_model` -- each takes an :class:`Mckp`
  (or the groups and a capacity) and returns an :class:`MckpSolution`:
  ``choice`` (per group the chosen item index, or None), ``objective``,
  ``weight``, ``status``, ``seconds``.
- :func:`evaluate` (value and weight of a choice), :func:`upper_hull`
  (a group's LP-undominated items), :func:`lp_bound` (the LP relaxation's
  value), :func:`check_mckp` (the independent checker).

Complexity: ``dp`` is O(m log m + sum_g k_g' * window_g) time, where m is
the item count, k_g' the items of group g that survive the exact reductions
(dominance, Lagrangian reduced-cost fixing), C' = min(C, total useful weight)
and window_g <= C' the capacities group g can still influence. Memory is
O(C' + min(sum_g window_g, DP_MEMORY / 8)) floats: DP rows are kept for
reconstruction up to :data:`DP_MEMORY` bytes, beyond that one row per block
is checkpointed and blocks are recomputed backwards (at most one extra pass);
never an n x C table of Python objects. ``greedy`` is O(m log m). The MILPs
are exponential in the worst case.
"""

from __future__ import annotations

import math
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from scheduling_opt import exact as backends
from scheduling_opt.errors import InvalidInstanceError, VerificationError
from scheduling_opt.instance import FORMAT, Instance, from_dict
from scheduling_opt.jsonpath import check_keys, read_array, read_int, read_number, read_object
from scheduling_opt.result import Result, SolveOptions, Status
from scheduling_opt.solvers.registry import Method, Problem

IntArray = NDArray[np.int64]
FloatArray = NDArray[np.float64]

#: Relative tolerance of value comparisons (checker, reduced-cost fixing).
TOLERANCE = 1e-9


# --------------------------------------------------------------------------- the instance


@dataclass(frozen=True, slots=True, eq=False)
class Mckp:
    """An MCKP instance as flat read-only arrays (see the module docstring)."""

    capacity: int
    weights: IntArray
    values: FloatArray
    offsets: IntArray

    def __post_init__(self) -> None:
        if isinstance(self.capacity, bool) or not isinstance(self.capacity, (int, np.integer)):
            raise InvalidInstanceError("capacity", f"must be an integer, got {self.capacity!r}")
        if self.capacity < 0:
            raise InvalidInstanceError("capacity", f"must be >= 0, got {self.capacity}")
        object.__setattr__(self, "capacity", int(self.capacity))
        w = np.array(self.weights, dtype=np.int64).reshape(-1)
        v = np.array(self.values, dtype=np.float64).reshape(-1)
        off = np.array(self.offsets, dtype=np.int64).reshape(-1)
        if len(off) == 0 or off[0] != 0 or off[-1] != len(w) or len(w) != len(v):
            raise InvalidInstanceError("offsets", "must run from 0 to the item count")
        if np.any(np.diff(off) < 0):
            raise InvalidInstanceError("offsets", "must be non-decreasing")
        self._check_items(w, v, off)
        for a in (w, v, off):
            a.setflags(write=False)
        object.__setattr__(self, "weights", w)
        object.__setattr__(self, "values", v)
        object.__setattr__(self, "offsets", off)

    @staticmethod
    def _check_items(w: IntArray, v: FloatArray, off: IntArray) -> None:
        bad = np.flatnonzero((w < 0) | ~np.isfinite(v))
        if len(bad):
            i = int(bad[0])
            g = int(np.searchsorted(off, i, side="right")) - 1
            path = f"groups[{g}][{i - int(off[g])}]"
            if w[i] < 0:
                raise InvalidInstanceError(f"{path}.weight", f"must be >= 0, got {int(w[i])}")
            raise InvalidInstanceError(f"{path}.value", f"must be finite, got {float(v[i])!r}")

    @classmethod
    def from_groups(cls, groups: Iterable[Iterable[tuple[int, float]]], capacity: int) -> Mckp:
        """From ``[[(weight, value), ...], ...]`` (plain Python items)."""
        weights: list[int] = []
        values: list[float] = []
        offsets = [0]
        for g, group in enumerate(groups):
            for i, (w, v) in enumerate(group):
                if isinstance(w, bool) or not isinstance(w, (int, np.integer)):
                    raise InvalidInstanceError(
                        f"groups[{g}][{i}].weight", f"must be an integer, got {w!r}"
                    )
                weights.append(int(w))
                values.append(float(v))
            offsets.append(len(weights))
        return cls(capacity, np.array(weights, np.int64), np.array(values), np.array(offsets))

    @classmethod
    def from_arrays(
        cls, weights: Sequence[ArrayLike], values: Sequence[ArrayLike], capacity: int
    ) -> Mckp:
        """From one weight array and one value array per group."""
        if len(weights) != len(values):
            raise InvalidInstanceError("groups", "need one value array per weight array")
        ws = [np.asarray(w).reshape(-1) for w in weights]
        vs = [np.asarray(v, dtype=np.float64).reshape(-1) for v in values]
        for g, (w, v) in enumerate(zip(ws, vs, strict=True)):
            if len(w) != len(v):
                raise InvalidInstanceError(f"groups[{g}]", "weights and values differ in length")
            if len(w) and not np.issubdtype(w.dtype, np.integer):
                raise InvalidInstanceError(f"groups[{g}]", "weights must be integers")
        offsets = np.zeros(len(ws) + 1, np.int64)
        offsets[1:] = np.cumsum([len(w) for w in ws])
        flat_w = np.concatenate(ws).astype(np.int64) if ws else np.zeros(0, np.int64)
        flat_v = np.concatenate(vs) if vs else np.zeros(0)
        return cls(capacity, flat_w, flat_v, offsets)

    @property
    def n_groups(self) -> int:
        return len(self.offsets) - 1

    def group(self, g: int) -> tuple[IntArray, FloatArray]:
        """Weights and values of group ``g``."""
        a, b = int(self.offsets[g]), int(self.offsets[g + 1])
        return self.weights[a:b], self.values[a:b]

    def sizes(self) -> IntArray:
        return np.diff(self.offsets)

    def with_capacity(self, capacity: int) -> Mckp:
        return Mckp(capacity, self.weights, self.values, self.offsets)

    def to_data(self) -> dict[str, Any]:
        """The ``capacity`` and ``groups`` sections of an instance file."""
        return {
            "capacity": self.capacity,
            "groups": [
                [
                    {"weight": int(w), "value": _json_num(float(v))}
                    for w, v in zip(*self.group(g), strict=True)
                ]
                for g in range(self.n_groups)
            ],
        }


def _json_num(x: float) -> float | int:
    return int(x) if x.is_integer() and abs(x) < 2**53 else x


GroupsLike = Mckp | Sequence[Sequence[tuple[int, float]]]


def as_mckp(groups: GroupsLike, capacity: int | None = None) -> Mckp:
    """An :class:`Mckp` from an instance (``capacity`` overrides) or plain groups."""
    if isinstance(groups, Mckp):
        return (
            groups
            if capacity is None or capacity == groups.capacity
            else groups.with_capacity(capacity)
        )
    if capacity is None:
        raise InvalidInstanceError("capacity", "missing (plain groups need a capacity)")
    return Mckp.from_groups(groups, capacity)


# --------------------------------------------------------------------------- the result


@dataclass(frozen=True, slots=True)
class MckpSolution:
    """A choice per group (item index or None) with its value and weight."""

    choice: tuple[int | None, ...]
    objective: float
    weight: int
    status: Status
    seconds: float
    method: str = ""

    def decision(self) -> dict[str, Any]:
        return {"choice": list(self.choice), "objective": self.objective, "weight": self.weight}


def evaluate(problem: Mckp, choice: Sequence[int | None]) -> tuple[float, int]:
    """Total value and weight of ``choice`` (no feasibility check)."""
    idx = [int(problem.offsets[g]) + i for g, i in enumerate(choice) if i is not None]
    return float(problem.values[idx].sum()), int(problem.weights[idx].sum())


def _solution(
    problem: Mckp, choice: Sequence[int | None], status: Status, start: float, method: str
) -> MckpSolution:
    value, weight = evaluate(problem, choice)
    return MckpSolution(tuple(choice), value, weight, status, time.perf_counter() - start, method)


# --------------------------------------------------------------------------- exact reductions


@dataclass(frozen=True, slots=True)
class _Padded:
    """Groups as (n, k) arrays; columns sorted by weight; dropped items have value -inf."""

    w: IntArray
    v: FloatArray
    index: IntArray  # original item index within its group


def _pad(problem: Mckp) -> _Padded:
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
    return _Padded(w, v, order)


def _select(p: _Padded, lam: float) -> tuple[NDArray[np.bool_], IntArray, FloatArray]:
    """Per group the item maximizing ``v - lam * w`` (lightest on ties) if positive."""
    score = p.v - lam * p.w
    arg = np.argmax(score, axis=1)
    best = np.take_along_axis(score, arg[:, None], 1)[:, 0]
    return best > 0, arg, np.maximum(best, 0.0)


def _lagrange(p: _Padded, capacity: int) -> tuple[float, float, float]:
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


def _val(p: _Padded, sel: tuple[int, float, FloatArray, IntArray, NDArray[np.bool_]]) -> float:
    return float(p.v[np.arange(len(p.w)), sel[3]][sel[4]].sum())


def _upgrade(
    p: _Padded,
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


def _fix(p: _Padded, capacity: int) -> NDArray[np.bool_]:
    """Items that may be in an optimal solution (Lagrangian reduced-cost fixing).

    Forcing item i of group g gives the bound L(lam) - gain_g + (v_i - lam w_i);
    when that is below a known feasible value, no optimal solution holds i.
    Exact for any lam; the tolerance only keeps more items, never fewer.
    """
    keep = p.v > -np.inf
    lam, bound, lower = _lagrange(p, capacity)
    _, _, gain = _select(p, lam)
    forced = bound - gain[:, None] + (p.v - lam * p.w)
    slack = TOLERANCE * (1.0 + abs(lower) + abs(bound))
    return keep & (forced >= lower - slack)


# --------------------------------------------------------------------------- dp


def solve_dp(groups: GroupsLike, capacity: int | None = None) -> MckpSolution:
    """Exact MCKP by dynamic programming over capacity (method ``dp``).

    f_g[c] = max(f_{g-1}[c], max_i f_{g-1}[c - w_i] + v_i), one numpy pass per
    surviving item over the window of capacities that can still matter.
    Ties prefer choosing nothing, then the lighter item.
    """
    start = time.perf_counter()
    problem = as_mckp(groups, capacity)
    n = problem.n_groups
    if n == 0 or len(problem.weights) == 0:
        return _solution(problem, [None] * n, Status.OPTIMAL, start, "dp")
    p = _pad(problem)
    keep = _fix(p, problem.capacity)
    choice = _dp(p, keep, problem.capacity)
    return _solution(problem, choice, Status.OPTIMAL, start, "dp")


def _windows(maxw: IntArray, capacity: int) -> tuple[int, list[int], list[int]]:
    """Useful capacity C' and per group the capacity range [lo, hi] it can affect.

    After group k only capacities up to the groups' total weight so far are
    distinct (hi), and only those from which the remaining groups can still
    reach C' matter (lo).
    """
    cap = int(min(capacity, int(maxw.sum())))
    hi = np.minimum(np.cumsum(maxw), cap)
    lo = np.maximum(cap - (maxw.sum() - np.cumsum(maxw)), 0)
    return cap, lo.tolist(), hi.tolist()


#: Bytes of DP rows ``dp`` keeps for reconstruction before it switches to
#: checkpoints (keeping one row per block and recomputing blocks backwards).
DP_MEMORY = 1 << 25

Row = tuple[int, int, FloatArray]  # lo, hi, f[lo..hi]; f(c) = f(hi) above hi


@dataclass(frozen=True, slots=True)
class _Plan:
    groups: list[int]  # active groups, in DP order
    lo: list[int]
    hi: list[int]
    first: list[int]  # items of active group k: first[k]..first[k+1]-1
    w: list[int]
    v: list[np.float64]  # numpy scalars: faster in ufunc calls than floats
    cap: int


def _plan(p: _Padded, keep: NDArray[np.bool_], capacity: int) -> tuple[_Plan, IntArray, IntArray]:
    rows, cols = np.nonzero(keep)
    counts = np.bincount(rows, minlength=len(p.w))
    active = np.flatnonzero(counts > 0)
    maxw = np.where(keep, p.w, 0).max(axis=1)[active]
    cap, lo, hi = _windows(maxw, capacity)
    first = np.concatenate([[0], np.cumsum(counts[active])]).tolist()
    plan = _Plan(
        active.tolist(), lo, hi, first, p.w[rows, cols].tolist(), list(p.v[rows, cols]), cap
    )
    return plan, rows, cols


def _sweep(plan: _Plan, k0: int, k1: int, start: Row, store: FloatArray | None) -> Row:
    """Rows of groups k0..k1-1 from the row before k0; windows go to ``store``."""
    cap = plan.cap
    prev, cur, tmp = np.empty(cap + 1), np.empty(cap + 1), np.empty(cap + 1)
    lo0, hi_prev, row0 = start
    prev[lo0 : hi_prev + 1] = row0
    at = 0
    w, v, first = plan.w, plan.v, plan.first
    for k in range(k0, k1):
        lo, hi = plan.lo[k], plan.hi[k]
        if hi > hi_prev:
            prev[hi_prev + 1 : hi + 1] = prev[hi_prev]
        dst_all = cur[lo : hi + 1]
        np.copyto(dst_all, prev[lo : hi + 1])
        for j in range(first[k], first[k + 1]):
            a = max(lo, w[j])
            if a > hi:
                continue
            t, dst = tmp[: hi + 1 - a], cur[a : hi + 1]
            np.add(prev[a - w[j] : hi + 1 - w[j]], v[j], out=t)
            np.maximum(dst, t, out=dst)
        if store is not None:
            store[at : at + hi + 1 - lo] = dst_all
            at += hi + 1 - lo
        prev, cur, hi_prev = cur, prev, hi
    lo_last = plan.lo[k1 - 1]
    return lo_last, hi_prev, prev[lo_last : hi_prev + 1].copy()


def _value(row: Row, c: int) -> float:
    lo, hi, f = row
    return float(f[min(c, hi) - lo])


def _trace(
    plan: _Plan, k0: int, k1: int, start: Row, store: FloatArray, c: int
) -> tuple[list[int], int]:
    """Back through groups k1-1..k0 from capacity c: the chosen item (or -1) of each."""
    offsets = [0]
    for k in range(k0, k1):
        offsets.append(offsets[-1] + plan.hi[k] + 1 - plan.lo[k])
    picked: list[int] = []

    def row(k: int) -> Row:
        if k < k0:
            return start
        i = k - k0
        return plan.lo[k], plan.hi[k], store[offsets[i] : offsets[i + 1]]

    for k in range(k1 - 1, k0 - 1, -1):
        c = min(c, plan.hi[k])
        target, before = _value(row(k), c), row(k - 1)
        j_found = -1
        if _value(before, c) != target:
            for j in range(plan.first[k], plan.first[k + 1]):
                wj = plan.w[j]
                if wj <= c and _value(before, c - wj) + plan.v[j] == target:
                    j_found = j
                    break
            if j_found < 0:
                raise AssertionError("dp reconstruction lost its path")
            c -= plan.w[j_found]
        picked.append(j_found)
    return picked, c


def _blocks(plan: _Plan, budget: int) -> list[tuple[int, int]]:
    blocks, k0, used = [], 0, 0
    for k in range(len(plan.groups)):
        size = 8 * (plan.hi[k] + 1 - plan.lo[k])
        if used and used + size > budget:
            blocks.append((k0, k))
            k0, used = k, 0
        used += size
    blocks.append((k0, len(plan.groups)))
    return blocks


def _dp(
    p: _Padded, keep: NDArray[np.bool_], capacity: int, budget: int = DP_MEMORY
) -> list[int | None]:
    n = len(p.w)
    choice: list[int | None] = [None] * n
    plan, _, cols = _plan(p, keep, capacity)
    if not plan.groups:
        return choice
    blocks = _blocks(plan, budget)
    starts: list[Row] = [(0, 0, np.zeros(1))]
    store = np.empty(0)
    for b, (k0, k1) in enumerate(blocks):
        size = sum(plan.hi[k] + 1 - plan.lo[k] for k in range(k0, k1))
        store = np.empty(size) if b == len(blocks) - 1 else np.empty(0)
        last = _sweep(plan, k0, k1, starts[-1], store if b == len(blocks) - 1 else None)
        starts.append(last)
    c = plan.cap
    for b in range(len(blocks) - 1, -1, -1):
        k0, k1 = blocks[b]
        if b < len(blocks) - 1:
            store = np.empty(0)  # release the later block's rows first
            store = np.empty(sum(plan.hi[k] + 1 - plan.lo[k] for k in range(k0, k1)))
            _sweep(plan, k0, k1, starts[b], store)
        picked, c = _trace(plan, k0, k1, starts[b], store, c)
        for k, j in zip(range(k1 - 1, k0 - 1, -1), picked, strict=True):
            if j >= 0:
                g = plan.groups[k]
                choice[g] = int(p.index[g, int(cols[j])])
    return choice


# --------------------------------------------------------------------------- greedy / LP


def upper_hull(weights: ArrayLike, values: ArrayLike) -> list[int]:
    """Indices of a group's LP-undominated items, by increasing weight.

    The upper convex hull of the items and the empty choice (0, 0): the items
    an LP relaxation may use. Incremental efficiencies along it decrease.
    """
    w = np.asarray(weights, np.int64)
    v = np.asarray(values, np.float64)
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


def _increments(problem: Mckp) -> tuple[list[tuple[float, int, int]], list[list[int]]]:
    steps: list[tuple[float, int, int]] = []
    hulls: list[list[int]] = []
    cap = problem.capacity
    for g in range(problem.n_groups):
        w, v = problem.group(g)
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


def solve_greedy(groups: GroupsLike, capacity: int | None = None) -> MckpSolution:
    """The LP-relaxation greedy (method ``greedy``), a heuristic.

    Walk all groups' hull increments by decreasing efficiency; take an
    increment when it is its group's next one and fits, else freeze that
    group; keep scanning after the first misfit. Finally compare with the
    best single item, which bounds the greedy's loss (as in the 0-1 case).
    """
    start = time.perf_counter()
    problem = as_mckp(groups, capacity)
    steps, hulls = _increments(problem)
    level = [0] * problem.n_groups
    frozen = [False] * problem.n_groups
    room = problem.capacity
    for _, g, s in steps:
        if frozen[g] or level[g] != s:
            continue
        w, _ = problem.group(g)
        dw = int(w[hulls[g][s]]) - (int(w[hulls[g][s - 1]]) if s else 0)
        if dw <= room:
            room -= dw
            level[g] = s + 1
        else:
            frozen[g] = True
    choice: list[int | None] = [hulls[g][lv - 1] if lv else None for g, lv in enumerate(level)]
    value, _ = evaluate(problem, choice)
    single = _best_single(problem)
    if single is not None and single[0] > value:
        choice = [None] * problem.n_groups
        choice[single[1]] = single[2]
    return _solution(problem, choice, Status.FEASIBLE, start, "greedy")


def _best_single(problem: Mckp) -> tuple[float, int, int] | None:
    ok = np.flatnonzero((problem.weights <= problem.capacity) & (problem.values > 0))
    if len(ok) == 0:
        return None
    i = int(ok[np.argmax(problem.values[ok])])
    g = int(np.searchsorted(problem.offsets, i, side="right")) - 1
    return float(problem.values[i]), g, i - int(problem.offsets[g])


def lp_bound(groups: GroupsLike, capacity: int | None = None) -> float:
    """The optimum of the LP relaxation (an upper bound on the MCKP optimum)."""
    problem = as_mckp(groups, capacity)
    steps, hulls = _increments(problem)
    room, total = float(problem.capacity), 0.0
    level = [0] * problem.n_groups
    for eff, g, s in steps:
        if level[g] != s:
            continue
        w, v = problem.group(g)
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


# --------------------------------------------------------------------------- exact MILPs


def _assignment(problem: Mckp, x: Sequence[float] | FloatArray) -> list[int | None]:
    choice: list[int | None] = [None] * problem.n_groups
    for g in range(problem.n_groups):
        a, b = int(problem.offsets[g]), int(problem.offsets[g + 1])
        picked = [i for i in range(a, b) if x[i] > 0.5]
        if picked:
            choice[g] = picked[0] - a
    return choice


def _from_backend(
    problem: Mckp, status: Status, x: Sequence[float] | FloatArray | None, start: float, method: str
) -> MckpSolution:
    if x is None:
        choice: list[int | None] = [None] * problem.n_groups
        status = Status.TIME_LIMIT if status == Status.OPTIMAL else status
    else:
        choice = _assignment(problem, x)
    return _solution(problem, choice, status, start, method)


def solve_highs(
    groups: GroupsLike, capacity: int | None = None, *, time_limit: float = 60.0
) -> MckpSolution:
    """Exact MILP with HiGHS (method ``exact``): binary x_i, one row per group."""
    from scipy.optimize import LinearConstraint
    from scipy.sparse import csr_array

    start = time.perf_counter()
    problem = as_mckp(groups, capacity)
    m, n = len(problem.weights), problem.n_groups
    if m == 0:
        return _solution(problem, [None] * n, Status.OPTIMAL, start, "exact")
    group_of = np.repeat(np.arange(n), problem.sizes())
    rows = np.concatenate([np.zeros(m, np.int64), 1 + group_of])
    cols = np.concatenate([np.arange(m), np.arange(m)])
    data = np.concatenate([problem.weights.astype(float), np.ones(m)])
    a = csr_array((data, (rows, cols)), shape=(n + 1, m))
    upper = np.concatenate([[float(problem.capacity)], np.ones(n)])
    out = backends.solve_milp(
        problem.values,
        constraints=[LinearConstraint(a, -np.inf, upper)],
        integrality=np.ones(m, np.int64),
        bounds=(0, 1),
        time_limit=time_limit,
        maximize=True,
    )
    return _from_backend(problem, out.status, out.x, start, "exact")


def solve_cbc(
    groups: GroupsLike, capacity: int | None = None, *, time_limit: float = 60.0
) -> MckpSolution:
    """Exact MILP with PuLP/CBC (method ``exact-pulp``), built independently."""
    import pulp

    start = time.perf_counter()
    problem = as_mckp(groups, capacity)
    model = pulp.LpProblem("mckp", pulp.LpMaximize)
    w, v = problem.weights.tolist(), problem.values.tolist()
    x = [pulp.LpVariable(f"x{i}", cat="Binary") for i in range(len(w))]
    model += pulp.lpSum(v[i] * x[i] for i in range(len(w)))
    model += pulp.lpSum(w[i] * x[i] for i in range(len(w))) <= problem.capacity
    for g in range(problem.n_groups):
        a, b = int(problem.offsets[g]), int(problem.offsets[g + 1])
        if b > a:
            model += pulp.lpSum(x[a:b]) <= 1
    if not x:
        return _solution(problem, [None] * problem.n_groups, Status.OPTIMAL, start, "exact-pulp")
    out = backends.solve_pulp(model, time_limit=time_limit)
    values = [var.varValue or 0.0 for var in x] if out.has_solution else None
    return _from_backend(problem, out.status, values, start, "exact-pulp")


def value_scale(values: FloatArray) -> tuple[int, bool]:
    """The power of ten that makes every value integral, and whether it is exact.

    CP-SAT needs integer coefficients. When no power up to 10^6 makes all
    values integral (or the scaled sum would overflow 2^53), values are
    rounded at 10^6 and the answer can no longer be proven optimal.
    """
    bound = float(np.abs(values).sum()) if len(values) else 0.0
    for digits in range(7):
        scale = 10**digits
        if bound * scale >= 2**53:
            break
        scaled = values * scale
        if np.all(scaled == np.round(scaled)):
            return scale, True
    return min(10**6, max(1, int(2**52 / max(bound, 1.0)))), False


def solve_cpsat_model(
    groups: GroupsLike, capacity: int | None = None, *, time_limit: float = 60.0
) -> MckpSolution:
    """Exact MILP with OR-Tools CP-SAT (method ``exact-cpsat``).

    Values are scaled to integers (:func:`value_scale`); when that is lossy the
    status is ``feasible`` even if CP-SAT proves the scaled model optimal.
    """
    from ortools.sat.python import cp_model

    start = time.perf_counter()
    problem = as_mckp(groups, capacity)
    scale, exact_scale = value_scale(problem.values)
    model = cp_model.CpModel()
    w = problem.weights.tolist()
    coef = np.round(problem.values * scale).astype(np.int64).tolist()
    x = [model.new_bool_var(f"x{i}") for i in range(len(w))]
    model.add(sum(w[i] * x[i] for i in range(len(w))) <= problem.capacity)
    for g in range(problem.n_groups):
        a, b = int(problem.offsets[g]), int(problem.offsets[g + 1])
        if b > a:
            model.add_at_most_one(x[a:b])
    model.maximize(sum(coef[i] * x[i] for i in range(len(w))))
    out = backends.solve_cpsat(model, time_limit=time_limit)
    values = [float(out.solver.value(var)) for var in x] if out.has_solution else None
    status = out.status
    if status == Status.OPTIMAL and not exact_scale:
        status = Status.FEASIBLE
    return _from_backend(problem, status, values, start, "exact-cpsat")


# --------------------------------------------------------------------------- checker


def check_mckp(problem: Mckp, result: Result) -> None:
    """Independent check: at most one valid item per group, capacity, objective."""
    decision = result.decision()
    choice = decision.get("choice")
    if not isinstance(choice, list) or len(choice) != problem.n_groups:
        raise VerificationError(f"choice must list {problem.n_groups} groups, got {choice!r}")
    total_w, total_v = 0, 0.0
    for g, item in enumerate(choice):
        if item is None:
            continue
        a, b = int(problem.offsets[g]), int(problem.offsets[g + 1])
        if isinstance(item, bool) or not isinstance(item, int) or not 0 <= item < b - a:
            raise VerificationError(f"group {g}: invalid item {item!r} (group has {b - a})")
        total_w += int(problem.weights[a + item])
        total_v += float(problem.values[a + item])
    if total_w > problem.capacity:
        raise VerificationError(f"weight {total_w} exceeds the capacity {problem.capacity}")
    if decision.get("weight") != total_w:
        raise VerificationError(f"reported weight {decision.get('weight')} != {total_w}")
    reported = result.objective
    if reported is None or abs(reported - total_v) > TOLERANCE * (1 + abs(total_v)):
        raise VerificationError(f"reported objective {reported} != recomputed {total_v}")


# --------------------------------------------------------------------------- instances


def parse_mckp(instance: Instance) -> Mckp:
    """Validate an ``mckp`` instance's ``capacity`` and ``groups`` sections."""
    data = instance.data
    check_keys(data, "", ("capacity", "groups"), ("capacity", "groups"))
    capacity = read_int(data["capacity"], "capacity", 0)
    groups = read_array(data["groups"], "groups")
    weights: list[int] = []
    values: list[float] = []
    offsets = [0]
    for g, group in enumerate(groups):
        for i, item in enumerate(read_array(group, f"groups[{g}]")):
            p = f"groups[{g}][{i}]"
            obj = read_object(item, p)
            check_keys(obj, p, ("weight", "value"), ("weight", "value"))
            weights.append(read_int(obj["weight"], f"{p}.weight", 0))
            values.append(float(read_number(obj["value"], f"{p}.value")))
        offsets.append(len(weights))
    return Mckp(capacity, np.array(weights, np.int64), np.array(values), np.array(offsets))


KINDS = ("uncorrelated", "weak", "strong", "aryl")


def random_mckp(
    n: int, items: int, capacity: int, kind: str = "uncorrelated", seed: int = 0
) -> Mckp:
    """A seeded random instance (Pisinger's classes, plus Aryl-shaped groups).

    ``uncorrelated``: w ~ U{1..R}, v ~ U{1..R}; ``weak``: v ~ w + U{-R/10..R/10}
    (at least 1); ``strong``: v = w + R/10; R = max(2, 4 C / n) so that about
    half the groups' heaviest items fit. ``aryl``: a job per group with
    min_workers m ~ U{1..8}, D ~ {1, 2, 4, 8} GPUs per worker, base running
    time T ~ U(10, 1000); item w: weight w * D, value T * w / (w + m).
    """
    rng = np.random.default_rng(seed)
    if kind not in KINDS:
        raise InvalidInstanceError("kind", f"must be one of {list(KINDS)}, got {kind!r}")
    if kind == "aryl":
        steps = np.arange(1, items + 1)
        m = rng.integers(1, 9, n)[:, None]
        d = rng.choice([1, 2, 4, 8], n)[:, None]
        t = rng.uniform(10, 1000, n)[:, None]
        w = steps[None, :] * d
        v: NDArray[Any] = np.round(t * steps / (steps + m), 6)
    else:
        r = max(2, 4 * capacity // max(n, 1))
        w = rng.integers(1, r + 1, (n, items))
        if kind == "uncorrelated":
            v = rng.integers(1, r + 1, (n, items))
        elif kind == "weak":
            v = np.maximum(1, w + rng.integers(-(r // 10), r // 10 + 1, (n, items)))
        else:
            v = w + max(1, r // 10)
    offsets = np.arange(n + 1) * items
    return Mckp(capacity, w.reshape(-1), np.asarray(v, float).reshape(-1), offsets)


def _size(size: str) -> tuple[int, int, int, str]:
    """``n1000`` / ``n1000-strong`` / ``n2000-c10000-aryl`` -> (n, items, C, kind)."""
    parts = size.split("-")
    try:
        n = int(parts[0].removeprefix("n"))
        rest = parts[1:]
        capacity = 4 * n
        if rest and rest[0].startswith("c") and rest[0][1:].isdigit():
            capacity = int(rest[0][1:])
            rest = rest[1:]
        kind = rest[0] if rest else "uncorrelated"
        if not parts[0].startswith("n") or n < 0 or len(rest) > 1 or kind not in KINDS:
            raise ValueError
    except ValueError:
        raise InvalidInstanceError(
            "size", f"expected n<groups>[-c<capacity>][-{'|'.join(KINDS)}], got {size!r}"
        ) from None
    return n, 16, capacity, kind


def generate(size: str, seed: int) -> Instance:
    """A seeded ``mckp`` instance: 16 items per group, C = 4 n unless given."""
    n, items, capacity, kind = _size(size)
    problem = random_mckp(n, items, capacity, kind, seed)
    return from_dict({"format": FORMAT, "problem": "mckp", **problem.to_data()})


# --------------------------------------------------------------------------- registry


def _run_dp(problem: Mckp, options: SolveOptions) -> MckpSolution:
    return solve_dp(problem)


def _run_greedy(problem: Mckp, options: SolveOptions) -> MckpSolution:
    return solve_greedy(problem)


def _run_highs(problem: Mckp, options: SolveOptions) -> MckpSolution:
    return solve_highs(problem, time_limit=options.limit)


def _run_cbc(problem: Mckp, options: SolveOptions) -> MckpSolution:
    return solve_cbc(problem, time_limit=options.limit)


def _run_cpsat(problem: Mckp, options: SolveOptions) -> MckpSolution:
    return solve_cpsat_model(problem, time_limit=options.limit)


PROBLEM = Problem(
    name="mckp",
    summary="Multiple-choice knapsack: at most one item per group, max value (Aryl §5.2)",
    sense="max",
    parse=parse_mckp,
    methods=(
        Method("dp", _run_dp, exact=True, summary="exact DP over capacity (numpy)"),
        Method("exact", _run_highs, exact=True, summary="MILP, HiGHS via scipy"),
        Method("exact-pulp", _run_cbc, exact=True, summary="MILP, PuLP/CBC"),
        Method("exact-cpsat", _run_cpsat, exact=True, summary="CP-SAT, values scaled to integers"),
        Method("greedy", _run_greedy, summary="LP-relaxation greedy on upper hulls"),
    ),
    default="dp",
    check=check_mckp,
    generate=generate,
    sizes={
        "quick": ("n20", "n50-strong", "n30-aryl"),
        "standard": ("n200", "n200-weak", "n200-strong", "n200-aryl", "n1000", "n1000-aryl"),
        "paper": (
            "n1000",
            "n1000-weak",
            "n1000-strong",
            "n1000-aryl",
            "n2000-c10000",
            "n2000-c10000-aryl",
        ),
    },
)
