"""Reclaim: Figure 5, exact = exact-pulp = brute force, heuristics valid and never better."""

from __future__ import annotations

import itertools
import json
from fractions import Fraction
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings

from scheduling_opt.errors import InvalidInstanceError, VerificationError
from scheduling_opt.io.instance import Instance, load, loads, to_dict
from scheduling_opt.model import Cluster, GpuType, Job, Placement, PlacementRow, Server
from scheduling_opt.reclaim import (
    ModelConfig,
    ReclaimDecision,
    ReclaimInput,
    aryl,
    aryl_plus,
    check,
    exact_two_stage,
)
from scheduling_opt.reclaim._greedy import Greedy
from scheduling_opt.reclaim.io import encode, generate, read
from scheduling_opt.reclaim.model import solution_of
from scheduling_opt.registry import get_problem
from scheduling_opt.solution import Solution, Status
from scheduling_opt.testing import brute_force_reclaim_instances

INSTANCES = Path(__file__).resolve().parents[2] / "instances"
FIG5 = INSTANCES / "reclaim-aryl-fig5.json"
PROBLEM = get_problem("reclaim")
METHODS = [m.name for m in PROBLEM.methods]


Sol = Solution[ReclaimDecision]


def run(inst: Instance | ReclaimInput, method: str, seed: int = 0) -> Sol:
    inp = inst if isinstance(inst, ReclaimInput) else read(inst)
    result = PROBLEM.method(method).run(inp, seed=seed, time_limit=30)
    assert isinstance(result.decision, ReclaimDecision)
    return result


def servers(result: Sol) -> tuple[str, ...]:
    assert result.decision is not None
    return result.decision.servers


def brute_force(inp: ReclaimInput) -> tuple[int, int]:
    """The best (preempted, collateral) over every N_R-subset of on-loan servers."""
    best = None
    for chosen in itertools.combinations(range(inp.n_servers), inp.n_reclaim):
        key = inp.decide(chosen).key
        best = key if best is None else min(best, key)
    assert best is not None
    return best


def with_params(inst: Instance, **params: Any) -> Instance:
    doc = to_dict(inst)
    doc["params"] = params
    return loads(json.dumps(doc))


# --------------------------------------------------------------------------- Figure 5


def test_fig5_gpu_counts_match_table1() -> None:
    inst = load(FIG5)
    gpu_fraction = []
    for sid in map(str, range(1, 7)):
        total = Fraction(0)
        for job in inst.placement.jobs():
            rows = inst.placement.servers_of(job)
            if sid in rows:
                total += Fraction(rows[sid], sum(rows.values()))
        gpu_fraction.append(total)
    assert gpu_fraction == [Fraction(x) for x in ("0.5", "0.5", "1", "0.8", "0.4", "0.8")]


def test_fig5_server_fraction_costs_match_table1() -> None:
    inp = read(load(FIG5))
    state = Greedy(inp)
    scale = max(state.share)  # job b's single server: 1/|S_b| = 1
    costs = [Fraction(c, scale) for c in state.cost]
    assert costs == [Fraction(x) for x in ("0.5", "0.5", "1", "0.5", "1", "0.5")]


@pytest.mark.parametrize(
    "method", ["aryl", "aryl-plus", "aryl-dp", "auto", "exact", "exact-two-stage", "exact-pulp"]
)
def test_fig5_optimum_is_one_preemption(method: str) -> None:
    inp = read(load(FIG5))
    result = run(inp, method)
    check(inp, result)
    assert result.decision is not None
    assert encode(result.decision) == {
        "servers": ["1", "2"],
        "preempted_jobs": ["a"],
        "scaled_in": {},
        "objective": 1,
        "collateral_gpus": 0,
    }


