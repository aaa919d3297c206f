"""Every bound of a workload on a cluster at once, each with its method and time.

:func:`offline_bounds` relaxes the workload once
(:func:`~scheduling_opt.sim.bounds.envelope.relax`) and returns a
:class:`Bounds`: the mean-JCT lower bound (the best of the shortest runs,
pooled SRPT and the Lagrangian: each is a lower bound on the same sum, so
their maximum is one), the makespan lower bound, the utilization upper
bound and the wDMR lower bound. Lower bounds are rounded down and upper
bounds up by a relative 1e-9, so floating-point sums cannot carry a bound
past the value it bounds.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

from scheduling_opt.sim.bounds.deadlines import wdmr_bound
from scheduling_opt.sim.bounds.envelope import Envelope, Relaxation, relax
from scheduling_opt.sim.bounds.grid import INTERVALS, grid_for
from scheduling_opt.sim.bounds.jct import STEPS as JCT_STEPS
from scheduling_opt.sim.bounds.jct import (
    duration_bound,
    lagrangian_bound,
    srpt_bound,
)
from scheduling_opt.sim.bounds.makespan import makespan_bound, utilization_bound
from scheduling_opt.sim.cluster import ClusterSpec
from scheduling_opt.sim.workload import Workload

#: Relative margin toward the safe side (lower bounds down, upper bounds up).
SAFETY = 1e-9


@dataclass(frozen=True, slots=True)
class Bound:
    """One bound: its value, the method that gave it, and every method's value.

    Examples
    --------
    >>> Bound(2.0, "srpt", {"srpt": 2.0, "shortest run": 1.5}).value
    2.0
    """

    value: float
    method: str
    candidates: dict[str, float] = field(default_factory=dict)

    def as_dict(self) -> dict[str, object]:
        """``{"value", "method", "candidates"}`` for JSON."""
        return {"value": self.value, "method": self.method, "candidates": dict(self.candidates)}


@dataclass(frozen=True, slots=True)
class Bounds:
    """The offline bounds of a workload on a cluster, for the runs ``envelope`` covers."""

    jct_mean_lower: Bound
    makespan_lower: Bound
    utilization_upper: Bound
    wdmr_lower: Bound
    envelope: Envelope
    jobs: int
    counted: int
    slo_jobs: int
    nominal: float
    seconds: dict[str, float]

    def as_dict(self) -> dict[str, object]:
        """The JSON object of ``scheduling-opt bound --json`` (docs/bounds.md, "Output")."""
        return {
            "jct_mean_lower": self.jct_mean_lower.as_dict(),
            "makespan_lower": self.makespan_lower.as_dict(),
            "utilization_upper": self.utilization_upper.as_dict(),
            "wdmr_lower": self.wdmr_lower.as_dict(),
            "covers": list(self.envelope.covered),
            "excludes": dict(self.envelope.excluded),
            "gpu_throughput": self.envelope.gpu_throughput,
            "jobs": self.jobs,
            "counted_jobs": self.counted,
            "slo_jobs": self.slo_jobs,
            "seconds": dict(self.seconds),
        }


def _lower(candidates: dict[str, float]) -> Bound:
    method = max(candidates, key=lambda k: (candidates[k], -list(candidates).index(k)))
    return Bound(candidates[method] * (1.0 - SAFETY), method, candidates)


def bounds_of(
    rel: Relaxation,
    env: Envelope,
    *,
    intervals: int = INTERVALS,
    jct_steps: int = JCT_STEPS,
    wdmr_steps: int | None = None,
    time_limit: float | None = None,
    seconds: dict[str, float] | None = None,
) -> Bounds:
    """Every bound of a relaxation (see :func:`offline_bounds`); ``seconds``: CPU spent before."""
    seconds = dict(seconds or {})
    clock = time.process_time()
    grid = grid_for(rel, intervals)
    jct = {"shortest run": duration_bound(rel), "pooled SRPT": srpt_bound(rel)}
    seconds["jct_simple"] = time.process_time() - clock
    clock = time.process_time()
    lagrange = lagrangian_bound(rel, grid=grid, steps=jct_steps, time_limit=time_limit)
    jct["Lagrangian"] = lagrange.value
    seconds["jct_lagrangian"] = time.process_time() - clock
    clock = time.process_time()
    makespan = makespan_bound(rel)
    utilization = utilization_bound(rel, makespan * (1.0 - SAFETY))
    seconds["makespan"] = time.process_time() - clock
    clock = time.process_time()
    kwargs = {} if wdmr_steps is None else {"steps": wdmr_steps}
    wdmr = wdmr_bound(rel, grid=grid, time_limit=time_limit, **kwargs)
    seconds["wdmr"] = time.process_time() - clock
    slo = sum(1 for i, s in enumerate(rel.steps) if s and rel.weight[i] > 0)
    return Bounds(
        jct_mean_lower=_lower(jct),
        makespan_lower=Bound(
            makespan * (1.0 - SAFETY), "earliest ends and area after each time", {}
        ),
        utilization_upper=Bound(
            min(1.0, utilization * (1.0 + SAFETY)),
            "GPU time at speed 1 over the makespan bound (runs busy no longer than that)",
            {},
        ),
        wdmr_lower=_lower({"reachability": wdmr.reachability, "Lagrangian": wdmr.value}),
        envelope=env,
        jobs=rel.jobs,
        counted=int(rel.weight.sum()),
        slo_jobs=slo,
        nominal=rel.nominal,
        seconds=seconds,
    )


def offline_bounds(
    workload: Workload,
    cluster: ClusterSpec,
    env: Envelope,
    *,
    skip: float = 0.0,
    time_limit: float | None = None,
) -> Bounds:
    """The offline bounds of ``workload`` on ``cluster`` for the runs ``env`` covers.

    Parameters
    ----------
    workload : Workload
        The jobs.
    cluster : ClusterSpec
        The servers (every GPU counts in the pooled capacity; the GPUs
        available at the start in the utilization's denominator).
    env : Envelope
        The policies to cover (:func:`~scheduling_opt.sim.bounds.envelope.envelope_of`).
    skip : float
        The fraction of first jobs the metrics leave out (``summarize``).
    time_limit : float, optional
        Seconds per iterative bound (the bounds stay valid; without it the
        iteration budgets make the result deterministic).

    Returns
    -------
    Bounds

    Examples
    --------
    >>> from scheduling_opt.sim.bounds.envelope import envelope_of
    >>> from scheduling_opt.sim.workload import SimJob
    >>> w = Workload.of([SimJob("0", 0.0, 1, 4.0), SimJob("1", 0.0, 1, 2.0)], "demo")
    >>> b = offline_bounds(w, ClusterSpec.uniform(1, 1), envelope_of([("srtf", {})]))
    >>> round(b.makespan_lower.value, 6), round(b.utilization_upper.value, 6)
    (6.0, 1.0)
    >>> 3.0 < b.jct_mean_lower.value <= 4.0, b.wdmr_lower.value
    (True, 0.0)
    """
    clock = time.process_time()
    rel = relax(workload, cluster, env, skip=skip)
    spent = {"relax": time.process_time() - clock}
    return bounds_of(rel, env, time_limit=time_limit, seconds=spent)
