"""The MMKP written again, independently, in PuLP/CBC (method ``exact-pulp``).

Built term by term from the problem statement, in another formulation
than :mod:`scheduling_opt.mmkp._highs` so that a modelling slip in one is
caught by the other: every item of every group gets a binary (no
reduction), each group a binary "none" with ``sum_i x_gi + y_g = 1``, the
objective is ``sum v_gi x_gi + sum none_g y_g``, one capacity row per
resource. CBC through PuLP exposes no dual bound: ``bound`` stays None
unless the run is proven optimal. Exponential in the worst case.
"""

from __future__ import annotations

import time

from scheduling_opt import exact as backends
from scheduling_opt.errors import InstanceTooLargeError
from scheduling_opt.mmkp._backend import from_backend
from scheduling_opt.mmkp.model import Mmkp, MmkpDecision
from scheduling_opt.solution import Seed, Solution, Status, named, time_limit_of

#: Most nonzero weights plus items PuLP builds (it writes every term in Python:
#: 380,000 took 15 s to build and write for a 5 s limit on a loaded 2-core machine).
PULP_TERMS = 100_000


@named("exact-pulp")
def exact_pulp(
    inp: Mmkp, *, seed: Seed = None, time_limit: float | None = None
) -> Solution[MmkpDecision]:
    """Exact MILP with PuLP/CBC (method ``exact-pulp``), built independently.

    Parameters
    ----------
    inp : Mmkp
    seed : int, numpy Generator or None
        Unused.
    time_limit : float, optional
        Seconds for building and CBC (default
        :data:`~scheduling_opt.solution.DEFAULT_TIME_LIMIT`).

    Returns
    -------
    Solution[MmkpDecision]
        ``optimal`` when proven, else ``time_limit`` with the incumbent and no bound.

    Raises
    ------
    InstanceTooLargeError
        More than :data:`PULP_TERMS` nonzero weights and items.
    SolverError
        If CBC fails.

    Examples
    --------
    >>> from scheduling_opt.mmkp import Mmkp
    >>> p = Mmkp.from_groups([[((3, 1), 5.0)], [((2, 1), 4.0)]], (4, 2), none=(0.0, 1.0))
    >>> sol = exact_pulp(p, time_limit=10)
    >>> sol.status.value, sol.objective, sol.decision.choice, sol.method
    ('optimal', 6.0, (0, None), 'exact-pulp')

    References
    ----------
    Sia (SOSP '23) §3.3 (its MILP, solved there with CBC through cvxpy); CBC (COIN-OR).
    """
    import pulp

    start = time.perf_counter()
    limit = time_limit_of(time_limit)
    terms = int((inp.weights != 0).sum()) + len(inp.values)
    if terms > PULP_TERMS:
        raise InstanceTooLargeError(
            "groups", f"{terms} weights and items, above exact-pulp's limit {PULP_TERMS}"
        )
    assert inp.none is not None
    model = pulp.LpProblem("mmkp", pulp.LpMaximize)
    values, none = inp.values.tolist(), inp.none.tolist()
    weights = inp.weights.tolist()
    offsets = inp.offsets.tolist()
    x = [pulp.LpVariable(f"x{i}", cat="Binary") for i in range(len(values))]
    y = [pulp.LpVariable(f"y{g}", cat="Binary") for g in range(inp.n_groups)]
    affine = pulp.LpAffineExpression
    model += affine([*zip(x, values, strict=True), *zip(y, none, strict=True)])
    for r, cap in enumerate(inp.capacity.tolist()):
        terms_r = [(x[i], weights[i][r]) for i in range(len(values)) if weights[i][r]]
        if terms_r:
            model += affine(terms_r) <= cap, f"capacity{r}"
    if time.perf_counter() - start > limit:  # building alone used the limit up
        return from_backend(inp, Status.TIME_LIMIT, None, None, start, "exact-pulp")
    for g in range(inp.n_groups):
        model += affine([(y[g], 1), *((x[i], 1) for i in range(offsets[g], offsets[g + 1]))]) == 1
    out = backends.solve_pulp(model, time_limit=limit, started=start)
    chosen = [var.varValue or 0.0 for var in x] if out.has_solution else None
    return from_backend(inp, out.status, chosen, None, start, "exact-pulp")
