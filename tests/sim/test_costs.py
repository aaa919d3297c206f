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
    SimJob,
    Workload,
    make_policy,
    policy_names,
    simulate,
)
from tests.sim.helpers import by_id, workloads_for

ONES = policy_names("ones")
#: MILP or search at every call: in the full suite.
HEAVY = ("3sigma", "chronus-exact", "ones", "ones-exact", "aryl-plus", "aryl-exact")


_jobs = workloads_for


COSTS = st.builds(
    EngineParams,
    restart_cost=st.sampled_from([0.0, 0.5, 1.0, 3.0]),
    preemption_cost=st.sampled_from([0.0, 1.0]),
    start_overhead=st.sampled_from([0.0, 0.5]),
)


@pytest.mark.parametrize(
    "name", [pytest.param(n, marks=pytest.mark.slow) if n in HEAVY else n for n in policy_names()]
)
@settings(max_examples=20, deadline=None)
@given(data=st.data())
def test_every_policy_finishes_under_restart_costs(name: str, data: st.DataObject) -> None:
    jobs = data.draw(_jobs(name))
    params = data.draw(COSTS)
    w = Workload.of(jobs, "h")
    c = ClusterSpec.uniform(2, 8)
    out = simulate(w, c, make_policy(name, w, c), params=params)  # a PolicyError fails it
    assert all(end >= j.submit for j, end in zip(out.jobs, out.end, strict=True))


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
