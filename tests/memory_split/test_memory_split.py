"""AntMan memory split: exact (MCKP DP) = MILP = brute force; greedy feasible, never better."""

from __future__ import annotations

import itertools
import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from scheduling_opt import memory_split as ms
from scheduling_opt.errors import InvalidInstanceError, VerificationError
from scheduling_opt.io.instance import dumps, load, loads
from scheduling_opt.memory_split.io import random_input, to_instance
from scheduling_opt.memory_split.io import read as parse_memory_split
from scheduling_opt.registry import get_problem
from scheduling_opt.solution import Solution, Status
from scheduling_opt.testing import curves

INSTANCES = Path(__file__).resolve().parent.parent.parent / "instances"
PROBLEM = get_problem("memory-split")
Split = Solution[ms.MemorySplitDecision]


def chunks_of(sol: Split) -> tuple[int, ...]:
    assert sol.decision is not None
    return tuple(sol.decision.chunks.values())


def memory_of(sol: Split) -> tuple[float, ...]:
    assert sol.decision is not None
    return tuple(sol.decision.memory_gb.values())


def brute_force(p: ms.MemorySplitInput) -> float | None:
    best = None
    ranges = [range(lo, hi + 1) for lo, hi in p.bounds()]
    for chunks in itertools.product(*ranges):
        if sum(chunks) <= p.capacity:
            value = sum(p.speed(j, k) for j, k in zip(p.jobs, chunks, strict=True))
            best = value if best is None else max(best, value)
    return best


def figure10(spare_gb: float) -> ms.MemorySplitInput:
    jobs = (
        ms.OpportunisticJob("vgg", 10.0, ms.PRESETS["vgg"]),
        ms.OpportunisticJob("resnet", 10.0, ms.PRESETS["resnet"]),
    )
    return ms.MemorySplitInput(32.0, jobs, guarantee_gb=32.0 - spare_gb, chunk_gb=1.0)


def test_presets_match_figure_10() -> None:
    sr, vgg, resnet = (ms.OpportunisticJob(k, 10.0, ms.PRESETS[k]) for k in ("sr", "vgg", "resnet"))
    assert sr.speed(1.0) == pytest.approx(0.75)  # ~25% slower with 90% less memory
    assert vgg.speed(5.0) == pytest.approx(0.9)  # most of its speed at half memory
    assert resnet.speed(9.0) == pytest.approx(0.38)  # a 10% cut: more than 60% slower
    assert resnet.speed(10.0) == resnet.speed(20.0) == 1.0


def test_greedy_starves_the_memory_sensitive_job_exact_does_not() -> None:
    p = figure10(11.0)  # 11 chunks: both minimums (1 each) and 9 to split
    greedy, exact = ms.greedy(p), ms.exact(p)
    # Greedy: VGG's steep start wins 4 chunks (+0.1375 each), then ResNet's +0.035 beats
    # VGG's +0.02: ResNet ends at 6 GB (0.275), VGG at 5 GB (0.9).
    assert chunks_of(greedy) == (5, 6)
    assert greedy.objective == pytest.approx(1.175)
    # Exact: ResNet at full memory (1.0), VGG at its minimum (0.35).
    assert chunks_of(exact) == (1, 10)
    assert exact.objective == pytest.approx(1.35)
    for result in (greedy, exact):
        ms.check(p, result)


def test_enough_memory_gives_everyone_its_peak() -> None:
    p = figure10(20.0)
    for result in (ms.greedy(p), ms.exact(p)):
        assert memory_of(result) == (10.0, 10.0)
        assert result.objective == pytest.approx(2.0)


def test_infeasible_when_minimums_do_not_fit() -> None:
    p = figure10(1.0)
    for result in (ms.greedy(p), ms.exact(p), ms.exact_highs(p), ms.exact_pulp(p)):
        assert result.status is Status.INFEASIBLE
        assert result.decision is None
        ms.check(p, result)
    with pytest.raises(VerificationError, match="infeasible"):
        ms.check(figure10(11.0), ms.exact(p))


