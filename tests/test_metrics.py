"""wDMR (Chronus Eq. 9, as a miss rate) and the §4.1 reward step functions."""

from __future__ import annotations

import pytest

from scheduling_opt.metrics import (
    job_wdmr,
    mean_jct,
    reward_at,
    soft_steps,
    strict_steps,
    wdmr,
)
from scheduling_opt.model import Job, RewardStep


def test_paper_reward_functions() -> None:
    soft = soft_steps(1000.0)
    assert soft == (
        RewardStep(1000.0, 100),
        RewardStep(1100.0, 80),
        RewardStep(1200.0, 50),
        RewardStep(1500.0, 20),
    )
    assert [reward_at(soft, t) for t in (0, 1000, 1000.5, 1150, 1500, 1501)] == [
        100,
        100,
        80,
        50,
        20,
        1,
    ]
    assert reward_at(strict_steps(60.0), 61.0) == 1
    assert reward_at(strict_steps(60.0), None) == 1  # never finished
    assert reward_at((), 5.0) == 1  # best effort: always RW_min


def test_wdmr_is_a_miss_rate() -> None:
    assert wdmr([100, 100]) == 0.0
    assert wdmr([1, 1, 1]) == 1.0
    assert wdmr([100, 1, 50.5]) == pytest.approx((0 + 1 + 0.5) / 3)
    assert wdmr([]) == 0.0
    assert wdmr([10, 0], rw_min=0, rw_max=10) == 0.5
    with pytest.raises(ValueError, match="must exceed"):
        wdmr([1], rw_min=5, rw_max=5)


def test_job_wdmr_counts_slo_jobs_only() -> None:
    jobs = [
        Job("s", 1, 1, 10.0, deadlines=strict_steps(100.0)),
        Job("f", 1, 1, 10.0, deadlines=soft_steps(100.0)),
        Job("be", 1, 1, 10.0),
    ]
    # s misses (1), f finishes at 115 (50), best effort ignored
    assert job_wdmr(jobs, [150.0, 115.0, 3.0]) == pytest.approx((1 + 50 / 99) / 2)
    assert mean_jct([0.0, 10.0], [5.0, 25.0]) == 10.0
