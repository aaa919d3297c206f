"""EDL's Elastic-Tiresias policy and straggler detection, as pure functions.

Build an :class:`EdlState` from model objects (:meth:`EdlState.from_jobs`),
call :func:`elastic_tiresias_step` once per scheduling event, check with
:func:`check`, move on with :func:`advance` and :func:`finish`
(:mod:`.transitions`). Modules: :mod:`.model` (state, decision),
:mod:`.elastic_tiresias` (the step), :mod:`.compaction`, :mod:`.stragglers`,
:mod:`.check`.
EDL (TPDS '22) §5, §6.3; docs/elastic.md.

Examples
--------
>>> from scheduling_opt.model import Cluster, GpuType, Job, Server
>>> from scheduling_opt.policies import edl
>>> c = Cluster((GpuType("V100"),), (Server("s0", "V100", 8),))
>>> s = edl.EdlState.from_jobs(c, [Job("a", 1, 8, 60.0)], requested={"a": 2})
>>> sol = edl.elastic_tiresias_step(s)
>>> edl.check(s, sol)
>>> sol.decision.placement.workers_of("a")
8
"""

from scheduling_opt.policies.edl.check import check, check_decision
from scheduling_opt.policies.edl.elastic_tiresias import elastic_tiresias_step, queues
from scheduling_opt.policies.edl.model import (
    DEFAULT_COMPACTION,
    DEFAULT_QOS,
    DEFAULT_STARVATION,
    DEFAULT_THRESHOLDS,
    EdlDecision,
    EdlJob,
    EdlState,
    Mode,
    TiresiasParams,
    cluster_throughput,
    qos_floor,
)
from scheduling_opt.policies.edl.stragglers import find_stragglers, straggler_scale_in
from scheduling_opt.policies.edl.transitions import advance, finish

__all__ = [
    "DEFAULT_COMPACTION",
    "DEFAULT_QOS",
    "DEFAULT_STARVATION",
    "DEFAULT_THRESHOLDS",
    "EdlDecision",
    "EdlJob",
    "EdlState",
    "Mode",
    "TiresiasParams",
    "advance",
    "check",
    "check_decision",
    "cluster_throughput",
    "elastic_tiresias_step",
    "find_stragglers",
    "finish",
    "qos_floor",
    "queues",
    "straggler_scale_in",
]
