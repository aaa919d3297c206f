"""The ``batch-size`` problem end to end: reading, methods, checker, exact baselines."""

from __future__ import annotations

import importlib
import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import assume, given, settings

from scheduling_opt.batch_size import io as bio
from scheduling_opt.batch_size import operators as ops
from scheduling_opt.batch_size.check import check
from scheduling_opt.batch_size.evaluate import objective, solution_of
from scheduling_opt.batch_size.model import BatchSizeInput, JobState
from scheduling_opt.errors import InstanceTooLargeError, InvalidInstanceError, VerificationError
from scheduling_opt.io.instance import dumps, load, loads
from scheduling_opt.model import BatchInfo, Job
from scheduling_opt.registry import get_problem
from scheduling_opt.solution import Status
from scheduling_opt.testing import batch_size_cases, cluster_of, seeded_batch_size_input

# The modules (the package re-exports functions of the same names).
ox = importlib.import_module("scheduling_opt.batch_size.exact")
search = importlib.import_module("scheduling_opt.batch_size.search")

INSTANCES = Path(__file__).resolve().parent.parent.parent / "instances"
PROBLEM = get_problem("batch-size")
REL = 1e-6  # CP-SAT optimizes integer-scaled costs: 1e-7 relative rounding


def example() -> dict[str, Any]:
    raw = json.loads((INSTANCES / "batch-size-example.json").read_text())
    assert isinstance(raw, dict)
    return raw


@pytest.mark.parametrize("path", sorted(INSTANCES.glob("batch-size-*.json")), ids=lambda p: p.name)
def test_curated_instances_solve_and_verify(path: Path) -> None:
    problem = PROBLEM.parse(load(path))
    results = {m.name: m.run(problem, seed=0, time_limit=30) for m in PROBLEM.methods}
    for result in results.values():
        PROBLEM.check(problem, result)
        assert result.seconds >= 0
    exact = results["exact"]
    assert exact.status is Status.OPTIMAL
    assert exact.objective is not None
    assert results["ones"].status is Status.FEASIBLE
    for name in ("ones", "greedy"):
        found = results[name].objective
        assert found is not None
        assert found >= exact.objective * (1 - REL)


def test_example_admits_every_job_and_uses_every_gpu() -> None:
    problem = PROBLEM.parse(load(INSTANCES / "batch-size-example.json"))
    result = PROBLEM.method("exact").run(problem)
    decision = PROBLEM.encode(result.decision)
    jobs = decision["jobs"]
    assert all(v["gpus"] >= 1 for v in jobs.values())
    assert all(row["job"] is not None for row in decision["gpus"])
    assert jobs["gpt-small"]["gpus"] == 1  # warm-up: one GPU (§3.3.2, Start)
    assert all(v["batch"] <= problem.limit[i] for i, v in enumerate(jobs.values()))


def test_generate_is_seeded_and_round_trips() -> None:
    a, b, c = bio.generate("g16", 3), bio.generate("g16", 3), bio.generate("g16", 4)
    assert dumps(a) == dumps(b) != dumps(c)
    assert loads(dumps(a)) == a
    problem = PROBLEM.parse(a)
    assert problem.n_gpus == 16
    assert problem.n_nodes == 4
    assert problem.n_jobs == 12
    assert PROBLEM.parse(bio.generate("g8-n12", 0)).n_jobs == 12
    for bad in ("g", "g6", "x8", "g8-n"):
        with pytest.raises(InvalidInstanceError):
            bio.generate(bad, 0)


def test_ones_is_deterministic_with_a_seed() -> None:
    problem = PROBLEM.parse(bio.generate("g16", 5))
    method = PROBLEM.method("ones")
    one, two = method.run(problem, seed=9), method.run(problem, seed=9)
    assert one.decision == two.decision
    assert one.objective == two.objective


def test_ones_never_beats_exact_and_reaches_it_on_small_instances() -> None:
    reached = 0
    for seed in range(6):
        problem = PROBLEM.parse(bio.generate("g8", seed))
        exact = ox.exact(problem, time_limit=30)
        assert exact.status is Status.OPTIMAL
        assert exact.objective is not None
        found = search.ones_step(problem, None, seed=seed, generations=150)
        assert found.objective is not None
        assert found.objective >= exact.objective * (1 - REL)
        reached += found.objective <= exact.objective * (1 + REL)
    assert reached == 6


