"""MMKP: exact = exact-pulp = brute force; lagrange feasible, value <= optimum <= bound; one resource = mckp."""

from __future__ import annotations

import contextlib
import math
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from scheduling_opt import mckp
from scheduling_opt import mmkp as mk
from scheduling_opt.errors import InstanceTooLargeError, InvalidInstanceError, VerificationError
from scheduling_opt.io.instance import load, loads
from scheduling_opt.mmkp.instances import random_mmkp, sia_configs, sia_round
from scheduling_opt.registry import get_problem
from scheduling_opt.solution import Solution, Status

from .reference import brute_force, lp_bound

INSTANCES = Path(__file__).resolve().parent.parent.parent / "instances"
PROBLEM = get_problem("mmkp")


@st.composite
def tiny(draw: st.DrawFn, resources: int | None = None, none: bool = True) -> mk.Mmkp:
    r = draw(st.integers(1, 3)) if resources is None else resources
    item = st.tuples(
        st.tuples(*[st.integers(0, 6)] * r), st.integers(-30, 120).map(lambda v: v / 10)
    )
    groups = draw(st.lists(st.lists(item, max_size=3), max_size=4))
    capacity = draw(st.tuples(*[st.integers(0, 10)] * r))
    nones = (
        draw(
            st.lists(
                st.integers(-40, 30).map(lambda v: v / 10),
                min_size=len(groups),
                max_size=len(groups),
            )
        )
        if none
        else None
    )
    return mk.Mmkp.from_groups(groups, capacity, nones)


@settings(max_examples=30, deadline=None)
@given(tiny())
def test_exact_and_exact_pulp_equal_brute_force(p: mk.Mmkp) -> None:
    best, _ = brute_force(p)
    for solve, name in ((mk.exact, "exact"), (mk.exact_pulp, "exact-pulp")):
        got = solve(p, time_limit=20)
        assert got.status is Status.OPTIMAL, name
        assert got.method == name
        assert got.objective == pytest.approx(best, abs=1e-9), name
        PROBLEM.check(p, got)


@contextlib.contextmanager
def subgradient_search() -> Iterator[None]:
    """Runs in which the LP never has time: the multipliers come from the subgradient search."""
    from scheduling_opt.mmkp import _lp

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(_lp, "LP_SECONDS_PER_ITEM", math.inf)
        yield


@settings(max_examples=60, deadline=None)
@given(tiny())
def test_exact_through_the_subgradient_search_equals_brute_force(p: mk.Mmkp) -> None:
    best, _ = brute_force(p)
    with subgradient_search():
        got = mk.exact(p, time_limit=20)
    assert got.status is Status.OPTIMAL
    assert got.objective == pytest.approx(best, abs=1e-9)
    PROBLEM.check(p, got)


@settings(max_examples=60, deadline=None)
@given(tiny(), st.booleans())
def test_lagrange_is_feasible_below_the_optimum_below_its_bound(p: mk.Mmkp, lp: bool) -> None:
    best, _ = brute_force(p)
    with contextlib.nullcontext() if lp else subgradient_search():
        got = mk.lagrange(p, time_limit=20)
    PROBLEM.check(p, got)
    assert got.method == "lagrange"
    assert got.objective is not None
    assert got.bound is not None
    assert got.objective <= best + 1e-9
    assert got.bound >= best - 1e-9
    if got.status is Status.OPTIMAL:
        assert got.objective == pytest.approx(best, abs=1e-9)


