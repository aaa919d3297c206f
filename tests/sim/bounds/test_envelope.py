"""The speed envelope against the engine: no run ever leaves the relaxation (issue 42).

Every bound rests on two claims about each covered run, at every instant:
each running job's speed is at most its top speed R_j, and the GPU area
rates ``a_j x speed_j`` of the running jobs sum to at most the pooled
capacity Theta. :class:`Watch` checks both after every change the engine
makes to the running jobs (a decision applied, a completion, a capacity
change), for the policies whose speeds are the hardest: GPU sharing
(AntMan, Gandiva's packing), batch-model speeds (ONES), the placement
table's spreads (Chronus), elastic sizes (EDL, Aryl with lent servers).
"""

from __future__ import annotations

from typing import Any

import pytest

from scheduling_opt.errors import InvalidInstanceError
from scheduling_opt.reproduce.papers.aryl import ARYL_ELASTIC
from scheduling_opt.reproduce.workloads import ElasticRule
from scheduling_opt.sim import ClusterSpec, EngineParams, SimJob, Workload, simulate, summarize
from scheduling_opt.sim.bounds import envelope_of, offline_bounds, relax
from scheduling_opt.sim.bounds.envelope import Relaxation, gpu_throughput, spread_ratio
from scheduling_opt.sim.cluster import ServerSpec
from scheduling_opt.sim.live import ClusterState
from scheduling_opt.sim.ones_workload import OnesSpec, generate
from scheduling_opt.sim.policies.antman.policy import MEMORY, split_speed
from scheduling_opt.sim.registry import make_policy
from scheduling_opt.sim.speed import SpeedModel, bundled_table
from scheduling_opt.sim.workload import bundled

TOL = 1e-9


class Watch:
    """Checks the relaxation's two constraints after every change of the running jobs."""

    def __init__(self, rel: Relaxation) -> None:
        self.rel = rel
        self.checks = 0
        self.peak = 0.0

    def check(self, state: ClusterState) -> None:
        total = 0.0
        for st in state.running.values():
            i = st.index
            assert st.speed <= self.rel.speed[i] * (1 + TOL), (st.job.id, st.speed)
            total += st.speed * self.rel.area[i] / self.rel.work[i]
        assert total <= self.rel.capacity * (1 + TOL), total
        self.peak = max(self.peak, total / self.rel.gpus)  # in GPUs' worth of speed-1 work
        self.checks += 1


@pytest.fixture
def watched(monkeypatch: pytest.MonkeyPatch) -> list[Watch]:
    """Wrap ClusterState's changing methods so the current :class:`Watch` sees each change."""
    current: list[Watch] = []
    for name in ("apply", "complete", "set_capacity"):
        original = getattr(ClusterState, name)

        def wrapped(self: ClusterState, *args: Any, _f: Any = original) -> None:
            _f(self, *args)
            if current:
                current[-1].check(self)

        monkeypatch.setattr(ClusterState, name, wrapped)
    return current


def run_watched(
    current: list[Watch],
    w: Workload,
    c: ClusterSpec,
    policy: str,
    params: dict[str, Any] | None = None,
    *,
    table: bool = False,
    engine: EngineParams | None = None,
) -> tuple[Watch, dict[str, float]]:
    env = envelope_of([(policy, params or {})], placement_table=table)
    watch = Watch(relax(w, c, env))
    current.append(watch)
    speed = SpeedModel(bundled_table() if table else None, c.gpus_per_server)
    p = make_policy(policy, w, c, params)
    out = simulate(w, c, p, speed=speed, params=engine or EngineParams())
    b = offline_bounds(w, c, env)
    m = summarize(out)
    assert b.jct_mean_lower.value <= m["jct_mean"] + TOL
    assert b.makespan_lower.value <= m["makespan"] + TOL
    assert b.wdmr_lower.value <= m["wdmr"] + TOL
    assert watch.checks > 0
    return watch, m


def _slice(n: int) -> Workload:
    return Workload.of(bundled().jobs[:n], f"day-{n}")


@pytest.mark.slow
def test_antman_shares_gpus_within_its_throughput(watched: list[Watch]) -> None:
    watch, _ = run_watched(watched, _slice(40), ClusterSpec.uniform(1, 8), "antman")
    assert watch.peak > 1.0  # the test sees GPUs carrying more than one job's worth


