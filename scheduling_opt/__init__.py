"""scheduling-opt: optimization solvers for scheduling DL training jobs on GPU clusters.

One package per problem (:mod:`scheduling_opt.mckp`, :mod:`scheduling_opt.reclaim`,
:mod:`scheduling_opt.allocation`, :mod:`scheduling_opt.placement`,
:mod:`scheduling_opt.lease`, :mod:`scheduling_opt.batch_size`,
:mod:`scheduling_opt.memory_split`), each exposing plain functions
``name(inp, *, seed=None, time_limit=None) -> Solution[D]`` over a typed input
built from the shared model (:mod:`scheduling_opt.model`). Instance files live
in :mod:`scheduling_opt.io`, the problem table in :mod:`scheduling_opt.registry`.

Examples
--------
>>> from scheduling_opt import load, solve
>>> sol = solve(load("instances/mckp-aryl-table3.json"))
>>> sol.status.value
'optimal'
"""

from scheduling_opt.errors import (
    InvalidInstanceError,
    SchedulingOptError,
    SolverError,
    UnknownMethodError,
    UnknownProblemError,
    VerificationError,
)
from scheduling_opt.io.instance import Instance, dump, dumps, load, loads
from scheduling_opt.model import (
    BatchInfo,
    Cluster,
    GpuType,
    Job,
    Placement,
    PlacementRow,
    RewardStep,
    Server,
)
from scheduling_opt.registry import Method, Problem, get_problem, problem_names, solve
from scheduling_opt.solution import DEFAULT_TIME_LIMIT, Seed, Solution, Status

__version__ = "0.2.0"

__all__ = [
    "DEFAULT_TIME_LIMIT",
    "BatchInfo",
    "Cluster",
    "GpuType",
    "Instance",
    "InvalidInstanceError",
    "Job",
    "Method",
    "Placement",
    "PlacementRow",
    "Problem",
    "RewardStep",
    "SchedulingOptError",
    "Seed",
    "Server",
    "Solution",
    "SolverError",
    "Status",
    "UnknownMethodError",
    "UnknownProblemError",
    "VerificationError",
    "__version__",
    "dump",
    "dumps",
    "get_problem",
    "load",
    "loads",
    "problem_names",
    "solve",
]
