"""Every policy stays stable under restart costs: no run ends in the engine's guard.

A preemptive policy that compares a waiting job with a running one without
counting what a switch costs undoes its own switch at once, again and
again at one instant (SRTF did: the engine stopped it after 1,000 calls).
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from scheduling_opt.sim import (
    ClusterSpec,
    EngineParams,
    PolicyError,
    SimJob,
    Workload,
    make_policy,
    policy_names,
    simulate,
)
from tests.sim.helpers import by_id, workloads_for

_jobs = workloads_for


#: The papers' costs in the traces' minutes and beyond: Chronus' artifact
#: start overhead (0.5), Aryl's 63 s (1.05), EDL's Stop-Resume (0.5-1) against
#: its 1-s scaling (1/60), AntMan's swept 5; a preemption that loses work; a
#: start overhead of 2 (2 x (1 + log2 8) = 8 minutes per 8-GPU start, longer
#: than Themis' 6-minute round: Themis never finished there before it kept a
#: job until its start was paid back).
COSTS = st.builds(
    EngineParams,
    restart_cost=st.sampled_from([0.0, 0.5, 1.05, 2.0, 3.0, 5.0]),
    preemption_cost=st.sampled_from([0.0, 1.0]),
    start_overhead=st.sampled_from([0.0, 0.5, 1.0, 2.0]),
    resize_cost=st.sampled_from([None, 0.0, 1.0 / 60.0, 5.0]),
)


#: The preemptive baselines that compare a waiting job with a running one at
#: every event (SRTF thrashed so), and Themis' rounds (they re-shuffled jobs
#: before their starts were paid back): the fast case.
FAST = ("srtf", "tiresias", "edf", "themis")


def _finishes(name: str, jobs: list[SimJob], params: EngineParams) -> None:
    w = Workload.of(jobs, "h")
    c = ClusterSpec.uniform(2, 8)
    try:
        out = simulate(w, c, make_policy(name, w, c), params=params)
    except PolicyError as e:  # the engine's guard, or any broken rule, fails the property
        pytest.fail(f"{name} under {params}: {e}")
    assert all(end >= j.submit for j, end in zip(out.jobs, out.end, strict=True))
    assert all(end < float("inf") for end in out.end)


@pytest.mark.slow
@pytest.mark.parametrize("name", policy_names())
# Six workloads per policy: about 50 policies x 6 runs keep CI's time; the
# fast case below draws more for the preemptive baselines.
@settings(max_examples=6, deadline=None)
@given(data=st.data())
def test_every_policy_finishes_under_restart_costs(name: str, data: st.DataObject) -> None:
    # Every registered policy (a second or more each: slow; FAST below runs
    # the preemptive baselines in the fast suite).
    _finishes(name, data.draw(_jobs(name)), data.draw(COSTS))


@pytest.mark.parametrize("name", FAST)
@settings(max_examples=8, deadline=None)
@given(data=st.data())
def test_preemptive_baselines_finish_under_restart_costs(name: str, data: st.DataObject) -> None:
    _finishes(name, data.draw(_jobs(name)), data.draw(COSTS))


def test_srtf_counts_the_restart_a_switch_costs() -> None:
    # One 8-GPU server, restart cost 1. A (work 10) runs from 0; B (work 3)
    # preempts it at 1 (1 + 3 = 4 < A's end 10) and ends at 4; A resumes at 4
    # (stall 1: its end 4 + 1 + 9 = 14). C (work 9.2) comes at 4.5: 4.5 + 9.2
    # = 13.7 < 14, so it preempts A (done 1, 9 left, in its stall). A waits:
    # 4.5 + 9 + its restart 1 = 14.5 > C's end 13.7, so it does not take its
    # GPUs back (without the restart counted, 13.5 < 13.7 did, and C then
    # won them back, again and again at 4.5). C ends at 13.7; A resumes,
    # ends at 13.7 + 1 + 9 = 23.7.
    jobs = [SimJob("A", 0.0, 8, 10.0), SimJob("B", 1.0, 8, 3.0), SimJob("C", 4.5, 8, 9.2)]
    w = Workload.of(jobs, "w")
    c = ClusterSpec.uniform(1, 8)
    out = simulate(w, c, make_policy("srtf", w, c), params=EngineParams(restart_cost=1.0))
    got = by_id(out)
    assert got["B"] == (1.0, 4.0, 0)
    assert got["C"] == (4.5, pytest.approx(13.7), 0)
    assert got["A"][0] == 0.0
    assert got["A"][1] == pytest.approx(23.7)
    assert got["A"][2] == 2


def test_srtf_counts_the_start_overhead_of_a_start() -> None:
    # Start overhead 0.5 x (1 + log2 8) = 2 per start of an 8-GPU job. A
    # (work 10) starts at 0 and owes 2: ends at 12. B (work 9.5) at 1: 1 +
    # 9.5 + 2 = 12.5 > 12, so it waits and runs from 12, owing 2: 12 + 11.5.
    jobs = [SimJob("A", 0.0, 8, 10.0), SimJob("B", 1.0, 8, 9.5)]
    w = Workload.of(jobs, "w")
    c = ClusterSpec.uniform(1, 8)
    out = simulate(w, c, make_policy("srtf", w, c), params=EngineParams(start_overhead=0.5))
    got = by_id(out)
    assert got["A"] == (0.0, 12.0, 0)
    assert got["B"] == (12.0, 23.5, 0)


def _themis_two_jobs(start_overhead: float) -> dict[str, tuple[float, float, int]]:
    # Two 1-GPU jobs of work 10 on one GPU, J0 at 0 and J1 at 1: a start owes
    # start_overhead x (1 + log2 1) = start_overhead of work.
    jobs = [SimJob("0", 0.0, 1, 10.0), SimJob("1", 1.0, 1, 10.0)]
    w = Workload.of(jobs, "w")
    c = ClusterSpec.uniform(1, 1)
    params = EngineParams(start_overhead=start_overhead)
    return by_id(simulate(w, c, make_policy("themis", w, c), params=params))


def test_themis_keeps_a_job_until_its_start_is_paid_back() -> None:
    # Start cost 4, rounds at 0, 6, 12, ... A job started at a cost of 4 keeps
    # its GPU until its work since the start is 2 x 4 = 8.
    # - 0: J0 starts, owing 4: 14 of work, done at 8 after 8 minutes.
    # - 6: J0 has done 6 < 8: kept (Gavel's ranking, J1 never ran, would
    #   preempt it: then each job did 2 of its own work per 6-minute turn
    #   and both were preempted 4 times, ending at 54 and 60).
    # - 12: J0 paid back (12 done, 2 left); J1 (never ran: priority inf) starts,
    #   owing 4: 14 of work; J0 is preempted.
    # - 18: J1 has done 6 < 8: kept.
    # - 24: J1 paid back (12 done, 2 left). Both have 2 left (J0 pending), run
    #   12 of 24 and 23 minutes: x_iso = 1/2, T_id = 24 + 4 = 28 and 23 + 4 =
    #   27; rho = 1 gives x = 2 / (28 - 24) + 2 / (27 - 23) = 1/2 + 1/2 = 1 GPU:
    #   x = (1/2, 1/2). Priorities x / share run: 0.5 / (12/24) = 1 for J0,
    #   0.5 / (12/23) = 0.958 for J1: J0 resumes, owing 4 (6 left), J1 is preempted.
    # - 30: J0 ends (a round too); J1 resumes owing 4: 6 left, ends at 36.
    assert _themis_two_jobs(4.0) == {"0": (0.0, 30.0, 1), "1": (12.0, 36.0, 1)}


def test_themis_finishes_when_a_start_outlasts_its_round() -> None:
    # Start cost 8 > the 6-minute round: before, every round preempted the job
    # that had not got past its cost (6 of its 8 paid), the work left grew by 2
    # per turn and the run never ended. Now J0 (18 of work with its cost)
    # keeps its GPU at 6 and 12 (done 6 and 12 < 2 x 8) and ends at 18; J1
    # starts then and ends at 18 + 18 = 36.
    assert _themis_two_jobs(8.0) == {"0": (0.0, 18.0, 0), "1": (18.0, 36.0, 0)}


def test_themis_at_zero_cost_keeps_gavels_rounds() -> None:
    # No cost, nothing held. 6: J1 (never ran) takes the GPU, J0 preempted
    # with 6 done. 12: both have 4 left, ran 6 of 12 and 11 minutes; x_iso =
    # 1/2, T_id = 12 + 8 = 20 and 11 + 8 = 19, rho = 1 gives 4/8 + 4/8 = 1:
    # x = (1/2, 1/2); priorities 0.5 / (6/12) = 1 and 0.5 / (6/11) = 0.917:
    # J0 runs 12-16, J1 (preempted at 12) takes the freed GPU at 16, ends at 20.
    assert _themis_two_jobs(0.0) == {"0": (0.0, 16.0, 1), "1": (6.0, 20.0, 1)}


def _chronus_spot(jobs: list[SimJob], start_overhead: float) -> dict[str, tuple[float, float, int]]:
    # Chronus without the Profiler on one 8-GPU server: best-effort jobs get
    # BE leases of 5 by SRTF at the BE cycles (0, 5, 10, ...) only.
    from scheduling_opt.sim.policies.chronus.policy import Chronus

    w = Workload.of(jobs, "w")
    policy = Chronus(mode="greedy", profiler=False)
    params = EngineParams(start_overhead=start_overhead)
    return by_id(simulate(w, ClusterSpec.uniform(1, 8), policy, params=params))


def test_chronus_be_leases_count_what_a_start_costs() -> None:
    # An 8-GPU start owes 0.5 x (1 + log2 8) = 2. L (work 8) leased at 0:
    # 10 with its cost, ends at 10. S (work 4) arrives at 1. Cycle 5: L has 5
    # left; S would end 4 + 2 = 6 after its start: 6 > 5, L keeps its lease
    # (by the work alone, 4 < 5, S took it and L paid its start again: L at
    # 22). L ends at 10, a cycle: S leased, 10 + 6 = 16.
    jobs = [SimJob("L", 0.0, 8, 8.0), SimJob("S", 1.0, 8, 4.0)]
    assert _chronus_spot(jobs, 0.5) == {"L": (0.0, 10.0, 0), "S": (10.0, 16.0, 0)}


def test_chronus_be_leases_finish_when_a_start_outlasts_the_lease() -> None:
    # An 8-GPU start owes 2 x 4 = 8, longer than the 5-minute lease. A (work
    # 10) leased at 0: 18 with its cost. B (work 10) at 1. Cycles 5, 10, 15: A
    # has 13, 8, 3 left, B would need 10 + 8 = 18: A keeps its lease (by the
    # work alone B took it at 5 with 10 < 13, A took it back at 10 and so on,
    # each turn adding more work than a lease lets a job do: it never ended).
    # A ends at 18; no best-effort start between cycles: B at 20, ends 38.
    jobs = [SimJob("A", 0.0, 8, 10.0), SimJob("B", 1.0, 8, 10.0)]
    assert _chronus_spot(jobs, 2.0) == {"A": (0.0, 18.0, 0), "B": (20.0, 38.0, 0)}


def test_a_resize_pays_the_resize_cost_not_the_restart_cost() -> None:
    # An elastic job on one 8-GPU server: EDL's stop-free scaling (resize
    # cost 0.25) against a Stop-Resume restart (restart cost 2). The probe
    # policy starts J (work 12 at its requested 4 GPUs, elastic 2..8, linear
    # scaling: speed 1 on 4 GPUs, 2 on 8) on 4 GPUs at 0 and grows it to 8 at
    # 1: done 1 by then. The resize stalls 0.25 (not 2), then 11 left at
    # speed 2: end = 1.25 + 5.5 = 6.75.
    from scheduling_opt.sim import Decision

    class Grow:
        name = "grow"

        def decide(self, view: object) -> Decision:
            now = view.now  # type: ignore[attr-defined]
            if now == 0.0:
                return Decision(starts=((0, ((0, 4),)),), wake_at=1.0)
            if now == 1.0:
                return Decision(resize=((0, ((0, 8),)),))
            return Decision()

    job = SimJob("J", 0.0, 4, 12.0, min_gpus=2, max_gpus=8)
    w = Workload.of([job], "w")
    c = ClusterSpec.uniform(1, 8)
    params = EngineParams(restart_cost=2.0, resize_cost=0.25)
    out = simulate(w, c, Grow(), params=params)  # type: ignore[arg-type]
    assert out.end[0] == pytest.approx(6.75)
    # Without a resize cost of its own, the resize pays the restart cost: 1 + 2 + 5.5.
    out = simulate(w, c, Grow(), params=EngineParams(restart_cost=2.0))  # type: ignore[arg-type]
    assert out.end[0] == pytest.approx(8.5)
