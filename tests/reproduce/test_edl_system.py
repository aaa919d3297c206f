"""EDL's runtime in the simulator: scaling costs (§6.1) and straggler removal (§5.2), by hand."""

from __future__ import annotations

import pytest

from scheduling_opt.errors import InvalidInstanceError
from scheduling_opt.reproduce.microbench import run_scenario, verdict_rows
from scheduling_opt.reproduce.papers import PAPERS
from scheduling_opt.sim import ClusterSpec, Decision, SimJob, View, Workload, simulate
from scheduling_opt.sim.policies.edl.elastic_tiresias import EdlTiresias
from scheduling_opt.sim.registry import make_policy

#: Queues that never change in these runs (the thresholds' calls would add nothing).
FLAT = (1e9, 1e10)

#: The straggler's removal, minutes: 10 mini-batches of 0.5 s / 0.75 (the straggler's),
#: then the 5 s scale-in, as §5.2 and §6.2 describe them.
REMOVED_AT = (10 * 0.5 / 0.75 + 5.0) / 60.0


def _fig13b(**kw: object) -> tuple[float, EdlTiresias]:
    # One 16-GPU job (elastic 8..16, linear), 10 minutes of work at 16 GPUs, alone.
    w = Workload.of([SimJob("J", 0.0, 16, 10.0, min_gpus=8, max_gpus=16)], "fig13b")
    policy = EdlTiresias(thresholds=FLAT, straggler_rate=1.0, **kw)  # type: ignore[arg-type]
    out = simulate(w, ClusterSpec.uniform(1, 16), policy)
    return out.end[0], policy


def test_a_straggler_is_detected_after_ten_mini_batches_and_removed() -> None:
    # Speed 0.75 until the removal (11.67 s in), then 15 of 16 workers at full speed.
    seen: list[Decision] = []

    class Spy(EdlTiresias):
        def decide(self, view: View) -> Decision:
            d = super().decide(view)
            seen.append(d)
            return d

    w = Workload.of([SimJob("J", 0.0, 16, 10.0, min_gpus=8, max_gpus=16)], "fig13b")
    out = simulate(w, ClusterSpec.uniform(1, 16), Spy(thresholds=FLAT, straggler_rate=1.0))
    done = 0.75 * REMOVED_AT
    assert out.end[0] == pytest.approx(REMOVED_AT + (10.0 - done) / (15 / 16), rel=1e-12)
    assert seen[0].rate == ((0, 0.75),)  # slowed from its start
    assert seen[0].wake_at == pytest.approx(REMOVED_AT, rel=1e-12)
    removal = seen[1]
    assert removal.resize == ((0, ((0, 15),)),)  # one worker fewer, same server
    assert removal.rate == ((0, 1.0),)
    assert removal.stall == ()  # EDL's scale-in: graceful exit, no stop


def test_an_unmitigated_straggler_slows_the_job_to_its_end() -> None:
    end, policy = _fig13b(mitigate=False)
    assert end == pytest.approx(10.0 / 0.75, rel=1e-12)
    assert policy.stats()["stragglers_removed"] == 0.0


def test_a_worker_under_the_factor_is_not_a_straggler() -> None:
    # 1 / 0.9 = 1.11 x the median: under §5.2's 1.2, never detected.
    end, policy = _fig13b(straggler_speed=0.9)
    assert end == pytest.approx(10.0 / 0.9, rel=1e-12)
    assert policy.stats()["stragglers_removed"] == 0.0


def test_stop_resume_stops_the_job_for_thirty_seconds_at_the_removal() -> None:
    end, policy = _fig13b(scaling="stop-resume")
    done = 0.75 * REMOVED_AT
    assert end == pytest.approx(REMOVED_AT + 0.5 + (10.0 - done) / (15 / 16), rel=1e-12)
    assert policy.stats()["scaling_stop"] == 0.5


@pytest.mark.parametrize(
    ("scaling", "stop"), [("free", 0.0), ("edl", 1 / 60), ("stop-resume", 0.5)]
)
def test_an_expansion_stops_the_job_for_its_scale_out(scaling: str, stop: float) -> None:
    # 4 GPUs. A (2 GPUs, elastic 1..4, linear, 10 min of work) and B (2 GPUs, 1 min)
    # start at 0; B ends at 1 and expansion grows A to 4 GPUs: A has 9 minutes of
    # work left at twice its speed, after the scale-out's stop.
    w = Workload.of(
        [SimJob("A", 0.0, 2, 10.0, min_gpus=1, max_gpus=4), SimJob("B", 0.0, 2, 1.0)], "t"
    )
    out = simulate(w, ClusterSpec.uniform(1, 4), EdlTiresias(thresholds=FLAT, scaling=scaling))
    assert out.end == pytest.approx((1.0 + stop + 9.0 / 2, 1.0), rel=1e-12)


