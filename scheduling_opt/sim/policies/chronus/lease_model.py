"""The lease-job model: each SLO job as the lease solvers see it, and the guaranteed schedule's load.

Chronus (SoCC '21) §3.3 selects, each lease term, which guaranteed jobs
hold which terms. A job enters that model (:class:`~scheduling_opt.model.Job`)
with its remaining work and its reward steps counted from the model's
origin (the term's start), and only while one of its deadlines is
reachable in whole terms (at most ``max_terms`` of them). The remaining
work is the trace's (``estimate="oracle"``, an oracle) or the Chronus
artifact's estimate less the time run (``estimate="artifact"``,
:class:`~scheduling_opt.sim.policies.chronus.artifact.rules.Estimates`).
Between terms every admission check rebuilds the same jobs, so each job's
last lease job is kept and rebuilt only when its origin or its remaining
work moves.

:class:`LeaseModel` also holds the GPUs per term the current guaranteed
schedule holds (the term's selection plus the jobs admitted since), so that
an arriving job's quick admission (:meth:`LeaseModel.fits`) is a lookup in
that load, O(H) for H terms, instead of a new search.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Mapping, Sequence

import numpy as np

from scheduling_opt.lease import round_up_gpus
from scheduling_opt.model import Job, RewardStep
from scheduling_opt.sim.policies.chronus.artifact.rules import Estimates, bins
from scheduling_opt.sim.policies.chronus.options import ChronusOptions
from scheduling_opt.sim.protocol import JobView, View

__all__ = ["LeaseModel"]


class LeaseModel:
    """The lease jobs of one run, their cache, and the guaranteed schedule's load per term.

    Parameters
    ----------
    options : ChronusOptions
        The run's options (``lease_length``, ``max_terms``, ``estimate``,
        the round-up).
    estimates : Estimates
        The artifact's estimate per job (shared with the artifact's queue).

    Examples
    --------
    >>> from types import SimpleNamespace
    >>> from scheduling_opt.sim import SimJob
    >>> model = LeaseModel(ChronusOptions(lease_length=10.0), Estimates(10.0))
    >>> st = SimpleNamespace(index=0, job=SimJob("a", 0.0, 3, 25.0, deadlines=((40.0, 1.0),)))
    >>> st.remaining = lambda now: 25.0
    >>> job = model.lease_job(st, 0.0, 0.0)  # type: ignore[arg-type]
    >>> job.duration, job.deadlines[0].time
    (25.0, 40.0)
    >>> model.lease_job(st, 0.0, 20.0) is None  # 3 terms of work, 2 left before 40
    True
    """

    def __init__(self, options: ChronusOptions, estimates: Estimates) -> None:
        self.options = options
        self.estimates = estimates
        # Per job its last lease job (origin, remaining, job or None, steps from origin).
        self.jobs: dict[int, tuple[float, float, Job | None, tuple[RewardStep, ...]]] = {}
        #: GPUs per term that the guaranteed schedule holds, from :attr:`origin`.
        self.load: list[int] = []
        #: The time the load's term 0 starts (None: no schedule yet).
        self.origin: float | None = None

    def charged(self, gpus: int) -> int:
        """GPUs a job of ``gpus`` holds in the lease: binned, rounded up (Eq. (6)), or as asked."""
        if self.options.estimate == "artifact":
            return bins(gpus)
        return round_up_gpus(gpus) if self.options.round_up else gpus

    def remaining(self, st: JobView, now: float) -> float:
        """The lease's remaining work: the trace's (an oracle), or the estimate less the time run."""
        if self.options.estimate == "artifact":
            return max(self.estimates.of(st) - st.attained(now), 1e-9)
        return max(st.remaining(now), 1e-9)

    def lease_job(self, st: JobView, now: float, origin: float) -> Job | None:
        """The job in the lease model from ``origin``, or None when no deadline is reachable."""
        length = self.options.lease_length
        remaining = self.remaining(st, now)
        cached = self.jobs.get(st.index)
        if cached is not None and cached[0] == origin:
            if cached[1] == remaining:
                return cached[2]
            steps = cached[3]
        else:
            # Trusted: the SimJob was validated; steps after origin are finite and > 0.
            steps = tuple(
                RewardStep._trusted(t - origin, v) for t, v in st.job.deadlines if t > origin
            )
        need = math.ceil(remaining / length)
        if not steps or self.options.cap(math.floor(steps[-1].time / length)) < need:
            job = None
        else:
            gpus = bins(st.job.gpus) if self.options.estimate == "artifact" else st.job.gpus
            job = Job._trusted(str(st.index), gpus, remaining, steps)
        self.jobs[st.index] = (origin, remaining, job, steps)
        return job

    def guaranteed_jobs(self, view: View, origin: float, guaranteed: set[int]) -> list[Job]:
        """The lease jobs of the ``guaranteed`` jobs from ``origin``, by index (unreachable ones left out)."""
        out: list[Job] = []
        for st in sorted((*view.pending.values(), *view.running.values()), key=lambda s: s.index):
            if st.index in guaranteed:
                job = self.lease_job(st, view.now, origin)
                if job is not None:
                    out.append(job)
        return out

    def lease_charge(self, job: Job) -> int:
        """GPUs the lease charges a lease job (its GPUs are already binned under the estimate)."""
        return round_up_gpus(job.max_gpus) if self.options.lease_round_up else job.max_gpus

    def set_load(
        self, terms: Mapping[str, Sequence[int]], jobs: Sequence[Job], origin: float
    ) -> None:
        """The GPUs per term that a schedule of the guaranteed jobs holds, from ``origin``."""
        gpus = {job.id: self.lease_charge(job) for job in jobs}
        max_terms = self.options.max_terms
        size = max_terms + 2 if max_terms is not None else 2
        # One bincount over every held term (terms >= 0; exact: integer sums).
        counts = [len(held) for held in terms.values()]
        flat = np.fromiter(itertools.chain.from_iterable(terms.values()), np.int64, sum(counts))
        weights = np.repeat(np.array([gpus[j] for j in terms], dtype=np.float64), counts)
        load = np.bincount(flat, weights, minlength=size).astype(np.int64).tolist()
        self.load, self.origin = load, origin

    def fits(self, job: Job, origin: float, capacity: int, *, first: bool = False) -> bool:
        """Add ``job`` to the guaranteed schedule in the latest terms with room before its last deadline.

        The guaranteed schedule plus these terms is a schedule meeting a
        deadline of every job: admission proven without a new search.
        ``first``: before its first deadline (the artifact's check). O(H).
        """
        if self.origin is None:
            return False
        length = self.options.lease_length
        shift = round((origin - self.origin) / length)
        need = math.ceil(job.duration / length)
        step = job.deadlines[0] if first else job.deadlines[-1]
        due = self.options.cap(math.floor(step.time / length))
        gpus = self.lease_charge(job)
        load = self.load
        if shift + due > len(load):
            load.extend([0] * (shift + due - len(load)))
        picked = [shift + k for k in range(due - 1, -1, -1) if load[shift + k] + gpus <= capacity][
            :need
        ]
        if len(picked) < need:
            return False
        for k in picked:
            load[k] += gpus
        return True
