"""The lease package's one-shape API: typed input from model objects, Solution, bounds, refusals."""

from __future__ import annotations

import math
from typing import Any

import pytest

from scheduling_opt import lease
from scheduling_opt.errors import InvalidInstanceError, VerificationError
from scheduling_opt.io.instance import from_dict
from scheduling_opt.lease import LeaseDecision, LeaseInput
from scheduling_opt.lease.io import encode, generate, generate_lease, read
from scheduling_opt.model import Job, RewardStep
from scheduling_opt.solution import Solution, Status


def job(jid: str, gpus: int, terms: float, steps: list[tuple[float, float]]) -> Job:
    """A job in lease-length units (T_l = 1 s)."""
    return Job(jid, gpus, gpus, float(terms), deadlines=tuple(RewardStep(t, v) for t, v in steps))


#: docs/lease.md's hand example built from model objects: 8 GPUs, b (4 GPUs, 1 term)
#: earns 100 only in term 0; a (8 GPUs, 2 terms by term 4) and c (4 GPUs, 3 terms by
#: term 3) cannot both run, so b + a = 200 is the optimum (b + c = 190).
HAND = [
    job("a", 8, 2, [(4, 100)]),
    job("b", 4, 1, [(1, 100), (2, 80), (3, 50)]),
    job("c", 4, 3, [(3, 90)]),
]


def test_input_from_model_objects_gives_a_full_solution() -> None:
    inp = LeaseInput(HAND, capacity=8, lease_length=1.0)
    sol = lease.exact(inp, time_limit=30)
    assert sol.status is Status.OPTIMAL
    assert sol.objective == 200.0
    assert sol.bound == pytest.approx(200.0)
    assert sol.gap == 0.0
    assert sol.seconds > 0
    assert isinstance(sol.decision, LeaseDecision)
    assert sol.decision.selected == ("a", "b")
    assert dict(sol.decision.terms) == {"a": (1, 2), "b": (0,), "c": ()}
    assert sol.decision.reward == 200.0
    lease.check(inp, sol)
    for method in (lease.greedy, lease.edf):
        heuristic = method(inp)
        assert heuristic.status is Status.FEASIBLE
        assert heuristic.objective == 190.0
        assert heuristic.bound is None  # the LP bound costs more than the heuristic


def test_bounds_lie_above_the_optimum() -> None:
    inp = read(generate("c2-j12", 7))
    best = lease.exact_pulp(inp, time_limit=30)  # the independent model
    assert best.status is Status.OPTIMAL
    assert best.objective is not None
    upper = lease.upper_bound(inp)
    assert upper >= best.objective - 1e-6
    assert lease.greedy(inp).objective <= upper + 1e-6  # type: ignore[operator]
    for method in (lease.exact, lease.exact_cpsat):
        sol = method(inp, time_limit=30)
        assert sol.objective == pytest.approx(best.objective)
        assert sol.bound is not None
        assert sol.bound >= best.objective - 1e-6
    # LP bound on the hand example: at least the optimum, at most every job's best reward
    hand = LeaseInput(HAND, 8, 1.0)
    assert 200.0 - 1e-6 <= lease.upper_bound(hand) <= 290.0 + 1e-6


def test_exact_under_a_tiny_time_limit_reports_its_bound_honestly() -> None:
    # synth-p4-1 of docs/lease.md: optimum 17110, proven by HiGHS without a limit.
    hard = read(generate_lease(120, 200, 1, pressure=4.0))
    for method in (lease.exact, lease.exact_cpsat):
        quick = method(hard, time_limit=0.05)
        assert quick.status in (Status.TIME_LIMIT, Status.OPTIMAL)
        assert quick.objective is not None
        assert quick.objective <= 17110 + 1e-6
        if quick.bound is not None:
            assert quick.bound >= 17110 - 1e-6
            assert quick.gap is not None
            assert quick.gap >= 0
        lease.check(hard, quick)


@pytest.mark.parametrize(
    ("kwargs", "field"),
    [
        ({"capacity": -1}, "capacity"),
        ({"capacity": 2.5}, "capacity"),
        ({"lease_length": 0.0}, "lease_length"),
        ({"lease_length": math.nan}, "lease_length"),
        ({"max_terms": 0}, "max_terms"),
        ({"require_all": "yes"}, "require_all"),
        ({"round_up": 1}, "round_up"),
        ({"jobs": [HAND[0], "b"]}, "jobs[1]"),
        ({"jobs": [HAND[0], HAND[0]]}, "jobs[1].id"),
        ({"jobs": [Job("x", 1, 1, 1.0)]}, "jobs[0].deadlines"),
        ({"jobs": [job("x", 1, 1, [(1, 10), (2, 50)])]}, "jobs[0].deadlines[1].reward"),
        ({"jobs": [job("x", 1, 1, [(1e9, 10)])]}, "jobs[0].deadlines[0].time"),
    ],
)
def test_bad_constructor_arguments_name_the_field(kwargs: dict[str, Any], field: str) -> None:
    args: dict[str, Any] = {"jobs": HAND, "capacity": 8, "lease_length": 1.0} | kwargs
    with pytest.raises(InvalidInstanceError) as err:
        LeaseInput(**args)
    assert err.value.path == field
    assert "\n" not in str(err.value)


