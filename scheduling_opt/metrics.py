"""Scheduling metrics: Chronus reward step functions, wDMR, job completion times.

Reward functions (Chronus §3.3.1, §4.1): a step function over completion
time, between ``RW_MIN`` = 1 and ``RW_MAX`` = 100. A strict SLO job earns 100
by its deadline, 1 after; a soft SLO job earns 100, 80, 50, 20 by ``D1``,
1.1 ``D1``, 1.2 ``D1``, 1.5 ``D1`` (then 1); a best-effort job always 1.

wDMR (Chronus §4.2, Eq. 9). The paper prints
``1/|J| sum (RW - RW_min) / (RW_max - RW_min)``, which is 1 when every
deadline is met: that is a hit rate, not a miss rate, and contradicts the
paper's own figures (its best wDMR is 5%). We use the miss rate
``1/|J| sum (RW_max - RW) / (RW_max - RW_min)``: 0 when every SLO job earns
the full reward, 1 when every one earns the minimum. Complexity: linear.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from scheduling_opt.model import Job, RewardStep

RW_MIN = 1.0
RW_MAX = 100.0
#: The line every report's header carries: where each of its terms is defined.
GLOSSARY_LINE = (
    "Terms and formulas (JCT, wDMR, SLO, utilization, gap, verdicts ...): "
    "docs/glossary.md of scheduling-opt."
)
#: §4.1: soft deadlines at these multiples of D1, with these rewards.
SOFT_FACTORS: tuple[float, ...] = (1.0, 1.1, 1.2, 1.5)
SOFT_REWARDS: tuple[float, ...] = (100.0, 80.0, 50.0, 20.0)


def strict_steps(deadline: float, reward: float = RW_MAX) -> tuple[RewardStep, ...]:
    """A strict SLO: ``reward`` by ``deadline`` (seconds), ``RW_MIN`` after."""
    return (RewardStep(deadline, reward),)


def soft_steps(
    first_deadline: float,
    factors: Sequence[float] = SOFT_FACTORS,
    rewards: Sequence[float] = SOFT_REWARDS,
) -> tuple[RewardStep, ...]:
    """A soft SLO (§4.1): deadlines ``factor * D1`` with decreasing rewards."""
    if len(factors) != len(rewards):
        raise ValueError("factors and rewards must have the same length")
    return tuple(RewardStep(f * first_deadline, v) for f, v in zip(factors, rewards, strict=True))


def reward_at(
    steps: Sequence[RewardStep], completion: float | None, floor: float = RW_MIN
) -> float:
    """The reward of finishing at ``completion`` (None: never): the first met step.

    A job finishing exactly at a deadline meets it. No steps (best effort) or a
    missed last step earns ``floor``.
    """
    if completion is None or math.isnan(completion):
        return floor
    for step in steps:
        if completion <= step.time:
            return step.reward
    return floor


def wdmr(rewards: Sequence[float], rw_min: float = RW_MIN, rw_max: float = RW_MAX) -> float:
    """Weighted deadline miss rate of SLO jobs earning ``rewards`` (0 = none missed)."""
    if not rw_max > rw_min:
        raise ValueError(f"rw_max ({rw_max}) must exceed rw_min ({rw_min})")
    if not rewards:
        return 0.0
    span = rw_max - rw_min
    return sum((rw_max - min(max(r, rw_min), rw_max)) / span for r in rewards) / len(rewards)


def job_wdmr(
    jobs: Sequence[Job],
    completions: Sequence[float | None],
    rw_min: float = RW_MIN,
    rw_max: float = RW_MAX,
) -> float:
    """wDMR of the SLO jobs (those with deadlines) among ``jobs``.

    ``completions[i]`` is job i's completion time in the same clock as its
    deadline steps (None: not finished). Best-effort jobs are not counted.
    """
    if len(jobs) != len(completions):
        raise ValueError("one completion time per job")
    rewards = [
        reward_at(job.deadlines, c, rw_min)
        for job, c in zip(jobs, completions, strict=True)
        if job.deadlines
    ]
    return wdmr(rewards, rw_min, rw_max)


def mean_jct(submits: Sequence[float], completions: Sequence[float]) -> float:
    """Average job completion time (completion - submission); 0 for no jobs."""
    if len(submits) != len(completions):
        raise ValueError("one completion time per submission")
    if not submits:
        return 0.0
    return sum(c - s for s, c in zip(submits, completions, strict=True)) / len(submits)
