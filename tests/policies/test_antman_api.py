"""AntMan's new API: inputs from model objects, the Solution shape, the checker, bad arguments."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from scheduling_opt.errors import InvalidInstanceError, VerificationError
from scheduling_opt.model import Cluster, GpuType, Job, Server
from scheduling_opt.policies import antman
from scheduling_opt.solution import Status


def cluster(*sizes: int) -> Cluster:
    return Cluster(
        (GpuType("V100"),), tuple(Server(f"s{i}", "V100", n) for i, n in enumerate(sizes))
    )


def job(job_id: str, gpus: int, cls: str | None, tenant: str) -> Job:
    return Job(job_id, gpus, gpus, 60.0, job_class=cls, tenant=tenant)  # type: ignore[arg-type]


def test_a_state_from_model_objects_gives_a_typed_feasible_solution() -> None:
    # Quota 3 for A, demand 2 + 2: g1 launches on the 2-GPU server (best fit for 2 GPUs),
    # g2 can only reserve 1 GPU (the quota left); o (B, no quota) shares the 4-GPU server's
    # least-loaded GPUs: (s0, 2) at 0.1 and (s0, 3) at 0.2.
    jobs = (job("g1", 2, "guarantee", "A"), job("g2", 2, None, "A"), job("o", 2, None, "B"))
    util = {("s0", 0): 0.5, ("s0", 1): 0.9, ("s0", 2): 0.1, ("s0", 3): 0.2}
    s = antman.AntManState(cluster(4, 2), {"A": 3}, jobs, utilization=util)
    sol = antman.antman_step(s, seed=1, time_limit=5.0)
    assert sol.status is Status.FEASIBLE
    assert sol.objective is None
    assert sol.bound is None
    assert sol.gap is None
    assert sol.seconds >= 0.0
    d = sol.decision
    assert isinstance(d, antman.AntManDecision)
    assert dict(d.launched) == {"g1": (("s1", 0), ("s1", 1))}
    assert dict(d.reserved) == {"g2": (("s0", 2),)}
    assert dict(d.opportunistic) == {"o": (("s0", 2), ("s0", 3))}
    antman.check(s, sol)
    nxt = antman.apply(s, d)
    assert nxt.tenant_usage() == {"A": 3}
    assert nxt.params == s.params


def test_params_live_in_the_state() -> None:
    jobs = (job("o", 1, "opportunistic", "B"),)
    busy = {("s0", 0): 0.5}
    s = antman.AntManState(cluster(1), {}, jobs, utilization=busy)
    assert dict(antman.antman_step(s).decision.opportunistic) == {"o": (("s0", 0),)}  # type: ignore[union-attr]
    strict = replace(s, params=antman.AntManParams(max_utilization=0.5))
    assert antman.antman_step(strict).decision.opportunistic == {}  # type: ignore[union-attr]


def test_numpy_numbers_are_accepted_and_normalized() -> None:
    s = antman.AntManState(
        cluster(4),
        {"A": np.int64(2)},
        (job("a", 2, "guarantee", "A"),),
        guarantee={"a": (("s0", np.int64(0)), ("s0", np.int64(1)))},
        utilization={("s0", np.int64(2)): np.float32(0.5)},
    )
    assert type(s.quotas["A"]) is int
    assert s.guarantee["a"] == (("s0", 0), ("s0", 1))
    assert all(type(i) is int for _, i in s.guarantee["a"])
    assert s.utilization == {("s0", 2): 0.5}


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"quotas": {"A": 1.5}}, r"^quotas\.A: must be an integer"),
        ({"quotas": {"A": -1}}, r"^quotas\.A: must be >= 0"),
        ({"utilization": {("s0", 0): 1.5}}, r"^utilization\[\('s0', 0\)\]: must be in"),
        ({"utilization": {("s9", 0): 0.5}}, r"^utilization: unknown GPU"),
        ({"guarantee": {"a": (("s0", 0.5),)}}, r"^guarantee\.a: must be an integer"),
        ({"guarantee": {"a": ("s0",)}}, r"^guarantee\.a: a GPU is"),
        ({"pinned": frozenset({"ghost"})}, r"^pinned: unknown jobs"),
        ({"pinned": "a"}, r"^pinned: must be a set"),
        ({"now": float("nan")}, r"^now: must be finite"),
    ],
)
def test_bad_state_arguments_name_the_field(kwargs: dict[str, object], match: str) -> None:
    args: dict[str, object] = {"quotas": {"A": 2}}
    args.update(kwargs)
    with pytest.raises(InvalidInstanceError, match=match):
        antman.AntManState(cluster(4), jobs=(job("a", 1, "guarantee", "A"),), **args)  # type: ignore[arg-type]


def test_bad_params_name_the_field() -> None:
    with pytest.raises(InvalidInstanceError, match=r"^max_utilization: must be in \(0, 1\]"):
        antman.AntManParams(max_utilization=0.0)
    with pytest.raises(InvalidInstanceError, match=r"^demote_after: must be >= 0"):
        antman.AntManParams(demote_after=-5.0)


def test_finish_refuses_unknown_jobs_and_drops_pins() -> None:
    s = antman.AntManState(
        cluster(2),
        {},
        (job("o", 1, "opportunistic", "B"),),
        opportunistic={"o": (("s0", 0),)},
        pinned=frozenset({"o"}),
    )
    with pytest.raises(InvalidInstanceError, match=r"^job_ids: unknown jobs"):
        antman.finish(s, ["x"])
    after = antman.finish(s, ["o"])
    assert after.jobs == ()
    assert after.pinned == frozenset()


def test_checker_rejects_an_objective_a_wrong_status_and_a_fake_demotion() -> None:
    s = antman.AntManState(cluster(2), {"A": 2}, (job("a", 1, "guarantee", "A"),))
    sol = antman.antman_step(s)
    with pytest.raises(VerificationError, match="no objective"):
        antman.check(s, replace(sol, objective=float("nan")))
    with pytest.raises(VerificationError, match="feasible"):
        antman.check(s, replace(sol, status=Status.INFEASIBLE, decision=None))
    fake = antman.AntManDecision({}, {}, (), ("a",), {}, {})
    with pytest.raises(VerificationError, match="did not start as opportunistic"):
        antman.check_decision(s, fake)


def test_checker_rejects_a_pinned_upgrade_and_a_stray_release() -> None:
    s = antman.AntManState(
        cluster(2),
        {"A": 2},
        (job("o", 1, "opportunistic", "A"),),
        opportunistic={"o": (("s0", 0),)},
        pinned=frozenset({"o"}),
    )
    assert antman.antman_step(s).decision == antman.AntManDecision({}, {}, (), (), {}, {})
    with pytest.raises(VerificationError, match="pinned"):
        antman.check_decision(s, antman.AntManDecision({}, {}, ("o",), (), {}, {}))
    stray = antman.AntManDecision({}, {}, (), (), {}, {"o": (("s0", 1),)})
    with pytest.raises(VerificationError, match="held no reservation"):
        antman.check_decision(s, stray)