def test_a_job_larger_than_the_cluster_is_refused_not_left_out() -> None:
    big = job("big", 9, 1, [(2, 100)])
    with pytest.raises(InvalidInstanceError, match="'big' needs 9 GPUs") as err:
        LeaseInput([HAND[1], big], 8, 1.0)
    assert err.value.path == "jobs[1]"
    # Eq. (6) charges 12 GPUs as 16: more than a 12-GPU cluster under round_up only
    twelve = job("twelve", 12, 1, [(2, 100)])
    assert LeaseInput([twelve], 12, 1.0).lease_jobs[0].gpus == 12
    with pytest.raises(InvalidInstanceError, match="rounded up to 16"):
        LeaseInput([twelve], 12, 1.0, round_up=True)
    # in a file, the error names the job's index in the file
    doc = _doc(jobs=["a"])
    doc["jobs"][0]["workers"] = 9
    with pytest.raises(InvalidInstanceError) as err:
        read(from_dict(doc))
    assert err.value.path == "jobs[0]"
    # admission: a candidate bigger than M is a proven "no", not an error
    verdict = lease.admit_jobs([HAND[1]], big, 8, 1.0)
    assert not verdict.admitted
    assert verdict.status is Status.INFEASIBLE


def _doc(**params: Any) -> dict[str, Any]:
    return {
        "format": "scheduling-opt/v1",
        "problem": "lease",
        "cluster": {
            "gpu_types": [{"name": "V100"}],
            "servers": [{"id": "s1", "gpu_type": "V100", "gpus": 8}],
        },
        "jobs": [
            {"id": "a", "workers": 2, "duration": 600, "deadlines": [{"time": 1200, "reward": 9}]}
        ],
        "params": {"lease_length": 1200} | params,
    }


@pytest.mark.parametrize(
    ("jobs", "path"),
    [([["a"]], "params.jobs[0]"), ([{"id": "a"}], "params.jobs[0]"), ({"a": 1}, "params.jobs")],
)
def test_params_jobs_of_the_wrong_shape_is_one_line_error(jobs: Any, path: str) -> None:
    with pytest.raises(InvalidInstanceError) as err:
        read(from_dict(_doc(jobs=jobs)))
    assert err.value.path == path
    assert "\n" not in str(err.value)


def test_exact_cpsat_gives_one_decision_per_seed() -> None:
    # Many optima: eight 10-reward jobs of 1-4 GPUs, 2 terms before the deadline, M = 4;
    # c1-j10 seed 1 gave 4 different optimal decisions in 6 runs of CP-SAT's racing
    # 8-worker portfolio with one seed (issue 17, item 15).
    ties = [job(f"t{i}", 1 + i % 4, 1 + i % 2, [(2, 10)]) for i in range(8)]
    inputs = [LeaseInput(ties, 4, 1.0), read(generate("c1-j10", 1))]
    for inp in inputs:
        runs = [lease.exact_cpsat(inp, seed=5, time_limit=30) for _ in range(5)]
        assert all(r.status is Status.OPTIMAL for r in runs)
        first = runs[0].decision
        assert first is not None
        assert all(encode(r.decision) == encode(first) for r in runs if r.decision is not None)


def test_checker_rejects_dishonest_claims() -> None:
    inp = LeaseInput(HAND, 8, 1.0)
    good = lease.exact(inp)
    assert good.decision is not None
    for bad in (
        good.with_(objective=math.nan),
        good.with_(objective=math.inf),
        good.with_(bound=150.0),  # a bound below the decision's own reward
        good.with_(decision=LeaseDecision(good.decision.levels, good.decision.terms, 210.0)),
    ):
        with pytest.raises(VerificationError):
            lease.check(inp, bad)
    # infeasible under require_all, although every job fits at once from term 0
    fits = LeaseInput([HAND[1], job("d", 4, 1, [(3, 5)])], 8, 1.0, require_all=True)
    lease.check(fits, lease.exact(fits))
    with pytest.raises(VerificationError, match="fits at once"):
        lease.check(fits, Solution(Status.INFEASIBLE, None, None))


def test_highs_does_not_cut_off_the_optimum() -> None:
    # With HiGHS' presolve on, `exact` proved 500 "optimal" here; CBC on the
    # independent paper model (and CP-SAT) find 520.
    inp = read(generate("c1-j8", 424))
    reference = lease.exact_pulp(inp, time_limit=30)
    assert reference.status is Status.OPTIMAL
    assert reference.objective == 520.0
    sol = lease.exact(inp, time_limit=30)
    assert sol.status is Status.OPTIMAL
    assert sol.objective == 520.0
    assert sol.bound is not None
    assert sol.bound >= 520.0 - 1e-6
    assert lease.upper_bound(inp) >= 520.0 - 1e-6
