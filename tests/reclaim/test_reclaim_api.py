"""Reclaim's typed API: the input from model objects, Solutions with keys and honest bounds."""

from __future__ import annotations

import dataclasses
import itertools
import math
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings

from scheduling_opt.errors import InvalidInstanceError, VerificationError
from scheduling_opt.model import Cluster, GpuType, Job, Placement, PlacementRow, Server
from scheduling_opt.reclaim import (
    ReclaimDecision,
    ReclaimInput,
    aryl,
    aryl_dp,
    aryl_plus,
    auto,
    check,
    exact,
    exact_pulp,
    exact_two_stage,
    fraction_bound,
    lower_bound,
    random_servers,
    scf,
)
from scheduling_opt.solution import Solution, Status
from scheduling_opt.testing import brute_force_reclaim_instances as small_instances

INSTANCES = Path(__file__).resolve().parents[2] / "instances"
ALL = (aryl, aryl_plus, aryl_dp, scf, random_servers, auto, exact, exact_two_stage, exact_pulp)


def chain() -> ReclaimInput:
    """Three on-loan servers and a training server, built from model objects only.

    a: 2 + 2 workers on i1, i2, inelastic (1 GPU per worker);
    b: 1 on i2 + 2 on i3, inelastic, 2 GPUs per worker;
    c: 3 on i3 + 1 on t1, min 2 (slack 2).
    """
    cluster = Cluster(
        (GpuType("T4"), GpuType("V100")),
        (
            Server("t1", "V100", 8),
            Server("i1", "T4", 8, "inference", True),
            Server("i2", "T4", 8, "inference", True),
            Server("i3", "T4", 8, "inference", True),
        ),
    )
    jobs = (
        Job("a", 4, 4, 60.0),
        Job("b", 3, 3, 60.0, gpus_per_worker=2),
        Job("c", 2, 4, 60.0),
    )
    rows = (
        PlacementRow("a", "i1", 2),
        PlacementRow("a", "i2", 2),
        PlacementRow("b", "i2", 1),
        PlacementRow("b", "i3", 2),
        PlacementRow("c", "i3", 3),
        PlacementRow("c", "t1", 1),
    )
    return ReclaimInput(cluster, jobs, Placement(rows), 1)


def optimum(inp: ReclaimInput) -> tuple[int, int]:
    return min(
        inp.decide(c).key for c in itertools.combinations(range(inp.n_servers), inp.n_reclaim)
    )


# --------------------------------------------------------------------------- the input


def test_input_from_model_objects_derives_the_incidence_by_hand() -> None:
    inp = chain()
    assert inp.server_ids == ("i1", "i2", "i3")
    assert inp.job_ids == ("a", "b", "c")
    assert inp.server_jobs == (((0, 2),), ((0, 2), (1, 1)), ((1, 2), (2, 3)))
    assert inp.slack == (0, 0, 2)
    assert inp.loan_workers == (4, 3, 3)
    assert inp.gpus == (4, 6, 4)
    assert inp.big == 4 + 6 + 4 + 1


def test_decide_by_hand() -> None:
    inp = chain()
    # Returning i3: b loses 2 of 3 (preempted; its 1 worker on i2 = 2 GPUs
    # vacated), c loses 3 of 4 (min 2: preempted; 1 GPU on t1 vacated).
    assert inp.decide([2]) == ReclaimDecision(("i3",), ("b", "c"), (), 3)
    # Returning i1: a loses 2 of 4: preempted, 2 GPUs left on i2.
    assert inp.decide([0]) == ReclaimDecision(("i1",), ("a",), (), 2)
    # Returning i2: a and b preempted (2 + 4 GPUs left), nobody scales in.
    assert inp.decide([1]).key == (2, 6)


def test_replace_recomputes_the_derived_fields() -> None:
    inp = dataclasses.replace(chain(), n_reclaim=3)
    assert inp.n_reclaim == 3
    assert inp.job_ids == ("a", "b", "c")
    assert exact(inp).decision == ReclaimDecision(("i1", "i2", "i3"), ("a", "b", "c"), (), 1)


