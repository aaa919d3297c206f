"""Aryl as a system: server groups kept across calls, heterogeneous training, its scenarios.

Hand-computed schedules (times, placements and preemptions written out in
each test) for §5.3's base and flexible server groups (a flexible worker
placed on an on-loan server of its group, a job kept in its group across
calls, the reclaim that then preempts nobody), a heterogeneous job at 70%
(Appendix A) and the scenarios' jobs (§7.1's Ideal, §7.2's imperfect
scaling).
"""

from __future__ import annotations

import pytest

from scheduling_opt.sim import ClusterSpec, Decision, SimJob, View, Workload, simulate
from scheduling_opt.sim.cluster import ServerSpec
from scheduling_opt.sim.policies.aryl.groups import ServerGroups
from scheduling_opt.sim.policies.aryl.load import LoadCurve
from scheduling_opt.sim.policies.aryl.policy import ArylPolicy
from scheduling_opt.sim.policies.aryl.scenario import efficiency, with_scenario
from scheduling_opt.sim.registry import make_policy, run_workload
from scheduling_opt.sim.sweep import RunConfig, WorkloadSpec, run_config
from scheduling_opt.sim.synthetic import SyntheticSpec
from tests.sim.helpers import by_id


def _cluster(training: list[int], inference: int, gpus: int, compute: float = 1.0) -> ClusterSpec:
    servers = [ServerSpec(g) for g in training]
    servers += [ServerSpec(gpus, "T4", compute, False) for _ in range(inference)]
    return ClusterSpec(tuple(servers))


class Spy(ArylPolicy):
    """Aryl recording every decision with its time."""

    def __init__(self, **kw: object) -> None:
        super().__init__(**kw)  # type: ignore[arg-type]
        self.seen: list[tuple[float, Decision]] = []
        self.groups_at: dict[float, dict[int, str]] = {}

    def decide(self, view: View) -> Decision:
        d = super().decide(view)
        self.seen.append((view.now, d))
        if self.jobs.groups is not None:
            self.groups_at[view.now] = dict(self.jobs.groups.group)
        return d


# ---------------------------------------------------------------- server groups (§5.3, Table 6)

#: Server 0: a 1-GPU training server no job fits; servers 1 and 2: on-loan, 4 GPUs each.
#: Inference needs nothing until t = 20, then one server (orchestrator every 10).
CURVE = LoadCurve((0.0, 20.0), (0.0, 1.0), "servers")
JOBS = [
    SimJob("a", 0.0, 2, 100.0, min_gpus=2, max_gpus=4),
    SimJob("b", 10.0, 2, 100.0, min_gpus=2, max_gpus=4),
]


def test_a_flexible_worker_goes_to_an_on_loan_server_of_its_group_kept_across_calls() -> None:
    # t = 0: a's base demand (2) by the base tiers: servers 1 and 2 tie at 4
    # free, the first: server 1 joins the base group. Phase two's knapsack
    # gives a its maximum (4): 2 flexible workers by the flexible tiers (free
    # or flexible on-loan servers): server 1 is base, so server 2, which joins
    # the flexible group. a = {1: 2, 2: 2}, speed 2.
    # t = 10 (a later call): b's base by the base tiers: server 1 (base, 2
    # free); b's flexible workers: the flexible group kept since t = 0, server
    # 2. b = {1: 2, 2: 2}.
    # t = 20: one server back. Both servers can go without a preemption (a
    # and b, at 4 with base 2, can lose 2 anywhere), and the reclaim solver
    # breaks ties by the order of the servers, which lists the flexible group
    # first (§5.3: the flexible group is released first): server 2 goes; a
    # and b scale in to {1: 2} (speed 1).
    # a: 40 done by 20, 60 left at speed 1: ends 80. b: 20 done by 20, 60
    # more by 80 (20 left); at 80 b grows into a's 2 GPUs on server 1 (its
    # flexible tiers have no free or flexible server: the base one): speed 2,
    # ends 90.
    policy = Spy(curve=CURVE, interval=10.0)
    out = simulate(Workload.of(JOBS, "groups"), _cluster([1], 2, 4), policy)
    at = {t: d for t, d in policy.seen if d.starts}
    assert at[0.0].starts == ((0, ((1, 2), (2, 2))),)
    assert at[10.0].starts == ((1, ((1, 2), (2, 2))),)
    assert policy.groups_at[10.0] == {1: "base", 2: "flexible"}
    reclaim = next(d for t, d in policy.seen if t == 20.0 and d.resize)
    assert reclaim.preempt == ()
    assert sorted(reclaim.resize) == [(0, ((1, 2),)), (1, ((1, 2),))]
    rows = by_id(out)
    assert rows["a"] == (0.0, 80.0, 0)
    assert rows["b"] == (10.0, 90.0, 0)
    assert policy.stats()["reclaim_preemptions"] == 0.0


