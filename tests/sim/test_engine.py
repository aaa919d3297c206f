"""Engine mechanics: exact completions, capacity changes, speed, decision checks."""

from __future__ import annotations

import time

import pytest

from scheduling_opt.sim import (
    CapacityChange,
    ClusterSpec,
    Decision,
    EngineParams,
    FreeMap,
    PolicyError,
    ServerSpec,
    SpeedModel,
    View,
    Workload,
    bundled_table,
    make_policy,
    simulate,
)
from tests.sim.helpers import by_id, job, run


class Scripted:
    """Starts given jobs on given placements at given times (for engine tests)."""

    name = "scripted"

    def __init__(self, plan: dict[float, Decision]) -> None:
        self.plan = plan

    def decide(self, view: View) -> Decision:
        return self.plan.get(view.now, Decision())


def test_default_placement_best_fit_and_whole_servers() -> None:
    m = FreeMap([8, 8, 8])
    m.take(((0, 5),))
    m.take(((2, 2),))
    assert m.place(3) == ((0, 3),)  # fewest free that fit: server 0 (3)
    assert m.place(4) == ((2, 4),)  # server 2 (6) over server 1 (8)
    assert m.place(12) is None  # only server 1 is whole
    m.give(((0, 5),))
    assert m.place(12) == ((0, 8), (1, 4))  # lowest indices, filled in order


def test_completion_is_exact_in_round_mode() -> None:
    """Round 5: J0 (work 7) ends at 7, not 10; J1 (t=1) starts at the next round, 10."""
    jobs = [job(0, 0, 8, 7), job(1, 1, 8, 2)]
    got = by_id(run(jobs, "fifo", params=EngineParams(round_length=5.0)))
    assert got == {"0": (0, 7, 0), "1": (10, 12, 0)}


def test_reclaimed_server_evicts_and_job_restarts_elsewhere() -> None:
    """2 servers; J0 on server 0 (lowest index); at t=4 server 0 is taken away.

    J0 is evicted with 4 done, FIFO restarts it on server 1 at 4: ends 4 + 6 = 10.
    """
    w = Workload.of([job(0, 0, 8, 10)], "t")
    c = ClusterSpec.uniform(2, 8)
    out = simulate(w, c, make_policy("fifo", w, c), capacity_changes=[CapacityChange(4.0, 0, 0)])
    assert by_id(out) == {"0": (0, 10, 1)}
    assert out.capacity_area == pytest.approx(16 * 4 + 8 * 6)


def test_lent_server_comes_in() -> None:
    """Server 1 is lent at t=3. SJF: J1 (5) takes server 0 at 0..5; J0 waits for server 1: 3..13."""
    c = ClusterSpec((ServerSpec(8), ServerSpec(8, available=False)))
    w = Workload.of([job(0, 0, 8, 10), job(1, 0, 8, 5)], "t")
    out = simulate(w, c, make_policy("sjf", w, c), capacity_changes=[CapacityChange(3.0, 1, 8)])
    assert by_id(out) == {"1": (0, 5, 0), "0": (3, 13, 0)}


def test_spread_placement_is_slowed_by_the_table() -> None:
    """vgg16, 8 GPUs on 2 servers: speed 0.5724854767061701 (model_info.json): 10 / s."""
    w = Workload.of([job(0, 0, 8, 10, model="vgg16")], "t")
    c = ClusterSpec.uniform(2, 8)
    policy = Scripted({0.0: Decision(starts=((0, ((0, 4), (1, 4))),))})
    out = simulate(w, c, policy, speed=SpeedModel(bundled_table(), 8))
    assert out.end[0] == pytest.approx(10 / 0.5724854767061701)


def test_gpu_type_compute_factor() -> None:
    """A T4 server (0.25 of a V100): work 10 takes 40."""
    w = Workload.of([job(0, 0, 4, 10)], "t")
    out = simulate(
        w, ClusterSpec.uniform(1, 4, "T4"), make_policy("fifo", w, ClusterSpec.uniform(1, 4))
    )
    assert out.end[0] == pytest.approx(40.0)


