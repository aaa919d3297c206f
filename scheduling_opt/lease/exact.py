"""The proven-optimal lease selection: the tightened MILP on HiGHS (the ``exact`` method).

The model of :mod:`~scheduling_opt.lease.formulation` (tight linking and
symmetry rows over the paper's Eqs. (1)-(5)) solved by HiGHS through
``scipy.optimize.milp``; the fastest of HiGHS, CP-SAT and CBC in docs/lease.md's
study. Chronus §3.3.4. NP-hard; O(N (P + H)) variables and rows.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from scheduling_opt.errors import SolverError
from scheduling_opt.exact import MIP_REL_GAP, stdout_to_stderr
from scheduling_opt.lease._schedule import Schedule
from scheduling_opt.lease.formulation import ExactOutcome, Model, ModelConfig, build, run_exact
from scheduling_opt.lease.greedy import Hint
from scheduling_opt.lease.model import LeaseDecision, LeaseInput
from scheduling_opt.solution import Seed, Solution, Status, time_limit_of

__all__ = ["exact", "solve_highs"]


def _milp(
    model: Model, time_limit: float, relax: bool
) -> tuple[Status, NDArray[np.float64] | None, float | None]:
    """HiGHS through scipy with presolve off: (status, x, bound in the maximization sense).

    :func:`scheduling_opt.exact.solve_milp` keeps HiGHS' presolve on, and on
    this model (scipy 1.17.1's HiGHS) presolve once cut off the optimum: on
    ``generate("c1-j8", 424)`` it proved 500 "optimal" while CBC, CP-SAT and
    HiGHS without presolve all find 520. Without presolve HiGHS agreed with
    the independent model on every instance tried (docs/lease.md); it costs
    up to 2-4x on the hardest C120 instances. The statuses are mapped as
    ``solve_milp`` maps them; for an LP (``relax``) the bound is its optimum.
    """
    from scipy.optimize import Bounds, LinearConstraint, milp
    from scipy.sparse import coo_array

    size = model.lay.size
    rows = model.rows
    r_idx = [r for r, (cols, _, _, _) in enumerate(rows) for _ in cols]
    c_idx = [col for cols, _, _, _ in rows for col in cols]
    vals = [v for _, coefs, _, _ in rows for v in coefs]
    a = coo_array((vals, (r_idx, c_idx)), shape=(len(rows), size)).tocsr()
    lo = np.array([row[2] for row in rows])
    hi = np.array([row[3] for row in rows])
    options = {
        "time_limit": time_limit,
        "disp": False,
        "presolve": False,
        "mip_rel_gap": MIP_REL_GAP,
    }
    with stdout_to_stderr():
        res = milp(
            -model.c,
            constraints=[LinearConstraint(a, lo, hi)] if rows else [],
            integrality=np.full(size, 0 if relax else 1, dtype=np.int_),
            bounds=Bounds(np.zeros(size), model.ub),
            options=options,
        )
    if res.status == 2:
        return Status.INFEASIBLE, None, None
    if res.status not in (0, 1):
        raise SolverError(f"HiGHS failed: {res.message}")
    status = Status.OPTIMAL if res.status == 0 else Status.TIME_LIMIT
    x = None if res.x is None else np.asarray(res.x, dtype=float)
    raw = res.fun if relax else getattr(res, "mip_dual_bound", None)
    bound = None if raw is None or not np.isfinite(raw) else -float(raw)
    return status, x, bound


def solve_highs(
    inp: LeaseInput, config: ModelConfig, time_limit: float, *, relax: bool = False
) -> ExactOutcome:
    """Build the model and solve it on HiGHS; the bound is HiGHS' MIP dual bound.

    ``relax``: solve the LP relaxation instead (its optimum is the bound;
    the fractional solution gives no schedule).
    """
    model = build(inp, config)
    if model.lay.size == 0:
        return ExactOutcome(Status.OPTIMAL, Schedule.empty(len(inp.jobs)), 0.0)
    status, x, bound = _milp(model, time_limit, relax)
    if relax:
        return ExactOutcome(status, None, bound if status is Status.OPTIMAL else None)
    schedule = None if x is None else model.schedule(inp, list(x))
    return ExactOutcome(status, schedule, bound)


def exact(
    inp: LeaseInput,
    *,
    seed: Seed = None,
    time_limit: float | None = None,
    hint: Hint | None = None,
    config: ModelConfig | None = None,
) -> Solution[LeaseDecision]:
    """The reward-maximal selection, proven on HiGHS (``time_limit``: best incumbent and bound).

    Parameters
    ----------
    inp : LeaseInput
        The jobs, M and T_l.
    seed : int, numpy Generator or None
        Unused (HiGHS runs deterministically); accepted for the common convention.
    time_limit : float or None
        Seconds for HiGHS (None: the library default).
    hint : Mapping[str, Sequence[int]] or None
        A warm start (job id -> terms), repaired into a feasible schedule;
        scipy's HiGHS takes no start, so it is the fallback incumbent on a
        time limit.
    config : ModelConfig or None
        Formulation switches (docs/lease.md's study); None: the final model.

    Returns
    -------
    Solution[LeaseDecision]
        ``optimal``; ``time_limit`` with the best of HiGHS' incumbent, the
        hint and the greedy, and HiGHS' dual bound (an upper bound on the
        reward); ``infeasible`` (only under ``require_all``) when proven.

    Raises
    ------
    ValueError
        When ``time_limit`` is not a positive number.

    Examples
    --------
    >>> from scheduling_opt.model import Job, RewardStep
    >>> jobs = [Job("a", 8, 8, 2400.0, deadlines=(RewardStep(4800.0, 100),)),
    ...         Job("b", 4, 4, 1200.0, deadlines=(RewardStep(1200.0, 100),)),
    ...         Job("c", 4, 4, 3600.0, deadlines=(RewardStep(3600.0, 90),))]
    >>> sol = exact(LeaseInput(jobs, capacity=8, lease_length=1200.0))
    >>> sol.status.value, sol.objective, sol.bound, sol.decision.run_now
    ('optimal', 200.0, 200.0, ('b',))

    References
    ----------
    Chronus (SoCC '21) §3.3.4, Eqs. (1)-(6).
    """
    cfg = config or ModelConfig()
    limit = time_limit_of(time_limit)
    return run_exact(
        inp, lambda _warm: solve_highs(inp, cfg, limit), hint, feasibility=cfg.feasibility
    )