def test_without_groups_the_same_reclaim_preempts_a_job() -> None:
    # Table 6's naive BFD: elastic jobs try training servers first (server 0
    # fits none), then the on-loan ones; a growth takes its own servers first.
    # t = 0: a's base on server 1 (first of two at 4 free), grown on server 1:
    # a = {1: 4}. t = 10: b = {2: 4}. t = 20: either server preempts its job
    # (4 workers lost, slack 2); Algorithm 1 (N_R = 1: fewest preempted, then
    # least collateral, then the first) returns server 1: a is preempted, 40
    # done at speed 2, 60 left. The same instant: a's base (2) does not fit,
    # so b gives back its 2 flexible GPUs (phase one's room) and a restarts on
    # server 2: both at 2 GPUs, speed 1. a ends 20 + 60 = 80; b, 20 done by
    # 20 and 60 more by 80, grows to 4 then: 20 left at speed 2, ends 90.
    # The same times as with the groups, and one preemption more.
    policy = Spy(curve=CURVE, interval=10.0, groups=False)
    out = simulate(Workload.of(JOBS, "no-groups"), _cluster([1], 2, 4), policy)
    at = {t: d for t, d in policy.seen if d.starts}
    assert at[0.0].starts == ((0, ((1, 4),)),)
    assert at[10.0].starts == ((1, ((2, 4),)),)
    rows = by_id(out)
    assert rows["a"] == (0.0, 80.0, 1)
    assert rows["b"] == (10.0, 90.0, 0)
    assert policy.stats()["reclaim_preemptions"] == 1.0


#: Two elastic jobs at their base demand and an inelastic training-only job, all
#: at t = 0 (equal durations: SJF keeps file order a, b, c).
AT_BASE = [
    SimJob("a", 0.0, 2, 100.0, min_gpus=2, max_gpus=4),
    SimJob("b", 0.0, 2, 100.0, min_gpus=2, max_gpus=4),
    SimJob("c", 0.0, 2, 100.0),
]


@pytest.mark.parametrize("groups", [True, False])
def test_groups_put_base_demand_on_loan_where_a_reclaim_preempts_it(groups: bool) -> None:
    # Server 0: training, 4 GPUs; servers 1 and 2: on-loan, 2 GPUs each; one
    # server back at t = 20. What Table 6's comparison turns on when elastic
    # jobs run at their base demand (no flexible workers to give back).
    # With groups (§5.3) a and b go to the on-loan pool first: a on server 1
    # (the first of two tied new servers), b on server 2; c (training only) on
    # server 0. Phase two has no free on-loan GPU: a and b stay at base. At
    # t = 20 either on-loan server preempts its job (Algorithm 1's tie: the
    # first, server 1): a is preempted, and restarts on server 0's 2 free GPUs
    # at once (20 done, 80 left): it ends at 100, as b and c do.
    # Without groups (Table 6's naive BFD) a and b go to training first:
    # server 0 holds both at base; c fits nowhere it may run and waits; the
    # on-loan servers stay empty, so the reclaim preempts nobody. a and b end
    # at 100, c runs from 100 to 200.
    policy = Spy(curve=CURVE, interval=10.0, groups=groups, durations="oracle", any_gpu_share=0.0)
    out = simulate(Workload.of(AT_BASE, "at-base"), _cluster([4], 2, 2), policy)
    first = policy.seen[0][1].starts
    rows = by_id(out)
    if groups:
        assert first == ((0, ((1, 2),)), (1, ((2, 2),)), (2, ((0, 2),)))
        assert policy.stats()["reclaim_preemptions"] == 1.0
        assert rows["a"][1:] == (pytest.approx(100.0), 1)
        assert rows["c"] == (0.0, 100.0, 0)
    else:
        assert first == ((0, ((0, 2),)), (1, ((0, 2),)))
        assert policy.stats()["reclaim_preemptions"] == 0.0
        assert rows["a"] == (0.0, 100.0, 0)
        assert rows["c"] == (100.0, 200.0, 0)


