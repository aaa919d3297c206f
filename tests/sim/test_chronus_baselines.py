"""Hand-computed schedules for Chronus §4.3's baselines: edf, yarn-cs-slo, genie, themis, 3sigma.

One server of 8 GPUs unless said. Each test works out the expected start
and end times in its docstring from the rules in the policies' module
docstrings (sim/policies/baselines/deadline.py, sim/policies/baselines/nonpreemptive.py, sim/policies/baselines/themis.py,
sim/policies/baselines/three_sigma.py); times in minutes.
"""

from __future__ import annotations

import numpy as np
import pytest

from scheduling_opt.scaling import TableModel
from scheduling_opt.sim import ClusterSpec, SimJob, SpeedModel, Workload, make_policy, simulate
from scheduling_opt.sim.policies.baselines.nonpreemptive import class_quotas
from scheduling_opt.sim.policies.baselines.themis import fair_allocation, isolated_fractions
from tests.sim.helpers import by_id, job, run

# ------------------------------------------------------------------ edf


def test_edf_slo_job_preempts_a_best_effort_job() -> None:
    """J0 (best effort, 8 GPUs, 10 min) runs from 0; J2 (SLO, due 20) comes at 2.

    edf: J2 preempts J0 at 2 and runs 2..7; J0 resumes at 7 with 8 left:
    7..15; J1 (best effort, t=1) waits behind it: 15..25.
    edf-np (no preemption): J0 0..10, J2 10..15 (SLO first), J1 15..25.
    """
    jobs = [job(0, 0, 8, 10), job(1, 1, 8, 10), job(2, 2, 8, 5, deadline=20)]
    assert by_id(run(jobs, "edf")) == {"0": (0, 15, 1), "1": (15, 25, 0), "2": (2, 7, 0)}
    assert by_id(run(jobs, "edf-np")) == {"0": (0, 10, 0), "1": (15, 25, 0), "2": (10, 15, 0)}


def test_edf_never_preempts_an_slo_job() -> None:
    """J0 (SLO, due 100) holds the server 0..10; J1 (SLO, due 8, earlier) comes at 2.

    An SLO job never preempts another: J1 waits to 10 and runs 10..15, missing 8.
    """
    jobs = [job(0, 0, 8, 10, deadline=100), job(1, 2, 8, 5, deadline=8)]
    assert by_id(run(jobs, "edf")) == {"0": (0, 10, 0), "1": (10, 15, 0)}


def test_edf_best_effort_never_preempts() -> None:
    """Two best-effort jobs: J1 (t=1) waits for J0 (0..10): 10..15."""
    jobs = [job(0, 0, 8, 10), job(1, 1, 8, 5)]
    assert by_id(run(jobs, "edf")) == {"0": (0, 10, 0), "1": (10, 15, 0)}


def test_edf_preempts_the_latest_submitted_best_effort_job() -> None:
    """J0 (t=0) and J1 (t=1), best effort, 4 GPUs each for 10; J2 (SLO, 4 GPUs, 3) at 2.

    The victim is the latest submitted best-effort job, J1: J2 runs 2..5; J1
    resumes at 5 with 9 left: 5..14; J0 is untouched: 0..10.
    """
    jobs = [job(0, 0, 4, 10), job(1, 1, 4, 10), job(2, 2, 4, 3, deadline=10)]
    assert by_id(run(jobs, "edf")) == {"0": (0, 10, 0), "1": (1, 14, 1), "2": (2, 5, 0)}


# ------------------------------------------------------------------ yarn-cs-slo


def test_class_quotas_follow_the_ratio_of_slo_to_best_effort_jobs() -> None:
    """3 SLO jobs and 1 best-effort job share 8 GPUs 3:1: 6 and 2 (exact, no remainder)."""
    jobs = [job(0, 0, 6, 10, deadline=50), job(1, 1, 4, 5, deadline=50), job(2, 2, 2, 5)]
    jobs.append(job(3, 20, 1, 1, deadline=50))
    assert class_quotas(Workload.of(jobs, "t"), 8) == {"best-effort": 2, "slo": 6}


def test_yarn_cs_slo_serves_best_effort_within_its_quota() -> None:
    """Quotas SLO 6, best effort 2 (the 3:1 ratio above).

    t=0: A (SLO, 6 GPUs) starts within the SLO quota. t=1: B (SLO, 4) is over
    its quota (6 + 4 > 6) and the 2 idle GPUs cannot hold it. t=2: C (best
    effort, 2) is within its quota and fits: 2..7 (FIFO keeps it behind B).
    t=10: A ends, B 10..15. D (t=20) 20..21.
    FIFO (and yarn-cs, one tenant here): A 0..10, B 10..15, C 10..15.
    """
    jobs = [job(0, 0, 6, 10, deadline=50), job(1, 1, 4, 5, deadline=50), job(2, 2, 2, 5)]
    jobs.append(job(3, 20, 1, 1, deadline=50))
    got = by_id(run(jobs, "yarn-cs-slo"))
    assert got == {"0": (0, 10, 0), "1": (10, 15, 0), "2": (2, 7, 0), "3": (20, 21, 0)}
    assert by_id(run(jobs, "fifo"))["2"] == (10, 15, 0)


