"""AntMan memory split: exact (MCKP DP) = MILP = brute force; greedy feasible, never better."""

from __future__ import annotations

import itertools
import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from scheduling_opt.errors import InvalidInstanceError, VerificationError
from scheduling_opt.instance import dumps, load, loads
from scheduling_opt.result import SolveOptions, Status
from scheduling_opt.solvers import memory_split as ms
from scheduling_opt.solvers.registry import get_problem

INSTANCES = Path(__file__).resolve().parent.parent / "instances"
PROBLEM = get_problem("memory-split")


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
    greedy, exact = ms.solve_greedy(p), ms.solve_exact(p)
    # Greedy: VGG's steep start wins 4 chunks (+0.1375 each), then ResNet's +0.035 beats
    # VGG's +0.02: ResNet ends at 6 GB (0.275), VGG at 5 GB (0.9).
    assert greedy.chunks == (5, 6)
    assert greedy.objective == pytest.approx(1.175)
    # Exact: ResNet at full memory (1.0), VGG at its minimum (0.35).
    assert exact.chunks == (1, 10)
    assert exact.objective == pytest.approx(1.35)
    for result in (greedy, exact):
        ms.check_split(p, result)


def test_enough_memory_gives_everyone_its_peak() -> None:
    p = figure10(20.0)
    for result in (ms.solve_greedy(p), ms.solve_exact(p)):
        assert result.memory_gb == (10.0, 10.0)
        assert result.objective == pytest.approx(2.0)


def test_infeasible_when_minimums_do_not_fit() -> None:
    p = figure10(1.0)
    for result in (ms.solve_greedy(p), ms.solve_exact(p), ms.solve_milp(p)):
        assert result.status is Status.INFEASIBLE
        ms.check_split(p, result)
    with pytest.raises(VerificationError, match="infeasible"):
        ms.check_split(figure10(11.0), ms.solve_exact(p))


def test_checker_rejects_overfull_and_misreported_splits() -> None:
    p = figure10(11.0)
    good = ms.solve_exact(p)
    over = ms.MemorySplit(
        Status.FEASIBLE, 2.0, 0.0, "x", ("vgg", "resnet"), (10, 10), (10.0, 10.0), (1.0, 1.0)
    )
    with pytest.raises(VerificationError, match="exceed"):
        ms.check_split(p, over)
    lie = ms.MemorySplit(
        good.status, 9.0, 0.0, "x", good.ids, good.chunks, good.memory_gb, good.speeds
    )
    with pytest.raises(VerificationError, match="objective"):
        ms.check_split(p, lie)


@st.composite
def curves(draw: st.DrawFn) -> ms.Curve:
    """Valid curves: 0-2 inner points (increasing fractions, non-decreasing speeds), then (1, 1)."""
    fractions = sorted(set(draw(st.lists(st.integers(5, 95), max_size=2))))
    speeds = sorted(
        draw(st.lists(st.integers(0, 1000), min_size=len(fractions), max_size=len(fractions)))
    )
    inner = tuple((f / 100, s / 1000) for f, s in zip(fractions, speeds, strict=True))
    return (*inner, (1.0, 1.0))


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
    exact, greedy = ms.solve_exact(p), ms.solve_greedy(p)
    ms.check_split(p, exact)
    ms.check_split(p, greedy)
    if best is None:
        assert exact.status is greedy.status is Status.INFEASIBLE
        return
    assert exact.status is Status.OPTIMAL
    assert exact.objective == pytest.approx(best, abs=1e-9)
    assert greedy.objective is not None
    assert greedy.objective <= best + 1e-9


def test_milp_agrees_with_the_dp() -> None:
    for seed in range(3):
        p = ms.random_input(6, seed)
        dp, milp = ms.solve_exact(p), ms.solve_milp(p)
        assert milp.status is Status.OPTIMAL
        assert milp.objective == pytest.approx(dp.objective, abs=1e-6)
        ms.check_split(p, milp)


def test_registered_problem_solves_and_checks_generated_instances() -> None:
    for size in PROBLEM.sizes["quick"]:
        instance = PROBLEM.generate(size, 3)  # type: ignore[misc]
        assert dumps(PROBLEM.generate(size, 3)) == dumps(instance)  # type: ignore[misc]
        problem = PROBLEM.parse(instance)
        for method in PROBLEM.methods:
            result = PROBLEM.solve(instance, method.name, SolveOptions(seed=0, time_limit=10))
            PROBLEM.check(problem, result)
            assert result.status in (Status.OPTIMAL, Status.FEASIBLE)
            json.dumps(result.decision())


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
    p = ms.random_input(5, 7)
    assert ms.parse_memory_split(loads(dumps(ms.to_instance(p)))) == p
    assert ms.random_input(5, 7) == p
    assert ms.random_input(5, 8) != p


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
    greedy, exact = ms.solve_greedy(problem), ms.solve_exact(problem)
    assert exact.memory_gb == (1.0, 3.0, 12.0)  # ResNet gets its peak
    assert greedy.memory_gb == (1.0, 4.0, 11.0)  # ResNet one GB short: 62% slower
    assert exact.objective == pytest.approx(2.4781, abs=1e-4)
    assert greedy.objective == pytest.approx(2.1333, abs=1e-4)
