"""The MCKP as a 0-1 MILP solved by HiGHS (method ``exact``, the proving model).

Binary x_i per item, one capacity row and one "at most one per group" row per
group (Aryl §5.2 states the problem; Appendix D solves it by DP, which
:mod:`scheduling_opt.mckp.dp` implements). HiGHS via ``scipy.optimize.milp``;
exponential in the worst case, fast on these instances.

Only the items that survive the DP's exact reductions
(:mod:`scheduling_opt.mckp._reduce`: useless, dominated and Lagrangian-fixed
items, O(m log m)) enter the model. Why: HiGHS does not look at its clock
inside its presolve probing, its root heuristics and its first root LP, and on
the full 32,000-binary model (n2000-c10000-aryl) those phases alone took
0.7 s, so a 1 s limit ended after 1.4-1.6 s. The reduced model has
1,314 binaries there and is proven in about 0.05 s. No optimal solution uses a
dropped item, so the optimum, HiGHS' dual bound and the ``optimal`` claim
carry over to the full instance unchanged. Presolve is off: on the reduced
model (one knapsack row and one row per group) it spent 0.8 s on 264
binaries and reduced nothing useful (docs/mckp.md has the measurements).
"""

from __future__ import annotations

import time

import numpy as np

from scheduling_opt import exact as backends
from scheduling_opt.mckp._backend import empty, from_backend
from scheduling_opt.mckp._reduce import fix, pad
from scheduling_opt.mckp.dp import PAD_LIMIT
from scheduling_opt.mckp.model import FloatArray, IntArray, Mckp, MckpDecision
from scheduling_opt.solution import Seed, Solution, named, time_limit_of


@named("exact")
def exact(
    inp: Mckp, *, seed: Seed = None, time_limit: float | None = None
) -> Solution[MckpDecision]:
    """Exact MILP with HiGHS (method ``exact``): binary x_i, one row per group.

    Parameters
    ----------
    inp : Mckp
    seed : int, numpy Generator or None
        Unused.
    time_limit : float, optional
        Seconds for HiGHS (default :data:`~scheduling_opt.solution.DEFAULT_TIME_LIMIT`).

    Returns
    -------
    Solution[MckpDecision]
        ``optimal`` when proven; otherwise ``time_limit`` with the incumbent
        (the empty choice if none) and HiGHS' dual bound.

    Raises
    ------
    SolverError
        If HiGHS fails.

    Examples
    --------
    >>> from scheduling_opt.mckp import Mckp
    >>> p = Mckp.from_groups([[(1, 60.0), (2, 90.0), (3, 100.0)], [(1, 20.0), (2, 30.0)]], 3)
    >>> sol = exact(p, time_limit=10)
    >>> sol.status.value, sol.objective, sol.decision.choice
    ('optimal', 110.0, (1, 0))

    References
    ----------
    Aryl (EuroSys '22) §5.2; HiGHS (Huangfu and Hall, 2018).
    """
    from scipy.optimize import LinearConstraint
    from scipy.sparse import csr_array

    start = time.perf_counter()
    limit = time_limit_of(time_limit)
    if len(inp.weights) == 0:
        return empty(inp, start)
    item, group, weight, value = _candidates(inp)
    m = len(item)
    if m == 0:  # no item can be in an optimal solution: choosing nothing is optimal
        return empty(inp, start)
    n = int(group.max()) + 1
    rows = np.concatenate([np.zeros(m, np.int64), 1 + group])
    cols = np.concatenate([np.arange(m), np.arange(m)])
    data = np.concatenate([weight.astype(float), np.ones(m)])
    a = csr_array((data, (rows, cols)), shape=(n + 1, m))
    upper = np.concatenate([[float(inp.capacity)], np.ones(n)])
    out = backends.solve_milp(
        value,
        constraints=[LinearConstraint(a, -np.inf, upper)],
        integrality=np.ones(m, np.int64),
        bounds=(0, 1),
        time_limit=limit,
        maximize=True,
        started=start,
        presolve=False,
    )
    x = None
    if out.x is not None:
        x = np.zeros(len(inp.weights))
        x[item] = out.x
    return from_backend(inp, out.status, x, out.bound, start)


def _candidates(inp: Mckp) -> tuple[IntArray, IntArray, IntArray, FloatArray]:
    """The items some optimal solution may use: (item index, dense group, weight, value).

    Groups are renumbered 0.. over the groups that keep an item. When the
    padded table would exceed the DP's :data:`~scheduling_opt.mckp.dp.PAD_LIMIT`
    (one huge group among many small ones) every item is kept instead.
    """
    sizes = inp.sizes()
    n = inp.n_groups
    if n == 0 or n * int(sizes.max()) > PAD_LIMIT:
        group = np.repeat(np.arange(n, dtype=np.int64), sizes)
        return np.arange(len(inp.weights)), group, inp.weights, inp.values
    padded = pad(inp)
    keep = fix(padded, inp.capacity)
    g, col = np.nonzero(keep)
    item = inp.offsets[g] + padded.index[g, col]
    _, dense = np.unique(g, return_inverse=True)
    return item, dense.astype(np.int64), padded.w[g, col], padded.v[g, col]
