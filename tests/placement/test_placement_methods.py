"""Placement: Proposition 1, BFD's rules, checker, exact = exact-pulp = brute force."""

from __future__ import annotations

import dataclasses
import itertools
import json
import math
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from scheduling_opt.errors import InvalidInstanceError, VerificationError
from scheduling_opt.io.instance import Instance, load, loads, to_dict
from scheduling_opt.model import Cluster, GpuType, Job, Placement, PlacementRow, Server
from scheduling_opt.placement import (
    PlacementDecision,
    PlacementInput,
    best_fit_decreasing,
    bfd_assign,
    buddy_pack,
    check,
    exact,
    exact_cpsat,
    exact_pulp,
    fits_rounded,
    node_parts,
    place_span,
    quasi_assign,
    round_up,
    round_up_consolidation,
    rounded_demand,
    search_assign,
    total_rw,
)
from scheduling_opt.placement.io import generate, read
from scheduling_opt.registry import get_problem
from scheduling_opt.scaling import Log2Model, Log2Times
from scheduling_opt.solution import Solution, Status
from scheduling_opt.testing import pooled_placement_instances, tiny_placement_instances

Sol = Solution[PlacementDecision]

INSTANCES = Path(__file__).resolve().parents[2] / "instances"
EXAMPLE = INSTANCES / "placement-chronus-example.json"
PROBLEM = get_problem("placement")
HEURISTICS = ("bfd", "round-up", "quasi", "local-search")
TYPES = (GpuType("V100", 1.0, 32.0), GpuType("T4", 0.25, 16.0))


def run(inp: PlacementInput, method: str) -> Sol:
    result: Sol = PROBLEM.method(method).run(inp, time_limit=30)
    assert isinstance(result.decision, PlacementDecision)
    return result


def rows(result: Sol) -> tuple[tuple[str, str, int], ...]:
    assert result.decision is not None
    return result.decision.rows


def servers_of(result: Sol, job_id: str) -> dict[str, int]:
    assert result.decision is not None
    return result.decision.servers_of(job_id)


def nodes(n: int, free: int = 8) -> Cluster:
    return Cluster(TYPES, tuple(Server(f"n{i}", "V100", free) for i in range(n)))


def with_params(inst: Instance, **params: Any) -> Instance:
    doc = to_dict(inst)
    doc["params"] = params
    return loads(json.dumps(doc))


# --------------------------------------------------------------------------- round-up


def test_round_up_matches_section_3_4_1() -> None:
    assert [round_up(g) for g in range(1, 18)] == [
        1, 2, 4, 4, 8, 8, 8, 8, 16, 16, 16, 16, 16, 16, 16, 16, 24,
    ]  # fmt: skip
    # A 6-GPU node is 4 + 2: single-node demands 1, 2, 4, else whole nodes.
    assert node_parts(6) == (4, 2)
    assert node_parts(8) == (8,)
    assert node_parts(12) == (8, 4)
    assert [round_up(g, 6) for g in (1, 2, 3, 4, 5, 6, 7)] == [1, 2, 4, 4, 6, 6, 12]
    assert rounded_demand([3, 5, 12, 1]) == 4 + 8 + 16 + 1  # Eq. (6) left-hand side


def test_fits_rounded_for_other_node_sizes_runs_the_construction() -> None:
    assert fits_rounded([3, 5, 2], 2)  # 4 + 8 + 2 <= 16
    assert not fits_rounded([3, 5, 7], 2)  # 4 + 8 + 8 > 16
    # 12 GPUs on two 6-GPU nodes, but only two 4-GPU parts exist.
    assert not fits_rounded([4, 4, 4], 2, node_size=6)
    assert fits_rounded([4, 2, 4, 2], 2, node_size=6)
    assert buddy_pack([8, 4, 4, 2, 1, 1], [8, 8, 8], 8) == [(0,), (1,), (1,), (2,), (2,), (2,)]


FRIENDLY = st.sampled_from([1, 2, 4, 8, 16, 24])


