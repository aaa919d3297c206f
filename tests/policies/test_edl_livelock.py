"""Elastic-Tiresias reaches a fixed point at one instant (the compaction livelock, 2026-11-26).

Before the fix, the Tiresias plan preempted a running job for the budget of a
waiting job it could not place (fragmentation), compaction gave the victim's
free GPUs to a job behind it, the next call's plan preempted that job for the
same reason and compaction handed the GPUs back: the simulator's follow-up
calls at one instant never stopped ("still preempting after 1000 calls").
Now (1) a victim whose GPUs no started job took keeps running (every elastic
round), and (2) a compaction that the plan, run again on the round's
placement, would undo is not made. The expected decisions below are worked
out by hand in the comments.
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from scheduling_opt.model import Cluster, GpuType, Job, Placement, Server
from scheduling_opt.policies import edl as el
from scheduling_opt.policies.edl import elastic_tiresias as et
from scheduling_opt.policies.edl.compaction import compact
from scheduling_opt.reproduce.workloads import ElasticRule
from scheduling_opt.sim import ClusterSpec, simulate
from scheduling_opt.sim.policies.edl.elastic_tiresias import EdlTiresias
from scheduling_opt.sim.synthetic import SyntheticSpec, generate
from scheduling_opt.sim.workload import Workload
from scheduling_opt.testing import edl_jobs


def _state() -> el.EdlState:
    """Two 4-GPU servers; a, b, v run; w (4 GPUs) and x (2 GPUs) wait; N = 0.

    All jobs are inelastic (min = max), linear, in G1 (service 600), so the
    priority is arrival order a, b, w, v, x. The plan: a (2) and b (1) leave a
    budget of 5; w fits it (budget 1) but cannot be placed (4 workers on one
    server, ceil(4/4) = 1; free: s0 2, s1 3 once v is out); v (2) no longer
    fits: preempted; x (2) does not fit. Three jobs wait (> N = 0): compaction.
    """
    cluster = Cluster((GpuType("V100"),), (Server("s0", "V100", 4), Server("s1", "V100", 4)))
    sizes = {"a": 2, "b": 1, "w": 4, "v": 2, "x": 2}
    jobs = [Job(k, n, n, 100.0) for k, n in sizes.items()]
    placement = Placement.from_mapping({"a": {"s0": 2}, "b": {"s1": 1}, "v": {"s1": 2}})
    return el.EdlState.from_jobs(
        cluster,
        jobs,
        placement,
        service=dict.fromkeys(sizes, 600.0),
        params=el.TiresiasParams(compaction=0),
    )


def _follow_ups(state: el.EdlState, limit: int) -> list[el.EdlDecision]:
    """The engine's loop at one instant: call again on the result while it preempts."""
    out = []
    for _ in range(limit):
        decision = el.elastic_tiresias_step(state).decision
        assert decision is not None
        out.append(decision)
        if not decision.preempted:
            break
        state = el.advance(state, decision, 0.0)
    return out


def test_the_hand_made_cycle_ends_at_the_first_call() -> None:
    calls = _follow_ups(_state(), 10)
    assert len(calls) == 1
    d = calls[0]
    # v's GPUs on s1 are still free after the plan's (no) starts: v keeps running.
    # Compaction: w gets at most 2 GPUs on one server (< its 4); x takes the 2 free
    # GPUs of s0 (gain 2 > 0, nothing to scale in: every job is inelastic). The
    # plan run again keeps it: x is outside the budget but its GPUs stay free.
    assert d.mode == "compaction"
    assert d.preempted == ()
    assert d.started == ("x",)
    assert dict(d.resized) == {}
    assert {k: dict(d.placement.servers_of(k)) for k in d.placement.jobs()} == {
        "a": {"s0": 2},
        "b": {"s1": 1},
        "v": {"s1": 2},
        "x": {"s0": 2},
    }
    # The call on its own result changes nothing: v and x are again outside the
    # budget (w holds 4 of the 5 GPUs left), their GPUs still free, so both stay.
    again = el.elastic_tiresias_step(el.advance(_state(), d, 0.0)).decision
    assert again is not None
    assert (again.preempted, again.started, dict(again.resized)) == ((), (), {})
    assert again.placement == d.placement


def test_without_the_fix_the_same_state_cycles(monkeypatch: pytest.MonkeyPatch) -> None:
    """The old rule (victims stay preempted): v and x take turns on s0, call after call."""
    monkeypatch.setattr(et, "_restore", lambda r, state, preempted: preempted)
    monkeypatch.setattr(et, "compact_stable", lambda r, j, check: compact(r, j) > 0)
    calls = _follow_ups(_state(), 6)
    assert len(calls) == 6  # still preempting
    # Call 1: v preempted (s1: 3 free, s0: 2); compaction skips the fresh victim v and
    # starts x on s0 (best fit: the smallest server that holds its 2 workers).
    # Call 2: x is outside the budget: preempted; v, no longer fresh, takes s0 the
    # same way. Call 3 is call 1 again with v on s0.
    swaps = [(d.preempted, d.started, dict(d.placement.servers_of(d.started[0]))) for d in calls]
    assert swaps[:2] == [(("v",), ("x",), {"s0": 2}), (("x",), ("v",), {"s0": 2})]
    assert swaps == swaps[:2] * 3