@settings(max_examples=40, deadline=None)
@given(tiny())
def test_the_lp_start_bound_is_the_lp_relaxation_s(p: mk.Mmkp) -> None:
    # L at the LP's duals equals the LP optimum over the items that fit every
    # capacity (duality; the others are in no feasible choice, so the
    # relaxation leaves them out), computed here by a dense model of its own
    # (reference.lp_bound), and is never below the optimum (brute force); the
    # rounded LP solution is feasible.
    from scheduling_opt.mmkp import _lagrange, _lp

    assert p.none is not None
    best, _ = brute_force(p)
    rel = _lagrange.relaxed(p)
    if not len(rel.item):
        return
    start = _lp.lp_start(rel, time.perf_counter() + 20)
    assert start is not None
    ev, picked = start
    bound = ev.bound + float(p.none.sum())
    fits = np.all(p.weights <= p.capacity, axis=1)
    kept = np.concatenate([[0], np.cumsum(fits)])
    fitting = mk.Mmkp(p.capacity, p.weights[fits], p.values[fits], kept[p.offsets], p.none)
    assert bound == pytest.approx(lp_bound(fitting), abs=1e-6)
    assert bound <= lp_bound(p) + 1e-6
    assert bound >= best - 1e-9
    used = p.weights[rel.item[picked[picked >= 0]]].sum(axis=0)
    assert np.all(used <= p.capacity)


@settings(max_examples=60, deadline=None)
@given(tiny(resources=1, none=False))
def test_one_resource_answers_are_the_mckp_core_s(p: mk.Mmkp) -> None:
    # With one resource and no none values the MMKP is the MCKP item for item.
    m = mckp.Mckp(int(p.capacity[0]), p.weights[:, 0], p.values, p.offsets)
    ref = mckp.core(m)
    assert ref.decision is not None
    for solve in (mk.exact, mk.lagrange):
        got = solve(p)
        assert got.decision is not None
        assert got.status is ref.status
        assert got.decision.choice == ref.decision.choice
        assert got.objective == ref.objective
        assert got.decision.weight == (ref.decision.weight,)


@settings(max_examples=40, deadline=None)
@given(tiny(resources=1))
def test_one_resource_with_none_values_shifts_the_mckp_core_s_objective(p: mk.Mmkp) -> None:
    assert p.none is not None
    # The MCKP of the gains: each item's value minus its group's none value.
    gains = p.values - np.repeat(p.none, np.diff(p.offsets))
    ref = mckp.core(mckp.Mckp(int(p.capacity[0]), p.weights[:, 0], gains, p.offsets))
    assert ref.decision is not None
    assert ref.objective is not None
    got = mk.lagrange(p)
    assert got.decision is not None
    assert got.decision.choice == ref.decision.choice
    assert got.objective == pytest.approx(ref.objective + float(p.none.sum()), abs=1e-9)


def test_one_resource_calls_the_mckp_core(monkeypatch: pytest.MonkeyPatch) -> None:
    from scheduling_opt.mmkp import _lagrange

    calls: list[mckp.Mckp] = []

    def spy(inp: mckp.Mckp, **kw: Any) -> Solution[mckp.MckpDecision]:
        calls.append(inp)
        return mckp.core(inp, **kw)

    monkeypatch.setattr(_lagrange, "core", spy)
    p = mk.Mmkp.from_groups([[((2,), 3.0), ((1,), 2.0)], [((1,), 1.5)]], (2,))
    for solve in (mk.exact, mk.lagrange):
        assert solve(p).objective == 3.5
    assert len(calls) == 2
    assert calls[0].capacity == 2
    assert calls[0].values.tolist() == [3.0, 2.0, 1.5]


def test_the_worked_example() -> None:
    # V100: 4 GPUs, K80: 2; three jobs, each worth -1 unallocated. By hand:
    # job c needs 2 GPUs of one type (2.0 on V100, 1.0 on K80). With c on
    # 2 V100, a and b share 2 V100 and 2 K80: a on 2 V100 (1.8) and b on
    # 2 K80 (1.2) give 5.0; the other splits give at most a 1 V100 + b 1 V100
    # (2.0) + the K80s unused by a or b... a 2 K80 (0.9) + b 2 V100 (1.5) = 2.4
    # < 3.0. With c on 2 K80 (1.0), a and b share 4 V100: a 4 (3.0) and b
    # nothing (-1) = 3.0, or a 2 + b 2 = 3.3; 1.0 + 3.3 = 4.3 < 5.0. Without
    # c (-1): a 4 V100 + b 2 K80 = 4.2 - 1 = 3.2.
    p = PROBLEM.parse(load(INSTANCES / "mmkp-example.json"))
    assert p.resources == ("V100", "K80")
    for method in PROBLEM.methods:
        got = method.run(p, time_limit=20)
        PROBLEM.check(p, got)
        assert got.objective == pytest.approx(5.0)
        assert got.decision is not None
        assert got.decision.choice == (1, 3, 0)
    value, choice = brute_force(p)
    assert value == pytest.approx(5.0)
    assert choice == (1, 3, 0)


