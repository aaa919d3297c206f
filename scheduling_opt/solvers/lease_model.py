"""The lease problem's data: jobs in lease terms, schedules, and what every method shares.

A job of G_i GPUs and R_i seconds needs RL_i = ceil(R_i / T_l) lease terms;
its deadline step p (D_p seconds from now, reward V_p) is met when every
held term k satisfies k < DL_p = floor(D_p / T_l) (terms numbered from 0 =
the current one, term k spanning [k T_l, (k+1) T_l)). Chronus §3.3.4.

Levels that can never be met (DL_p < RL_i, or G_i > M) are dropped when the
input is built, and so are later steps with the same DL (the earlier one
pays at least as much: rewards must not increase with later deadlines).
A schedule's level is always the first deadline its last term meets, so the
reward is a function of the terms alone. Complexity: O(N P) to build.
"""

from __future__ import annotations

import bisect
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from scheduling_opt.errors import InvalidInstanceError
from scheduling_opt.model import Job
from scheduling_opt.result import Status
from scheduling_opt.solvers.placement_chronus import round_up


def round_up_gpus(gpus: int) -> int:
    """Chronus Eq. (6): 1, 2, 4 or the next multiple of 8 (consolidation-friendly).

    The placement's RoundUp on Chronus' 8-GPU nodes: one definition, so that
    the lease capacity and the consolidation it promises cannot drift apart.
    """
    return round_up(gpus, 8)


@dataclass(frozen=True, slots=True)
class Level:
    """A reachable deadline step: ``index`` in the job's ``deadlines``, terms < ``due``."""

    index: int
    due: int
    reward: float


@dataclass(frozen=True, slots=True)
class LeaseJob:
    """A job in lease terms: ``gpus`` (G_i, rounded up if asked), ``terms`` (RL_i)."""

    id: str
    gpus: int
    terms: int
    levels: tuple[Level, ...]

    @property
    def last_due(self) -> int:
        return self.levels[-1].due if self.levels else 0

    def level_for(self, last_term: int) -> int | None:
        """Position in ``levels`` of the first deadline met when finishing after ``last_term``."""
        for pos, level in enumerate(self.levels):
            if last_term < level.due:
                return pos
        return None


@dataclass(frozen=True, slots=True)
class LeaseInput:
    """A parsed lease instance: M GPUs, lease length T_l, the SLO jobs in lease terms.

    ``source`` keeps the model's jobs (same order) for the independent checker.
    ``max_terms`` caps every DL (deadlines beyond it count as met at it).
    """

    jobs: tuple[LeaseJob, ...]
    source: tuple[Job, ...]
    capacity: int
    lease_length: float
    require_all: bool = False
    round_up: bool = False
    max_terms: int | None = None

    @property
    def horizon(self) -> int:
        return max((j.last_due for j in self.jobs), default=0)

    @property
    def hopeless(self) -> tuple[str, ...]:
        """Jobs that no schedule can give a level (alone they already miss)."""
        return tuple(j.id for j in self.jobs if not j.levels)


MAX_HORIZON = 10_000
"""The most lease terms a deadline may lie ahead unless ``max_terms`` caps it.

Every method sizes per-term arrays (and the MILP per-term columns) by the
horizon, so a deadline of 1e12 s must be refused up front, not discovered as
an out-of-memory while building a model. Chronus' own horizon is 72 terms.
"""


def _check_steps(job: Job, path: str) -> None:
    if not job.deadlines:
        raise InvalidInstanceError(f"{path}.deadlines", "a lease job needs deadline steps")
    for p in range(1, len(job.deadlines)):
        if job.deadlines[p].reward > job.deadlines[p - 1].reward:
            raise InvalidInstanceError(
                f"{path}.deadlines[{p}].reward",
                "rewards must not increase with later deadlines",
            )


def lease_job(
    job: Job,
    lease_length: float,
    capacity: int,
    *,
    round_up: bool = False,
    max_terms: int | None = None,
    path: str = "job",
) -> LeaseJob:
    """The job in lease terms, with only the levels some schedule could meet."""
    _check_steps(job, path)
    gpus = job.max_gpus
    if round_up:
        gpus = round_up_gpus(gpus)
    need = math.ceil(job.duration / lease_length)
    levels: list[Level] = []
    for p, step in enumerate(job.deadlines):
        due = math.floor(step.time / lease_length)
        if max_terms is not None:
            due = min(due, max_terms)
        if due > MAX_HORIZON:
            raise InvalidInstanceError(
                f"{path}.deadlines[{p}].time",
                f"lies {due} lease terms ahead, more than {MAX_HORIZON}; "
                "set params.max_terms to cap the horizon",
            )
        if gpus <= capacity and due >= need and (not levels or due > levels[-1].due):
            levels.append(Level(p, due, float(step.reward)))
    return LeaseJob(job.id, gpus, need, tuple(levels))


