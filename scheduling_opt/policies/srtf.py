"""Shortest-remaining-time-first selection of best-effort and unguaranteed SLO jobs.

The Spot cluster (the GPUs the guaranteed SLO jobs leave) runs best-effort
and unguaranteed SLO jobs in order of shortest remaining time; a job that
does not fit in what is left is skipped and smaller, later jobs may still
start (backfilling; ``backfill=False`` stops at the first job that does not
fit). Chronus (SoCC '21) §3.3.5. O(N log N) for N jobs.
"""

from __future__ import annotations

import time
from collections.abc import Iterable
from dataclasses import dataclass

from scheduling_opt.errors import InvalidInstanceError
from scheduling_opt.model import Job
from scheduling_opt.policies._numbers import as_int, expect, unique_ids
from scheduling_opt.solution import Seed, Solution, Status, time_limit_of


@dataclass(frozen=True, slots=True)
class SrtfInput:
    """The jobs waiting for the Spot cluster and the GPUs it has this lease term.

    Attributes
    ----------
    jobs : tuple of Job
        Best-effort and unguaranteed SLO jobs; ``duration`` is the remaining
        time, ``max_gpus`` the demand. Ids are unique.
    gpus : int
        GPUs of the Spot cluster (>= 0).
    backfill : bool
        Whether a smaller later job may start when an earlier one does not fit.
    """

    jobs: tuple[Job, ...]
    gpus: int
    backfill: bool = True

    def __post_init__(self) -> None:
        if isinstance(self.jobs, (str, bytes)) or not isinstance(self.jobs, Iterable):
            raise InvalidInstanceError(
                "jobs", f"must be a collection of Job, got {type(self.jobs).__name__}"
            )
        object.__setattr__(self, "jobs", tuple(self.jobs))
        for i, j in enumerate(self.jobs):
            if not isinstance(j, Job):
                raise InvalidInstanceError(f"jobs[{i}]", f"must be a Job, got {type(j).__name__}")
        unique_ids((j.id for j in self.jobs), "jobs")
        object.__setattr__(self, "gpus", as_int(self.gpus, "gpus", 0))
        if not isinstance(self.backfill, bool):
            raise InvalidInstanceError("backfill", f"must be True or False, got {self.backfill!r}")


@dataclass(frozen=True, slots=True)
class SrtfSelection:
    """Jobs to run this lease term, in SRTF order, the others, and the GPUs used."""

    selected: tuple[str, ...]
    waiting: tuple[str, ...]
    used_gpus: int


def srtf(
    inp: SrtfInput, *, seed: Seed = None, time_limit: float | None = None
) -> Solution[SrtfSelection]:
    """Pick jobs by shortest remaining ``duration`` (ties: fewer GPUs, id) into the GPUs.

    Parameters
    ----------
    inp : SrtfInput
        The waiting jobs and the free GPUs.
    seed : int, numpy Generator or None
        Unused (the rule is deterministic); accepted for the common signature.
    time_limit : float, optional
        Validated only: the selection is one sort.

    Returns
    -------
    Solution[SrtfSelection]
        Status ``feasible``; objective: the GPUs used; no bound.

    Raises
    ------
    ValueError
        ``time_limit`` is not a positive number.

    Examples
    --------
    >>> from scheduling_opt.model import Job
    >>> jobs = (Job("long", 1, 1, 900.0), Job("big", 4, 4, 100.0), Job("short", 2, 2, 50.0))
    >>> sol = srtf(SrtfInput(jobs, 4))
    >>> sol.decision.selected, sol.objective
    (('short', 'long'), 3.0)

    References
    ----------
    Chronus (SoCC '21) §3.3.5.
    """
    expect(inp, SrtfInput, "inp")
    start = time.perf_counter()
    time_limit_of(time_limit)
    order = sorted(inp.jobs, key=lambda j: (j.duration, j.max_gpus, j.id))
    selected: list[str] = []
    waiting: list[str] = []
    left = inp.gpus
    blocked = False
    for job in order:
        if not blocked and job.max_gpus <= left:
            selected.append(job.id)
            left -= job.max_gpus
        else:
            waiting.append(job.id)
            blocked = blocked or not inp.backfill
    decision = SrtfSelection(tuple(selected), tuple(waiting), inp.gpus - left)
    return Solution(
        Status.FEASIBLE,
        float(decision.used_gpus),
        decision,
        seconds=time.perf_counter() - start,
    )


def srtf_select(jobs: Iterable[Job], gpus: int, *, backfill: bool = True) -> SrtfSelection:
    """Shorthand: the decision of :func:`srtf` on ``SrtfInput(jobs, gpus, backfill)``.

    Parameters
    ----------
    jobs : iterable of Job
        The waiting jobs (unique ids).
    gpus : int
        Free GPUs (an int or a numpy integer, >= 0).
    backfill : bool, default True
        Whether smaller later jobs may start past one that does not fit.

    Returns
    -------
    SrtfSelection
        The selected jobs (SRTF order), the waiting ones, the GPUs used.

    Raises
    ------
    InvalidInstanceError
        ``gpus`` is not an integer >= 0, or a job id repeats.

    Examples
    --------
    >>> from scheduling_opt.model import Job
    >>> srtf_select([Job("a", 2, 2, 50.0), Job("b", 4, 4, 10.0)], 4).selected
    ('b',)

    References
    ----------
    Chronus (SoCC '21) §3.3.5.
    """
    sol = srtf(SrtfInput(jobs, gpus, backfill))  # type: ignore[arg-type]  # it checks and copies
    assert sol.decision is not None
    return sol.decision
