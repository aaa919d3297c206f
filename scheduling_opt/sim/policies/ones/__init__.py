"""ONES (SC '21): the evolutionary batch-size search in the loop, and its fixed-batch baseline.

:mod:`.policy` turns the library's batch-size solver's answer into GPUs
and speed factors; the jobs' batch model comes with the workload
(:mod:`scheduling_opt.sim.ones_workload`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from scheduling_opt.sim.declare import Param, PolicySpec, one_job_per_gpu

if TYPE_CHECKING:
    from scheduling_opt.sim.cluster import ClusterSpec
    from scheduling_opt.sim.protocol import Policy
    from scheduling_opt.sim.workload import Workload

FAMILY = "ones"

_INTERVAL = Param(
    "interval", "float", 60.0, "seconds between schedule updates", low=0.0, low_open=True
)
_SIGMA = Param("sigma", "float", 1.0 / 30.0, "the scale-down factor (ONES: 1 / 30 s)", low=0.0)


def _ones(workload: Workload, cluster: ClusterSpec, **params: Any) -> Policy:
    # Imported when made: the batch-size solvers.
    from scheduling_opt.sim.policies.ones.policy import Ones

    return Ones(**params)


def _fixed(workload: Workload, cluster: ClusterSpec, **params: Any) -> Policy:
    from scheduling_opt.sim.policies.ones.policy import FixedBatch

    return FixedBatch(**params)


_SEARCH = (
    _INTERVAL,
    Param("generations", "int", 10, "search generations per update (ones)", low=1),
    Param("population", "int", None, "population K (none: the GPUs)", low=1, optional=True),
    Param(
        "time_limit",
        "float",
        None,
        "solver seconds per update (none: 10 for ones, 60 for ones-exact, a guard)",
        low=0.0,
        low_open=True,
        optional=True,
    ),
    Param(
        "work_limit",
        "float",
        None,
        "ones-exact: CP-SAT's deterministic time per update (none: 1)",
        low=0.0,
        low_open=True,
        optional=True,
    ),
    _SIGMA,
    Param("seed", "int", 0, "seed of the search", low=0),
)

SPECS: tuple[PolicySpec, ...] = (
    PolicySpec(
        "ones",
        "ONES' online evolutionary batch-size search (§3.2), applied as GPUs and speeds",
        _ones,
        _SEARCH,
        fixed={"method": "ones"},
        family=FAMILY,
        throughput=one_job_per_gpu,
        batch_speeds=True,
    ),
    PolicySpec(
        "ones-exact",
        "the batch-size problem solved exactly at each update (within a work budget)",
        _ones,
        _SEARCH,
        fixed={"method": "exact"},
        family=FAMILY,
        throughput=one_job_per_gpu,
        batch_speeds=True,
    ),
    PolicySpec(
        "fixed-batch",
        "each job at its submitted batch and GPUs, in ONES' SRUF order (ONES' baseline)",
        _fixed,
        (_INTERVAL, _SIGMA),
        family=FAMILY,
        throughput=one_job_per_gpu,
        batch_speeds=True,
    ),
)