# ------------------------------------------------------------------ genie


def test_genie_orders_slo_jobs_by_laxity_not_deadline() -> None:
    """J0 (best effort) holds the server 0..10. J1 (due 21, 1 min) and J2 (due 22, 11 min).

    Laxity keys d - work: J1 20, J2 11: GENIE runs J2 10..21 (met), J1 21..22
    (missed). EDF order runs J1 10..11, J2 11..22. J3 (best effort, t=0.5)
    comes last under both: 22..23.
    """
    jobs = [
        job(0, 0, 8, 10),
        job(3, 0.5, 8, 1),
        job(1, 1, 8, 1, deadline=21),
        job(2, 2, 8, 11, deadline=22),
    ]
    got = by_id(run(jobs, "genie"))
    assert got == {"0": (0, 10, 0), "1": (21, 22, 0), "2": (10, 21, 0), "3": (22, 23, 0)}
    np_ = by_id(run(jobs, "edf-np"))
    assert (np_["1"], np_["2"], np_["3"]) == ((10, 11, 0), (11, 22, 0), (22, 23, 0))


def _spread_case(deadline: float) -> dict[str, tuple[float, float, int]]:
    # 2 servers x 8: J0 and J1 (best effort, 6 GPUs, 100 min) leave 2 + 2 GPUs;
    # J2 (SLO, 4 GPUs, model "m", 10 min) comes at 1. Table: 4 GPUs on 2 servers
    # run at half speed.
    jobs = [job(0, 0, 6, 100), job(1, 0, 6, 100), job(2, 1, 4, 10, deadline=deadline, model="m")]
    w = Workload.of(jobs, "t")
    c = ClusterSpec.uniform(2, 8)
    speed = SpeedModel(TableModel({"m": {4: {1: 1.0, 2: 0.5}}}), 8)
    return by_id(simulate(w, c, make_policy("genie", w, c), speed=speed))


def test_genie_spreads_an_slo_job_when_its_deadline_still_holds() -> None:
    """No server has 4 GPUs free at t=1; spread over 2 + 2 at half speed, J2 ends 1 + 20 = 21.

    Due 30: 21 <= 30, so it starts spread at 1. Due 20: 21 > 20, so it waits
    for a consolidated placement: J0 and J1 end at 100, J2 runs 100..110.
    """
    assert _spread_case(30.0)["2"] == (1, 21, 0)
    assert _spread_case(20.0)["2"] == (100, 110, 0)


# ------------------------------------------------------------------ themis


def test_isolated_share_is_water_filling() -> None:
    """16 GPUs over jobs of 2, 8, 8, 8: s = (16 - 2) / 3 = 14/3 for the 8-GPU jobs."""
    x = isolated_fractions(np.array([2, 8, 8, 8]), 16)
    assert x.tolist() == pytest.approx([1.0, 14 / 24, 14 / 24, 14 / 24])


def test_fair_allocation_equalizes_rho() -> None:
    """One 8-GPU server, two 8-GPU jobs at t = 6: J0 ran 6 (14 left), J1 waited 5 (20 left).

    x_iso = 0.5 each: T_id = 6 + 28 = 34 and 5 + 40 = 45. rho at x_iso is 1 for
    both and their needs 14/(34 - 6) + 20/(45 - 5) = 0.5 + 0.5 fill the server:
    rho* = 1, x = (0.5, 0.5); any rho < 1 needs more than 8 GPUs.
    """
    x, rho = fair_allocation(np.array([8, 8]), np.array([6.0, 5.0]), np.array([14.0, 20.0]), 8)
    assert rho == pytest.approx(1.0, rel=1e-6)
    assert x.tolist() == pytest.approx([0.5, 0.5], rel=1e-6)


