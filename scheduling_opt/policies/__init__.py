"""Online scheduling policies: step functions a scheduler calls every round.

Unlike the problem packages these have no instance files or registry entry
(a round of a priority policy has no optimum the papers claim); each is a
pure function of a typed state built from model objects, returning a
:class:`~scheduling_opt.solution.Solution` with a typed decision.

- :mod:`.edl`: EDL's Elastic-Tiresias step and straggler detection.
- :mod:`.antman`: AntMan's guarantee / opportunistic step and job upgrade.
- :mod:`.srtf`: Chronus' SRTF selection of best-effort jobs.
- :mod:`.profiler`: Chronus' profiler estimates.
- :mod:`.locality`: server choice under a locality limit (EDL, AntMan).

Examples
--------
>>> from scheduling_opt.model import Cluster, GpuType, Job, Server
>>> from scheduling_opt.policies import edl
>>> c = Cluster((GpuType("V100"),), (Server("s0", "V100", 4),))
>>> edl.elastic_tiresias_step(edl.EdlState.from_jobs(c, [Job("a", 1, 4, 60.0)])).objective
4.0
"""

from scheduling_opt.policies import antman, edl
from scheduling_opt.policies.locality import locality_limit, pick_servers
from scheduling_opt.policies.profiler import (
    T_PROFILE,
    Submission,
    estimate_runtime,
    iteration_time,
    profiling_capacity,
    submission_control,
)
from scheduling_opt.policies.srtf import SrtfInput, SrtfSelection, srtf, srtf_select

__all__ = [
    "T_PROFILE",
    "SrtfInput",
    "SrtfSelection",
    "Submission",
    "antman",
    "edl",
    "estimate_runtime",
    "iteration_time",
    "locality_limit",
    "pick_servers",
    "profiling_capacity",
    "srtf",
    "srtf_select",
    "submission_control",
]
