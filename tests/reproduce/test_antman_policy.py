"""AntMan in the simulator under ``compute="constant"``: the model before the coordinator.

The engine's fixed pair (EngineParams' defaults, sim/sharing.py): on a shared GPU the
opportunistic job runs at 1 - 0.43 = 0.57, the guarantee job at 1 - 0.034 = 0.966; one
opportunistic job per GPU; no scaling costs (:data:`LEGACY`, the variant's settings).
Upgrade, opportunistic eviction, sharing invariants, Fig. 13's shape. Times in minutes;
the policy's utilization window is 10 s = 1/6. The coordinator's model has its own
hand-computed schedules (test_antman_runtime.py).
"""

from __future__ import annotations

import pytest

from scheduling_opt.reproduce.papers import PAPERS
from scheduling_opt.sim import ClusterSpec, EngineParams, SimJob, Workload, simulate, summarize
from scheduling_opt.sim.policies.antman.policy import WARM, AntMan, utilization
from scheduling_opt.sim.protocol import Decision, View
from scheduling_opt.sim.sweep import RunConfig, run_config
from tests.sim.helpers import by_id

OPP, HOST = 0.57, 0.966
#: The model before the local coordinator: the fixed pair, no scaling costs, no demotion.
LEGACY: dict[str, object] = {"compute": "constant", "overheads": False, "demote_after": None}
#: Table 1's ResNet-50 (30 GB at batch 360): nothing but 2 GB is left beside it.
BIG = {"big": (30.0, "resnet")}


def _run(jobs: list[SimJob], policy: AntMan, gpus: int = 1) -> dict:
    out = simulate(Workload.of(jobs, "t"), ClusterSpec.uniform(1, gpus), policy)
    return {"out": out, **by_id(out)}


def test_demoted_job_is_upgraded_when_its_quota_frees() -> None:
    # Tenant A, quota 2, one server of 2 GPUs, demotion after 5 minutes.
    # a1 (2 GPUs, work 10) launches at 0 and takes the whole quota. a2 (1 GPU,
    # work 20) waits; just after t=5 it is demoted and shares a1's GPU (load
    # 0.5 < M): a1 then at 0.966, a2 at 0.57.
    # a1: 5 done at 5, 5 left / 0.966 -> ends at 5 + 5.17598 = 10.17598.
    # a2: 0.57 x 5.17598 = 2.95031 done then; a1's end frees the quota and
    # a2's GPU: a2 is upgraded in place, the 17.04969 left at speed 1 -> ends
    # at 27.22567. a3 (2 GPUs, work 1, arrives at 23) finds 1 GPU of quota
    # left (a2, now guarantee, holds 1): it waits for a2's end (4.2 minutes,
    # under the demotion limit) -> 27.22567 to 28.22567. Had a2 stayed
    # opportunistic, a3 would have launched at 23.
    assert utilization("a1") == WARM  # a1's GPUs are under M (the hash rule)
    jobs = [
        SimJob("a1", 0.0, 2, 10.0, tenant="A"),
        SimJob("a2", 0.0, 1, 20.0, tenant="A"),
        SimJob("a3", 23.0, 2, 1.0, tenant="A"),
    ]
    policy = AntMan({"A": 2}, **{**LEGACY, "demote_after": 5.0})  # type: ignore[arg-type]
    res = _run(jobs, policy, gpus=2)
    a1_end = 5.0 + 5.0 / HOST
    a2_end = a1_end + (20.0 - OPP * (a1_end - 5.0))
    assert res["a1"] == (0.0, pytest.approx(a1_end), 0)
    assert res["a2"][0] == pytest.approx(5.0)
    assert res["a2"][1] == pytest.approx(a2_end)
    assert res["a3"][0] == pytest.approx(a2_end)
    assert res["a3"][1] == pytest.approx(a2_end + 1.0)
    assert round(a2_end, 5) == 27.22567
    stats = policy.stats()
    assert (stats["demotions"], stats["upgrades"], stats["memory_evictions"]) == (1, 1, 0)


def test_opportunistic_job_is_evicted_when_a_guarantee_job_needs_its_memory() -> None:
    # One GPU. b1 (tenant B, no quota: opportunistic, work 10, 30 GB) starts
    # alone at 0. a1 (tenant A, quota 1, work 3, 30 GB) arrives at 2 and
    # launches on the GPU (opportunistic jobs never block a guarantee job);
    # 2 GB left < b1's persistent 3 GB (10% of its peak): b1 is preempted at 2
    # with 2 done. a1 runs alone 2 -> 5; b1 is refused beside it, restarts at 5
    # with 8 left -> 13.
    jobs = [
        SimJob("b1", 0.0, 1, 10.0, tenant="B", model="big"),
        SimJob("a1", 2.0, 1, 3.0, tenant="A", model="big"),
    ]
    policy = AntMan({"A": 1}, memory=BIG, **LEGACY)  # type: ignore[arg-type]
    res = _run(jobs, policy)
    assert res["b1"] == (0.0, pytest.approx(13.0), 1)
    assert res["a1"] == (2.0, pytest.approx(5.0), 0)
    assert policy.stats()["memory_evictions"] == 1


