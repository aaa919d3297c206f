"""Schedules by job index, what every lease method shares: load, relevel, compact, finish.

A :class:`Schedule` holds per job (in input order) the position of its level
in ``LeaseJob.levels`` and its terms; every method works on it and turns it
into the public :class:`~scheduling_opt.lease.model.LeaseDecision` once, in
:func:`finish`, after compacting it towards now (Chronus §3.3.4).
"""

from __future__ import annotations

import bisect
import itertools
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from scheduling_opt.jsonpath import read_int
from scheduling_opt.lease.model import LeaseDecision, LeaseInput
from scheduling_opt.solution import Solution, Status


@dataclass(frozen=True, slots=True)
class Schedule:
    """Per job: the position of its level in ``LeaseJob.levels`` (None: rejected), its terms."""

    levels: tuple[int | None, ...]
    terms: tuple[tuple[int, ...], ...]

    @classmethod
    def empty(cls, n: int) -> Schedule:
        return cls((None,) * n, ((),) * n)

    def reward(self, inp: LeaseInput) -> float:
        return sum(
            inp.lease_jobs[i].levels[pos].reward
            for i, pos in enumerate(self.levels)
            if pos is not None
        )

    def complete(self) -> bool:
        return all(pos is not None for pos in self.levels)


def load_of(inp: LeaseInput, terms: Sequence[Sequence[int]]) -> NDArray[np.int64]:
    """GPUs held in each term 0..horizon-1 (a term a job lists twice counts once).

    One (job, term) table filled by numpy (a repeated term lands on the same
    cell) and one product with the GPUs: O(N H) vectorized work.
    """
    return np.asarray(inp.gpus @ _table(inp, terms), dtype=np.int64)


def _table(inp: LeaseInput, terms: Sequence[Sequence[int]]) -> NDArray[np.bool_]:
    """held[i, k]: job i holds term k (0 <= k < max(horizon, 1))."""
    counts = [len(held) for held in terms]
    if len(counts) != len(inp.lease_jobs):
        raise ValueError("one list of terms per job")
    table = np.zeros((len(counts), max(inp.horizon, 1)), dtype=np.bool_)
    if sum(counts):
        flat = np.array(list(itertools.chain.from_iterable(terms)), dtype=np.int64)
        table[np.repeat(np.arange(len(counts)), counts), flat] = True
    return table


def relevel(inp: LeaseInput, terms: Sequence[Sequence[int]]) -> Schedule:
    """The schedule whose levels are the first deadlines the terms meet."""
    levels: list[int | None] = []
    out: list[tuple[int, ...]] = []
    for job, held in zip(inp.lease_jobs, terms, strict=True):
        if not held:
            levels.append(None)
            out.append(())
            continue
        ordered = tuple(sorted(held))
        last = ordered[-1]
        pos = None
        for p, level in enumerate(job.levels):  # LeaseJob.level_for, inlined (hot)
            if last < level.due:
                pos = p
                break
        levels.append(pos)
        out.append(ordered if pos is not None else ())
    return Schedule(tuple(levels), tuple(out))


def compact(inp: LeaseInput, schedule: Schedule) -> Schedule:
    """Move held terms as early as capacity allows (urgent jobs first), then relevel.

    A term only moves earlier, so every met deadline stays met; the result
    runs as much as possible now (more ``run_now``) and may reach better levels.

    For each term k in order, each selected job (earliest level due first,
    then id) whose last term lies after k and that does not hold k moves
    its last term to k if k has room. Per term, the jobs that could move
    there (last term after k, k not held, GPUs within the room) are found
    with one numpy pass over a (term, job) table of the held terms, and
    only they are visited in order, each taking room until none is left
    for the smallest job: O(H N) vectorized work plus O(moves) in Python
    (the same moves as the plain scan over every job and term, kept in
    tests/lease/_schedule_reference.py). When the jobs holding terms need at
    most M GPUs together, every job ends on its first terms: O(N + terms).
    """
    jobs = inp.lease_jobs
    holding = [i for i, t in enumerate(schedule.terms) if t]
    if (
        all(schedule.levels[i] is not None for i in holding)
        and sum(jobs[i].gpus for i in holding) <= inp.capacity
    ):
        # Every term has room for every job at once: each job not holding a
        # term k below its count moves its last term there, so it ends on
        # its first terms 0..n-1 (the moves below give the same).
        return relevel(inp, [range(len(t)) for t in schedule.terms])
    held = [list(t) for t in schedule.terms]
    order = sorted(
        (i for i, pos in enumerate(schedule.levels) if pos is not None),
        key=lambda i: (jobs[i].levels[schedule.levels[i] or 0].due, jobs[i].id),
    )
    if not order or inp.horizon == 0:
        return relevel(inp, held)
    table = _table(inp, held)
    load = (inp.gpus @ table).tolist()
    capacity = inp.capacity
    horizon = inp.horizon
    gpus = [jobs[i].gpus for i in order]
    smallest = min(gpus)
    g_arr = np.array(gpus, dtype=np.int64)
    terms_of = [held[i] for i in order]
    last = np.array([t[-1] for t in terms_of], dtype=np.int64)
    # holds[k, j]: the j-th job of ``order`` holds term k (as a set per job would say).
    holds = np.ascontiguousarray(table[order].T)
    for k in range(min(horizon, int(last.max()))):
        room = capacity - load[k]
        if room < smallest:
            continue
        movers = np.flatnonzero((last > k) & (g_arr <= room) & ~holds[k])
        for j in movers.tolist():
            g = gpus[j]
            if g > room:
                continue
            terms = terms_of[j]
            moved = terms.pop()
            holds[moved, j] = False
            load[moved] -= g
            bisect.insort(terms, k)  # holds[k] is not read again: left as it is
            last[j] = terms[-1]
            room -= g
            if room < smallest:
                break
    return relevel(inp, held)


