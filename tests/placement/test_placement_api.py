"""Placement's one-shape API: inputs from model objects, Solutions, bounds, refusals."""

from __future__ import annotations

import importlib
import math
import time
from typing import Any

import numpy as np
import pytest

from scheduling_opt.errors import InstanceTooLargeError, InvalidInstanceError, VerificationError
from scheduling_opt.io.instance import load
from scheduling_opt.model import Cluster, GpuType, Job, Placement, PlacementRow, Server
from scheduling_opt.placement import (
    PlacementDecision,
    PlacementInput,
    best_fit_decreasing,
    buddy_pack,
    check,
    chronus_local_search,
    consolidated_span,
    exact,
    exact_cpsat,
    exact_pulp,
    place_span,
    quasi_consolidation,
    round_up,
    round_up_consolidation,
    smallest_span,
    upper_bound,
)
from scheduling_opt.placement.io import encode, generate, generate_placement, read
from scheduling_opt.solution import Solution, Status

# The CP-SAT model's module (its name is also the function it defines, which the
# package attribute gives).
exact_module = importlib.import_module("scheduling_opt.placement.exact_cpsat")

TYPES = (GpuType("V100", 1.0, 32.0), GpuType("T4", 0.25, 16.0))
HEURISTICS = (
    best_fit_decreasing,
    round_up_consolidation,
    quasi_consolidation,
    chronus_local_search,
)


def nodes(n: int, size: int = 8) -> Cluster:
    return Cluster(TYPES, tuple(Server(f"n{i}", "V100", size) for i in range(n)))


# --------------------------------------------------------------------------- the input


def test_input_from_model_objects_only() -> None:
    cluster = Cluster(
        TYPES,
        (
            Server("n0", "V100", 8),
            Server("n1", "V100", 8),
            Server("i0", "T4", 4, "inference", True),
            Server("i1", "T4", 4, "inference", False),  # not lent: invisible
        ),
    )
    jobs = [
        Job("run", 3, 3, 60.0),
        Job("a", 2, 6, 60.0, 2),
        Job("b", 1, 1, 60.0, gpu_type="T4"),
    ]
    inp = PlacementInput(
        cluster, jobs, Placement((PlacementRow("run", "n0", 3),)), workers={"a": 4}
    )
    assert inp.server_ids == ("n0", "n1", "i0")
    assert inp.free == (5, 8, 4)
    assert inp.busy == (True, False, False)
    assert inp.loan == (False, False, True)
    assert inp.job_ids == ("a", "b")
    assert inp.job_workers == (4, 1)
    assert inp.base == (2, 1)
    assert inp.eligible == ((0, 1, 2), (2,))
    # a: 4 workers of 2 GPUs, at most 4 per 8-GPU server: k* = 1; b: one T4 server.
    assert inp.k_star == (1, 1)
    # Hand computation of Eq. (7) with the default log2 model (t1 = 1, t2 = 1.5):
    # t_k = 1 + 0.5 log2 k, RW(k) = G t_1 / t_k.
    assert inp.rw[0][2] == pytest.approx(8 / 1.5)
    assert inp.rw[0][3] == pytest.approx(8 / (1 + 0.5 * math.log2(3)))
    assert len(inp.rw[1]) == 2  # spans 0..1: one eligible server


