"""Independent models the MMKP tests compare against.

``brute_force`` enumerates every choice with plain Python sums (none values
included); ``lp_bound`` solves the LP relaxation with HiGHS
(``scipy.optimize.linprog``), a model that shares no code with the
Lagrangian search.
"""

from __future__ import annotations

import itertools

import numpy as np
from scipy.optimize import linprog

from scheduling_opt.mmkp import Mmkp


def brute_force(p: Mmkp) -> tuple[float, tuple[int | None, ...]]:
    """The optimum and one optimal choice, by enumerating every choice (tiny instances)."""
    assert p.none is not None
    weights, values, none = p.weights.tolist(), p.values.tolist(), p.none.tolist()
    offsets, cap = p.offsets.tolist(), p.capacity.tolist()
    best: tuple[float, tuple[int | None, ...]] | None = None
    options = [[None, *range(offsets[g + 1] - offsets[g])] for g in range(p.n_groups)]
    for choice in itertools.product(*options):
        used = [0] * len(cap)
        total = 0.0
        for g, i in enumerate(choice):
            if i is None:
                total += none[g]
            else:
                total += values[offsets[g] + i]
                used = [u + w for u, w in zip(used, weights[offsets[g] + i], strict=True)]
        if all(u <= c for u, c in zip(used, cap, strict=True)) and (
            best is None or total > best[0]
        ):
            best = (total, choice)
    assert best is not None
    return best


def lp_bound(p: Mmkp) -> float:
    """The LP relaxation's optimum (x in [0, 1], at most one per group), none values included."""
    assert p.none is not None
    m, n = len(p.values), p.n_groups
    if m == 0:
        return float(p.none.sum())
    gains = p.values - np.repeat(p.none, np.diff(p.offsets))
    groups = np.zeros((n, m))
    for g in range(n):
        groups[g, p.offsets[g] : p.offsets[g + 1]] = 1.0
    a = np.vstack([p.weights.T.astype(float), groups])
    b = np.concatenate([p.capacity.astype(float), np.ones(n)])
    res = linprog(-gains, A_ub=a, b_ub=b, bounds=(0, 1), method="highs")
    assert res.status == 0
    return float(-res.fun + p.none.sum())