def _bad(**changes: object) -> ReclaimInput:
    inp = chain()
    args = {
        "cluster": inp.cluster,
        "jobs": inp.jobs,
        "placement": inp.placement,
        "n_reclaim": inp.n_reclaim,
    }
    args.update(changes)
    return ReclaimInput(**args)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("changes", "path"),
    [
        ({"n_reclaim": 4}, "n_reclaim"),
        ({"n_reclaim": -1}, "n_reclaim"),
        ({"n_reclaim": 1.5}, "n_reclaim"),
        ({"n_reclaim": True}, "n_reclaim"),
        ({"cluster": None}, "cluster"),
        ({"placement": {}}, "placement"),
        ({"jobs": (Job("a", 1, 1, 1.0), Job("a", 1, 1, 1.0))}, "jobs[1].id"),
        ({"jobs": ("a",)}, "jobs[0]"),
        ({"placement": Placement((PlacementRow("zz", "i1", 1),))}, "placement[0].job"),
        ({"placement": Placement((PlacementRow("a", "i9", 4),))}, "placement[0].server"),
        ({"placement": Placement((PlacementRow("a", "i1", 3),))}, "placement[0].workers"),
        (
            {"placement": Placement((PlacementRow("b", "i1", 3), PlacementRow("c", "i1", 3)))},
            "placement[1].workers",
        ),
    ],
)
def test_bad_constructor_arguments_name_the_field(changes: dict[str, object], path: str) -> None:
    with pytest.raises(InvalidInstanceError) as err:
        _bad(**changes)
    assert err.value.path == path


def test_inference_server_not_on_loan_cannot_hold_workers() -> None:
    cluster = Cluster((GpuType("T4"),), (Server("i1", "T4", 8, "inference", False),))
    with pytest.raises(InvalidInstanceError) as err:
        ReclaimInput(cluster, (Job("a", 1, 1, 1.0),), Placement((PlacementRow("a", "i1", 1),)), 0)
    assert err.value.path == "placement[0].server"


# --------------------------------------------------------------------------- solutions


@pytest.mark.parametrize("method", ALL, ids=lambda f: f.__name__)
def test_every_method_returns_a_full_solution(method: object) -> None:
    inp = chain()
    sol = method(inp, seed=0, time_limit=10)  # type: ignore[operator]
    assert isinstance(sol, Solution)
    # By hand: i1 preempts a (2 GPUs left), i3 preempts b and c, i2 a and b:
    # the optimum is i1 with (1, 2) (every method finds it on 3 servers but
    # random, which may not).
    check(inp, sol)
    assert sol.seconds > 0
    assert sol.key == (sol.objective, sol.decision.collateral_gpus)
    assert sol.bound is not None
    assert sol.bound <= sol.objective
    assert sol.bound == 1.0  # every server preempts at least one job, all are forced
    if method is not random_servers:
        assert sol.decision.servers == ("i1",)
        assert sol.key == (1, 2)
        assert sol.gap == 0.0
    proving = (auto, exact, exact_two_stage, exact_pulp)
    expected = Status.OPTIMAL if method in proving else Status.FEASIBLE
    assert sol.status is expected


def test_bounds_by_hand() -> None:
    # Two inelastic jobs each split 1+1 over (i1, i2) and (i2, i3), N_R = 2:
    # every pair preempts both; a pair with i2 leaves one worker (i1 + i3
    # leaves two, both on i2), so the optimum is (2, 1). Fraction bound: charges (1/2, 1, 1/2) -> 1;
    # LP: y = 2/3 each gives p_a = p_b = 2/3, 4/3 -> 2.
    servers = tuple(Server(f"i{k}", "T4", 8, "inference", True) for k in (1, 2, 3))
    rows = (
        PlacementRow("a", "i1", 1),
        PlacementRow("a", "i2", 1),
        PlacementRow("b", "i2", 1),
        PlacementRow("b", "i3", 1),
    )
    jobs = (Job("a", 2, 2, 1.0), Job("b", 2, 2, 1.0))
    inp = ReclaimInput(Cluster((GpuType("T4"),), servers), jobs, Placement(rows), 2)
    assert optimum(inp) == (2, 1)
    assert fraction_bound(inp) == 1
    assert lower_bound(inp) == 2.0
    assert aryl_plus(inp).bound == 2.0
    assert aryl(inp).bound == 1.0


