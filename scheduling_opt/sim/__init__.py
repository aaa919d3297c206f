"""The trace-driven simulator: an event engine, baseline policies, metrics, reports.

The engine knows nothing of the papers: a policy is any object with
``decide(view) -> Decision`` (see :mod:`scheduling_opt.sim.policy`). One run
is :func:`run_config` of a frozen :class:`RunConfig`, or :func:`simulate`
with objects in hand.

Examples
--------
>>> from scheduling_opt.sim import ClusterSpec, SimJob, Workload, make_policy, simulate
>>> w = Workload.of([SimJob("0", 0.0, 4, 10.0), SimJob("1", 0.0, 8, 5.0)], "demo")
>>> c = ClusterSpec.uniform(1, 8)
>>> simulate(w, c, make_policy("sjf", w, c)).end
(15.0, 5.0)
"""

from scheduling_opt.sim.cluster import ClusterSpec, FreeMap, Placement, ServerSpec
from scheduling_opt.sim.engine import CapacityChange, EngineParams, RunOutput, simulate
from scheduling_opt.sim.policy import NOTHING, Decision, JobView, Policy, PolicyError, View
from scheduling_opt.sim.registry import BASELINES, DEFAULT_BASELINES, make_policy
from scheduling_opt.sim.results import METRIC_KEYS, JobRecord, job_records, summarize
from scheduling_opt.sim.speed import SpeedModel, bundled_table
from scheduling_opt.sim.sweep import RunConfig, RunResult, WorkloadSpec, run_config, run_sweep
from scheduling_opt.sim.synthetic import SyntheticSpec, generate
from scheduling_opt.sim.workload import BUNDLED, SimJob, Workload, bundled, load_trace

__all__ = [
    "BASELINES",
    "BUNDLED",
    "DEFAULT_BASELINES",
    "METRIC_KEYS",
    "NOTHING",
    "CapacityChange",
    "ClusterSpec",
    "Decision",
    "EngineParams",
    "FreeMap",
    "JobRecord",
    "JobView",
    "Placement",
    "Policy",
    "PolicyError",
    "RunConfig",
    "RunOutput",
    "RunResult",
    "ServerSpec",
    "SimJob",
    "SpeedModel",
    "SyntheticSpec",
    "View",
    "Workload",
    "WorkloadSpec",
    "bundled",
    "bundled_table",
    "generate",
    "job_records",
    "load_trace",
    "make_policy",
    "run_config",
    "run_sweep",
    "simulate",
    "summarize",
]
