"""ONES (SC '21): the evolutionary batch-size search in the loop, and its fixed-batch baseline.

:mod:`.policy` turns the library's batch-size solver's answer into GPUs,
speed factors and scaling stalls; :mod:`.base` holds what both policies
share (limits, the update gate, progress prediction), :mod:`.predict` the
online progress regression, :mod:`.fixed` the fixed-batch contrast; the
jobs' batch model comes with the workload
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
    "interval",
    "float",
    60.0,
    "seconds between ticks (update=event)",
    low=0.0,
    low_open=True,
)
_SIGMA = Param("sigma", "float", 1.0 / 30.0, "the scale-down factor (ONES: 1 / 30 s)", low=0.0)
_SEED = Param("seed", "int", 0, "seed of the search and of the progress history's sampling", low=0)
#: ONES' system around its search (§2.2, §3.2.1-§3.2.2, §4.3), each switchable.
_SYSTEM = (
    Param(
        "update",
        "str",
        "epoch",
        "when a schedule is deployed: after every running job's epoch (ONES §3.2.2); "
        "epoch-fill: so, and waiting jobs start on idle GPUs meanwhile; event: at every "
        "arrival, completion and interval tick",
        choices=("epoch", "epoch-fill", "event"),
    ),
    Param(
        "progress",
        "str",
        "regression",
        "beta from ONES' online regression on completed jobs' epochs (Eq. 6), "
        "or the task's prior mean epochs",
        choices=("regression", "prior"),
    ),
    Param(
        "history", "int", 1000, "points the progress regression keeps (ONES: a limited size)", low=1
    ),
)
_SCALING = (
    Param(
        "change_cost",
        "float",
        1.0,
        "seconds a running job stalls when its batch or GPUs change (ONES §4.3: about 1 s)",
        low=0.0,
    ),
    Param(
        "epoch_limit",
        "float",
        None,
        "convergence option: past this multiple of its submitted batch a job needs more "
        "epochs (ONES Figure 14: 16); none: equal epochs at any batch",
        low=1.0,
        optional=True,
    ),
    Param(
        "epoch_growth",
        "float",
        1.0,
        "past the limit, epochs grow as (B / limit)^growth (1: the step count stops falling)",
        low=0.0,
        low_open=True,
    ),
)


def _ones(workload: Workload, cluster: ClusterSpec, **params: Any) -> Policy:
    # Imported when made: the batch-size solvers.
    from scheduling_opt.sim.policies.ones.policy import Ones

    return Ones(**params)


def _fixed(workload: Workload, cluster: ClusterSpec, **params: Any) -> Policy:
    from scheduling_opt.sim.policies.ones.fixed import FixedBatch

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
    _SEED,
    *_SYSTEM,
    *_SCALING,
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
        (_INTERVAL, _SIGMA, _SEED, *_SYSTEM),
        family=FAMILY,
        throughput=one_job_per_gpu,
        batch_speeds=True,
    ),
)
