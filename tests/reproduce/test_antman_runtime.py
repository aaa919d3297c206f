"""AntMan's local coordinator in the loop: memory shrink and growth, GpuOpManager, stacking, phases.

Every expected time is computed by hand in the comments (times in minutes,
``unit_seconds`` 60): Fig. 10's curves as points (SR: 0.75 at 10% of the
memory to 1 at 100%; ResNet: 0.1 at 10%, 0.38 at 90%, 1 at 100%), 32 GB
GPUs in 0.5 GB chunks, a shrink costing 17 ms and a growth the profile's
``grow_seconds``, the guarantee job's residual slowdown r = 1 - 20.1 / 20.8
beside a running opportunistic job, an opportunistic job's compute share
min(1, idle / its demand) with idle = 1 - the guarantee job's SM.
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from scheduling_opt.sim import ClusterSpec, SimJob, Workload, simulate
from scheduling_opt.sim.policies.antman.policy import AntMan
from scheduling_opt.sim.policies.antman.profiles import ModelProfile, Phase
from scheduling_opt.sim.protocol import Decision, View
from tests.sim.helpers import by_id

R = 1.0 - 20.1 / 20.8  # the guarantee job's residual slowdown
SHRINK, GROW = 0.017 / 60, 0.115 / 60  # minutes
#: Table 1's jobs: GCN (3.5 GB, SM 0.1, SR's curve) and ResNet-50 at batch 360 (30 GB, SM 0.9).
TABLE1 = {
    "gcn": ModelProfile(3.5, "sr", sm=0.1),
    "big": ModelProfile(30.0, "resnet", sm=0.9),
}
#: SR's curve at 2 of 3.5 GB: 0.75 + 0.25 (2 / 3.5 - 0.1) / 0.9.
SR_AT_2 = 0.75 + 0.25 * (2.0 / 3.5 - 0.1) / 0.9


def _run(jobs: list[SimJob], policy: AntMan, gpus: int = 1) -> dict:
    out = simulate(Workload.of(jobs, "t"), ClusterSpec.uniform(1, gpus), policy)
    return {"out": out, **by_id(out)}


def test_table2_guarantee_job_shrinks_the_opportunistic_one_and_runs_nearly_alone() -> None:
    # Job-A (GCN, tenant B without quota: opportunistic, work 43.0) alone from 0.
    # Job-B (ResNet-50, 30 GB, tenant A, work 91.1) arrives at 26 and launches on
    # the GPU: A shrinks to the 2 GB left (4 chunks; 17 ms; B waits for it), A
    # then at SR(2/3.5) = 0.880952 (its SM 0.1 fits the 0.1 B leaves idle), B at 1 - r.
    # A: 17 left -> ends at 26 + SHRINK + 17 / 0.880952 = 45.297581.
    # B: (1 - r)(45.297581 - 26 - SHRINK) = 18.647869 done, then alone:
    # ends at 45.297581 + 91.1 - 18.647869 = 117.749712 (JCT 91.75; paper 91.8).
    jobs = [
        SimJob("A", 0.0, 1, 43.0, tenant="B", model="gcn"),
        SimJob("B", 26.0, 1, 91.1, tenant="A", model="big"),
    ]
    policy = AntMan({"A": 1}, memory=TABLE1)
    res = _run(jobs, policy)
    a_end = 26.0 + SHRINK + 17.0 / SR_AT_2
    b_done = (1 - R) * (a_end - 26.0 - SHRINK)
    assert res["A"] == (0.0, pytest.approx(a_end), 0)
    assert res["B"] == (26.0, pytest.approx(a_end + 91.1 - b_done), 0)
    assert round(res["B"][1] - 26.0, 2) == 91.75
    stats = policy.stats()
    assert (stats["shrinks"], stats["growths"], stats["memory_evictions"]) == (1, 0, 0)


def test_opportunistic_job_grows_back_when_the_guarantee_job_leaves() -> None:
    # O (GCN, work 20) alone from 0; G (30 GB, work 10) at 5: O shrinks to 2 GB
    # (17 ms, G waits as long) and runs at 0.880952, G at 1 - r.
    # G ends at 5 + SHRINK + 10 / (1 - r) = 15.348542; O did 5 + 0.880952 x
    # (10 / (1 - r)) = 14.116323 by then; it grows back to 3.5 GB (115 ms) and
    # runs the 5.883677 left at speed 1: ends at 15.348542 + GROW + 5.883677.
    jobs = [
        SimJob("O", 0.0, 1, 20.0, tenant="B", model="gcn"),
        SimJob("G", 5.0, 1, 10.0, tenant="A", model="big"),
    ]
    policy = AntMan({"A": 1}, memory=TABLE1)
    res = _run(jobs, policy)
    g_run = 10.0 / (1 - R)
    g_end = 5.0 + SHRINK + g_run
    o_left = 20.0 - 5.0 - SR_AT_2 * g_run
    assert res["G"] == (5.0, pytest.approx(g_end), 0)
    assert res["O"] == (0.0, pytest.approx(g_end + GROW + o_left), 0)
    stats = policy.stats()
    assert (stats["shrinks"], stats["growths"]) == (1, 1)
    assert stats["stall_seconds"] == pytest.approx(2 * 0.017 + 0.115)  # O shrinks, G waits


def test_gpuopmanager_gives_the_opportunistic_job_only_the_idle_share() -> None:
    # The same with O at SM 0.3: idle 0.1 -> share 1/3, O at 0.880952 / 3 beside G.
    # No scaling costs (overheads off): G ends at 5 + 10 / (1 - r); O did
    # 5 + 0.293651 x 10 / (1 - r) by then, the rest alone.
    memory = {**TABLE1, "gcn": ModelProfile(3.5, "sr", sm=0.3)}
    jobs = [
        SimJob("O", 0.0, 1, 20.0, tenant="B", model="gcn"),
        SimJob("G", 5.0, 1, 10.0, tenant="A", model="big"),
    ]
    res = _run(jobs, AntMan({"A": 1}, memory=memory, overheads=False))
    g_run = 10.0 / (1 - R)
    o_left = 20.0 - 5.0 - SR_AT_2 / 3.0 * g_run
    assert res["G"][1] == pytest.approx(5.0 + g_run)
    assert res["O"][1] == pytest.approx(5.0 + g_run + o_left)


def test_constant_variant_runs_the_same_pair_at_the_engines_fixed_speeds() -> None:
    # compute="constant": O at SR(2/3.5) x 0.57 beside G, G at 0.966 (no costs).
    jobs = [
        SimJob("O", 0.0, 1, 20.0, tenant="B", model="gcn"),
        SimJob("G", 5.0, 1, 10.0, tenant="A", model="big"),
    ]
    policy = AntMan({"A": 1}, memory=TABLE1, compute="constant", overheads=False)
    res = _run(jobs, policy)
    g_run = 10.0 / 0.966
    assert res["G"][1] == pytest.approx(5.0 + g_run)
    assert res["O"][1] == pytest.approx(5.0 + g_run + 15.0 - 0.57 * SR_AT_2 * g_run)


def test_umem_keeps_the_guarantee_jobs_limit_for_its_whole_life() -> None:
    # scaling="static" (§5.1's UMem): B starts with the 28.5 GB A leaves; at
    # 28.5 / 30 = 0.95 of its memory ResNet's curve gives 0.38 + 0.62 x 0.5 = 0.69,
    # for its whole life. A keeps its 3.5 GB (speed 1; share 1), ends at 43.
    # B: 0.69 (1 - r) x 17 done by 43, then 0.69 alone:
    # ends at 43 + (91.1 - 0.69 (1 - r) 17) / 0.69 = 158.601622.
    jobs = [
        SimJob("A", 0.0, 1, 43.0, tenant="B", model="gcn"),
        SimJob("B", 26.0, 1, 91.1, tenant="A", model="big"),
    ]
    res = _run(jobs, AntMan({"A": 1}, memory=TABLE1, scaling="static"))
    assert res["A"][1] == pytest.approx(43.0)
    b_end = 43.0 + (91.1 - 0.69 * (1 - R) * 17.0) / 0.69
    assert res["B"][1] == pytest.approx(b_end)


def test_a_guest_whose_minimum_does_not_fit_is_evicted_and_waits() -> None:
    # Both 30 GB (ResNet's curve: a 3 GB minimum): G at 2 leaves 2 GB < 3: O is
    # preempted with 2 done, refused beside G, restarts at G's end (2 + 3 / 1:
    # G alone, no residual) with 8 left -> 13.
    memory = {"big": ModelProfile(30.0, "resnet", sm=0.5)}
    jobs = [
        SimJob("O", 0.0, 1, 10.0, tenant="B", model="big"),
        SimJob("G", 2.0, 1, 3.0, tenant="A", model="big"),
    ]
    policy = AntMan({"A": 1}, memory=memory)
    res = _run(jobs, policy)
    assert res["O"] == (0.0, pytest.approx(13.0), 1)
    assert res["G"] == (2.0, pytest.approx(5.0), 0)
    assert policy.stats()["memory_evictions"] == 1


def test_two_guests_beside_a_guarantee_job_share_its_idle_compute() -> None:
    # G (SM 0.6, 8 GB, work 10) from 0. At 1 two opportunistic jobs arrive
    # (8 GB each: memory fits): O1 (SM 0.15) and O2 (SM 0.45). The GPU's load is
    # 0.6 < M; with O1 it is 0.75 < M, so O2 joins too (two slots of four).
    # Their demand 0.6 exceeds the idle 0.4: each at 0.4 / 0.6 = 2/3.
    # O1, O2 (work 4): 2/3 x (11 - 1) ... G ends first at 1 + 9 / (1 - r) =
    # 10.313433; each did 2/3 x 9.313433 = 6.208955 > 4: they end before it,
    # at 1 + 4 / (2/3) = 7. G: 1 + 6 (1 - r) = 6.798077 done by 7, 3.201923
    # left alone: ends at 10.201923.
    memory = {
        "g": ModelProfile(8.0, "vgg", sm=0.6),
        "o1": ModelProfile(8.0, "vgg", sm=0.15),
        "o2": ModelProfile(8.0, "vgg", sm=0.45),
    }
    jobs = [
        SimJob("G", 0.0, 1, 10.0, tenant="A", model="g"),
        SimJob("O1", 1.0, 1, 4.0, tenant="B", model="o1"),
        SimJob("O2", 1.0, 1, 4.0, tenant="B", model="o2"),
    ]
    policy = AntMan({"A": 1}, memory=memory)
    res = _run(jobs, policy)
    assert res["O1"] == (1.0, pytest.approx(7.0), 0)
    assert res["O2"] == (1.0, pytest.approx(7.0), 0)
    assert res["G"][1] == pytest.approx(7.0 + 10.0 - 1.0 - 6.0 * (1 - R))
    assert policy.stats()["stacked_starts"] == 1


def test_a_guest_that_would_load_the_gpu_to_m_waits() -> None:
    # As above with O2 at SM 0.45 and O1 at SM 0.25: with O1 the load is
    # 0.85 >= M, so O2 waits (a retry 10 s later finds the same) until O1 ends:
    # O1 at min(1, 0.4 / 0.25) = 1 ends at 5; O2 starts at 5 (load 0.6), at
    # 0.4 / 0.45 beside G: ends at 5 + 4 x 0.45 / 0.4 = 9.5. G: 1 alone, then
    # 1 - r from 1 to 9.5, the rest alone.
    memory = {
        "g": ModelProfile(8.0, "vgg", sm=0.6),
        "o1": ModelProfile(8.0, "vgg", sm=0.25),
        "o2": ModelProfile(8.0, "vgg", sm=0.45),
    }
    jobs = [
        SimJob("G", 0.0, 1, 10.0, tenant="A", model="g"),
        SimJob("O1", 1.0, 1, 4.0, tenant="B", model="o1"),
        SimJob("O2", 1.0, 1, 4.0, tenant="B", model="o2"),
    ]
    res = _run(jobs, AntMan({"A": 1}, memory=memory, overheads=False))
    assert res["O1"] == (1.0, pytest.approx(5.0), 0)
    assert res["O2"][0] == pytest.approx(5.0)
    assert res["O2"][1] == pytest.approx(9.5)
    assert res["G"][1] == pytest.approx(9.5 + 10.0 - 1.0 - 8.5 * (1 - R))


def test_phases_change_the_guests_share_at_the_hosts_phase_boundaries() -> None:
    # H cycles (by its progress, 60 s = 1 minute each) between SM 0.8 and SM 0
    # (4 GB both): ESPnet's training and decoding, Fig. 12. No residual here.
    # O (SM 0.5) arrives at 1, in H's idle phase: speed 1 on [1, 2), 0.2 / 0.5
    # = 0.4 on [2, 3), 1 on [3, 4); H (work 4) ends at 4; O did 2.4, the 7.6 left
    # alone: ends at 11.6. The policy wakes at 2 and 3 for the boundaries.
    memory = {
        "h": ModelProfile(4.0, "vgg", phases=(Phase(60.0, 4.0, 0.8), Phase(60.0, 4.0, 0.0))),
        "o": ModelProfile(4.0, "vgg", sm=0.5),
    }
    jobs = [
        SimJob("H", 0.0, 1, 4.0, tenant="A", model="h"),
        SimJob("O", 1.0, 1, 10.0, tenant="B", model="o"),
    ]
    res = _run(jobs, AntMan({"A": 1}, memory=memory, guarantee_slowdown=0.0))
    assert res["H"][1] == pytest.approx(4.0)
    assert res["O"] == (1.0, pytest.approx(11.6), 0)


def test_a_demoted_job_runs_beside_the_quota_holder_and_is_upgraded() -> None:
    # Tenant A, quota 2, 2 GPUs. a1 (2 GPUs, 8 GB, SM 0.5, work 10) from 0; a2
    # (1 GPU, SM 0.5, work 20) waits, is demoted just after 5 and shares a1's
    # GPU 0: idle 0.5 covers its 0.5, so a2 at 1 and a1 at 1 - r. a1 ends at
    # 5 + 5 / (1 - r) = 10.174129; a2 did 5.174129 by then, is upgraded in place
    # (quota free) and ends at 5 + 20 = 25 (its speed never changed).
    memory = {"m": ModelProfile(8.0, "vgg", sm=0.5)}
    jobs = [
        SimJob("a1", 0.0, 2, 10.0, tenant="A", model="m"),
        SimJob("a2", 0.0, 1, 20.0, tenant="A", model="m"),
    ]
    policy = AntMan({"A": 2}, memory=memory, demote_after=5.0)
    res = _run(jobs, policy, gpus=2)
    assert res["a1"][1] == pytest.approx(5.0 + 5.0 / (1 - R))
    assert res["a2"] == (pytest.approx(5.0), pytest.approx(25.0), 0)
    stats = policy.stats()
    assert (stats["demotions"], stats["upgrades"]) == (1, 1)


class Audited(AntMan):
    """AntMan that checks the coordinator's rules on the engine's state at every call."""

    def decide(self, view: View) -> Decision:
        guests: dict[tuple[int, int], list[int]] = {}
        host: dict[tuple[int, int], int] = {}
        for i, s in view.running.items():
            for g in s.gpus:
                if s.opportunistic:
                    guests.setdefault(g, []).append(i)
                else:
                    host[g] = i
        for g, on in guests.items():
            assert len(on) <= self.guests_per_gpu
            h = host.get(g)
            taken = self.coordinator.grants.get((h, g), 0.0) if h is not None else 0.0
            held = sum(self.coordinator.grants.get((j, g), 0.0) for j in on)
            assert taken + held <= 32.0 + 1e-9  # granted memory fits the GPU
        for s in view.running.values():
            assert 0.0 < s.factor <= 1.0
            alone = not s.opportunistic and not any(g in guests for g in s.gpus)
            if alone and not view.finished and self.scaling == "dynamic":
                assert s.factor == 1.0  # alone (and told so at its partner's end): full speed
        return super().decide(view)


@settings(max_examples=25, deadline=None)
@given(
    jobs=st.lists(
        st.tuples(
            st.integers(0, 30),
            st.sampled_from([1, 1, 2, 4]),
            st.integers(1, 20),
            st.sampled_from(["A", "B"]),
            st.sampled_from(["vgg16", "resnet50", "alexnet", "mobilenet_v2", "gcn", "espnet"]),
        ),
        min_size=1,
        max_size=25,
    ),
    guests=st.integers(1, 4),
    scaling=st.sampled_from(["dynamic", "static"]),
    demote=st.sampled_from([None, 2.0]),
)
def test_coordinator_rules_hold_on_random_mixes(
    jobs: list[tuple[int, int, int, str, str]], guests: int, scaling: str, demote: float | None
) -> None:
    sim = [
        SimJob(str(k), float(t), g, float(w), tenant=ten, model=m)
        for k, (t, g, w, ten, m) in enumerate(jobs)
    ]
    policy = Audited({"A": 4}, guests_per_gpu=guests, scaling=scaling, demote_after=demote)  # type: ignore[arg-type]
    out = simulate(Workload.of(sim, "h"), ClusterSpec.uniform(2, 4), policy)
    for j, s, e in zip(out.jobs, out.first_start, out.end, strict=True):
        assert j.submit <= s <= e
        assert e - s >= j.work - 1e-9  # no job beats its work
