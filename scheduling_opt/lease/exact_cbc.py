"""The tightened lease MILP on CBC through PuLP (not a registry method: the formulation study).

The same model as ``exact`` (:mod:`~scheduling_opt.lease.formulation`) sent to
CBC, so docs/lease.md's study can compare one model on three backends; the
registry's ``exact-pulp`` is the independent paper model instead
(:mod:`~scheduling_opt.lease.exact_pulp`). Chronus §3.3.4. NP-hard.
"""

from __future__ import annotations

import time

import numpy as np

from scheduling_opt.exact import solve_pulp
from scheduling_opt.lease._schedule import Schedule
from scheduling_opt.lease.formulation import ExactOutcome, ModelConfig, build, run_exact
from scheduling_opt.lease.greedy import Hint
from scheduling_opt.lease.model import LeaseDecision, LeaseInput
from scheduling_opt.solution import Seed, Solution, Status, named, time_limit_of

__all__ = ["exact_cbc"]


def solve_on_cbc(
    inp: LeaseInput, config: ModelConfig, time_limit: float, hint: Schedule | None = None
) -> ExactOutcome:
    """Build the model and solve it on CBC (with ``hint`` as the start; no bound)."""
    import pulp

    started = time.perf_counter()  # building the model counts against the limit

    model = build(inp, config)
    if model.lay.size == 0:
        return ExactOutcome(Status.OPTIMAL, Schedule.empty(len(inp.jobs)), 0.0)
    prob = pulp.LpProblem("lease", pulp.LpMaximize)
    xs = [pulp.LpVariable(f"v{v}", 0, int(u), cat="Integer") for v, u in enumerate(model.ub)]
    prob += pulp.lpSum(w * xs[v] for v, w in enumerate(model.c) if w)
    for cols, coefs, lo, hi in model.rows:
        expr = pulp.lpSum(k * xs[v] for v, k in zip(cols, coefs, strict=True))
        if lo == hi:
            prob += expr == lo
            continue
        if lo > -np.inf:
            prob += expr >= lo
        if hi < np.inf:
            prob += expr <= hi
    if hint is not None:
        for var, value in zip(xs, model.values(hint), strict=True):
            var.setInitialValue(round(value))
    out = solve_pulp(prob, time_limit=time_limit, warm_start=hint is not None, started=started)
    schedule = None
    if out.has_solution:
        schedule = model.schedule(inp, [float(x.value() or 0.0) for x in xs])
    return ExactOutcome(out.status, schedule)


@named("exact-cbc")
def exact_cbc(
    inp: LeaseInput,
    *,
    seed: Seed = None,
    time_limit: float | None = None,
    hint: Hint | None = None,
    config: ModelConfig | None = None,
) -> Solution[LeaseDecision]:
    """The tightened MILP of ``exact`` on CBC (for the formulation study; ``bound`` None).

    Parameters
    ----------
    inp : LeaseInput
        The jobs, M and T_l.
    seed : int, numpy Generator or None
        Unused; accepted for the common calling convention.
    time_limit : float or None
        Seconds for CBC (None: the library default).
    hint : Mapping[str, Sequence[int]] or None
        A warm start (job id -> terms), repaired and given to CBC as a start.
    config : ModelConfig or None
        Formulation switches; None: the final model.

    Returns
    -------
    Solution[LeaseDecision]
        As :func:`~scheduling_opt.lease.exact.exact`, without a bound.

    Raises
    ------
    ValueError
        When ``time_limit`` is not a positive number.

    Examples
    --------
    >>> from scheduling_opt.model import Job, RewardStep
    >>> jobs = [Job(j, 4, 4, 1200.0, deadlines=(RewardStep(2400.0, v),)) for j, v in
    ...         (("a", 100), ("b", 90), ("c", 80))]
    >>> exact_cbc(LeaseInput(jobs, capacity=4, lease_length=1200.0)).objective
    190.0

    References
    ----------
    Chronus (SoCC '21) §3.3.4.
    """
    cfg = config or ModelConfig()
    limit = time_limit_of(time_limit)
    return run_exact(
        inp, lambda warm: solve_on_cbc(inp, cfg, limit, warm), hint, feasibility=cfg.feasibility
    )
