"""Placement: the arc-flow exact model (issue 16) and the ejection moves after Algorithm 1."""

from __future__ import annotations

import pytest

from scheduling_opt.model import Cluster, GpuType, Job, Placement, PlacementRow, Server
from scheduling_opt.placement import (
    PlacementDecision,
    PlacementInput,
    arcflow_model,
    check,
    chronus_local_search,
    decide,
    exact,
    exact_pulp,
    lp_bound,
    search_assign,
    total_rw,
    upper_bound,
)
from scheduling_opt.placement.arcflow_model import classes_of, partitions
from scheduling_opt.placement.improve import improve
from scheduling_opt.placement.io import generate, read
from scheduling_opt.scaling import TableModel
from scheduling_opt.solution import Solution, Status

TYPES = (GpuType("V100", 1.0, 32.0), GpuType("T4", 0.25, 16.0))


def nodes(n: int, size: int = 8) -> Cluster:
    return Cluster(TYPES, tuple(Server(f"n{i}", "V100", size) for i in range(n)))


def test_partitions_by_hand() -> None:
    # 5 workers, at most 3 per server, at most 3 servers: 3+2, 3+1+1, 2+2+1.
    assert list(partitions(5, 3, 3)) == [(3, 2), (3, 1, 1), (2, 2, 1)]
    assert list(partitions(4, 4, 1)) == [(4,)]
    assert list(partitions(9, 4, 2)) == []


def test_classes_group_identical_servers_and_jobs() -> None:
    servers = (
        Server("a", "V100", 8),
        Server("b", "V100", 8),
        Server("c", "V100", 8),
        Server("t", "T4", 8, "inference", True),
    )
    old = Job("old", 4, 4, 60.0)
    jobs = [old, Job("x", 4, 4, 60.0), Job("y", 4, 4, 60.0), Job("z", 4, 4, 60.0, gpu_type="V100")]
    inp = PlacementInput(Cluster(TYPES, servers), jobs, Placement((PlacementRow("old", "c", 4),)))
    cl = classes_of(inp)
    # Classes by (type, free): V100 with 4 free (c), V100 with 8 free (a, b), T4 with 8 free.
    assert cl.servers == ((4, (2,)), (8, (0, 1)), (8, (3,)))
    # x and y are identical; z may use V100 servers only.
    assert cl.jobs == ((0, 1), (2,))
    assert cl.eligible == ((0, 1, 2), (0, 1))


def test_hand_instance_identical_servers() -> None:
    # Three free 8-GPU nodes, jobs of 6, 6, 6, 4, 2 GPUs (24 GPUs on 24 free):
    # not all fit whole (a 6 and the 4 cannot share a node). Best by hand:
    # 6+2 | 6 | 6 with the 4 split over the two 2-GPU holes (4 / 1.5 = 8/3),
    # total 20 + 8/3; the others: 6+2 | 6 | 4 with a 6 on 2 + 4 (22), the 4
    # left waiting (20), the 6 over three holes (21.35).
    jobs = [Job(f"j{i}", g, g, 60.0) for i, g in enumerate((6, 6, 6, 4, 2))]
    inp = PlacementInput(nodes(3), jobs)
    sol = exact(inp, time_limit=30, warm=False)
    check(inp, sol)
    assert sol.status is Status.OPTIMAL
    assert sol.objective == pytest.approx(20 + 8 / 3)
    cbc = exact_pulp(inp, time_limit=30)
    assert cbc.objective == pytest.approx(20 + 8 / 3)


def test_120_servers_proven_within_10_seconds() -> None:
    inp = read(generate("120", 0))
    sol = exact(inp, time_limit=10)
    check(inp, sol)
    assert sol.status is Status.OPTIMAL
    assert sol.objective is not None
    assert sol.seconds <= 10 + 1
    ls = chronus_local_search(inp)
    assert ls.objective is not None
    assert ls.objective <= sol.objective + 1e-9 <= upper_bound(inp) + 2e-9


def test_fallback_to_cpsat_when_partitions_explode(monkeypatch: pytest.MonkeyPatch) -> None:
    inp = read(generate("8", 1))
    model = exact(inp, time_limit=30)
    monkeypatch.setattr(arcflow_model, "MAX_PARTITIONS", 0)
    fallback = exact(inp, time_limit=30)
    check(inp, fallback)
    assert model.status is Status.OPTIMAL
    assert fallback.status is Status.OPTIMAL
    assert fallback.objective == pytest.approx(model.objective, abs=1e-6)


