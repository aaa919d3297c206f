"""Aryl allocation: Tables 3 and 4, Appendix C, exact enumeration, baselines, parsing."""

from __future__ import annotations

import itertools
from pathlib import Path

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from scheduling_opt.errors import InstanceTooLargeError, InvalidInstanceError, VerificationError
from scheduling_opt.instance import load, loads
from scheduling_opt.model import Job
from scheduling_opt.result import SolveOptions, Status
from scheduling_opt.solvers import allocation as al
from scheduling_opt.solvers.registry import get_problem

INSTANCES = Path(__file__).resolve().parent.parent / "instances"
PROBLEM = get_problem("allocation")
A2, B2 = Job("A", 2, 6, 50.0), Job("B", 2, 6, 20.0)  # Aryl Table 2
A4 = Job("A", 2, 3, 100.0)  # Aryl Table 4


@pytest.mark.parametrize(
    ("a", "b", "jct_a", "jct_b"),
    [(6, 2, 50.0, 53.33), (2, 6, 63.33, 20.0), (4, 4, 60.0, 30.0)],
)
def test_table3_solutions(a: int, b: int, jct_a: float, jct_b: float) -> None:
    jct = al.simulate_elastic([A2, B2], 8, {"A": a, "B": b})
    assert jct["A"] == pytest.approx(jct_a, abs=0.005)
    assert jct["B"] == pytest.approx(jct_b, abs=0.005)


def test_table4_favoring_a_beats_favoring_b() -> None:
    favor_a = al.simulate_elastic([A4, B2], 8, {"A": 3, "B": 5})
    favor_b = al.simulate_elastic([A4, B2], 8, {"A": 2, "B": 6})
    assert favor_a == pytest.approx({"A": 100.0, "B": 24.0})
    assert favor_b == pytest.approx({"A": 106.67, "B": 20.0}, abs=0.005)
    assert sum(favor_a.values()) / 2 == pytest.approx(62.0)
    assert sum(favor_b.values()) / 2 == pytest.approx(63.33, abs=0.005)


def test_curated_instances_two_phase_and_exact() -> None:
    t4 = PROBLEM.parse(load(INSTANCES / "allocation-aryl-table4.json"))
    two = PROBLEM.solve(load(INSTANCES / "allocation-aryl-table4.json"))
    assert two.decision()["workers"] == {"A": 3, "B": 5}  # favors A, the optimum of Table 4
    assert two.objective == pytest.approx(62.0)
    PROBLEM.check(t4, two)
    t3 = load(INSTANCES / "allocation-aryl-table3.json")
    best = PROBLEM.solve(t3, "exact")
    assert best.status == Status.OPTIMAL
    assert best.objective == pytest.approx(41.67, abs=0.005)  # Table 3 solution 2
    assert PROBLEM.solve(t3).objective >= best.objective


def test_figure6_items() -> None:
    inp = PROBLEM.parse(load(INSTANCES / "allocation-aryl-figure6.json"))
    groups = al.knapsack_groups(inp.jobs, 4)
    assert groups.group(0)[0].tolist() == [2]  # A: one extra worker of 2 GPUs
    assert groups.group(0)[1].tolist() == pytest.approx([50.0])
    assert groups.group(1)[0].tolist() == [1, 2, 3, 4]
    assert groups.group(1)[1].tolist() == pytest.approx([20.0, 30.0, 36.0, 40.0])


@st.composite
def two_jobs_in_eq2(draw: st.DrawFn) -> tuple[Job, Job, int]:
    gmax_p = draw(st.integers(2, 10))
    gmax_q = draw(st.integers(gmax_p, 12))
    gmin_p = draw(st.integers(1, gmax_p - 1))
    gmin_q = draw(st.integers(1, gmax_q - 1))
    lo, hi = max(gmin_p + gmin_q, gmax_q) + 1, gmax_p + gmax_q - 1
    assume(lo <= hi)
    c = draw(st.integers(lo, hi))
    p = Job("p", gmin_p, gmax_p, float(draw(st.integers(1, 500))))
    q = Job("q", gmin_q, gmax_q, float(draw(st.integers(1, 500))))
    return p, q, c


def _avg(jobs: list[Job], c: int, alloc: dict[str, int]) -> float:
    return sum(al.simulate_elastic(jobs, c, alloc).values()) / len(jobs)


@settings(max_examples=100, deadline=None)
@given(two_jobs_in_eq2())
def test_appendix_c_rule_matches_brute_force_over_splits(case: tuple[Job, Job, int]) -> None:
    p, q, c = case
    splits = [
        {"p": g, "q": c - g}
        for g in range(p.min_workers, p.max_workers + 1)
        if q.min_workers <= c - g <= q.max_workers
    ]
    best = min(_avg([p, q], c, s) for s in splits)
    # Eq. (7): the optimum lies at an end of g_p's feasible interval.
    ends = [splits[0], splits[-1]]
    assert min(_avg([p, q], c, s) for s in ends) == pytest.approx(best, rel=1e-9)
    if c >= 2 * p.max_workers:  # Eq. (8): p (the smaller g_max) gets its maximum
        favored, other = p, q
    else:  # Eq. (9): the job with the smaller workload L gets its maximum
        favored, other = (p, q) if p.work <= q.work else (q, p)
    # The rule presumes the favored job's maximum leaves the other its minimum.
    assume(c - favored.max_workers >= other.min_workers)
    rule = {favored.id: favored.max_workers, other.id: c - favored.max_workers}
    assert _avg([p, q], c, rule) == pytest.approx(best, rel=1e-9)


jobs_st = st.lists(
    st.tuples(st.integers(1, 3), st.integers(0, 2), st.integers(1, 2), st.integers(1, 100)),
    min_size=1,
    max_size=4,
)