@pytest.mark.parametrize(
    ("kwargs", "path"),
    [
        ({"jobs": [Job("a", 1, 1, 60.0), Job("a", 1, 1, 60.0)]}, "jobs[1].id"),
        ({"jobs": [Job("a", 1, 1, 60.0, gpu_type="H100")]}, "jobs[0].gpu_type"),
        ({"jobs": ["a"]}, "jobs[0]"),
        ({"placement": Placement((PlacementRow("ghost", "n0", 1),))}, "placement[0].job"),
        ({"placement": Placement((PlacementRow("a", "n9", 1),))}, "placement[0].server"),
        ({"placement": Placement((PlacementRow("a", "n0", 9),))}, "placement[0].workers"),
        ({"placement": "n0"}, "placement"),
        ({"workers": {"ghost": 1}}, "workers.ghost"),
        ({"workers": {"e": 9}}, "workers.e"),
        ({"workers": {"e": 0}}, "workers.e"),
        ({"workers": {"e": 1.5}}, "workers.e"),
        ({"workers": [1]}, "workers"),
        ({"models": {"ghost": "vgg"}}, "models.ghost"),
        ({"models": {"e": "bert"}}, "models.e"),
        ({"search_space": 0}, "search_space"),
        ({"speed": "log2"}, "speed"),
        ({"cluster": "two nodes"}, "cluster"),
    ],
)
def test_bad_constructor_arguments_name_the_field(kwargs: dict[str, Any], path: str) -> None:
    args: dict[str, Any] = {
        "cluster": nodes(2),
        "jobs": [Job("a", 1, 8, 60.0), Job("e", 1, 4, 60.0)],
    }
    with pytest.raises(InvalidInstanceError) as err:
        PlacementInput(**(args | kwargs))
    assert err.value.path == path


def test_placed_job_cannot_get_a_worker_count() -> None:
    rows = Placement((PlacementRow("a", "n0", 2),))
    with pytest.raises(InvalidInstanceError) as err:
        PlacementInput(nodes(1), [Job("a", 1, 4, 60.0)], rows, workers={"a": 3})
    assert err.value.path == "workers.a"


def test_huge_worker_count_costs_nothing() -> None:
    """A 10^9-worker job used to build a 10^9-entry reward table (memory, then time)."""
    servers = (*nodes(3).servers, Server("huge", "V100", 10**9))
    inp = PlacementInput(
        Cluster(TYPES, servers), [Job("big", 1, 10**9, 60.0), Job("a", 2, 2, 60.0)]
    )
    assert len(inp.rw[0]) == 5  # spans 0..4: one worker per server at most
    for method in (*HEURISTICS[1:], exact_cpsat, exact_pulp):
        sol = method(inp, time_limit=10)
        check(inp, sol)
        assert sol.decision is not None
        assert sol.decision.unplaced == ()
        # big alone on the huge server (span 1 = its consolidated span): 10^9 + 2.
        assert sol.objective == 10**9 + 2


def test_bfd_refuses_a_server_beyond_its_buckets() -> None:
    """bfd buckets servers by free GPUs: a 10^9-GPU server exhausted memory."""
    servers = (Server("huge", "V100", 10**9),)
    inp = PlacementInput(Cluster(TYPES, servers), [Job("a", 2, 2, 60.0)])
    with pytest.raises(InstanceTooLargeError, match=r"^cluster\.servers: a server of 1000000000"):
        best_fit_decreasing(inp)


# --------------------------------------------------------------------------- solutions


def test_every_method_returns_a_full_solution() -> None:
    inp = PlacementInput(
        nodes(2), [Job("a", 6, 6, 60.0), Job("b", 4, 4, 60.0), Job("c", 6, 6, 60.0)]
    )
    # By hand (log2, t1 = 1, t2 = 1.5: RW on 2 servers = G / 1.5): a and c on
    # one node each (6 + 6) leave 2 + 2 GPUs, so b spans both: 6 + 6 + 4 / 1.5.
    # Any other way splits a 6-GPU job instead: 6 + 4 + 6 / 1.5 = 14 < 14.67.
    best = 12.0 + 4 / 1.5
    for method in (*HEURISTICS, exact_cpsat, exact_pulp):
        sol = method(inp, time_limit=10)
        check(inp, sol)
        assert isinstance(sol, Solution)
        assert isinstance(sol.decision, PlacementDecision)
        assert sol.objective == sol.decision.reward
        assert sol.seconds >= 0
        assert sol.objective is not None
        assert sol.objective <= best + 1e-9
        assert sol.bound is not None or method is exact_pulp
        if sol.bound is not None:
            assert sol.bound >= best - 1e-9  # an upper bound on the optimum
            assert sol.gap is not None
            assert sol.gap >= 0
    for method in (exact_cpsat, exact_pulp):
        sol = method(inp, time_limit=10)
        assert sol.status is Status.OPTIMAL
        assert sol.objective == pytest.approx(best)
        assert sol.gap == 0.0


