"""scheduling-opt: optimization solvers for scheduling DL training jobs on GPU clusters.

The shared model lives in :mod:`scheduling_opt.model`, instance files in
:mod:`scheduling_opt.instance`, the solvers in :mod:`scheduling_opt.solvers`
(one module per problem family) and the exact-backend helpers in
:mod:`scheduling_opt.exact`.
"""

from scheduling_opt.errors import (
    InvalidInstanceError,
    SchedulingOptError,
    SolverError,
    UnknownMethodError,
    UnknownProblemError,
    VerificationError,
)
from scheduling_opt.instance import Instance, dump, dumps, load, loads
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
from scheduling_opt.result import Result, SolveOptions, Status

__version__ = "0.1.0"

__all__ = [
    "BatchInfo",
    "Cluster",
    "GpuType",
    "Instance",
    "InvalidInstanceError",
    "Job",
    "Placement",
    "PlacementRow",
    "Result",
    "RewardStep",
    "SchedulingOptError",
    "Server",
    "SolveOptions",
    "SolverError",
    "Status",
    "UnknownMethodError",
    "UnknownProblemError",
    "VerificationError",
    "__version__",
    "dump",
    "dumps",
    "load",
    "loads",
]
