"""Aryl allocation: Tables 3 and 4, Appendix C, exact enumeration, baselines, parsing."""

from __future__ import annotations

import itertools
from pathlib import Path

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from scheduling_opt import allocation as al
from scheduling_opt.allocation.io import encode
from scheduling_opt.errors import InstanceTooLargeError, InvalidInstanceError, VerificationError
from scheduling_opt.io.instance import load, loads
from scheduling_opt.model import Job
from scheduling_opt.registry import get_problem
from scheduling_opt.solution import Solution, Status
from scheduling_opt.testing import appendix_c_pairs

INSTANCES = Path(__file__).resolve().parent.parent.parent / "instances"
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
    two = PROBLEM.solve(load(INSTANCES / "allocation-aryl-table4.json"), "two-phase")
    assert two.decision is not None
    assert encode(two.decision)["workers"] == {"A": 3, "B": 5}  # favors A, the optimum of Table 4
    assert two.objective == pytest.approx(62.0)
    PROBLEM.check(t4, two)
    t3 = load(INSTANCES / "allocation-aryl-table3.json")
    best = PROBLEM.solve(t3, "exact")
    assert best.status == Status.OPTIMAL
    assert best.objective == pytest.approx(41.67, abs=0.005)  # Table 3 solution 2
    default = PROBLEM.solve(t3).objective
    assert default is not None
    assert best.objective is not None
    assert default >= best.objective


def test_figure6_items() -> None:
    inp = PROBLEM.parse(load(INSTANCES / "allocation-aryl-figure6.json"))
    groups = al.knapsack_groups(inp.jobs, 4)
    assert groups.group(0)[0].tolist() == [2]  # A: one extra worker of 2 GPUs
    assert groups.group(0)[1].tolist() == pytest.approx([50.0])
    assert groups.group(1)[0].tolist() == [1, 2, 3, 4]
    assert groups.group(1)[1].tolist() == pytest.approx([20.0, 30.0, 36.0, 40.0])


def _avg(jobs: list[Job], c: int, alloc: dict[str, int]) -> float:
    return sum(al.simulate_elastic(jobs, c, alloc).values()) / len(jobs)


@settings(max_examples=100, deadline=None)
@given(appendix_c_pairs())
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
    results = {m.name: m.run(inp, time_limit=20) for m in PROBLEM.methods}
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
    assert exact.objective is not None
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
        r = m.run(inp, time_limit=20)
        PROBLEM.check(inp, r)
        assert r.decision is not None
        assert encode(r.decision)["workers"]["r"] >= 2


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
        PROBLEM.method("exact").run(inp)
    # 1,000 jobs of 9 choices each (wait, or 1..8 workers): 9^1000 ~ 10^954,
    # beyond float range (found by the paper suite).
    huge = al.AllocationInput(tuple(Job(f"j{i}", 1, 8, 10.0) for i in range(1000)), 64)
    with pytest.raises(InstanceTooLargeError, match=r"~10\^954 allocations"):
        PROBLEM.method("exact").run(huge)
    small = al.AllocationInput((A2, B2), 8)
    plan = al.AllocationDecision({"A": 6, "B": 6}, ("A", "B"), {}, 1.0)
    bad = Solution(Status.FEASIBLE, 1.0, plan)
    with pytest.raises(VerificationError, match="free GPUs"):
        PROBLEM.check(small, bad)
    with pytest.raises(InvalidInstanceError):
        al.simulate_elastic([A2, B2], 8, {"A": 6, "B": 6})


def test_generated_quick_suite_and_determinism() -> None:
    for size in PROBLEM.sizes["quick"]:
        assert PROBLEM.generate is not None
        inst = PROBLEM.generate(size, 3)
        assert inst == PROBLEM.generate(size, 3)
        inp = PROBLEM.parse(inst)
        first = PROBLEM.method(None).run(inp)
        assert first.decision == PROBLEM.method(None).run(inp).decision
        PROBLEM.check(inp, first)


# --------------------------------------------------------------------------- the new API


