"""Chronus as a system: the Profiler and its cluster (§3.2), the Spot cluster's BE leases (§3.3.5).

Every expected schedule below is computed by hand in the test's comments
from the paper's rules (FCFS profiling runs of T_profile, submission
control per interval, BE leases granted by SRTF at BE cycles only), not
read from the code.
"""

from __future__ import annotations

import math
from types import SimpleNamespace

import pytest
from hypothesis import given, settings
from hypothesis import strategies as hst

from scheduling_opt.policies.profiler import Submission, submission_control
from scheduling_opt.sim import ClusterSpec, SimJob, Workload, simulate
from scheduling_opt.sim.policies.chronus import _artifact_mip_preset
from scheduling_opt.sim.policies.chronus.policy import Chronus
from scheduling_opt.sim.policies.chronus.profiling import NOISE_FLOOR, Profiler, SubmissionGate
from scheduling_opt.sim.semantics import with_semantics
from scheduling_opt.sim.sweep import RunConfig


def _run(jobs: list[SimJob], servers: int, **params: object) -> tuple[Chronus, object]:
    policy = Chronus(mode="greedy", **params)  # type: ignore[arg-type]
    out = simulate(Workload.of(jobs, "demo"), ClusterSpec.uniform(servers, 8), policy)
    return policy, out


def test_short_job_finishes_in_the_profiler_and_the_long_one_waits_fcfs() -> None:
    # Two 8-GPU servers, a Profiling cluster of one (server 1). At t=0 "s"
    # (4 GPUs, 3 min) starts profiling on server 1; "l" (8 GPUs, at 0.1) is
    # next in FCFS order and waits: server 1 has 4 GPUs free. "s" ends at 3 inside
    # its T_profile = 5: it never reaches the main cluster (no preemption).
    # "l" profiles 3 -> 8 (5 of its 12 minutes), is stopped and handed to
    # the loop at 8. The loop had no job since its cycle at 0, so its next
    # BE cycle opens at its first call after 5, at 8: "l" runs 8 -> 15.
    jobs = [SimJob("s", 0.0, 4, 3.0), SimJob("l", 0.1, 8, 12.0)]
    policy, out = _run(jobs, 2, profiler_gpus=8)
    assert out.first_start == (0.0, 3.0)  # type: ignore[attr-defined]
    assert out.end == (3.0, 15.0)  # type: ignore[attr-defined]
    assert out.preemptions == (0, 1)  # type: ignore[attr-defined]
    stats = policy.stats()
    assert stats["profiler_finished"] == 1.0
    assert stats["profiler_short_jct_mean"] == 3.0
    assert math.isclose(stats["profiler_pending_max"], 2.9)  # "l" waited 0.1 -> 3
    # GPU time of the runs: 4 x 3 ("s") + 8 x 5 ("l").
    assert stats["profiler_gpu_time"] == 52.0


def test_a_user_over_the_submission_cap_waits_for_the_next_interval() -> None:
    # One user, a cap of 8 GPUs per T_profile = 5. "a" (8 GPUs, 2 min) enters
    # profiling at 0 and ends there at 2. "b" (8 GPUs, 2 min, submitted at
    # 0.5) would exceed the user's 8 GPUs of interval [0, 5): it enters at 5,
    # although a second profiling server is free, and ends at 7.
    jobs = [SimJob("a", 0.0, 8, 2.0, tenant="u"), SimJob("b", 0.5, 8, 2.0, tenant="u")]
    policy, out = _run(jobs, 3, profiler_gpus=16, submission_cap=8)
    assert out.first_start == (0.0, 5.0)  # type: ignore[attr-defined]
    assert out.end == (2.0, 7.0)  # type: ignore[attr-defined]
    assert policy.stats()["profiler_pending_max"] == 4.5
    # Without the control "b" profiles at once: 0.5 -> 2.5.
    _, free = _run(jobs, 3, profiler_gpus=16, submission_cap=None)
    assert free.end == (2.0, 2.5)  # type: ignore[attr-defined]


def test_a_be_lease_expiring_mid_job_hands_the_gpus_to_a_shorter_job() -> None:
    # No Profiler, one 8-GPU server, BE leases of 5. "L" (20 min) holds the
    # lease from 0. "S" (3 min) arrives at 1 and waits for the cycle at 5:
    # there SRTF leases "S" (3 < 15 left of "L"), "L"'s lease expires
    # mid-job and it is preempted. "S" runs 5 -> 8; "L" waits for the next
    # cycle (10) and runs its last 15 minutes 10 -> 25.
    jobs = [SimJob("L", 0.0, 8, 20.0), SimJob("S", 1.0, 8, 3.0)]
    _, out = _run(jobs, 1, profiler=False)
    assert out.end == (25.0, 8.0)  # type: ignore[attr-defined]
    assert out.preemptions == (1, 0)  # type: ignore[attr-defined]
    # SRTF at every event (no BE lease) never preempts "L": "S" runs 20 -> 23.
    _, every = _run(jobs, 1, profiler=False, be_lease=None)
    assert every.end == (20.0, 23.0)  # type: ignore[attr-defined]