def test_heuristic_bound_is_above_the_proven_optimum() -> None:
    for size, seed in (("8", 0), ("8", 1), ("16", 3)):
        inp = read(generate(size, seed))
        opt = exact_pulp(inp, time_limit=30)
        assert opt.status is Status.OPTIMAL
        assert opt.objective is not None
        bound = upper_bound(inp)
        assert bound >= opt.objective - 1e-9
        for method in HEURISTICS:
            sol = method(inp)
            assert sol.bound == bound
            assert sol.objective is not None
            assert sol.objective <= opt.objective + 1e-9


def test_upper_bound_is_the_fractional_knapsack() -> None:
    # 8 free GPUs; a (8 GPUs, RW 8) and b (4 GPUs, RW 4): 1 RW per GPU -> 8.
    inp = PlacementInput(nodes(1), [Job("a", 8, 8, 60.0), Job("b", 4, 4, 60.0)])
    assert upper_bound(inp) == 8.0
    # Only the GPUs left free count: 4 free, a and b both at 1 RW per GPU -> 4.
    rows = Placement((PlacementRow("r", "n0", 4),))
    jobs = [Job("r", 4, 4, 60.0), Job("a", 1, 1, 60.0, 8), Job("b", 2, 2, 60.0)]
    assert upper_bound(PlacementInput(nodes(1), jobs, rows)) == 4.0


@pytest.mark.parametrize(("size", "seed"), [("8", 1), ("16", 3), ("96", 1)])
def test_exact_under_a_tiny_time_limit_is_honest(size: str, seed: int) -> None:
    inp = read(generate(size, seed))
    # What is known independently: an achievable reward and a proven upper bound
    # (on 8 and 16 servers CBC proves the optimum, so both are the optimum).
    known = chronus_local_search(inp)
    assert known.objective is not None
    low, high = known.objective, upper_bound(inp)
    if size != "96":
        opt = exact_pulp(inp, time_limit=30)
        assert opt.status is Status.OPTIMAL
        assert opt.objective is not None
        low = high = opt.objective
    for method in (exact_cpsat, exact_pulp, exact):
        sol = method(inp, time_limit=0.02)
        check(inp, sol)
        assert sol.status is not Status.INFEASIBLE
        if sol.objective is not None:
            assert sol.objective <= high + 1e-6
        if sol.bound is not None:
            assert sol.bound >= low - 1e-6  # never below what is achievable
        if sol.status is not Status.OPTIMAL and sol.bound is not None:
            assert sol.gap is not None
            assert sol.gap >= 0


def test_cpsat_rounding_can_deny_optimality(monkeypatch: pytest.MonkeyPatch) -> None:
    """With no rounding tolerance, a proof of the rounded model is not a proof."""
    inp = read(load("instances/placement-chronus-example.json"))
    monkeypatch.setattr(exact_module, "ROUNDING_TOLERANCE", 0.0)
    sol = exact_cpsat(inp, time_limit=10)
    check(inp, sol)
    assert sol.status is Status.FEASIBLE
    assert sol.bound is not None
    assert sol.objective is not None
    assert sol.objective <= sol.bound <= sol.objective + 1e-6
    assert "rounding" in sol.message


def test_rw_scale_keeps_the_scaled_sum_small() -> None:
    inp = read(generate("16", 0))
    assert exact_module.rw_scale(inp) == 10**9
    huge = PlacementInput(
        Cluster(TYPES, (Server("n", "V100", 10**12),)), [Job("a", 10**12, 10**12, 60.0)]
    )
    scale = exact_module.rw_scale(huge)
    assert scale < 10**9
    assert 10**12 * scale < 2**50