def test_resize_reschedules_the_completion() -> None:
    """Elastic job 4..8 GPUs, work 10 at 4 GPUs; at t=2 it grows to 8 (linear: speed 2).

    8 left at speed 2: ends 2 + 4 = 6; the stale completion at 10 is dropped.
    """
    from scheduling_opt.sim import SimJob

    j = SimJob("0", 0.0, 4, 10.0, min_gpus=4, max_gpus=8)
    w = Workload.of([j], "t")

    class Grow:
        name = "grow"

        def decide(self, view: View) -> Decision:
            if view.now == 0.0:
                return Decision(starts=((0, ((0, 4),)),), wake_at=2.0)
            if view.now == 2.0:
                return Decision(resize=((0, ((0, 8),)),))
            return Decision()

    out = simulate(w, ClusterSpec.uniform(1, 8), Grow())
    assert out.end[0] == pytest.approx(6.0)
    assert out.gpu_time[0] == pytest.approx(4 * 2 + 8 * 4)


def test_stall_holds_the_gpus_without_progress() -> None:
    """Work 10 on one GPU from 0; at t=4 a stall of 1.5: 6 left after 5.5, end 11.5.

    The GPU time counts the stall (the job holds its GPU): 11.5.
    """
    w = Workload.of([job(0, 0, 1, 10)], "t")
    plan = {
        0.0: Decision(starts=((0, ((0, 1),)),), wake_at=4.0),
        4.0: Decision(stall=((0, 1.5),)),
    }
    out = simulate(w, ClusterSpec.uniform(1, 1), Scripted(plan))
    assert out.end == (11.5,)
    assert out.gpu_time == (11.5,)
    assert out.preemptions == (0,)


def test_stall_after_a_resize_follows_its_restart_cost() -> None:
    """Elastic 1..2 GPUs, work 10 at 1 GPU (linear); restart cost 2.

    t=0..4 on 1 GPU: 4 done. t=4: resized to 2 GPUs (speed 2) and stalled 1:
    the restart stall ends at 6, the decision's at 7; 6 left at speed 2: end 10.
    A stall of 0 changes nothing: same end as without it.
    """
    from scheduling_opt.sim import SimJob

    w = Workload.of([SimJob("0", 0.0, 1, 10.0, min_gpus=1, max_gpus=2)], "t")
    c = ClusterSpec.uniform(1, 2)
    params = EngineParams(restart_cost=2.0)

    def plan(seconds: float) -> dict[float, Decision]:
        return {
            0.0: Decision(starts=((0, ((0, 1),)),), wake_at=4.0),
            4.0: Decision(resize=((0, ((0, 2),)),), stall=((0, seconds),)),
        }

    assert simulate(w, c, Scripted(plan(1.0)), params=params).end == (10.0,)
    assert simulate(w, c, Scripted(plan(0.0)), params=params).end == (9.0,)


@pytest.mark.parametrize(
    ("decision", "message"),
    [
        (Decision(stall=((0, 1.0),)), "stalled but not running"),
        (
            Decision(starts=((0, ((0, 4), (1, 4))),), stall=((0, -1.0),)),
            "is not a time >= 0 on the clock",
        ),
        (
            Decision(starts=((0, ((0, 4), (1, 4))),), stall=((0, float("nan")),)),
            "is not a time >= 0 on the clock",
        ),
        (Decision(starts=((0, ((0, 4), (1, 4))),), stall=((0, 1.0), (0, 1.0))), "given twice"),
        (Decision(stall=((9, 1.0),)), "stall: no job with index 9"),
    ],
)
def test_bad_stalls_fail_loudly(decision: Decision, message: str) -> None:
    w = Workload.of([job(0, 0, 8, 10), job(1, 5, 8, 10)], "t")
    with pytest.raises(PolicyError, match=message):
        simulate(w, ClusterSpec.uniform(2, 4), Scripted({0.0: decision}))


