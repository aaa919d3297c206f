"""Tiresias' rules for one job: its queue, its promotion to G0, and when either can next change.

Discretized two-dimensional least-attained-service (Tiresias (NSDI '19)
§4; EDL (TPDS '22) §6.3): a job's queue is the number of service
thresholds its attained GPU-time has reached, and a job of a lower queue
that has waited ``TiresiasParams.limit`` returns to G0 (its service then
restarts from 0, which the caller records). Until something happens to
the job, its queue changes only when a running job's service crosses the
next threshold or a waiting job's wait reaches the limit. Both the step
(:func:`~.elastic_tiresias.queues`) and the simulator's adapter, which
keeps the queues across calls and looks at a job again only when its
queue can change, read all three from :func:`job_queue`. O(log Q) for Q
thresholds.
"""

from __future__ import annotations

import bisect
import math

from scheduling_opt.policies.edl.model import TiresiasParams


def job_queue(
    params: TiresiasParams, service: float, gpus: int, waiting: float, executed: float
) -> tuple[int, bool, float]:
    """A job's queue, whether the starvation rule promoted it, and how long its queue holds.

    Parameters
    ----------
    params : TiresiasParams
        The thresholds and the starvation rule.
    service : float
        GPU-time attained since the job last entered G0 (>= 0).
    gpus : int
        GPUs it holds from now (0: it waits; a running job is never promoted).
    waiting : float
        Time since it last ran (0 for a job that runs until now).
    executed : float
        Time it has run in all (what ``promote_knob`` multiplies).

    Returns
    -------
    tuple of (int, bool, float)
        The queue (0 = G0); whether it was promoted to G0 for starving;
        the time from now until its queue can change if nothing else
        happens to it: a running job crosses its queue's threshold after
        (threshold - service) / gpus, a waiting job of a lower queue is
        promoted after its limit less the time it has waited (0 when it
        was just promoted), and a job running in the last queue or waiting
        in G0 keeps its queue (``math.inf``).

    Examples
    --------
    >>> p = TiresiasParams(thresholds=(500.0, 10_000.0), starvation=3600.0)
    >>> job_queue(p, 100.0, 4, 0.0, 25.0)  # G0, crosses 500 after (500 - 100) / 4
    (0, False, 100.0)
    >>> job_queue(p, 600.0, 0, 600.0, 25.0), job_queue(p, 600.0, 0, 3600.0, 25.0)
    ((1, False, 3000.0), (0, True, 0.0))
    >>> job_queue(p, 20_000.0, 8, 0.0, 25.0), job_queue(p, 100.0, 0, 9e9, 25.0)
    ((2, False, inf), (0, False, inf))
    """
    thresholds = params.thresholds
    q = bisect.bisect_right(thresholds, service)
    if gpus:
        return q, False, (thresholds[q] - service) / gpus if q < len(thresholds) else math.inf
    if not q:
        return 0, False, math.inf
    limit = params.limit(executed)
    if waiting >= limit:
        return 0, True, 0.0
    return q, False, limit - waiting