def test_two_phase_returns_a_solution_from_model_objects() -> None:
    # Aryl Table 4: A (2..3 workers, 100 s) and B (2..6, 20 s) on 8 GPUs; favoring A
    # gives JCTs 100 and 24 (by hand: B runs 5 workers, 20 * 6 / 5 = 24), average 62.
    inp = al.AllocationInput((A4, B2), capacity=8)
    sol = al.two_phase(inp)
    assert sol.status is Status.FEASIBLE
    assert sol.objective == pytest.approx(62.0)
    assert sol.decision is not None
    assert dict(sol.decision.workers) == {"A": 3, "B": 5}
    assert dict(sol.decision.jct) == pytest.approx({"A": 100.0, "B": 24.0})
    # B's phase-two item: 3 extra workers, 60 - 24 = 36 s; A's: 1 extra, 150 - 100 = 50 s
    assert sol.decision.knapsack_value == pytest.approx(86.0)
    # each job alone at its maximum: (100 + 20) / 2
    assert sol.bound == pytest.approx(60.0)
    assert sol.gap == pytest.approx(2.0 / 60.0)
    assert sol.seconds >= 0.0
    PROBLEM.check(inp, sol)


def test_exact_returns_a_solution_with_its_count() -> None:
    sol = al.exact(al.AllocationInput((A2, B2), 8))
    assert sol.status is Status.OPTIMAL
    assert sol.bound == sol.objective
    assert sol.gap == 0.0
    assert sol.objective == pytest.approx((63.33 + 20.0) / 2, abs=0.005)  # Table 3 solution 2
    assert "allocations evaluated" in sol.message


def test_encode_keeps_the_old_keys() -> None:
    inp = al.AllocationInput((A4, B2), 8)
    assert set(encode(al.two_phase(inp).decision)) == {  # type: ignore[arg-type]
        "workers",
        "start_now",
        "average_jct",
        "jct",
        "knapsack_value",
    }
    for fn in (al.fifo, al.afs, al.max_elastic, al.exact):
        decision = fn(inp).decision
        assert decision is not None
        assert set(encode(decision)) == {"workers", "start_now", "average_jct", "jct"}


@settings(max_examples=40, deadline=None)
@given(jobs_st, st.integers(0, 10))
def test_lower_bound_is_below_the_brute_force_optimum(
    raw: list[tuple[int, int, int, int]], extra: int
) -> None:
    jobs = tuple(Job(f"j{i}", lo, lo + e, float(t), d) for i, (lo, e, d, t) in enumerate(raw))
    inp = al.AllocationInput(jobs, max(j.min_gpus for j in jobs) + extra)
    brute = min(
        _avg(list(jobs), inp.capacity, dict(zip([j.id for j in jobs], ks, strict=True)))
        for ks in itertools.product(*[[0, *range(j.min_workers, j.max_workers + 1)] for j in jobs])
        if sum(k * j.gpus_per_worker for k, j in zip(ks, jobs, strict=True)) <= inp.capacity
    )
    assert al.lower_bound(inp) <= brute * (1 + 1e-12)
    for fn in (al.two_phase, al.fifo, al.afs, al.max_elastic):
        sol = fn(inp)
        assert sol.bound is not None
        assert sol.objective is not None
        assert sol.bound <= brute * (1 + 1e-12) <= sol.objective * (1 + 1e-9)


def test_exact_under_a_tiny_time_limit_reports_its_bound_honestly() -> None:
    jobs = tuple(Job(f"j{i}", 1, 4, 10.0 + 7 * i) for i in range(6))
    inp = al.AllocationInput(jobs, 12)
    assert al.allocation_count(inp) > 256
    full = al.exact(inp)
    cut = al.exact(inp, time_limit=1e-6)
    assert cut.status is Status.TIME_LIMIT
    assert cut.objective is not None
    assert full.objective is not None
    assert cut.bound is not None
    assert cut.bound <= full.objective <= cut.objective
    assert cut.gap is not None
    assert cut.gap >= 0.0
    PROBLEM.check(inp, cut)