def test_edge_cases() -> None:
    cases = [
        mk.Mmkp.from_groups([], (3, 1)),
        mk.Mmkp.from_groups([[], []], (3, 1), none=(-1.0, 2.0)),
        mk.Mmkp.from_groups([[((0, 0), 2.5)], [((5, 0), 9.0)]], (0, 0)),
        mk.Mmkp.from_groups([[((1, 1), -3.0)], [((0, 0), -1.0)]], (4, 4), none=(0.0, -2.0)),
        mk.Mmkp.from_groups([[((2, 2), 1.0), ((2, 2), 1.0)]], (2, 2)),
    ]
    for p in cases:
        best, _ = brute_force(p)
        for method in PROBLEM.methods:
            got = method.run(p, time_limit=20)
            PROBLEM.check(p, got)
            assert got.objective == pytest.approx(best), (method.name, p)
    # A zero-weight item fits a zero capacity; a negative gain is never taken.
    assert mk.exact(cases[2]).decision == mk.MmkpDecision((0, None), (0, 0), 2.5)
    assert mk.exact(cases[3]).objective == -1.0  # group 1 takes its -1.0 over none's -2.0


def test_sia_rounds_exact_equals_pulp_and_lagrange_is_within_half_a_percent() -> None:
    for seed in range(3):
        p = sia_round(1, seed)
        e, c, lg = mk.exact(p, time_limit=30), mk.exact_pulp(p, time_limit=30), mk.lagrange(p)
        for got in (e, c, lg):
            PROBLEM.check(p, got)
        assert e.status is Status.OPTIMAL
        assert c.status is Status.OPTIMAL
        assert e.objective == pytest.approx(c.objective, abs=1e-9)
        assert lg.objective is not None
        assert e.objective is not None
        assert lg.bound is not None
        assert lg.objective <= e.objective + 1e-9 <= lg.bound + 2e-9
        assert e.objective - lg.objective <= 0.005 * abs(e.objective)
        # The Lagrangian bound is no weaker than the LP relaxation's by more than the search's slack.
        assert lg.bound <= lp_bound(p) + 0.002 * abs(e.objective)


@pytest.mark.slow
@pytest.mark.parametrize("scale", [2, 4, 8])
def test_larger_sia_rounds(scale: int) -> None:
    p = sia_round(scale, 0)
    e, lg = mk.exact(p, time_limit=60), mk.lagrange(p, time_limit=60)
    assert e.status is Status.OPTIMAL
    assert lg.objective is not None
    assert e.objective is not None
    assert e.objective - lg.objective <= 0.005 * abs(e.objective)
    PROBLEM.check(p, e)
    PROBLEM.check(p, lg)


def test_sia_configurations_follow_its_tables() -> None:
    # 4-GPU nodes: 1, 2, 4 GPUs on one node, then 2..6 nodes (8..24 GPUs);
    # 8-GPU nodes: 1, 2, 4, 8, then 2 nodes (dgx-ext) or 2..3 (rtx).
    aws = [g for t, _, g in sia_configs(1) if t == "aws"]
    assert aws == [1, 2, 4, 8, 12, 16, 20, 24]
    assert [g for t, _, g in sia_configs(1) if t == "rtx"] == [1, 2, 4, 8, 16, 24]
    p = sia_round(1, 0)
    assert p.capacity.tolist() == [24, 16, 24]
    assert p.none is not None
    assert set(p.none.tolist()) == {-1.1}


