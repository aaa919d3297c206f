"""From a relaxation's choice to a feasible one, then greedy improvement.

A choice of the Lagrangian subproblem may exceed some capacities. The
repair first *drops*: while a resource is over its capacity, it makes the
downgrade (another item of the same group, no heavier on any resource, or
none) that loses the least gain per priced unit of overload removed
(prices: the multipliers). Then it *fills*: passes over the improving moves
(another item, or one for an empty group, that fits the capacity left) in
order of gain per priced unit of weight added, taking each that still
fits. Then *exchanges*: an upgrade that does not fit, paired with the
cheapest downgrade of another group that frees what it lacks, when the pair
gains. Every step keeps the choice feasible once the drops are done.

Each drop, fill pass and exchange round is O(m R) in numpy for m
candidates and R resources, plus a Python loop over a pass's moves (one per
group). Given a deadline, fill and exchange stop between passes, and drop
finishes in one pass of moves to none.
"""

from __future__ import annotations

import math
import time

import numpy as np
from numpy.typing import NDArray

from scheduling_opt.mmkp._relax import Relaxed
from scheduling_opt.mmkp.model import FloatArray, IntArray

#: Upgrades an exchange round tries (the most valuable first).
EXCHANGE_TRIES = 64
#: Exchange rounds at most (each applies at most one pair per upgrade tried).
EXCHANGE_ROUNDS = 8


def _prices(rel: Relaxed, mu: FloatArray) -> FloatArray:
    """Multipliers, floored so that a resource priced 0 still counts a little."""
    top = float(rel.gain.max()) if len(rel.gain) else 1.0
    floor: FloatArray = 1e-3 * top / (rel.capacity + 1.0)
    out: FloatArray = np.maximum(mu, floor)
    return out


def _current(rel: Relaxed, picked: IntArray) -> tuple[FloatArray, IntArray]:
    """Per candidate: its group's current gain and weight (0 for an empty group)."""
    cur = picked[rel.group]
    has = cur >= 0
    gain = np.where(has, rel.gain[np.maximum(cur, 0)], 0.0)
    weight = np.where(has[:, None], rel.weight[np.maximum(cur, 0)], 0)
    return gain, weight


def used_of(rel: Relaxed, picked: IntArray) -> IntArray:
    """The weight per resource of a per-group candidate vector."""
    taken = picked[picked >= 0]
    out: IntArray = (
        rel.weight[taken].sum(axis=0) if len(taken) else np.zeros(len(rel.capacity), np.int64)
    )
    return out


def _take(
    rel: Relaxed,
    picked: IntArray,
    used: list[int],
    moves: tuple[IntArray, IntArray, IntArray],
    relieve: bool,
) -> list[int]:
    """Take moves in order, each if it still fits (or, when ``relieve``, while
    it relieves a resource still over), updating ``picked``.

    ``moves`` holds, in the order to try them and at most one per group, each
    move's group, target candidate (-1: none) and weight change against the
    choice at the pass's start (the group's current one: it has not moved).
    """
    cap = rel.inp.capacity.tolist()
    group, to, steps = (a.tolist() for a in moves)
    for g, target, step in zip(group, to, steps, strict=True):
        if relieve:
            if not any(d < 0 and u > c for d, u, c in zip(step, used, cap, strict=True)):
                continue
        elif not all(u + d <= c for u, d, c in zip(used, step, cap, strict=True)):
            continue
        used = [u + d for u, d in zip(used, step, strict=True)]
        picked[g] = target
        if relieve and all(u <= c for u, c in zip(used, cap, strict=True)):
            break
    return used


def _first_per_group(order: IntArray, group: IntArray) -> IntArray:
    """The positions of ``order`` that come first for their group (``order`` ranks moves)."""
    # np.unique returns each group's first position in the ranked order.
    _, first = np.unique(group[order], return_index=True)
    out: IntArray = order[np.sort(first)]
    return out


def drop(rel: Relaxed, picked: IntArray, mu: FloatArray, deadline: float = math.inf) -> IntArray:
    """Downgrade until every capacity holds (always ends: "none" is a downgrade).

    In passes: the downgrades (to a candidate no heavier anywhere, or to
    none) are sorted by gain lost per priced unit of overload removed, then
    taken in that order, one per group, while they still relieve a resource
    that is over. Past ``deadline`` a pass offers "none" only, which ends it.
    """
    picked = picked.copy()
    cap = rel.inp.capacity.tolist()
    price = _prices(rel, mu)
    used = used_of(rel, picked).tolist()
    while any(u > c for u, c in zip(used, cap, strict=True)):
        over = np.maximum(np.array(used) - rel.inp.capacity, 0)
        gain, weight = _current(rel, picked)
        freed = weight - rel.weight
        ok = (picked[rel.group] >= 0) & np.all(freed >= 0, axis=1)
        if time.perf_counter() > deadline:
            ok[:] = False
        relief = np.minimum(freed, over[None, :]) @ price
        moves = np.flatnonzero(ok & (relief > 0))
        holders = np.flatnonzero(picked >= 0)
        h_weight = rel.weight[picked[holders]]
        h_relief = np.minimum(h_weight, over[None, :]) @ price
        keep = h_relief > 0
        holders, h_weight, h_relief = holders[keep], h_weight[keep], h_relief[keep]
        score = np.concatenate(
            [(gain[moves] - rel.gain[moves]) / relief[moves], rel.gain[picked[holders]] / h_relief]
        )
        steps = np.concatenate([-freed[moves], -h_weight])
        group = np.concatenate([rel.group[moves], holders])
        # Each group's best downgrade only: a pass changes a group once.
        order = _first_per_group(np.argsort(score, kind="stable"), group)
        to = np.concatenate([moves, np.full(len(holders), -1)])
        used = _take(rel, picked, used, (group[order], to[order], steps[order]), relieve=True)
    return picked