def test_integral_rewards_lose_nothing_to_rounding() -> None:
    # Found by hypothesis: 0.5 / 10^9 per job made three jobs of reward 1 on
    # one 1-GPU server only "feasible"; integral rewards round exactly.
    inp = PlacementInput(nodes(1, 1), [Job(f"j{i}", 1, 1, 60.0) for i in range(3)])
    sol = exact_cpsat(inp, time_limit=10)
    assert sol.status is Status.OPTIMAL
    assert sol.objective == 1.0  # one of the three fits


def test_exact_accepts_a_generator_seed() -> None:
    inp = read(generate("8", 0))
    sol = exact_cpsat(inp, seed=np.random.default_rng(5), time_limit=10)
    assert sol.status is Status.OPTIMAL


def test_exact_models_too_big_for_the_limit_are_not_started() -> None:
    """Found by the long fuzz run: 10,160 jobs on 96 servers, a 5 s limit.

    exact-cpsat built a model of 532,000 worker variables for 9 s, then CP-SAT
    loaded it for 2.4 s (19.8 s in all); exact-pulp ran 36 s. Now exact-cpsat
    estimates the build from the variable count and answers with its
    local-search hint, and exact-pulp stops building at half the limit.
    """
    servers = tuple(Server(f"n{i}", "V100", 8) for i in range(96))
    jobs = [Job(f"j{i}", 6, 6, 60.0) for i in range(5000)]
    inp = PlacementInput(Cluster(TYPES, servers), jobs)
    sol = exact_cpsat(inp, time_limit=1.0)
    check(inp, sol)
    assert sol.status is Status.TIME_LIMIT
    assert "CP-SAT model of 480000 worker variables" in sol.message
    assert sol.decision is not None  # the local-search hint, checked above
    assert sol.bound is not None
    assert sol.objective is not None
    assert sol.objective <= sol.bound <= 96 * 8  # RW <= the GPUs placed
    sol = exact_pulp(inp, time_limit=1.0)
    assert sol.status is Status.TIME_LIMIT
    assert sol.decision is None
    assert "CBC not started" in sol.message


def test_local_search_stops_at_the_time_limit() -> None:
    """Issue 17 item 11: 443 servers with 500 jobs ran past 100 s; the limit is a safety net."""
    inp = read(generate_placement(443, 0, n_jobs=1000))
    start = time.perf_counter()
    # Without a work limit, Algorithm 1's full enumeration here takes 0.3 s of CPU or more.
    sol = chronus_local_search(inp, time_limit=0.05, work_limit=float("inf"))
    elapsed = time.perf_counter() - start
    # The margin is for a loaded machine (0.64 s seen at load 18); unbounded, the
    # enumeration takes several seconds of wall time there.
    assert elapsed < 1.5
    assert sol.status is Status.FEASIBLE
    assert "time limit" in sol.message
    check(inp, sol)
    quasi = quasi_consolidation(inp)
    assert sol.objective is not None
    assert quasi.objective is not None
    assert sol.objective >= quasi.objective - 1e-9  # its first leaf is quasi-consolidation


def test_local_search_stops_at_its_work_limit_the_same_way_every_time() -> None:
    inp = read(generate_placement(443, 0, n_jobs=500))
    runs = [chronus_local_search(inp, work_limit=5_000, improve_moves=False) for _ in range(2)]
    assert "work limit" in runs[0].message
    assert runs[0].decision == runs[1].decision
    full = chronus_local_search(inp, work_limit=float("inf"), improve_moves=False)
    assert full.message == ""
    assert runs[0].objective is not None
    assert full.objective is not None
    assert runs[0].objective <= full.objective + 1e-9


def test_encode_gives_the_old_json_keys() -> None:
    inp = read(load("instances/placement-chronus-example.json"))
    sol = chronus_local_search(inp)
    assert sol.decision is not None
    doc = encode(sol.decision)
    assert list(doc) == ["placement", "unplaced", "objective", "nodes_spanned"]
    assert doc["objective"] == sol.objective
    assert all(set(row) == {"job", "server", "workers"} for row in doc["placement"])


