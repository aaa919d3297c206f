"""Elastic-Tiresias in the simulator: hand-checked expansion and compaction (EDL §5.1)."""

from __future__ import annotations

from scheduling_opt.reproduce.workloads import ElasticRule
from scheduling_opt.sim import ClusterSpec, Decision, SimJob, View, Workload, simulate
from scheduling_opt.sim.policies.edl.elastic_tiresias import EdlTiresias
from tests.sim.helpers import by_id

RULE = ElasticRule(share=1.0, max_factor=1.0, serial=0.1)


def test_expansion_gives_idle_gpus_to_the_running_job_when_none_waits() -> None:
    # One job asks for 2 GPUs, may use 1..4, scales linearly; 4 idle GPUs and
    # nothing waits: Algorithm 1 lines 7-12 grow it to 4, so it ends at 10 / 2.
    w = Workload.of([SimJob("a", 0.0, 2, 10.0, min_gpus=1, max_gpus=4)], "t")
    out = simulate(w, ClusterSpec.uniform(1, 4), EdlTiresias(unit_seconds=1.0))
    assert out.end == (5.0,)
    plain = simulate(w, ClusterSpec.uniform(1, 4), EdlTiresias(unit_seconds=1.0, elastic=False))
    assert plain.end == (10.0,)


def test_compaction_scales_a_lower_queue_job_in_to_start_a_waiting_one() -> None:
    # 8 GPUs. Job 0 (3 GPUs, elastic 1..3, Amdahl 0.1) has 600 GPU-s at t=200:
    # queue G1. Twelve 5-GPU G0 jobs (elastic 1..5) arrive: Tiresias runs job 1
    # (5 GPUs) and keeps job 0 (3 <= the 3 left); 11 > N = 10 wait, so
    # compaction takes job 0's one worker above its floor ceil(0.5 x 3) = 2
    # (loss S(3) - S(2) = 2.5 - 1.82 = 0.68) to start job 2 on 1 GPU (gain 1).
    jobs = [RULE.apply(SimJob("0", 0.0, 3, 1000.0))]
    jobs += [RULE.apply(SimJob(str(i), 200.0, 5, 10.0)) for i in range(1, 13)]
    w = Workload.of(jobs, "t")
    seen: list[Decision] = []

    class Spy(EdlTiresias):
        def decide(self, view: View) -> Decision:
            d = super().decide(view)
            if view.now == 200.0:
                seen.append(d)
            return d

    policy = Spy(unit_seconds=1.0)
    out = simulate(w, ClusterSpec.uniform(1, 8), policy)
    assert seen[0].starts == ((1, ((0, 5),)), (2, ((0, 1),)))
    assert seen[0].resize == ((0, ((0, 2),)),)
    assert seen[0].preempt == ()
    assert policy.modes["compaction"] >= 1
    rows = by_id(out)
    assert rows["1"][:2] == (200.0, 210.0)
    assert rows["2"][0] == 200.0
    assert rows["0"][2] == 0


def test_plain_tiresias_preempts_the_lower_queue_job_for_new_g0_jobs() -> None:
    # The same step with elasticity off: job 0 (G1 after 800 GPU-s) loses its
    # 4 GPUs to four 1-GPU G0 jobs, which end at 210; job 0 resumes then.
    jobs = [SimJob("0", 0.0, 4, 1000.0)] + [SimJob(str(i), 200.0, 1, 10.0) for i in range(1, 5)]
    out = simulate(Workload.of(jobs, "t"), ClusterSpec.uniform(1, 4), EdlTiresias(unit_seconds=1.0))
    rows = by_id(out)
    assert rows["0"] == (0.0, 1010.0, 1)
    assert all(rows[str(i)][:2] == (200.0, 210.0) for i in range(1, 5))


def test_promote_knob_times_the_starved_job_by_its_executed_time() -> None:
    # One GPU, thresholds 5 and 80 GPU-s, elasticity off. A (work 110) is in
    # G2 from 80; B (work 50) arrives at 100 in G0, preempts A (executed
    # 100) and is in G1 from 105 (never G2: it ends below 80 GPU-s). With
    # knob k, A returns to G0 after waiting 100 k and preempts B.
    #   k = 3/8: A back at 137.5 (B ran 37.5), runs its last 10 (G1 from
    #     142.5, ahead of B in G1 by arrival) and ends 147.5; B, which would
    #     be promoted only at 137.5 + 37.5 k = 151.56, resumes and ends 160.
    #   k = 1/4: A back at 125 (B ran 25); at 130 A is in G1; B, waiting
    #     since 125 with 25 run, is promoted at 131.25 and preempts A (6.25
    #     run, 3.75 left); B is in G1 again at 136.25, behind A by arrival:
    #     A resumes and ends 140, B (20 left) ends 160.
    #   fixed 3,600 s: A waits for B (100..150), then ends 160.
    w = Workload.of([SimJob("A", 0.0, 1, 110.0), SimJob("B", 100.0, 1, 50.0)], "t")
    kw = {"unit_seconds": 1.0, "thresholds": (5.0, 80.0), "elastic": False}
    for knob, ends in ((0.375, (147.5, 160.0)), (0.25, (140.0, 160.0)), (None, (160.0, 150.0))):
        out = simulate(w, ClusterSpec.uniform(1, 1), EdlTiresias(promote_knob=knob, **kw))
        assert out.end == ends, knob