def test_a_shrink_gives_back_flexible_workers_first() -> None:
    # A job with 2 base GPUs on server 4 and 2 flexible on server 5: trimmed to
    # 3 it gives back one flexible GPU (plain trim, fewest first, would cut
    # server 5 too, but here the rule is the group, not the count: with base
    # 1 on 4 and flexible 3 on 5, the flexible server still goes first).
    g = ServerGroups()
    g.flex[7] = {5: 3}
    assert g.trim(7, ((4, 1), (5, 3)), 2) == ((4, 1), (5, 1))
    assert g.flex[7] == {5: 1}
    # A reclaimed base server turns flexible GPUs into base ones: the job kept
    # 2 GPUs on server 5, its base demand is 2, so nothing is flexible.
    g.settle(7, ((5, 2),), 2)
    assert 7 not in g.flex


# ---------------------------------------------------------------- heterogeneous training (§6, App. A)


@pytest.mark.parametrize(("compute", "end"), [(1.0, 101.0), (0.25, 1.0 + 70.0 / 0.525)])
def test_a_heterogeneous_job_runs_across_pools_at_70_percent(compute: float, end: float) -> None:
    # Server 0: 8 training GPUs; server 1: an on-loan server of 4 GPUs at
    # `compute`. a (4 GPUs, submitted first) takes half of server 0 until 100
    # (training servers first). h (6 GPUs, at t = 1) fits neither pool: 4
    # training GPUs free, 4 on loan. §6 places it last across both, in
    # workers of gcd(6, 8, 4) = 2 GPUs, training servers first: {0: 4, 1: 2}.
    # Its speed is 70% of its GPUs' summed compute over its 6 GPUs:
    # - normalized on-loan GPUs (compute 1): 0.7 x 6 / 6 = 0.7, work 70: 1 + 100;
    # - raw T4s (compute 0.25): 0.7 x (4 + 2 x 0.25) / 6 = 0.525: 1 + 70 / 0.525
    #   (the engine's slowest-GPU speed 0.25 times the factor 2.1 the policy sets).
    jobs = [SimJob("a", 0.0, 4, 100.0), SimJob("h", 1.0, 6, 70.0)]
    idle = LoadCurve((0.0,), (0.0,), "servers")
    policy = Spy(curve=idle, hetero_share=1.0, hetero_efficiency=0.7)
    out = simulate(Workload.of(jobs, "hetero"), _cluster([8], 1, 4, compute), policy)
    at = {t: d for t, d in policy.seen if d.starts}
    assert at[0.0].starts == ((0, ((0, 4),)),)
    assert at[1.0].starts == ((1, ((0, 4), (1, 2))),)
    assert at[1.0].rate == ((1, pytest.approx(0.7 * (4 + 2 * compute) / 6 / compute)),)
    assert by_id(out)["h"] == (1.0, pytest.approx(end), 0)


def test_without_heterogeneous_training_the_job_waits() -> None:
    # The Basic scenario: h may run on one pool at a time; it waits for a and
    # runs on server 0 from 100 at speed 1: ends 170.
    jobs = [SimJob("a", 0.0, 4, 100.0), SimJob("h", 1.0, 6, 70.0)]
    idle = LoadCurve((0.0,), (0.0,), "servers")
    out = simulate(Workload.of(jobs, "basic"), _cluster([8], 1, 4), Spy(curve=idle))
    assert by_id(out)["h"] == (100.0, 170.0, 0)


# ---------------------------------------------------------------- the scenarios' jobs (§7.1, §7.2)


def test_the_ideal_scenario_makes_every_job_elastic_half_to_twice() -> None:
    w = Workload.of(
        [SimJob("1", 0.0, 1, 5.0), SimJob("2", 0.0, 3, 5.0), SimJob("3", 0.0, 40, 5.0)], "t"
    )
    ideal = run_workload("aryl-ideal", w, {})
    # ceil(g / 2) .. min(64, 2 g): 1..2, 2..6, 20..64; linear (no curve).
    assert [(j.min_gpus, j.max_gpus, j.scaling) for j in ideal.jobs] == [
        (1, 2, ()),
        (2, 6, ()),
        (20, 64, ()),
    ]
    assert run_workload("aryl", w, {}) is w  # the Basic scenario leaves the jobs alone


def test_imperfect_scaling_loses_ten_percent_per_step_past_the_midpoint() -> None:
    # Range 4..16 (nominal 8): midpoint 10. A step is the base demand (4 GPUs):
    # at 14, one step past it, 10% lost; at 16, 1.5 steps, 15%. With a step of
    # one GPU: 16 is 6 steps past, 60% lost.
    assert efficiency(10, 4, 16, 0.1, "base") == 1.0
    assert efficiency(14, 4, 16, 0.1, "base") == pytest.approx(0.9)
    assert efficiency(16, 4, 16, 0.1, "base") == pytest.approx(0.85)
    assert efficiency(16, 4, 16, 0.1, "gpu") == pytest.approx(0.4)


