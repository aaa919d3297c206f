"""Reward-density greedy lease selection, with warm-start repair of a previous cycle's terms.

Jobs in three orders (reward per GPU-term, earliest first deadline, least
slack); each job takes the best level whose deadline still has RL_i terms
with room, placed as late as possible before it (keeping early terms for the
jobs that need them); the best of the three schedules, compacted towards now.
Chronus §3.3.4 (the problem); the greedy is ours. O(N log N + N P H) per order
for N jobs, P deadline steps and H terms.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence

import numpy as np

from scheduling_opt.lease._schedule import (
    Schedule,
    compact,
    heuristic_solution,
    load_of,
    relevel,
)
from scheduling_opt.lease.model import LeaseDecision, LeaseInput
from scheduling_opt.solution import Seed, Solution, named

__all__ = ["Hint", "greedy", "greedy_schedule", "repair"]

#: A warm start: job id -> the terms it held (e.g. ``hint_terms`` of the last cycle).
Hint = Mapping[str, Sequence[int]]
Order = Callable[[LeaseInput], list[int]]


def density_order(inp: LeaseInput) -> list[int]:
    """Best first reward per GPU-term first (ties: earlier deadline, id)."""
    jobs = inp.lease_jobs

    def key(i: int) -> tuple[float, int, str]:
        job = jobs[i]
        return (-job.levels[0].reward / (job.gpus * job.terms), job.levels[0].due, job.id)

    return sorted((i for i, j in enumerate(jobs) if j.levels), key=key)


def deadline_order(inp: LeaseInput) -> list[int]:
    """Earliest first reachable deadline first (ties: id)."""
    jobs = inp.lease_jobs
    return sorted(
        (i for i, j in enumerate(jobs) if j.levels),
        key=lambda i: (jobs[i].levels[0].due, jobs[i].id),
    )


def slack_order(inp: LeaseInput) -> list[int]:
    """Least slack (first deadline minus terms needed) first."""
    jobs = inp.lease_jobs
    return sorted(
        (i for i, j in enumerate(jobs) if j.levels),
        key=lambda i: (jobs[i].levels[0].due - jobs[i].terms, jobs[i].id),
    )


def place(
    inp: LeaseInput, order: Sequence[int], *, start: Sequence[Sequence[int]] | None = None
) -> list[list[int]]:
    """Terms per job after placing ``order`` (best level first, late) on top of ``start``.

    Each job takes, for its first level that has them, the latest RL_i terms
    before the level's deadline with room for its GPUs (:func:`fit` with
    ``late``), scanned downwards in plain lists: O(N P H).
    """
    capacity = inp.capacity
    jobs = inp.lease_jobs
    if start is None and sum(jobs[i].gpus for i in order) <= capacity:
        # Every term has room for all of them at once: each takes the last
        # RL_i terms before its first level's deadline (what the scan finds).
        held: list[list[int]] = [[] for _ in jobs]
        for i in order:
            job = jobs[i]
            if not held[i] and job.levels:
                due = job.levels[0].due
                held[i] = list(range(due - job.terms, due))
        return held
    held = [list(t) for t in start] if start is not None else [[] for _ in inp.lease_jobs]
    load = load_of(inp, held).tolist()
    for i in order:
        if held[i]:
            continue
        job = jobs[i]
        room = capacity - job.gpus  # a term has room when its load is at most this
        for level in job.levels:
            pick: list[int] = []
            for k in range(level.due - 1, -1, -1):
                if load[k] <= room:
                    pick.append(k)
                    if len(pick) == job.terms:
                        break
            if len(pick) == job.terms:
                pick.reverse()
                for k in pick:
                    load[k] += job.gpus
                held[i] = pick
                break
    return held


def _better(inp: LeaseInput, a: Schedule, b: Schedule) -> bool:
    if inp.require_all and a.complete() != b.complete():
        return a.complete()
    return a.reward(inp) > b.reward(inp) + 1e-9


def greedy_schedule(inp: LeaseInput, start: Sequence[Sequence[int]] | None = None) -> Schedule:
    """The best of the three orders' as-late-as-possible schedules, compacted."""
    best = _greedy(inp, start, complete_only=False)
    assert best is not None
    return best


def complete_greedy(inp: LeaseInput) -> Schedule | None:
    """:func:`greedy_schedule` when it gives every job a level, else None (admission's question).

    An incomplete schedule is never compacted here: compaction keeps every
    level it is given and gives none to a rejected job, so it cannot make
    a schedule complete, and under ``require_all`` a complete schedule
    beats every incomplete one (:func:`_better`). The answer is
    :func:`greedy_schedule`'s, for less work when some order fails
    (tests/lease/test_schedule_equivalence.py). O(N log N + N P H).

    Parameters
    ----------
    inp : LeaseInput
        The jobs, M and T_l.

    Returns
    -------
    Schedule or None
        The greedy's (compacted) schedule if every job meets a deadline in it.

    Examples
    --------
    >>> from scheduling_opt.model import Job, RewardStep
    >>> jobs = [Job(j, 4, 4, 1200.0, deadlines=(RewardStep(2400.0, 1),)) for j in "abc"]
    >>> complete_greedy(LeaseInput(jobs[:2], 4, 1200.0)).terms  # a placed late, b before it
    ((1,), (0,))
    >>> complete_greedy(LeaseInput(jobs, 4, 1200.0)) is None
    True
    """
    return _greedy(inp, None, complete_only=True)


