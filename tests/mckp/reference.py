"""Independent models the MCKP tests compare against.

``greedy_choice_reference`` and ``hull_reference`` are the plain-Python
greedy and monotone chain the library used before its numpy LP pass
(issue 25), kept here as the reference for the equivalence tests: the numpy
version must take the same decisions. ``brute_force`` enumerates every
choice; ``lp_relaxation`` solves the LP relaxation with HiGHS
(``scipy.optimize.milp`` without integrality), a model that shares no code
with the hull walk.
"""

from __future__ import annotations

import itertools
import math

import numpy as np

from scheduling_opt import mckp as kn


def brute_force(p: kn.Mckp) -> float:
    """The optimum by enumerating every choice (tiny instances only)."""
    best = 0.0
    for choice in itertools.product(*[[None, *range(int(k))] for k in p.sizes()]):
        value, weight = kn.evaluate(p, choice)
        if weight <= p.capacity:
            best = max(best, value)
    return best


def hull_reference(w: list[int], v: list[float]) -> list[int]:
    """One group's strict upper hull through (0, 0): the old monotone chain."""
    order = sorted(range(len(w)), key=lambda i: (w[i], -v[i], i))
    hull: list[tuple[int, float, int]] = [(0, 0.0, -1)]
    for i in order:
        wi, vi = w[i], v[i]
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


def greedy_reference(p: kn.Mckp) -> tuple[tuple[int | None, ...], float]:
    """The old greedy: its choice (the best single item when that is worth more) and the LP."""
    cap = p.capacity
    hulls: list[list[int]] = []
    steps: list[tuple[float, int, int]] = []
    for g in range(p.n_groups):
        w, v = p.group(g)
        fits = [i for i in range(len(w)) if w[i] <= cap]
        hull = [fits[i] for i in hull_reference(w[fits].tolist(), v[fits].tolist())]
        hulls.append(hull)
        pw, pv = 0, 0.0
        for s, i in enumerate(hull):
            dw, dv = int(w[i]) - pw, float(v[i]) - pv
            steps.append((math.inf if dw == 0 else dv / dw, g, s))
            pw, pv = int(w[i]), float(v[i])
    steps.sort(key=lambda t: (-t[0], t[1], t[2]))

    def increment(g: int, s: int) -> tuple[int, float]:
        w, v = p.group(g)
        i = hulls[g][s]
        if s == 0:
            return int(w[i]), float(v[i])
        j = hulls[g][s - 1]
        return int(w[i]) - int(w[j]), float(v[i]) - float(v[j])

    room, lp, level, broken = cap, 0.0, [0] * p.n_groups, False
    frozen = [False] * p.n_groups
    for eff, g, s in steps:
        if frozen[g] or level[g] != s:
            continue
        dw, dv = increment(g, s)
        if dw <= room:
            room -= dw
            level[g] = s + 1
            if not broken:
                lp += dv
        else:
            if not broken:
                lp += eff * room
                broken = True
            frozen[g] = True
    choice = tuple(hulls[g][lv - 1] if lv else None for g, lv in enumerate(level))
    value, _ = kn.evaluate(p, choice)
    fits = np.flatnonzero((p.weights <= cap) & (p.values > 0))
    if len(fits):
        i = int(fits[np.argmax(p.values[fits])])
        g = int(np.searchsorted(p.offsets, i, side="right")) - 1
        if float(p.values[i]) > value:
            single: list[int | None] = [None] * p.n_groups
            single[g] = i - int(p.offsets[g])
            choice = tuple(single)
    return choice, lp


def lp_relaxation(p: kn.Mckp) -> float:
    """The LP relaxation's optimum by HiGHS (``scipy.optimize.milp``, no integrality).

    Items heavier than the capacity are fixed at 0 (no solution can hold
    them), as the library's LP does.
    """
    from scipy.optimize import Bounds, LinearConstraint, milp
    from scipy.sparse import csr_array

    m, n = len(p.weights), p.n_groups
    if m == 0:
        return 0.0
    group = np.repeat(np.arange(n), p.sizes())
    rows = np.concatenate([np.zeros(m, np.int64), 1 + group])
    cols = np.concatenate([np.arange(m), np.arange(m)])
    data = np.concatenate([p.weights.astype(float), np.ones(m)])
    a = csr_array((data, (rows, cols)), shape=(n + 1, m))
    upper = np.concatenate([[float(p.capacity)], np.ones(n)])
    fits = (p.weights <= p.capacity).astype(float)
    res = milp(-p.values, constraints=[LinearConstraint(a, -np.inf, upper)], bounds=Bounds(0, fits))
    assert res.status == 0, res.message
    return float(-res.fun)
