"""The simulator's general baselines and Chronus §4.3's: their names and parameters.

- :mod:`.nonpreemptive`: FIFO, SJF, EDF without preemption, the YARN
  capacity scheduler (tenant or class quotas);
- :mod:`.preemptive`: SRTF and Tiresias (discretized 2D-LAS);
- :mod:`.deadline`: Chronus §4.3's EDF (SLO jobs preempt best effort) and
  Genie's least laxity with a QoS-guided spread;
- :mod:`.themis`: Themis' finish-time fair rounds (as Gavel runs it);
- :mod:`.three_sigma`: 3Sigma's plan-ahead MILP;
- :mod:`.queues`: the pending queues they share.

``fifo``, ``sjf``, ``edf``, ``srtf``, ``tiresias`` and ``yarn-cs`` are
``scheduling-opt simulate``'s default policies.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from scheduling_opt.sim.declare import Param, PolicySpec, one_job_per_gpu
from scheduling_opt.sim.policies.baselines.preemptive import TIRESIAS_KNOB, TIRESIAS_THRESHOLDS
from scheduling_opt.sim.policies.baselines.themis import THEMIS_ROUND

if TYPE_CHECKING:
    from scheduling_opt.sim.cluster import ClusterSpec
    from scheduling_opt.sim.protocol import Policy
    from scheduling_opt.sim.workload import Workload

FAMILY = "baselines"


def _fifo(workload: Workload, cluster: ClusterSpec) -> Policy:
    from scheduling_opt.sim.policies.baselines.nonpreemptive import Fifo

    return Fifo()


def _sjf(workload: Workload, cluster: ClusterSpec) -> Policy:
    from scheduling_opt.sim.policies.baselines.nonpreemptive import Sjf

    return Sjf()


def _edf(workload: Workload, cluster: ClusterSpec) -> Policy:
    from scheduling_opt.sim.policies.baselines.deadline import Edf

    return Edf()


def _edf_np(workload: Workload, cluster: ClusterSpec) -> Policy:
    from scheduling_opt.sim.policies.baselines.nonpreemptive import EdfNp

    return EdfNp()


def _srtf(workload: Workload, cluster: ClusterSpec) -> Policy:
    from scheduling_opt.sim.policies.baselines.preemptive import Srtf

    return Srtf()


def _tiresias(workload: Workload, cluster: ClusterSpec, **params: Any) -> Policy:
    from scheduling_opt.sim.policies.baselines.preemptive import Tiresias

    return Tiresias(tuple(params["thresholds"]), params["promote_knob"])


def _yarn_cs(by: str) -> Any:
    def make(workload: Workload, cluster: ClusterSpec, quotas: Mapping[str, int] | None) -> Policy:
        from scheduling_opt.sim.policies.baselines.nonpreemptive import (
            YarnCs,
            class_quotas,
            proportional_quotas,
        )

        rule = class_quotas if by == "class" else proportional_quotas
        return YarnCs(quotas if quotas is not None else rule(workload, cluster.total_gpus), by=by)

    return make


def _genie(workload: Workload, cluster: ClusterSpec, spread: bool) -> Policy:
    from scheduling_opt.sim.policies.baselines.deadline import Genie

    return Genie(spread=spread)


def _themis(workload: Workload, cluster: ClusterSpec, round_length: float) -> Policy:
    from scheduling_opt.sim.policies.baselines.themis import Themis

    return Themis(round_length=round_length)


def _three_sigma(workload: Workload, cluster: ClusterSpec, **params: Any) -> Policy:
    # Imported when made: the MILP pulls in scipy's solver.
    from scheduling_opt.sim.policies.baselines.three_sigma import ThreeSigma

    return ThreeSigma(**params)


_QUOTAS = Param(
    "quotas",
    "any",
    None,
    "GPUs per tenant (or class); default: proportional to demand",
    optional=True,
)

SPECS: tuple[PolicySpec, ...] = (
    PolicySpec(
        "fifo",
        "first in, first out, strict (head-of-line blocking)",
        _fifo,
        family=FAMILY,
        throughput=one_job_per_gpu,
        default_run=True,
    ),
    PolicySpec(
        "sjf",
        "shortest job (trace duration) first, with backfilling",
        _sjf,
        family=FAMILY,
        throughput=one_job_per_gpu,
        default_run=True,
    ),
    PolicySpec(
        "edf",
        "earliest first deadline first; SLO jobs preempt best-effort jobs (Chronus §4.3)",
        _edf,
        family=FAMILY,
        throughput=one_job_per_gpu,
        default_run=True,
    ),
    PolicySpec(
        "edf-np",
        "earliest first deadline first, with backfilling, no preemption",
        _edf_np,
        family=FAMILY,
        throughput=one_job_per_gpu,
    ),
    PolicySpec(
        "srtf",
        "shortest remaining time first, preemptive",
        _srtf,
        family=FAMILY,
        throughput=one_job_per_gpu,
        default_run=True,
    ),
    PolicySpec(
        "tiresias",
        "discretized two-dimensional least attained service (Tiresias), preemptive",
        _tiresias,
        (
            Param(
                "thresholds",
                "floats",
                TIRESIAS_THRESHOLDS,
                "queue thresholds in GPU-time (trace units x GPUs)",
            ),
            Param(
                "promote_knob",
                "float",
                TIRESIAS_KNOB,
                "a waiting job returns to the first queue after knob x its run time",
                low=0.0,
                optional=True,
            ),
        ),
        family=FAMILY,
        throughput=one_job_per_gpu,
        default_run=True,
    ),
    PolicySpec(
        "yarn-cs",
        "YARN capacity scheduler: tenant quotas, FIFO in a tenant, no preemption",
        _yarn_cs("tenant"),
        (_QUOTAS,),
        family=FAMILY,
        throughput=one_job_per_gpu,
        default_run=True,
    ),
    PolicySpec(
        "yarn-cs-slo",
        "YARN capacity scheduler with Chronus §4.3's SLO and best-effort quotas",
        _yarn_cs("class"),
        (_QUOTAS,),
        family=FAMILY,
        throughput=one_job_per_gpu,
    ),
    PolicySpec(
        "genie",
        "least laxity first for SLO jobs, best effort last, QoS-guided spread (Genie)",
        _genie,
        (Param("spread", "bool", True, "spread a job over servers when its QoS allows it"),),
        family=FAMILY,
        throughput=one_job_per_gpu,
    ),
    PolicySpec(
        "themis",
        "finish-time fair rounds (Themis, as Gavel runs it), work conserving",
        _themis,
        (
            Param(
                "round_length",
                "float",
                THEMIS_ROUND,
                "round length (trace units)",
                low=0.0,
                low_open=True,
            ),
        ),
        family=FAMILY,
        throughput=one_job_per_gpu,
    ),
    PolicySpec(
        "3sigma",
        "a plan-ahead MILP over the queued jobs each cycle (3Sigma); never preempts",
        _three_sigma,
        (
            Param("cycle", "float", 1.0, "planning cycle (trace units)", low=0.0, low_open=True),
            Param("window", "int", 24, "queued jobs in each MILP (the first, by arrival)", low=1),
            Param("slots", "int", 8, "start times a job may be planned at", low=1),
            Param("node_limit", "int", 500, "HiGHS branch-and-bound nodes per MILP", low=1),
            Param(
                "time_limit", "float", 10.0, "seconds per MILP (a guard)", low=0.0, low_open=True
            ),
            Param(
                "slo_value",
                "float",
                100.0,
                "utility of an SLO job meeting its first deadline",
                low=0.0,
            ),
        ),
        family=FAMILY,
        throughput=one_job_per_gpu,
    ),
)
