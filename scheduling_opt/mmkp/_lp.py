"""The LP relaxation by HiGHS: the best multipliers in one solve, and a rounded incumbent.

The minimum of L(mu) over mu >= 0 equals the LP relaxation's optimum
(:mod:`scheduling_opt.mmkp._relax`), and the LP's optimal duals on the
capacity rows are multipliers that attain it (LP duality). So one LP solve
replaces the subgradient search for the multipliers: L is then evaluated
at the duals by :meth:`~scheduling_opt.mmkp._relax.Relaxed.evaluate`
(valid whatever the LP's accuracy, since L(mu) bounds the optimum for
every mu >= 0), and the LP's solution, each group rounded to the item it
takes with x > 1/2 (at most one: the group's row sums to <= 1), then
repaired and filled (:func:`~scheduling_opt.mmkp._repair.repair`), is the
first incumbent. On Sia's rounds the LP's basic optimum is integral in
most rounds, and the bound then closes at once (docs/mmkp.md).

HiGHS' interior point method with crossover (``highs-ipm``) was 2-3x
faster than its dual simplex on Sia's 32x rounds (about 2,000 columns and
200 rows). Polynomial time; in practice O(m) per iteration and a few
dozen iterations.
"""

from __future__ import annotations

import time

import numpy as np
from numpy.typing import NDArray

from scheduling_opt.exact import stdout_to_stderr
from scheduling_opt.mmkp._relax import Evaluation, Relaxed
from scheduling_opt.mmkp._repair import repair
from scheduling_opt.mmkp.model import IntArray

#: HiGHS does not look at its clock while it sets an LP up: the LP starts
#: only when the time left covers this much per column (measured on a
#: loaded 2-core machine: about 10 us per column on Sia's rounds), else
#: the subgradient search finds the multipliers.
LP_SECONDS_PER_ITEM = 1e-4


def matrix(rel: Relaxed, keep: IntArray) -> tuple[object, NDArray[np.float64]]:
    """The constraint rows of the candidates ``keep`` (sparse) and their upper sides.

    One row per resource (its weights, at most its capacity), then one per
    group of :attr:`Relaxed.n` (its candidates' sum, at most 1).
    """
    from scipy.sparse import csr_array

    w = rel.weight[keep]
    group = rel.group[keep]
    m, r = w.shape
    item, resource = np.nonzero(w)
    rows = np.concatenate([resource, r + group])
    cols = np.concatenate([item, np.arange(m)])
    data = np.concatenate([w[item, resource].astype(float), np.ones(m)])
    a = csr_array((data, (rows, cols)), shape=(r + rel.n, m))
    upper = np.concatenate([rel.capacity, np.ones(rel.n)])
    return a, upper


def lp_start(rel: Relaxed, deadline: float) -> tuple[Evaluation, IntArray] | None:
    """L at the LP relaxation's duals, and the LP's rounded and repaired solution.

    None when the time left is too short for the LP (:data:`LP_SECONDS_PER_ITEM`)
    or HiGHS does not report an optimal LP (the caller then searches the
    multipliers by subgradient steps).
    """
    from scipy.optimize import linprog

    m = len(rel.gain)
    left = deadline - time.perf_counter()
    if not m or left < LP_SECONDS_PER_ITEM * m:
        return None
    a, upper = matrix(rel, np.arange(m))
    with stdout_to_stderr():
        res = linprog(
            -rel.gain,
            A_ub=a,
            b_ub=upper,
            bounds=(0, None),
            method="highs-ipm",
            options={"time_limit": left},
        )
    if res.status != 0 or res.x is None:
        return None
    r = len(rel.capacity)
    mu = np.maximum(-np.asarray(res.ineqlin.marginals[:r], dtype=np.float64), 0.0)
    ev = rel.evaluate(mu)
    on = np.flatnonzero(np.asarray(res.x) > 0.5)
    picked = np.full(rel.n, -1, np.int64)
    picked[rel.group[on]] = on
    return ev, repair(rel, picked, mu, deadline)
