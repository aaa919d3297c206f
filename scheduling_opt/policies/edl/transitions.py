"""The next Elastic-Tiresias state: time passes, jobs finish.

:func:`advance` applies a round's decision and lets time pass (attained
service grows for running jobs, waiting time for the others); :func:`finish`
removes finished jobs. With :func:`~.elastic_tiresias.elastic_tiresias_step`
they are all a simulator needs. EDL (TPDS '22) §5; Tiresias (NSDI '19) §4.
O(J + rows of the placement) each.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import replace

from scheduling_opt.errors import InvalidInstanceError
from scheduling_opt.model import Placement
from scheduling_opt.policies._numbers import as_number, expect
from scheduling_opt.policies.edl.model import EdlDecision, EdlState


def advance(state: EdlState, decision: EdlDecision, seconds: float) -> EdlState:
    """The state ``seconds`` after applying ``decision`` (finished jobs stay: see :func:`finish`).

    Running jobs attain workers * g * seconds of service and run ``seconds``
    longer (``executed``); waiting ones wait longer; a promoted job's
    service restarts at 0.

    Parameters
    ----------
    state : EdlState
        The round's input.
    decision : EdlDecision
        Its decision (from :func:`~.elastic_tiresias.elastic_tiresias_step`).
    seconds : float
        Time until the next round (>= 0).

    Returns
    -------
    EdlState
        The next round's input (same cluster and params).

    Raises
    ------
    InvalidInstanceError
        ``seconds`` is not a finite number >= 0, or the decision's placement
        does not fit the state.

    Examples
    --------
    >>> from scheduling_opt.model import Cluster, GpuType, Job, Placement, Server
    >>> from scheduling_opt.policies.edl import EdlJob
    >>> c = Cluster((GpuType("V100"),), (Server("s0", "V100", 8),))
    >>> s = EdlState(c, (EdlJob(Job("a", 1, 2, 60.0)),))
    >>> d = EdlDecision(Placement.from_mapping({"a": {"s0": 2}}), {"a": 0}, (), ("a",), (), {},
    ...                 "none")
    >>> advance(s, d, 10.0).jobs[0].service
    20.0

    References
    ----------
    Tiresias (NSDI '19) §4 (attained service); EDL (TPDS '22) §5.
    """
    expect(state, EdlState, "state")
    expect(decision, EdlDecision, "decision")
    dt = as_number(seconds, "seconds", 0)
    jobs = []
    promoted = set(decision.promoted)
    for j in state.jobs:
        service = 0.0 if j.id in promoted else j.service
        n = decision.placement.workers_of(j.id)
        if n:
            attained = service + n * j.job.gpus_per_worker * dt
            jobs.append(replace(j, service=attained, waiting=0.0, executed=j.executed + dt))
        else:
            jobs.append(replace(j, service=service, waiting=j.waiting + dt))
    return EdlState(state.cluster, tuple(jobs), decision.placement, state.params)


def finish(state: EdlState, job_ids: Iterable[str]) -> EdlState:
    """The state without these (finished) jobs; their GPUs become free.

    Parameters
    ----------
    state : EdlState
        The current state.
    job_ids : iterable of str
        Ids of jobs of the state.

    Returns
    -------
    EdlState
        The state without them (same cluster and params).

    Raises
    ------
    InvalidInstanceError
        An id names no job of the state (a typo would otherwise keep the job).

    Examples
    --------
    >>> from scheduling_opt.model import Cluster, GpuType, Job, Server
    >>> from scheduling_opt.policies.edl import EdlJob
    >>> c = Cluster((GpuType("V100"),), (Server("s0", "V100", 8),))
    >>> s = EdlState(c, (EdlJob(Job("a", 1, 2, 60.0)), EdlJob(Job("b", 1, 2, 60.0))))
    >>> [j.id for j in finish(s, ["a"]).jobs]
    ['b']

    References
    ----------
    EDL (TPDS '22) §5.
    """
    expect(state, EdlState, "state")
    if isinstance(job_ids, str):
        raise InvalidInstanceError("job_ids", "must be a collection of job ids, not one string")
    gone = set(job_ids)
    unknown = sorted(gone - set(state.jobs_by_id))
    if unknown:
        raise InvalidInstanceError("job_ids", f"unknown jobs {unknown[:5]}")
    mapping = {k: v for k, v in state.placement.as_mapping().items() if k not in gone}
    jobs = tuple(j for j in state.jobs if j.id not in gone)
    return EdlState(state.cluster, jobs, Placement.from_mapping(mapping), state.params)