@settings(max_examples=60, deadline=None)
@given(jobs_st, st.integers(0, 10))
def test_exact_is_never_worse_and_all_methods_check(
    raw: list[tuple[int, int, int, int]], extra: int
) -> None:
    jobs = tuple(Job(f"j{i}", lo, lo + e, float(t), d) for i, (lo, e, d, t) in enumerate(raw))
    inp = al.AllocationInput(jobs, max(j.min_gpus for j in jobs) + extra)
    results = {m.name: m.run(inp, SolveOptions(time_limit=20)) for m in PROBLEM.methods}
    for r in results.values():
        PROBLEM.check(inp, r)
    exact = results["exact"]
    assert exact.status == Status.OPTIMAL
    brute = min(
        _avg(list(jobs), inp.capacity, dict(zip([j.id for j in jobs], ks, strict=True)))
        for ks in itertools.product(*[[0, *range(j.min_workers, j.max_workers + 1)] for j in jobs])
        if sum(k * j.gpus_per_worker for k, j in zip(ks, jobs, strict=True)) <= inp.capacity
    )
    assert exact.objective == pytest.approx(brute, rel=1e-9)
    for r in results.values():
        assert r.objective is not None
        assert r.objective >= exact.objective * (1 - 1e-9)


def test_sublinear_scaling_changes_values() -> None:
    slow = al.Scaling(0.5)
    groups = al.knapsack_groups([A2], 4, slow)
    base = slow.time(A2, 2)
    assert groups.group(0)[1][0] == pytest.approx(base - slow.time(A2, 3))
    assert slow.time(A2, 6) == pytest.approx(50.0)
    assert base == pytest.approx(50.0 * 3**0.5)


def test_running_jobs_and_heterogeneous_capacity() -> None:
    doc = """{"format": "scheduling-opt/v1", "problem": "allocation",
      "cluster": {"gpu_types": [{"name": "V100"}, {"name": "T4", "compute": 0.25}],
                  "servers": [{"id": "v", "gpu_type": "V100", "gpus": 8},
                              {"id": "t", "gpu_type": "T4", "gpus": 8, "pool": "inference", "on_loan": true}]},
      "jobs": [{"id": "r", "min_workers": 2, "max_workers": 6, "duration": 30},
               {"id": "x", "workers": 2, "duration": 10},
               {"id": "q", "min_workers": 1, "max_workers": 3, "duration": 40}],
      "placement": [{"job": "r", "server": "v", "workers": 4}, {"job": "x", "server": "v", "workers": 2}]}"""
    inp = PROBLEM.parse(loads(doc))
    # idle: 2 V100 + 8 T4 (= 2 V100); r's 2 flexible workers: 2 more.
    assert inp.capacity == 6
    assert inp.running == {"r": 4}
    assert [j.id for j in inp.jobs] == ["r", "q"]
    for m in PROBLEM.methods:
        r = m.run(inp, SolveOptions(time_limit=20))
        PROBLEM.check(inp, r)
        assert r.decision()["workers"]["r"] >= 2


@pytest.mark.parametrize(
    ("params", "path"),
    [
        ('{"capacity": -1}', "params.capacity"),
        ('{"capacity": 2.5}', "params.capacity"),
        ('{"scaling": {"exponent": 1.5}}', "params.scaling.exponent"),
        ('{"scaling": "cubic"}', "params.scaling"),
        ('{"bogus": 1}', "params.bogus"),
        ('{"capacity": 1}', "jobs[0].min_workers"),
    ],
)
def test_invalid_instances_rejected(params: str, path: str) -> None:
    doc = (
        '{"format": "scheduling-opt/v1", "problem": "allocation", "jobs": '
        '[{"id": "a", "min_workers": 2, "max_workers": 4, "duration": 10}], "params": '
        + params
        + "}"
    )
    with pytest.raises(InvalidInstanceError) as err:
        PROBLEM.parse(loads(doc))
    assert err.value.path == path


def test_exact_refuses_large_instances_and_checker_catches_overuse() -> None:
    inp = PROBLEM.parse(load(INSTANCES / "allocation-n40.json"))
    with pytest.raises(InvalidInstanceError, match="allocations to enumerate"):
        PROBLEM.method("exact").run(inp, SolveOptions())
    # 1,000 jobs of 9 choices each (wait, or 1..8 workers): 9^1000 ~ 10^954,
    # beyond float range (found by the paper suite).
    huge = al.AllocationInput(tuple(Job(f"j{i}", 1, 8, 10.0) for i in range(1000)), 64)
    with pytest.raises(InstanceTooLargeError, match=r"~10\^954 allocations"):
        PROBLEM.method("exact").run(huge, SolveOptions())
    small = al.AllocationInput((A2, B2), 8)
    plan = al.Plan({"A": 6, "B": 6}, ("A", "B"))
    bad = al.AllocationResult(plan, {}, Status.FEASIBLE, 1.0, 0.0)
    with pytest.raises(VerificationError, match="free GPUs"):
        PROBLEM.check(small, bad)
    with pytest.raises(InvalidInstanceError):
        al.simulate_elastic([A2, B2], 8, {"A": 6, "B": 6})


def test_generated_quick_suite_and_determinism() -> None:
    for size in PROBLEM.sizes["quick"]:
        inst = PROBLEM.generate(size, 3)  # type: ignore[misc]
        assert inst == PROBLEM.generate(size, 3)  # type: ignore[misc]
        inp = PROBLEM.parse(inst)
        first = PROBLEM.method(None).run(inp, SolveOptions())
        assert first.decision() == PROBLEM.method(None).run(inp, SolveOptions()).decision()
        PROBLEM.check(inp, first)