@pytest.mark.slow
@settings(max_examples=60, deadline=None)
@given(small_instances(max_servers=8))
def test_bounds_never_exceed_the_brute_force_optimum(inst: object) -> None:
    from scheduling_opt.reclaim.io import read

    inp = read(inst)  # type: ignore[arg-type]
    best = optimum(inp)[0]
    assert fraction_bound(inp) <= best
    assert lower_bound(inp) <= best
    for method in ALL:
        sol = method(inp, seed=1, time_limit=20)
        check(inp, sol)
        assert sol.bound is not None
        assert sol.bound <= best, method.__name__


@pytest.mark.parametrize("size", ["reclaim-n60.json", "reclaim-n150.json"])
def test_heuristic_bounds_sit_below_the_proven_optimum(size: str) -> None:
    from scheduling_opt.io.instance import load
    from scheduling_opt.reclaim.io import read

    inp = read(load(INSTANCES / size))
    proven = exact(inp, time_limit=60)
    assert proven.status is Status.OPTIMAL
    assert proven.bound == proven.objective
    for method in (aryl, aryl_plus, aryl_dp, scf, random_servers):
        sol = method(inp, seed=0)
        check(inp, sol)
        assert sol.bound is not None
        assert sol.bound <= proven.objective <= sol.objective
        assert sol.gap is not None
        assert sol.gap >= 0
    assert fraction_bound(inp) <= lower_bound(inp) <= proven.objective


def test_exact_under_a_tiny_time_limit_states_its_bound() -> None:
    from scheduling_opt.io.instance import load
    from scheduling_opt.reclaim.io import read

    inp = read(load(INSTANCES / "reclaim-n500.json"))
    optimal = exact(inp, time_limit=60)
    assert optimal.status is Status.OPTIMAL
    rushed = exact(inp, time_limit=0.05)
    check(inp, rushed)
    assert rushed.bound is not None
    assert rushed.bound <= optimal.objective <= rushed.objective
    if rushed.status is Status.TIME_LIMIT:
        assert rushed.message
        assert rushed.gap is not None
        assert rushed.gap == pytest.approx(
            (rushed.objective - rushed.bound) / max(rushed.bound, 1.0)
        )
    else:
        assert rushed.status is Status.OPTIMAL


def test_aryl_plus_stops_at_its_time_limit_and_stays_valid() -> None:
    from scheduling_opt.io.instance import load
    from scheduling_opt.reclaim.io import read

    inp = read(load(INSTANCES / "reclaim-n500.json"))
    sol = aryl_plus(inp, seed=0, time_limit=0.001)
    check(inp, sol)
    assert sol.status is Status.FEASIBLE
    assert "time limit" in sol.message
    assert sol.key <= aryl(inp).key


# --------------------------------------------------------------------------- seeds


def test_seeds_accept_ints_and_generators() -> None:
    from scheduling_opt.reclaim.io import generate, read

    inp = read(generate("20", 3))
    for method in (aryl_plus, random_servers):
        a = method(inp, seed=5).decision
        assert a == method(inp, seed=5).decision
        assert a == method(inp, seed=np.random.default_rng(5)).decision
        assert method(inp, seed=None).decision == method(inp, seed=0).decision
        with pytest.raises(ValueError, match="seed"):
            method(inp, seed=-1)
    with pytest.raises(ValueError, match="time_limit"):
        aryl(inp, time_limit=0)


# --------------------------------------------------------------------------- checker


def test_checker_verifies_key_bound_and_status() -> None:
    inp = chain()
    good = aryl(inp)
    check(inp, good)
    bad = [
        good.with_(key=(1.0, 0.0)),  # collateral tie-break hidden
        good.with_(key=(1.0,)),
        good.with_(objective=math.nan),
        good.with_(objective=2.0, key=(2.0, 2.0)),
        good.with_(bound=1.5),  # a lower bound above the objective
        good.with_(status=Status.INFEASIBLE),
        Solution(Status.TIME_LIMIT, None, None),
    ]
    for sol in bad:
        with pytest.raises(VerificationError):
            check(inp, sol)
