"""Chronus admission control: can a new SLO job be guaranteed along with the guaranteed ones?

Every guaranteed job plus the new one must meet a deadline (``require_all``):
the greedy and EDF first (a complete schedule proves admission), then the
feasibility MILP (zero objective) on HiGHS, which proves either answer or
runs out of time (not admitted: the conservative answer). Chronus §3.3.2.
NP-complete in general; a heuristic pass is O(N P H).
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass

from scheduling_opt.errors import InvalidInstanceError
from scheduling_opt.jsonpath import read_int, read_number
from scheduling_opt.lease._schedule import finish
from scheduling_opt.lease.edf import edf
from scheduling_opt.lease.exact import exact
from scheduling_opt.lease.formulation import ModelConfig
from scheduling_opt.lease.greedy import complete_greedy
from scheduling_opt.lease.model import LeaseDecision, LeaseInput, round_up_gpus
from scheduling_opt.model import Job
from scheduling_opt.solution import Solution, Status, time_limit_of

__all__ = ["Admission", "admission_control", "admit", "admit_jobs"]


@dataclass(frozen=True, slots=True)
class Admission:
    """Whether a new SLO job can be guaranteed along with every guaranteed one.

    ``status``: ``feasible`` (admitted; ``schedule`` guarantees them all),
    ``infeasible`` (proven impossible) or ``time_limit`` (undecided in time:
    not admitted, the conservative answer).
    """

    admitted: bool
    status: Status
    schedule: Solution[LeaseDecision] | None
    seconds: float


def admit_jobs(
    guaranteed: Sequence[Job] | LeaseInput,
    job: Job,
    gpus: int,
    lease_length: float,
    *,
    round_up: bool = False,
    max_terms: int | None = None,
    time_limit: float | None = None,
    prove: bool = True,
) -> Admission:
    """Admission control: can ``job`` join ``guaranteed`` with every deadline still met?

    Parameters
    ----------
    guaranteed : sequence of Job or LeaseInput
        The SLO jobs already guaranteed (each with deadline steps); or an
        input holding them, built with these parameters and
        ``require_all=True`` (its lease view is reused:
        :meth:`~scheduling_opt.lease.LeaseInput.with_job`), for a caller
        that checks many candidates against one guaranteed set.
    job : Job
        The candidate.
    gpus : int
        M, the GPUs of the guaranteed cluster.
    lease_length : float
        T_l in seconds.
    round_up : bool
        Charge Eq. (6)'s consolidation-friendly GPU counts.
    max_terms : int or None
        Cap on every deadline, in terms.
    time_limit : float or None
        Seconds for the feasibility MILP (None: the library default).
    prove : bool
        Run the feasibility MILP when the greedy and EDF find no schedule
        (False: heuristics only, O(N P H); their failure is ``time_limit``,
        undecided, not admitted).

    Returns
    -------
    Admission
        ``admitted`` with the guaranteeing schedule, ``infeasible`` when
        proven impossible (a candidate needing more than M GPUs included),
        ``time_limit`` when undecided (not admitted).

    Raises
    ------
    InvalidInstanceError
        When ``job`` is already guaranteed, or the input is invalid (a
        guaranteed job needing more than M GPUs among others).

    Examples
    --------
    >>> from scheduling_opt.model import Job, RewardStep
    >>> a = Job("a", 4, 4, 2.0, deadlines=(RewardStep(2.0, 100),))
    >>> admit_jobs([a], Job("b", 4, 4, 1.0, deadlines=(RewardStep(3.0, 100),)), 4, 1.0).admitted
    True
    >>> admit_jobs([a], Job("c", 4, 4, 1.0, deadlines=(RewardStep(2.0, 100),)), 4, 1.0).status
    <Status.INFEASIBLE: 'infeasible'>

    References
    ----------
    Chronus (SoCC '21) §3.3.2.
    """
    base = guaranteed if isinstance(guaranteed, LeaseInput) else None
    jobs: Sequence[Job] = guaranteed.jobs if isinstance(guaranteed, LeaseInput) else guaranteed
    if any(g.id == job.id for g in jobs):
        raise InvalidInstanceError("job.id", f"job {job.id!r} is already guaranteed")
    limit = time_limit_of(time_limit)
    start = time.perf_counter()
    # Checked before the early "no" below, as LeaseInput would check them.
    gpus = read_int(gpus, "gpus", 0)
    if not read_number(lease_length, "lease_length") > 0:
        raise InvalidInstanceError("lease_length", f"must be > 0 seconds, got {lease_length!r}")
    charged = round_up_gpus(job.max_gpus) if round_up else job.max_gpus
    if charged > gpus:
        # A candidate bigger than the cluster is a proven "no", not an input error.
        return Admission(False, Status.INFEASIBLE, None, time.perf_counter() - start)
    if base is not None and (
        base.capacity,
        base.lease_length,
        base.require_all,
        base.round_up,
        base.max_terms,
    ) == (gpus, float(lease_length), True, round_up, max_terms):
        inp = base.with_job(job)
    else:
        inp = LeaseInput(
            (*jobs, job),
            gpus,
            lease_length,
            require_all=True,
            round_up=round_up,
            max_terms=max_terms,
        )
    if inp.hopeless:
        return Admission(False, Status.INFEASIBLE, None, time.perf_counter() - start)
    found = complete_greedy(inp)
    if found is not None:
        result = finish(inp, found, Status.FEASIBLE, start, compacted=True)
        return Admission(True, Status.FEASIBLE, result, result.seconds)
    by_edf = edf(inp)
    if by_edf.decision is not None:
        return Admission(True, Status.FEASIBLE, by_edf, time.perf_counter() - start)
    if not prove:
        return Admission(False, Status.TIME_LIMIT, None, time.perf_counter() - start)
    result = exact(inp, time_limit=limit, config=ModelConfig(feasibility=True))
    seconds = time.perf_counter() - start
    if result.decision is not None:
        return Admission(True, Status.FEASIBLE, result, seconds)
    return Admission(False, result.status, None, seconds)


def admit(inp: LeaseInput, job: Job, *, time_limit: float | None = None) -> Admission:
    """Can ``job`` join the input's SLO jobs (all guaranteed) with every deadline still met?

    Parameters
    ----------
    inp : LeaseInput
        The guaranteed jobs, M, T_l, ``round_up`` and ``max_terms``.
    job : Job
        The candidate.
    time_limit : float or None
        Seconds for the feasibility MILP (None: the library default).

    Returns
    -------
    Admission
        As :func:`admit_jobs`.

    Raises
    ------
    InvalidInstanceError
        When ``job`` is already among the input's jobs.

    Examples
    --------
    >>> from scheduling_opt.model import Job, RewardStep
    >>> a = Job("a", 8, 8, 2400.0, deadlines=(RewardStep(4800.0, 100),))
    >>> inp = LeaseInput([a], capacity=8, lease_length=1200.0)
    >>> admit(inp, Job("x", 8, 8, 3600.0, deadlines=(RewardStep(3600.0, 1),))).admitted
    False

    References
    ----------
    Chronus (SoCC '21) §3.3.2.
    """
    return admit_jobs(
        inp.jobs,
        job,
        inp.capacity,
        inp.lease_length,
        round_up=inp.round_up,
        max_terms=inp.max_terms,
        time_limit=time_limit,
    )


def admission_control(
    guaranteed: Sequence[Job],
    candidates: Sequence[Job],
    gpus: int,
    lease_length: float,
    *,
    round_up: bool = False,
    max_terms: int | None = None,
    time_limit: float | None = None,
) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """Label profiled SLO jobs in order: (guaranteed ids, unguaranteed ids).

    Parameters
    ----------
    guaranteed : sequence of Job
        The SLO jobs already guaranteed.
    candidates : sequence of Job
        Profiled jobs, in the order they are decided.
    gpus : int
        M, the GPUs of the guaranteed cluster.
    lease_length : float
        T_l in seconds.
    round_up : bool
        Charge Eq. (6)'s consolidation-friendly GPU counts.
    max_terms : int or None
        Cap on every deadline, in terms.
    time_limit : float or None
        Seconds per feasibility MILP (None: the library default).

    Returns
    -------
    tuple of (tuple of str, tuple of str)
        The admitted and the rejected ids. Each admitted job joins the
        guaranteed set before the next is tried; an undecided check (time
        limit) counts as unguaranteed.

    Raises
    ------
    InvalidInstanceError
        As :func:`admit_jobs`.

    Examples
    --------
    >>> from scheduling_opt.model import Job, RewardStep
    >>> def job(j, g, d):
    ...     return Job(j, g, g, 1.0, deadlines=(RewardStep(d, 100),))
    >>> admission_control([], [job("a", 4, 1.0), job("b", 4, 1.0)], 4, 1.0)
    (('a',), ('b',))

    References
    ----------
    Chronus (SoCC '21) §3.3.2.
    """
    current = list(guaranteed)
    admitted: list[str] = []
    rejected: list[str] = []
    for job in candidates:
        verdict = admit_jobs(
            current,
            job,
            gpus,
            lease_length,
            round_up=round_up,
            max_terms=max_terms,
            time_limit=time_limit,
        )
        (admitted if verdict.admitted else rejected).append(job.id)
        if verdict.admitted:
            current.append(job)
    return tuple(admitted), tuple(rejected)
