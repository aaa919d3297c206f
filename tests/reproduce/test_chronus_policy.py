"""Chronus in the simulator: a lease term whose selection is the MILP's optimum (§3.3.4)."""

from __future__ import annotations

import itertools

import pytest

from scheduling_opt.sim import (
    ClusterSpec,
    SimJob,
    SpeedModel,
    Workload,
    bundled_table,
    simulate,
    summarize,
)
from scheduling_opt.sim.policies.chronus.policy import Chronus
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
    # Admission off: every job enters the selection (admission would take A, first in
    # order); best-fit placement: A is charged its 5 GPUs, not Eq. (6)'s 8.
    policy = Chronus(mode=mode, lease_length=10.0, admission=False, placement="best-fit")
    out = simulate(Workload.of(JOBS, "t"), ClusterSpec.uniform(1, 8), policy)
    rows = by_id(out)
    assert _optimum() == 140.0
    assert policy.selection.tally.rewards[0] == (140.0, 140.0)  # objective and proven bound
    assert rows["B"][1] == rows["C"][1] == 10.0  # both meet their deadline
    assert rows["A"] == (10.0, 20.0, 0)  # A runs after, as best effort
    assert policy.selection.tally.fallbacks == 0
    stats = policy.stats()
    assert stats["terms"] == stats["proven_terms"] == 1.0
    assert stats["selected_reward"] == stats["reward_bound"] == 140.0


def test_greedy_lease_selection_takes_the_dense_job_and_misses_the_pair() -> None:
    policy = Chronus(mode="greedy", lease_length=10.0, admission=False, placement="best-fit")
    out = simulate(Workload.of(JOBS, "t"), ClusterSpec.uniform(1, 8), policy)
    rows = by_id(out)
    assert policy.selection.tally.rewards[0][0] == 100.0
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


# ----------------------------------------------------------------- admission control (§3.3.2)

# One 8-GPU server, 10-minute terms. A, B, C (4 GPUs, 10 minutes each, all due
# at 10) arrive at the first term's start: A + B = 8 GPUs fit the only term
# before 10; C would make 12 > 8 in that term, so no schedule meets every
# deadline: C is rejected, served as best effort (20..30, missing 10). D
# (8 GPUs, 10 minutes, due 30) arrives mid-term at 5: counted from the next
# term (10), it needs 1 term before floor((30 - 10) / 10) = 2, and the
# guaranteed schedule holds nothing after term 0: admitted by the quick
# test, it runs 10..20 ahead of C.
ADMISSION = [
    SimJob(j, 0.0, 4, 10.0, deadlines=((10.0, 100.0),), job_type="strict") for j in "ABC"
] + [SimJob("D", 5.0, 8, 10.0, deadlines=((30.0, 100.0),), job_type="strict")]


@pytest.mark.parametrize("mode", ["greedy", "budget", "exact"])
def test_admission_rejects_the_arrival_no_schedule_can_add_and_serves_it_as_best_effort(
    mode: str,
) -> None:
    policy = Chronus(mode=mode, lease_length=10.0)
    rows = by_id(simulate(Workload.of(ADMISSION, "t"), ClusterSpec.uniform(1, 8), policy))
    assert rows["A"][:2] == rows["B"][:2] == (0.0, 10.0)
    assert rows["D"][:2] == (10.0, 20.0)
    assert rows["C"][:2] == (20.0, 30.0)  # rejected: after every guaranteed job
    stats = policy.stats()
    assert (stats["admitted"], stats["rejected"], stats["admitted_quick"]) == (3.0, 1.0, 1.0)


def test_without_admission_the_job_enters_the_selection_instead() -> None:
    policy = Chronus(mode="greedy", lease_length=10.0, admission=False)
    simulate(Workload.of(ADMISSION, "t"), ClusterSpec.uniform(1, 8), policy)
    stats = policy.stats()
    assert (stats["admitted"], stats["rejected"]) == (0.0, 0.0)
    # Two of A, B, C selected at the first term.
    assert policy.selection.tally.rewards[0][0] == 200.0


# ---------------------------------------------------------------------- placement (§3.4)

# Two 8-GPU servers, 20-minute terms. Best-effort p (6 GPUs, 100 minutes)
# and q (6 GPUs, 10 minutes) start at 0, one per server (2 GPUs free on
# each). At 1 the SLO job r (4 GPUs, resnet101, 30 minutes, due 200) arrives
# and is admitted. The simulator's best fit needs 4 free GPUs on one server:
# r waits for q and runs 10..40. Local search places it on 2 + 2 GPUs at
# once, RW = 4 x 0.969122665600673 (model_info.json: resnet101, 4 GPUs on 2
# nodes) > 0 for waiting, so r runs from 1 at that speed; when q ends (10)
# the spread job moves onto s1 (4 of its 8 free GPUs), full speed: work done
# 9 x 0.969122665600673 = 8.722103990406057, end 10 + 30 - 8.722... = 31.28.
PLACEMENT = [
    SimJob("p", 0.0, 6, 100.0),
    SimJob("q", 0.0, 6, 10.0),
    SimJob("r", 1.0, 4, 30.0, model="resnet101", deadlines=((200.0, 100.0),), job_type="strict"),
]


def _placement_run(placement: str) -> tuple[dict[str, tuple[float, float, int]], Chronus]:
    policy = Chronus(mode="greedy", placement=placement)
    speed = SpeedModel(bundled_table(), 8)
    out = simulate(Workload.of(PLACEMENT, "t"), ClusterSpec.uniform(2, 8), policy, speed=speed)
    return by_id(out), policy


def test_local_search_spreads_a_job_best_fit_leaves_waiting_then_consolidates_it() -> None:
    ours, policy = _placement_run("chronus")
    best_fit, _ = _placement_run("best-fit")
    assert best_fit["r"][:2] == (10.0, 40.0)
    assert ours["r"][0] == 1.0
    assert ours["r"][1] == pytest.approx(10.0 + 30.0 - 9 * 0.969122665600673, abs=1e-9)
    stats = policy.stats()
    assert (stats["spread_starts"], stats["consolidated_moves"]) == (1.0, 1.0)