@pytest.mark.parametrize(
    ("text", "path"),
    [
        ('"capacity": [], "groups": []', "capacity"),
        ('"capacity": 3, "groups": []', "capacity"),
        ('"capacity": [1, -1], "groups": []', "capacity[1]"),
        ('"capacity": [3], "groups": [[{"weight": [1, 1], "value": 2}]]', "groups[0][0].weight"),
        ('"capacity": [3], "groups": [[{"weight": [-2], "value": 2}]]', "groups[0][0].weight[0]"),
        ('"capacity": [3], "groups": [[{"weight": [2]}]]', "groups[0][0].value"),
        ('"capacity": [3], "groups": [[{"weight": [2], "value": "x"}]]', "groups[0][0].value"),
        ('"capacity": [3], "groups": [[]], "none": []', "none"),
        ('"capacity": [3], "groups": [[]], "none": [true]', "none[0]"),
        ('"capacity": [3], "groups": [], "resources": [""]', "resources[0]"),
        ('"capacity": [3, 1], "groups": [], "resources": ["a", "a"]', "resources"),
        ('"capacity": [3], "groups": [], "extra": 1', "extra"),
        ('"groups": []', "capacity"),
    ],
)
def test_invalid_instances_rejected_naming_the_field(text: str, path: str) -> None:
    doc = '{"format": "scheduling-opt/v1", "problem": "mmkp", ' + text + "}"
    with pytest.raises(InvalidInstanceError) as err:
        PROBLEM.parse(loads(doc))
    assert err.value.path == path


def test_model_errors_name_the_field() -> None:
    with pytest.raises(InvalidInstanceError, match=r"groups\[0\]\[1\].value"):
        mk.Mmkp.from_groups([[((1,), 1.0), ((2,), float("nan"))]], (3,))
    with pytest.raises(InvalidInstanceError, match=r"none\[1\]"):
        mk.Mmkp.from_groups([[], []], (3,), none=(0.0, float("inf")))
    with pytest.raises(InvalidInstanceError, match=r"groups\[0\]\[0\].weight\[1\]"):
        mk.Mmkp.from_groups([[((1, True), 1.0)]], (3, 3))
    with pytest.raises(InvalidInstanceError, match="capacity"):
        mk.as_mmkp([[((1,), 1.0)]])


def _sol(
    choice: tuple[int | None, ...], objective: float, weight: tuple[int, ...], **kw: Any
) -> Solution[mk.MmkpDecision]:
    status = kw.pop("status", Status.FEASIBLE)
    return Solution(status, objective, mk.MmkpDecision(choice, weight, objective), **kw)


def test_checker_catches_what_is_wrong() -> None:
    p = mk.Mmkp.from_groups([[((3, 0), 5.0)], [((2, 1), 4.0)]], (4, 1), none=(0.0, -1.0))
    PROBLEM.check(p, _sol((0, None), 4.0, (3, 0)))
    with pytest.raises(VerificationError, match="exceeds"):
        PROBLEM.check(p, _sol((0, 0), 9.0, (5, 1)))
    with pytest.raises(VerificationError, match="objective"):
        PROBLEM.check(p, _sol((0, None), 5.0, (3, 0)))  # forgets group 1's none value
    with pytest.raises(VerificationError, match="weights"):
        PROBLEM.check(p, _sol((0, None), 4.0, (3, 1)))
    with pytest.raises(VerificationError, match="bound"):
        PROBLEM.check(p, _sol((0, None), 4.0, (3, 0), bound=3.0))
    with pytest.raises(VerificationError, match="invalid item"):
        PROBLEM.check(p, _sol((1, None), 4.0, (3, 0)))
    with pytest.raises(VerificationError, match="single item"):
        PROBLEM.check(p, _sol((None, None), -1.0, (0, 0), status=Status.OPTIMAL))


