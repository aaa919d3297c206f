"""The simulator's public constructors validate like the model's (issue 27, item 3).

``SimJob``, ``Workload``, ``ServerSpec``, ``ClusterSpec``, ``EngineParams``,
``SyntheticSpec``, ``WorkloadSpec`` and ``RunConfig`` refuse what an
instance file would be refused for, and the simulator's limits, with an
:class:`InvalidInstanceError` naming the field or argument the caller
passed (never a CLI option); numpy scalars are accepted and stored as
Python numbers; the policies' step functions name the type they expect.
"""

from __future__ import annotations

import importlib
import math
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

from scheduling_opt.errors import InstanceTooLargeError, InvalidInstanceError
from scheduling_opt.sim import (
    ClusterSpec,
    EngineParams,
    RunConfig,
    ServerSpec,
    SimJob,
    SyntheticSpec,
    Workload,
    WorkloadSpec,
    limits,
    make_policy,
    run_sweep,
)

sweep_module = importlib.import_module("scheduling_opt.sim.sweep")

NAN, INF = math.nan, math.inf
W = Workload.of([SimJob("0", 0.0, 1, 1.0)], "w")


def _refused(make: Callable[[], object], field: str, words: str = "") -> InvalidInstanceError:
    with pytest.raises(InvalidInstanceError) as err:
        make()
    assert err.value.path == field, err.value
    assert words in err.value.reason, err.value
    assert not err.value.path.startswith("--")
    return err.value


@pytest.mark.parametrize(
    ("kwargs", "field", "words"),
    [
        ({"work": NAN}, "work", "finite"),
        ({"work": INF}, "work", "finite"),
        ({"work": 0.0}, "work", "> 0"),
        ({"work": 1e308}, "work", "1e15"),
        ({"work": 2e9}, "work", "clock"),
        ({"work": 5e-324}, "work", "2.2e-308"),
        ({"gpus": 0}, "gpus", ">= 1"),
        ({"gpus": "4"}, "gpus", "integer"),
        ({"gpus": 1.5}, "gpus", "integer"),
        ({"gpus": True}, "gpus", "integer"),
        ({"gpus": 10**7}, "gpus", "at most 1,000,000"),
        ({"submit": -1.0}, "submit", ">= 0"),
        ({"submit": NAN}, "submit", "finite"),
        ({"id": ""}, "id", "non-empty"),
        ({"id": 7}, "id", "non-empty string"),
        ({"tenant": ""}, "tenant", "non-empty"),
        ({"job_type": "gold"}, "job_type", "one of"),
        ({"min_gpus": 5}, "min_gpus", "min_gpus <= gpus"),
        ({"max_gpus": 2}, "min_gpus", "min_gpus <= gpus"),
        ({"deadlines": ((5.0, 1.0), (5.0, 2.0))}, "deadlines[1].time", "after"),
        ({"deadlines": ((5.0, NAN),)}, "deadlines[0].reward", "finite"),
        ({"deadlines": ((2e9, 1.0),)}, "deadlines[0].time", "clock"),
        ({"deadlines": (5.0,)}, "deadlines[0]", "pair"),
        ({"deadlines": "soon"}, "deadlines", "pairs"),
        ({"scaling": ((2, 1.0), (1, 0.5))}, "scaling[1].gpus", "above"),
        ({"scaling": ((1, 0.0),)}, "scaling[0].speed", "> 0"),
        ({"scaling": ((1, INF),)}, "scaling[0].speed", "finite"),
    ],
)
def test_simjob_names_the_bad_field(kwargs: dict[str, Any], field: str, words: str) -> None:
    args: dict[str, Any] = {"id": "a", "submit": 0.0, "gpus": 4, "work": 10.0}
    args.update(kwargs)
    _refused(lambda: SimJob(**args), field, words)


