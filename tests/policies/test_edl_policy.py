"""EDL Elastic-Tiresias: hand-made rounds derived from §5 Algorithm 1, and invariants."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from scheduling_opt.errors import InvalidInstanceError, VerificationError
from scheduling_opt.model import Cluster, GpuType, Job, Placement, Server
from scheduling_opt.policies import edl as el
from scheduling_opt.testing import edl_jobs


def cluster(*sizes: int) -> Cluster:
    return Cluster(
        (GpuType("V100"),), tuple(Server(f"s{i}", "V100", n) for i, n in enumerate(sizes))
    )


def ej(
    job_id: str,
    lo: int,
    hi: int,
    service: float = 0.0,
    waiting: float = 0.0,
    speedup: tuple[float, ...] = (),
    gpw: int = 1,
    requested: int = 0,
) -> el.EdlJob:
    job = Job(job_id, lo, hi, 100.0, gpus_per_worker=gpw)
    return el.EdlJob(job, service, waiting, speedup, requested)


def state(
    c: Cluster,
    jobs: list[el.EdlJob],
    placed: Mapping[str, Mapping[str, int]],
    params: el.TiresiasParams | None = None,
) -> el.EdlState:
    return el.EdlState(
        c, tuple(jobs), Placement.from_mapping(placed), params or el.TiresiasParams()
    )


CONCAVE = (1.0, 1.9, 2.7, 3.4, 4.0, 4.5)  # marginal losses 1, .9, .8, .7, .6, .5


def run(s: el.EdlState, p: el.TiresiasParams | None = None) -> el.EdlDecision:
    if p is not None:
        s = replace(s, params=p)
    sol = el.elastic_tiresias_step(s)
    el.check(s, sol)
    assert sol.decision is not None
    return sol.decision


# --------------------------------------------------------------------------- Tiresias base


def test_queues_follow_thresholds_and_starving_jobs_return_to_g0() -> None:
    s = state(
        cluster(4),
        [
            ej("a", 1, 1, service=499.0),
            ej("b", 1, 1, service=500.0),
            ej("c", 1, 1, service=10_000.0),
            ej("d", 1, 1, service=20_000.0, waiting=3600.0),
        ],
        {"a": {"s0": 1}, "b": {"s0": 1}, "c": {"s0": 1}},
    )
    d = run(s)
    assert dict(d.queues) == {"a": 0, "b": 1, "c": 2, "d": 0}
    assert d.promoted == ("d",)
    later = el.advance(s, d, 10.0)
    assert later.jobs_by_id["d"].service == 10.0  # reset on promotion, then ran 10 s on 1 GPU


def test_higher_priority_waiting_job_preempts_lower_queue_job() -> None:
    s = state(cluster(4), [ej("old", 4, 4, service=600.0), ej("new", 2, 2)], {"old": {"s0": 4}})
    d = run(s, el.TiresiasParams(elastic=False))
    assert d.started == ("new",)
    assert d.preempted == ("old",)
    assert d.placement.as_mapping() == {"new": {"s0": 2}}


def test_a_job_too_big_for_the_budget_is_skipped_and_smaller_ones_backfill() -> None:
    s = state(cluster(4, 4), [ej("big", 10, 10), ej("small", 2, 2)], {})
    d = run(s, el.TiresiasParams(elastic=False))
    assert d.started == ("small",)
    assert d.placement.workers_of("big") == 0


def test_locality_footnote_4_defers_a_gang_that_would_span_too_many_servers() -> None:
    # 4 GPUs may span ceil(4/4) = 1 server; two servers with 2 free GPUs each do not do.
    s = state(
        cluster(4, 4),
        [ej("x", 2, 2), ej("y", 2, 2), ej("z", 4, 4)],
        {"x": {"s0": 2}, "y": {"s1": 2}},
    )
    d = run(s, el.TiresiasParams(elastic=False))
    assert d.placement.workers_of("z") == 0
    assert d.started == ()


# --------------------------------------------------------------------------- compaction


def test_compaction_scales_in_a_lower_queue_job_by_largest_gain() -> None:
    # r1 (G1) runs 6 workers on a concave curve; "big" (G0, P = 10) cannot fit the budget.
    s = state(
        cluster(8),
        [ej("r1", 2, 6, service=1000.0, speedup=CONCAVE), ej("big", 2, 10)],
        {"r1": {"s0": 6}},
    )
    d = run(s, el.TiresiasParams(compaction=0))
    assert d.mode == "compaction"
    # Two free GPUs cost nothing; then r1 loses .5, .6, ... < 1 per worker, down to
    # its floor max(2, ceil(0.5 * 6)) = 3: big starts with 2 + 3 = 5 workers.
    assert d.placement.workers_of("big") == 5
    assert dict(d.resized) == {"r1": 3}
    assert d.started == ("big",)


def test_compaction_never_moves_gpus_for_no_gain() -> None:
    # Linear speed-ups: taking a GPU from r1 gains nothing, so only the free GPUs are used.
    s = state(cluster(8), [ej("r1", 2, 6, service=1000.0), ej("big", 2, 10)], {"r1": {"s0": 6}})
    d = run(s, el.TiresiasParams(compaction=0))
    assert d.placement.workers_of("big") == 2
    assert d.resized == {}


def test_compaction_needs_more_than_n_waiting_jobs() -> None:
    jobs = [ej("r1", 2, 6, service=1000.0, speedup=CONCAVE), ej("big", 3, 10)]
    s = state(cluster(8), jobs, {"r1": {"s0": 6}})
    assert run(s, el.TiresiasParams(compaction=1)).mode == "none"
    assert run(s, el.TiresiasParams(compaction=0)).mode == "compaction"


def test_compaction_spares_g0_and_inelastic_jobs() -> None:
    jobs = [
        ej("g0", 1, 4, service=10.0, speedup=CONCAVE[:4]),
        ej("rigid", 2, 2, service=5000.0),
        ej("big", 3, 10),
    ]
    s = state(cluster(8), jobs, {"g0": {"s0": 4}, "rigid": {"s0": 2}})
    d = run(s, el.TiresiasParams(compaction=0))
    assert d.placement.workers_of("big") == 0  # 2 free GPUs < min 3, no donor allowed
    assert d.placement.as_mapping() == s.placement.as_mapping()


def test_compaction_respects_the_waiting_jobs_minimum() -> None:
    s = state(
        cluster(8),
        [ej("r1", 5, 6, service=1000.0, speedup=CONCAVE), ej("big", 4, 10)],
        {"r1": {"s0": 6}},
    )
    d = run(s, el.TiresiasParams(compaction=0))
    assert d.placement.workers_of("big") == 0  # 2 free + 1 from r1 (floor 5) < min 4


# --------------------------------------------------------------------------- expansion


def test_expansion_gives_each_gpu_to_the_largest_relative_gain() -> None:
    # a: 2 -> 3 gains 1/2; b: 1 -> 2 gains 1; both on s0 with 2 idle GPUs.
    s = state(cluster(5), [ej("a", 1, 4), ej("b", 1, 4)], {"a": {"s0": 2}, "b": {"s0": 1}})
    d = run(s)
    assert d.mode == "expansion"
    # b takes the first GPU (gain 1); then a (2 -> 3) and b (2 -> 3) tie at 1/2: a is first in FIFO.
    assert dict(d.resized) == {"a": 3, "b": 2}


def test_section_6_3_jobs_start_at_their_request_then_scale_out_on_their_machine() -> None:
    # Two jobs requesting 2 GPUs (max 8) arrive on an idle 8-GPU machine: Tiresias starts
    # both at their request; nothing waits, so expansion shares the idle GPUs by gain
    # (a: 2->3 and b: 2->3 gain 1/2, then 3->4 gains 1/3 each).
    jobs = [ej("a", 1, 8, requested=2), ej("b", 1, 8, requested=2)]
    d = run(state(cluster(8), jobs, {}))
    assert d.started == ("a", "b")
    assert d.mode == "expansion"
    assert d.placement.as_mapping() == {"a": {"s0": 4}, "b": {"s0": 4}}


def test_compaction_floor_is_half_the_requested_parallelism() -> None:
    s = state(
        cluster(8),
        [
            ej("r1", 1, 8, service=1000.0, speedup=(*CONCAVE, 4.9, 5.2), requested=4),
            ej("big", 2, 10),
        ],
        {"r1": {"s0": 8}},
    )
    d = run(s, el.TiresiasParams(compaction=0))
    # r1 may shrink to ceil(0.5 * 4) = 2 workers: big gets 6 (losses .3,.4,.5,.6,.7,.8 < 1).
    assert dict(d.resized) == {"r1": 2}
    assert d.placement.workers_of("big") == 6


def test_expansion_stops_when_throughput_would_not_rise() -> None:
    flat = (1.0, 1.5, 1.5)
    s = state(cluster(4), [ej("a", 1, 3, speedup=flat)], {"a": {"s0": 1}})
    d = run(s)
    assert d.placement.workers_of("a") == 2  # 2 -> 3 gains nothing


def test_expansion_uses_idle_gpus_only_within_the_locality_rule() -> None:
    s = state(cluster(4, 4), [ej("a", 1, 8)], {"a": {"s0": 4}})
    d = run(s)
    # 5 workers may span ceil(5/4) = 2 servers: a grows onto s1 up to 8.
    assert d.placement.as_mapping() == {"a": {"s0": 4, "s1": 4}}
    s2 = state(cluster(4, 4), [ej("a", 1, 4), ej("b", 1, 1)], {"a": {"s0": 3}, "b": {"s1": 1}})
    d2 = run(s2)
    assert d2.placement.servers_of("a") == {"s0": 4}  # 4 workers: one server only


def test_expansion_skips_inelastic_jobs_and_max_workers() -> None:
    s = state(cluster(8), [ej("rigid", 2, 2), ej("a", 1, 3)], {"rigid": {"s0": 2}, "a": {"s0": 1}})
    d = run(s)
    assert d.placement.workers_of("rigid") == 2
    assert d.placement.workers_of("a") == 3


def test_plain_tiresias_never_resizes() -> None:
    s = state(cluster(8), [ej("a", 1, 8)], {"a": {"s0": 2}})
    d = run(s, el.TiresiasParams(elastic=False))
    assert d.mode == "none"
    assert d.placement.workers_of("a") == 2


def test_multi_gpu_workers_stay_whole() -> None:
    s = state(cluster(4, 4), [ej("a", 1, 4, gpw=2)], {"a": {"s0": 1}})
    d = run(s)
    # 2 workers (4 GPUs) must share one server: s0; 3 and 4 workers may span two.
    assert d.placement.servers_of("a") == {"s0": 2, "s1": 2}


# --------------------------------------------------------------------------- stragglers


def batches(n: int, slow: Mapping[str, float]) -> list[dict[str, float]]:
    return [{w: 1.0 * slow.get(w, 1.0) for w in ("w0", "w1", "w2", "w3")} for _ in range(n)]


def test_straggler_needs_ten_consecutive_slow_minibatches() -> None:
    assert el.find_stragglers(batches(10, {"w2": 1.3})) == ("w2",)
    assert el.find_stragglers(batches(9, {"w2": 1.3})) == ()
    assert el.find_stragglers(batches(10, {"w2": 1.2})) == ()  # not *longer* than 1.2 x
    history = batches(10, {"w2": 1.3})
    history[4] = {**history[4], "w2": 1.0}  # one normal mini-batch breaks the streak
    assert el.find_stragglers(history) == ()
    assert el.find_stragglers([*history, *batches(10, {"w2": 1.3})]) == ("w2",)


def test_straggler_with_a_zero_median_and_bad_times() -> None:
    # Median 0 (most workers report 0 s): only a worker that took time is slow.
    zero = [{"w1": 0.0, "w2": 0.0, "w3": 0.5}] * 10
    assert el.find_stragglers(zero) == ("w3",)
    assert el.find_stragglers([{"w1": 0.0, "w2": 0.0, "w3": 0.0}] * 10) == ()
    with pytest.raises(InvalidInstanceError, match="finite"):
        el.find_stragglers([*batches(9, {}), {"w1": float("nan"), "w2": 1.0}])
    with pytest.raises(InvalidInstanceError, match=">= 0"):
        el.find_stragglers([*batches(9, {}), {"w1": -1.0, "w2": 1.0}])


def test_straggler_scale_in_slowest_first_and_never_below_minimum() -> None:
    history = batches(10, {"w1": 1.6, "w3": 2.0})  # median 1.3: 1.6 > 1.2 x 1.3
    job = Job("j", 3, 4, 100.0)
    assert el.find_stragglers(history) == ("w3", "w1")
    assert el.straggler_scale_in(job, 4, history) == ("w3",)
    assert el.straggler_scale_in(Job("k", 4, 4, 100.0), 4, history) == ()


def test_invalid_inputs_raise_named_errors() -> None:
    with pytest.raises(InvalidInstanceError, match="speedup"):
        ej("a", 1, 3, speedup=(1.0, 2.0))
    with pytest.raises(InvalidInstanceError, match="over capacity"):
        state(cluster(2), [ej("a", 3, 3)], {"a": {"s0": 3}})
    with pytest.raises(InvalidInstanceError, match="thresholds"):
        el.TiresiasParams(thresholds=(500.0, 100.0))


def test_checker_rejects_a_scale_in_below_the_floor() -> None:
    s = state(cluster(8), [ej("r1", 2, 6, service=1000.0), ej("b", 1, 1)], {"r1": {"s0": 6}})
    d = run(s)
    bad = el.EdlDecision(
        Placement.from_mapping({"r1": {"s0": 2}, "b": {"s0": 1}}),
        d.queues,
        (),
        ("b",),
        (),
        {"r1": 2},
        "compaction",
    )
    with pytest.raises(VerificationError, match="scaled in"):
        el.check_decision(s, bad)


# --------------------------------------------------------------------------- properties


@settings(max_examples=60, deadline=None)
@given(
    st.lists(st.integers(2, 8), min_size=1, max_size=3),
    edl_jobs(),
    st.integers(0, 3),
    st.lists(st.tuples(st.floats(1.0, 5000.0), st.integers(0, 7)), min_size=1, max_size=4),
)
def test_rounds_never_exceed_capacity_or_drop_below_minimum(
    sizes: list[int], jobs: list[el.EdlJob], n: int, rounds: list[tuple[float, int]]
) -> None:
    params = el.TiresiasParams(compaction=n, starvation=3000.0)
    s = el.EdlState(cluster(*sizes), tuple(jobs), Placement(), params)
    for seconds, done in rounds:
        sol = el.elastic_tiresias_step(s)
        el.check(s, sol)  # capacity, min..max, floors, locality, inelastic
        d = sol.decision
        assert d is not None
        for job_id in d.placement.jobs():
            j = s.jobs_by_id[job_id].job
            assert j.min_workers <= d.placement.workers_of(job_id) <= j.max_workers
        assert el.elastic_tiresias_step(s).decision == d  # deterministic, state untouched
        s = el.advance(s, d, seconds)
        running = s.placement.jobs()
        if running:
            s = el.finish(s, [running[done % len(running)]])


def test_cluster_throughput_sums_normalized_speedups() -> None:
    # EDL §6.3: sum over running jobs of S(p)/S(1). a runs 3 workers with a
    # profiled curve (S(3)/S(1) = 2.4), b 2 workers scaling linearly, c waits.
    jobs = [ej("a", 1, 4, speedup=(1.0, 1.8, 2.4, 2.8)), ej("b", 1, 2), ej("c", 1, 1)]
    s = state(cluster(8), jobs, {"a": {"s0": 3}, "b": {"s0": 2}})
    assert el.cluster_throughput(s, s.placement) == pytest.approx(2.4 + 2.0)


# --------------------------------------------------------------------------- Tiresias' knob


def test_promote_knob_promotes_after_k_times_the_executed_time() -> None:
    # Tiresias' STARVELIMIT rule (its simulator's dlas-gpu-K, our `tiresias`
    # with k = 8): a waiting G1 job that has run 100 s returns to G0 after
    # 8 x 100 = 800 s of waiting, whatever the fixed 3,600 s limit says.
    knob = el.TiresiasParams(promote_knob=8.0)

    def job(waiting: float, executed: float) -> el.EdlJob:
        return el.EdlJob(Job("w", 1, 1, 100.0), 600.0, waiting, (), 0, executed)

    def promoted(j: el.EdlJob, p: el.TiresiasParams) -> tuple[str, ...]:
        s = state(cluster(1), [ej("r", 1, 1, service=20_000.0), j], {"r": {"s0": 1}}, p)
        return run(s).promoted

    assert promoted(job(799.0, 100.0), knob) == ()
    assert promoted(job(800.0, 100.0), knob) == ("w",)
    assert promoted(job(100.0, 12.5), knob) == ("w",)  # 8 x 12.5 = 100
    assert promoted(job(3600.0, 1000.0), knob) == ()  # the fixed limit is off
    assert promoted(job(3600.0, 1000.0), el.TiresiasParams()) == ("w",)  # ... and on here
    # advance() counts the time a job runs, not the time it waits.
    s = state(cluster(1), [ej("a", 1, 1), ej("b", 1, 1)], {"a": {"s0": 1}}, knob)
    later = el.advance(s, run(s), 30.0)
    assert [(j.id, j.executed, j.waiting) for j in later.jobs] == [
        ("a", 30.0, 0.0),
        ("b", 0.0, 30.0),
    ]


@pytest.mark.parametrize("knob", [0.0, -1.0, float("nan"), float("inf")])
def test_promote_knob_must_be_a_positive_number(knob: float) -> None:
    with pytest.raises(InvalidInstanceError, match="promote_knob"):
        el.TiresiasParams(promote_knob=knob)
