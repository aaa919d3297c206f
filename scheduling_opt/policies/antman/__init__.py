"""AntMan's global scheduler (guarantee / opportunistic jobs, job upgrade) as pure functions.

Build an :class:`AntManState` from model objects, call :func:`antman_step`
once per scheduling round, check with :func:`check`, move on with
:func:`apply` and :func:`finish`. AntMan (OSDI '20) §3.2, §3.3;
docs/sharing.md. The GPU-memory split among opportunistic jobs is the
problem ``memory-split`` (:mod:`scheduling_opt.memory_split`).

Examples
--------
>>> from scheduling_opt.model import Cluster, GpuType, Job, Server
>>> from scheduling_opt.policies import antman
>>> c = Cluster((GpuType("V100"),), (Server("s0", "V100", 4),))
>>> s = antman.AntManState(c, {"A": 2}, (Job("a", 4, 4, 60.0, tenant="A"),))
>>> sol = antman.antman_step(s)
>>> antman.check(s, sol)
>>> dict(sol.decision.reserved)  # quota 2 < demand 4: a reservation
{'a': (('s0', 0), ('s0', 1))}
"""

from scheduling_opt.policies.antman.check import check, check_decision
from scheduling_opt.policies.antman.model import (
    DEFAULT_MAX_UTILIZATION,
    Allocation,
    AntManDecision,
    AntManParams,
    AntManState,
    Gpu,
    all_gpus,
    apply,
    finish,
)
from scheduling_opt.policies.antman.step import antman_step

__all__ = [
    "DEFAULT_MAX_UTILIZATION",
    "Allocation",
    "AntManDecision",
    "AntManParams",
    "AntManState",
    "Gpu",
    "all_gpus",
    "antman_step",
    "apply",
    "check",
    "check_decision",
    "finish",
]
