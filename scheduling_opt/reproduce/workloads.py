"""The papers' workloads as simulator workloads: a trace plus a documented job-shape rule.

A :class:`PaperWorkload` is a :class:`~scheduling_opt.sim.sweep.WorkloadSpec`
(so a :class:`~scheduling_opt.sim.sweep.RunConfig` carries it, pickles it and
hashes it into the cache key) that applies an :class:`ElasticRule` to the
jobs it loads. The rule is deterministic: a job is elastic when a hash of its
id falls in the elastic share (no RNG, so the same job is elastic under every
policy and seed).

Scaling curve of an elastic job (the papers publish none for their traces):
Amdahl's law with a serial fraction ``serial``, S(p) = p / (1 + serial (p - 1)),
sampled at every GPU count from 1 to the job's maximum: throughput grows with
the GPU count and efficiency falls (EDL Figure 2's strong scaling).
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field, replace
from typing import ClassVar

from scheduling_opt.errors import InvalidInstanceError
from scheduling_opt.sim.policies.ones_jobs import OnesSpec
from scheduling_opt.sim.policies.ones_jobs import generate as generate_ones
from scheduling_opt.sim.sweep import WorkloadSpec
from scheduling_opt.sim.workload import SimJob, Workload


@dataclass(frozen=True, slots=True)
class ElasticRule:
    """Which jobs are elastic, and their range and curve.

    ``share``: fraction of jobs made elastic (by a hash of the id);
    ``min_fraction``: an elastic job may shrink to ceil(min_fraction x g)
    GPUs (at least 1); ``max_factor``: and grow to ``max_factor x g`` GPUs,
    capped at ``max_gpus``; ``serial``: Amdahl's serial fraction of the curve.

    Examples
    --------
    >>> rule = ElasticRule(share=1.0, min_fraction=0.5, max_factor=2.0, serial=0.1)
    >>> j = rule.apply(SimJob("7", 0.0, 4, 60.0))
    >>> j.min_gpus, j.gpus, j.max_gpus, j.scaling[:2]
    (2, 4, 8, ((1, 1.0), (2, 1.8181818181818181)))
    """

    share: float = 1.0
    min_fraction: float = 0.0
    max_factor: float = 2.0
    max_gpus: int = 64
    serial: float = 0.05

    def __post_init__(self) -> None:
        if not 0.0 <= self.share <= 1.0:
            raise InvalidInstanceError("elastic.share", f"must be in [0, 1], got {self.share}")
        if not 0.0 <= self.min_fraction <= 1.0:
            raise InvalidInstanceError("elastic.min_fraction", "must be in [0, 1]")
        if not self.max_factor >= 1.0 or self.max_gpus < 1:
            raise InvalidInstanceError("elastic.max_factor", "must be >= 1 (max_gpus >= 1)")
        if not 0.0 <= self.serial < 1.0:
            raise InvalidInstanceError("elastic.serial", "must be in [0, 1)")

    def chosen(self, job_id: str) -> bool:
        """Whether job ``job_id`` is elastic (a stable hash, not an RNG)."""
        if self.share >= 1.0:
            return True
        h = int.from_bytes(hashlib.sha256(job_id.encode()).digest()[:8], "big")
        return h / 2**64 < self.share

    def apply(self, job: SimJob) -> SimJob:
        """``job`` made elastic when chosen (else unchanged)."""
        if not self.chosen(job.id):
            return job
        g = job.gpus
        low = max(1, -(-int(self.min_fraction * g * 1000) // 1000))
        high = max(g, min(self.max_gpus, int(self.max_factor * g)))
        curve = tuple((p, p / (1.0 + self.serial * (p - 1))) for p in range(1, high + 1))
        return replace(job, min_gpus=min(low, g), max_gpus=high, scaling=curve)


@dataclass(frozen=True, slots=True)
class PaperWorkload(WorkloadSpec):
    """A workload spec plus a job-shape rule and a label for the report.

    Examples
    --------
    >>> w = PaperWorkload("bundled", elastic=ElasticRule(), label="excerpt").load(0)
    >>> len(w.jobs), w.jobs[0].max_gpus == 2 * w.jobs[0].gpus, w.name
    (5217, True, 'excerpt')
    """

    elastic: ElasticRule | None = None
    label: str = ""

    def load(self, seed: int) -> Workload:
        base = WorkloadSpec.load(self, seed)
        if self.elastic is None:
            jobs = base.jobs
        else:
            jobs = tuple(self.elastic.apply(j) for j in base.jobs)
        return Workload.of(jobs, self.name)

    @property
    def name(self) -> str:
        return self.label or WorkloadSpec.name.fget(self)  # type: ignore[attr-defined]


@dataclass(frozen=True, slots=True)
class OnesWorkload(PaperWorkload):
    """ONES' §4.2 workload, drawn with the run's seed (no trace needed).

    The draw rule is :func:`scheduling_opt.sim.policies.ones_jobs.generate`'s
    (Table 2's 50 workloads, Poisson arrivals, P_MIX2's GPU counts, times in
    seconds).

    Examples
    --------
    >>> w = OnesWorkload(ones=OnesSpec(jobs=20), label="ones-20").load(1)
    >>> len(w.jobs), w.name, w.jobs == OnesWorkload(ones=OnesSpec(jobs=20)).load(1).jobs
    (20, 'ones-20', True)
    """

    KINDS: ClassVar[tuple[str, ...]] = (*WorkloadSpec.KINDS, "ones")

    ones: OnesSpec = field(default_factory=OnesSpec)

    def load(self, seed: int) -> Workload:
        return Workload.of(generate_ones(self.ones, seed).jobs, self.name)

    @property
    def name(self) -> str:
        return self.label or f"ones-{self.ones.jobs}"
