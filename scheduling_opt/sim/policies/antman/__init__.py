"""AntMan (OSDI '20): guarantee and opportunistic jobs on shared GPUs, and its Gandiva baselines.

- :mod:`.policy`: AntMan's global scheduler over the engine's GPU sharing
  (:func:`scheduling_opt.policies.antman.antman_step`, the memory split of
  :mod:`scheduling_opt.memory_split`);
- :mod:`.gandiva`: Gandiva's time slicing, packing and migration, and
  AntMan §5.2's packing-only baseline.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from scheduling_opt.sim.declare import Param, PolicySpec

if TYPE_CHECKING:
    from scheduling_opt.sim.cluster import ClusterSpec
    from scheduling_opt.sim.protocol import Policy
    from scheduling_opt.sim.workload import Workload

FAMILY = "antman"

#: AntMan §5.1: ESPnet 20.1 -> 105.2 minutes beside ResNet-50 packed by Gandiva.
PACK_SLOWDOWN = 1.0 - 20.1 / 105.2

_MEMORY = Param(
    "memory",
    "any",
    None,
    "model -> (peak GB per GPU, memory curve preset); default AntMan's table",
    optional=True,
)

_GANDIVA = (
    Param(
        "pack_slowdown",
        "float",
        PACK_SLOWDOWN,
        "each packed job's slowdown (AntMan §5.1's measurement)",
        low=0.0,
        high=1.0,
    ),
    Param(
        "slice_overhead",
        "float",
        0.0,
        "share of a time-sliced pair's time lost to suspend-resume",
        low=0.0,
        high=1.0,
    ),
    _MEMORY,
)


def _engine_sharing(params: Mapping[str, object], share: float, host: float) -> float:
    # A GPU holds a guarantee job at 1 - host and an opportunistic one at
    # 1 - share of its speed (the engine's interference); the memory split
    # only slows them further.
    return max(1.0, (1.0 - share) + (1.0 - host))


def _pair_sharing(params: Mapping[str, object], share: float, host: float) -> float:
    # The engine's interference is off; every shared job runs at its pair's
    # speed: two packed jobs at 1 - pack_slowdown each, or a time-sliced pair
    # losing slice_overhead.
    d = float(params.get("pack_slowdown", PACK_SLOWDOWN))  # type: ignore[arg-type]
    o = float(params.get("slice_overhead", 0.0))  # type: ignore[arg-type]
    return max(1.0, 2.0 * (1.0 - d), 1.0 - o)


def _antman(
    workload: Workload, cluster: ClusterSpec, quotas: Mapping[str, int] | None, **params: Any
) -> Policy:
    from scheduling_opt.sim.policies.antman.policy import AntMan
    from scheduling_opt.sim.policies.baselines.nonpreemptive import proportional_quotas

    chosen = (
        dict(quotas) if quotas is not None else proportional_quotas(workload, cluster.total_gpus)
    )
    return AntMan(chosen, **params)


def _gandiva(workload: Workload, cluster: ClusterSpec, **params: Any) -> Policy:
    from scheduling_opt.sim.policies.antman.gandiva import Gandiva

    return Gandiva(**params)


SPECS: tuple[PolicySpec, ...] = (
    PolicySpec(
        "antman",
        "AntMan's guarantee and opportunistic jobs with GPU memory split (§3.2-§3.3)",
        _antman,
        (
            Param(
                "quotas",
                "any",
                None,
                "tenant -> guaranteed GPUs; default: proportional to demand",
                optional=True,
            ),
            Param("max_utilization", "float", 0.8, "AntMan's M (§3.3)", low=0.0, high=1.0),
            Param(
                "demote_after",
                "float",
                None,
                "a guarantee job waiting longer runs as opportunistic (none: never)",
                low=0.0,
                optional=True,
            ),
            Param(
                "unit_seconds",
                "float",
                60.0,
                "seconds per trace unit (the 10-second utilization window)",
                low=0.0,
                low_open=True,
            ),
            _MEMORY,
        ),
        family=FAMILY,
        throughput=_engine_sharing,
    ),
    PolicySpec(
        "gandiva",
        "Gandiva's time slicing, packing by measured throughput, and migration",
        _gandiva,
        _GANDIVA,
        fixed={"mode": "full"},
        family=FAMILY,
        throughput=_pair_sharing,
    ),
    PolicySpec(
        "gandiva-pack",
        "greedy packing only (AntMan §5.2's Gandiva baseline)",
        _gandiva,
        _GANDIVA,
        fixed={"mode": "pack"},
        family=FAMILY,
        throughput=_pair_sharing,
    ),
)