def test_gpus_a_guaranteed_job_yields_go_to_spot_at_the_next_be_cycle() -> None:
    # One 8-GPU server. "G" (SLO, 7 min, deadline 100) is admitted and holds
    # the term from 0; the Spot cluster has 8 - 8 = 0 GPUs, so "B" (2 min)
    # gets no BE lease. "G" ends at 7 inside its SLO lease; its GPUs go to
    # Spot at the next BE cycle, 10: "B" runs 10 -> 12 (at once, 7 -> 9,
    # without BE leases).
    jobs = [SimJob("G", 0.0, 8, 7.0, deadlines=((100.0, 100.0),)), SimJob("B", 0.0, 8, 2.0)]
    _, out = _run(jobs, 1, profiler=False)
    # Workload order is by submission, then id: "B" first.
    assert out.end == (12.0, 7.0)  # type: ignore[attr-defined]
    _, every = _run(jobs, 1, profiler=False, be_lease=None)
    assert every.end == (9.0, 7.0)  # type: ignore[attr-defined]


def test_the_hourly_capacity_rule_follows_the_past_hour() -> None:
    # Ten servers; a 1-minute job every minute: 4 GPUs at 0..59, 8 GPUs at
    # 60..119 (each profiles at once and ends in the Profiler).
    # Warm-up (first hour, lambda over the last T_profile = 5 minutes, every
    # 5): at 0 the window holds 4 GPUs: C = ceil(4 / 5 x 5) = 4 -> 1 server;
    # at 5, 10, ..., 55 it holds 5 jobs: 20 GPUs -> C = 20 -> 3 servers.
    # Hourly from 60: (0, 60] holds 59 x 4 + 8 = 244 GPUs, C = ceil(244 / 60
    # x 5) = 21 -> 3 servers; at 120, (60, 120] holds 59 x 8 = 472 GPUs,
    # C = ceil(39.3) = 40 -> 5 servers.
    jobs = [SimJob(str(k), float(k), 4 if k < 60 else 8, 1.0) for k in range(120)]
    policy, out = _run(jobs, 10, profiler_scaling="hourly")
    assert policy.profiler is not None
    assert policy.profiler.stats.servers == [1] + [3] * 12 + [5]
    assert policy.stats()["profiler_finished"] == 120.0
    assert max(out.preemptions) == 0  # type: ignore[attr-defined]


def test_a_burst_grows_the_profiling_cluster_by_its_backlog() -> None:
    # Ten servers. "w" (1 GPU, 1 min) at 0 starts the clock: the warm-up
    # measure at 0 counts 1 GPU over 5 minutes, C = ceil(1 / 5 x 5) = 1 ->
    # 1 server; "w" profiles 0 -> 1 and ends there. At 61 a burst: four
    # jobs of 8 GPUs, 1 minute each. The hourly measure at 61 counts the
    # GPUs of (1, 61]: 32, C = ceil(32 / 60 x 5) = ceil(2.67) = 3 -> 1 server.
    # - hourly: the bound alone, one server: FCFS, one job at a time:
    #   61 -> 62, 62 -> 63, 63 -> 64, 64 -> 65; the last waited 3 minutes.
    # - backlog: the bound is a floor; the Profiler holds 0 GPUs and its
    #   queue 4 x 8 = 32: C = max(3, 32) = 32 -> 4 servers, all four start
    #   at 61 and end at 62, none waits.
    burst = [SimJob(f"b{k}", 61.0, 8, 1.0) for k in range(4)]
    jobs = [SimJob("w", 0.0, 1, 1.0), *burst]
    hourly, out = _run(jobs, 10, profiler_scaling="hourly")
    assert out.end == (1.0, 62.0, 63.0, 64.0, 65.0)  # type: ignore[attr-defined]
    assert hourly.stats()["profiler_pending_max"] == 3.0
    assert hourly.profiler is not None
    assert hourly.profiler.stats.servers[:2] == [1, 1]
    backlog, out = _run(jobs, 10, profiler_scaling="backlog")
    assert out.end == (1.0, 62.0, 62.0, 62.0, 62.0)  # type: ignore[attr-defined]
    assert backlog.stats()["profiler_pending_max"] == 0.0
    assert backlog.profiler is not None
    assert backlog.profiler.stats.servers[:2] == [1, 4]
    assert backlog.stats()["profiler_finished"] == 5.0


