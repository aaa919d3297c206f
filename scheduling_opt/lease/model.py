"""The lease problem's typed input (jobs in lease terms) and typed decision.

Given M GPUs, a lease length T_l and SLO jobs (G_i GPUs, R_i seconds left,
reward steps (D_p, V_p)), choose for each job a deadline to meet (or reject
it) and the lease terms it holds, at most M GPUs per term, maximizing the total
reward (Chronus §3.3.4). A job needs RL_i = ceil(R_i / T_l) terms; its deadline
step p is met when every held term k satisfies k < DL_p = floor(D_p / T_l)
(terms numbered from 0 = the current one, term k spanning [k T_l, (k+1) T_l)).

Levels that can never be met (DL_p < RL_i) are dropped when the input is
built, and so are later steps with the same DL (the earlier one pays at least
as much: rewards must not increase with later deadlines). A schedule's level
is always the first deadline its last term meets, so the reward is a function
of the terms alone. Building the input costs O(N P) for N jobs of P steps.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np
from numpy.typing import NDArray

from scheduling_opt.errors import InvalidInstanceError
from scheduling_opt.jsonpath import read_int, read_number
from scheduling_opt.model import Job, RewardStep
from scheduling_opt.placement import round_up as _placement_round_up

__all__ = [
    "MAX_HORIZON",
    "LeaseDecision",
    "LeaseInput",
    "LeaseJob",
    "Level",
    "round_up_gpus",
]

MAX_HORIZON = 10_000
"""The most lease terms a deadline may lie ahead unless ``max_terms`` caps it.