def decision_of(inp: LeaseInput, schedule: Schedule) -> LeaseDecision:
    """The public decision of a schedule (levels as indices into each job's deadlines)."""
    jobs = inp.lease_jobs
    levels = {
        job.id: None if pos is None else job.levels[pos].index
        for job, pos in zip(jobs, schedule.levels, strict=True)
    }
    terms = {job.id: tuple(held) for job, held in zip(jobs, schedule.terms, strict=True)}
    return LeaseDecision(levels, terms, schedule.reward(inp))


def finish(
    inp: LeaseInput,
    schedule: Schedule | None,
    status: Status,
    start: float,
    *,
    bound: float | None = None,
    message: str = "",
    compacted: bool = False,
) -> Solution[LeaseDecision]:
    """The solution of a schedule (None: no answer), compacted towards now.

    ``compacted``: the schedule is :func:`compact`'s output already (the
    greedy's), and compacting it again would move nothing (a term that kept
    room after its pass takes no job in a second one:
    tests/lease/test_schedule_equivalence.py), so it is not repeated.
    """
    if schedule is not None and not compacted:
        schedule = compact(inp, schedule)
    decision = None if schedule is None else decision_of(inp, schedule)
    return Solution(
        status=status,
        objective=None if decision is None else decision.reward,
        decision=decision,
        bound=bound,
        seconds=time.perf_counter() - start,
        message=message,
    )


def best_of(inp: LeaseInput, candidates: Sequence[Schedule | None]) -> Schedule | None:
    """The best candidate (under ``require_all`` only complete ones count); first wins ties."""
    ok = [c for c in candidates if c is not None and (c.complete() or not inp.require_all)]
    return max(ok, key=lambda c: c.reward(inp), default=None)


def hint_terms(
    source: LeaseDecision | Mapping[str, Sequence[int]], elapsed: int = 1
) -> dict[str, list[int]]:
    """The previous cycle's terms, renumbered for a cycle ``elapsed`` terms later.

    Parameters
    ----------
    source : LeaseDecision or Mapping[str, Sequence[int]]
        A previous decision, or its ``terms`` (job id -> term indices).
    elapsed : int
        Terms that have passed since (terms already run are dropped).

    Returns
    -------
    dict[str, list[int]]
        Job id -> terms, a warm-start ``hint`` for ``greedy`` and the exact methods.

    Raises
    ------
    InvalidInstanceError
        When ``elapsed`` or a term is not an integer >= 0 (``terms.<job>[i]``).

    Examples
    --------
    >>> hint_terms({"a": [0, 1, 3], "b": [0]}, elapsed=1)
    {'a': [0, 2], 'b': []}

    References
    ----------
    Chronus (SoCC '21) §3.3.4 (one MILP per scheduling cycle).
    """
    raw = source.terms if isinstance(source, LeaseDecision) else source
    elapsed = read_int(elapsed, "elapsed", 0)
    out: dict[str, list[int]] = {}
    for job, held in raw.items():
        terms = [read_int(k, f"terms.{job}[{i}]", 0) for i, k in enumerate(held)]
        out[str(job)] = [k - elapsed for k in terms if k >= elapsed]
    return out


def fit(
    inp: LeaseInput, i: int, due: int, load: NDArray[np.int64], *, late: bool
) -> NDArray[np.int64] | None:
    """RL_i terms before ``due`` with room for job ``i`` (the latest or earliest ones)."""
    job = inp.lease_jobs[i]
    room = np.flatnonzero(load[:due] + job.gpus <= inp.capacity)
    if len(room) < job.terms:
        return None
    return room[-job.terms :] if late else room[: job.terms]


def heuristic_solution(
    inp: LeaseInput,
    schedule: Schedule,
    start: float,
    *,
    bound: float | None = None,
    compacted: bool = False,
) -> Solution[LeaseDecision]:
    """A heuristic's answer; under ``require_all`` an incomplete one is no answer.

    A heuristic proves nothing: when it cannot give every job a level it
    returns no answer with status ``time_limit`` ("stopped without a proof");
    ``infeasible`` only when some job alone cannot meet any deadline.
    ``compacted``: as :func:`finish`.
    """
    if inp.require_all and inp.hopeless:
        return finish(inp, None, Status.INFEASIBLE, start, message="a job cannot meet any deadline")
    if inp.require_all and not schedule.complete():
        return finish(inp, None, Status.TIME_LIMIT, start, bound=bound, message="incomplete")
    return finish(inp, schedule, Status.FEASIBLE, start, bound=bound, compacted=compacted)