@settings(max_examples=60, deadline=None)
@given(m=st.integers(1, 8), demands=st.lists(FRIENDLY, min_size=1, max_size=14), data=st.data())
def test_proposition_1_every_job_consolidated(m: int, demands: list[int], data: Any) -> None:
    kept: list[int] = []
    for g in demands:  # the precondition: friendly demands within 8m GPUs
        if sum(kept) + g <= 8 * m:
            kept.append(g)
    jobs = []
    for i, g in enumerate(kept):
        gpw = data.draw(st.sampled_from([d for d in (1, 2, 4, 8) if g % d == 0]))
        jobs.append(Job(f"j{i}", g // gpw, g // gpw, 60.0, gpw))
    assert fits_rounded(kept, m)
    inp = PlacementInput(nodes(m), jobs)
    result = round_up_consolidation(inp)
    assert result.decision is not None
    assert result.decision.unplaced == ()
    for job, g in zip(jobs, kept, strict=True):
        assert len(servers_of(result, job.id)) == math.ceil(g / 8)
    check(inp, result)


def test_round_up_leaves_a_job_pending_rather_than_spread_it() -> None:
    # Two half-free nodes: a 5-GPU job rounds to 8 and has no whole node.
    cluster = nodes(2)
    old = (Job("o1", 4, 4, 60.0), Job("o2", 4, 4, 60.0))
    rows = Placement((PlacementRow("o1", "n0", 4), PlacementRow("o2", "n1", 4)))
    result = round_up_consolidation(PlacementInput(cluster, (*old, Job("x", 5, 5, 60.0)), rows))
    assert result.decision is not None
    assert result.decision.unplaced == ("x",)
    assert result.objective == 0.0


# --------------------------------------------------------------------------- spans


def test_place_span_is_a_k_server_best_fit() -> None:
    rooms = [(1, 10), (2, 11), (3, 12), (8, 13)]
    assert place_span(rooms, 4, 1) == ((13, 4),)
    assert place_span(rooms, 4, 2) == ((11, 2), (12, 2))
    assert place_span(rooms, 6, 3) == ((10, 1), (11, 2), (12, 3))
    assert place_span(rooms, 5, 5) is None
    assert place_span(rooms, 20, 2) is None


def test_reward_is_eq_7() -> None:
    speed = Log2Model(Log2Times(1.0, 2.0))
    cluster = nodes(4)
    inp = PlacementInput(cluster, (Job("a", 16, 16, 1.0),), speed=speed)
    assert inp.k_star == (2,)
    # On 4 nodes: t_4 = 3, t_2 = 2: RW = 16 * (1/3) / (1/2).
    assert inp.rw[0][4] == pytest.approx(16 * 2 / 3)
    assert inp.rw[0][2] == 16
    assert inp.rw[0][1] == 0


# --------------------------------------------------------------------------- bfd


def test_bfd_prefers_pools_and_separates_base_from_flexible() -> None:
    servers = (
        Server("t1", "V100", 8),
        Server("t2", "V100", 8),
        Server("i1", "T4", 8, "inference", True),
        Server("i2", "T4", 8, "inference", True),
        Server("i3", "T4", 8, "inference", False),
    )
    jobs = (
        Job("inel", 6, 6, 60.0),
        Job("el", 2, 5, 60.0),
        Job("el2", 2, 4, 60.0),
        Job("v", 3, 3, 60.0, gpu_type="V100"),
    )
    result = best_fit_decreasing(PlacementInput(Cluster(TYPES, servers), jobs))
    place = {j.id: servers_of(result, j.id) for j in jobs}
    assert set(place["inel"]) == {"t1"}  # training first
    assert set(place["v"]) <= {"t1", "t2"}
    # Elastic: base workers on one on-loan group, flexible ones on another.
    base_group = {s for s, _ in place["el"].items() if s.startswith("i")}
    assert all(s.startswith("i") for s in place["el"])
    assert all(s.startswith("i") for s in place["el2"])
    assert place["el"] == {"i1": 2, "i2": 3}
    assert place["el2"] == {"i1": 2, "i2": 2}
    assert base_group == {"i1", "i2"}
    assert "i3" not in {s for p in place.values() for s in p}


def test_bfd_keeps_the_callers_groups_and_places_flexible_workers_in_theirs() -> None:
    # Three on-loan servers of 8 GPUs, each with 2 GPUs used by a running job:
    # i1 kept in the base group, i2 in the flexible group, i3 named base too.
    # Hand-computed with the tiers of docs/placement.md, in BFD's order (GPUs
    # descending: fill 8, f 4, e+ 3):
    # - "fill" (inelastic) takes the training server t1;
    # - "f" (elastic 2..6, placed at 4: 2 base + 2 flexible): base tiers (free
    #   or base on-loan servers): i1 and i3 tie at 6 free, file order: i1
    #   gets 2; its flexible workers: flexible tiers, only i2: i2 gets 2;
    # - "e+" (3 flexible workers of a running job): flexible tiers again: i2
    #   (4 free left) gets 3.
    servers = (
        Server("t1", "V100", 8),
        Server("i1", "T4", 8, "inference", True),
        Server("i2", "T4", 8, "inference", True),
        Server("i3", "T4", 8, "inference", True),
    )
    old = (Job("r1", 2, 2, 60.0), Job("r2", 2, 2, 60.0), Job("r3", 2, 2, 60.0))
    rows = Placement(
        (PlacementRow("r1", "i1", 2), PlacementRow("r2", "i2", 2), PlacementRow("r3", "i3", 2))
    )
    fill = Job("fill", 8, 8, 60.0)  # takes the training server first: both pools in play
    jobs = (*old, fill, Job("e+", 3, 3, 60.0), Job("f", 2, 6, 60.0))
    inp = PlacementInput(Cluster(TYPES, servers), jobs, rows, workers={"f": 4})
    groups = {"i1": "base", "i2": "flexible", "i3": "base"}
    got = bfd_assign(inp, groups=groups, flexible=("e+",))
    ids = inp.server_ids
    named = [None if a is None else {ids[s]: w for s, w in a} for a in got]
    assert named == [{"t1": 8}, {"i2": 3}, {"i1": 2, "i2": 2}]
    # The same call without the caller's groups: every busy on-loan server is
    # base, so no flexible server exists. f: base 2 on i1 (first of three at
    # 6), flexible 2: no free or flexible server, training full, base tier:
    # i1 (4 free) fits best: f = i1 x 4. e+: base tier, i1 (2 free) then i2.
    plain = bfd_assign(inp, flexible=("e+",))
    assert [None if a is None else {ids[s]: w for s, w in a} for a in plain] == [
        {"t1": 8},
        {"i1": 2, "i2": 1},
        {"i1": 4},
    ]


@pytest.mark.parametrize(
    ("groups", "flexible", "error"),
    [
        ({"t1": "base"}, (), r"groups\.t1: not an on-loan server"),
        ({"nope": "base"}, (), r"groups\.nope: not an on-loan server"),
        ({"i1": "spare"}, (), r"groups\.i1: must be 'base' or 'flexible'"),
        ({}, ("ghost",), r"flexible\.ghost: not a job to place"),
    ],
)
def test_bfd_refuses_groups_it_cannot_use(
    groups: dict[str, str], flexible: tuple[str, ...], error: str
) -> None:
    servers = (Server("t1", "V100", 8), Server("i1", "T4", 8, "inference", True))
    inp = PlacementInput(Cluster(TYPES, servers), (Job("a", 1, 1, 60.0),))
    with pytest.raises(InvalidInstanceError, match=error):
        bfd_assign(inp, groups=groups, flexible=flexible)


def test_bfd_best_fit_uses_the_tightest_server() -> None:
    cluster = nodes(3)
    old = (Job("o1", 5, 5, 60.0), Job("o2", 2, 2, 60.0))
    rows = Placement((PlacementRow("o1", "n0", 5), PlacementRow("o2", "n1", 2)))
    result = best_fit_decreasing(PlacementInput(cluster, (*old, Job("x", 3, 3, 60.0)), rows))
    assert servers_of(result, "x") == {"n0": 3}  # 3 free on n0 fits exactly


@settings(max_examples=60, deadline=None)
@given(inst=pooled_placement_instances())
def test_bfd_respects_types_and_pools(inst: Instance) -> None:
    inp = read(inst)
    result = run(inp, "bfd")
    check(inp, result)
    cluster = inst.require_cluster()
    for job_id, sid, _ in rows(result):
        server, job = cluster.server(sid), inst.jobs_by_id[job_id]
        assert job.gpu_type is None or server.gpu_type == job.gpu_type
        assert server.usable_for_training


@settings(max_examples=40, deadline=None)
@given(inst=pooled_placement_instances())
def test_heuristics_pass_the_checker(inst: Instance) -> None:
    inp = read(inst)
    for method in HEURISTICS:
        check(inp, run(inp, method))


# --------------------------------------------------------------------------- checker


def _liar(result: Sol, **changes: Any) -> Sol:
    """The same answer with the solution's objective or the decision's fields changed."""
    assert result.decision is not None
    if "objective" in changes:
        return result.with_(objective=changes.pop("objective"))
    return result.with_(decision=dataclasses.replace(result.decision, **changes))


def test_checker_catches_wrong_answers() -> None:
    inp = read(load(EXAMPLE))
    good = run(inp, "local-search")
    check(inp, good)
    good_rows = rows(good)
    assert good.decision is not None
    job, server, w = good_rows[0]
    bad = [
        _liar(good, objective=(good.objective or 0) + 1),
        _liar(good, rows=((job, server, w + 1), *good_rows[1:])),
        _liar(good, rows=good_rows[1:]),
        _liar(good, unplaced=(*good.decision.unplaced, job)),
        _liar(good, rows=((job, "nope", w), *good_rows[1:])),
        _liar(good, rows=(*good_rows, ("o1", server, 1))),
        _liar(good, rows=((job, server, w), (job, server, w), *good_rows[1:])),
    ]
    for result in bad:
        with pytest.raises(VerificationError):
            check(inp, result)


def test_checker_counts_the_existing_placement() -> None:
    cluster = nodes(1)
    old = Job("o", 6, 6, 60.0)
    inst = Instance("placement", cluster, (old, Job("x", 3, 3, 60.0)),
                    Placement((PlacementRow("o", "n0", 6),)))  # fmt: skip
    inp = read(inst)
    fake = Solution(Status.FEASIBLE, 3.0, PlacementDecision((("x", "n0", 3),), (), 3.0, 1))
    with pytest.raises(VerificationError, match="over-full"):
        check(inp, fake)


# --------------------------------------------------------------------------- exact


def brute_force(inst: Instance) -> float:
    """Best total RW over every placement, from the cluster and the speed model."""
    cluster = inst.require_cluster()
    speed = Log2Model()
    servers = [s for s in cluster.servers if s.usable_for_training]
    used = {s.id: 0 for s in servers}
    for row in inst.placement.rows:
        used[row.server] += row.workers * inst.jobs_by_id[row.job].gpus_per_worker
    todo = [j for j in inst.jobs if j.id not in inst.placement.jobs()]

    def options(job: Job) -> list[dict[str, int] | None]:
        elig = [s.id for s in servers if job.fits(s)]
        out: list[dict[str, int] | None] = [None]
        for counts in itertools.product(range(job.max_workers + 1), repeat=len(elig)):
            if sum(counts) == job.max_workers:
                out.append({s: c for s, c in zip(elig, counts, strict=True) if c})
        return out

    def reward(job: Job, spread: dict[str, int]) -> float:
        per = max(s.gpus // job.gpus_per_worker for s in servers if job.fits(s))
        if not per:  # no server holds a worker: the capacity check rejects it
            return 0.0
        k_star = math.ceil(job.max_workers / per)
        g = job.max_gpus
        return g * speed.speed(None, g, len(spread)) / speed.speed(None, g, k_star)

    best = 0.0
    for combo in itertools.product(*(options(j) for j in todo)):
        load = dict(used)
        total = 0.0
        for job, spread in zip(todo, combo, strict=True):
            for sid, c in (spread or {}).items():
                load[sid] += c * job.gpus_per_worker
            total += reward(job, spread) if spread else 0.0
        if all(load[s.id] <= s.gpus for s in servers):
            best = max(best, total)
    return best


@settings(max_examples=25, deadline=None)
@given(inst=tiny_placement_instances())
def test_exact_equals_pulp_equals_brute_force(inst: Instance) -> None:
    inp = read(inst)
    best = brute_force(inst)
    results = {m: run(inp, m) for m in ("exact", "exact-cpsat", "exact-pulp", *HEURISTICS)}
    # The arc-flow model alone (no local-search incumbent) must prove it too.
    results["exact-model-only"] = exact(inp, time_limit=30, warm=False)
    for method, result in results.items():
        check(inp, result)
        assert result.objective is not None
        if method.startswith("exact"):
            assert result.status == Status.OPTIMAL
            assert result.objective == pytest.approx(best, abs=1e-5)
        else:
            assert result.objective <= best + 1e-6


@pytest.mark.parametrize("size", ["6", "8", "16"])
@pytest.mark.parametrize("seed", [0, 1])
def test_generated_every_method_valid_and_no_heuristic_beats_exact(size: str, seed: int) -> None:
    inp = read(generate(size, seed))
    exact = run(inp, "exact")
    assert exact.status == Status.OPTIMAL
    assert exact.objective is not None
    pulp = run(inp, "exact-pulp")
    assert pulp.objective == pytest.approx(exact.objective, abs=1e-4)
    cpsat = run(inp, "exact-cpsat")
    assert cpsat.status == Status.OPTIMAL
    assert cpsat.objective == pytest.approx(exact.objective, abs=1e-4)
    for method in ("exact", "exact-pulp", *HEURISTICS):
        result = exact if method == "exact" else pulp if method == "exact-pulp" else None
        result = result or run(inp, method)
        check(inp, result)
        assert result.objective is not None
        assert result.objective <= exact.objective + 1e-4
    assert run(inp, "local-search").objective >= run(inp, "quasi").objective - 1e-9  # type: ignore[operator]


def test_exact_nodes_objective_spans_fewest_servers() -> None:
    cluster = nodes(3)
    old = (Job("o1", 4, 4, 60.0), Job("o2", 4, 4, 60.0))
    rows = Placement((PlacementRow("o1", "n0", 4), PlacementRow("o2", "n1", 4)))
    new = (Job("x", 2, 2, 60.0, 2), Job("y", 8, 8, 60.0), Job("z", 2, 2, 60.0))
    inp = read(Instance("placement", cluster, (*old, *new), rows))
    for solve in (exact_cpsat, exact_pulp):
        result = solve(inp, objective="nodes", time_limit=30)
        assert result.status == Status.OPTIMAL
        assert result.decision is not None
        # All 14 GPUs fit; each job on one server: y on n2, x and z on the halves.
        assert result.decision.unplaced == ()
        assert result.decision.nodes_spanned == 3


def test_local_search_with_no_search_is_quasi_consolidation() -> None:
    inp = read(generate("16", 4))
    assert search_assign(inp, 1)[0] == quasi_assign(inp)
    assert total_rw(inp, search_assign(inp)[0]) >= total_rw(inp, quasi_assign(inp))


# --------------------------------------------------------------------------- example file


def test_example_local_search_beats_quasi_and_matches_exact() -> None:
    inp = read(load(EXAMPLE))
    ls, quasi, exact = (run(inp, m) for m in ("local-search", "quasi", "exact"))
    assert exact.status == Status.OPTIMAL
    assert exact.objective is not None
    assert ls.objective == pytest.approx(exact.objective)
    assert quasi.objective is not None
    assert quasi.objective < exact.objective - 0.5


def test_solvers_are_pure_and_deterministic() -> None:
    inst = generate("16", 2)
    before = to_dict(inst)
    inp = read(inst)
    for method in HEURISTICS:
        assert rows(run(inp, method)) == rows(run(read(inst), method))
    assert to_dict(inst) == before
    assert to_dict(generate("16", 2)) == before


# --------------------------------------------------------------------------- bad input


@pytest.mark.parametrize(
    ("params", "path"),
    [
        ({"oops": 1}, "params.oops"),
        ({"models": {"ghost": "vgg"}}, "params.models.ghost"),
        ({"models": {"a": "bert"}, "sensitivity": {"kind": "log2"}}, "params.models.a"),
        ({"workers": {"a": 9}}, "params.workers.a"),
        ({"workers": {"a": 0}}, "params.workers.a"),
        ({"workers": {"o": 1}}, "params.workers.o"),
        ({"search_space": 0}, "params.search_space"),
        ({"sensitivity": {"kind": "table"}}, "params.sensitivity.models"),
    ],
)
def test_bad_params_rejected_with_their_path(params: dict[str, Any], path: str) -> None:
    inst = Instance(
        "placement",
        nodes(2),
        (Job("a", 1, 4, 60.0), Job("o", 1, 1, 60.0)),
        Placement((PlacementRow("o", "n0", 1),)),
    )
    with pytest.raises(InvalidInstanceError) as err:
        read(with_params(inst, **params))
    assert err.value.path == path


def test_elastic_workers_default_to_max_and_follow_params() -> None:
    inst = Instance("placement", nodes(2), (Job("a", 1, 4, 60.0),))
    assert read(inst).job_workers == (4,)
    assert read(with_params(inst, workers={"a": 2})).job_workers == (2,)


def test_generate_rejects_unknown_sizes() -> None:
    with pytest.raises(InvalidInstanceError):
        generate("huge", 0)
