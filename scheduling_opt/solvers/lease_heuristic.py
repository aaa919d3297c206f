"""Lease-selection heuristics: reward-density greedy, the paper's EDF baseline, hint repair.

- :func:`greedy`: jobs in three orders (reward per GPU-term, earliest first
  deadline, least slack); each job takes the best level whose deadline still
  has RL_i terms with room, placed as late as possible before it (keeping
  early terms for the jobs that need them); the best of the three
  schedules, compacted towards now. O(N log N + N P H) per order.
- :func:`edf`: earliest-deadline-first (Chronus §4.3 baseline): by first
  deadline, each job takes the earliest RL_i terms with room before its last
  deadline and earns the first deadline it meets. O(N log N + N H).
- :func:`repair`: turn a previous cycle's terms (a warm-start hint) into a
  feasible schedule of this cycle, then complete it greedily.

Chronus §3.3.4-§4.3.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

import numpy as np
from numpy.typing import NDArray

from scheduling_opt.solvers.lease_model import LeaseInput, LeaseJob, Schedule, compact, relevel

Order = Callable[[LeaseInput], list[int]]


def density_order(inp: LeaseInput) -> list[int]:
    """Best first reward per GPU-term first (ties: earlier deadline, id)."""

    def key(i: int) -> tuple[float, int, str]:
        job = inp.jobs[i]
        return (-job.levels[0].reward / (job.gpus * job.terms), job.levels[0].due, job.id)

    return sorted((i for i, j in enumerate(inp.jobs) if j.levels), key=key)


def deadline_order(inp: LeaseInput) -> list[int]:
    """Earliest first reachable deadline first (ties: id)."""
    return sorted(
        (i for i, j in enumerate(inp.jobs) if j.levels),
        key=lambda i: (inp.jobs[i].levels[0].due, inp.jobs[i].id),
    )


def slack_order(inp: LeaseInput) -> list[int]:
    """Least slack (first deadline minus terms needed) first."""
    return sorted(
        (i for i, j in enumerate(inp.jobs) if j.levels),
        key=lambda i: (inp.jobs[i].levels[0].due - inp.jobs[i].terms, inp.jobs[i].id),
    )


def _fit(
    job: LeaseJob, due: int, load: NDArray[np.int64], capacity: int, *, late: bool
) -> NDArray[np.int64] | None:
    room = np.flatnonzero(load[:due] + job.gpus <= capacity)
    if len(room) < job.terms:
        return None
    return room[-job.terms :] if late else room[: job.terms]


def place(
    inp: LeaseInput,
    order: Sequence[int],
    *,
    late: bool = True,
    start: Sequence[Sequence[int]] | None = None,
) -> list[list[int]]:
    """Terms per job after placing ``order`` (best level first) on top of ``start``."""
    held = [list(t) for t in start] if start is not None else [[] for _ in inp.jobs]
    load = np.zeros(max(inp.horizon, 1), dtype=np.int64)
    for job, terms in zip(inp.jobs, held, strict=True):
        load[terms] += job.gpus
    for i in order:
        job = inp.jobs[i]
        if held[i]:
            continue
        for level in job.levels:
            pick = _fit(job, level.due, load, inp.capacity, late=late)
            if pick is not None:
                load[pick] += job.gpus
                held[i] = [int(k) for k in pick]
                break
    return held


def greedy(inp: LeaseInput, start: Sequence[Sequence[int]] | None = None) -> Schedule:
    """The best of the three orders' as-late-as-possible schedules, compacted."""
    best: Schedule | None = None
    for order in (density_order, deadline_order, slack_order):
        schedule = compact(inp, relevel(inp, place(inp, order(inp), start=start)))
        if best is None or _better(inp, schedule, best):
            best = schedule
    assert best is not None
    return best


def _better(inp: LeaseInput, a: Schedule, b: Schedule) -> bool:
    if inp.require_all and a.complete() != b.complete():
        return a.complete()
    return a.reward(inp) > b.reward(inp) + 1e-9


def edf(inp: LeaseInput) -> Schedule:
    """Earliest deadline first, each job as early as possible (the paper's baseline)."""
    held = [[] for _ in inp.jobs]  # type: list[list[int]]
    load = np.zeros(max(inp.horizon, 1), dtype=np.int64)
    for i in deadline_order(inp):
        job = inp.jobs[i]
        pick = _fit(job, job.last_due, load, inp.capacity, late=False)
        if pick is not None:
            load[pick] += job.gpus
            held[i] = [int(k) for k in pick]
    return relevel(inp, held)


def repair(inp: LeaseInput, hint: Mapping[str, Sequence[int]]) -> Schedule:
    """A feasible schedule close to ``hint`` (job id -> terms), completed greedily.

    Hinted jobs, most urgent first, keep the hinted terms that are still
    useful and fit (at most RL_i of them), top up with the latest free terms
    before their last deadline, and are dropped if that fails.
    """
    index = {job.id: i for i, job in enumerate(inp.jobs)}
    held: list[list[int]] = [[] for _ in inp.jobs]
    load = np.zeros(max(inp.horizon, 1), dtype=np.int64)
    hinted = [(index[j], sorted(set(t))) for j, t in hint.items() if j in index and t]
    hinted.sort(key=lambda it: (max(it[1]), inp.jobs[it[0]].id))
    for i, wanted in hinted:
        job = inp.jobs[i]
        if not job.levels:
            continue
        keep = [k for k in wanted if 0 <= k < job.last_due and load[k] + job.gpus <= inp.capacity][
            : job.terms
        ]
        load[keep] += job.gpus
        extra = job.terms - len(keep)
        if extra:
            room = [
                int(k)
                for k in np.flatnonzero(load[: job.last_due] + job.gpus <= inp.capacity)
                if int(k) not in keep
            ]
            if len(room) < extra:
                load[keep] -= job.gpus
                continue
            keep += room[-extra:]
            load[room[-extra:]] += job.gpus
        held[i] = sorted(keep)
    return greedy(inp, start=relevel(inp, held).terms)
