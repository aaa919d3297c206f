"""Aryl's evaluation scenarios as what they make of a run's jobs (§7.1 Ideal, §7.2 imperfect scaling).

Two of Aryl's evaluation conditions are properties of the jobs, not of the
scheduler, and the simulator's jobs carry them (``SimJob.min_gpus``,
``max_gpus``, ``scaling``); the aryl family's ``workload`` hook applies them
to a run's jobs from the policy's parameters:

- **Every job elastic** (``scale_all``; the Ideal scenario, §7.1: "All jobs
  support scaling"). An inelastic job of g GPUs becomes elastic over
  ``ceil(a g)`` (at least 1) to ``min(64, floor(b g))`` (at least g) GPUs,
  a = ``elastic_min``, b = ``elastic_max``, scaling linearly (§5's assumption): the rule
  ``reproduce aryl`` applies to its Basic elastic jobs (half to twice), so
  the Ideal jobs are the Basic ones' kind, all of them. Jobs already elastic
  keep their range.
- **Imperfect scaling** (``scaling_loss``, §7.2: "whenever a job scales
  beyond the midpoint of its scaling range, its throughput suffers
  additional 10% loss from the ideal performance each time it scales one
  step further", Fig. 10). An elastic job of range [m, M] runs on n GPUs at
  ``n x eff(n)`` (its scaling curve), ``eff(n) = max(1 - loss x max(0, (n -
  (m + M) / 2) / u), EFFICIENCY_FLOOR)``: one step past the midpoint loses
  ``loss`` more, and between whole steps the loss grows in proportion (our
  elastic jobs scale a GPU at a time). The step u is not stated; Aryl
  scales in whole workers, and its examples have ranges of a few workers
  (Table 2: 2 to 6). ``scaling_step="base"`` (the default) takes a step as
  the job's base demand (u = m), so every range [g/2, 2g] has the same
  shape, four steps of g/2, the midpoint at 1.25 g and 15% lost at 2 g;
  ``"gpu"`` takes a step as one GPU (u = 1, the literal reading when a
  worker is one GPU), under which a job of 8 GPUs loses 60% at 16 and one
  of 12 GPUs or more reaches the floor at its maximum. Below the midpoint, and at the
  nominal size (g < 1.25 g), a job runs as before.

Both leave the workload as it is (the same object) when off, so a run of
the Basic scenario is unchanged. Cost: O(J + the elastic jobs' curve
points) per run.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping

from scheduling_opt.sim.workload import SimJob, Workload

#: Largest size a job made elastic may reach (``reproduce``'s ElasticRule cap).
MAX_ELASTIC_GPUS = 64
#: The lowest efficiency imperfect scaling gives (a job never stalls).
EFFICIENCY_FLOOR = 0.1
#: What a step of imperfect scaling is (``scaling_step``).
STEPS = ("base", "gpu")


def elastic(job: SimJob, low: float, high: float) -> SimJob:
    """``job`` elastic over ceil(low g) to floor(high g) GPUs (linear); an elastic job as it is.

    Examples
    --------
    >>> j = elastic(SimJob("a", 0.0, 4, 10.0), 0.5, 2.0)
    >>> j.min_gpus, j.gpus, j.max_gpus, j.scaling
    (2, 4, 8, ())
    >>> elastic(SimJob("b", 0.0, 1, 10.0), 0.5, 2.0).min_gpus
    1
    """
    if job.min_gpus < job.max_gpus:
        return job
    g = job.gpus
    # The range rule of reproduce's ElasticRule (a fraction rounded up at 1/1000).
    lo = max(1, -(-int(low * g * 1000) // 1000))
    hi = max(g, min(MAX_ELASTIC_GPUS, int(high * g)))
    return dataclasses.replace(job, min_gpus=min(lo, g), max_gpus=hi, scaling=())


def efficiency(n: int, low: int, high: int, loss: float, step: str) -> float:
    """Share of linear throughput an elastic job of range [low, high] keeps on n GPUs (§7.2).

    Examples
    --------
    >>> efficiency(10, 4, 16, 0.1, "base")  # the midpoint: no loss
    1.0
    >>> round(efficiency(14, 4, 16, 0.1, "base"), 6)  # one base demand (4) past it
    0.9
    >>> round(efficiency(16, 4, 16, 0.1, "gpu"), 6)  # six GPUs past it
    0.4
    """
    unit = low if step == "base" else 1
    past = max(0.0, n - (low + high) / 2.0)
    return max(1.0 - loss * past / unit, EFFICIENCY_FLOOR)


def imperfect(job: SimJob, loss: float, step: str) -> SimJob:
    """``job`` with §7.2's curve when elastic (points at every GPU count to its maximum).

    Examples
    --------
    >>> j = imperfect(SimJob("a", 0.0, 2, 10.0, min_gpus=1, max_gpus=4), 0.1, "base")
    >>> [(n, round(v, 6)) for n, v in j.scaling]
    [(1, 1.0), (2, 2.0), (3, 2.85), (4, 3.4)]
    """
    lo, hi = job.min_gpus, job.max_gpus
    if lo == hi or loss == 0.0:
        return job
    curve = tuple((n, n * efficiency(n, lo, hi, loss, step)) for n in range(1, hi + 1))
    return dataclasses.replace(job, scaling=curve)


def with_scenario(workload: Workload, params: Mapping[str, object]) -> Workload:
    """The run's jobs under the scenario ``params`` set (the aryl family's ``workload`` hook).

    Examples
    --------
    >>> w = Workload.of([SimJob("a", 0.0, 4, 10.0)], "t")
    >>> with_scenario(w, {"scale_all": False, "scaling_loss": 0.0}) is w
    True
    >>> on = {"scale_all": True, "elastic_min": 0.5, "elastic_max": 2.0, "scaling_loss": 0.0}
    >>> with_scenario(w, on).jobs[0].max_gpus
    8
    """
    scale_all = bool(params.get("scale_all", False))
    loss = float(params.get("scaling_loss", 0.0))  # type: ignore[arg-type]
    if not scale_all and loss == 0.0:
        return workload
    jobs = workload.jobs
    if scale_all:
        low = float(params["elastic_min"])  # type: ignore[arg-type]
        high = float(params["elastic_max"])  # type: ignore[arg-type]
        jobs = tuple(elastic(j, low, high) for j in jobs)
    if loss:
        step = str(params.get("scaling_step", "base"))
        jobs = tuple(imperfect(j, loss, step) for j in jobs)
    return Workload.of(jobs, workload.name)
