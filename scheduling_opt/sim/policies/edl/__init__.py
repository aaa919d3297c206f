"""EDL's Elastic-Tiresias (TPDS '22 §5.1) and its plain-Tiresias ablation: names and parameters.

:mod:`.elastic_tiresias` runs the pure step of
:mod:`scheduling_opt.policies.edl` over the engine's view, its state kept
incrementally across calls.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from scheduling_opt.policies.edl.model import (
    DEFAULT_COMPACTION,
    DEFAULT_QOS,
    DEFAULT_STARVATION,
    DEFAULT_THRESHOLDS,
)
from scheduling_opt.sim.declare import Param, PolicySpec, one_job_per_gpu

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
