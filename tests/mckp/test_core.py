"""MCKP ``core`` (Pisinger's minimal algorithm) and the numpy LP pass (issue 25).

Expected values come from brute force (tiny instances), from the capacity DP
``dp`` (an independent exact method sharing no code with ``core``), from
HiGHS' LP relaxation, from the old plain-Python greedy (tests/mckp/reference.py)
and from hand computation written out below.
"""

from __future__ import annotations

import time

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from scheduling_opt import mckp as kn
from scheduling_opt.mckp._core import CoreSearch, Precision
from scheduling_opt.mckp._hull import hulls, relax
from scheduling_opt.mckp.core import scaled
from scheduling_opt.mckp.io import KINDS, random_mckp
from scheduling_opt.registry import get_problem
from scheduling_opt.solution import Status
from scheduling_opt.testing import mckp_inputs
from tests.mckp.reference import brute_force, greedy_reference, hull_reference, lp_relaxation

PROBLEM = get_problem("mckp")

items = st.tuples(st.integers(0, 9), st.integers(-5, 20).map(float))
small = st.tuples(st.lists(st.lists(items, max_size=4), max_size=5), st.integers(0, 20)).map(
    lambda t: kn.Mckp.from_groups(t[0], t[1])
)


def same(a: float | None, b: float | None) -> bool:
    assert a is not None
    assert b is not None
    return abs(a - b) <= 1e-9 * (1 + abs(b))


def assert_exact(p: kn.Mckp, expected: float) -> kn.Mckp:
    sol = kn.core(p)
    PROBLEM.check(p, sol)
    assert sol.status is Status.OPTIMAL
    assert same(sol.objective, expected), (sol.objective, expected)
    assert sol.bound == sol.objective
    return p


# --------------------------------------------------------------------------- against brute force


@settings(max_examples=300, deadline=None)
@given(small)
def test_core_equals_brute_force(p: kn.Mckp) -> None:
    assert_exact(p, brute_force(p))


@settings(max_examples=200, deadline=None)
@given(mckp_inputs(max_groups=5, max_items=4))
def test_core_equals_brute_force_on_the_testing_kit_inputs(p: kn.Mckp) -> None:
    assert_exact(p, brute_force(p))


# --------------------------------------------------------------------------- against the capacity DP


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize(("n", "k", "cap"), [(50, 8, 200), (300, 16, 1200), (400, 10, 6000)])
def test_core_equals_dp_on_every_generator_class(n: int, k: int, cap: int, kind: str) -> None:
    for seed in range(3):
        p = random_mckp(n, k, cap, kind, seed)
        assert_exact(p, kn.dp(p).objective or 0.0)


@settings(max_examples=60, deadline=None)
@given(
    st.integers(1, 120),
    st.integers(1, 12),
    st.integers(0, 3000),
    st.sampled_from(KINDS),
    st.integers(0, 10**6),
)
def test_core_property_objective_decision_and_bound(
    n: int, k: int, cap: int, kind: str, seed: int
) -> None:
    p = random_mckp(n, k, cap, kind, seed)
    sol = kn.core(p)
    PROBLEM.check(p, sol)  # feasible, objective recomputed, bound on the right side
    assert sol.status is Status.OPTIMAL
    assert same(sol.objective, kn.dp(p).objective)
    assert sol.decision is not None
    assert sol.decision.weight <= cap
    assert sol.bound is not None
    assert sol.bound >= kn.dp(p).objective - 1e-9  # type: ignore[operator]


def strongly_correlated(
    n: int, k: int, cap: int, step: int, seed: int, odd_group: bool = True, top: int = 10
) -> kn.Mckp:
    """v = w + 10, w = ``step`` * U{1..top}, except group 0's weights, all 1 (``odd_group``).

    With step 3 and a capacity of 2 mod 3 no choice fills the capacity, so
    the LP bound (lam = 1) stays a unit above the optimum and the core's
    bounds do not close: the DP runs over most groups, or hands over to
    ``dp``. Without the odd group, the weights' gcd is ``step``.
    """
    rng = np.random.default_rng(seed)
    w = step * rng.integers(1, top + 1, (n, k))
    if odd_group:
        w[0, :] = 1
    v = (w + 10).astype(float)
    return kn.Mckp(cap, w.reshape(-1), v.reshape(-1), np.arange(n + 1) * k)


