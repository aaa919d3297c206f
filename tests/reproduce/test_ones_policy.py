"""ONES in the simulator: the engine's speed factor, a hand-checked round, the workload, a shape test."""

from __future__ import annotations

import itertools
import math

import pytest

from scheduling_opt.errors import InvalidInstanceError
from scheduling_opt.reproduce.papers import PAPERS
from scheduling_opt.sim import ClusterSpec, Decision, PolicyError, SimJob, View, Workload, simulate
from scheduling_opt.sim.ones_workload import OnesSpec, generate, job_model
from scheduling_opt.sim.policies.ones.fixed import FixedBatch
from scheduling_opt.sim.policies.ones.policy import Ones, place
from scheduling_opt.sim.registry import make_policy
from scheduling_opt.sim.results import summarize

# ---------------------------------------------------------------- speed factor


class Script:
    """Replays fixed decisions at given times (the engine's contract, nothing else)."""

    name = "script"

    def __init__(self, plan: dict[float, Decision]) -> None:
        self.plan = plan
        self.done: set[float] = set()

    def decide(self, view: View) -> Decision:
        if view.now in self.done or view.now not in self.plan:
            return Decision()
        self.done.add(view.now)
        return self.plan[view.now]


def _one_job(work: float = 10.0, gpus: int = 1, max_gpus: int = 1) -> Workload:
    return Workload.of([SimJob("a", 0.0, gpus, work, min_gpus=1, max_gpus=max_gpus)], "t")


def test_rate_set_with_the_start_scales_the_speed() -> None:
    # 10 units of work at speed 1 x factor 2: done at 5.
    d = Decision(starts=((0, ((0, 1),)),), rate=((0, 2.0),))
    out = simulate(_one_job(), ClusterSpec.uniform(1, 1), Script({0.0: d}))
    assert out.end == (5.0,)


def test_rate_changed_mid_run_keeps_the_work_done() -> None:
    # Speed 1 until t=2 (2 units done), then factor 0.5: 8 units at 0.5 take 16, end 18.
    plan = {
        0.0: Decision(starts=((0, ((0, 1),)),), wake_at=2.0),
        2.0: Decision(rate=((0, 0.5),)),
    }
    out = simulate(_one_job(), ClusterSpec.uniform(1, 1), Script(plan))
    assert out.end == (18.0,)
    assert out.preemptions == (0,)


def test_rate_is_kept_across_a_resize() -> None:
    # Factor 2 on 1 of 2 nominal GPUs: speed 0.5 x 2 = 1; 4 units by t=4.
    # Resized to 2 GPUs at t=4: speed 1 x 2 = 2, the 6 units left take 3: end 7.
    plan = {
        0.0: Decision(starts=((0, ((0, 1),)),), rate=((0, 2.0),), wake_at=4.0),
        4.0: Decision(resize=((0, ((0, 2),)),)),
    }
    out = simulate(_one_job(gpus=2, max_gpus=2), ClusterSpec.uniform(1, 2), Script(plan))
    assert out.end == (7.0,)


@pytest.mark.parametrize("factor", [0.0, -1.0, math.inf, math.nan])
def test_rate_that_is_not_finite_and_positive_is_refused(factor: float) -> None:
    d = Decision(starts=((0, ((0, 1),)),), rate=((0, factor),))
    with pytest.raises(PolicyError, match="speed factor"):
        simulate(_one_job(), ClusterSpec.uniform(1, 1), Script({0.0: d}))


def test_rate_of_a_job_not_yet_submitted_is_refused() -> None:
    w = Workload.of(
        [SimJob("a", 0.0, 1, 10.0), SimJob("b", 5.0, 1, 10.0)],
        "t",
    )
    d = Decision(starts=((0, ((0, 1),)),), rate=((1, 2.0),))
    with pytest.raises(PolicyError, match="not pending or running"):
        simulate(w, ClusterSpec.uniform(1, 1), Script({0.0: d}))


# ---------------------------------------------------------------- a hand-checked round

#: The policy before ONES' system mechanisms: a deployment at every event and
#: 60-s tick, the task's prior for beta, free batch changes.
BEFORE: dict[str, object] = {"update": "event", "progress": "prior", "change_cost": 0.0}