def test_the_backlog_counts_two_whole_servers_for_a_multi_server_job() -> None:
    # Ten servers. "w" (1 GPU, 1 min) at 0 as above. At 61 a 16-GPU job
    # "m" (30 minutes) and two 8-GPU jobs of 1 minute. Bound at 61: (1, 61]
    # holds 32 GPUs -> 3 -> 1 server. Backlog: "m"'s one-node and two-node
    # runs hold two whole servers (16 GPUs), the others 8 each: C =
    # max(3, 32) = 32 -> 4 servers: all three start at 61; the 8-GPU jobs
    # end at 62; "m" leaves the Profiler at 66 without progress.
    jobs = [
        SimJob("w", 0.0, 1, 1.0),
        SimJob("m", 61.0, 16, 30.0),
        SimJob("x", 61.0, 8, 1.0),
        SimJob("y", 61.0, 8, 1.0),
    ]
    policy, out = _run(jobs, 10)
    assert policy.profiler is not None
    assert policy.profiler.stats.servers[:2] == [1, 4]
    assert out.end[2:] == (62.0, 62.0)  # type: ignore[attr-defined]
    assert policy.stats()["profiler_pending_max"] == 0.0
    assert out.end[1] >= 66.0 + 30.0  # type: ignore[attr-defined]


def test_noise_is_seeded_and_floored() -> None:
    jobs = [SimJob(str(k), 0.0, 8, 30.0 + k) for k in range(6)]
    runs = [_run(jobs, 2, runtime_noise=2.0, noise_seed=3)[0] for _ in range(2)]
    factors = [r.profiler.factor for r in runs if r.profiler is not None]
    assert factors[0] == factors[1]
    assert len(factors[0]) == 6
    assert min(factors[0].values()) >= NOISE_FLOOR
    assert len(set(factors[0].values())) > 1


@settings(max_examples=40, deadline=None)
@given(
    hst.lists(
        hst.tuples(
            hst.sampled_from("uvw"), hst.integers(0, 400).map(lambda k: k / 10), hst.integers(1, 30)
        ),
        min_size=1,
        max_size=25,
    )
)
def test_the_online_gate_matches_the_library_submission_control(
    rows: list[tuple[str, float, int]],
) -> None:
    # The online rule, fed in submission order, gives the library's offline answer.
    subs = [Submission(f"j{k}", u, t, g) for k, (u, t, g) in enumerate(rows)]
    offline = submission_control(subs, limit=24, interval=5.0)
    gate = SubmissionGate(24, 5.0)
    for s in sorted(subs, key=lambda s: (s.time, s.id)):
        assert math.isclose(gate.release(s.user, s.time, s.gpus), offline[s.id])


def test_the_artifact_presets_switch_the_system_off() -> None:
    # The artifact profiles instantly and runs one cluster.
    params = dict(with_semantics(RunConfig("chronus"), "artifact").policy_params)
    assert params["profiler"] is False
    assert params["be_lease"] is None
    preset = _artifact_mip_preset({})
    assert preset["profiler"] is False
    assert preset["be_lease"] is None


def test_a_growing_profiling_cluster_takes_the_emptiest_main_server_and_stops_its_jobs() -> None:
    # Four 8-GPU servers, server 3 profiles; the target becomes 2. The main
    # servers hold 8, 4 and 8 GPUs: server 1 is the emptiest, it joins, and
    # the main job on it (7) is preempted; the one on server 0 (8) stays.
    prof = Profiler(5.0, None, None, 0.0, 0)
    prof.servers, prof.target, prof.main = {3}, 2, {7, 8}
    running = {
        7: SimpleNamespace(placement=((1, 4),)),
        8: SimpleNamespace(placement=((0, 8),)),
    }
    view = SimpleNamespace(capacity=(8, 8, 8, 8), free=(0, 4, 0, 8), running=running)
    assert prof._grow(view, ()) == (7,)
    assert prof.servers == {1, 3}
    # Job 7 guaranteed: its server goes last. Servers 0 and 2 tie at 8 GPUs
    # in use; the higher index goes first: server 2, which holds no listed
    # job (nothing preempted).
    prof.servers = {3}
    assert prof._grow(view, {7}) == ()
    assert prof.servers == {2, 3}


def test_the_estimate_is_the_noisy_work_less_the_work_done() -> None:
    # A 10-minute job with 4 minutes left: with a factor 1.5 the Profiler
    # believes 15 minutes of work, 6 done: 9 left. With 0.2 it believes 2,
    # already exceeded: the floor. Without a factor, the trace's 4.
    prof = Profiler(5.0, None, None, 0.3, 0)
    st = SimpleNamespace(index=0, job=SimJob("j", 0.0, 1, 10.0), remaining=lambda now: 4.0)
    assert prof.estimate(st, 0.0) == 4.0
    prof.factor[0] = 1.5
    assert prof.estimate(st, 0.0) == pytest.approx(9.0)
    prof.factor[0] = 0.2
    assert prof.estimate(st, 0.0) == 1e-9