@pytest.mark.parametrize(
    ("kwargs", "field"),
    [
        ({"jobs": (A2,), "capacity": -1}, "capacity"),
        ({"jobs": (A2,), "capacity": 2.0}, "capacity"),
        ({"jobs": ("A",), "capacity": 8}, "jobs[0]"),
        ({"jobs": (A2, A2), "capacity": 8}, "jobs"),
        ({"jobs": (A2,), "capacity": 8, "running": {"Z": 2}}, "running"),
        ({"jobs": (A2,), "capacity": 8, "running": {"A": 7}}, "running.A"),
        ({"jobs": (B2, A2), "capacity": 1}, "jobs[0].min_workers"),
        ({"jobs": (A2,), "capacity": 8, "scaling": 0.5}, "scaling"),
    ],
)
def test_bad_constructor_arguments_name_the_field(kwargs: dict[str, object], field: str) -> None:
    with pytest.raises(InvalidInstanceError) as err:
        al.AllocationInput(**kwargs)  # type: ignore[arg-type]
    assert err.value.path == field


def test_bad_scaling_names_the_field() -> None:
    with pytest.raises(InvalidInstanceError) as err:
        al.Scaling(1.5)
    assert err.value.path == "exponent"


def test_checker_rejects_a_wrong_per_job_jct_and_a_high_bound() -> None:
    inp = al.AllocationInput((A4, B2), 8)
    sol = al.two_phase(inp)
    assert sol.decision is not None
    lie = al.AllocationDecision(
        sol.decision.workers, sol.decision.start_now, {"A": 24.0, "B": 100.0}, 62.0
    )
    with pytest.raises(VerificationError, match="JCT"):
        PROBLEM.check(inp, sol.with_(decision=lie))
    with pytest.raises(VerificationError, match="bound"):
        PROBLEM.check(inp, sol.with_(bound=70.0))
    with pytest.raises(VerificationError, match="without a decision"):
        PROBLEM.check(inp, Solution(Status.INFEASIBLE, None, None))


@settings(max_examples=60, deadline=None)
@given(
    bounds=st.lists(
        st.tuples(st.integers(1, 4), st.integers(0, 4), st.floats(1.0, 100.0)),
        min_size=1,
        max_size=6,
    ),
    room=st.integers(0, 12),
)
def test_flexible_workers_is_two_phase_on_running_jobs(
    bounds: list[tuple[int, int, float]], room: int
) -> None:
    # Every job running at its base demand: phase one admits nothing, so
    # two_phase's workers are the base plus phase two's extra workers.
    jobs = tuple(Job(f"j{i}", lo, lo + up, d) for i, (lo, up, d) in enumerate(bounds))
    running = {j.id: j.min_workers for j in jobs}
    workers = al.two_phase(al.AllocationInput(jobs, room, running)).decision
    assert workers is not None
    extra, _ = al.flexible_workers([j for j in jobs if j.elastic], room)
    assert {j.id: j.min_workers + extra.get(j.id, 0) for j in jobs} == dict(workers.workers)
    assert sum(extra.values()) <= room


def test_flexible_workers_by_hand() -> None:
    # A: 2..3 workers, 100 at 3 -> 150 at 2; B: 2..6, 20 at 6 -> 60 at 2.
    # 4 GPUs: B +3 (60 -> 24: 36) and A +1 (150 -> 100: 50) give 86, the best
    # of the pairs summing to at most 4 (B +4 alone 40; A +1, B +2: 50 + 30).
    extra, knapsack = al.flexible_workers([Job("A", 2, 3, 100.0), Job("B", 2, 6, 20.0)], 4)
    assert extra == {"A": 1, "B": 3}
    assert knapsack.objective == pytest.approx(86.0)


@settings(max_examples=100, deadline=None)
@given(
    low=st.integers(1, 64),
    up=st.integers(0, 64),
    duration=st.floats(1e-3, 1e6),
    exponent=st.sampled_from((1.0, 0.5, 0.9, 0.25)),
)
def test_scaling_times_are_the_scalar_times(
    low: int, up: int, duration: float, exponent: float
) -> None:
    # The knapsack's values come from the array form: the same floats, bit for bit.
    import numpy as np

    job = Job("j", low, low + up, duration)
    scaling = al.Scaling(exponent)
    workers = np.arange(low, low + up + 1)
    assert scaling.times(job, workers).tolist() == [scaling.time(job, int(w)) for w in workers]
