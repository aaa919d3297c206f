"""The rules a policy's decision must keep, as read-only checks.

Each function looks at the simulation's state and one part of a decision
and returns why it breaks a rule (a sentence) or None; none writes
anything. :class:`~scheduling_opt.sim.live.ClusterState`, the one owner of
the state, calls them before each change it applies, and turns a reason
into a :class:`~scheduling_opt.sim.protocol.PolicyError` naming the policy,
the time and the job.

The rules: a start of a job that is not pending (not yet submitted,
running, or done: so each job completes once, after its submission), a
placement on servers that do not exist or lack the free GPUs, a gang
broken (not all of the job's GPUs, or more), a preemption or resize of a
job that is not running, a speed factor that is not finite and positive or
set on a job neither pending nor running. GPU sharing (sim/sharing.py): an
opportunistic start (``share``) beyond the free opportunistic slots, a
resize of an opportunistic job, an upgrade of a job that is not a running
opportunistic job or whose GPUs an exclusive job holds, exact GPUs
(``gpus``) that are taken in the job's slot, off its placement, or named for
a job this decision does not start; start terms for a job it does not
start, twice, or with a credit that is not finite and >= 0; a stall of a
job not running after the decision's starts, twice, or not a time on the
clock (finite, >= 0, at most ``limits.MAX_TIME``).
"""

from __future__ import annotations

import math

from scheduling_opt.sim import limits
from scheduling_opt.sim.cluster import FreeMap, Placement
from scheduling_opt.sim.protocol import PENDING, RUNNING, StartTerms
from scheduling_opt.sim.sharing import OPPORTUNISTIC
from scheduling_opt.sim.state import JobState


def index_error(jobs: int, index: object, what: str) -> str | None:
    """Why ``index`` names no job of a workload of ``jobs`` jobs (None: it does)."""
    if not isinstance(index, int) or not 0 <= index < jobs:
        return f"{what}: no job with index {index!r}"
    return None


def placement_error(st: JobState, placement: Placement, free: FreeMap, what: str) -> str | None:
    """Why ``placement`` cannot carry ``st``'s gang on the GPUs ``free`` has (None: it can)."""
    n = 0
    last = -1
    for s, g in placement:
        if s <= last:
            return f"{what}: servers must be distinct and ascending"
        last = s
        n += g
    job = st.job
    if not job.min_gpus <= n <= job.max_gpus:
        want = f"{job.gpus}" if job.min_gpus == job.max_gpus else f"{job.min_gpus}..{job.max_gpus}"
        return f"{what}: gang of {want} GPUs broken, placement {placement} has {n}"
    if not free.fits(placement):
        return f"{what}: placement {placement} exceeds the free GPUs"
    return None


def start_error(st: JobState, what: str) -> str | None:
    """Why ``st`` cannot be started or shared now (None: it is pending)."""
    if st.status == PENDING:
        return None
    state = {0: "not submitted yet", RUNNING: "already running"}.get(st.status, "done")
    return f"{what} but {state}"


def preempt_error(st: JobState) -> str | None:
    """Why ``st`` cannot be preempted (None: it runs)."""
    return None if st.status == RUNNING else "preempted but not running"


def resize_error(st: JobState) -> str | None:
    """Why ``st`` cannot be resized (None: it runs in the exclusive layer)."""
    if st.status != RUNNING:
        return "resized but not running"
    if st.layer == OPPORTUNISTIC:
        return "resized but opportunistic (stop and share it again)"
    return None


def rate_error(st: JobState, factor: object) -> str | None:
    """Why ``factor`` cannot be ``st``'s speed factor (None: it can)."""
    if st.status not in (PENDING, RUNNING):
        return "speed factor set but not pending or running"
    if not (isinstance(factor, (int, float)) and 0.0 < factor < math.inf):
        return f"speed factor {factor!r} is not finite and > 0"
    return None


def terms_error(started: bool, twice: bool, how: object) -> str | None:
    """Why start terms cannot apply (None: they can): not a job this decision starts, given
    twice, not :class:`~scheduling_opt.sim.protocol.StartTerms`, or a credit not finite >= 0.
    """
    if not isinstance(how, StartTerms):
        return f"terms: must be StartTerms, got {type(how).__name__}"
    if not started:
        return "terms: not started"
    if twice:
        return "terms: given twice"
    if not (isinstance(how.credit, (int, float)) and math.isfinite(how.credit) and how.credit >= 0):
        return f"terms: credit {how.credit!r} is not >= 0"
    return None


def capacity_error(servers: int, server: int, gpus: int) -> str | None:
    """Why ``(server, gpus)`` is not a capacity change of a cluster of ``servers`` servers."""
    if not 0 <= server < servers or gpus < 0:
        return f"capacity change ({server}, {gpus}): no such server or < 0"
    return None


def stall_error(st: JobState, duration: object, twice: bool) -> str | None:
    """Why running ``st`` cannot stall for ``duration`` (None: it can).

    Examples
    --------
    >>> from scheduling_opt.sim.workload import SimJob
    >>> stall_error(JobState(SimJob("a", 0.0, 1, 1.0), 0), 1.0, False)
    'stalled but not running'
    """
    if st.status != RUNNING:
        return "stalled but not running"
    if twice:
        return "stall: given twice"
    if (
        isinstance(duration, bool)
        or not isinstance(duration, (int, float))
        or not 0.0 <= duration <= limits.MAX_TIME
    ):
        return f"stall: {duration!r} is not a time >= 0 on the clock"
    return None