@pytest.mark.parametrize(
    ("decision", "message"),
    [
        (Decision(starts=((0, ((0, 8),)),)), "exceeds the free GPUs"),
        (Decision(starts=((0, ((0, 4),)),)), "gang of 8 GPUs broken"),
        (Decision(starts=((0, ((1, 4), (0, 4))),)), "distinct and ascending"),
        (Decision(starts=((1, ((0, 4), (1, 4))),)), "not submitted yet"),
        (Decision(starts=((0, ((0, 4), (1, 4))), (0, ((0, 4), (1, 4))))), "already running"),
        (Decision(preempt=(0,)), "not running"),
        (Decision(starts=((7, ((0, 8),)),)), "no job with index 7"),
    ],
)
def test_bad_decisions_fail_loudly(decision: Decision, message: str) -> None:
    w = Workload.of([job(0, 0, 8, 10), job(1, 5, 8, 10)], "t")
    with pytest.raises(PolicyError, match=message) as err:
        simulate(w, ClusterSpec.uniform(2, 4), Scripted({0.0: decision}))
    assert "policy 'scripted'" in str(err.value)


def test_a_policy_that_never_starts_a_job_is_reported() -> None:
    w = Workload.of([job(0, 0, 8, 10)], "t")
    with pytest.raises(PolicyError, match="job '0': 1 jobs left unfinished"):
        simulate(w, ClusterSpec.uniform(1, 8), Scripted({}))


def test_job_larger_than_the_cluster_is_refused() -> None:
    w = Workload.of([job(0, 0, 32, 10)], "t")
    with pytest.raises(PolicyError, match="needs 32 GPUs, the cluster has 16"):
        simulate(w, ClusterSpec.uniform(2, 8), make_policy("fifo", w, ClusterSpec.uniform(2, 8)))


def test_two_simulations_interleaved_in_one_process_do_not_interfere() -> None:
    jobs = [job(0, 0, 6, 10), job(1, 1, 4, 5), job(2, 2, 2, 3)]
    a = run(jobs, "sjf")
    b = run(jobs, "fifo")
    assert by_id(run(jobs, "sjf")) == by_id(a)
    assert by_id(run(jobs, "fifo")) == by_id(b)


def test_policy_lends_and_reclaims_a_server() -> None:
    """The policy itself: lends server 1 at t=0 (J1 runs there 0..), reclaims it at t=2.

    J1 (8 GPUs, work 5) is evicted at 2 with 2 done; server 0 frees at 10 (J0):
    J1 resumes there at 10 and ends 13. Available GPU-time: 16 x 2 + 8 x 11.
    """
    c = ClusterSpec((ServerSpec(8), ServerSpec(8, available=False)))
    w = Workload.of([job(0, 0, 8, 10), job(1, 0, 8, 5)], "t")

    class Lender:
        name = "lender"

        def decide(self, view: View) -> Decision:
            if view.now == 0.0:
                return Decision(
                    capacity=((1, 8),),
                    starts=((0, ((0, 8),)), (1, ((1, 8),))),
                    wake_at=2.0,
                )
            if view.now == 2.0:
                assert [st.index for st in view.evicted] == []  # evicted by this decision
                return Decision(capacity=((1, 0),))
            starts = tuple((i, ((0, 8),)) for i in view.pending if view.free[0] == 8)[:1]
            return Decision(starts=starts)

    out = simulate(w, c, Lender())
    assert by_id(out) == {"0": (0, 10, 0), "1": (0, 13, 1)}
    assert out.capacity_area == pytest.approx(16 * 2 + 8 * 11)


def test_growing_a_busy_server_keeps_its_jobs() -> None:
    m = FreeMap([4])
    m.take(((0, 3),))
    m.set_capacity(0, 8)
    assert (m.free, m.total_free, m.place(5)) == ([5], 5, ((0, 5),))


def test_cpu_time_counts_a_finished_child_process() -> None:
    # A policy may solve in a child process (CBC's binary); its CPU is part of
    # the run's cost. The child burns CPU on its own; this process waits.
    import subprocess
    import sys

    from scheduling_opt.sim.engine import cpu_time

    before = cpu_time()
    own = time.process_time()
    subprocess.run([sys.executable, "-c", "sum(i * i for i in range(3_000_000))"], check=True)
    grew, own_grew = cpu_time() - before, time.process_time() - own
    assert grew > own_grew + 0.05
