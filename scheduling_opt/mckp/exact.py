"""The MCKP as a 0-1 MILP solved by HiGHS (method ``exact``, the proving model).

Binary x_i per item, one capacity row and one "at most one per group" row per
group (Aryl §5.2 states the problem; Appendix D solves it by DP, which
:mod:`scheduling_opt.mckp.dp` implements). HiGHS via ``scipy.optimize.milp``;
exponential in the worst case, fast on these instances.
"""

from __future__ import annotations

import time

import numpy as np

from scheduling_opt import exact as backends
from scheduling_opt.mckp._backend import empty, from_backend
from scheduling_opt.mckp.model import Mckp, MckpDecision
from scheduling_opt.solution import Seed, Solution, time_limit_of


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
    m, n = len(inp.weights), inp.n_groups
    if m == 0:
        return empty(inp, start)
    group_of = np.repeat(np.arange(n), inp.sizes())
    rows = np.concatenate([np.zeros(m, np.int64), 1 + group_of])
    cols = np.concatenate([np.arange(m), np.arange(m)])
    data = np.concatenate([inp.weights.astype(float), np.ones(m)])
    a = csr_array((data, (rows, cols)), shape=(n + 1, m))
    upper = np.concatenate([[float(inp.capacity)], np.ones(n)])
    out = backends.solve_milp(
        inp.values,
        constraints=[LinearConstraint(a, -np.inf, upper)],
        integrality=np.ones(m, np.int64),
        bounds=(0, 1),
        time_limit=limit,
        maximize=True,
        started=start,
    )
    return from_backend(inp, out.status, out.x, out.bound, start)