def test_fig5_unlucky_order_misleads_aryl_but_not_ours() -> None:
    """Servers listed 6..1: Algorithm 1's ties now pick 6 then 5 (2 preemptions)."""
    doc = json.loads(FIG5.read_text())
    doc["cluster"]["servers"].reverse()
    inst = loads(json.dumps(doc))
    first = aryl(read(inst))
    assert servers(first) == ("6", "5")
    assert first.key == (2, 8)
    plus = aryl_plus(read(inst))
    assert plus.key == (1, 0)
    assert set(servers(plus)) == {"1", "2"}
    dp = run(inst, "aryl-dp")
    assert dp.key == (1, 0)
    assert set(servers(dp)) == {"1", "2"}


def test_fig5_single_server_is_exhaustive() -> None:
    inst = with_params(load(FIG5), servers_to_reclaim=1)
    # Every server preempts one job; server 5 preempts two. Ties on count go
    # to the least collateral: server 3 (job b lives there alone).
    assert servers(aryl(read(inst))) == ("3",)
    assert aryl(read(inst)).key == (1, 0)


# --------------------------------------------------------------------------- semantics


def _elastic_instance(n_reclaim: int) -> Instance:
    cluster = Cluster(
        (GpuType("V100"),),
        (
            Server("t1", "V100", 8),
            Server("i1", "V100", 8, "inference", True),
            Server("i2", "V100", 8, "inference", True),
        ),
    )
    jobs = (
        Job("e", min_workers=2, max_workers=8, duration=10.0),
        Job("f", min_workers=4, max_workers=4, duration=10.0, gpus_per_worker=2),
    )
    rows = (
        PlacementRow("e", "t1", 2),
        PlacementRow("e", "i1", 4),
        PlacementRow("f", "t1", 1),
        PlacementRow("f", "i2", 3),
    )
    params = {"servers_to_reclaim": n_reclaim}
    return Instance("reclaim", cluster, jobs, Placement(rows), params)


def test_elastic_job_scales_in_and_inelastic_job_is_preempted() -> None:
    inp = read(_elastic_instance(2))
    result = run(inp, "exact")
    check(inp, result)
    assert result.decision is not None
    assert encode(result.decision) == {
        "servers": ["i1", "i2"],
        "preempted_jobs": ["f"],
        "scaled_in": {"e": 4},
        "objective": 1,
        "collateral_gpus": 2,  # f's worker on the training server
    }


def test_free_server_goes_first() -> None:
    inst = _elastic_instance(1)
    for method in METHODS:
        if method != "random":
            assert servers(run(inst, method)) == ("i1",), method


@pytest.mark.parametrize("method", METHODS)
def test_zero_and_all_servers(method: str) -> None:
    inst = _elastic_instance(0)
    assert servers(run(inst, method)) == ()
    everything = run(_elastic_instance(2), method)
    assert sorted(servers(everything)) == ["i1", "i2"]


# --------------------------------------------------------------------------- invalid input


@pytest.mark.parametrize("value", [7, -1, 1.5, "2", True, None])
def test_bad_servers_to_reclaim_is_rejected(value: object) -> None:
    inst = with_params(load(FIG5), servers_to_reclaim=value)
    with pytest.raises(InvalidInstanceError) as err:
        read(inst)
    assert err.value.path == "params.servers_to_reclaim"


def test_missing_field_and_cluster_are_rejected() -> None:
    with pytest.raises(InvalidInstanceError) as err:
        read(with_params(load(FIG5)))
    assert err.value.path == "params.servers_to_reclaim"
    with pytest.raises(InvalidInstanceError) as err:
        read(Instance("reclaim", params={"servers_to_reclaim": 0}))
    assert err.value.path == "cluster"


def test_checker_rejects_wrong_answers() -> None:
    inp = read(load(FIG5))
    good = servers(run(inp, "exact"))

    def claim(
        objective: float,
        chosen: tuple[str, ...],
        preempted: tuple[str, ...],
        scaled: tuple[tuple[str, int], ...],
        collateral: int,
    ) -> Sol:
        decision = ReclaimDecision(chosen, preempted, scaled, collateral)
        return Solution(Status.FEASIBLE, objective, decision, key=(objective, collateral))

    bad_results = [
        solution_of(inp, [0], Status.FEASIBLE, 0.0),
        claim(1.0, ("1", "1"), ("a",), (), 0),
        claim(1.0, ("1", "9"), ("a",), (), 0),
        claim(0.0, good, (), (), 0),
        claim(1.0, good, ("a",), (), 4),
        claim(1.0, good, ("a",), (("b", 1),), 0),
    ]
    for bad in bad_results:
        with pytest.raises(VerificationError):
            check(inp, bad)