def _greedy(
    inp: LeaseInput, start: Sequence[Sequence[int]] | None, *, complete_only: bool
) -> Schedule | None:
    best: Schedule | None = None
    settled = False  # best is compacted (else compacting it changes no level)
    for order in (density_order, deadline_order, slack_order):
        raw = relevel(inp, place(inp, order(inp), start=start))
        if not raw.complete() and (
            complete_only or (inp.require_all and best is not None and best.complete())
        ):
            # Compaction keeps (in)completeness, and under require_all an
            # incomplete schedule never beats a complete one: skip its compaction.
            continue
        # Compaction only moves terms earlier, so a job at its first level
        # stays there and a rejected one stays rejected: when every job is
        # so, the compacted schedule has raw's levels and reward, and it is
        # compacted only if it wins.
        lazy = all(pos is None or pos == 0 for pos in raw.levels)
        schedule = raw if lazy else compact(inp, raw)
        if best is None or _better(inp, schedule, best):
            best, settled = schedule, not lazy
            if lazy and schedule.complete():
                # Every job at its first level: the most any schedule earns
                # (rewards do not increase with later levels), so no later
                # order is better (_better wants strictly more).
                break
    if best is not None and not settled:
        best = compact(inp, best)
    return best


def repair(inp: LeaseInput, hint: Hint) -> Schedule:
    """A feasible schedule close to ``hint`` (job id -> terms), completed greedily.

    Hinted jobs, most urgent first, keep the hinted terms that are still
    useful and fit (at most RL_i of them), top up with the latest free terms
    before their last deadline, and are dropped if that fails.
    """
    jobs = inp.lease_jobs
    index = {job.id: i for i, job in enumerate(jobs)}
    held: list[list[int]] = [[] for _ in jobs]
    load = np.zeros(max(inp.horizon, 1), dtype=np.int64)
    hinted = [(index[j], sorted(set(t))) for j, t in hint.items() if j in index and t]
    hinted.sort(key=lambda it: (max(it[1]), jobs[it[0]].id))
    for i, wanted in hinted:
        job = jobs[i]
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
    return greedy_schedule(inp, start=relevel(inp, held).terms)


@named("greedy")
def greedy(
    inp: LeaseInput, *, seed: Seed = None, time_limit: float | None = None, hint: Hint | None = None
) -> Solution[LeaseDecision]:
    """Best of three job orders, each job as late as possible, then compacted towards now.

    Parameters
    ----------
    inp : LeaseInput
        The jobs, M and T_l.
    seed : int, numpy Generator or None
        Unused (deterministic); accepted for the common calling convention.
    time_limit : float or None
        Unused: the work is bounded (three passes over the jobs).
    hint : Mapping[str, Sequence[int]] or None
        A warm start (job id -> terms, e.g. :func:`~scheduling_opt.lease.hint_terms`
        of the previous decision): repaired into a feasible schedule, then completed.

    Returns
    -------
    Solution[LeaseDecision]
        ``feasible`` with the schedule; under ``require_all``: ``infeasible``
        when a job alone cannot meet any deadline, ``time_limit`` with no
        decision when the greedy cannot place every job (no proof either way).
        ``bound`` is None: the LP bound (:func:`~scheduling_opt.lease.upper_bound`)
        costs more than the greedy itself (docs/lease.md).

    Raises
    ------
    SchedulingOptError
        Never for a built input (it was validated at construction).

    Examples
    --------
    >>> from scheduling_opt.model import Job, RewardStep
    >>> jobs = [Job(j, 4, 4, 1200.0, deadlines=(RewardStep(2400.0, v),)) for j, v in
    ...         (("a", 100), ("b", 90), ("c", 80))]
    >>> sol = greedy(LeaseInput(jobs, capacity=4, lease_length=1200.0))
    >>> sol.status.value, sol.objective, sol.decision.terms
    ('feasible', 190.0, {'a': (1,), 'b': (0,), 'c': ()})

    References
    ----------
    Chronus (SoCC '21) §3.3.4 (the selection problem); the greedy is ours.
    """
    start = time.perf_counter()
    schedule = greedy_schedule(inp) if hint is None else repair(inp, hint)
    return heuristic_solution(inp, schedule, start, compacted=True)