def test_simjob_takes_numpy_scalars_and_ints_as_python_numbers() -> None:
    j = SimJob(
        "a",
        np.float64(1.0),
        np.int64(4),
        np.float32(2.5),
        deadlines=[(np.float64(9.0), np.int64(100))],  # a list becomes a tuple
        min_gpus=np.int64(2),
    )
    assert (type(j.submit), type(j.gpus), type(j.work), type(j.min_gpus)) == (
        float,
        int,
        float,
        int,
    )
    assert j.deadlines == ((9.0, 100),)
    assert type(j.deadlines[0][0]) is float
    assert (j.gpus, j.min_gpus, j.max_gpus) == (4, 2, 4)
    # An int time stays an int: the workload's content hash is the repr of its jobs.
    assert repr(SimJob("b", 0, 1, 3)) == repr(SimJob("b", 0, 1, 3))
    assert SimJob("b", 0, 1, 3).submit == 0


def test_workload_checks_its_jobs_name_and_order() -> None:
    a, b = SimJob("a", 0.0, 1, 1.0), SimJob("b", 1.0, 1, 1.0)
    _refused(lambda: Workload.of([a, "b"], "w"), "jobs[1]", "must be a SimJob, got str")  # type: ignore[list-item]
    _refused(lambda: Workload.of([a, a], "w"), "jobs[1]", "duplicate job id 'a'")
    _refused(lambda: Workload.of([a], ""), "name", "non-empty")
    _refused(lambda: Workload.of("ab", "w"), "jobs", "iterable of SimJob")  # type: ignore[arg-type]
    _refused(lambda: Workload((b, a), "w", "d"), "jobs[1]", "engine order")
    _refused(lambda: Workload([a], "w", "d"), "jobs", "tuple")  # type: ignore[arg-type]
    assert Workload((a, b), "w", "d").jobs == (a, b)


def test_workload_refuses_more_jobs_than_the_limit(monkeypatch: pytest.MonkeyPatch) -> None:
    import scheduling_opt.sim.workload as workload

    monkeypatch.setattr(workload, "MAX_JOBS", 2)
    jobs = [SimJob(str(i), 0.0, 1, 1.0) for i in range(3)]
    with pytest.raises(InstanceTooLargeError, match="3 jobs; at most 2"):
        Workload.of(jobs, "w")


def test_cluster_uniform_names_its_arguments() -> None:
    _refused(lambda: ClusterSpec.uniform(1.5, 8), "servers", "integer")  # type: ignore[arg-type]
    _refused(lambda: ClusterSpec.uniform(0, 8), "servers", ">= 1")
    _refused(lambda: ClusterSpec.uniform(2, "8"), "gpus_per_server", "integer")  # type: ignore[arg-type]
    big = _refused(lambda: ClusterSpec.uniform(10**9, 1), "servers", "at most 100,000")
    assert isinstance(big, InstanceTooLargeError)
    _refused(lambda: ClusterSpec.uniform(1, 10**9), "gpus_per_server", "at most 1,024")
    _refused(lambda: ClusterSpec.uniform(100_000, 1_024), "gpus_per_server", "1,000,000 (two")
    c = ClusterSpec.uniform(np.int64(3), np.int64(8))
    assert (len(c.servers), c.total_gpus, type(c.servers[0].gpus)) == (3, 24, int)


