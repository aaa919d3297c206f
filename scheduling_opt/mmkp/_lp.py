"""The LP relaxation by HiGHS: the best multipliers in one solve, and a rounded incumbent.

The minimum of L(mu) over mu >= 0 equals the LP relaxation's optimum
(:mod:`scheduling_opt.mmkp._relax`), and the LP's optimal duals on the
capacity rows are multipliers that attain it (LP duality). So one LP solve
replaces the subgradient search for the multipliers: L is then evaluated
at the duals by :meth:`~scheduling_opt.mmkp._relax.Relaxed.evaluate`
(valid whatever the LP's accuracy, since L(mu) bounds the optimum for
every mu >= 0), and the LP's solution, each group rounded to the item it
takes with x > 1/2 (at most one: the group's row sums to <= 1), is the
first incumbent, repaired and filled (:func:`~scheduling_opt.mmkp._repair.repair`)
when the LP's solution is fractional or the rounding overflows a capacity
(when the bound does not close, the caller polishes it). On Sia's rounds the LP's basic optimum is
integral in most rounds, and the bound then closes at once (docs/mmkp.md).

HiGHS solves the LP's dual (:func:`lp_start`) by its interior point
method with crossover (``highs-ipm``), without presolve: on Sia's 32x
rounds (about 2,000 candidates, 200 groups) 11-14 ms of CPU on a loaded
machine, where the same with presolve took 13-18 ms, the primal LP 17-22
ms and the primal by dual simplex 40-60 ms. Polynomial time; in practice O(m) per iteration and a few
dozen iterations.
"""

from __future__ import annotations

import time

import numpy as np
from numpy.typing import NDArray

from scheduling_opt.exact import stdout_to_stderr
from scheduling_opt.mmkp._relax import Evaluation, Relaxed
from scheduling_opt.mmkp._repair import repair, used_of
from scheduling_opt.mmkp.model import IntArray

#: HiGHS does not look at its clock while it sets an LP up: the LP starts
#: only when the time left covers this much per column (measured on a
#: loaded 2-core machine: about 10 us per column on Sia's rounds), else
#: the subgradient search finds the multipliers.
LP_SECONDS_PER_ITEM = 1e-4
#: An LP value farther than this from 0 and 1 is fractional: the rounded
#: solution is then repaired and filled (a group split 1/2-1/2 is left empty
#: by the rounding).
FRACTIONAL = 1e-6


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
    """L at the LP relaxation's duals, and the LP's rounded (and if need be repaired) solution.

    HiGHS solves the LP's dual, ``min C . mu + sum_g pi_g`` subject to
    ``pi_g + w_i . mu >= a_i`` for every candidate i of group g, and
    ``mu, pi >= 0``: R + n columns instead of m (scipy's HiGHS wrapper
    spends Python time per column), the multipliers mu as its solution and
    the LP's x as the duals of its rows. None when the time left is too
    short for the LP (:data:`LP_SECONDS_PER_ITEM`) or HiGHS does not report
    an optimum (the caller then searches the multipliers by subgradient
    steps).
    """
    from scipy.optimize import linprog
    from scipy.sparse import csr_array

    m, r = rel.weight.shape
    left = deadline - time.perf_counter()
    if not m or left < LP_SECONDS_PER_ITEM * m:
        return None
    item, resource = np.nonzero(rel.weight)
    rows = np.concatenate([item, np.arange(m)])
    cols = np.concatenate([resource, r + rel.group])
    data = np.concatenate([rel.fweight[item, resource], np.ones(m)])
    a = csr_array((-data, (rows, cols)), shape=(m, r + rel.n))
    with stdout_to_stderr():
        res = linprog(
            np.concatenate([rel.capacity, np.ones(rel.n)]),
            A_ub=a,
            b_ub=-rel.gain,
            bounds=(0, None),
            method="highs-ipm",
            # Presolve finds little in these rows and cost a fifth of the time.
            options={"time_limit": left, "presolve": False},
        )
    if res.status != 0 or res.x is None:
        return None
    mu = np.maximum(np.asarray(res.x[:r], dtype=np.float64), 0.0)
    ev = rel.evaluate(mu)
    x = -np.asarray(res.ineqlin.marginals, dtype=np.float64)
    on = np.flatnonzero(x > 0.5)
    picked = np.full(rel.n, -1, np.int64)
    picked[rel.group[on]] = on
    fractional = bool(np.any((x > FRACTIONAL) & (x < 1.0 - FRACTIONAL)))
    if fractional or np.any(used_of(rel, picked) > rel.inp.capacity):
        picked = repair(rel, picked, mu, deadline)
    return ev, picked