def test_checker_rejects_overfull_and_misreported_splits() -> None:
    p = figure10(11.0)
    good = ms.exact(p)
    both = {"vgg": 10, "resnet": 10}
    over = Solution(
        Status.FEASIBLE,
        2.0,
        ms.MemorySplitDecision(both, {"vgg": 10.0, "resnet": 10.0}, {"vgg": 1.0, "resnet": 1.0}),
    )
    with pytest.raises(VerificationError, match="exceed"):
        ms.check(p, over)
    lie = good.with_(objective=9.0)
    with pytest.raises(VerificationError, match="objective"):
        ms.check(p, lie)


tiny = st.builds(
    lambda jobs, spare: ms.MemorySplitInput(64.0, tuple(jobs), 64.0 - spare, 1.0),
    st.lists(
        st.builds(
            lambda i, peak, curve: ms.OpportunisticJob(f"j{i}", float(peak), curve),
            st.integers(0, 10**6),
            st.integers(1, 6),
            curves(),
        ),
        min_size=1,
        max_size=4,
        unique_by=lambda j: j.id,
    ),
    st.integers(0, 16),
)


@settings(max_examples=80, deadline=None)
@given(tiny)
def test_exact_equals_brute_force_and_greedy_never_beats_it(p: ms.MemorySplitInput) -> None:
    best = brute_force(p)
    exact, greedy = ms.exact(p), ms.greedy(p)
    ms.check(p, exact)
    ms.check(p, greedy)
    if best is None:
        assert exact.status is greedy.status is Status.INFEASIBLE
        return
    assert exact.status is Status.OPTIMAL
    assert exact.objective == pytest.approx(best, abs=1e-9)
    assert greedy.objective is not None
    assert greedy.objective <= best + 1e-9


def test_milp_agrees_with_the_dp() -> None:
    for seed in range(3):
        p = random_input(6, seed)
        dp, milp = ms.exact(p), ms.exact_highs(p)
        assert milp.status is Status.OPTIMAL
        assert milp.objective == pytest.approx(dp.objective, abs=1e-6)
        ms.check(p, milp)


def test_registered_problem_solves_and_checks_generated_instances() -> None:
    for size in PROBLEM.sizes["quick"]:
        assert PROBLEM.generate is not None
        instance = PROBLEM.generate(size, 3)
        assert dumps(PROBLEM.generate(size, 3)) == dumps(instance)
        problem = PROBLEM.parse(instance)
        for method in PROBLEM.methods:
            result = PROBLEM.solve(instance, method.name, seed=0, time_limit=10)
            PROBLEM.check(problem, result)
            assert result.status in (Status.OPTIMAL, Status.FEASIBLE)
            json.dumps(PROBLEM.encode(result.decision))


@pytest.mark.parametrize(
    "path", sorted(INSTANCES.glob("memory-split-*.json")), ids=lambda p: p.name
)
def test_curated_instances(path: Path) -> None:
    instance = load(path)
    problem = PROBLEM.parse(instance)
    exact = PROBLEM.solve(instance, "exact")
    greedy = PROBLEM.solve(instance, "greedy")
    PROBLEM.check(problem, exact)
    PROBLEM.check(problem, greedy)
    assert greedy.objective is not None
    assert exact.objective is not None
    assert greedy.objective <= exact.objective + 1e-9


def test_instance_round_trip_and_generate_is_seeded() -> None:
    p = random_input(5, 7)
    assert parse_memory_split(loads(dumps(to_instance(p)))) == p
    assert random_input(5, 7) == p
    assert random_input(5, 8) != p