@pytest.mark.parametrize(
    ("make", "field", "words"),
    [
        (lambda: ServerSpec(0), "gpus", ">= 1"),
        (lambda: ServerSpec(8, compute=0.0), "compute", "[0.001, 1000]"),
        (lambda: ServerSpec(8, compute=1e-300), "compute", "[0.001, 1000]"),
        (lambda: ServerSpec(8, compute=NAN), "compute", "finite"),
        (lambda: ServerSpec(8, gpu_type=""), "gpu_type", "non-empty"),
        (lambda: ServerSpec(8, available=1), "available", "true or false"),
        (lambda: ClusterSpec(()), "servers", "at least one"),
        (lambda: ClusterSpec((8,)), "servers[0]", "ServerSpec, got int"),
        (lambda: ClusterSpec("s"), "servers", "tuple of ServerSpec"),
        (lambda: EngineParams(restart_cost=-1.0), "restart_cost", ">= 0"),
        (lambda: EngineParams(restart_cost=INF), "restart_cost", "finite"),
        (lambda: EngineParams(preemption_cost=NAN), "preemption_cost", "finite"),
        (lambda: EngineParams(resize_cost=-0.5), "resize_cost", ">= 0"),
        (lambda: EngineParams(resize_cost=NAN), "resize_cost", "finite"),
        (lambda: EngineParams(round_length=0.0), "round_length", "> 0"),
        (lambda: EngineParams(round_length=1e-320), "round_length", "2.2e-308"),
        (lambda: EngineParams(share_slowdown=1.0), "share_slowdown", "[0, 1)"),
        (lambda: EngineParams(host_slowdown="x"), "host_slowdown", "number"),
        (lambda: SyntheticSpec(jobs=0), "jobs", ">= 1"),
        (lambda: SyntheticSpec(jobs=10**9), "jobs", "at most 1,000,000"),
        (lambda: SyntheticSpec(rate=0.0), "rate", "> 0"),
        (lambda: SyntheticSpec(strict_share=0.8, best_share=0.5), "best_share", "<= 1"),
        (lambda: WorkloadSpec("nope"), "kind", "one of"),
        (lambda: WorkloadSpec("trace"), "path", "file path"),
        (lambda: WorkloadSpec("synthetic", synthetic=5), "synthetic", "SyntheticSpec"),
    ],
)
def test_constructors_name_the_field(make: Callable[[], object], field: str, words: str) -> None:
    _refused(make, field, words)


@pytest.mark.parametrize(
    ("kwargs", "field", "words"),
    [
        ({"policy": "nope"}, "policy", "unknown policy 'nope'"),
        ({"workload": "bundled"}, "workload", "WorkloadSpec"),
        ({"servers": 0}, "servers", ">= 1"),
        ({"servers": 10**9}, "servers", "at most 100,000"),
        ({"gpus_per_server": 10**9}, "gpus_per_server", "at most 1,024"),
        ({"seed": -1}, "seed", ">= 0"),
        ({"seed": 1.5}, "seed", "integer"),
        ({"restart_cost": INF}, "restart_cost", "finite"),
        ({"preemption_cost": -2.0}, "preemption_cost", ">= 0"),
        ({"resize_cost": INF}, "resize_cost", "finite"),
        ({"round_length": 0.0}, "round_length", "> 0"),
        ({"skip": 1.0}, "skip", "[0, 1)"),
        ({"placement_table": "yes"}, "placement_table", "true or false"),
        ({"policy_params": (("a",),)}, "policy_params[0]", "pair"),
    ],
)
def test_run_config_names_the_field(kwargs: dict[str, Any], field: str, words: str) -> None:
    args: dict[str, Any] = {"policy": "fifo"}
    args.update(kwargs)
    _refused(lambda: RunConfig(**args), field, words)


def test_run_config_stores_plain_numbers_and_keeps_its_cache_key() -> None:
    plain = RunConfig("fifo", servers=4, gpus_per_server=8, seed=2)
    numpy = RunConfig("fifo", servers=np.int64(4), gpus_per_server=np.int64(8), seed=np.int64(2))
    assert numpy == plain
    assert numpy.digest() == plain.digest()
    mapped = RunConfig("tiresias", policy_params={"promote_knob": None})
    assert mapped.policy_params == (("promote_knob", None),)


@pytest.mark.parametrize(
    ("params", "field", "words"),
    [
        ({"inference_servers": -1}, "policy_params", "aryl: inference_servers: must be >= 0"),
        ({"inference_gpus": 0}, "policy_params", "aryl: inference_gpus: must be >= 1"),
        ({"inference_compute": 0.0}, "policy_params", "aryl: inference_compute: must be >= 0.001"),
        ({"curve": ""}, "policy_params", "aryl: curve: must be a file"),
        ({"loan": False}, "policy_params", "aryl: unknown parameter 'loan'"),
        ({"interval": float("nan")}, "policy_params", "aryl: interval: must be finite"),
    ],
)
def test_aryl_cluster_parameters_name_the_policy_and_key(
    params: dict[str, Any], field: str, words: str
) -> None:
    _refused(lambda: RunConfig("aryl", policy_params=params), field, words)


