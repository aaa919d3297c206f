"""MCKP: dp = HiGHS = CBC = CP-SAT = brute force; greedy is feasible and never better."""

from __future__ import annotations

import itertools
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from scheduling_opt import mckp as kn
from scheduling_opt.errors import InvalidInstanceError, VerificationError
from scheduling_opt.io.instance import load, loads
from scheduling_opt.mckp._reduce import fix, pad
from scheduling_opt.mckp.dp import dp_choice
from scheduling_opt.mckp.io import KINDS, random_mckp
from scheduling_opt.registry import get_problem
from scheduling_opt.solution import Solution, Status

INSTANCES = Path(__file__).resolve().parent.parent.parent / "instances"
PROBLEM = get_problem("mckp")


def brute_force(p: kn.Mckp) -> float:
    best = 0.0
    options = [[None, *range(int(k))] for k in p.sizes()]
    for choice in itertools.product(*options):
        value, weight = kn.evaluate(p, choice)
        if weight <= p.capacity:
            best = max(best, value)
    return best


items = st.tuples(st.integers(0, 9), st.integers(-5, 20).map(float))
small = st.tuples(st.lists(st.lists(items, max_size=4), max_size=5), st.integers(0, 20)).map(
    lambda t: kn.Mckp.from_groups(t[0], t[1])
)


@settings(max_examples=100, deadline=None)
@given(small)
def test_dp_and_greedy_against_brute_force(p: kn.Mckp) -> None:
    best = brute_force(p)
    dp = kn.dp(p)
    greedy = kn.greedy(p)
    assert dp.objective == pytest.approx(best, abs=1e-9)
    assert dp.status == Status.OPTIMAL
    assert greedy.objective is not None
    assert dp.objective is not None
    assert greedy.objective <= dp.objective + 1e-9
    assert greedy.decision is not None
    assert greedy.decision.weight <= p.capacity
    assert kn.lp_bound(p) >= best - 1e-9
    # the greedy's certified bound sits above the optimum, hence above its own value
    assert greedy.bound is not None
    assert greedy.bound >= best - 1e-9
    PROBLEM.check(p, dp)
    PROBLEM.check(p, greedy)


@settings(max_examples=30, deadline=None)
@given(small)
def test_exact_backends_agree_with_brute_force(p: kn.Mckp) -> None:
    best = brute_force(p)
    for solve in (kn.exact, kn.exact_pulp, kn.exact_cpsat):
        got = solve(p, time_limit=20)
        assert got.status == Status.OPTIMAL
        assert got.objective == pytest.approx(best, abs=1e-9)
        PROBLEM.check(p, got)


@settings(max_examples=50, deadline=None)
@given(
    st.integers(1, 40),
    st.integers(1, 6),
    st.integers(0, 200),
    st.sampled_from(KINDS),
    st.integers(0, 10**6),
)
def test_dp_equals_highs_on_random_classes(n: int, k: int, cap: int, kind: str, seed: int) -> None:
    p = random_mckp(n, k, cap, kind, seed)
    dp, milp = kn.dp(p), kn.exact(p, time_limit=20)
    assert milp.status == Status.OPTIMAL
    assert dp.objective == pytest.approx(milp.objective, rel=1e-9, abs=1e-9)
    assert dp.decision is not None
    assert dp.decision.weight <= cap


@pytest.mark.parametrize("budget", [64, 1 << 30])
def test_checkpointed_reconstruction_matches(budget: int) -> None:
    p = random_mckp(120, 8, 500, "weak", 3)
    padded = pad(p)
    keep = fix(padded, p.capacity)
    choice = dp_choice(padded, keep, p.capacity, budget)
    value, weight = kn.evaluate(p, choice)
    assert weight <= p.capacity
    assert value == pytest.approx(kn.exact(p).objective, rel=1e-12)


def test_aryl_table3_and_figure6_instances() -> None:
    # Table 2's jobs with 4 GPUs left after base demand: A +3 workers, B +1 (90 + 20).
    t3 = PROBLEM.parse(load(INSTANCES / "mckp-aryl-table3.json"))
    sol = kn.dp(t3)
    assert sol.decision is not None
    assert sol.decision.choice == (2, 0)
    assert sol.objective == 110
    # Figure 6: A's item (2 GPUs, 50) plus B's +2 workers (2 GPUs, 30).
    f6 = PROBLEM.parse(load(INSTANCES / "mckp-aryl-figure6.json"))
    best = kn.dp(f6)
    assert best.decision is not None
    assert (best.decision.choice, best.objective, best.decision.weight) == ((0, 1), 80, 4)


