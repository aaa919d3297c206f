"""The trace-driven simulator: an event engine, policies declared once, metrics, reports.

The engine knows nothing of the papers: a policy is any object with a
``name`` and ``decide(view) -> Decision`` (see
:mod:`scheduling_opt.sim.protocol`). Each policy name is declared once
(:class:`PolicySpec`: its parameters, variants, what it adds to the
cluster); the built-in families live in :mod:`scheduling_opt.sim.policies`
and a user's policy joins them with :func:`register_policy`. One run is
:func:`run_config` of a frozen :class:`RunConfig`, or :func:`simulate`
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
from scheduling_opt.sim.declare import Param, PolicySpec, Semantics
from scheduling_opt.sim.engine import CapacityChange, EngineParams, RunOutput, simulate
from scheduling_opt.sim.protocol import (
    NOTHING,
    Decision,
    Interfering,
    JobView,
    Periodic,
    Policy,
    PolicyError,
    Reporting,
    Stacking,
    StartTerms,
    View,
)
from scheduling_opt.sim.registry import (
    default_policies,
    load_plugin,
    make_policy,
    parse_policy,
    policy_names,
    policy_spec,
    register_policy,
)
from scheduling_opt.sim.results import METRIC_KEYS, JobRecord, job_records, summarize
from scheduling_opt.sim.speed import SpeedModel, bundled_table
from scheduling_opt.sim.sweep import RunConfig, RunResult, WorkloadSpec, run_config, run_sweep
from scheduling_opt.sim.synthetic import SyntheticSpec, generate
from scheduling_opt.sim.workload import BUNDLED, SimJob, Workload, bundled, load_trace

__all__ = [
    "BUNDLED",
    "METRIC_KEYS",
    "NOTHING",
    "CapacityChange",
    "ClusterSpec",
    "Decision",
    "EngineParams",
    "FreeMap",
    "Interfering",
    "JobRecord",
    "JobView",
    "Param",
    "Periodic",
    "Placement",
    "Policy",
    "PolicyError",
    "PolicySpec",
    "Reporting",
    "RunConfig",
    "RunOutput",
    "RunResult",
    "Semantics",
    "ServerSpec",
    "SimJob",
    "SpeedModel",
    "Stacking",
    "StartTerms",
    "SyntheticSpec",
    "View",
    "Workload",
    "WorkloadSpec",
    "bundled",
    "bundled_table",
    "default_policies",
    "generate",
    "job_records",
    "load_plugin",
    "load_trace",
    "make_policy",
    "parse_policy",
    "policy_names",
    "policy_spec",
    "register_policy",
    "run_config",
    "run_sweep",
    "simulate",
    "summarize",
]
