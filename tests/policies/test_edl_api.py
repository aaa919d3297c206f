"""EDL's new API: inputs from model objects, the Solution shape, the checker, bad arguments."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from scheduling_opt.errors import InvalidInstanceError, VerificationError
from scheduling_opt.model import Cluster, GpuType, Job, Placement, Server
from scheduling_opt.policies import edl
from scheduling_opt.solution import Status


def cluster(*sizes: int) -> Cluster:
    return Cluster(
        (GpuType("V100"),), tuple(Server(f"s{i}", "V100", n) for i, n in enumerate(sizes))
    )


def test_a_state_from_plain_jobs_gives_a_typed_feasible_solution() -> None:
    # One 4-GPU server; a (max 4, profiled 1, 1.8, 2.4, 2.8) and b (max 2, linear, requested 1).
    # Tiresias starts a with P = 4 (the whole server): b does not fit the budget and waits,
    # so no expansion; throughput by hand: S_a(4)/S_a(1) = 2.8.
    jobs = [Job("a", 1, 4, 60.0), Job("b", 1, 2, 60.0)]
    s = edl.EdlState.from_jobs(
        cluster(4),
        jobs,
        speedup={"a": (1.0, 1.8, 2.4, 2.8)},
        requested={"b": 1},
        params=edl.TiresiasParams(compaction=5),
    )
    sol = edl.elastic_tiresias_step(s, seed=7, time_limit=5.0)
    assert sol.status is Status.FEASIBLE
    assert isinstance(sol.decision, edl.EdlDecision)
    assert sol.decision.started == ("a",)
    assert sol.decision.placement.as_mapping() == {"a": {"s0": 4}}
    assert sol.objective == pytest.approx(2.8)
    assert sol.bound is None
    assert sol.gap is None
    assert sol.seconds >= 0.0
    edl.check(s, sol)
    # The next round: a attained 4 GPUs x 100 s of service, b waited 100 s.
    later = edl.advance(s, sol.decision, 100.0)
    assert later.jobs_by_id["a"].service == 400.0
    assert later.jobs_by_id["b"].waiting == 100.0
    assert later.params == s.params


def test_the_step_is_pure_and_deterministic() -> None:
    s = edl.EdlState.from_jobs(
        cluster(4, 4), [Job("a", 1, 8, 60.0), Job("b", 2, 2, 60.0)], requested={"a": 2}
    )
    before = repr(s)
    one, two = edl.elastic_tiresias_step(s), edl.elastic_tiresias_step(s, seed=3)
    assert one.decision == two.decision
    assert repr(s) == before


def test_from_jobs_refuses_unknown_jobs_and_names_the_field() -> None:
    jobs = [Job("a", 1, 2, 60.0)]
    with pytest.raises(InvalidInstanceError, match=r"^service\.x: unknown job"):
        edl.EdlState.from_jobs(cluster(4), jobs, service={"x": 1.0})
    with pytest.raises(InvalidInstanceError, match=r"^requested\.b: unknown job"):
        edl.EdlState.from_jobs(cluster(4), jobs, requested={"b": 1})
    with pytest.raises(InvalidInstanceError, match=r"^jobs\[0\]\.requested"):
        edl.EdlState.from_jobs(cluster(4), jobs, requested={"a": 3})
    with pytest.raises(InvalidInstanceError, match="placement: unknown job 'z'"):
        edl.EdlState.from_jobs(cluster(4), jobs, Placement.from_mapping({"z": {"s0": 1}}))


def test_fractional_counts_are_refused_and_numpy_numbers_accepted() -> None:
    job = Job("a", 1, 4, 60.0)
    with pytest.raises(InvalidInstanceError, match=r"^requested: must be an integer"):
        edl.EdlJob(job, requested=1.5)  # type: ignore[arg-type]
    ok = edl.EdlJob(
        job,
        service=np.float32(2.5),
        requested=np.int64(2),
        speedup=np.array([1.0, 1.5, 2.0, 2.5]),  # type: ignore[arg-type]
    )
    assert type(ok.requested) is int
    assert ok.requested == 2
    assert type(ok.service) is float
    assert ok.service == 2.5
    assert ok.speedup == (1.0, 1.5, 2.0, 2.5)
    with pytest.raises(InvalidInstanceError, match=r"^speedup\[1\]: must be finite"):
        edl.EdlJob(job, speedup=(1.0, float("nan"), 2.0, 2.5))
    with pytest.raises(InvalidInstanceError, match=r"^service: must be >= 0"):
        edl.EdlJob(job, service=-1.0)
    with pytest.raises(InvalidInstanceError, match=r"^job: must be a Job"):
        edl.EdlJob("a")  # type: ignore[arg-type]


def test_params_name_the_bad_field() -> None:
    with pytest.raises(InvalidInstanceError, match=r"^compaction: must be an integer"):
        edl.TiresiasParams(compaction=1.5)  # type: ignore[arg-type]
    with pytest.raises(InvalidInstanceError, match=r"^qos: must be in \[0, 1\]"):
        edl.TiresiasParams(qos=1.5)
    with pytest.raises(InvalidInstanceError, match=r"^starvation: must be >= 0"):
        edl.TiresiasParams(starvation=-1.0)
    with pytest.raises(InvalidInstanceError, match=r"^elastic"):
        edl.TiresiasParams(elastic=1)  # type: ignore[arg-type]
    assert edl.TiresiasParams(compaction=np.int64(3)).compaction == 3


def test_advance_and_finish_refuse_bad_arguments() -> None:
    s = edl.EdlState.from_jobs(cluster(4), [Job("a", 1, 2, 60.0)])
    d = edl.elastic_tiresias_step(s).decision
    assert d is not None
    with pytest.raises(InvalidInstanceError, match=r"^seconds: must be >= 0"):
        edl.advance(s, d, -1.0)
    with pytest.raises(InvalidInstanceError, match=r"^job_ids: unknown jobs"):
        edl.finish(s, ["b"])
    with pytest.raises(InvalidInstanceError, match=r"^job_ids: must be a collection"):
        edl.finish(s, "a")
    assert edl.finish(s, ["a"]).jobs == ()


def test_a_bad_time_limit_is_refused() -> None:
    s = edl.EdlState.from_jobs(cluster(4), [Job("a", 1, 2, 60.0)])
    with pytest.raises(ValueError, match="time_limit"):
        edl.elastic_tiresias_step(s, time_limit=0.0)


def test_checker_rejects_nan_wrong_objective_and_wrong_status() -> None:
    s = edl.EdlState.from_jobs(cluster(4), [Job("a", 1, 2, 60.0)])
    sol = edl.elastic_tiresias_step(s)
    assert sol.objective == 2.0  # linear scaling, 2 workers
    with pytest.raises(VerificationError, match="finite"):
        edl.check(s, replace(sol, objective=float("nan")))
    with pytest.raises(VerificationError, match="throughput"):
        edl.check(s, replace(sol, objective=1.0))
    with pytest.raises(VerificationError, match="feasible"):
        edl.check(s, replace(sol, status=Status.INFEASIBLE, decision=None))


def test_checker_rejects_a_job_placed_without_being_started() -> None:
    s = edl.EdlState.from_jobs(cluster(4), [Job("a", 1, 2, 60.0)])
    sneaky = edl.EdlDecision(
        Placement.from_mapping({"a": {"s0": 1}}), {"a": 0}, (), (), (), {}, "none"
    )
    with pytest.raises(VerificationError, match="without being started"):
        edl.check_decision(s, sneaky)


def test_stragglers_refuse_fractional_window_and_bad_worker_counts() -> None:
    history = [{"w0": 1.0, "w1": 1.0, "w2": 2.0}] * 10
    with pytest.raises(InvalidInstanceError, match=r"^window: must be an integer"):
        edl.find_stragglers(history, window=1.5)  # type: ignore[arg-type]
    with pytest.raises(InvalidInstanceError, match=r"^factor: must be > 0"):
        edl.find_stragglers(history, factor=0.0)
    assert edl.find_stragglers(history, window=np.int64(10)) == ("w2",)
    job = Job("j", 2, 3, 60.0)
    with pytest.raises(InvalidInstanceError, match=r"^workers: must be in 2..3"):
        edl.straggler_scale_in(job, 0, history)
    assert edl.straggler_scale_in(job, np.int64(3), history) == ("w2",)
    with pytest.raises(InvalidInstanceError, match="finite"):
        edl.find_stragglers([{"w0": "slow"}] * 10)  # type: ignore[dict-item]


def test_state_refuses_wrong_element_types() -> None:
    with pytest.raises(InvalidInstanceError, match=r"^jobs\[0\]: must be an EdlJob"):
        edl.EdlState(cluster(4), (Job("a", 1, 2, 60.0),))  # type: ignore[arg-type]
    with pytest.raises(InvalidInstanceError, match=r"^jobs\[1\]: duplicate job id"):
        edl.EdlState(cluster(4), (edl.EdlJob(Job("a", 1, 2, 60.0)),) * 2)


def test_checker_rejects_stray_resizes_and_incomplete_queues() -> None:
    s = edl.EdlState.from_jobs(cluster(4), [Job("a", 1, 2, 60.0), Job("b", 1, 2, 60.0)])
    sol = edl.elastic_tiresias_step(s)
    d = sol.decision
    assert d is not None
    with pytest.raises(VerificationError, match="not running"):
        edl.check_decision(s, replace(d, resized={"ghost": 1}))
    with pytest.raises(VerificationError, match="queues"):
        edl.check_decision(s, replace(d, queues={"a": 0}))