@pytest.mark.parametrize(
    ("n", "k", "cap", "step"),
    [(60, 6, 1001, 3), (300, 10, 5002, 3), (120, 8, 3001, 2), (40, 5, 777, 7)],
)
def test_core_equals_dp_where_the_lp_bound_does_not_close(
    n: int, k: int, cap: int, step: int
) -> None:
    for seed in range(3):
        p = strongly_correlated(n, k, cap, step, seed)
        assert_exact(p, kn.dp(p).objective or 0.0)
        q = strongly_correlated(n, k, cap, step, seed, odd_group=False)
        assert_exact(q, kn.dp(q).objective or 0.0)


def test_core_hands_over_to_the_dp_and_still_answers_exactly() -> None:
    p = strongly_correlated(200, 10, 100_001, 3, 1, top=300)
    lp = relax(p)
    greedy = kn.greedy(p)
    assert greedy.objective is not None
    search = CoreSearch.of(p, lp, greedy.objective, Precision.of(p, lp))
    search.run(time.perf_counter() + 60)
    assert search.handed_over  # so the next line checks the hand-over path
    assert_exact(p, kn.dp(p).objective or 0.0)


def test_core_improves_on_the_greedy_through_its_dp() -> None:
    # The traced-back choice (not the greedy's) must be the answer here.
    found = 0
    for seed in range(20):
        p = random_mckp(200, 8, 700, "uncorrelated", seed)
        greedy, best = kn.greedy(p), kn.dp(p)
        assert greedy.objective is not None
        assert best.objective is not None
        if greedy.objective < best.objective:
            found += 1
            assert_exact(p, best.objective)
    assert found >= 3


def test_aryl_table3_and_figure6_by_hand() -> None:
    # Aryl Table 3, 4 GPUs left: A's +3 workers (3 GPUs, 90) and B's +1 (1 GPU, 20) = 110.
    t3 = kn.as_mckp([[(1, 60.0), (2, 80.0), (3, 90.0)], [(1, 20.0), (2, 30.0)]], 4)
    sol = kn.core(t3)
    assert sol.decision is not None
    assert (sol.decision.choice, sol.objective) == ((2, 0), 110.0)
    # three items of one group, capacity 3: (2, 90) + (1, 20) = 110 beats (3, 100) alone
    p = kn.as_mckp([[(1, 60.0), (2, 90.0), (3, 100.0)], [(1, 20.0), (2, 30.0)]], 3)
    sol = kn.core(p)
    assert sol.decision == kn.MckpDecision((1, 0), 3, 110.0)


# --------------------------------------------------------------------------- edge cases


def test_edge_cases() -> None:
    # empty instance, empty groups, zero capacity
    assert_exact(kn.Mckp.from_groups([], 5), 0.0)
    assert_exact(kn.Mckp.from_groups([[], [], [(2, 3.0)], []], 5), 3.0)
    # zero capacity: only zero-weight items count (2.5 here, by hand)
    assert_exact(kn.Mckp.from_groups([[(0, 2.5), (1, 9.0)], [(0, -1.0)]], 0), 2.5)
    # items heavier than the capacity, negative and zero values: nothing to take
    p = kn.Mckp.from_groups([[(11, 50.0), (3, -2.0), (2, 0.0)], [(20, 1.0)]], 10)
    sol = kn.core(p)
    assert sol.decision is not None
    assert sol.decision.choice == (None, None)
    assert sol.status is Status.OPTIMAL
    # ties: two equal items per group; any optimum is worth 2 * 5 = 10 (by hand)
    assert_exact(kn.Mckp.from_groups([[(2, 5.0), (2, 5.0)], [(2, 5.0), (2, 5.0)]], 4), 10.0)
    # dominated items: (3, 4) and (5, 4) lose to (2, 6); 6 + 7 = 13 with weight 2 + 3 = 5
    assert_exact(kn.Mckp.from_groups([[(3, 4.0), (2, 6.0), (5, 4.0)], [(3, 7.0)]], 5), 13.0)
    # zero-weight items with value are always taken: 1 + 4 (weight 0 + 4) = 5
    assert_exact(kn.Mckp.from_groups([[(0, 1.0)], [(4, 4.0), (5, 4.5)]], 4), 5.0)
    # everything fits: each group's best item (7 + 3 = 10)
    assert_exact(kn.Mckp.from_groups([[(1, 7.0), (2, 6.0)], [(3, 3.0)]], 100), 10.0)