# --------------------------------------------------------------------------- properties


@pytest.mark.slow
@settings(max_examples=80, deadline=None)
@given(brute_force_reclaim_instances(max_servers=10))
def test_every_method_is_valid_and_none_beats_exact(inst: Instance) -> None:
    inp = read(inst)
    results = {m: run(inp, m, seed=3) for m in METHODS}
    for method, result in results.items():
        check(inp, result)
        assert len(set(servers(result))) == inp.n_reclaim, method
        proving = method.startswith("exact") or method == "auto"
        assert result.status is (Status.OPTIMAL if proving else Status.FEASIBLE)
    best = brute_force(inp)
    assert results["exact"].key == best
    assert results["auto"].key == best
    assert results["exact-two-stage"].key == best
    assert results["exact-pulp"].key == best
    assert all(r.key >= best for r in results.values())
    assert results["aryl-plus"].key <= results["aryl"].key
    assert results["aryl-dp"].key <= results["aryl"].key
    if inp.n_reclaim == 1:  # Algorithm 1 line 19: exhaustive, hence optimal
        assert results["aryl"].key == best


@settings(max_examples=30, deadline=None)
@given(brute_force_reclaim_instances(max_servers=10))
def test_exact_model_variants_agree_with_brute_force(inst: Instance) -> None:
    inp = read(inst)
    best = brute_force(inp)
    for config in (
        ModelConfig(reduce=False, tight=False, disaggregate=False, direct=False, merge=False),
        ModelConfig(lexicographic=False),
        ModelConfig(lean=False),
        ModelConfig(backend="cpsat"),
    ):
        assert exact_two_stage(inp, config=config).key == best, config


# --------------------------------------------------------------------------- generator, files


def test_generator_is_seeded_and_shaped() -> None:
    a, b = generate("60", 5), generate("60", 5)
    assert a == b
    assert a != generate("60", 6)
    inp = read(a)
    assert inp.n_servers == 60
    assert inp.n_reclaim == 15
    assert 100 <= len(a.jobs) <= 120
    assert any(j.elastic for j in a.jobs)
    assert loads(json.dumps(to_dict(a))) == a
    with pytest.raises(InvalidInstanceError):
        generate("big", 0)


def test_random_is_seeded() -> None:
    inp = read(generate("20", 1))
    assert servers(run(inp, "random", 4)) == servers(run(inp, "random", 4))
    assert servers(run(inp, "aryl-plus", 4)) == servers(run(inp, "aryl-plus", 4))


@pytest.mark.parametrize("path", sorted(INSTANCES.glob("reclaim-*.json")), ids=lambda p: p.name)
def test_instance_files_solve_and_check(path: Path) -> None:
    inst = load(path)
    for method in ("aryl", "scf", "random"):
        check(read(inst), PROBLEM.solve(inst, method))


def test_exact_reports_time_limit_honestly() -> None:
    inp = read(load(INSTANCES / "reclaim-n150.json"))
    for method in ("exact", "exact-two-stage"):
        result = PROBLEM.method(method).run(inp, time_limit=0.001)
        assert result.status in (Status.OPTIMAL, Status.TIME_LIMIT)
        check(inp, result)


def test_heuristics_never_beat_exact_on_generated() -> None:
    inp = read(generate("20", 2))
    best = run(inp, "exact")
    assert best.status is Status.OPTIMAL
    assert best.key == run(inp, "exact-pulp").key == run(inp, "exact-two-stage").key
    for method in METHODS:
        result = run(inp, method)
        check(inp, result)
        assert result.key >= best.key