# --------------------------------------------------------------------------- checker claims


def _good() -> tuple[PlacementInput, Solution[PlacementDecision]]:
    inp = PlacementInput(nodes(2), [Job("a", 4, 4, 60.0), Job("b", 4, 4, 60.0)])
    return inp, quasi_consolidation(inp)


@pytest.mark.parametrize("value", [math.nan, math.inf, -math.inf])
def test_checker_rejects_non_finite_objectives(value: float) -> None:
    inp, sol = _good()
    with pytest.raises(VerificationError, match="finite"):
        check(inp, sol.with_(objective=value))


def test_checker_rejects_an_infeasible_claim() -> None:
    inp, _ = _good()
    with pytest.raises(VerificationError, match="infeasible"):
        check(inp, Solution(Status.INFEASIBLE, None, None))


def test_checker_rejects_an_optimal_claim_with_room_left() -> None:
    inp, _ = _good()
    half = Solution(Status.OPTIMAL, 4.0, PlacementDecision((("a", "n0", 4),), ("b",), 4.0, 1))
    check(inp, half.with_(status=Status.FEASIBLE, bound=8.0))
    with pytest.raises(VerificationError, match="fits"):
        check(inp, half)


def test_checker_rejects_a_bound_below_the_objective() -> None:
    inp, sol = _good()
    with pytest.raises(VerificationError, match="bound"):
        check(inp, sol.with_(bound=1.0))


def test_checker_accepts_a_time_limit_without_answer() -> None:
    inp, _ = _good()
    check(inp, Solution(Status.TIME_LIMIT, None, None))
    with pytest.raises(VerificationError):
        check(inp, Solution(Status.FEASIBLE, None, None))


def test_checker_rejects_a_wrong_span_count() -> None:
    inp, sol = _good()
    assert sol.decision is not None
    with pytest.raises(VerificationError, match="nodes_spanned"):
        check(inp, sol.with_(decision=PlacementDecision(sol.decision.rows, (), 8.0, 5)))


# --------------------------------------------------------------------------- public helpers


def test_consolidated_span_validates_its_arguments() -> None:
    assert consolidated_span(12, 1, [8, 8]) == 2
    assert consolidated_span(3, 4, [2]) == 4  # no server holds a worker
    for kwargs, name in (
        ({"gpw": 0}, "gpw"),
        ({"caps": []}, "caps"),
        ({"workers": -1}, "workers"),
        ({"caps": [8, 0]}, "caps[1]"),
    ):
        args: dict[str, Any] = {"workers": 4, "gpw": 1, "caps": [8]} | kwargs
        with pytest.raises(InvalidInstanceError) as err:
            consolidated_span(**args)
        assert err.value.path == name


def test_place_span_and_smallest_span_validate_their_arguments() -> None:
    rooms = [(1, 10), (2, 11), (3, 12)]
    assert smallest_span(rooms, 5) == 2
    for args, name in (
        ((rooms, 4, -1), "k"),
        ((rooms, 4, 0), "k"),
        ((rooms, 0, 1), "n"),
        (([(3, 1), (1, 2)], 2, 1), "rooms[1]"),
        (([(0, 1)], 1, 1), "rooms[0]"),
    ):
        with pytest.raises(InvalidInstanceError) as err:
            place_span(*args)
        assert err.value.path == name
    with pytest.raises(InvalidInstanceError) as err:
        smallest_span(rooms, -2)
    assert err.value.path == "n"


def test_round_up_helpers_validate_their_arguments() -> None:
    with pytest.raises(InvalidInstanceError) as err:
        buddy_pack([1], [0], node_size=0)
    assert err.value.path == "node_size"
    with pytest.raises(InvalidInstanceError) as err:
        buddy_pack([1], [9], node_size=8)
    assert err.value.path == "avail[0]"
    with pytest.raises(InvalidInstanceError) as err:
        round_up(0)
    assert err.value.path == "gpus"
