"""Server choice under a locality limit, shared by the EDL and AntMan policies.

A gang of ``need`` units (workers or GPUs) may span at most ``limit``
servers: EDL footnote 4 (at most ceil(P_j / m) machines) and AntMan's
topology constraint (§3.3: a job packed on few servers to use NVLink).
Complexity: O(S log S + limit * S) for S servers.
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Mapping
from typing import TypeVar

from scheduling_opt.errors import InvalidInstanceError
from scheduling_opt.model import Cluster, Job
from scheduling_opt.policies._numbers import as_int, expect

#: A server's key: its id, or its index where a caller works with indices.
K = TypeVar("K", bound=Hashable)


def locality_limit(cluster: Cluster, job: Job, gpus: int | None = None) -> int:
    """Most servers ``gpus`` GPUs of ``job`` may span: ceil(gpus / m).

    m is the largest server the job's GPU type admits (the paper's "GPUs on
    each machine", for clusters whose servers differ in size).

    Parameters
    ----------
    cluster : Cluster
        The servers.
    job : Job
        The job (its GPU type decides which servers count).
    gpus : int, optional
        GPUs to place (default: the job's ``max_gpus``).

    Returns
    -------
    int
        The server limit; 0 when no server fits the job.

    Raises
    ------
    InvalidInstanceError
        ``gpus`` is not an integer >= 0.

    Examples
    --------
    >>> from scheduling_opt.model import Cluster, GpuType, Job, Server
    >>> c = Cluster((GpuType("V100"),), (Server("a", "V100", 8), Server("b", "V100", 4)))
    >>> locality_limit(c, Job("j", 1, 12, 60.0))
    2

    References
    ----------
    EDL (TPDS '22) §5.1 footnote 4; AntMan (OSDI '20) §3.3 (topology).
    """
    expect(cluster, Cluster, "cluster")
    expect(job, Job, "job")
    need = job.max_gpus if gpus is None else as_int(gpus, "gpus", 0)
    sizes = [s.gpus for s in cluster.servers if job.fits(s)]
    return math.ceil(need / max(sizes)) if sizes else 0


def pick_servers(
    usable: Mapping[K, int],
    need: int,
    limit: int,
    rank: Mapping[K, int],
    prefer: Mapping[K, int] | None = None,
) -> list[K]:
    """Up to ``limit`` servers covering as much of ``need`` as possible.

    Largest first (ties: more ``prefer``, e.g. the job's own reservation
    there, then ``rank``); the server that completes the demand is the
    smallest that does (best fit keeps large holes for large gangs).

    Parameters
    ----------
    usable : Mapping[str, int]
        Units (workers or GPUs) each server can give.
    need : int
        Units wanted (>= 0).
    limit : int
        Most servers to choose (>= 0).
    rank : Mapping[str, int]
        Tie-break position of every server in ``usable`` (cluster order).
    prefer : Mapping[str, int], optional
        A second sort key, larger first.

    Returns
    -------
    list of str
        The chosen servers, in the order chosen; they may cover less than
        ``need`` (the caller decides whether that is enough).

    Raises
    ------
    InvalidInstanceError
        ``need`` or ``limit`` is not an integer >= 0, or a server of
        ``usable`` has no ``rank``.

    Examples
    --------
    >>> pick_servers({"a": 8, "b": 4, "c": 2}, 10, 2, {"a": 0, "b": 1, "c": 2})
    ['a', 'c']

    References
    ----------
    EDL (TPDS '22) §5.1 footnote 4; AntMan (OSDI '20) §3.3 Algorithm 1.
    """
    need = as_int(need, "need", 0)
    limit = as_int(limit, "limit", 0)
    missing = [s for s in usable if s not in rank]
    if missing:
        raise InvalidInstanceError("rank", f"no rank for servers {sorted(missing, key=str)[:5]}")
    pref: Mapping[K, int] = prefer or {}
    candidates = sorted(
        (s for s, u in usable.items() if u > 0),
        key=lambda s: (-usable[s], -pref.get(s, 0), rank[s]),
    )
    chosen: list[K] = []
    left = need
    while len(chosen) < limit and left > 0:
        rest = [s for s in candidates if s not in chosen]
        if not rest:
            break
        fits = [s for s in rest if usable[s] >= left]
        pick = min(fits, key=lambda s: (usable[s], -pref.get(s, 0), rank[s])) if fits else rest[0]
        chosen.append(pick)
        left -= usable[pick]
    return chosen
