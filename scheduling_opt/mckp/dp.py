"""The exact MCKP dynamic program over capacity (method ``dp``, the default).

f_g[c] = max(f_{g-1}[c], max_i f_{g-1}[c - w_i] + v_i), one numpy pass per
item that survives the exact reductions (:mod:`scheduling_opt.mckp._reduce`),
over the window of capacities that item can still influence (Aryl Appendix D,
Algorithm 2 ``MaxValueDP``).

Complexity: O(m log m + sum_g k_g' * window_g) time, where m is the item
count, k_g' the items of group g that survive the reductions, C' = min(C,
total useful weight) and window_g <= C' the capacities group g can still
influence. Memory is O(C' + min(sum_g window_g, DP_MEMORY / 8)) floats: DP
rows are kept for reconstruction up to :data:`DP_MEMORY` bytes, beyond that
one row per block is checkpointed and blocks are recomputed backwards (at most
one extra pass).
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from scheduling_opt.errors import InstanceTooLargeError
from scheduling_opt.mckp._reduce import Padded, fix, pad
from scheduling_opt.mckp.greedy import greedy
from scheduling_opt.mckp.model import FloatArray, IntArray, Mckp, MckpDecision, decision_of
from scheduling_opt.solution import Seed, Solution, Status, named, time_limit_of

#: Largest padded table (groups x largest group) the reductions build: about
#: 50 bytes per cell at peak, so 10^7 cells stay near 500 MB.
PAD_LIMIT = 10_000_000
#: Largest useful capacity C' = min(capacity, total useful weight) of a DP row:
#: three rows of C' + 1 floats are live at once (480 MB at the limit).
CAPACITY_LIMIT = 20_000_000

#: Time the greedy fallback takes per item (measured: 7 us on a loaded
#: 2-core machine), reserved before the time limit.
FALLBACK_SECONDS_PER_ITEM = 8e-6


class _OutOfTimeError(Exception):
    """The DP passed its deadline (caught by :func:`dp`)."""


@named("dp")
def dp(inp: Mckp, *, seed: Seed = None, time_limit: float | None = None) -> Solution[MckpDecision]:
    """Exact MCKP by dynamic programming over capacity (method ``dp``).

    Ties prefer choosing nothing, then the lighter item. The work is
    pseudo-polynomial in the capacity; the time limit is checked before every
    item's pass over a DP row, and a DP stopped by it answers with the
    :func:`~scheduling_opt.mckp.greedy` choice and its LP bound (status
    ``time_limit``). Inputs whose tables cannot fit in memory are refused up
    front (:data:`PAD_LIMIT`, :data:`CAPACITY_LIMIT`).

    Parameters
    ----------
    inp : Mckp
        The instance.
    seed : int, numpy Generator or None
        Unused (the DP is deterministic); accepted for the common convention.
    time_limit : float, optional
        Seconds (default :data:`~scheduling_opt.solution.DEFAULT_TIME_LIMIT`).

    Returns
    -------
    Solution[MckpDecision]
        Status ``optimal``; ``objective`` the total value, ``bound`` equal to
        it. Status ``time_limit`` (the greedy's choice, the LP bound) if the
        time limit stopped the DP.

    Raises
    ------
    InstanceTooLargeError
        More than :data:`PAD_LIMIT` cells in the padded groups table, or a
        useful capacity above :data:`CAPACITY_LIMIT`: the message names the
        limit and the instance's figure.

    Examples
    --------
    >>> from scheduling_opt.mckp import Mckp
    >>> p = Mckp.from_groups([[(1, 60.0), (2, 90.0), (3, 100.0)], [(1, 20.0), (2, 30.0)]], 3)
    >>> sol = dp(p)
    >>> sol.status.value, sol.objective, sol.decision.choice, sol.decision.weight
    ('optimal', 110.0, (1, 0), 3)

    References
    ----------
    Aryl (EuroSys '22) §5.2 and Appendix D, Algorithm 2 (``MaxValueDP``).
    """
    start = time.perf_counter()
    limit = time_limit_of(time_limit)
    # The DP stops early enough for the greedy fallback to finish within the limit.
    deadline = start + limit - min(0.9 * limit, FALLBACK_SECONDS_PER_ITEM * len(inp.weights))
    n = inp.n_groups
    if n == 0 or len(inp.weights) == 0:
        choice: list[int | None] = [None] * n
    else:
        cells = n * int(inp.sizes().max())
        if cells > PAD_LIMIT:
            raise InstanceTooLargeError(
                "groups",
                f"the dp pads {n} groups of up to {cells // n} items into {cells:.3g} cells, "
                f"above its limit {PAD_LIMIT:.0e} (use method greedy or exact)",
            )
        p = pad(inp)
        keep = fix(p, inp.capacity)
        try:
            choice = dp_choice(p, keep, inp.capacity, deadline=deadline)
        except _OutOfTimeError:
            fallback = greedy(inp)
            return fallback.with_(
                status=Status.TIME_LIMIT,
                seconds=time.perf_counter() - start,
                message="the time limit stopped the dp: greedy choice, LP bound",
            )
    decision = decision_of(inp, choice)
    return Solution(Status.OPTIMAL, decision.value, decision, seconds=time.perf_counter() - start)


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


def _plan(p: Padded, keep: NDArray[np.bool_], capacity: int) -> tuple[_Plan, IntArray, IntArray]:
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


def _sweep(
    plan: _Plan,
    k0: int,
    k1: int,
    start: Row,
    store: FloatArray | None,
    deadline: float = math.inf,
) -> Row:
    """Rows of groups k0..k1-1 from the row before k0; windows go to ``store``."""
    cap = plan.cap
    clock = time.perf_counter
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
            if clock() > deadline:
                raise _OutOfTimeError
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


def dp_choice(
    p: Padded,
    keep: NDArray[np.bool_],
    capacity: int,
    budget: int = DP_MEMORY,
    *,
    deadline: float = math.inf,
) -> list[int | None]:
    n = len(p.w)
    choice: list[int | None] = [None] * n
    plan, _, cols = _plan(p, keep, capacity)
    if not plan.groups:
        return choice
    fits_all = int(np.where(keep, p.w, 0).max(axis=1).sum()) <= capacity
    if plan.cap > CAPACITY_LIMIT and not fits_all:
        raise InstanceTooLargeError(
            "capacity",
            f"the dp needs rows of {plan.cap:.3g} capacities (capacity or total useful "
            f"weight), above its limit {CAPACITY_LIMIT:.0e} (use method greedy or exact)",
        )
    if plan.cap > CAPACITY_LIMIT:  # and fits_all
        # Every group's heaviest useful item fits at once: each group takes its
        # most valuable one, no table needed (a 10^9-GPU knapsack that fits).
        best = np.argmax(np.where(keep, p.v, -np.inf), axis=1)
        for g in plan.groups:
            choice[g] = int(p.index[g, int(best[g])])
        return choice
    blocks = _blocks(plan, budget)
    starts: list[Row] = [(0, 0, np.zeros(1))]
    store = np.empty(0)
    for b, (k0, k1) in enumerate(blocks):
        size = sum(plan.hi[k] + 1 - plan.lo[k] for k in range(k0, k1))
        store = np.empty(size) if b == len(blocks) - 1 else np.empty(0)
        last = _sweep(plan, k0, k1, starts[-1], store if b == len(blocks) - 1 else None, deadline)
        starts.append(last)
    c = plan.cap
    for b in range(len(blocks) - 1, -1, -1):
        k0, k1 = blocks[b]
        if b < len(blocks) - 1:
            store = np.empty(0)  # release the later block's rows first
            store = np.empty(sum(plan.hi[k] + 1 - plan.lo[k] for k in range(k0, k1)))
            _sweep(plan, k0, k1, starts[b], store, deadline)
        picked, c = _trace(plan, k0, k1, starts[b], store, c)
        for k, j in zip(range(k1 - 1, k0 - 1, -1), picked, strict=True):
            if j >= 0:
                g = plan.groups[k]
                choice[g] = int(p.index[g, int(cols[j])])
    return choice