def test_themis_time_shares_in_six_minute_rounds() -> None:
    """J0 (t=0) and J1 (t=1), 8 GPUs, 20 min each; rounds at 0, 6, 12, ...

    Each round x = (0.5, 0.5) (the test above); priority = x / share of time run.
    - 0: J0 alone starts. 1: J1 waits (no GPUs between rounds).
    - 6: J0 ran 6/6 (0.5), J1 0/5 (inf): J1 runs, J0 preempted (14 left).
    - 12: J0 ran 6/12 (1.0), J1 6/11 (0.917): J0 back, J1 preempted (14 left).
    - 18: J0 12/18 (0.75), J1 6/17 (1.417): J1; J0 has 8 left.
    - 24: J0 12/24 (1.0), J1 12/23 (0.958): J0; J1 has 8 left.
    - 30: J0 18/30 (0.833), J1 12/29 (1.208): J1; J0 has 2 left.
    - 36: J0 18/36 (1.0), J1 18/35 (0.972): J0 36..38; J1 has 2 left.
    - 38: J0 ends; between rounds J1 takes the free GPUs: 38..40.
    Each job is preempted three times (J0 at 6, 18, 30; J1 at 12, 24, 36).
    """
    jobs = [job(0, 0, 8, 20), job(1, 1, 8, 20)]
    assert by_id(run(jobs, "themis")) == {"0": (0, 38, 3), "1": (6, 40, 3)}


def test_themis_fills_freed_gpus_between_rounds() -> None:
    """J0 (8 GPUs, 2 min) from 0; J1 (8 GPUs, 3 min) at 1 waits; J0 ends at 2 and J1 starts then."""
    jobs = [job(0, 0, 8, 2), job(1, 1, 8, 3)]
    assert by_id(run(jobs, "themis")) == {"0": (0, 2, 0), "1": (2, 5, 0)}


# ------------------------------------------------------------------ 3sigma


def test_three_sigma_reserves_gpus_for_an_slo_job() -> None:
    """J0 (best effort, 4 GPUs) runs 0..10. At 1: J1 (SLO, 8 GPUs, 5 min, due 16), J2 (best effort, 4, 20).

    Plan at 1: start times 1, 6 (J1's end if started now), 10 (J0's end), 21
    (J2's); capacity 4, 4, 8, 8; H = 20 + 20 + 1 = 41. J1 fits only from 10 and
    meets 16 only there (ends 15): 100 + 1 - 14/41. J2 started at 1, 6 or 10
    would hold 4 GPUs at 10, so J1 could not start; at 21 it adds 1 - 40/41.
    The optimum starts nothing at 1 (J1 at 10, J2 at 21): the server is kept
    for J1. J1 10..15; at 15 the plan starts J2 (everything fits): 15..35.
    edf-np starts J2 at 1 (it fits) and J1 only at 21: 21..26, missing 16.
    """
    jobs = [job(0, 0, 4, 10), job(1, 1, 8, 5, deadline=16), job(2, 1, 4, 20)]
    got = by_id(run(jobs, "3sigma"))
    assert got == {"0": (0, 10, 0), "1": (10, 15, 0), "2": (15, 35, 0)}
    assert by_id(run(jobs, "edf-np"))["1"] == (21, 26, 0)


def test_three_sigma_starts_only_at_its_cycle() -> None:
    """Cycle 1 minute: a job arriving at 0.5 on an idle server starts at 1.0: 1..3.

    GPUs freed between ticks wait for the next one: J0 ends at 10.3, J1 (t=1)
    starts at 11 and ends 13. A cycle of 0.25 starts the first job at 0.5.
    """
    assert by_id(run([job(0, 0.5, 1, 2)], "3sigma")) == {"0": (1, 3, 0)}
    got = by_id(run([job(0, 0, 8, 10.3), job(1, 1, 8, 2)], "3sigma"))
    assert got == {"0": (0, 10.3, 0), "1": (11, 13, 0)}
    assert by_id(run([job(0, 0.5, 1, 2)], "3sigma", cycle=0.25)) == {"0": (0.5, 2.5, 0)}


def test_three_sigma_prefers_the_job_that_meets_its_deadline() -> None:
    """Two SLO jobs want the whole server at 0: J0 (10 min, due 50), J1 (10 min, due 12).

    Start times 0 and 10 (either job's end), H = 10 + 10 + 1 = 21. J1 at 0 and
    J0 at 10 meet both: 2 x 100 + (1 - 10/21) + (1 - 20/21); J0 at 0 and J1 at
    10 meet only J0's. J1 runs 0..10, and the plan at 10 starts J0: 10..20.
    """
    jobs = [job(0, 0, 8, 10, deadline=50), job(1, 0, 8, 10, deadline=12)]
    assert by_id(run(jobs, "3sigma")) == {"0": (10, 20, 0), "1": (0, 10, 0)}


@pytest.mark.slow  # 10 s; the hand-computed 3sigma schedules above stay in the default run
def test_three_sigma_node_budget_keeps_runs_identical() -> None:
    """The same workload twice gives the same schedule (a node budget, not the clock)."""
    jobs = [
        SimJob(str(i), float(i % 7), 1 + i % 8, 3.0 + (i * 7) % 11, deadlines=((30.0 + i, 100.0),))
        for i in range(40)
    ]
    a = run(jobs, "3sigma", servers=2, node_limit=50)
    b = run(jobs, "3sigma", servers=2, node_limit=50)
    assert a.first_start == b.first_start
    assert a.end == b.end