@pytest.mark.parametrize("seed", range(4))
def test_exact_methods_agree_with_brute_force(seed: int) -> None:
    for cross in (False, True):
        problem = seeded_batch_size_input(seed, nodes=(2, 2), jobs=3, cross_node=cross)
        brute = ox.brute_force(problem)
        cpsat = ox.exact_cpsat(problem, time_limit=30)
        assert cpsat.status is Status.OPTIMAL
        assert cpsat.objective == pytest.approx(brute.objective, rel=REL)
        check(problem, cpsat)
        if problem.separable:
            dp = ox.exact_separable(problem)
            assert dp.objective == pytest.approx(brute.objective, rel=1e-9)
            check(problem, dp)


def test_cpsat_with_lossy_cost_rounding_is_not_called_optimal(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    problem = seeded_batch_size_input(1, nodes=(2, 2), jobs=3, cross_node=True)
    assert ox.exact_cpsat(problem, time_limit=30).status is Status.OPTIMAL
    # Ten integer steps over the largest cost: CP-SAT still proves its rounded
    # model, but that is no proof for the real costs.
    monkeypatch.setattr(ox, "COST_SCALE", 10.0)
    coarse = ox.exact_cpsat(problem, time_limit=30)
    assert coarse.status is Status.FEASIBLE
    brute = ox.brute_force(problem).objective
    assert coarse.objective is not None
    assert brute is not None
    assert coarse.objective >= brute * (1 - REL)
    # Its bound stays a proven bound despite the rounding.
    assert coarse.bound is not None
    assert coarse.bound <= brute * (1 + 1e-12)


def test_separable_dp_agrees_with_cpsat_on_one_server() -> None:
    problem = seeded_batch_size_input(7, nodes=(8,), jobs=5)
    assert problem.separable
    dp, cp = ox.exact_separable(problem), ox.exact_cpsat(problem, time_limit=30)
    assert dp.objective == pytest.approx(cp.objective, rel=REL)
    with pytest.raises(ValueError, match="separable"):
        ox.exact_separable(seeded_batch_size_input(7, nodes=(2, 2), jobs=3))


def test_brute_force_refuses_large_instances() -> None:
    with pytest.raises(InstanceTooLargeError):
        ox.brute_force(seeded_batch_size_input(0, nodes=(4, 4, 4), jobs=6))


def test_objective_prefers_running_more_jobs_then_busy_gpus() -> None:
    """Eq. (3) alone would prefer waiting; the penalties rank admissions first."""
    problem = seeded_batch_size_input(2, nodes=(4,), jobs=3)
    run_all = np.array([[0, 1, 2, -1]])
    two_wait = np.array([[0, -1, -1, -1]])
    assert objective(problem, run_all)[0] < objective(problem, two_wait)[0]
    filled = ops.fill(problem, run_all, problem.work)
    assert objective(problem, filled)[0] <= objective(problem, run_all)[0]


def test_checker_rejects_bad_schedules() -> None:
    problem = seeded_batch_size_input(4, nodes=(2, 2), jobs=3)
    good = solution_of(problem, ops.greedy_genes(problem), Status.FEASIBLE, 0.0)
    check(problem, good)
    assert good.objective is not None
    assert good.decision is not None
    with pytest.raises(VerificationError, match="objective"):
        check(problem, good.with_(objective=good.objective * 2 + 1))
    over = list(good.decision.local_batch)
    busy = next(g for g, j in enumerate(good.decision.assignment) if j >= 0)
    over[busy] = int(problem.max_local[good.decision.assignment[busy]]) + 1
    d = good.decision
    with pytest.raises(VerificationError, match="local batch"):
        check(problem, good.with_(decision=type(d)(d.job_ids, d.gpu_ids, d.assignment, over)))
    short = type(d)(d.job_ids, d.gpu_ids[:-1], d.assignment[:-1], d.local_batch[:-1])
    with pytest.raises(VerificationError, match="every GPU"):
        check(problem, good.with_(decision=short))


def test_parse_errors_name_the_json_path() -> None:
    cases = {
        "params.population": lambda d: d["params"].update(population=1),
        "params.mutation_rate": lambda d: d["params"].update(mutation_rate=1.5),
        "params.jobs.lstm.beta": lambda d: d["params"]["jobs"]["lstm"].pop("beta"),
        "params.jobs.nope": lambda d: d["params"]["jobs"].update(nope={"beta": 2}),
        "params.jobs.bert.throughput.per_sample": lambda d: d["params"]["jobs"]["bert"][
            "throughput"
        ].update(per_sample=-1),
        "params.bogus": lambda d: d["params"].update(bogus=1),
        "jobs[1].batch": lambda d: d["jobs"][1].pop("batch"),
        "jobs[0].min_workers": lambda d: d["jobs"][0].update(min_workers=2),
        "params.jobs.vgg16.features": lambda d: d["params"].pop("progress_model"),
        "cluster.gpu_types": lambda d: (
            d["cluster"]["gpu_types"].append({"name": "T4", "compute": 0.25}),
            d["cluster"]["servers"][1].update(gpu_type="T4"),
        ),
    }
    for path, edit in cases.items():
        doc = example()
        edit(doc)  # type: ignore[no-untyped-call]
        with pytest.raises(InvalidInstanceError) as err:
            PROBLEM.parse(loads(json.dumps(doc)))
        assert err.value.path.startswith(path), (path, str(err.value))


def test_features_go_through_the_progress_model() -> None:
    problem = PROBLEM.parse(load(INSTANCES / "batch-size-example.json"))
    vgg = problem.job_ids.index("vgg16")
    assert problem.beta[vgg] == pytest.approx(max(0.5 * 10 - 2 * 0.5 + 6, 1))
    assert problem.work[vgg] == pytest.approx(50000 * problem.beta[vgg])


def test_quick_suite_sizes_exist() -> None:
    assert PROBLEM.generate is not None
    for size in PROBLEM.sizes["quick"]:
        assert PROBLEM.parse(PROBLEM.generate(size, 0)).n_gpus in (8, 16)


@settings(max_examples=15, deadline=None)
@given(batch_size_cases(max_jobs=3))
def test_exact_and_search_against_brute_force_on_any_tiny_instance(
    problem: BatchSizeInput,
) -> None:
    assume((problem.n_jobs + 1) ** problem.n_gpus <= 50_000)
    brute = ox.brute_force(problem)
    assert brute.objective is not None
    exact = ox.exact(problem, time_limit=30)
    assert exact.objective == pytest.approx(brute.objective, rel=REL)
    check(problem, exact)
    found = search.ones_step(problem, None, seed=0, generations=20)
    assert found.objective is not None
    assert found.objective >= brute.objective * (1 - 1e-12)


def test_registry_serves_this_module() -> None:
    assert PROBLEM is bio.PROBLEM
    assert PROBLEM.default == "auto"
    assert [m.name for m in PROBLEM.exact_methods] == ["exact"]


def test_input_validates_and_freezes_its_arrays() -> None:
    cluster = cluster_of((2,))
    jobs = [
        Job("a", 1, 2, 3600.0, batch=BatchInfo(100, 8, 8)),
        Job("b", 1, 2, 3600.0, batch=BatchInfo(100, 16, 8)),
    ]
    ok = BatchSizeInput(cluster, jobs, {"a": JobState(2.0), "b": JobState(3.0)})
    assert ok.n_gpus == 2
    assert ok.limit.tolist() == [8, 16]
    with pytest.raises(ValueError, match="read-only"):
        ok.limit[0] = 4  # read-only: no caller can change the input behind its back
    with pytest.raises(InvalidInstanceError, match=r"states\.b"):
        BatchSizeInput(cluster, jobs, {"a": JobState(2.0)})


def test_cpsat_time_limit_is_reported_honestly() -> None:
    problem = PROBLEM.parse(bio.generate("g64-n96", 1))
    result = ox.exact_cpsat(problem, time_limit=0.001)
    assert result.status in (Status.TIME_LIMIT, Status.OPTIMAL)
    check(problem, result)  # the incumbent (at worst the greedy hint) is a valid schedule