def test_generator_is_seeded_and_refuses_bad_sizes() -> None:
    assert PROBLEM.generate is not None
    for size in PROBLEM.sizes["quick"]:
        assert PROBLEM.generate(size, 7) == PROBLEM.generate(size, 7)
        assert PROBLEM.generate(size, 7) != PROBLEM.generate(size, 8)
    for bad in ("big", "sia0", "sia65", "n5-r0", "n5-r11", "n5-weak", "sia2-x3"):
        with pytest.raises(InvalidInstanceError):
            PROBLEM.generate(bad, 0)


@pytest.mark.slow
def test_the_quick_suite_agrees() -> None:
    assert PROBLEM.generate is not None
    for size in PROBLEM.sizes["quick"]:
        p = PROBLEM.parse(PROBLEM.generate(size, 7))
        got = {m.name: m.run(p, time_limit=30) for m in PROBLEM.methods}
        for sol in got.values():
            PROBLEM.check(p, sol)
        assert got["exact"].objective == pytest.approx(got["exact-pulp"].objective)


def test_deterministic_and_inputs_not_mutated() -> None:
    p = random_mmkp(15, 6, 3, "uncorrelated", 1)
    before = (p.weights.copy(), p.values.copy())
    for method in PROBLEM.methods:
        a, b = method.run(p, time_limit=30), method.run(p, time_limit=30)
        assert a.decision == b.decision
        assert a.bound == b.bound
    assert np.array_equal(before[0], p.weights)
    assert np.array_equal(before[1], p.values)


@pytest.mark.parametrize("name", ["exact", "lagrange"])
def test_time_limit_is_respected_with_an_honest_status(name: str) -> None:
    p = random_mmkp(400, 8, 5, "correlated", 0)
    start = time.perf_counter()
    got = PROBLEM.method(name).run(p, time_limit=0.3)
    assert time.perf_counter() - start < 0.3 + 1.0
    PROBLEM.check(p, got)
    if got.status is not Status.OPTIMAL:
        assert got.bound is not None
        assert got.gap is not None


def test_tables_that_would_not_fit_are_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    from scheduling_opt.mmkp import _lagrange, _pulp

    p = random_mmkp(10, 8, 3, "uncorrelated", 0)
    monkeypatch.setattr(_lagrange, "CELL_LIMIT", 100)
    monkeypatch.setattr(_pulp, "PULP_TERMS", 100)
    for solve in (mk.exact, mk.lagrange, mk.exact_pulp):
        with pytest.raises(InstanceTooLargeError, match="limit"):
            solve(p)


def test_bounds_of_stopped_runs_still_cover_the_optimum() -> None:
    # Runs cut short after a millisecond must still report bounds at or
    # above the optimum (by brute force) on the hard correlated class.
    for seed in range(3):
        p = random_mmkp(5, 4, 3, "correlated", seed)
        best, _ = brute_force(p)
        with subgradient_search():
            runs = [mk.exact(p, time_limit=1e-3), mk.lagrange(p, time_limit=1e-3), mk.lagrange(p)]
        for got in runs:
            PROBLEM.check(p, got)
            assert got.bound is not None
            assert got.objective is not None
            assert got.objective <= best + 1e-9
            assert got.bound >= best - 1e-9


def test_no_submodule_shadows_a_public_name() -> None:
    import importlib
    import pkgutil
    import types

    for info in pkgutil.iter_modules(mk.__path__):
        importlib.import_module(f"scheduling_opt.mmkp.{info.name}")
        assert info.name not in mk.__all__, info.name
    for name in mk.__all__:
        assert not isinstance(getattr(mk, name), types.ModuleType), name
    assert mk.exact.__name__ == "exact"
    assert mk.exact_pulp.__name__ == "exact_pulp"
    names = {m.name: m.fn.__name__ for m in PROBLEM.methods}
    assert names == {"exact": "exact", "exact-pulp": "exact_pulp", "lagrange": "lagrange"}
