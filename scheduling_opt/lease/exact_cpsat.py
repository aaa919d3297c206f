"""The tightened lease MILP on OR-Tools CP-SAT (the ``exact-cpsat`` method).

The same model as ``exact`` (:mod:`~scheduling_opt.lease.formulation`), with
rewards scaled by :data:`CPSAT_SCALE` to integers, solved by CP-SAT's 8-worker
portfolio (interleaved, hence deterministic, by default) with a repaired
warm-start hint. Chronus §3.3.4. NP-hard; O(N (P + H))
variables and rows.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from scheduling_opt import exact as backends
from scheduling_opt.lease._schedule import Schedule
from scheduling_opt.lease.formulation import ExactOutcome, Model, ModelConfig, build, run_exact
from scheduling_opt.lease.greedy import Hint
from scheduling_opt.lease.model import LeaseDecision, LeaseInput
from scheduling_opt.solution import Seed, Solution, Status, as_rng, named, time_limit_of

__all__ = ["CPSAT_SCALE", "exact_cpsat"]

#: Workers of CP-SAT's portfolio (one worker failed to prove in 120 s what 8 prove in 0.3 s).
NUM_WORKERS = 8
#: CP-SAT needs integer objective coefficients: rewards are scaled by this.
CPSAT_SCALE = 1000


def _seed_of(seed: Seed) -> int:
    """CP-SAT's ``random_seed`` (a 31-bit int) from any seed argument."""
    rng = as_rng(seed)  # validates an int seed (>= 0) as everywhere else
    if isinstance(seed, np.random.Generator):
        return int(rng.integers(2**31 - 1))
    return int(seed or 0) % (2**31 - 1)


def _cp_model(model: Model, scaled: list[int]) -> tuple[Any, list[Any]]:
    from ortools.sat.python import cp_model

    cp = cp_model.CpModel()
    xs = [cp.new_int_var(0, int(u), f"v{v}") for v, u in enumerate(model.ub)]
    for cols, coefs, lo, hi in model.rows:
        expr = sum(round(k) * xs[v] for v, k in zip(cols, coefs, strict=True))
        if lo > -np.inf:
            cp.add(expr >= round(lo))
        if hi < np.inf:
            cp.add(expr <= round(hi))
    cp.maximize(sum(w * xs[v] for v, w in enumerate(scaled) if w))
    return cp, xs


def solve_on_cpsat(
    inp: LeaseInput,
    config: ModelConfig,
    time_limit: float,
    hint: Schedule | None = None,
    seed: int = 0,
    deterministic: bool = True,
) -> ExactOutcome:
    """Build the model and solve it on CP-SAT; the bound is CP-SAT's best bound, unscaled."""
    model = build(inp, config)
    if model.lay.size == 0:
        return ExactOutcome(Status.OPTIMAL, Schedule.empty(len(inp.jobs)), 0.0)
    scaled = [round(w * CPSAT_SCALE) for w in model.c]
    cp, xs = _cp_model(model, scaled)
    if hint is not None:
        for var, value in zip(xs, model.values(hint), strict=True):
            cp.add_hint(var, round(value))
    # One seed, one answer: the shared runner's interleaved search
    # unless the caller asks for the racing portfolio.
    out = backends.solve_cpsat(
        cp, time_limit=time_limit, num_workers=NUM_WORKERS, seed=seed, deterministic=deterministic
    )
    status, raw_bound = out.status, out.bound
    schedule = None
    if out.has_solution:
        schedule = model.schedule(inp, [float(out.solver.value(x)) for x in xs])
    bound = None
    if raw_bound is not None:
        # Rewards rounded to 1/CPSAT_SCALE may have lost up to half a unit
        # each; at most one level per job counts, so widening the bound by
        # N/2 units keeps it an upper bound on the true reward.
        rounded = any(abs(w * CPSAT_SCALE - k) > 1e-9 for w, k in zip(model.c, scaled, strict=True))
        bound = (raw_bound + (0.5 * len(inp.jobs) if rounded else 0.0)) / CPSAT_SCALE
    return ExactOutcome(status, schedule, bound)


@named("exact-cpsat")
def exact_cpsat(
    inp: LeaseInput,
    *,
    seed: Seed = None,
    time_limit: float | None = None,
    hint: Hint | None = None,
    config: ModelConfig | None = None,
    deterministic: bool = True,
) -> Solution[LeaseDecision]:
    """The same MILP as ``exact``, proven on CP-SAT (8 workers) with the repaired hint.

    Parameters
    ----------
    inp : LeaseInput
        The jobs, M and T_l.
    seed : int, numpy Generator or None
        CP-SAT's ``random_seed``.
    time_limit : float or None
        Seconds for CP-SAT (None: the library default).
    hint : Mapping[str, Sequence[int]] or None
        A warm start (job id -> terms), repaired into a feasible schedule and
        given to CP-SAT as a solution hint.
    config : ModelConfig or None
        Formulation switches; None: the final model.
    deterministic : bool
        CP-SAT's interleaved search (:func:`scheduling_opt.exact.solve_cpsat`):
        the same decision on every run with one seed (unless stopped by the
        time limit). False races the workers, often faster (c1-j6 seed 0:
        0.1 s against 2.3 s of CPU; c1-j10: slower) but free to return any
        of several optima (docs/lease.md).

    Returns
    -------
    Solution[LeaseDecision]
        ``optimal``; ``time_limit`` with the best of CP-SAT's incumbent, the
        hint and the greedy, and CP-SAT's best bound; ``infeasible`` (only
        under ``require_all``) when proven.

    Raises
    ------
    ValueError
        When ``time_limit`` is not a positive number.

    Examples
    --------
    >>> from scheduling_opt.model import Job, RewardStep
    >>> jobs = [Job(j, 4, 4, 1200.0, deadlines=(RewardStep(2400.0, v),)) for j, v in
    ...         (("a", 100), ("b", 90), ("c", 80))]
    >>> sol = exact_cpsat(LeaseInput(jobs, capacity=4, lease_length=1200.0), seed=1)
    >>> sol.status.value, sol.objective, sol.decision.selected
    ('optimal', 190.0, ('a', 'b'))

    References
    ----------
    Chronus (SoCC '21) §3.3.4, Eqs. (1)-(6).
    """
    cfg = config or ModelConfig()
    limit = time_limit_of(time_limit)
    cp_seed = _seed_of(seed)
    return run_exact(
        inp,
        lambda warm: solve_on_cpsat(inp, cfg, limit, warm, cp_seed, deterministic),
        hint,
        feasibility=cfg.feasibility,
    )