Every method sizes per-term arrays (and the MILP per-term columns) by the
horizon, so a deadline of 1e12 s must be refused up front, not discovered as
an out-of-memory while building a model. Chronus' own horizon is 72 terms.
"""


def round_up_gpus(gpus: int) -> int:
    """Chronus Eq. (6): 1, 2, 4 or the next multiple of 8 (consolidation-friendly).

    The placement's RoundUp on Chronus' 8-GPU nodes: one definition, so that
    the lease capacity and the consolidation it promises cannot drift apart.

    Parameters
    ----------
    gpus : int
        GPUs a job asks for (>= 1).

    Returns
    -------
    int
        The GPUs the lease selection charges it under ``round_up``.

    Raises
    ------
    InvalidInstanceError
        When ``gpus`` is not a positive integer.

    Examples
    --------
    >>> [round_up_gpus(g) for g in (1, 3, 5, 12)]
    [1, 4, 8, 16]

    References
    ----------
    Chronus (SoCC '21) §3.3.4, Eq. (6), and §3.4.1 (RoundUp).
    """
    if type(gpus) is int:
        got = _ROUNDED.get(gpus)
        if got is None:
            got = _placement_round_up(gpus, 8)  # raises on gpus < 1
            if len(_ROUNDED) < 4096:
                _ROUNDED[gpus] = got
        return got
    return _placement_round_up(gpus, 8)


#: round_up_gpus of the plain ints seen (a few distinct GPU counts, asked for
#: every job of every lease input and admission: ~400,000 times per P_MIX2 run).
_ROUNDED: dict[int, int] = {}


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


def _lease_job(job: Job, inp: LeaseInput, i: int) -> LeaseJob:
    """The job in lease terms, with only the levels some schedule could meet (``jobs[i]``)."""
    steps = job.deadlines
    if not steps:
        raise InvalidInstanceError(f"jobs[{i}].deadlines", "a lease job needs deadline steps")
    for p in range(1, len(steps)):
        if steps[p].reward > steps[p - 1].reward:
            raise InvalidInstanceError(
                f"jobs[{i}].deadlines[{p}].reward",
                "rewards must not increase with later deadlines",
            )
    gpus = round_up_gpus(job.max_gpus) if inp.round_up else job.max_gpus
    if gpus > inp.capacity:
        # One rule for every problem: a job that can never fit is
        # refused, not silently left out of every schedule.
        charged = f" (rounded up to {gpus})" if gpus != job.max_gpus else ""
        raise InvalidInstanceError(
            f"jobs[{i}]",
            f"job {job.id!r} needs {job.max_gpus} GPUs{charged}, more than the "
            f"{inp.capacity} GPUs of the lease cluster",
        )
    length, cap = inp.lease_length, inp.max_terms
    need = math.ceil(job.duration / length)
    levels: list[Level] = []
    last = -1
    for p, step in enumerate(steps):
        due = math.floor(step.time / length)
        if cap is not None and due > cap:
            due = cap
        if due > MAX_HORIZON:
            raise InvalidInstanceError(
                f"jobs[{i}].deadlines[{p}].time",
                f"lies {due} lease terms ahead, more than {MAX_HORIZON}; "
                "set params.max_terms to cap the horizon",
            )
        if due >= need and due > last:
            key = (p, due, float(step.reward))
            level = _LEVELS.get(key)
            if level is None:
                level = Level(*key)
                if len(_LEVELS) < 65536 and key[2] != 0.0:  # -0.0 == 0.0: not shared
                    _LEVELS[key] = level
            levels.append(level)
            last = due
    return LeaseJob(job.id, gpus, need, tuple(levels))


#: Levels are immutable values: one object per (index, due, reward) seen, shared
#: by every lease job that reaches it (the simulator builds ~100,000 lease jobs
#: per P_MIX2 run from a few hundred distinct levels).
_LEVELS: dict[tuple[int, int, float], Level] = {}


@dataclass(frozen=True, slots=True)
class LeaseInput:
    """One SLO scheduling cycle: M GPUs, lease length T_l, the SLO jobs to place in terms.

    Built from model jobs and validated at construction (the file reader's
    rules); the lease view of every job (``lease_jobs``) and the numpy arrays
    the methods iterate over are computed once here.

    Parameters
    ----------
    jobs : sequence of Job
        The SLO jobs, each with deadline steps (rewards non-increasing);
        ``duration`` is the remaining time in seconds, ``max_gpus`` its GPUs.
    capacity : int
        M, the GPUs of the guaranteed cluster (>= 0).
    lease_length : float
        T_l in seconds (> 0).
    require_all : bool
        Eq. (5) as an equality: every job must meet a deadline.
    round_up : bool
        Charge each job Eq. (6)'s consolidation-friendly GPU count.
    max_terms : int or None
        Cap on every DL (deadlines beyond it count as met at it).

    Attributes
    ----------
    lease_jobs : tuple of LeaseJob
        Each job in lease terms (G_i charged, RL_i, its reachable levels).
    gpus : numpy.ndarray of int64
        G_i per job (after Eq. (6) under ``round_up``), in job order.

    Raises
    ------
    InvalidInstanceError
        Naming the field: a bad ``lease_length``/``capacity``/``max_terms``,
        a duplicate job id, a job without deadlines or with increasing
        rewards, a deadline more than :data:`MAX_HORIZON` terms ahead, or a
        job needing more GPUs than ``capacity`` (``jobs[i]``).

    Examples
    --------
    >>> from scheduling_opt.model import Job, RewardStep
    >>> a = Job("a", 2, 2, 1800.0, deadlines=(RewardStep(3600.0, 100),))
    >>> inp = LeaseInput([a], capacity=4, lease_length=1200.0)
    >>> inp.lease_jobs[0].terms, inp.lease_jobs[0].levels[0].due
    (2, 3)

    References
    ----------
    Chronus (SoCC '21) §3.3.4, Eqs. (1)-(6).
    """

    jobs: tuple[Job, ...]
    capacity: int
    lease_length: float
    require_all: bool = False
    round_up: bool = False
    max_terms: int | None = None
    lease_jobs: tuple[LeaseJob, ...] = field(init=False, repr=False, compare=False)
    gpus: NDArray[np.int64] = field(init=False, repr=False, compare=False)
    _horizon: int = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "jobs", tuple(self.jobs))
        object.__setattr__(self, "capacity", read_int(self.capacity, "capacity", 0))
        length = read_number(self.lease_length, "lease_length")
        if not length > 0:
            raise InvalidInstanceError("lease_length", f"must be > 0 seconds, got {length!r}")
        object.__setattr__(self, "lease_length", float(length))
        if self.max_terms is not None:
            object.__setattr__(self, "max_terms", read_int(self.max_terms, "max_terms", 1))
        for name in ("require_all", "round_up"):
            if not isinstance(getattr(self, name), bool):
                raise InvalidInstanceError(name, f"must be a bool, got {getattr(self, name)!r}")
        seen: set[str] = set()
        for i, job in enumerate(self.jobs):
            if not isinstance(job, Job):
                raise InvalidInstanceError(f"jobs[{i}]", f"must be a Job, got {job!r:.60}")
            if job.id in seen:
                raise InvalidInstanceError(f"jobs[{i}].id", f"duplicate job id {job.id!r}")
            seen.add(job.id)
        lease_jobs = tuple(_lease_job(job, self, i) for i, job in enumerate(self.jobs))
        object.__setattr__(self, "lease_jobs", lease_jobs)
        object.__setattr__(self, "gpus", np.array([j.gpus for j in lease_jobs], dtype=np.int64))
        object.__setattr__(self, "_horizon", max((j.last_due for j in lease_jobs), default=0))

    @classmethod
    def from_terms(
        cls,
        jobs: Sequence[tuple[str, int, int, Sequence[tuple[int, float]]]],
        capacity: int,
        *,
        require_all: bool = False,
    ) -> LeaseInput:
        """An input in lease terms: ``(id, gpus, terms needed, [(due term, reward), ...])``.

        A scheduler that already counts in terms (the Chronus artifact's
        selection: each job's GPUs, the terms it still needs and, per
        reward step, the terms before its deadline) need not invent seconds:
        this is the input with a lease length of 1 s, a job's duration its
        terms and each step's time its due term (step ``p`` is met when
        every held term is below ``due``). O(N P).

        Parameters
        ----------
        jobs : sequence of (str, int, int, sequence of (int, float))
            Per job its id, GPUs (>= 1), terms needed (>= 1) and reward
            steps (due terms strictly increasing, rewards non-increasing).
        capacity : int
            GPUs per term.
        require_all : bool
            Every job must meet a step.

        Returns
        -------
        LeaseInput

        Raises
        ------
        InvalidInstanceError
            ``jobs[i]`` for a malformed tuple, else the constructor's errors
            (a due term that does not increase names ``jobs[i].deadlines[p]``).

        Examples
        --------
        >>> inp = LeaseInput.from_terms([("a", 4, 2, [(2, 10.0), (3, 8.0)])], capacity=4)
        >>> job = inp.lease_jobs[0]
        >>> job.terms, [(lv.due, lv.reward) for lv in job.levels]
        (2, [(2, 10.0), (3, 8.0)])

        References
        ----------
        Chronus (SoCC '21) §3.3.4 (RL_i terms, DL_p deadlines).
        """
        built: list[Job] = []
        for i, item in enumerate(jobs):
            try:
                job_id, gpus, need, steps = item
                pairs = [(due, reward) for due, reward in steps]
            except (TypeError, ValueError):
                raise InvalidInstanceError(
                    f"jobs[{i}]",
                    f"must be (id, gpus, terms, [(due, reward), ...]), got {item!r:.80}",
                ) from None
            gpus = read_int(gpus, f"jobs[{i}].gpus", 1)
            need = read_int(need, f"jobs[{i}].terms", 1)
            deadlines: list[RewardStep] = []
            for p, (due, reward) in enumerate(pairs):
                due = read_int(due, f"jobs[{i}].deadlines[{p}].due", 1)
                try:
                    deadlines.append(RewardStep(float(due), reward))
                except InvalidInstanceError as exc:
                    raise exc.at(f"jobs[{i}].deadlines[{p}]") from None
            try:
                built.append(Job(job_id, gpus, gpus, float(need), deadlines=tuple(deadlines)))
            except InvalidInstanceError as exc:
                raise exc.at(f"jobs[{i}]") from None
        return cls(tuple(built), capacity, 1.0, require_all=require_all)

    def with_job(self, job: Job) -> LeaseInput:
        """This input with ``job`` appended, checked as the constructor checks it.

        Equal, field for field, to ``LeaseInput((*self.jobs, job), ...)``
        with the same parameters, but the other jobs' lease view is reused:
        O(N) for the id check and the copies instead of the constructor's
        O(N P) (admission control adds one candidate at a time to every
        guaranteed job).

        Parameters
        ----------
        job : Job
            The job to add (a new id, with deadline steps).

        Returns
        -------
        LeaseInput
            The extended input.

        Raises
        ------
        InvalidInstanceError
            As the constructor, naming ``jobs[N]`` (a duplicate id, no
            deadlines, increasing rewards, too many GPUs, too far ahead).

        Examples
        --------
        >>> from scheduling_opt.model import Job, RewardStep
        >>> a = Job("a", 2, 2, 1800.0, deadlines=(RewardStep(3600.0, 100),))
        >>> b = Job("b", 1, 1, 600.0, deadlines=(RewardStep(1200.0, 50),))
        >>> inp = LeaseInput([a], capacity=4, lease_length=1200.0)
        >>> inp.with_job(b) == LeaseInput([a, b], capacity=4, lease_length=1200.0)
        True
        """
        n = len(self.jobs)
        if not isinstance(job, Job):
            raise InvalidInstanceError(f"jobs[{n}]", f"must be a Job, got {job!r:.60}")
        if any(other.id == job.id for other in self.jobs):
            raise InvalidInstanceError(f"jobs[{n}].id", f"duplicate job id {job.id!r}")
        lease_job = _lease_job(job, self, n)
        out = object.__new__(LeaseInput)
        for name in ("capacity", "lease_length", "require_all", "round_up", "max_terms"):
            object.__setattr__(out, name, getattr(self, name))
        object.__setattr__(out, "jobs", (*self.jobs, job))
        object.__setattr__(out, "lease_jobs", (*self.lease_jobs, lease_job))
        object.__setattr__(out, "gpus", np.append(self.gpus, np.int64(lease_job.gpus)))
        object.__setattr__(out, "_horizon", max(self._horizon, lease_job.last_due))
        return out

    @property
    def horizon(self) -> int:
        """H: the latest reachable deadline, in terms (per-term arrays have this length)."""
        return self._horizon

    @property
    def hopeless(self) -> tuple[str, ...]:
        """Jobs that no schedule can give a level (alone they already miss)."""
        return tuple(j.id for j in self.lease_jobs if not j.levels)


@dataclass(frozen=True, slots=True)
class LeaseDecision:
    """Which SLO jobs hold which lease terms, and the deadline each meets.

    Attributes
    ----------
    levels : Mapping[str, int or None]
        Job id -> index of the deadline step it meets (into the job's
        ``deadlines``); None when rejected. Every job of the input, in order.
    terms : Mapping[str, tuple of int]
        Job id -> the term indices it holds (0 = the current term), sorted.
    reward : float
        The total reward of the met deadlines (the objective).
    """

    levels: Mapping[str, int | None]
    terms: Mapping[str, tuple[int, ...]]
    reward: float

    @property
    def run_now(self) -> tuple[str, ...]:
        """Jobs holding term 0: the ones to start this cycle."""
        return tuple(job for job, held in self.terms.items() if held and held[0] == 0)

    @property
    def selected(self) -> tuple[str, ...]:
        """Jobs given a deadline (not rejected), in input order."""
        return tuple(job for job, level in self.levels.items() if level is not None)
