"""MCKP: dp = HiGHS = CBC = CP-SAT = brute force; greedy is feasible and never better."""

from __future__ import annotations

import itertools
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from scheduling_opt.errors import InvalidInstanceError, VerificationError
from scheduling_opt.instance import load, loads
from scheduling_opt.result import SolveOptions, Status
from scheduling_opt.solvers import knapsack as kn
from scheduling_opt.solvers.registry import get_problem

INSTANCES = Path(__file__).resolve().parent.parent / "instances"
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
    dp = kn.solve_dp(p)
    greedy = kn.solve_greedy(p)
    assert dp.objective == pytest.approx(best, abs=1e-9)
    assert dp.status == Status.OPTIMAL
    assert greedy.objective <= dp.objective + 1e-9
    assert greedy.weight <= p.capacity
    assert kn.lp_bound(p) >= best - 1e-9
    PROBLEM.check(p, dp)
    PROBLEM.check(p, greedy)


@settings(max_examples=30, deadline=None)
@given(small)
def test_exact_backends_agree_with_brute_force(p: kn.Mckp) -> None:
    best = brute_force(p)
    for solve in (kn.solve_highs, kn.solve_cbc, kn.solve_cpsat_model):
        got = solve(p, time_limit=20)
        assert got.status == Status.OPTIMAL
        assert got.objective == pytest.approx(best, abs=1e-9)
        PROBLEM.check(p, got)


@settings(max_examples=50, deadline=None)
@given(
    st.integers(1, 40),
    st.integers(1, 6),
    st.integers(0, 200),
    st.sampled_from(kn.KINDS),
    st.integers(0, 10**6),
)
def test_dp_equals_highs_on_random_classes(n: int, k: int, cap: int, kind: str, seed: int) -> None:
    p = kn.random_mckp(n, k, cap, kind, seed)
    dp, milp = kn.solve_dp(p), kn.solve_highs(p, time_limit=20)
    assert milp.status == Status.OPTIMAL
    assert dp.objective == pytest.approx(milp.objective, rel=1e-9, abs=1e-9)
    assert dp.weight <= cap


@pytest.mark.parametrize("budget", [64, 1 << 30])
def test_checkpointed_reconstruction_matches(budget: int) -> None:
    p = kn.random_mckp(120, 8, 500, "weak", 3)
    padded = kn._pad(p)
    keep = kn._fix(padded, p.capacity)
    choice = kn._dp(padded, keep, p.capacity, budget)
    value, weight = kn.evaluate(p, choice)
    assert weight <= p.capacity
    assert value == pytest.approx(kn.solve_highs(p).objective, rel=1e-12)


def test_aryl_table3_and_figure6_instances() -> None:
    # Table 2's jobs with 4 GPUs left after base demand: A +3 workers, B +1 (90 + 20).
    t3 = PROBLEM.parse(load(INSTANCES / "mckp-aryl-table3.json"))
    assert kn.solve_dp(t3).choice == (2, 0)
    assert kn.solve_dp(t3).objective == 110
    # Figure 6: A's item (2 GPUs, 50) plus B's +2 workers (2 GPUs, 30).
    f6 = PROBLEM.parse(load(INSTANCES / "mckp-aryl-figure6.json"))
    best = kn.solve_dp(f6)
    assert (best.choice, best.objective, best.weight) == ((0, 1), 80, 4)


def test_edge_cases_zero_weight_negative_empty() -> None:
    p = PROBLEM.parse(load(INSTANCES / "mckp-edge-cases.json"))
    for method in PROBLEM.methods:
        got = method.run(p, SolveOptions(time_limit=20))
        PROBLEM.check(p, got)
        assert got.objective == pytest.approx(brute_force(p))
    assert kn.solve_dp(p).choice == (None, 0, None, 0)
    assert kn.solve_dp(p.with_capacity(0)).objective == 2.5
    assert kn.solve_dp(kn.Mckp.from_groups([], 5)).choice == ()
    assert kn.solve_dp([[(1, -3.0)], []], 10).choice == (None, None)


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


def test_checker_catches_overweight_and_wrong_objective() -> None:
    p = kn.Mckp.from_groups([[(3, 5.0)], [(2, 4.0)]], 4)
    bad = kn.MckpSolution((0, 0), 9.0, 5, Status.FEASIBLE, 0.0)
    with pytest.raises(VerificationError, match="exceeds"):
        PROBLEM.check(p, bad)
    lie = kn.MckpSolution((0, None), 6.0, 3, Status.FEASIBLE, 0.0)
    with pytest.raises(VerificationError, match="objective"):
        PROBLEM.check(p, lie)


def test_cpsat_reports_feasible_when_scaling_is_lossy() -> None:
    p = kn.Mckp.from_groups([[(1, 1 / 3)], [(1, 2 / 7)]], 1)
    got = kn.solve_cpsat_model(p, time_limit=10)
    assert got.status == Status.FEASIBLE
    assert got.objective == pytest.approx(1 / 3)


def test_generate_is_seeded_and_quick_suite_runs() -> None:
    for size in PROBLEM.sizes["quick"]:
        a, b = PROBLEM.generate(size, 7), PROBLEM.generate(size, 7)  # type: ignore[misc]
        assert a == b
        p = PROBLEM.parse(a)
        values = {m.name: m.run(p, SolveOptions(time_limit=20)) for m in PROBLEM.methods}
        for r in values.values():
            PROBLEM.check(p, r)
        assert values["exact"].objective == pytest.approx(values["dp"].objective)
    with pytest.raises(InvalidInstanceError):
        PROBLEM.generate("big", 0)  # type: ignore[misc]


def test_inputs_not_mutated_and_deterministic() -> None:
    p = kn.random_mckp(50, 6, 100, "uncorrelated", 1)
    w, v = p.weights.copy(), p.values.copy()
    first, second = kn.solve_dp(p), kn.solve_dp(p)
    assert first.choice == second.choice
    assert np.array_equal(w, p.weights)
    assert np.array_equal(v, p.values)
