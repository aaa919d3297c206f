"""The two-stage ``exact`` (levels with fractional terms, then their packing) vs its oracles.

Oracles: the whole MILP at once (``two_stage=False``, the old model), the
paper's model on CBC (``exact-pulp``) and the brute force of test_lease.py.
"""

from __future__ import annotations

import importlib

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from scheduling_opt import lease
from scheduling_opt.lease import LeaseInput, ModelConfig
from scheduling_opt.lease.formulation import build_levels, identical_pairs
from scheduling_opt.lease.io import generate, read
from scheduling_opt.model import Job, RewardStep
from scheduling_opt.solution import Status
from scheduling_opt.testing import tiny_lease_cases

from .test_lease import brute_force

exact_module = importlib.import_module("scheduling_opt.lease.exact")

LIMIT = 120.0  # generous: the shared machine is often loaded


@pytest.mark.slow
@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.integers(0, 10_000), st.sampled_from(["j6", "c1-j8", "c1-j10"]))
def test_two_stage_equals_the_whole_milp_and_the_paper_model(seed: int, size: str) -> None:
    inp = read(generate(size, seed))
    two = lease.exact(inp, time_limit=LIMIT, two_stage=True)
    one = lease.exact(inp, time_limit=LIMIT, two_stage=False)
    paper = lease.exact_pulp(inp, time_limit=LIMIT)
    for sol in (two, one, paper):
        lease.check(inp, sol)
    assert two.status is one.status is Status.OPTIMAL
    assert two.objective == pytest.approx(one.objective)
    assert two.bound == pytest.approx(two.objective)
    assert paper.objective is not None
    assert two.objective is not None
    if paper.status is Status.OPTIMAL:
        assert paper.objective == pytest.approx(two.objective)
    else:  # CBC stopped by the limit on a loaded machine: its answer is a lower bound
        assert paper.objective <= two.objective + 1e-9


def test_the_presolve_regression_instance() -> None:
    # generate("c1-j8", 424): HiGHS with presolve proved 500; CBC, CP-SAT and
    # HiGHS without presolve find 520 (docs/lease.md).
    inp = read(generate("c1-j8", 424))
    for two in (True, False, None):
        sol = lease.exact(inp, two_stage=two)
        assert (sol.status, sol.objective) == (Status.OPTIMAL, 520.0)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(tiny_lease_cases(), st.booleans())
def test_two_stage_equals_brute_force(case: tuple[list[Job], int], require_all: bool) -> None:
    jobs, gpus = case
    inp = LeaseInput(jobs, gpus, 1.0, require_all=require_all)
    expected = brute_force(jobs, gpus, 1.0, require_all=require_all)
    sol = lease.exact(inp, two_stage=True)
    lease.check(inp, sol)
    if expected is None:
        assert sol.status is Status.INFEASIBLE
    else:
        assert sol.status is Status.OPTIMAL
        assert sol.objective == pytest.approx(expected)