def fill(rel: Relaxed, picked: IntArray, mu: FloatArray, deadline: float = math.inf) -> IntArray:
    """Improving moves that fit, in passes, most efficient first (no pass after ``deadline``)."""
    picked = picked.copy()
    price = _prices(rel, mu)
    used = used_of(rel, picked).tolist()
    while time.perf_counter() <= deadline:
        gain, weight = _current(rel, picked)
        delta = rel.gain - gain
        added = rel.weight - weight
        fits = np.all(np.array(used)[None, :] + added <= rel.inp.capacity[None, :], axis=1)
        moves = np.flatnonzero(fits & (delta > 0))
        if not len(moves):
            return picked
        cost = np.maximum(added[moves], 0) @ price
        ranked = np.lexsort((-delta[moves], -delta[moves] / (cost + 1e-300)))
        # Each group's most efficient move only: a pass changes a group once,
        # and the next pass offers the group's moves that still fit.
        order = moves[_first_per_group(ranked, rel.group[moves])]
        used = _take(rel, picked, used, (rel.group[order], order, added[order]), relieve=False)
    return picked


def exchange(rel: Relaxed, picked: IntArray, deadline: float = math.inf) -> IntArray:
    """Pairs (upgrade of one group, downgrade of another) that fit together and gain."""
    picked = picked.copy()
    cap = rel.inp.capacity
    used = used_of(rel, picked)
    groups = np.arange(rel.n)
    for _ in range(EXCHANGE_ROUNDS):
        if time.perf_counter() > deadline:
            return picked
        gain, weight = _current(rel, picked)
        delta = rel.gain - gain
        added = rel.weight - weight
        short = np.maximum(used[None, :] + added - cap[None, :], 0)
        wanted = np.flatnonzero((delta > 0) & np.any(short > 0, axis=1))
        if not len(wanted):
            return picked
        wanted = wanted[np.argsort(-delta[wanted], kind="stable")][:EXCHANGE_TRIES]
        # Downgrades: to another candidate no heavier anywhere, or to none.
        down_ok = (picked[rel.group] >= 0) & np.all(added <= 0, axis=1) & (delta < 0)
        downs = np.flatnonzero(down_ok)
        holders = groups[picked >= 0]
        d_gain = np.concatenate([delta[downs], -rel.gain[picked[holders]]])
        d_free = np.concatenate([-added[downs], rel.weight[picked[holders]]])
        d_group = np.concatenate([rel.group[downs], holders])
        d_to = np.concatenate([downs, np.full(len(holders), -1)])
        changed = False
        for u in wanted.tolist():
            g = int(rel.group[u])
            step = rel.weight[u] - (rel.weight[picked[g]] if picked[g] >= 0 else 0)
            need = np.maximum(used + step - cap, 0)
            cur_delta = rel.gain[u] - (rel.gain[picked[g]] if picked[g] >= 0 else 0.0)
            ok: NDArray[np.bool_] = (
                (d_group != g) & np.all(d_free >= need[None, :], axis=1) & (d_gain + cur_delta > 0)
            )
            ok &= picked[d_group] >= 0
            if not ok.any():
                continue
            k = int(np.flatnonzero(ok)[np.argmax(d_gain[ok])])
            h, to = int(d_group[k]), int(d_to[k])
            # The downgrade was priced against the choice at the round's start.
            h_old = picked[h]
            h_step = (rel.weight[to] if to >= 0 else 0) - rel.weight[h_old]
            h_delta = (rel.gain[to] if to >= 0 else 0.0) - rel.gain[h_old]
            if h_old < 0 or h_delta + cur_delta <= 0 or np.any(used + step + h_step > cap):
                continue
            used += step + h_step
            picked[g], picked[h] = u, to
            changed = True
        if not changed:
            return picked
    return picked


def repair(rel: Relaxed, picked: IntArray, mu: FloatArray, deadline: float = math.inf) -> IntArray:
    """Drop then fill: a feasible per-group choice (a shorter repair past ``deadline``)."""
    return fill(rel, drop(rel, picked, mu, deadline), mu, deadline)


def polish(rel: Relaxed, picked: IntArray, mu: FloatArray, deadline: float = math.inf) -> IntArray:
    """Exchange then fill a feasible choice (no worse)."""
    return fill(rel, exchange(rel, picked, deadline), mu, deadline)