def test_an_imperfectly_scaling_job_in_the_loop() -> None:
    # e: 2..8 GPUs, nominal 4, work 17, alone on 8 GPUs. Aryl's knapsack
    # (linear, §5) grows it to 8. Linear: speed 2, ends 8.5. With §7.2's loss
    # (midpoint 5, a step = 2 GPUs): at 8, 1.5 steps past it: 85% of 8, speed
    # 6.8 / 4 = 1.7, ends 10.
    w = Workload.of([SimJob("e", 0.0, 4, 17.0, min_gpus=2, max_gpus=8)], "t")
    cluster = _cluster([8], 1, 2)
    idle = LoadCurve((0.0,), (1.0,), "fraction")
    for loss, end in ((0.0, 8.5), (0.1, 10.0)):
        jobs = with_scenario(w, {"scaling_loss": loss, "scaling_step": "base"})
        out = simulate(jobs, cluster, ArylPolicy(curve=idle))
        assert out.end == (pytest.approx(end),)


def test_a_run_config_applies_the_scenario() -> None:
    spec = WorkloadSpec("synthetic", synthetic=SyntheticSpec(jobs=20))
    out = run_config(
        RunConfig("aryl-ideal", spec, servers=2, policy_params=(("inference_servers", 2),))
    ).output
    assert all(j.min_gpus < j.max_gpus for j in out.jobs)  # 1 GPU: 1..2


def test_the_variants_fix_their_scenarios() -> None:
    w = Workload.of([SimJob("0", 0.0, 1, 1.0)], "t")
    cluster = _cluster([8], 1, 2)
    p = make_policy("aryl-advanced", w, cluster)
    assert isinstance(p, ArylPolicy)
    assert (p.jobs.hetero_share, p.jobs.hetero_efficiency) == (0.1, 0.7)
    p = make_policy("aryl-ideal", w, cluster)
    assert isinstance(p, ArylPolicy)
    assert (p.jobs.hetero_share, p.jobs.hetero_efficiency) == (1.0, 1.0)
    p = make_policy("aryl-no-groups", w, cluster)
    assert isinstance(p, ArylPolicy)
    assert p.jobs.groups is None


# ---------------------------------------------------------------- the claims of ``reproduce aryl``


def test_every_aryl_claim_names_runs_of_the_set() -> None:
    from scheduling_opt.reproduce.papers import PAPERS

    paper = PAPERS["aryl"]
    names = {r.name for r in paper.policies}
    for c in paper.claims:
        assert c.policy in names, c.what
        assert c.baseline in names or c.baseline == "-", c.what
    # Table 6 and Fig. 10 compare one policy with itself under one parameter.
    params = {r.name: (r.policy, dict(r.params)) for r in paper.policies}
    assert params["aryl-ideal-no-groups"] == ("aryl-ideal", {"groups": False})
    assert params["aryl-advanced-no-groups"] == ("aryl-advanced", {"groups": False})
    assert params["aryl-imperfect"] == ("aryl", {"scaling_loss": 0.1})
    assert params["aryl-ideal-imperfect"] == ("aryl-ideal", {"scaling_loss": 0.1})


def test_quick_aryl_runs_the_cheap_system_runs_at_the_judged_load_only() -> None:
    from scheduling_opt.reproduce.papers import PAPERS

    paper = PAPERS["aryl"]
    judged = paper.configs(quick=True, judged={"excerpt": 1.6})
    at = {(c.label or c.policy) for c in judged if c.workload.density == 1.6}
    elsewhere = {(c.label or c.policy) for c in judged if c.workload.density != 1.6}
    assert {"aryl-no-groups", "aryl-advanced", "aryl-imperfect"} <= at
    assert not {"aryl-no-groups", "aryl-advanced", "aryl-imperfect"} & elsewhere
    assert not {"aryl-ideal", "aryl-ideal-no-groups", "aryl-ideal-imperfect"} & (at | elsewhere)
    # The full mode runs them all (quick=False leaves a run out of --quick only).
    runs = {r.name: r for r in paper.policies}
    for name in ("aryl-ideal", "aryl-ideal-no-groups", "aryl-ideal-imperfect"):
        assert not runs[name].quick
        assert not runs[name].everywhere
