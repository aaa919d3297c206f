"""Server choice under a locality limit, shared by the EDL and AntMan policies.

A gang of ``need`` units (workers or GPUs) may span at most ``limit``
servers: EDL footnote 4 (at most ceil(P_j / m) machines) and AntMan's
topology constraint (§3.3: a job packed on few servers to use NVLink).
Complexity: O(S log S + limit * S) for S servers.
"""

from __future__ import annotations

import math
from collections.abc import Mapping

from scheduling_opt.model import Cluster, Job


def locality_limit(cluster: Cluster, job: Job, gpus: int | None = None) -> int:
    """Most servers ``gpus`` GPUs of ``job`` may span: ceil(gpus / m).

    m is the largest server the job's GPU type admits (the paper's "GPUs on
    each machine", for clusters whose servers differ in size); 0 when no
    server fits. ``gpus`` defaults to the job's requested ``max_gpus``.
    """
    sizes = [s.gpus for s in cluster.servers if job.fits(s)]
    need = job.max_gpus if gpus is None else gpus
    return math.ceil(need / max(sizes)) if sizes else 0


def pick_servers(
    usable: Mapping[str, int],
    need: int,
    limit: int,
    rank: Mapping[str, int],
    prefer: Mapping[str, int] | None = None,
) -> list[str]:
    """Up to ``limit`` servers covering as much of ``need`` as possible.

    ``usable``: units each server can give. Largest first (ties: more
    ``prefer``, e.g. the job's own reservation there, then ``rank``); the
    server that completes the demand is the smallest that does (best fit
    keeps large holes for large gangs).
    """
    pref = prefer or {}
    candidates = sorted(
        (s for s, u in usable.items() if u > 0),
        key=lambda s: (-usable[s], -pref.get(s, 0), rank[s]),
    )
    chosen: list[str] = []
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