def make_input(
    jobs: Sequence[Job],
    capacity: int,
    lease_length: float,
    *,
    require_all: bool = False,
    round_up: bool = False,
    max_terms: int | None = None,
) -> LeaseInput:
    """A :class:`LeaseInput` from model jobs (each with deadline steps)."""
    if not lease_length > 0 or not math.isfinite(lease_length):
        raise InvalidInstanceError("lease_length", f"must be > 0 seconds, got {lease_length!r}")
    if capacity < 0:
        raise InvalidInstanceError("gpus", f"must be >= 0, got {capacity}")
    if max_terms is not None and max_terms < 1:
        raise InvalidInstanceError("max_terms", f"must be >= 1, got {max_terms}")
    seen: set[str] = set()
    for i, job in enumerate(jobs):
        if job.id in seen:
            raise InvalidInstanceError(f"jobs[{i}].id", f"duplicate job id {job.id!r}")
        seen.add(job.id)
    lease_jobs = tuple(
        lease_job(
            job,
            lease_length,
            capacity,
            round_up=round_up,
            max_terms=max_terms,
            path=f"jobs[{i}]",
        )
        for i, job in enumerate(jobs)
    )
    return LeaseInput(
        lease_jobs, tuple(jobs), capacity, float(lease_length), require_all, round_up, max_terms
    )


# --------------------------------------------------------------------------- schedules


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
            inp.jobs[i].levels[pos].reward for i, pos in enumerate(self.levels) if pos is not None
        )

    def complete(self) -> bool:
        return all(pos is not None for pos in self.levels)


def load_of(inp: LeaseInput, terms: Sequence[Sequence[int]]) -> NDArray[np.int64]:
    """GPUs held in each term 0..horizon-1."""
    load = np.zeros(max(inp.horizon, 1), dtype=np.int64)
    for job, held in zip(inp.jobs, terms, strict=True):
        for k in held:
            load[k] += job.gpus
    return load


def relevel(inp: LeaseInput, terms: Sequence[Sequence[int]]) -> Schedule:
    """The schedule whose levels are the first deadlines the terms meet."""
    levels: list[int | None] = []
    out: list[tuple[int, ...]] = []
    for job, held in zip(inp.jobs, terms, strict=True):
        pos = job.level_for(max(held)) if held else None
        levels.append(pos)
        out.append(tuple(sorted(held)) if pos is not None else ())
    return Schedule(tuple(levels), tuple(out))


def compact(inp: LeaseInput, schedule: Schedule) -> Schedule:
    """Move held terms as early as capacity allows (urgent jobs first), then relevel.

    A term only moves earlier, so every met deadline stays met; the result
    runs as much as possible now (more ``run_now``) and may reach better levels.
    """
    held = [list(t) for t in schedule.terms]
    load = load_of(inp, held)
    order = sorted(
        (i for i, pos in enumerate(schedule.levels) if pos is not None),
        key=lambda i: (inp.jobs[i].levels[schedule.levels[i] or 0].due, inp.jobs[i].id),
    )
    for k in range(inp.horizon):
        for i in order:
            terms, gpus = held[i], inp.jobs[i].gpus
            if terms[-1] <= k or load[k] + gpus > inp.capacity:
                continue
            pos = bisect.bisect_left(terms, k)
            if pos < len(terms) and terms[pos] == k:
                continue
            last = terms.pop()
            load[last] -= gpus
            bisect.insort(terms, k)
            load[k] += gpus
    return relevel(inp, held)


# --------------------------------------------------------------------------- results


@dataclass(frozen=True, slots=True)
class LeaseResult:
    """Which SLO jobs get which lease terms.

    ``levels``: job id -> index of the deadline step it meets (into the job's
    ``deadlines``), None when rejected; ``terms``: job id -> held term indices
    (0 = the current term); ``run_now``: jobs holding term 0;
    ``objective``: total reward (None when no answer).
    """

    status: Status
    objective: float | None
    seconds: float
    levels: tuple[tuple[str, int | None], ...]
    terms: tuple[tuple[str, tuple[int, ...]], ...]
    method: str = ""

    @property
    def run_now(self) -> tuple[str, ...]:
        return tuple(job for job, held in self.terms if held and held[0] == 0)

    def decision(self) -> dict[str, Any]:
        return {
            "levels": dict(self.levels),
            "terms": {job: list(held) for job, held in self.terms},
            "run_now": list(self.run_now),
            "objective": self.objective,
        }


def make_result(
    inp: LeaseInput, schedule: Schedule | None, status: Status, seconds: float, method: str
) -> LeaseResult:
    """The result of a schedule (None: no answer, every job rejected)."""
    sched = Schedule.empty(len(inp.jobs)) if schedule is None else schedule
    levels = tuple(
        (job.id, None if pos is None else job.levels[pos].index)
        for job, pos in zip(inp.jobs, sched.levels, strict=True)
    )
    terms = tuple((job.id, held) for job, held in zip(inp.jobs, sched.terms, strict=True))
    objective = None if schedule is None else sched.reward(inp)
    return LeaseResult(status, objective, seconds, levels, terms, method)


def hint_terms(source: LeaseResult | Mapping[str, Any], elapsed: int = 1) -> dict[str, list[int]]:
    """The previous cycle's terms, renumbered for a cycle ``elapsed`` terms later.

    Accepts a :class:`LeaseResult` or its ``decision()``; terms already run are
    dropped. The caller's new instance should have shortened the remaining
    times (and deadlines) of the jobs that ran.
    """
    raw = source.decision()["terms"] if isinstance(source, LeaseResult) else source["terms"]
    return {
        str(job): [int(k) - elapsed for k in held if int(k) >= elapsed] for job, held in raw.items()
    }