@pytest.mark.parametrize(
    ("patch", "where"),
    [
        ({"gpu": {"memory_gb": -1}}, "gpu.memory_gb"),
        ({"gpu": {"memory_gb": 8, "guarantee_gb": 9}}, "gpu.guarantee_gb"),
        (
            {"opportunistic": [{"id": "a", "peak_gb": 4, "curve": "alexnet"}]},
            "opportunistic[0].curve",
        ),
        (
            {
                "opportunistic": [
                    {"id": "a", "peak_gb": 4, "curve": [[0.5, 0.9], [0.9, 0.5], [1, 1]]}
                ]
            },
            "opportunistic[0].curve[1]",
        ),
        (
            {"opportunistic": [{"id": "a", "peak_gb": 4, "curve": [[0.5, 0.9]]}]},
            "opportunistic[0].curve",
        ),
        (
            {"opportunistic": [{"id": "a", "peak_gb": 4, "curve": "sr", "x": 1}]},
            "opportunistic[0].x",
        ),
        ({"opportunistic": [{"id": "a", "peak_gb": 0, "curve": "sr"}]}, "opportunistic[0].peak_gb"),
    ],
)
def test_parse_errors_name_the_json_path(patch: dict[str, object], where: str) -> None:
    doc: dict[str, object] = {
        "format": "scheduling-opt/v1",
        "problem": "memory-split",
        "gpu": {"memory_gb": 32},
        "opportunistic": [{"id": "a", "peak_gb": 4, "curve": "sr"}],
    }
    doc.update(patch)
    with pytest.raises(InvalidInstanceError) as info:
        PROBLEM.parse(loads(json.dumps(doc)))
    assert str(info.value).startswith(where + ":")


def test_curated_figure_10_instance_shows_the_greedy_gap() -> None:
    # 16 GB left by the guarantee job for SR (10 GB peak), VGG (8 GB) and ResNet (12 GB).
    problem = PROBLEM.parse(load(INSTANCES / "memory-split-antman-fig10.json"))
    greedy, exact = ms.greedy(problem), ms.exact(problem)
    assert memory_of(exact) == (1.0, 3.0, 12.0)  # ResNet gets its peak
    assert memory_of(greedy) == (1.0, 4.0, 11.0)  # ResNet one GB short: 62% slower
    assert exact.objective == pytest.approx(2.4781, abs=1e-4)
    assert greedy.objective == pytest.approx(2.1333, abs=1e-4)


# --------------------------------------------------------------------------- the new API


@settings(max_examples=40, deadline=None)
@given(tiny)
def test_exact_highs_and_pulp_agree_with_brute_force(p: ms.MemorySplitInput) -> None:
    best = brute_force(p)
    results = {
        "exact": ms.exact(p),
        "exact-highs": ms.exact_highs(p, time_limit=20),
        "exact-pulp": ms.exact_pulp(p, time_limit=20),
    }
    for sol in results.values():
        ms.check(p, sol)
        if best is None:
            assert sol.status is Status.INFEASIBLE
            assert sol.decision is None
        else:
            assert sol.status is Status.OPTIMAL
            assert sol.objective == pytest.approx(best, abs=1e-6)


def test_pulp_agrees_on_generated_instances() -> None:
    for seed in range(3):
        p = random_input(5, seed, 0.5)
        dp, pulp = ms.exact(p), ms.exact_pulp(p, time_limit=20)
        assert pulp.status is Status.OPTIMAL
        assert pulp.objective == pytest.approx(dp.objective, abs=1e-6)
        ms.check(p, pulp)


def test_solution_shape_from_model_objects() -> None:
    p = figure10(11.0)
    sol = ms.exact(p)
    assert sol.status is Status.OPTIMAL
    # by hand: ResNet at its peak (1.0) and VGG at its 1 GB minimum (0.35)
    assert sol.objective == pytest.approx(1.35)
    assert sol.bound == sol.objective
    assert sol.gap == 0.0
    assert sol.seconds >= 0.0
    assert sol.decision == ms.MemorySplitDecision(
        {"vgg": 1, "resnet": 10}, {"vgg": 1.0, "resnet": 10.0}, {"vgg": 0.35, "resnet": 1.0}
    )