def test_opportunistic_job_that_fits_keeps_running_beside_the_guarantee_job() -> None:
    # The same jobs with 8 GB models (24 GB left): b1 is not evicted, it
    # shares from 2 at 0.57 and a1 runs at 0.966: a1 ends at 2 + 3 / 0.966 =
    # 5.10559; b1 did 2 + 0.57 x 3.10559 = 3.77019, the rest alone -> 11.33540.
    jobs = [SimJob("b1", 0.0, 1, 10.0, tenant="B"), SimJob("a1", 2.0, 1, 3.0, tenant="A")]
    res = _run(jobs, AntMan({"A": 1}, **LEGACY))  # type: ignore[arg-type]
    a1_end = 2.0 + 3.0 / HOST
    assert res["a1"] == (2.0, pytest.approx(a1_end), 0)
    b1_left = 10.0 - 2.0 - OPP * (a1_end - 2.0)
    assert res["b1"] == (0.0, pytest.approx(a1_end + b1_left), 0)
    assert round(res["b1"][1], 5) == 11.3354


class Checked(AntMan):
    """AntMan that checks the engine's sharing invariants at every call."""

    def __init__(self, quotas: dict[str, int]) -> None:
        super().__init__(quotas, **LEGACY)  # type: ignore[arg-type]
        self.calls = 0
        self.shared_seen = 0

    def decide(self, view: View) -> Decision:
        self.calls += 1
        slot: dict[tuple[bool, tuple[int, int]], int] = {}
        used: dict[str, int] = {}
        for i, st in view.running.items():
            assert len(st.gpus) == st.job.gpus == sum(g for _, g in st.placement)
            for g in st.gpus:
                key = (st.opportunistic, g)
                assert key not in slot, f"two jobs in one slot of GPU {g}"
                slot[key] = i
            if not st.opportunistic:
                tenant = st.job.tenant or ""
                used[tenant] = used.get(tenant, 0) + st.job.gpus
        for (opp, _g), i in slot.items():
            st = view.running[i]
            assert st.shared == any((not opp, h) in slot for h in st.gpus)
        for st in view.running.values():
            base = view.speed(st.job, st.placement) * st.factor
            slow = (OPP if st.opportunistic else HOST) if st.shared else 1.0
            assert st.speed == pytest.approx(base * slow)
            self.shared_seen += st.shared
        for tenant, n in used.items():
            assert n <= self.quotas.get(tenant, 0), f"tenant {tenant} over its quota"
        free = list(view.share_free)
        for (opp, (s, _)), _i in slot.items():
            if opp:
                free[s] += 1
        assert free == [8] * len(free)  # opportunistic slots: free + held = GPUs
        return super().decide(view)


def test_sharing_invariants_hold_on_a_synthetic_fig13_mix() -> None:
    w = PAPERS["antman"].quick_spec.load(1)  # type: ignore[union-attr]
    jobs = w.jobs[:150]
    policy = Checked({"vc0": 64})
    out = simulate(Workload.of(jobs, "mix"), ClusterSpec.uniform(8, 8), policy)
    assert policy.calls > 100
    assert policy.shared_seen > 0
    assert all(e >= s for s, e in zip(out.first_start, out.end, strict=True))
    m = summarize(out)
    assert m["jobs"] == 150


def test_legacy_settings_name_the_variant_in_the_paper_set() -> None:
    # The reproduction's named variant runs with exactly these settings.
    variant = next(p for p in PAPERS["antman"].policies if p.name == "antman-constants")
    assert {k: v for k, v in variant.params if k != "quotas"} == LEGACY


def test_antman_is_deterministic() -> None:
    spec = PAPERS["antman"].quick_spec
    cfg = RunConfig(
        "antman",
        spec,  # type: ignore[arg-type]
        servers=8,
        gpus_per_server=8,
        policy_params=(("quotas", (("vc0", 64),)),),
    )
    a, b = run_config(cfg), run_config(cfg)
    assert a.output.end == b.output.end


@pytest.mark.slow
def test_fig13_quick_mix_antman_avg_jct_below_yarn_cs_over_the_seeds() -> None:
    # The direction of Fig. 13a's average JCT on the --quick mix at its load
    # (1.25 of the 64 GPUs), averaged over its seeds as the report does.
    names = ("antman", "antman-constants", "yarn-cs")
    configs = [c for c in PAPERS["antman"].configs(quick=True) if c.name in names]
    jct: dict[str, list[float]] = {}
    for c in configs:
        jct.setdefault(c.name, []).append(run_config(c).metrics["jct_mean"])
    assert [len(jct[n]) for n in names] == [PAPERS["antman"].seeds] * 3
    assert sum(jct["antman"]) < sum(jct["yarn-cs"])
    assert sum(jct["antman-constants"]) < sum(jct["yarn-cs"])


def test_engine_defaults_are_the_papers_measurements() -> None:
    # §5.1: ResNet-50 "maintains 57% performance"; ESPnet 20.1 -> 20.8 minutes.
    p = EngineParams()
    assert 1 - p.share_slowdown == pytest.approx(0.57)
    assert 20.1 / (1 - p.host_slowdown) == pytest.approx(20.8, abs=0.01)