def test_identical_jobs_whose_levels_do_not_pack_are_cut_off(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # M = 3 GPUs, two terms (T_l = 1 s, deadline 2 s), three identical jobs of
    # 2 GPUs needing one term each, 100 each. With fractional terms all three
    # fit (each holds half of both terms: 3 x 2 x 0.5 = 3 GPUs per term; the
    # energy row of t = 2 reads 3 x 2 x 1 <= 3 x 2), so the levels stage
    # bounds the reward by 300. Integrally a term holds one such job (2 + 2 > 3):
    # two jobs, 200. The first choice does not pack and is cut off
    # (s_a + s_b + s_c <= 2); the next one packs: 200, bound 200 (not 300).
    jobs = [Job(j, 2, 2, 1.0, deadlines=(RewardStep(2.0, 100),)) for j in "abc"]
    inp = LeaseInput(jobs, 3, 1.0)
    sol = lease.exact(inp, two_stage=True)
    lease.check(inp, sol)
    assert (sol.status, sol.objective, sol.bound) == (Status.OPTIMAL, 200.0, 200.0)
    assert sol.message == "levels packed after 1 cut(s)"
    assert sorted(len(t) for t in sol.decision.terms.values()) == [0, 1, 1]  # type: ignore[union-attr]
    assert lease.upper_bound(inp) == pytest.approx(300.0)  # the LP sees the fractional packing
    # Without symmetry rows the same answer (the rows only order identical jobs).
    plain = lease.exact(inp, config=ModelConfig(symmetry=False), two_stage=True)
    assert (plain.status, plain.objective) == (Status.OPTIMAL, 200.0)
    # By default 3 jobs (< TWO_STAGE_MIN_JOBS) go to the whole MILP directly.
    direct = lease.exact(inp)
    assert (direct.objective, direct.bound, direct.message) == (200.0, 200.0, "")
    # With one round only, the whole MILP takes over after the failed packing.
    monkeypatch.setattr(exact_module, "PACKING_ROUNDS", 1)
    whole = lease.exact(inp, two_stage=True)
    assert (whole.status, whole.objective, whole.bound) == (Status.OPTIMAL, 200.0, 200.0)
    assert whole.message == "levels did not pack: whole MILP"


def test_require_all_with_no_packable_choice_is_infeasible() -> None:
    # The same three jobs under require_all: every level choice selects all
    # three, which fit fractionally but not integrally: the one choice is cut
    # off and the levels stage becomes infeasible, a proof (brute force agrees).
    jobs = [Job(j, 2, 2, 1.0, deadlines=(RewardStep(2.0, 100),)) for j in "abc"]
    inp = LeaseInput(jobs, 3, 1.0, require_all=True)
    assert brute_force(jobs, 3, 1.0, require_all=True) is None
    sol = lease.exact(inp, two_stage=True)
    lease.check(inp, sol)
    assert (sol.status, sol.objective, sol.message) == (
        Status.INFEASIBLE,
        None,
        "no choice of levels packs",
    )


def test_identical_jobs_that_pack_are_proven_by_the_levels_stage() -> None:
    # Same jobs, M = 4: two fit per term, the three need 3 of the 4 job-terms
    # of room (2 terms x 2 jobs): all three met, 300, proven by stage 1 (no message).
    jobs = [Job(j, 2, 2, 1.0, deadlines=(RewardStep(2.0, 100),)) for j in "abc"]
    inp = LeaseInput(jobs, 4, 1.0)
    sol = lease.exact(inp, two_stage=True)
    lease.check(inp, sol)
    assert (sol.status, sol.objective, sol.bound, sol.message) == (
        Status.OPTIMAL,
        300.0,
        300.0,
        "",
    )


def test_a_time_limit_answer_states_a_valid_bound() -> None:
    inp = read(generate("c4-j24", 3))
    best = lease.exact(inp, time_limit=LIMIT)
    assert best.status is Status.OPTIMAL
    quick = lease.exact(inp, time_limit=1e-3, two_stage=True)
    lease.check(inp, quick)
    assert quick.status in (Status.OPTIMAL, Status.TIME_LIMIT)
    assert quick.objective is not None
    assert best.objective is not None
    assert quick.objective <= best.objective + 1e-9
    if quick.bound is not None:
        assert quick.bound >= best.objective - 1e-6


def _fractional_packing_exists(inp: LeaseInput, dues: list[int | None]) -> bool:
    """An LP: y[i,k] in [0, 1] for k < due_i, sum_k y = RL_i, sum_i G_i y[i,k] <= M."""
    from scipy.optimize import linprog

    cols = [(i, k) for i, due in enumerate(dues) if due is not None for k in range(due)]
    if not cols:
        return True
    jobs = inp.lease_jobs
    a_eq = [
        [1.0 if c[0] == i else 0.0 for c in cols] for i, due in enumerate(dues) if due is not None
    ]
    b_eq = [float(jobs[i].terms) for i, due in enumerate(dues) if due is not None]
    terms = range(max(d for d in dues if d is not None))
    a_ub = [[float(jobs[c[0]].gpus) if c[1] == k else 0.0 for c in cols] for k in terms]
    b_ub = [float(inp.capacity)] * len(a_ub)
    res = linprog([0.0] * len(cols), A_ub=a_ub, b_ub=b_ub, A_eq=a_eq, b_eq=b_eq, bounds=(0.0, 1.0))
    return bool(res.status == 0)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(tiny_lease_cases(max_jobs=5), st.data())
def test_energy_rows_hold_exactly_when_a_fractional_packing_exists(
    case: tuple[list[Job], int], data: st.DataObject
) -> None:
    # The levels-only model's energy rows are the projection of the fractional
    # packing (max-flow min-cut over prefix cuts): for any choice of levels,
    # the rows hold iff the transportation LP above is feasible.
    jobs, gpus = case
    inp = LeaseInput(jobs, gpus, 1.0)
    model = build_levels(inp)
    s = np.zeros(model.lay.size)
    dues: list[int | None] = []
    for job, cols in zip(inp.lease_jobs, model.lay.s, strict=True):
        pos = data.draw(st.sampled_from([None, *range(len(job.levels))]))
        dues.append(None if pos is None else job.levels[pos].due)
        if pos is not None:
            s[cols[pos]] = 1.0
    rows_hold = all(
        lo - 1e-9 <= sum(coef * s[c] for c, coef in zip(cols_, coefs, strict=True)) <= hi + 1e-9
        for cols_, coefs, lo, hi in model.rows
    )
    # Symmetry rows order identical jobs' levels: compare on choices they allow.
    symmetric = {(a, b) for a, b in identical_pairs(inp)}
    ranks = [
        0 if d is None else len(j.levels) - [lv.due for lv in j.levels].index(d)
        for j, d in zip(inp.lease_jobs, dues, strict=True)
    ]
    if any(ranks[a] < ranks[b] for a, b in symmetric):
        return
    assert rows_hold == _fractional_packing_exists(inp, dues)