def test_huge_values_within_the_model_bounds() -> None:
    # The model refuses values whose absolute sum overflows; just below, the
    # core's bounds and sums stay finite. Optimum by hand: items 1 of both groups.
    big = 4e307
    p = kn.Mckp.from_groups([[(1, big / 2), (2, big)], [(1, big / 4), (3, big / 2)]], 3)
    sol = kn.core(p)
    PROBLEM.check(p, sol)
    assert sol.status is Status.OPTIMAL
    assert sol.decision is not None
    assert sol.decision.choice == (1, 0)
    # huge weights under a huge capacity (2^53 is the model's bound on weights)
    q = kn.Mckp.from_groups([[(2**52, 3.0), (2**53, 5.0)], [(2**52, 2.0)]], 2**53)
    assert_exact(q, 5.0)
    # huge values (the sum stays finite): the same optimum as the capacity DP
    rng = np.random.default_rng(3)
    w = rng.integers(1, 200, (60, 6))
    v = rng.integers(1, 1000, (60, 6)) * 1e300
    p = kn.Mckp(int(w.sum() // 7), w.reshape(-1), v.reshape(-1), np.arange(61) * 6)
    assert_exact(p, kn.dp(p).objective or 0.0)
    # huge weights (rows of 10^12 capacities: the core hands over to HiGHS)
    w = rng.integers(1, 2**40, (40, 6))
    v = rng.integers(1, 1000, (40, 6)).astype(float)
    q = kn.Mckp(int(w.sum() // 7), w.reshape(-1), v.reshape(-1), np.arange(41) * 6)
    expected = kn.exact(q, time_limit=60)
    assert expected.status is Status.OPTIMAL
    assert_exact(q, expected.objective or 0.0)


def test_scaled_divides_weights_by_their_gcd() -> None:
    # useful weights 4, 6 (gcd 2); 15 exceeds C = 11 and rounds up to 8 > 5
    p = scaled(kn.Mckp.from_groups([[(4, 1.0), (15, 2.0)], [(6, 1.0)]], 11))
    assert (p.capacity, p.weights.tolist()) == (5, [2, 8, 3])
    # even weights, odd capacity: the LP bound closes only after the scaling
    q = strongly_correlated(100, 8, 1001, 2, 0, odd_group=False)
    assert scaled(q).capacity == 500
    assert_exact(q, kn.dp(q).objective or 0.0)
    same_p = kn.Mckp.from_groups([[(3, 1.0), (4, 2.0)]], 5)
    assert scaled(same_p) is same_p


# --------------------------------------------------------------------------- time limit, determinism


def test_core_respects_its_time_limit_with_an_honest_bound() -> None:
    p = strongly_correlated(1500, 10, 20_001, 3, 2)  # a hard instance: no exact fill
    best = kn.dp(p).objective
    assert best is not None
    start = time.perf_counter()
    sol = kn.core(p, time_limit=0.05)
    elapsed = time.perf_counter() - start
    # The LP and greedy always run (about 20 ms here); the margin keeps a
    # busy 2-core machine green. The speed itself is measured in benchmarks/.
    assert elapsed < 2.0
    PROBLEM.check(p, sol)
    assert sol.objective is not None
    assert sol.objective <= best + 1e-9
    if sol.status is Status.TIME_LIMIT:
        assert sol.bound is not None
        assert sol.bound >= best - 1e-9
        assert "time limit" in sol.message
    else:
        assert sol.status is Status.OPTIMAL
        assert same(sol.objective, best)


def test_core_under_a_time_limit_after_its_hand_over_stays_honest() -> None:
    # Weights 3 * U{1..300} and one group of weight-1 items, C = 2 mod 3: no
    # choice weighs C, so (every group taking an item worth w + 10) the optimum
    # is at most (C - 1) + 10 n = 520,002, and the LP bound is 520,003.
    p = strongly_correlated(2000, 10, 500_003, 3, 0, top=300)
    sol = kn.core(p, time_limit=0.3)
    PROBLEM.check(p, sol)
    assert sol.objective is not None
    assert sol.objective <= 520_002
    if sol.status is Status.TIME_LIMIT:
        assert sol.bound is not None
        assert sol.bound >= 520_002
    else:
        assert sol.objective == 520_002


def test_core_is_deterministic_and_leaves_its_input_alone() -> None:
    p = strongly_correlated(150, 8, 3001, 3, 4)
    w, v = p.weights.copy(), p.values.copy()
    first, second = kn.core(p), kn.core(p)
    assert first.decision == second.decision
    assert np.array_equal(w, p.weights)
    assert np.array_equal(v, p.values)


def test_core_is_the_default_and_registered_exact() -> None:
    assert PROBLEM.default == "core"
    method = next(m for m in PROBLEM.methods if m.name == "core")
    assert method.exact
    assert any(m.name == "dp" and m.exact for m in PROBLEM.methods)


# --------------------------------------------------------------------------- the numpy LP pass


@settings(max_examples=300, deadline=None)
@given(small)
def test_greedy_and_lp_equal_the_old_python_greedy(p: kn.Mckp) -> None:
    choice, lp = greedy_reference(p)
    got = kn.greedy(p)
    assert got.decision is not None
    assert got.decision.choice == choice
    assert abs(relax(p).value - lp) <= 1e-9 * (1 + abs(lp))
    assert got.bound is not None
    assert abs(got.bound - max(lp, got.objective or 0.0)) <= 1e-9 * (1 + abs(lp))


@pytest.mark.parametrize("kind", KINDS)
def test_greedy_equals_the_old_python_greedy_on_generated_classes(kind: str) -> None:
    for seed in range(4):
        p = random_mckp(300, 12, 900 + 400 * seed, kind, seed)
        choice, lp = greedy_reference(p)
        got = kn.greedy(p)
        assert got.decision is not None
        assert got.decision.choice == choice
        assert got.bound is not None
        assert abs(got.bound - max(lp, got.objective or 0.0)) <= 1e-9 * (1 + lp)


@settings(max_examples=60, deadline=None)
@given(
    st.integers(1, 40),
    st.integers(1, 8),
    st.integers(0, 400),
    st.sampled_from(KINDS),
    st.integers(0, 10**6),
)
def test_lp_bound_equals_highs_lp_relaxation(
    n: int, k: int, cap: int, kind: str, seed: int
) -> None:
    p = random_mckp(n, k, cap, kind, seed)
    assert abs(kn.lp_bound(p) - lp_relaxation(p)) <= 1e-7 * (1 + abs(lp_relaxation(p)))


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 30), st.integers(-3, 40).map(float)), max_size=12))
def test_upper_hull_equals_the_monotone_chain(group: list[tuple[int, float]]) -> None:
    w = [a for a, _ in group]
    v = [b for _, b in group]
    assert kn.upper_hull(np.array(w, np.int64), v) == hull_reference(w, v)


def test_hulls_of_an_adversarial_fan_finish_in_the_chain() -> None:
    # 60 points on a concave curve then one far above: every pass drops one
    # point, so the vectorized passes stop and the monotone chain finishes.
    w = list(range(1, 62))
    v = [*(100.0 * i - i * i for i in range(1, 61)), 1e6]
    p = kn.Mckp.from_arrays([np.array(w, np.int64)], [np.array(v)], 61)
    assert hulls(p).item.tolist() == hull_reference(w, v) == [60]
