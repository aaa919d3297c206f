"""Workloads: the simulator's job records, the Chronus-Philly trace and the bundled excerpt.

A :class:`SimJob` is one job as the engine sees it: times in the trace's
unit (minutes for Chronus-Philly), work = the running time at speed 1 (the
trace's ``duration``), deadlines as absolute ``(time, reward)`` steps on the
trace's clock. A :class:`Workload` is the jobs in the engine's order
(submit time, then job id; ids that are all decimal integers compare as
integers, since the trace's ids are ``"0"``..``"30939"``), with a content
hash for the output's provenance.

The bundled excerpt (:func:`bundled`) is the jobs submitted in the first day
(``submit_time < 1440``) of P_MIX2: 5,222 rows copied byte for byte (5,217
jobs with GPUs), MIT license beside it in ``scheduling_opt/sim/data/``.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

from scheduling_opt.errors import InvalidInstanceError
from scheduling_opt.io.traces import ZeroGpu, iter_trace

#: Name of the bundled excerpt (``--workload`` value).
BUNDLED = "philly-mix2-day1"
#: Reward multiplier: the file's 10-8-5-2 becomes 100-80-50-20 (wDMR bounds 1 and 100).
REWARD_SCALE = 10.0


@dataclass(frozen=True, slots=True)
class SimJob:
    """One job of a workload (times in the trace's unit).

    ``deadlines`` are absolute ``(time, reward)`` steps, empty for best effort.
    ``min_gpus``/``max_gpus`` bound an elastic job's size (both ``gpus`` for an
    inelastic one); ``scaling`` gives ``(gpus, relative speed)`` points of an
    elastic job's curve (empty: linear in the GPU count).
    """

    id: str
    submit: float
    gpus: int
    work: float
    model: str | None = None
    tenant: str | None = None
    deadlines: tuple[tuple[float, float], ...] = ()
    job_type: str = "best"
    min_gpus: int = 0
    max_gpus: int = 0
    scaling: tuple[tuple[int, float], ...] = ()

    def __post_init__(self) -> None:
        if self.min_gpus == 0:
            object.__setattr__(self, "min_gpus", self.gpus)
        if self.max_gpus == 0:
            object.__setattr__(self, "max_gpus", self.gpus)

    @property
    def slo(self) -> bool:
        """Whether the job has a deadline (strict or soft SLO)."""
        return bool(self.deadlines)

    @property
    def first_deadline(self) -> float:
        """The first deadline step's time, ``inf`` for best effort."""
        return self.deadlines[0][0] if self.deadlines else float("inf")


@dataclass(frozen=True, slots=True)
class Workload:
    """Jobs in engine order, with a name and a content hash.

    Examples
    --------
    >>> w = Workload.of([SimJob("b", 0.0, 1, 5.0), SimJob("a", 0.0, 1, 3.0)], "demo")
    >>> [j.id for j in w.jobs]
    ['a', 'b']
    """

    jobs: tuple[SimJob, ...]
    name: str
    digest: str

    @classmethod
    def of(cls, jobs: Iterable[SimJob], name: str) -> Workload:
        """Validate ``jobs`` and sort them by (submit, id)."""
        items = list(jobs)
        seen: set[str] = set()
        for i, j in enumerate(items):
            where = f"{name}: job {j.id!r}"
            if j.id in seen:
                raise InvalidInstanceError(where, "duplicate job id")
            seen.add(j.id)
            if j.gpus < 1 or not 1 <= j.min_gpus <= j.gpus <= j.max_gpus:
                raise InvalidInstanceError(where, f"bad GPU counts at position {i}")
            if not (j.submit >= 0 and j.work > 0) or j.work == float("inf"):
                raise InvalidInstanceError(where, "needs submit >= 0 and finite work > 0")
        numeric = all(j.id.isdigit() for j in items)
        items.sort(
            key=(lambda j: (j.submit, int(j.id))) if numeric else (lambda j: (j.submit, j.id))
        )
        h = hashlib.sha256()
        for j in items:
            h.update(repr(j).encode())
        return cls(tuple(items), name, h.hexdigest()[:16])


def load_trace(
    path: str | Path, *, zero_gpu: ZeroGpu = "skip", name: str | None = None
) -> Workload:
    """A Chronus-Philly CSV as a :class:`Workload` (errors name ``file:line column``).

    ``zero_gpu`` as in :func:`scheduling_opt.io.traces.to_job`: ``"skip"``
    (default) drops the rows asking for 0 GPUs, ``"one"`` runs them on 1 GPU.
    A zero duration (never in the released files) is an error: a job must
    hold GPUs for some time to be scheduled at all.
    """
    jobs: list[SimJob] = []
    for line, rec in enumerate(iter_trace(path), start=2):
        gpus = rec.num_gpu
        if gpus == 0:
            if zero_gpu == "skip":
                continue
            gpus = 1
        if rec.duration <= 0:
            raise InvalidInstanceError(f"{path}:{line} duration", "must be > 0")
        steps = tuple((rec.submit_time + d, v * REWARD_SCALE) for d, v in rec.deadlines)
        jobs.append(
            SimJob(
                id=rec.job_id,
                submit=rec.submit_time,
                gpus=gpus,
                work=rec.duration,
                model=rec.model_name or None,
                tenant=rec.user or None,
                deadlines=steps,
                job_type=rec.job_type,
            )
        )
    return Workload.of(jobs, name or Path(path).stem)


def data_path(name: str) -> Path:
    """Path of a bundled data file (``scheduling_opt/sim/data/<name>``)."""
    return Path(str(resources.files("scheduling_opt.sim").joinpath("data").joinpath(name)))


def bundled() -> Workload:
    """The bundled excerpt: P_MIX2's jobs submitted in its first day (5,217 with GPUs).

    Examples
    --------
    >>> w = bundled()
    >>> len(w.jobs), w.jobs[0].submit >= 0, max(j.submit for j in w.jobs) < 1440
    (5217, True, True)
    """
    return load_trace(data_path("philly_mix2_day1.csv"), name=BUNDLED)