def test_the_declaration_gives_the_options_and_refuses_a_bad_one() -> None:
    w = Workload.of([SimJob("J", 0.0, 2, 1.0)], "t")
    p = make_policy("elastic-tiresias", w, ClusterSpec.uniform(1, 2), {"scaling": "stop-resume"})
    assert isinstance(p, EdlTiresias)
    assert p.costs.out == 0.5
    with pytest.raises(InvalidInstanceError, match="scaling"):
        make_policy("elastic-tiresias", w, ClusterSpec.uniform(1, 2), {"scaling": "fast"})


def test_straggler_draws_are_seeded_and_at_about_the_rate() -> None:
    # 400 two-GPU jobs one after another on 2 GPUs: each start draws once.
    jobs = [SimJob(str(k), float(k), 2, 0.5) for k in range(400)]
    w = Workload.of(jobs, "t")

    def slowed(seed: int) -> list[float]:
        out = simulate(
            w,
            ClusterSpec.uniform(1, 2),
            EdlTiresias(straggler_rate=0.25, seed=seed, mitigate=False),
        )
        return [e - s for e, s in zip(out.end, out.first_start, strict=True)]

    a, b = slowed(0), slowed(0)
    assert a == b
    share = sum(d > 0.6 for d in a) / len(a)  # 0.5 / 0.75 = 0.67 when slowed
    assert 0.18 < share < 0.32  # binomial(400, 0.25): 4.6 standard deviations either side
    assert slowed(1) != a


def test_fig13b_scenario_measures_the_phases_by_hand() -> None:
    # The job's phases: 75% until the removal, then 15 of 16 workers (93.75%);
    # kept, 75% to the end; without a straggler, 100%.
    res = run_scenario(PAPERS["edl"].scenarios[0])
    assert res.metrics["edl"]["slowed %"] == pytest.approx(75.0, rel=1e-12)
    assert res.metrics["edl"]["after removal %"] == pytest.approx(100.0 * 15 / 16, rel=1e-12)
    assert res.metrics["no-mitigation"]["after removal %"] == pytest.approx(75.0, rel=1e-12)
    assert res.metrics["normal"]["slowed %"] == pytest.approx(100.0, rel=1e-12)
    assert res.times["stop-resume"].jct("J") == pytest.approx(
        REMOVED_AT + 0.5 + (10.0 - 0.75 * REMOVED_AT) / (15 / 16), rel=1e-12
    )
    assert [v.value for _, _, v in verdict_rows(res)] == ["reproduced", "reproduced"]


def test_a_migration_makes_room_for_a_gang_that_fragmentation_kept_out() -> None:
    # Two 4-GPU servers; queues never change, compaction whenever a job waits (N = 0).
    # t=0: Y1 (2 GPUs) on server 0, Y2 (3) on server 1. t=1: X (P 6, elastic 3..6,
    # linear, 20 min of work at 6) starts by compaction at its floor 3 on the free
    # GPUs, 2 + 1 (speed 0.5). t=5: Z (4, rigid) waits: nothing is free. t=10: Y1 and
    # Y2 end, free 2 + 3: the plan starts Z, but no server holds 4.
    jobs = [
        SimJob("Y1", 0.0, 2, 10.0),
        SimJob("Y2", 0.0, 3, 10.0),
        SimJob("X", 1.0, 6, 20.0, min_gpus=3, max_gpus=6),
        SimJob("Z", 5.0, 4, 5.0),
    ]
    w = Workload.of(jobs, "fragmented")
    cluster = ClusterSpec.uniform(2, 4)
    kw: dict[str, object] = {"compaction": 0, "thresholds": FLAT}
    stuck = simulate(w, cluster, EdlTiresias(**kw))  # type: ignore[arg-type]
    # Without migration Z waits for X's end: 1 + 20 / 0.5 = 41, then runs 5.
    assert stuck.end == pytest.approx((10.0, 10.0, 41.0, 46.0), rel=1e-12)
    moved = simulate(w, cluster, EdlTiresias(migrate=True, **kw))  # type: ignore[arg-type]
    # At 10 X moves onto server 0 (2 of its workers there, 2 free: 3 fit), stopping
    # 1 s (a scale-out's cost), and Z starts on server 1, ending at 15. X has done
    # 9 x 0.5 = 4.5; by 15, 0.5 x (5 - 1/60) more; then expansion grows it to 6
    # (another 1 s stop) and it runs at speed 1.
    done = 4.5 + 0.5 * (5.0 - 1 / 60)
    x_end = 15.0 + 1 / 60 + (20.0 - done)
    assert moved.end == pytest.approx((10.0, 10.0, x_end, 15.0), rel=1e-12)
    assert x_end == pytest.approx(28.025, rel=1e-12)
