"""Aryl (EuroSys '22): capacity loaning and elastic scaling, its variants and §7.1's baselines.

- :mod:`.policy`: the orchestrator: inference servers lent from a load
  curve (:mod:`.load`), returned by :mod:`scheduling_opt.reclaim`
  (:mod:`.reclaim`), jobs sized and placed by :mod:`.jobs` and
  :mod:`.pools` (each queued job's facts once, :mod:`.shape`), SJF on durations
  predicted at submission (:mod:`.predict`);
- :mod:`.gandiva_scale`: Gandiva's grow-shrink as §7.1 ran it.

The inference cluster is part of Aryl's system, so it is this family's
to declare: ``inference_servers`` servers of ``inference_gpus`` GPUs at
``inference_compute`` (V100 = 1), added to the run's cluster unavailable
(the policy lends them). Default: Aryl §5.2 normalizes on-loan GPUs to
training GPUs, so an 8-T4 server (T4 = 0.25 V100, Appendix A) is 2
V100-equivalents.

The system's mechanisms are parameters of every Aryl variant, on where
Aryl has them: ``groups`` (§5.3's base and flexible server groups, kept
across calls; the ``aryl-no-groups`` variant is Table 6's naive BFD),
``hetero_share`` and ``hetero_efficiency`` (heterogeneous training, §2.1,
§6, Appendix A: off in the Basic scenario). Two evaluation conditions are
properties of the jobs, applied to a run's jobs by the family's
``workload`` hook (:mod:`.scenario`): ``scale_all`` (every job elastic,
over ``elastic_min`` to ``elastic_max`` times its GPUs: the Ideal
scenario) and ``scaling_loss`` with ``scaling_step`` (§7.2's imperfect
scaling, Fig. 10). ``aryl-advanced`` and ``aryl-ideal`` are §7.1's
Advanced and Ideal scenarios.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from scheduling_opt.sim import limits
from scheduling_opt.sim.cluster import ClusterSpec, ServerSpec
from scheduling_opt.sim.declare import Param, PolicySpec, one_job_per_gpu
from scheduling_opt.sim.policies.aryl.scenario import STEPS, with_scenario

if TYPE_CHECKING:
    from scheduling_opt.sim.protocol import Policy
    from scheduling_opt.sim.workload import Workload

FAMILY = "aryl"

#: The variants of Aryl's policy: the settings each fixes (``ArylPolicy``'s options).
VARIANTS: dict[str, tuple[str, dict[str, object]]] = {
    "aryl": ("Aryl: loaning, Algorithm 1's reclaim, two-phase allocation, SJF", {}),
    "aryl-scf": ("Aryl with smallest-count-first reclaim (§7.3's baseline)", {"reclaim": "scf"}),
    "aryl-random": ("Aryl with random reclaim (§7.3's baseline)", {"reclaim": "random"}),
    "aryl-plus": ("Aryl with the improved reclaim heuristic", {"reclaim": "aryl-plus"}),
    "aryl-exact": ("Aryl with the exact reclaim (a DP)", {"reclaim": "exact"}),
    "aryl-loan-only": ("Aryl's loaning without elastic scaling (§7.2)", {"scale": False}),
    "aryl-scale-only": ("Aryl's elastic scaling without loaning (§7.2)", {"loan": False}),
    "aryl-fifo": ("Aryl with FIFO instead of SJF in phase one", {"order": "fifo"}),
    "aryl-oracle": ("Aryl with the trace's durations for SJF", {"durations": "oracle"}),
    "aryl-no-groups": (
        "Aryl without server groups: Table 6's naive BFD (elastic jobs on training servers first)",
        {"groups": False},
    ),
    "aryl-advanced": (
        "Aryl, §7.1's Advanced scenario: 10% of the jobs may train on V100 and T4 together",
        {"hetero_share": 0.1},
    ),
    "aryl-ideal": (
        "Aryl, §7.1's Ideal scenario: every job elastic and heterogeneous at 100%",
        {"hetero_share": 1.0, "hetero_efficiency": 1.0, "scale_all": True},
    ),
    "fifo-no-loan": (
        "Aryl §7.1's Baseline: FIFO, no loaning, no scaling",
        {"loan": False, "scale": False, "order": "fifo"},
    ),
    "afs": (
        "AFS as §7.1 runs it: elastic allocation, queue order, no loaning",
        {"loan": False, "allocation": "afs", "order": "queue"},
    ),
}

_CLUSTER = (
    Param(
        "inference_servers",
        "int",
        0,
        "inference servers added to the cluster, unavailable (the policy lends them)",
        low=0,
        high=limits.MAX_SERVERS,
    ),
    Param(
        "inference_gpus",
        "int",
        2,
        "GPUs per inference server (V100-equivalents)",
        low=1,
        high=limits.MAX_GPUS_PER_SERVER,
    ),
    Param(
        "inference_compute",
        "float",
        1.0,
        "an inference GPU's compute (V100 = 1)",
        low=limits.MIN_COMPUTE,
        high=limits.MAX_COMPUTE,
    ),
)

_POLICY = (
    Param(
        "curve",
        "path",
        None,
        "the inference demand: a CSV file (none: the bundled curve)",
        optional=True,
    ),
    Param("interval", "float", 60.0, "orchestrator period (trace units)", low=0.0, low_open=True),
    Param(
        "any_gpu_share",
        "float",
        0.21,
        "share of inelastic jobs that may run on inference GPUs",
        low=0.0,
        high=1.0,
    ),
    Param("time_limit", "float", 10.0, "seconds per reclaim solver call", low=0.0, low_open=True),
    Param("seed", "int", 0, "seed of the random reclaim and of aryl-plus", low=0),
    Param(
        "groups",
        "bool",
        True,
        "§5.3: elastic jobs on on-loan servers, base and flexible workers in server groups kept "
        "across calls (false: Table 6's naive BFD)",
    ),
    Param(
        "hetero_share",
        "float",
        0.0,
        "share of the jobs that may train on training and on-loan GPUs together (§7.1: 0.1 "
        "Advanced, 1 Ideal)",
        low=0.0,
        high=1.0,
    ),
    Param(
        "hetero_efficiency",
        "float",
        0.7,
        "their throughput, share of their GPUs' summed compute (Appendix A: 0.7)",
        low=0.0,
        high=1.0,
        low_open=True,
    ),
)
_SCENARIO = (
    Param("scale_all", "bool", False, "every job elastic (the Ideal scenario, §7.1)"),
    Param(
        "elastic_min",
        "float",
        0.5,
        "scale_all: a job's smallest size, times its GPUs (rounded up)",
        low=0.0,
        high=1.0,
        low_open=True,
    ),
    Param(
        "elastic_max",
        "float",
        2.0,
        "scale_all: a job's largest size, times its GPUs (at most 64)",
        low=1.0,
        high=64.0,
    ),
    Param(
        "scaling_loss",
        "float",
        0.0,
        "§7.2: throughput lost per step past the midpoint of an elastic job's range (Fig. 10: 0.1)",
        low=0.0,
        high=1.0,
    ),
    Param(
        "scaling_step",
        "str",
        "base",
        "scaling_loss's step: the job's base demand, or one GPU",
        choices=STEPS,
    ),
)
_OWN_KEYS = tuple(p.name for p in (*_CLUSTER, *_SCENARIO))


def with_inference(cluster: ClusterSpec, params: Mapping[str, object]) -> ClusterSpec:
    """``cluster`` plus the inference servers ``params`` ask for (unavailable at the start)."""
    n = int(params["inference_servers"])  # type: ignore[call-overload]
    if not n:
        return cluster
    gpus = int(params["inference_gpus"])  # type: ignore[call-overload]
    compute = float(params["inference_compute"])  # type: ignore[arg-type]
    limits.check_cluster(
        len(cluster.servers) + n, cluster.total_gpus + n * gpus, "inference_servers"
    )
    lendable = ServerSpec(gpus, "T4", compute, False)
    return ClusterSpec(cluster.servers + (lendable,) * n)


def _aryl(name: str) -> Any:
    def make(workload: Workload, cluster: ClusterSpec, **params: Any) -> Policy:
        # Imported when made: the reclaim, allocation and placement solvers.
        from scheduling_opt.sim.policies.aryl.policy import ArylPolicy

        kept = {k: v for k, v in params.items() if k not in _OWN_KEYS}
        return ArylPolicy(name=name, **kept)

    return make


def _gandiva_scale(workload: Workload, cluster: ClusterSpec, **params: Any) -> Policy:
    from scheduling_opt.sim.policies.aryl.gandiva_scale import GandivaScale

    return GandivaScale()


SPECS: tuple[PolicySpec, ...] = (
    *(
        PolicySpec(
            name,
            summary,
            _aryl(name),
            (*_POLICY, *_SCENARIO, *_CLUSTER),
            fixed=fixed,
            family=FAMILY,
            throughput=one_job_per_gpu,
            cluster=with_inference,
            workload=with_scenario,
        )
        for name, (summary, fixed) in VARIANTS.items()
    ),
    PolicySpec(
        "gandiva-scale",
        "Gandiva's grow-shrink as Aryl §7.1 ran it: FIFO growing jobs while nothing waits",
        _gandiva_scale,
        _CLUSTER,
        family=FAMILY,
        throughput=one_job_per_gpu,
        cluster=with_inference,
    ),
)