@pytest.mark.slow
@pytest.mark.parametrize("policy", ["gandiva-pack", "gandiva"])
def test_gandiva_packs_within_its_pair_speeds(watched: list[Watch], policy: str) -> None:
    watch, _ = run_watched(
        watched, _slice(40), ClusterSpec.uniform(1, 8), policy, {"pack_slowdown": 0.2}
    )
    assert watch.peak > 1.0


@pytest.mark.parametrize("policy", ["fixed-batch", pytest.param("ones", marks=pytest.mark.slow)])
def test_ones_batch_speeds_stay_within_the_batch_envelope(
    watched: list[Watch], policy: str
) -> None:
    w = generate(OnesSpec(jobs=30, gap=30.0), seed=3)
    run_watched(watched, w, ClusterSpec.uniform(4, 4), policy)


@pytest.mark.slow
def test_chronus_spreads_stay_within_the_table_envelope(watched: list[Watch]) -> None:
    run_watched(watched, _slice(150), ClusterSpec.uniform(2, 8), "chronus", table=True)


@pytest.mark.slow
def test_elastic_tiresias_sizes_stay_within_the_curve(watched: list[Watch]) -> None:
    rule = ElasticRule(share=0.5, min_fraction=0.5, max_factor=2.0, serial=0.1)
    w = Workload.of([rule.apply(j) for j in bundled().jobs[:100]], "elastic")
    run_watched(watched, w, ClusterSpec.uniform(2, 8), "elastic-tiresias")


@pytest.mark.slow
def test_aryl_lends_servers_within_the_cluster_spec(watched: list[Watch]) -> None:
    w = Workload.of([ARYL_ELASTIC.apply(j) for j in bundled().jobs[:200]], "aryl")
    servers = (ServerSpec(8),) * 2 + (ServerSpec(2, "T4", 1.0, False),) * 3
    run_watched(watched, w, ClusterSpec(servers), "aryl", engine=EngineParams(63 / 60))


def test_the_spread_ratio_bounds_every_placement_the_engine_prices() -> None:
    table = bundled_table()
    for model in table.table:
        for per in (1, 2, 4, 8):
            speed = SpeedModel(table, per)
            for n in range(1, 17):
                job = SimJob("x", 0.0, n, 1.0, model=model)
                for nodes in range(1, n + 1):
                    # n GPUs over `nodes` servers, as evenly as they go
                    sizes = [n // nodes + (k < n % nodes) for k in range(nodes)]
                    if max(sizes) > per:
                        continue
                    placement = tuple(enumerate(sizes))
                    got = speed.speed(job, placement, (1.0,) * nodes)
                    assert got <= spread_ratio(table, model, n) * (1 + TOL), (model, n, nodes)


def test_the_sharing_throughputs_by_hand() -> None:
    assert gpu_throughput("antman") == pytest.approx((1 - 0.43) + (1 - 0.034))
    assert gpu_throughput("gandiva") == 1.0  # default pack slowdown 0.809: 2 x 0.191 < 1
    assert gpu_throughput("gandiva-pack", {"pack_slowdown": 0.3}) == pytest.approx(1.4)
    assert gpu_throughput("srtf") == 1.0
    assert isinstance(gpu_throughput("chronus", {"start_credit": True}), str)
    assert isinstance(gpu_throughput("no-such-policy"), str)


def test_antman_memory_split_never_speeds_a_guest_up() -> None:
    models = [*MEMORY, None]
    for host in models:
        for guest in models:
            s = split_speed(host, guest)
            assert s is None or 0.0 < s <= 1.0


def test_an_uncovered_policy_is_named_with_its_reason() -> None:
    env = envelope_of([("srtf", {}), ("chronus", {"start_credit": True})])
    assert env.covered == ("srtf",)
    assert env.excluded[0][0] == "chronus"
    assert "not chronus: credits work" in env.describe()


def test_a_job_larger_than_the_cluster_is_refused_naming_it() -> None:
    w = Workload.of([SimJob("big", 0.0, 16, 1.0)], "big")
    with pytest.raises(InvalidInstanceError, match="job 'big' needs 16 GPUs, the cluster has 8"):
        relax(w, ClusterSpec.uniform(1, 8), envelope_of([("fifo", {})]))