def test_a_cluster_too_large_with_its_inference_servers_is_refused_when_built() -> None:
    config = RunConfig("aryl", servers=100_000, policy_params={"inference_servers": 1})
    _refused(config.cluster, "inference_servers", "at most 100,000")


def test_library_errors_name_arguments_not_options() -> None:
    _refused(lambda: make_policy("nope", W, ClusterSpec.uniform(1, 8)), "name", "unknown policy")
    config = RunConfig("fifo", WorkloadSpec("synthetic", synthetic=SyntheticSpec(jobs=2)))
    _refused(lambda: run_sweep([config], executor="ray"), "executor", "local or dask")
    _refused(lambda: run_sweep([config], workers=0), "workers", ">= 1")


def test_round_mode_refuses_more_rounds_than_the_limit_before_running() -> None:
    from scheduling_opt.sim import simulate

    c = ClusterSpec.uniform(1, 8)
    w = Workload.of([SimJob("0", 0.0, 1, 100.0), SimJob("1", 1e6, 1, 100.0)], "w")
    # Nominal horizon: [0, 100] and [1e6, 1e6 + 100] = 200 units (the gap has no job).
    err = _refused(
        lambda: simulate(w, c, make_policy("fifo", w, c), params=EngineParams(round_length=1e-4)),
        "round_length",
        "2,000,000 rounds",
    )
    assert isinstance(err, InstanceTooLargeError)
    out = simulate(w, c, make_policy("fifo", w, c), params=EngineParams(round_length=1e-2))
    assert out.end == (100.0, 1e6 + 100.0)  # 20,000 rounds: runs


def test_timeline_step_is_a_time_with_a_row_limit() -> None:
    from scheduling_opt.sim.results import sample

    _refused(lambda: sample([(0.0, 1, 0, 1), (10.0, 0, 0, 0)], 0.0), "step", "> 0")
    _refused(lambda: sample([(0.0, 1, 0, 1), (10.0, 0, 0, 0)], NAN), "step", "finite")
    err = _refused(lambda: sample([(0.0, 1, 0, 1), (10.0, 0, 0, 0)], 1e-6), "step", "10,000,000")
    assert "at most 1,000,000" in err.reason