def _donor_state() -> el.EdlState:
    """One 7-GPU server; d (G1, 2 GPUs per worker, 1..3) runs 3 workers; h, a, b, e wait.

    h is new (G0, 1 GPU); a, b (1 GPU) and e (1..2 workers of 1 GPU) are in G1
    behind d. Linear speed-ups, N = 0. The plan: h (1) and d (6) fill the
    budget of 7; h starts on the free GPU; a, b, e do not fit. d's QoS floor is
    max(1, ceil(0.5 * 3)) = 2. Compaction: a (then b) would cost d a worker
    (loss 1) for a gain of 1: not positive. e: its first worker costs d a worker
    (frees 2 GPUs), its second is free: gain 2 - 1 = 1 > 0, so e would start
    with 2 and d shrink to 2.
    """
    cluster = Cluster((GpuType("V100"),), (Server("s0", "V100", 7),))
    jobs = [
        Job("d", 1, 3, 100.0, gpus_per_worker=2),
        Job("h", 1, 1, 100.0),
        Job("a", 1, 1, 100.0),
        Job("b", 1, 1, 100.0),
        Job("e", 1, 2, 100.0),
    ]
    return el.EdlState.from_jobs(
        cluster,
        jobs,
        Placement.from_mapping({"d": {"s0": 3}}),
        service={"d": 600.0, "a": 600.0, "b": 600.0, "e": 600.0},
        params=el.TiresiasParams(compaction=0),
    )


def test_a_compaction_the_next_plan_would_undo_is_not_made() -> None:
    # With d at 2 workers (4 GPUs) the next plan's budget reaches a and b (ahead of
    # e): h 1 + d 4 + a 1 + b 1 = 7, so e (2) is preempted and a, b start on its
    # GPUs. So e's compaction is not made: only h starts, d keeps 3 workers.
    d = el.elastic_tiresias_step(_donor_state()).decision
    assert d is not None
    assert (d.mode, d.started, d.preempted, dict(d.resized)) == ("compaction", ("h",), (), {})
    assert dict(d.placement.servers_of("d")) == {"s0": 3}
    again = el.elastic_tiresias_step(el.advance(_donor_state(), d, 0.0)).decision
    assert again is not None
    assert (again.started, again.preempted) == ((), ())


def test_without_the_check_the_next_call_preempts(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(et, "compact_stable", lambda r, j, check: compact(r, j) > 0)
    d = el.elastic_tiresias_step(_donor_state()).decision
    assert d is not None
    assert (d.started, dict(d.resized)) == (("h", "e"), {"d": 2})
    again = el.elastic_tiresias_step(el.advance(_donor_state(), d, 0.0)).decision
    assert again is not None
    assert (again.preempted, again.started) == (("e",), ("a", "b"))


@pytest.mark.parametrize("seed", [0, 1, 2, 3])
@pytest.mark.parametrize("rule", [ElasticRule(share=0.5), ElasticRule(min_fraction=0.5)])
def test_small_synthetic_loads_that_livelocked_complete(seed: int, rule: ElasticRule) -> None:
    # Each failed before the fix: "still preempting after 1000 calls" at t = 42..75.
    base = generate(SyntheticSpec(jobs=200, max_gpus=16), seed)
    workload = Workload.of(tuple(rule.apply(j) for j in base.jobs), "w")
    out = simulate(workload, ClusterSpec.uniform(8, 8), EdlTiresias())
    assert len(out.end) == 200
    assert all(e >= s for e, s in zip(out.end, out.first_start, strict=True))


def _where(p: Placement) -> dict[str, dict[str, int]]:
    return {k: dict(p.servers_of(k)) for k in p.jobs()}


@pytest.mark.slow
@settings(max_examples=500, deadline=None)
@given(
    st.lists(st.integers(1, 8), min_size=1, max_size=4),
    edl_jobs(),
    st.integers(0, 3),
    st.lists(st.tuples(st.floats(1.0, 3000.0), st.integers(0, 7)), min_size=1, max_size=5),
)
def test_a_call_on_its_own_result_never_preempts(
    sizes: list[int], jobs: list[el.EdlJob], n: int, rounds: list[tuple[float, int]]
) -> None:
    cluster = Cluster(
        (GpuType("V100"),), tuple(Server(f"s{i}", "V100", g) for i, g in enumerate(sizes))
    )
    params = el.TiresiasParams(compaction=n, starvation=2000.0)
    state = el.EdlState(cluster, tuple(jobs), Placement(), params)
    for seconds, done in rounds:
        decision = el.elastic_tiresias_step(state).decision
        assert decision is not None
        # No time passes: the same jobs, service and queues, the returned placement.
        after = el.advance(state, decision, 0.0)
        again = el.elastic_tiresias_step(after).decision
        assert again is not None
        assert again.preempted == ()
        # It may still start jobs (a victim of this call waited one round; a job the
        # plan now has budget for), never stop one; the call after that changes nothing.
        third = el.elastic_tiresias_step(el.advance(after, again, 0.0)).decision
        assert third is not None
        assert (third.preempted, third.started, dict(third.resized)) == ((), (), {})
        assert _where(third.placement) == _where(again.placement)
        state = el.advance(state, decision, seconds)
        running = state.placement.jobs()
        if running:
            state = el.finish(state, [running[done % len(running)]])
