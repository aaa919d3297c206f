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

Job density (:func:`scale_density`): a workload at density d has d times
the jobs per unit of time of the base one, by one of two documented rules:

- ``sample`` (Chronus §5.4, Fig. 9(c-f): "randomly removing 20% DLT jobs",
  "randomly selecting certain numbers of jobs and inject them"): below 1,
  round((1 - d) N) jobs chosen uniformly without replacement are removed;
  above 1, round((d - 1) N) copies of jobs drawn uniformly with replacement
  are added, each at a submit time drawn uniformly over the trace's
  submission span, its deadlines moved with it (the same slack), its id a
  new one. The paper does not say how injected jobs are timed: uniform over
  the span keeps the trace's jobs as they are and adds load everywhere.
- ``compress`` (for a synthetic workload's Poisson arrivals): the same jobs
  with every gap between submissions divided by d, deadlines moved with
  their jobs: exactly a d-times higher arrival rate with the same draws, so
  the points of a sweep differ only in load.
- ``cluster`` (for a trace whose regime needs a load that extra jobs make
  too costly to simulate): the jobs as they are, on the set's cluster with
  its servers divided by d (round(servers / d), at least 1:
  :meth:`~scheduling_opt.reproduce.papers.PaperSet.configs`): the same
  offered load per GPU as d times the jobs, with d times fewer events.

The draws are seeded by the run's seed (and are the same at every density:
the jobs removed at 0.8 are the first of one permutation, the jobs added at
1.4 extend those added at 1.2), so a sweep is repeatable job for job.
:func:`offered_load` measures the result: GPU-time submitted per unit of
submission span, over the cluster's GPUs.
"""

from __future__ import annotations

import hashlib
import math
from dataclasses import dataclass, field, replace
from typing import ClassVar, Literal

import numpy as np

from scheduling_opt.errors import InvalidInstanceError
from scheduling_opt.sim.ones_workload import OnesSpec
from scheduling_opt.sim.ones_workload import generate as generate_ones
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


DensityRule = Literal["sample", "compress", "cluster"]
#: Densities a sweep may ask for (a 10x denser trace is already 10x the jobs).
MAX_DENSITY = 10.0


def _moved(job: SimJob, submit: float, new_id: str | None = None) -> SimJob:
    """``job`` submitted at ``submit``, its deadlines keeping their slack."""
    # submit + slack, not t + shift: the slack as the trace wrote it, no rounding drift.
    steps = tuple((submit + (t - job.submit), v) for t, v in job.deadlines)
    return replace(job, id=new_id or job.id, submit=submit, deadlines=steps)


def scale_density(
    jobs: tuple[SimJob, ...], density: float, rule: DensityRule, seed: int
) -> tuple[SimJob, ...]:
    """``jobs`` (in engine order) at ``density`` times their jobs per unit of time.

    Parameters
    ----------
    jobs : tuple of SimJob
        The base workload's jobs, in engine order (submit, id).
    density : float
        In (0, :data:`MAX_DENSITY`]; 1 returns ``jobs`` unchanged.
    rule : {"sample", "compress", "cluster"}
        Remove / inject jobs (Chronus Fig. 9), divide the gaps between
        submissions, or leave the jobs as they are (the cluster shrinks
        instead; the module docstring).
    seed : int
        The draws' seed (the run's).

    Returns
    -------
    tuple of SimJob
        The new jobs (not sorted: :meth:`Workload.of` sorts them).

    Examples
    --------
    >>> base = tuple(SimJob(str(i), float(10 * i), 1, 5.0, deadlines=((10.0 * i + 8, 1.0),))
    ...              for i in range(10))
    >>> len(scale_density(base, 0.8, "sample", 0)), len(scale_density(base, 1.2, "sample", 0))
    (8, 12)
    >>> [(j.submit, j.deadlines) for j in scale_density(base, 2.0, "compress", 0)[:3]]
    [(0.0, ((8.0, 1.0),)), (5.0, ((13.0, 1.0),)), (10.0, ((18.0, 1.0),))]
    """
    if not (0.0 < density <= MAX_DENSITY) or math.isnan(density):
        raise InvalidInstanceError("density", f"must be in (0, {MAX_DENSITY:g}], got {density!r}")
    if density == 1.0 or not jobs or rule == "cluster":
        return jobs
    first = jobs[0].submit
    if rule == "compress":
        return tuple(_moved(j, first + (j.submit - first) / density) for j in jobs)
    if rule != "sample":
        raise InvalidInstanceError(
            "density rule", f"must be sample, compress or cluster, got {rule!r}"
        )
    n = len(jobs)
    drops, adds, times = (np.random.default_rng([seed, 9173, k]) for k in range(3))
    if density < 1.0:
        gone = set(drops.permutation(n)[: round((1.0 - density) * n)].tolist())
        return tuple(j for i, j in enumerate(jobs) if i not in gone)
    extra = round((density - 1.0) * n)
    picks = adds.integers(0, n, size=extra)
    last = max(j.submit for j in jobs)
    when = times.uniform(first, last, size=extra) if last > first else np.full(extra, first)
    numeric = all(j.id.isdigit() for j in jobs)
    top = max((int(j.id) for j in jobs), default=-1) if numeric else 0
    injected = []
    for k, (i, t) in enumerate(zip(picks.tolist(), when.tolist(), strict=True)):
        template = jobs[i]
        new_id = str(top + 1 + k) if numeric else f"{template.id}+{k}"
        injected.append(_moved(template, float(round(t, 3)), new_id))
    return jobs + tuple(injected)


#: Helios' Short jobs per H_MIX2 job (Chronus Table 1: 5,735 / 6,599).
SHORT_SHARE = 5735 / 6599
#: The longest Short job, minutes (T_profile: it ends in the Profiler).
SHORT_LONGEST = 5.0


def add_short(jobs: tuple[SimJob, ...], share: float, seed: int) -> tuple[SimJob, ...]:
    """``jobs`` plus ``round(share x len(jobs))`` synthesized Short jobs (Chronus Table 1).

    The released traces filtered out the jobs that end in the Profiler
    (§4.1, "Short"); this rule puts them back: each Short job copies the
    submission time and tenant of a job drawn uniformly from ``jobs``, asks
    for the GPUs of another such draw capped at 8 (one server, so that it
    can end in the Profiler), runs a duration drawn uniformly in
    [0.1, 1] x :data:`SHORT_LONGEST` minutes, and is best effort (id
    ``short-k``). Seeded by ``seed``; O(n).

    Examples
    --------
    >>> base = tuple(SimJob(str(i), float(i), 16, 60.0, tenant="u") for i in range(10))
    >>> out = add_short(base, 0.5, 0)
    >>> len(out), [j.id for j in out[10:12]], max(j.work for j in out[10:]) <= 5.0
    (15, ['short-0', 'short-1'], True)
    >>> {j.gpus for j in out[10:]}, out[10].tenant
    ({8}, 'u')
    """
    n = round(share * len(jobs))
    if n <= 0 or not jobs:
        return jobs
    rng = np.random.default_rng([seed, 5735])
    when = rng.integers(0, len(jobs), size=n).tolist()
    size = rng.integers(0, len(jobs), size=n).tolist()
    work = rng.uniform(0.1 * SHORT_LONGEST, SHORT_LONGEST, size=n).tolist()
    short = tuple(
        SimJob(
            f"short-{k}",
            jobs[i].submit,
            min(jobs[g].gpus, 8),
            float(round(w, 3)),
            tenant=jobs[i].tenant,
        )
        for k, (i, g, w) in enumerate(zip(when, size, work, strict=True))
    )
    return jobs + short


def offered_load(jobs: tuple[SimJob, ...], gpus: int) -> float:
    """GPU-time submitted per unit of submission span, over ``gpus`` GPUs (0 when undefined).

    Examples
    --------
    >>> offered_load((SimJob("a", 0.0, 4, 10.0), SimJob("b", 10.0, 4, 10.0)), 8)
    1.0
    """
    if len(jobs) < 2 or gpus <= 0:
        return 0.0
    span = max(j.submit for j in jobs) - min(j.submit for j in jobs)
    if span <= 0:
        return 0.0
    return sum(j.gpus * j.work for j in jobs) / (span * gpus)


@dataclass(frozen=True, slots=True)
class PaperWorkload(WorkloadSpec):
    """A workload spec plus a job-shape rule, a job density and a label for the report.

    ``density`` and ``density_rule``: :func:`scale_density` applied after
    loading (1: the workload as it is); ``short``: Short jobs added per job
    after that (:func:`add_short`; 0: none); ``label``: the report's name of
    the base workload (a density other than 1 is appended: ``"P_MIX2 x1.2"``).

    Examples
    --------
    >>> w = PaperWorkload("bundled", elastic=ElasticRule(), label="excerpt").load(0)
    >>> len(w.jobs), w.jobs[0].max_gpus == 2 * w.jobs[0].gpus, w.name
    (5217, True, 'excerpt')
    >>> PaperWorkload("bundled", label="excerpt", density=1.2).name
    'excerpt x1.2'
    """

    elastic: ElasticRule | None = None
    label: str = ""
    density: float = 1.0
    density_rule: DensityRule = "sample"
    short: float = 0.0

    def load(self, seed: int) -> Workload:
        base = WorkloadSpec.load(self, seed)
        jobs = scale_density(base.jobs, self.density, self.density_rule, seed)
        jobs = add_short(jobs, self.short, seed)
        if self.elastic is not None:
            jobs = tuple(self.elastic.apply(j) for j in jobs)
        return Workload.of(jobs, self.name)

    @property
    def base_name(self) -> str:
        """The name without the density (the report's workload)."""
        return self.label or WorkloadSpec.name.fget(self)  # type: ignore[attr-defined]

    @property
    def name(self) -> str:
        if self.density == 1.0:
            return self.base_name
        return f"{self.base_name} x{self.density:g}"


@dataclass(frozen=True, slots=True)
class OnesWorkload(PaperWorkload):
    """ONES' §4.2 workload, drawn with the run's seed (no trace needed).

    The draw rule is :func:`scheduling_opt.sim.ones_workload.generate`'s
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
        jobs = generate_ones(self.ones, seed).jobs
        return Workload.of(scale_density(jobs, self.density, self.density_rule, seed), self.name)

    @property
    def base_name(self) -> str:
        return self.label or f"ones-{self.ones.jobs}"
