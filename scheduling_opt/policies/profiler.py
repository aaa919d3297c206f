"""Chronus Profiler estimates: runtime from two short runs, profiling capacity, submission control.

The Profiler runs every new job briefly on one node and on two, predicts its
iteration time on n nodes from the log2 model, sizes the Profiling cluster
so its queue stays stable, and caps each user's GPUs per profiling interval.
Chronus (SoCC '21) §3.2 (§3.2.1 submission control, §3.2.2 the runtime
model, §3.2.3 capacity) and §5.1 (24 GPUs per T_profile = 300 s). All
O(N log N) or better.

- :func:`iteration_time`: t_n = t_1 + log2(n) (t_2 - t_1), the analytic model
  t_n = t_c + log2(n) t_o measured on one node (t_1 = t_c) and two (t_2).
- :func:`profiling_capacity`: arrival rate lambda (GPUs submitted per second
  over the last window); stability needs C_profile >= lambda T_profile.
- :func:`submission_control`: at most ``limit`` GPUs per user per interval;
  later jobs wait for the next interval with room.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from scheduling_opt.errors import InvalidInstanceError
from scheduling_opt.policies._numbers import as_int, as_number, expect, unique_ids

#: §3.3.5 / §5.1: profiling time per job and BE lease length, seconds.
T_PROFILE = 300.0


def iteration_time(t1: float, t2: float, nodes: int) -> float:
    """Seconds per iteration on ``nodes`` nodes from the 1-node and 2-node times.

    Parameters
    ----------
    t1, t2 : float
        Measured seconds per iteration on one node and on two (> 0).
    nodes : int
        Nodes to predict for (>= 1).

    Returns
    -------
    float
        t_1 + log2(nodes) (t_2 - t_1).

    Raises
    ------
    InvalidInstanceError
        A time that is not finite and > 0, or ``nodes`` not an integer >= 1.

    Examples
    --------
    >>> round(iteration_time(0.2, 0.25, 4), 6)
    0.3

    References
    ----------
    Chronus (SoCC '21) §3.2.2.
    """
    a = as_number(t1, "t1")
    b = as_number(t2, "t2")
    if not (a > 0 and b > 0):
        raise InvalidInstanceError("t1", f"iteration times must be finite and > 0, got {t1}, {t2}")
    n = as_int(nodes, "nodes", 1)
    return a + math.log2(n) * (b - a)


def estimate_runtime(t1: float, t2: float, nodes: int, iterations: int) -> float:
    """Seconds to run ``iterations`` iterations on ``nodes`` nodes.

    Parameters
    ----------
    t1, t2 : float
        Seconds per iteration on one node and on two.
    nodes : int
        Nodes (>= 1).
    iterations : int
        Iterations left (>= 0).

    Returns
    -------
    float
        ``iterations * iteration_time(t1, t2, nodes)``.

    Raises
    ------
    InvalidInstanceError
        As :func:`iteration_time`, or ``iterations`` not an integer >= 0.

    Examples
    --------
    >>> round(estimate_runtime(0.2, 0.25, 8, 1000), 6)
    350.0

    References
    ----------
    Chronus (SoCC '21) §3.2.2.
    """
    k = as_int(iterations, "iterations", 0)
    return k * iteration_time(t1, t2, nodes)


@dataclass(frozen=True, slots=True)
class Submission:
    """A job submitted by ``user`` at ``time`` (seconds, >= 0) asking for ``gpus`` GPUs (>= 1)."""

    id: str
    user: str
    time: float
    gpus: int

    def __post_init__(self) -> None:
        for name in ("id", "user"):
            value = getattr(self, name)
            if not isinstance(value, str) or not value:
                raise InvalidInstanceError(name, f"must be a non-empty string, got {value!r}")
        object.__setattr__(self, "time", as_number(self.time, "time", 0))
        object.__setattr__(self, "gpus", as_int(self.gpus, "gpus", 1))


def profiling_capacity(
    submissions: Sequence[Submission],
    now: float,
    *,
    t_profile: float = T_PROFILE,
    window: float = 3600.0,
) -> int:
    """Lower bound on the Profiling cluster's GPUs: ceil(lambda T_profile).

    Parameters
    ----------
    submissions : sequence of Submission
        Past submissions.
    now : float
        The clock (seconds).
    t_profile : float, default 300
        Profiling time per job (> 0).
    window : float, default 3600
        Seconds over which lambda is measured (> 0; the paper updates hourly).

    Returns
    -------
    int
        ceil(lambda T_profile), lambda = GPUs submitted in (now - window, now]
        divided by ``window``.

    Raises
    ------
    InvalidInstanceError
        ``window`` or ``t_profile`` not > 0, ``now`` not finite.

    Examples
    --------
    >>> subs = [Submission(f"j{i}", "u", 60.0 * i, 4) for i in range(60)]
    >>> profiling_capacity(subs, now=3540.0)
    20

    References
    ----------
    Chronus (SoCC '21) §3.2.3.
    """
    t = as_number(now, "now")
    w = as_number(window, "window")
    tp = as_number(t_profile, "t_profile")
    if not w > 0 or not tp > 0:
        raise InvalidInstanceError("window", "window and t_profile must be > 0")
    gpus = sum(s.gpus for s in _submissions(submissions) if t - w < s.time <= t)
    return math.ceil(gpus / w * tp - 1e-9)


def _submissions(submissions: object) -> list[Submission]:
    if isinstance(submissions, (str, bytes)) or not isinstance(submissions, Iterable):
        raise InvalidInstanceError(
            "submissions", f"must be a sequence of Submission, got {type(submissions).__name__}"
        )
    return [expect(s, Submission, f"submissions[{i}]") for i, s in enumerate(submissions)]


def submission_control(
    submissions: Sequence[Submission], *, limit: int = 24, interval: float = T_PROFILE
) -> dict[str, float]:
    """When each job enters profiling: per user, at most ``limit`` GPUs per interval.

    Intervals are [m T, (m+1) T). A user's jobs, in submission order, enter
    in their own interval if the user's budget there allows, else at the
    start of the first later interval that does (first come, first served;
    a job larger than ``limit`` enters alone in an interval of its own).

    Parameters
    ----------
    submissions : sequence of Submission
        The submissions (unique ids).
    limit : int, default 24
        GPUs per user per interval (>= 1).
    interval : float, default 300
        T_profile, seconds (> 0).

    Returns
    -------
    dict of str to float
        Job id -> time it enters profiling.

    Raises
    ------
    InvalidInstanceError
        ``limit`` not an integer >= 1, ``interval`` not > 0, a repeated id.

    Examples
    --------
    >>> subs = [Submission("a", "u", 0, 16), Submission("b", "u", 10, 16)]
    >>> submission_control(subs)
    {'a': 0.0, 'b': 300.0}

    References
    ----------
    Chronus (SoCC '21) §3.2.1, §5.1.
    """
    cap = as_int(limit, "limit", 1)
    period = as_number(interval, "interval")
    if not period > 0:
        raise InvalidInstanceError("interval", f"must be > 0, got {interval!r}")
    submissions = _submissions(submissions)
    unique_ids((s.id for s in submissions), "submissions")
    used: dict[tuple[str, int], int] = {}
    last: dict[str, int] = {}
    release: dict[str, float] = {}
    for sub in sorted(submissions, key=lambda s: (s.time, s.id)):
        slot = max(math.floor(sub.time / period), last.get(sub.user, 0))
        while True:
            spent = used.get((sub.user, slot), 0)
            if spent + sub.gpus <= cap or spent == 0:
                break
            slot += 1
        used[(sub.user, slot)] = used.get((sub.user, slot), 0) + sub.gpus
        last[sub.user] = slot
        release[sub.id] = max(sub.time, slot * period)
    return release