def test_arcflow_time_limit_keeps_the_incumbent_and_a_bound() -> None:
    inp = read(generate("96", 1))
    known = search_assign(inp)[0]
    sol = exact(inp, time_limit=1e-3, incumbent=known)
    check(inp, sol)
    assert sol.objective is not None
    assert sol.objective >= total_rw(inp, known) - 1e-9
    assert sol.bound is not None
    assert sol.bound >= sol.objective
    if sol.status is not Status.OPTIMAL:
        assert sol.bound <= upper_bound(inp) + 1e-9


def _feasible(inp: PlacementInput, decision: PlacementDecision) -> None:
    check(inp, Solution(Status.FEASIBLE, decision.reward, decision))


@pytest.mark.parametrize(("size", "seed"), [("16", 0), ("16", 2), ("96", 1), ("120", 3)])
def test_improve_never_loses_reward_and_stays_feasible(size: str, seed: int) -> None:
    inp = read(generate(size, seed))
    start = search_assign(inp)[0]
    better = improve(inp, start)
    _feasible(inp, decide(inp, better))
    assert total_rw(inp, better) >= total_rw(inp, start) - 1e-12


def test_improve_consolidates_a_spread_job_by_moving_another() -> None:
    # a (4 GPUs) sits alone on n0's half, b (8) is spread 4 + 4: moving a to
    # n1 lets b take n0 whole: 4 + 8 instead of 4 + 8 / 1.5.
    inp = PlacementInput(nodes(2), [Job("a", 4, 4, 60.0), Job("b", 8, 8, 60.0)])
    start = [((0, 4),), ((0, 4), (1, 4))]
    assert total_rw(inp, start) == pytest.approx(4 + 8 / 1.5)
    better = improve(inp, start)
    _feasible(inp, decide(inp, better))
    assert total_rw(inp, better) == pytest.approx(12.0)


def test_local_search_without_moves_is_algorithm_1() -> None:
    inp = read(generate("120", 1))
    plain = chronus_local_search(inp, improve_moves=False)
    assert plain.decision == decide(inp, search_assign(inp)[0])
    moved = chronus_local_search(inp)
    assert moved.objective is not None
    assert plain.objective is not None
    assert moved.objective >= plain.objective


@pytest.mark.parametrize(("size", "seed"), [("8", 1), ("16", 0), ("16", 4), ("120", 4)])
def test_lp_bound_lies_between_the_optimum_and_the_cheap_bound(size: str, seed: int) -> None:
    inp = read(generate(size, seed))
    opt = exact_pulp(inp, time_limit=30) if size != "120" else exact(inp, time_limit=30)
    assert opt.status is Status.OPTIMAL
    assert opt.objective is not None
    assert opt.objective - 1e-6 <= lp_bound(inp) <= upper_bound(inp) + 1e-9


def test_lp_bound_by_hand() -> None:
    # Two 8-GPU nodes, one 8-GPU job: the LP cannot do better than placing it.
    inp = PlacementInput(nodes(2), [Job("a", 8, 8, 60.0)])
    assert lp_bound(inp) == pytest.approx(8.0)
    # No job fits in the GPUs left free (6 of 8 busy, b needs 4): 0.
    jobs = [Job("r", 6, 6, 60.0), Job("b", 4, 4, 60.0)]
    rows = Placement((PlacementRow("r", "n0", 6),))
    assert lp_bound(PlacementInput(nodes(1), jobs, rows)) == 0.0


def test_a_reward_growing_with_the_span_is_reported_honestly() -> None:
    # A measured table where 2 nodes run faster than 1 (RW(2) = 4 > RW(1) = 2):
    # the model counts a split (1, 1) whose parts may land on one server,
    # which then merge into span 1. Whatever the way back gives, the answer
    # is optimal only if it earns the true optimum 4 (one worker per node).
    speed = TableModel({"m": {2: {2: 2.0}}})
    inp = PlacementInput(nodes(2), [Job("a", 2, 2, 60.0)], models={"a": "m"}, speed=speed)
    assert inp.rw[0][1:] == (2.0, 4.0)
    sol = exact(inp, time_limit=10, warm=False)
    check(inp, sol)
    assert sol.bound is not None
    assert sol.bound >= 4.0 - 1e-9
    if sol.status is Status.OPTIMAL:
        assert sol.objective == pytest.approx(4.0)
    else:
        assert sol.status is Status.FEASIBLE
        assert "merged" in sol.message