def test_workers_are_capped_at_the_runs_and_the_cores(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(limits.os, "sched_getaffinity", lambda pid: {0, 1})
    assert limits.usable_workers(1000, 1) == 1
    assert limits.usable_workers(1000, 6) == 2
    assert limits.usable_workers(1, 6) == 1

    import concurrent.futures

    seen: list[int] = []
    real = concurrent.futures.ProcessPoolExecutor

    def recording(max_workers: int) -> Any:
        seen.append(max_workers)
        return real(max_workers=max_workers)

    monkeypatch.setattr(concurrent.futures, "ProcessPoolExecutor", recording)
    spec = WorkloadSpec("synthetic", synthetic=SyntheticSpec(jobs=5))
    configs = [RunConfig("fifo", spec, servers=1, seed=s) for s in range(3)]
    results = run_sweep(configs, workers=1000)
    assert seen == [2]  # not 1,000 processes for three runs
    assert [r.config.seed for r in results] == [0, 1, 2]
    seen.clear()
    run_sweep(configs[:1], workers=1000)
    assert seen == []  # one run: in this process


def test_a_sweep_refuses_more_runs_than_the_limit() -> None:
    config = RunConfig("fifo")
    with pytest.raises(InstanceTooLargeError, match="10,001 runs; at most 10,000"):
        run_sweep([config] * (limits.MAX_RUNS + 1))
    with pytest.raises(InstanceTooLargeError, match="job results in memory"):
        limits.check_sweep(1_000, 5_217, "seeds")


# --------------------------------------------------------------------------- policies


def _step_calls() -> list[tuple[str, Callable[[], object], str, str]]:
    from scheduling_opt.policies import (
        antman,
        edl,
        locality_limit,
        profiling_capacity,
        srtf,
        srtf_select,
        submission_control,
    )

    return [
        ("elastic_tiresias_step", lambda: edl.elastic_tiresias_step("x"), "state", "EdlState"),
        ("queues", lambda: edl.queues(3), "state", "EdlState"),
        ("advance", lambda: edl.advance("x", None, 1.0), "state", "EdlState"),
        ("finish", lambda: edl.finish(None, ()), "state", "EdlState"),
        ("edl.check", lambda: edl.check("x", None), "state", "EdlState"),
        ("edl.check_decision", lambda: edl.check_decision("x", None), "state", "EdlState"),
        ("qos_floor", lambda: edl.qos_floor("x", 0.5), "j", "EdlJob"),
        ("cluster_throughput", lambda: edl.cluster_throughput("x", None), "state", "EdlState"),
        ("find_stragglers", lambda: edl.find_stragglers("xxxxxxxxxx"), "history", "sequence"),
        ("find_stragglers", lambda: edl.find_stragglers(["x"], window=1), "history[0]", "Mapping"),
        ("antman_step", lambda: antman.antman_step("x"), "state", "AntManState"),
        ("antman.apply", lambda: antman.apply("x", None), "state", "AntManState"),
        ("antman.finish", lambda: antman.finish("x", ()), "state", "AntManState"),
        ("antman.check", lambda: antman.check("x", None), "state", "AntManState"),
        ("all_gpus", lambda: antman.all_gpus("x"), "cluster", "Cluster"),
        ("srtf", lambda: srtf("x"), "inp", "SrtfInput"),
        ("srtf_select", lambda: srtf_select(3, 3), "jobs", "collection of Job"),
        ("locality_limit", lambda: locality_limit("x", None), "cluster", "Cluster"),
        ("submission_control", lambda: submission_control(["x"]), "submissions[0]", "Submission"),
        ("profiling_capacity", lambda: profiling_capacity(5, 0.0), "submissions", "Submission"),
    ]


@pytest.mark.parametrize(
    ("name", "call", "field", "words"),
    _step_calls(),
    # Ids from the names only: a lambda's repr holds its address, which
    # differs between processes (pytest-xdist's workers must agree).
    ids=[f"{name}-{field}" for name, _call, field, _words in _step_calls()],
)
def test_step_functions_name_the_type_they_expect(
    name: str, call: Callable[[], object], field: str, words: str
) -> None:
    _refused(call, field, words)


def test_a_periodic_policy_counts_its_wake_ups_over_the_horizon() -> None:
    from scheduling_opt.sim import simulate

    c = ClusterSpec.uniform(1, 8)
    # One job of 10^7 minutes under Chronus (a lease term every 20): 500,000
    # calls took 37 s; refused before the first, naming the policy.
    long = Workload.of([SimJob("0", 0.0, 1, 1e7)], "w")
    err = _refused(
        lambda: simulate(long, c, make_policy("chronus-greedy", long, c)),
        "policy",
        "decides every 20 time units: 500,000 decisions",
    )
    assert isinstance(err, InstanceTooLargeError)
    short = Workload.of([SimJob("0", 0.0, 1, 100.0)], "w")
    assert simulate(short, c, make_policy("chronus-greedy", short, c)).end == (100.0,)
    ones = make_policy("ones", short, c)
    assert getattr(ones, "period", None) == 60.0  # its schedule interval, counted the same way


def test_tiresias_demotes_a_job_late_on_the_clock_without_looping() -> None:
    from scheduling_opt.sim import simulate

    # Submitted at 999,999,999 (the clock resolves 1.2e-7 there), 81 minutes on
    # 1 GPU: it crosses the 54.17 GPU-minute threshold, and its demotion timer
    # used to land on "now" again and again inside one call (found by the fuzz).
    w = Workload.of([SimJob("0", 999_999_999.0, 1, 81.0)], "w")
    c = ClusterSpec.uniform(1, 8)
    out = simulate(w, c, make_policy("tiresias", w, c))
    assert out.end == (999_999_999.0 + 81.0,)
    assert out.preemptions == (0,)
