"""Gandiva in the simulator: hand-computed schedules of time slicing, packing, migration.

Every expected time is worked out in the test's comment from the rules in
scheduling_opt/sim/policies/antman/gandiva.py: two jobs on a GPU run at 1/2 each
when time-sliced, at ``1 - pack_slowdown`` each when packed; a job runs at
its slowest GPU; speeds change the instant a partner arrives or leaves.
"""

from __future__ import annotations

import pytest

from scheduling_opt.sim import ClusterSpec, EngineParams, SimJob, Workload, simulate
from scheduling_opt.sim.policies.antman.gandiva import PACK_SLOWDOWN, Gandiva, fits, pair_speed
from scheduling_opt.sim.policies.antman.policy import utilization
from scheduling_opt.sim.registry import make_policy
from tests.sim.helpers import by_id


def _run(
    jobs: list[SimJob], policy: Gandiva, gpus: int = 1, servers: int = 1
) -> dict[str, tuple[float, float, int]]:
    w = Workload.of(jobs, "t")
    # The engine's AntMan interference (0.43 / 0.034) must not apply: the policy declares its own.
    return by_id(simulate(w, ClusterSpec.uniform(servers, gpus), policy, params=EngineParams()))


def test_the_measured_pair_sets_the_default_interference() -> None:
    # AntMan §5.1: ESPnet 20.1 -> 105.2 min beside ResNet-50 under Gandiva's packing.
    assert pytest.approx(105.2) == 20.1 / (1.0 - PACK_SLOWDOWN)


def test_time_slicing_halves_both_jobs_until_one_ends() -> None:
    # One GPU. a (10) starts alone; b (4) has no idle GPU: it joins a's GPU.
    # Default interference 0.809: packing (2 x 0.191 = 0.38) loses to time
    # slicing (1), so they take turns at 1/2 each. b ends at 4 / 0.5 = 8; a
    # has done 4 by then, 6 left alone: ends 14.
    got = _run([SimJob("a", 0.0, 1, 10.0), SimJob("b", 0.0, 1, 4.0)], Gandiva())
    assert got == {"a": (0.0, 14.0, 0), "b": (0.0, 8.0, 0)}


def test_packing_is_kept_when_its_throughput_beats_time_slicing() -> None:
    # pack_slowdown 0.2 and 4 + 17 GB fit 32 GB: packed, both at 0.8
    # (2 x 0.8 = 1.6 > 1). b ends at 4 / 0.8 = 5; a has done 4, 6 left: ends 11.
    jobs = [SimJob("a", 0.0, 1, 10.0, model="vgg16"), SimJob("b", 0.0, 1, 4.0, model="alexnet")]
    got = _run(jobs, Gandiva(pack_slowdown=0.2))
    assert got["b"] == (0.0, 5.0, 0)
    assert got["a"][1] == pytest.approx(11.0)


def test_a_pair_whose_memory_does_not_fit_is_time_sliced() -> None:
    # vgg16 17 GB + resnet50 17.6 GB = 34.6 > 32 GB: no packing even at 0.2;
    # time-sliced as in the first test: b ends 8, a 14.
    jobs = [SimJob("a", 0.0, 1, 10.0, model="vgg16"), SimJob("b", 0.0, 1, 4.0, model="resnet50")]
    assert not fits("vgg16", "resnet50")
    assert _run(jobs, Gandiva(pack_slowdown=0.2)) == {"a": (0.0, 14.0, 0), "b": (0.0, 8.0, 0)}


def test_antmans_gandiva_packs_whatever_the_throughput() -> None:
    # mode "pack" (AntMan §5.2's baseline): packed at the measured 0.191 each,
    # no time slicing. b ends at 4 / 0.191 = 20.935; a has done 4 by then, 6
    # left alone: ends 20.935 + 6 = 26.935.
    s = 20.1 / 105.2
    jobs = [SimJob("a", 0.0, 1, 10.0, model="vgg16"), SimJob("b", 0.0, 1, 4.0, model="alexnet")]
    got = _run(jobs, Gandiva(mode="pack"))
    assert got["b"][1] == pytest.approx(4.0 / s)
    assert got["a"][1] == pytest.approx(4.0 / s + 6.0)


def test_antmans_gandiva_makes_a_job_wait_when_no_memory_fits() -> None:
    # mode "pack": resnet50 does not fit beside vgg16, and time slicing is off:
    # b waits for a (0..10) and runs 10..14.
    jobs = [SimJob("a", 0.0, 1, 10.0, model="vgg16"), SimJob("b", 0.0, 1, 4.0, model="resnet50")]
    assert _run(jobs, Gandiva(mode="pack")) == {"a": (0.0, 10.0, 0), "b": (10.0, 14.0, 0)}


