"""Tiresias' rules for one job: its queue, its promotion to G0, and when either can next change.

Discretized two-dimensional least-attained-service (Tiresias (NSDI '19)
§4; EDL (TPDS '22) §6.3): a job's queue is the number of service
thresholds its attained GPU-time has reached, and a job of a lower queue
that has waited ``TiresiasParams.limit`` returns to G0 (its service then
restarts from 0, which the caller records). Both the step
(:func:`~.elastic_tiresias.queues`) and the simulator's adapter, which
keeps the queues across calls and looks at a job again only when one of
these can change, read them from here. O(log Q) per job for Q thresholds.
"""

from __future__ import annotations

import bisect
import math

from scheduling_opt.policies.edl.model import TiresiasParams


def job_queue(
    params: TiresiasParams, service: float, running: bool, waiting: float, executed: float
) -> tuple[int, bool]:
    """A job's queue this round, and whether it was promoted to G0 for starving.

    Parameters
    ----------
    params : TiresiasParams
        The thresholds and the starvation rule.
    service : float
        GPU-time attained since the job last entered G0 (>= 0).
    running : bool
        Whether it holds GPUs (a running job is never promoted).
    waiting : float
        Time since it last ran (0 while running).
    executed : float
        Time it has run in all (what ``promote_knob`` multiplies).

    Returns
    -------
    tuple of (int, bool)
        The queue (0 = G0) and whether the starvation rule moved it there.

    Examples
    --------
    >>> p = TiresiasParams(thresholds=(500.0, 10_000.0), starvation=3600.0)
    >>> job_queue(p, 600.0, False, 100.0, 5.0), job_queue(p, 600.0, False, 3600.0, 5.0)
    ((1, False), (0, True))
    >>> job_queue(p, 20_000.0, True, 0.0, 5.0)
    (2, False)
    """
    q = bisect.bisect_right(params.thresholds, service)
    if q and not running and waiting >= params.limit(executed):
        return 0, True
    return q, False


def next_change(
    params: TiresiasParams, service: float, gpus: int, waiting: float, executed: float
) -> float:
    """Time from now until a job's queue can change, if nothing else happens to it (inf: never).

    A job running on ``gpus`` GPUs crosses its queue's threshold after
    (threshold - service) / gpus; a job waiting in a lower queue is promoted after its limit
    less the time it has waited (0 when due); a job running in the last
    queue or waiting in G0 keeps its queue.

    Parameters
    ----------
    params : TiresiasParams
        The thresholds and the starvation rule.
    service : float
        GPU-time attained since the job last entered G0.
    gpus : int
        GPUs it holds from now (0: it waits).
    waiting : float
        Time since it last ran (0 for a job that runs until now).
    executed : float
        Time it has run in all.

    Returns
    -------
    float
        The delay (add it to the current time), or ``math.inf``.

    Examples
    --------
    >>> p = TiresiasParams(thresholds=(500.0, 10_000.0), starvation=3600.0)
    >>> next_change(p, 100.0, 4, 0.0, 25.0)  # (500 - 100) / 4
    100.0
    >>> next_change(p, 600.0, 0, 600.0, 25.0), next_change(p, 100.0, 0, 9e9, 25.0)
    (3000.0, inf)
    """
    thresholds = params.thresholds
    q = bisect.bisect_right(thresholds, service)
    if gpus and q < len(thresholds):
        return (thresholds[q] - service) / gpus
    if q > 0 and not gpus:
        return max(0.0, params.limit(executed) - waiting)
    return math.inf
