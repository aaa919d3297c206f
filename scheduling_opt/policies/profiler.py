"""Chronus Profiler estimates (§3.2): runtime from two short runs, profiling capacity, submission control.

- :func:`iteration_time`: t_n = t_1 + log2(n) (t_2 - t_1), the analytic model
  t_n = t_c + log2(n) t_o measured on one node (t_1 = t_c) and two (t_2).
- :func:`profiling_capacity`: the Profiling cluster is a queue with arrival
  rate lambda (GPUs submitted per second over the last window); stability
  needs C_profile >= lambda T_profile (§3.2.3; updated hourly in the paper).
- :func:`submission_control`: at most ``limit`` GPUs per user per interval
  (§5.1: 24 GPUs per T_profile = 300 s); later jobs wait for the next
  interval with room (§3.2.1).

All O(N log N) or better.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from scheduling_opt.errors import InvalidInstanceError

#: §3.3.5 / §5.1: profiling time per job and BE lease length, seconds.
T_PROFILE = 300.0


def iteration_time(t1: float, t2: float, nodes: int) -> float:
    """Seconds per iteration on ``nodes`` nodes from the 1-node and 2-node times."""
    if not (t1 > 0 and t2 > 0 and math.isfinite(t1) and math.isfinite(t2)):
        raise InvalidInstanceError("t1", f"iteration times must be finite and > 0, got {t1}, {t2}")
    if nodes < 1:
        raise InvalidInstanceError("nodes", f"must be >= 1, got {nodes}")
    return t1 + math.log2(nodes) * (t2 - t1)


def estimate_runtime(t1: float, t2: float, nodes: int, iterations: int) -> float:
    """Seconds to run ``iterations`` iterations on ``nodes`` nodes."""
    if iterations < 0:
        raise InvalidInstanceError("iterations", f"must be >= 0, got {iterations}")
    return iterations * iteration_time(t1, t2, nodes)


@dataclass(frozen=True, slots=True)
class Submission:
    """A job submitted by ``user`` at ``time`` (seconds) asking for ``gpus`` GPUs."""

    id: str
    user: str
    time: float
    gpus: int


def profiling_capacity(
    submissions: Sequence[Submission],
    now: float,
    *,
    t_profile: float = T_PROFILE,
    window: float = 3600.0,
) -> int:
    """Lower bound on the Profiling cluster's GPUs: ceil(lambda T_profile).

    lambda = GPUs submitted in (now - window, now] divided by ``window``.
    """
    if not window > 0 or not t_profile > 0:
        raise InvalidInstanceError("window", "window and t_profile must be > 0")
    gpus = sum(s.gpus for s in submissions if now - window < s.time <= now)
    return math.ceil(gpus / window * t_profile - 1e-9)


def submission_control(
    submissions: Sequence[Submission], *, limit: int = 24, interval: float = T_PROFILE
) -> dict[str, float]:
    """When each job enters profiling: per user, at most ``limit`` GPUs per interval.

    Intervals are [m T, (m+1) T). A user's jobs, in submission order, enter
    in their own interval if the user's budget there allows, else at the
    start of the first later interval that does (first come, first served;
    a job larger than ``limit`` enters alone in an interval of its own).
    """
    if limit < 1 or not interval > 0:
        raise InvalidInstanceError("limit", "limit must be >= 1 and interval > 0")
    used: dict[tuple[str, int], int] = {}
    last: dict[str, int] = {}
    release: dict[str, float] = {}
    for sub in sorted(submissions, key=lambda s: (s.time, s.id)):
        slot = max(math.floor(sub.time / interval), last.get(sub.user, 0))
        while True:
            spent = used.get((sub.user, slot), 0)
            if spent + sub.gpus <= limit or spent == 0:
                break
            slot += 1
        used[(sub.user, slot)] = used.get((sub.user, slot), 0) + sub.gpus
        last[sub.user] = slot
        release[sub.id] = max(sub.time, slot * interval)
    return release