def test_upper_bound_sits_above_the_optimum() -> None:
    for seed in range(5):
        p = random_input(6, seed)
        best = ms.exact(p).objective
        bound = ms.upper_bound(p)
        assert best is not None
        assert bound is not None
        assert bound >= best - 1e-9
    assert ms.upper_bound(figure10(1.0)) is None


def test_milp_under_a_tiny_time_limit_reports_its_bound_honestly() -> None:
    p = random_input(64, 0, 0.05)
    best = ms.exact(p).objective
    assert best is not None
    got = ms.exact_highs(p, time_limit=0.01)
    ms.check(p, got)
    if got.status is Status.OPTIMAL:
        assert got.objective == pytest.approx(best, abs=1e-6)
    else:
        assert got.status is Status.TIME_LIMIT
        assert got.objective is None or got.objective <= best + 1e-6
        assert got.bound is None or got.bound >= best - 1e-6


def test_infeasible_instance_solves_and_encodes_without_a_decision() -> None:
    # 1 GB spare, and VGG and ResNet each need 1 GB (10% of 10 GB) to run.
    instance = to_instance(figure10(1.0))
    for method in PROBLEM.methods:
        sol = PROBLEM.solve(instance, method.name, time_limit=10)
        assert sol.status is Status.INFEASIBLE
        assert sol.decision is None
        assert sol.objective is None
        assert PROBLEM.encode(sol.decision) == {"chunks": {}, "memory_gb": {}, "speed": {}}
        PROBLEM.check(PROBLEM.parse(instance), sol)


def test_cli_reports_an_infeasible_instance(tmp_path: Path) -> None:
    import subprocess
    import sys

    path = tmp_path / "tight.json"
    path.write_text(dumps(to_instance(figure10(1.0))))
    run = subprocess.run(
        [sys.executable, "-m", "scheduling_opt.cli", "solve", str(path), "--json"],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert "Traceback" not in run.stderr
    out = json.loads(run.stdout)
    assert out["status"] == "infeasible"


def test_dp_refuses_values_whose_sum_overflows() -> None:
    from scheduling_opt.mckp import Mckp

    with pytest.raises(InvalidInstanceError) as err:
        Mckp.from_groups([[(1, 9e307)], [(1, 9e307)]], 2)
    assert err.value.path == "values"


@pytest.mark.parametrize(
    ("make", "field"),
    [
        (lambda: ms.MemorySplitInput(-1.0, ()), "memory_gb"),
        (lambda: ms.MemorySplitInput("8", ()), "memory_gb"),  # type: ignore[arg-type]
        (lambda: ms.MemorySplitInput(8.0, (), guarantee_gb=9.0), "guarantee_gb"),
        (lambda: ms.MemorySplitInput(8.0, (), chunk_gb=0.0), "chunk_gb"),
        (lambda: ms.MemorySplitInput(8.0, (), chunk_gb=1e-6), "chunk_gb"),
        (lambda: ms.MemorySplitInput(8.0, ("a",)), "jobs[0]"),  # type: ignore[arg-type]
        (
            lambda: ms.MemorySplitInput(
                8.0,
                (
                    ms.OpportunisticJob("a", 1.0, ms.PRESETS["sr"]),
                    ms.OpportunisticJob("a", 2.0, ms.PRESETS["sr"]),
                ),
            ),
            "jobs",
        ),
        (lambda: ms.OpportunisticJob("", 1.0, ms.PRESETS["sr"]), "id"),
        (lambda: ms.OpportunisticJob("a", 0.0, ms.PRESETS["sr"]), "peak_gb"),
        (lambda: ms.OpportunisticJob("a", 1.0, ((0.5, 0.9),)), "curve"),
        (lambda: ms.OpportunisticJob("a", 1.0, ((0.5, 0.9), (0.6, 0.1), (1, 1))), "curve[1]"),
    ],
)
def test_bad_constructor_arguments_name_the_field(make: object, field: str) -> None:
    with pytest.raises(InvalidInstanceError) as err:
        make()  # type: ignore[operator]
    assert err.value.path == field
