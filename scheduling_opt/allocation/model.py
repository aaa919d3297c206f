"""Aryl allocation's typed input (:class:`AllocationInput`) and decision.

Given the free GPUs, the queued jobs and the running elastic jobs, decide how
many workers each job gets now so that the average job completion time (JCT)
is small (Aryl §5.1-§5.2). The input is built from :class:`~scheduling_opt.model.Job`
objects and validated here with the rules of the file reader.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt

from scheduling_opt.errors import InvalidInstanceError
from scheduling_opt.model import Job

#: Relative tolerance of time comparisons in the simulator and the checker.
TOLERANCE = 1e-9


@dataclass(frozen=True, slots=True)
class Scaling:
    """Throughput ~ workers ** exponent within a job's range (1: linear, Aryl §5).

    Parameters
    ----------
    exponent : float
        In (0, 1]; Aryl §7.2 uses sublinear scaling for its sensitivity study.

    Raises
    ------
    InvalidInstanceError
        ``exponent`` outside (0, 1].

    Examples
    --------
    >>> Scaling(0.5).time(Job("a", 1, 4, 10.0), 1)
    20.0

    References
    ----------
    Aryl (EuroSys '22) §5 and §7.2.
    """

    exponent: float = 1.0

    def __post_init__(self) -> None:
        if (
            isinstance(self.exponent, bool)
            or not isinstance(self.exponent, (int, float))
            or not math.isfinite(self.exponent)
            or not 0 < self.exponent <= 1
        ):
            raise InvalidInstanceError("exponent", f"must be in (0, 1], got {self.exponent!r}")

    def time(self, job: Job, workers: int) -> float:
        """Running time of the whole job at a constant ``workers``."""
        return float(job.duration * (job.max_workers / workers) ** self.exponent)

    def times(self, job: Job, workers: npt.NDArray[np.int64]) -> npt.NDArray[np.float64]:
        """:meth:`~scheduling_opt.allocation.model.Scaling.time` at each of ``workers`` (an array; the same floats, element-wise).

        Examples
        --------
        >>> Scaling().times(Job("a", 1, 4, 10.0), np.array([1, 2, 4])).tolist()
        [40.0, 20.0, 10.0]
        """
        if self.exponent != 1.0:  # numpy's power may round otherwise than the scalar's
            return np.array([self.time(job, int(w)) for w in workers], dtype=np.float64)
        return job.duration * (job.max_workers / workers.astype(np.float64))


LINEAR = Scaling()


@dataclass(frozen=True, slots=True)
class AllocationInput:
    """The jobs to allocate and the GPUs they may use.

    Parameters
    ----------
    jobs : sequence of Job
        Queued jobs and running elastic jobs, in queue order. Durations of
        running jobs are their remaining running time at ``max_workers``.
    capacity : int
        Free GPUs in training-GPU units, Aryl §5.2's available resources:
        idle GPUs plus those held by running elastic jobs' flexible workers,
        each weighted by its type's compute (see
        :func:`~scheduling_opt.allocation.free_capacity`). It may be smaller
        than the flexible GPUs the running jobs hold now (``running`` minus
        base demand, times GPUs per worker): a flexible worker on an on-loan
        T4 counts a quarter of a training GPU, and a caller may pass what is
        left after the inference cluster took servers back. Every method then
        scales those jobs in (never below base demand), and the checker
        refuses an answer whose workers beyond base demand need more than
        ``capacity``.
    running : mapping of str to int, optional
        Current worker count of each running elastic job; its base demand
        keeps running and is not part of ``capacity``.
    scaling : Scaling, optional
        Linear by default.

    Raises
    ------
    InvalidInstanceError
        Naming the field: ``jobs`` / ``jobs[i]`` (not a Job, duplicate ids, a
        queued job whose base demand exceeds every GPU that can ever be
        free: ``jobs[i].min_workers``), ``capacity``, ``running`` /
        ``running.<id>`` (unknown job, workers outside min..max), ``scaling``.

    Examples
    --------
    >>> inp = AllocationInput((Job("A", 2, 6, 50.0), Job("B", 2, 6, 20.0)), capacity=8)
    >>> inp.total_gpus, [j.id for j in inp.queued()]
    (8, ['A', 'B'])

    References
    ----------
    Aryl (EuroSys '22) §5.1-§5.2.
    """

    jobs: tuple[Job, ...]
    capacity: int
    running: Mapping[str, int] = field(default_factory=dict)
    scaling: Scaling = LINEAR
    total_gpus: int = field(init=False, repr=False, compare=False)
    """GPUs the simulation hands out: ``capacity`` plus running base demand
    (computed once: the exact method evaluates up to 200,000 allocations)."""

    def __post_init__(self) -> None:
        object.__setattr__(self, "jobs", tuple(self.jobs))
        if isinstance(self.capacity, np.integer):
            object.__setattr__(self, "capacity", int(self.capacity))
        object.__setattr__(
            self,
            "running",
            {
                job_id: int(k) if isinstance(k, np.integer) else k
                for job_id, k in dict(self.running).items()
            },
        )
        for i, job in enumerate(self.jobs):
            if not isinstance(job, Job):
                raise InvalidInstanceError(f"jobs[{i}]", f"must be a Job, got {job!r}")
        if isinstance(self.capacity, bool) or not isinstance(self.capacity, int):
            raise InvalidInstanceError("capacity", f"must be an integer, got {self.capacity!r}")
        if self.capacity < 0:
            raise InvalidInstanceError("capacity", f"must be >= 0, got {self.capacity}")
        if not isinstance(self.scaling, Scaling):
            raise InvalidInstanceError("scaling", f"must be a Scaling, got {self.scaling!r}")
        by_id = {j.id: j for j in self.jobs}
        if len(by_id) != len(self.jobs):
            raise InvalidInstanceError("jobs", "duplicate job ids")
        for job_id, k in self.running.items():
            if job_id not in by_id:
                raise InvalidInstanceError("running", f"unknown job {job_id!r}")
            job = by_id[job_id]
            if (
                isinstance(k, bool)
                or not isinstance(k, int)
                or not (job.min_workers <= k <= job.max_workers)
            ):
                raise InvalidInstanceError(
                    f"running.{job_id}",
                    f"must be {job.min_workers}..{job.max_workers} workers, got {k!r}",
                )
        total = self.capacity + sum(by_id[j].min_gpus for j in self.running)
        object.__setattr__(self, "total_gpus", total)
        for i, job in enumerate(self.jobs):
            if job.id not in self.running and job.min_gpus > total:
                raise InvalidInstanceError(
                    f"jobs[{i}].min_workers",
                    f"job {job.id!r} needs {job.min_gpus} GPUs at base demand, "
                    f"only {total} can ever be free",
                )

    def queued(self) -> list[Job]:
        """The jobs that do not run yet, in queue order."""
        return [j for j in self.jobs if j.id not in self.running]


@dataclass(frozen=True, slots=True)
class AllocationDecision:
    """Workers per job now (0: stays queued), and what that plan leads to.

    Attributes
    ----------
    workers : mapping of str to int
        Every job's worker count now (running jobs keep at least their minimum).
    start_now : tuple of str
        The queued jobs that start now, in queue order.
    jct : mapping of str to float
        Each job's completion time under
        :func:`~scheduling_opt.allocation.simulate_elastic`.
    average_jct : float
        Their mean (the objective).
    knapsack_value : float or None
        Two-phase only: the phase-two MCKP value (JCT reduction over base demand).
    """

    workers: Mapping[str, int]
    start_now: tuple[str, ...]
    jct: Mapping[str, float]
    average_jct: float
    knapsack_value: float | None = None