def test_edge_cases_zero_weight_negative_empty() -> None:
    p = PROBLEM.parse(load(INSTANCES / "mckp-edge-cases.json"))
    for method in PROBLEM.methods:
        got = method.run(p, time_limit=20)
        PROBLEM.check(p, got)
        assert got.objective == pytest.approx(brute_force(p))
    assert _choice(kn.dp(p)) == (None, 0, None, 0)
    assert kn.dp(p.with_capacity(0)).objective == 2.5
    assert _choice(kn.dp(kn.Mckp.from_groups([], 5))) == ()
    assert _choice(kn.dp(kn.as_mckp([[(1, -3.0)], []], 10))) == (None, None)


def _choice(sol: Solution[kn.MckpDecision]) -> tuple[int | None, ...]:
    assert sol.decision is not None
    return sol.decision.choice


@pytest.mark.parametrize(
    ("text", "path"),
    [
        ('"capacity": -1, "groups": []', "capacity"),
        ('"capacity": 1.5, "groups": []', "capacity"),
        (
            '"capacity": 3, "groups": [[{"weight": 1, "value": 2}], [{"weight": -2, "value": 1}]]',
            "groups[1][0].weight",
        ),
        ('"capacity": 3, "groups": [[{"weight": 1}]]', "groups[0][0].value"),
        ('"capacity": 3, "groups": [[{"weight": 1, "value": "x"}]]', "groups[0][0].value"),
        ('"capacity": 3, "groups": {}', "groups"),
        ('"capacity": 3, "groups": [[{"weight": 1, "value": 1, "x": 0}]]', "groups[0][0].x"),
        ('"groups": []', "capacity"),
    ],
)
def test_invalid_instances_rejected(text: str, path: str) -> None:
    doc = '{"format": "scheduling-opt/v1", "problem": "mckp", ' + text + "}"
    with pytest.raises(InvalidInstanceError) as err:
        PROBLEM.parse(loads(doc))
    assert err.value.path == path


def test_nan_value_rejected_by_model() -> None:
    with pytest.raises(InvalidInstanceError, match=r"groups\[0\]\[1\].value"):
        kn.Mckp.from_groups([[(1, 1.0), (2, float("nan"))]], 3)


def _sol(
    choice: tuple[int | None, ...], objective: float, weight: int
) -> Solution[kn.MckpDecision]:
    return Solution(Status.FEASIBLE, objective, kn.MckpDecision(choice, weight, objective))


def test_checker_catches_overweight_and_wrong_objective() -> None:
    p = kn.Mckp.from_groups([[(3, 5.0)], [(2, 4.0)]], 4)
    with pytest.raises(VerificationError, match="exceeds"):
        PROBLEM.check(p, _sol((0, 0), 9.0, 5))
    with pytest.raises(VerificationError, match="objective"):
        PROBLEM.check(p, _sol((0, None), 6.0, 3))


def test_cpsat_reports_feasible_when_scaling_is_lossy() -> None:
    p = kn.Mckp.from_groups([[(1, 1 / 3)], [(1, 2 / 7)]], 1)
    got = kn.exact_cpsat(p, time_limit=10)
    assert got.status == Status.FEASIBLE
    assert got.objective == pytest.approx(1 / 3)
    # the widened bound still covers the true optimum (1/3, by hand)
    assert got.bound is not None
    assert got.bound >= 1 / 3


def test_generate_is_seeded_and_quick_suite_runs() -> None:
    assert PROBLEM.generate is not None
    for size in PROBLEM.sizes["quick"]:
        a, b = PROBLEM.generate(size, 7), PROBLEM.generate(size, 7)
        assert a == b
        p = PROBLEM.parse(a)
        values = {m.name: m.run(p, time_limit=20) for m in PROBLEM.methods}
        for r in values.values():
            PROBLEM.check(p, r)
        assert values["exact"].objective == pytest.approx(values["dp"].objective)
    with pytest.raises(InvalidInstanceError):
        PROBLEM.generate("big", 0)


