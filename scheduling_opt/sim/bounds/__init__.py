"""Proven offline bounds for a workload on a cluster, beside every policy's result.

Each bound solves a relaxation that every schedule of the covered policies
maps into (docs/bounds.md: the relaxation, the proofs, the policies and
semantics covered, and the measured tightness):

- the mean JCT from below (:mod:`~scheduling_opt.sim.bounds.jct`: each
  job's shortest run, pooled SRPT, a Lagrangian of the pooled GPU
  capacity);
- the makespan from below and the utilization from above
  (:mod:`~scheduling_opt.sim.bounds.makespan`);
- the wDMR from below (:mod:`~scheduling_opt.sim.bounds.deadlines`: a
  Lagrangian of the SLO jobs' reward).

Examples
--------
>>> from scheduling_opt.sim import ClusterSpec, SimJob, Workload
>>> from scheduling_opt.sim.bounds import envelope_of, offline_bounds
>>> w = Workload.of([SimJob("0", 0.0, 8, 10.0), SimJob("1", 0.0, 8, 10.0)], "demo")
>>> b = offline_bounds(w, ClusterSpec.uniform(1, 8), envelope_of([("fifo", {})]))
>>> round(b.jct_mean_lower.value, 6), round(b.makespan_lower.value, 6)
(15.0, 20.0)
"""

from scheduling_opt.sim.bounds.envelope import (
    Envelope,
    Relaxation,
    batch_speeds,
    envelope_of,
    gpu_throughput,
    one_job_per_gpu,
    relax,
)
from scheduling_opt.sim.bounds.solve import Bound, Bounds, bounds_of, offline_bounds

__all__ = [
    "Bound",
    "Bounds",
    "Envelope",
    "Relaxation",
    "batch_speeds",
    "bounds_of",
    "envelope_of",
    "gpu_throughput",
    "offline_bounds",
    "one_job_per_gpu",
    "relax",
]