def _x(overhead: float, per_sample: float, comm: float, batch: int, gpus: int) -> float:
    """Samples/s of the analytic model on one server (written out, not the library's)."""
    local = -(-batch // gpus)
    return batch / (overhead + per_sample * local + comm * math.log2(gpus))


@pytest.mark.parametrize("method", ["ones", "exact"])
def test_round_after_warm_up_splits_the_server_two_and_two(method: str) -> None:
    # One 4-GPU server. Job A: ResNet18/CIFAR10 20k (iteration 0.01 + 0.0004 b
    # + 0.01 log2 c s, submitted batch 128 on 1 GPU); job B: BERT/MRPC 3.6k
    # (0.03 + 0.006 b + 0.08 log2 c, batch 32 on 1 GPU). t=0: both in warm-up,
    # one GPU each. t=60 (the tick): A did 60 x 2091.5 samples = 6.27 epochs,
    # B 60 x 144.1 = 2.40 epochs; every epoch end with T = 60 s and
    # sigma = 1/30 gives R' = ceil(2R / 3), so both limits fall to their floor,
    # the submitted batch (128, 32). Predicted epochs to go (prior mean minus
    # done): A 20 - 6.27, B 5.5 - 2.40. Both jobs run and no GPU idles in
    # every candidate, so F differs only in sum_j c_j ||D_j|| beta_j / X_j(c_j).
    w = Workload.of(
        [
            SimJob("a", 0.0, 1, 200.0, model="resnet18/cifar10/20000", min_gpus=1, max_gpus=4),
            SimJob("b", 0.0, 1, 200.0, model="bert/mrpc/3600", min_gpus=1, max_gpus=4),
        ],
        "t",
    )
    xa0, xb0 = _x(0.01, 0.0004, 0.01, 128, 1), _x(0.03, 0.006, 0.08, 32, 1)
    ya = 20_000 * (20.0 - 60 * xa0 / 20_000)
    yb = 3_600 * (5.5 - 60 * xb0 / 3_600)

    def f(ca: int, cb: int) -> float:
        return ca * ya / _x(0.01, 0.0004, 0.01, 128, ca) + cb * yb / _x(0.03, 0.006, 0.08, 32, cb)

    best = min(((ca, 4 - ca) for ca in range(1, 4)), key=lambda p: f(*p))
    assert best == (2, 2)  # 339.4 against 354.5 for (3, 1) and 478 for (1, 3)
    seen: dict[float, dict[int, int]] = {}

    class Spy(Ones):
        def decide(self, view: View) -> Decision:
            d = super().decide(view)
            if view.now in (0.0, 60.0) and view.now not in seen:
                now = {i: sum(g for _, g in s.placement) for i, s in view.running.items()}
                for i, p in (*d.starts, *d.resize):
                    now[i] = sum(g for _, g in p)
                seen[view.now] = now
            return d

    policy = Spy(method=method, generations=20, **BEFORE)  # type: ignore[arg-type]
    simulate(w, ClusterSpec.uniform(1, 4), policy)
    assert seen[0.0] == {0: 1, 1: 1}  # warm-up: one GPU each
    assert seen[60.0] == {0: best[0], 1: best[1]}
    if method == "exact":
        assert policy.proven >= 2
        assert policy.fallbacks == 0


def test_rates_follow_the_throughput_of_the_chosen_batch() -> None:
    # Job A alone on 4 GPUs after warm-up: limit 128, its throughput at 128 is
    # within 1% of the best from 3 GPUs on (2,973 vs 2,991 samples/s), so it
    # gets 3; speed = X(128, 3) / X(128, 1) = 2973.3 / 2091.5 on the engine.
    w = Workload.of(
        [SimJob("a", 0.0, 1, 1000.0, model="resnet18/cifar10/20000", min_gpus=1, max_gpus=4)],
        "t",
    )
    speeds: list[tuple[float, int, float]] = []

    class Spy(Ones):
        def decide(self, view: View) -> Decision:
            for s in view.running.values():
                speeds.append((view.now, sum(g for _, g in s.placement), s.speed))
            return super().decide(view)

    simulate(w, ClusterSpec.uniform(1, 4), Spy(generations=5, **BEFORE))  # type: ignore[arg-type]
    at120 = [s for s in speeds if s[0] == 120.0]
    want = _x(0.01, 0.0004, 0.01, 128, 3) / _x(0.01, 0.0004, 0.01, 128, 1)
    assert at120[0][1] == 3
    assert at120[0][2] == pytest.approx(want, rel=1e-12)


def test_fixed_batch_runs_the_smallest_predicted_utilization_first() -> None:
    # One GPU, two 1-GPU jobs at t=0: MRPC (3.6k x 5.5 prior epochs / 144.1 = 137 s
    # predicted) before ResNet18 on 20k (20 x 20k / 2091.5 = 191 s predicted).
    w = Workload.of(
        [
            SimJob("a", 0.0, 1, 50.0, model="resnet18/cifar10/20000", min_gpus=1, max_gpus=4),
            SimJob("b", 0.0, 1, 30.0, model="bert/mrpc/3600", min_gpus=1, max_gpus=4),
        ],
        "t",
    )
    out = simulate(w, ClusterSpec.uniform(1, 1), FixedBatch())
    assert out.first_start == (30.0, 0.0)
    assert out.end == (80.0, 30.0)


def test_place_prefers_one_server_then_the_job_own_servers() -> None:
    from scheduling_opt.sim.cluster import FreeMap

    plan = FreeMap([4, 4, 4])
    plan.take(((0, 3), (1, 1), (2, 2)))
    assert place(plan, 2) == ((2, 2),)  # the tightest server with room
    assert place(plan, 3, prefer=((1, 1),)) == ((1, 3),)
    assert plan.free == [1, 0, 0]


# ---------------------------------------------------------------- workload


def test_workload_follows_the_draw_rule() -> None:
    w = generate(OnesSpec(jobs=400), seed=0)
    assert len(w.jobs) == 400
    assert w.jobs == generate(OnesSpec(jobs=400), seed=0).jobs
    gaps = [b.submit - a.submit for a, b in itertools.pairwise(w.jobs)]
    assert 25.0 < sum(gaps) / len(gaps) < 35.0  # Poisson, mean 30 s
    assert {j.gpus for j in w.jobs} <= {1, 2, 4, 8}
    assert sum(j.gpus == 1 for j in w.jobs) > 0.85 * 400  # P_MIX2: 93% one-GPU jobs
    for j in w.jobs[:50]:
        m = job_model(j)
        epochs = j.work * m.reference / m.epoch_size
        assert m.task.epochs[0] - 1e-6 <= epochs <= m.task.epochs[1] + 1e-6


def test_unknown_model_is_a_clear_error() -> None:
    with pytest.raises(InvalidInstanceError, match="model"):
        job_model(SimJob("x", 0.0, 1, 1.0, model="gpt/web/1"))
    with pytest.raises(InvalidInstanceError, match="ones: unknown parameter 'bogus'"):
        make_policy("ones", _one_job(), ClusterSpec.uniform(1, 1), {"bogus": 1})


def test_paper_set_drops_the_first_five_percent_on_64_gpus() -> None:
    configs = PAPERS["ones"].configs(quick=False)
    assert {c.skip for c in configs} == {0.05}
    assert {(c.servers, c.gpus_per_server) for c in configs} == {(16, 4)}
    assert {c.policy for c in configs} == {"ones", "fixed-batch", "tiresias"}
    # ones-exact runs only at the arrival rate the load target judged (and not in --quick).
    judged = PAPERS["ones"].configs(quick=False, judged={"ones-400": 3.5})
    exact = {(c.policy, c.workload.density) for c in judged if c.policy == "ones-exact"}
    assert exact == {("ones-exact", 3.5)}
    assert not [c for c in PAPERS["ones"].configs(quick=True) if c.policy == "ones-exact"]
    # The policy without ONES' system mechanisms: at the judged rate, in full mode only;
    # the idle-GPU fill everywhere, --quick included.
    before = {c.workload.density for c in judged if c.label == "ones-before"}
    assert before == {3.5}
    quick = PAPERS["ones"].configs(quick=True)
    assert not [c for c in quick if c.label == "ones-before"]
    fill = [c for c in quick if c.label == "ones-fill"]
    assert fill
    assert {dict(c.policy_params)["update"] for c in fill} == {"epoch-fill"}


# ---------------------------------------------------------------- shape


@pytest.mark.slow
def test_generated_ones_mean_jct_below_fixed_batch_and_tiresias() -> None:
    # 60 jobs of the §4.2 draw on 16 x 4 GPUs; the first 5% dropped.
    w = generate(OnesSpec(jobs=60), seed=0)
    c = ClusterSpec.uniform(16, 4)
    jct = {}
    for name, params in (
        ("ones", {}),
        ("fixed-batch", {}),
        ("tiresias", {"thresholds": (3250.0,)}),
    ):
        out = simulate(w, c, make_policy(name, w, c, params))
        jct[name] = summarize(out, skip=0.05)["jct_mean"]
    assert jct["ones"] < jct["fixed-batch"]
    assert jct["ones"] < jct["tiresias"]


def test_same_workload_and_seed_give_the_same_schedule() -> None:
    w = generate(OnesSpec(jobs=15), seed=3)
    c = ClusterSpec.uniform(4, 4)
    first = simulate(w, c, Ones(generations=3, seed=7))
    again = simulate(w, c, Ones(generations=3, seed=7))
    assert (first.first_start, first.end) == (again.first_start, again.end)


def test_ones_exact_gives_the_same_schedule_twice_and_counts_its_stops() -> None:
    # The exact step is bounded by CP-SAT's work, not the clock: two runs
    # make the same decisions, and no call is stopped by the clock guard.
    w = generate(OnesSpec(jobs=15), seed=3)
    c = ClusterSpec.uniform(4, 4)
    policies = [Ones(method="exact") for _ in range(2)]
    first, again = (simulate(w, c, p) for p in policies)
    assert (first.first_start, first.end, first.gpu_time) == (
        again.first_start,
        again.end,
        again.gpu_time,
    )
    stats = policies[0].stats()
    assert stats["clock_limited"] == 0
    assert stats["proven"] + stats["fallbacks"] == stats["calls"]
    assert stats["work_limited"] == stats["fallbacks"]
    # A budget too small for any CP-SAT proof: the calls that need CP-SAT are
    # stopped by it, labelled, and the run is still the same twice.
    tiny = [Ones(method="exact", work_limit=1e-9) for _ in range(2)]
    a, b = (simulate(w, c, p) for p in tiny)
    assert (a.first_start, a.end) == (b.first_start, b.end)
    assert tiny[0].stats()["clock_limited"] == 0
    assert tiny[0].stats()["work_limited"] == tiny[0].stats()["fallbacks"] > 0
