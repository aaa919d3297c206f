"""EDL's Elastic-Tiresias (TPDS '22 §5.1) and its plain-Tiresias ablation: names and parameters.

:mod:`.elastic_tiresias` runs the rules of the pure step of
:mod:`scheduling_opt.policies.edl` over the engine's view, on an index of
the state it keeps across calls (:mod:`.index`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from scheduling_opt.policies.edl.model import (
    DEFAULT_COMPACTION,
    DEFAULT_QOS,
    DEFAULT_STARVATION,
    DEFAULT_THRESHOLDS,
)
from scheduling_opt.policies.edl.stragglers import DEFAULT_FACTOR, DEFAULT_WINDOW
from scheduling_opt.sim.declare import Param, PolicySpec, one_job_per_gpu
from scheduling_opt.sim.policies.edl.system import STRAGGLER_SPEED

if TYPE_CHECKING:
    from scheduling_opt.sim.cluster import ClusterSpec
    from scheduling_opt.sim.protocol import Policy
    from scheduling_opt.sim.workload import Workload

FAMILY = "edl"


def _edl(workload: Workload, cluster: ClusterSpec, **params: Any) -> Policy:
    # Imported when made: the adapter pulls in the step's packages.
    from scheduling_opt.sim.policies.edl.elastic_tiresias import EdlTiresias

    return EdlTiresias(**{**params, "thresholds": tuple(params["thresholds"])})


PARAMS = (
    Param(
        "unit_seconds",
        "float",
        60.0,
        "seconds per trace unit (the thresholds and starvation are in seconds)",
        low=0.0,
        low_open=True,
    ),
    Param("thresholds", "floats", DEFAULT_THRESHOLDS, "queue thresholds in GPU-seconds (§6.3)"),
    Param(
        "starvation",
        "float",
        DEFAULT_STARVATION,
        "seconds a waiting job of a lower queue waits before it returns to the first",
        low=0.0,
    ),
    Param(
        "compaction",
        "int",
        DEFAULT_COMPACTION,
        "compaction when more than this many jobs wait (§6.3)",
        low=0,
    ),
    Param(
        "qos",
        "float",
        DEFAULT_QOS,
        "a scaled-in job keeps ceil(qos x its requested GPUs) (§6.3)",
        low=0.0,
        high=1.0,
    ),
    Param(
        "promote_knob",
        "float",
        None,
        "instead of starvation: promote after knob x the job's run time (Tiresias' rule)",
        low=0.0,
        optional=True,
    ),
    Param(
        "scaling",
        "str",
        "edl",
        "what a resize stops the job for: EDL's (scale-out 1 s, scale-in 0), "
        "Stop-Resume's (30 s either way), or nothing (§6.1)",
        choices=("edl", "stop-resume", "free"),
    ),
    Param(
        "straggler_rate",
        "float",
        0.0,
        "probability that a start on >= 2 workers has one slowed worker (§5.2; "
        "the paper gives no rate)",
        low=0.0,
        high=1.0,
    ),
    Param(
        "straggler_speed",
        "float",
        STRAGGLER_SPEED,
        "the slowed worker's speed, relative (Fig. 13b: 0.75)",
        low=0.0,
        high=1.0,
        low_open=True,
    ),
    Param(
        "straggler_factor",
        "float",
        DEFAULT_FACTOR,
        "a straggler is slower than this x the median mini-batch time (§5.2: 1.2)",
        low=1.0,
    ),
    Param(
        "straggler_window",
        "int",
        DEFAULT_WINDOW,
        "... in each of this many consecutive mini-batches (§5.2: 10)",
        low=1,
    ),
    Param("mitigate", "bool", True, "remove a detected straggler by one scale-in (§5.2)"),
    Param("seed", "int", 0, "the straggler draws' seed", low=0),
    Param(
        "migrate",
        "bool",
        False,
        "move a spread job's workers onto one server when that lets a waiting gang start "
        "(§5's migration; Algorithm 1 has none: off)",
    ),
)

SPECS: tuple[PolicySpec, ...] = (
    PolicySpec(
        "elastic-tiresias",
        "EDL's Elastic-Tiresias: Tiresias with compaction and expansion (§5.1)",
        _edl,
        PARAMS,
        fixed={"elastic": True},
        family=FAMILY,
        throughput=one_job_per_gpu,
    ),
    PolicySpec(
        "edl-tiresias",
        "the same step's plain Tiresias (the ablation that isolates elasticity)",
        _edl,
        PARAMS,
        fixed={"elastic": False},
        family=FAMILY,
        throughput=one_job_per_gpu,
    ),
)
