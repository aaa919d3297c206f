"""Chronus in the simulator: a lease term whose selection is the MILP's optimum (§3.3.4)."""

from __future__ import annotations

import itertools

import pytest

from scheduling_opt.sim import ClusterSpec, SimJob, Workload, simulate, summarize
from scheduling_opt.sim.policies.chronus import Chronus
from tests.sim.helpers import by_id

# One 8-GPU server, 10-minute terms, three strict jobs of one term each, all
# due at the end of the first term: A (5 GPUs, reward 100), B and C (4 GPUs,
# 70 each). Subsets that fit 8 GPUs: {A}, {B}, {C}, {B, C}: the optimum is
# B + C = 140. Every greedy order takes A first (density 100/5 = 20 > 17.5)
# and then fits nothing else: 100.
JOBS = [
    SimJob("A", 0.0, 5, 10.0, deadlines=((10.0, 100.0),), job_type="strict"),
    SimJob("B", 0.0, 4, 10.0, deadlines=((10.0, 70.0),), job_type="strict"),
    SimJob("C", 0.0, 4, 10.0, deadlines=((10.0, 70.0),), job_type="strict"),
]


def _optimum() -> float:
    best = 0.0
    for k in range(len(JOBS) + 1):
        for subset in itertools.combinations(JOBS, k):
            if sum(j.gpus for j in subset) <= 8:
                best = max(best, sum(j.deadlines[0][1] for j in subset))
    return best


@pytest.mark.parametrize("mode", ["exact", "budget"])
def test_exact_lease_selection_runs_the_optimal_pair_in_the_first_term(mode: str) -> None:
    policy = Chronus(mode=mode, lease_length=10.0)
    out = simulate(Workload.of(JOBS, "t"), ClusterSpec.uniform(1, 8), policy)
    rows = by_id(out)
    assert _optimum() == 140.0
    assert policy.rewards[0] == (140.0, 140.0)  # objective and proven bound
    assert rows["B"][1] == rows["C"][1] == 10.0  # both meet their deadline
    assert rows["A"] == (10.0, 20.0, 0)  # A runs after, as best effort
    assert policy.fallbacks == 0
    stats = policy.stats()
    assert stats["terms"] == stats["proven_terms"] == 1.0
    assert stats["selected_reward"] == stats["reward_bound"] == 140.0


def test_greedy_lease_selection_takes_the_dense_job_and_misses_the_pair() -> None:
    policy = Chronus(mode="greedy", lease_length=10.0)
    out = simulate(Workload.of(JOBS, "t"), ClusterSpec.uniform(1, 8), policy)
    rows = by_id(out)
    assert policy.rewards[0][0] == 100.0
    assert rows["A"][1] == 10.0
    assert rows["B"][1] == rows["C"][1] == 20.0
    assert summarize(out)["deadline_miss_ratio"] == pytest.approx(2 / 3)


def test_selected_job_preempts_an_opportunistic_best_effort_job_at_the_term() -> None:
    # A best-effort job takes the whole server at t=0 (no SLO job yet); an SLO
    # job arrives at 1 and is selected at the next term (t=20): the best-effort
    # job is preempted then, the SLO job runs 20..30 and meets its deadline 45 (a whole term after 20:
    # a deadline the lease cannot reach in whole terms, like 35, is no selection).
    jobs = [
        SimJob("be", 0.0, 8, 100.0),
        SimJob("slo", 1.0, 8, 10.0, deadlines=((45.0, 100.0),), job_type="strict"),
    ]
    policy = Chronus(mode="greedy", lease_length=20.0)
    rows = by_id(simulate(Workload.of(jobs, "t"), ClusterSpec.uniform(1, 8), policy))
    assert rows["slo"][:2] == (20.0, 30.0)
    assert rows["be"] == (0.0, 110.0, 1)
