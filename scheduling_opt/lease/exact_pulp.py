"""The lease problem written again, independently, as the paper states it (``exact-pulp``).

Binaries x[i,k] for every term k < H and s[i,p]: Eq. (3) with G_i (not R_i)
per term; Eq. (4) linearized as sum_{k < DL_p} x[i,k] >= RL_i s[i,p]; at
most RL_i terms, none unless selected; Eq. (5) as <= 1 (= 1 with
``require_all``). Objective (1). Built from the jobs in lease terms only, not
from :mod:`~scheduling_opt.lease.formulation`, and solved by CBC, so it checks
the tightened model. Chronus §3.3.4. NP-hard; O(N H) variables and rows.
"""

from __future__ import annotations

import time

from scheduling_opt.exact import solve_pulp
from scheduling_opt.lease._schedule import Schedule, relevel
from scheduling_opt.lease.formulation import ExactOutcome, run_exact
from scheduling_opt.lease.greedy import Hint
from scheduling_opt.lease.model import LeaseDecision, LeaseInput
from scheduling_opt.solution import Seed, Solution, Status, named, time_limit_of

__all__ = ["exact_pulp", "solve_paper_model"]


def solve_paper_model(
    inp: LeaseInput, *, time_limit: float, hint: Schedule | None = None
) -> ExactOutcome:
    """The paper's formulation on CBC (no bound: PuLP exposes none)."""
    import pulp

    started = time.perf_counter()  # building the model counts against the limit

    jobs = inp.lease_jobs
    horizon = inp.horizon
    prob = pulp.LpProblem("lease_paper", pulp.LpMaximize)
    x = {
        (i, k): pulp.LpVariable(f"x_{i}_{k}", cat="Binary")
        for i, job in enumerate(jobs)
        if job.levels
        for k in range(horizon)
    }
    s = {
        (i, p): pulp.LpVariable(f"s_{i}_{p}", cat="Binary")
        for i, job in enumerate(jobs)
        for p in range(len(job.levels))
    }
    if not s:
        return ExactOutcome(Status.OPTIMAL, Schedule.empty(len(jobs)), 0.0)
    prob += pulp.lpSum(jobs[i].levels[p].reward * v for (i, p), v in s.items())
    for k in range(horizon):
        prob += (
            pulp.lpSum(jobs[i].gpus * x[i, k] for i, job in enumerate(jobs) if job.levels)
            <= inp.capacity
        )
    for i, job in enumerate(jobs):
        if not job.levels:
            continue
        chosen = pulp.lpSum(s[i, p] for p in range(len(job.levels)))
        prob += (chosen == 1) if inp.require_all else (chosen <= 1)
        prob += pulp.lpSum(x[i, k] for k in range(horizon)) <= job.terms * chosen
        for p, lv in enumerate(job.levels):
            prob += pulp.lpSum(x[i, k] for k in range(lv.due)) >= job.terms * s[i, p]
    if hint is not None:
        for (i, k), var in x.items():
            var.setInitialValue(1 if k in hint.terms[i] else 0)
        for (i, p), var in s.items():
            var.setInitialValue(1 if hint.levels[i] == p else 0)
    out = solve_pulp(prob, time_limit=time_limit, warm_start=hint is not None, started=started)
    if not out.has_solution:
        return ExactOutcome(out.status, None)
    held = [
        [k for k in range(horizon) if (i, k) in x and (x[i, k].value() or 0) > 0.5]
        for i in range(len(jobs))
    ]
    # A job holding RL_i terms without s set still meets its deadline; relevel
    # reads the level from the terms, so only selected jobs keep theirs.
    for i, job in enumerate(jobs):
        if not any((s[i, p].value() or 0) > 0.5 for p in range(len(job.levels))):
            held[i] = []
    return ExactOutcome(out.status, relevel(inp, held))


@named("exact-pulp")
def exact_pulp(
    inp: LeaseInput,
    *,
    seed: Seed = None,
    time_limit: float | None = None,
    hint: Hint | None = None,
) -> Solution[LeaseDecision]:
    """The paper's formulation, written independently in PuLP and solved by CBC.

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

    Returns
    -------
    Solution[LeaseDecision]
        ``optimal``; ``time_limit`` with the best of CBC's incumbent, the hint
        and the greedy (``bound`` None: PuLP exposes no dual bound);
        ``infeasible`` (only under ``require_all``) when CBC proves it.

    Raises
    ------
    ValueError
        When ``time_limit`` is not a positive number.

    Examples
    --------
    >>> from scheduling_opt.model import Job, RewardStep
    >>> jobs = [Job(j, 4, 4, 1200.0, deadlines=(RewardStep(2400.0, v),)) for j, v in
    ...         (("a", 100), ("b", 90), ("c", 80))]
    >>> sol = exact_pulp(LeaseInput(jobs, capacity=4, lease_length=1200.0))
    >>> sol.status.value, sol.objective
    ('optimal', 190.0)

    References
    ----------
    Chronus (SoCC '21) §3.3.4, Eqs. (1)-(5).
    """
    limit = time_limit_of(time_limit)
    return run_exact(inp, lambda warm: solve_paper_model(inp, time_limit=limit, hint=warm), hint)