def test_inputs_not_mutated_and_deterministic() -> None:
    p = random_mckp(50, 6, 100, "uncorrelated", 1)
    w, v = p.weights.copy(), p.values.copy()
    first, second = kn.dp(p), kn.dp(p)
    assert _choice(first) == _choice(second)
    assert np.array_equal(w, p.weights)
    assert np.array_equal(v, p.values)


# --------------------------------------------------------------------------- the new API


def test_solution_shape_from_plain_groups() -> None:
    # by hand: capacity 3 takes (2, 90) + (1, 20) = 110; (3, 100) alone is worse
    p = kn.as_mckp([[(1, 60.0), (2, 90.0), (3, 100.0)], [(1, 20.0), (2, 30.0)]], 3)
    sol = kn.dp(p)
    assert sol.status is Status.OPTIMAL
    assert sol.objective == 110.0
    assert sol.bound == 110.0
    assert sol.gap == 0.0
    assert sol.seconds >= 0.0
    assert sol.decision == kn.MckpDecision((1, 0), 3, 110.0)


def test_greedy_bound_is_the_lp_bound_above_the_optimum() -> None:
    # by hand: two items of weight 2 (values 3, 2), capacity 3: optimum 3, LP 3 + 2 * 1/2 = 4
    p = kn.Mckp.from_groups([[(2, 3.0)], [(2, 2.0)]], 3)
    sol = kn.greedy(p)
    assert sol.status is Status.FEASIBLE
    assert (sol.objective, sol.bound) == (3.0, 4.0)
    assert sol.gap == pytest.approx(0.25)


def test_exact_under_a_tiny_time_limit_reports_its_bound_honestly() -> None:
    p = random_mckp(400, 16, 3000, "strong", 0)
    best = kn.dp(p).objective
    assert best is not None
    got = kn.exact(p, time_limit=0.01)
    PROBLEM.check(p, got)
    assert got.objective is not None
    assert got.objective <= best + 1e-6
    if got.status is Status.OPTIMAL:
        assert got.objective == pytest.approx(best)
    else:
        assert got.status is Status.TIME_LIMIT
        assert got.bound is None or got.bound >= best - 1e-6


def _ints(n: int) -> kn.model.IntArray:
    return np.zeros(n, np.int64)


@pytest.mark.parametrize(
    ("make", "field"),
    [
        (lambda: kn.Mckp(-1, _ints(0), np.zeros(0), _ints(1)), "capacity"),
        (lambda: kn.Mckp(True, _ints(0), np.zeros(0), _ints(1)), "capacity"),
        (lambda: kn.Mckp(1, _ints(1), np.zeros(1), np.array([0, 2], np.int64)), "offsets"),
        (
            lambda: kn.Mckp.from_groups([[(1.5, 1.0)]], 3),  # type: ignore[list-item]
            "groups[0][0].weight",
        ),
        (lambda: kn.Mckp.from_arrays([[1]], [[1.0, 2.0]], 3), "groups[0]"),
        (lambda: kn.Mckp.from_groups([[(1, 9e307)], [(1, 9e307)]], 3), "values"),
        (lambda: kn.as_mckp([[(1, 1.0)]]), "capacity"),
    ],
)
def test_bad_constructor_arguments_name_the_field(make: object, field: str) -> None:
    with pytest.raises(InvalidInstanceError) as err:
        make()  # type: ignore[operator]
    assert err.value.path == field


def test_encode_keeps_the_old_decision_keys() -> None:
    from scheduling_opt.mckp.io import encode

    p = kn.as_mckp([[(1, 2.0)], [(5, 1.0)]], 3)
    assert encode(kn.dp(p).decision) == {"choice": [0, None], "objective": 2.0, "weight": 1}  # type: ignore[arg-type]


def test_checker_rejects_missing_decision_and_low_bound() -> None:
    p = kn.as_mckp([[(1, 2.0)]], 3)
    with pytest.raises(VerificationError, match="no decision"):
        PROBLEM.check(p, Solution(Status.INFEASIBLE, None, None))
    with pytest.raises(VerificationError, match="bound"):
        PROBLEM.check(p, Solution(Status.FEASIBLE, 2.0, kn.MckpDecision((0,), 1, 2.0), bound=1.0))
    with pytest.raises(VerificationError, match="finite"):
        PROBLEM.check(p, Solution(Status.FEASIBLE, float("nan"), kn.MckpDecision((0,), 1, 2.0)))