def test_a_time_sliced_job_migrates_to_a_gpu_that_frees() -> None:
    # Two GPUs. a (10) on GPU 0, b (2) on GPU 1; c (10) joins the lower-load
    # GPU (a and b both at utilization 0.5: the lower index, GPU 0), where a
    # and c take turns at 1/2. b, alone, ends at 2; GPU 1 is idle and c
    # migrates there (preempted and restarted at once: one preemption, no
    # restart cost). By 2 a and c have done 1 each; alone from 2, 9 left
    # each: both end at 11.
    assert utilization("a") == utilization("b") == 0.5
    jobs = [SimJob("a", 0.0, 1, 10.0), SimJob("b", 0.0, 1, 2.0), SimJob("c", 0.0, 1, 10.0)]
    policy = Gandiva()
    got = _run(jobs, policy, gpus=2)
    assert got == {"a": (0.0, 11.0, 0), "b": (0.0, 2.0, 0), "c": (0.0, 11.0, 1)}
    assert policy.stats()["migrations"] == 1


def test_a_job_left_alone_runs_at_full_speed_and_takes_the_first_slot() -> None:
    # mode "pack" at pack_slowdown 0.5, one GPU: a (2) and b (10) packed at
    # 1/2 each. a ends at 4; b has done 2, runs alone from 4 at full speed
    # (8 left: ends 12) and is upgraded to the first slot. c (1 GPU, 1 unit)
    # arrives at 5 and packs beside b: both at 1/2 from 5. c ends at 7; b did
    # 1 alone (4..5) + 1 shared (5..7): 6 left at 7: ends 13.
    jobs = [
        SimJob("a", 0.0, 1, 2.0, model="alexnet"),
        SimJob("b", 0.0, 1, 10.0, model="alexnet"),
        SimJob("c", 5.0, 1, 1.0, model="alexnet"),
    ]
    policy = Gandiva(mode="pack", pack_slowdown=0.5)
    got = _run(jobs, policy)
    assert got == {"a": (0.0, 4.0, 0), "b": (0.0, 13.0, 0), "c": (5.0, 7.0, 0)}
    assert policy.stats()["upgrades"] == 1


def test_a_gang_runs_at_its_slowest_gpu() -> None:
    # Two GPUs. a (1 GPU, 10) on GPU 0; b (2 GPUs, 4) finds 1 idle GPU only:
    # it joins both (GPU 0 beside a, GPU 1 alone); time-sliced on GPU 0, so
    # b runs at 1/2 (its slowest GPU), a at 1/2 too. b ends at 8; a has done
    # 4, then alone: ends 14.
    jobs = [SimJob("a", 0.0, 1, 10.0), SimJob("b", 0.0, 2, 4.0)]
    assert _run(jobs, Gandiva(), gpus=2) == {"a": (0.0, 14.0, 0), "b": (0.0, 8.0, 0)}


def test_pair_speed_rule() -> None:
    # Packing wins when 2 (1 - d) > 1 - overhead.
    assert pair_speed("alexnet", "alexnet", mode="full", pack_slowdown=0.49) == pytest.approx(0.51)
    assert pair_speed("alexnet", "alexnet", mode="full", pack_slowdown=0.5) == 0.5
    assert pair_speed(
        "alexnet", "alexnet", mode="full", pack_slowdown=0.45, slice_overhead=0.2
    ) == (pytest.approx(0.55))
    assert pair_speed("vgg16", "resnet50", mode="pack", pack_slowdown=0.3) == pytest.approx(0.7)


def test_registry_and_bad_parameters() -> None:
    w = Workload.of([SimJob("a", 0.0, 1, 1.0)], "t")
    c = ClusterSpec.uniform(1, 1)
    assert make_policy("gandiva", w, c).name == "gandiva"
    p = make_policy("gandiva-pack", w, c, {"pack_slowdown": 0.3})
    assert p.name == "gandiva-pack"
    assert p.pack_slowdown == 0.3
    for bad in (-0.1, 1.0, float("nan")):
        with pytest.raises(ValueError, match="pack_slowdown"):
            Gandiva(pack_slowdown=bad)
    with pytest.raises(ValueError, match="mode"):
        Gandiva(mode="slice")


def test_gandiva_scale_grows_while_nothing_waits_and_shrinks_when_a_job_arrives() -> None:
    # Aryl §7.1's Gandiva, one 4-GPU server, linear scaling. e asks 2 GPUs
    # (1..4, work 8): it starts on 2 and, nothing waiting, grows onto its
    # server's 2 free GPUs at once: speed 4 / 2 = 2. At 1 j (2 GPUs, 3)
    # arrives: e (2 done) shrinks back to 2 (speed 1), j runs 1..4. At 4
    # nothing waits: e (2 + 3 = 5 done, 3 left) grows to 4 again: ends 5.5.
    jobs = [SimJob("e", 0.0, 2, 8.0, min_gpus=1, max_gpus=4), SimJob("j", 1.0, 2, 3.0)]
    policy = make_policy("gandiva-scale", Workload.of(jobs, "t"), ClusterSpec.uniform(1, 4))
    out = simulate(Workload.of(jobs, "t"), ClusterSpec.uniform(1, 4), policy)
    got = by_id(out)
    assert got["j"] == (1.0, 4.0, 0)
    assert got["e"][:2] == (0.0, 5.5)
    assert policy.stats() == {"grows": 2.0, "shrinks": 1.0}  # type: ignore[attr-defined]
