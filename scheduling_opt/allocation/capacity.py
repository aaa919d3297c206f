"""Free GPUs of a cluster for Aryl's allocation, in training-GPU units (Aryl §5.2).

Idle training-usable GPUs plus the GPUs of running elastic jobs' flexible
workers, each weighted by its type's compute relative to the fastest
training-pool type. O(placement rows + servers).
"""

from __future__ import annotations

import math
from collections.abc import Mapping

from scheduling_opt.model import Cluster, Job, Placement


def _reference_compute(cluster: Cluster) -> float:
    training = [
        cluster.gpu_type(s.gpu_type).compute for s in cluster.servers if s.pool == "training"
    ]
    if training:
        return max(training)
    # No servers at all: no capacity either, any positive reference will do.
    return max((cluster.gpu_type(s.gpu_type).compute for s in cluster.servers), default=1.0)


def free_capacity(cluster: Cluster, jobs: Mapping[str, Job], placement: Placement) -> int:
    """Free GPUs in training-GPU units (Aryl §5.2), floored to an integer.

    An on-loan T4 (compute 0.25) idle next to V100s (1.0) adds a quarter of a
    GPU. A running job's flexible workers are counted on its slowest servers
    first (Aryl §5.3 places flexible demand on inference servers).

    Parameters
    ----------
    cluster : Cluster
    jobs : mapping of str to Job
        At least every job of ``placement``.
    placement : Placement
        What runs now.

    Returns
    -------
    int
        The ``capacity`` of an :class:`~scheduling_opt.allocation.AllocationInput`.

    Raises
    ------
    KeyError
        A placed job missing from ``jobs``.

    Examples
    --------
    >>> from scheduling_opt.model import Cluster, GpuType, Placement, Server
    >>> cluster = Cluster((GpuType("V100"),), (Server("v", "V100", 8),))
    >>> free_capacity(cluster, {}, Placement(()))
    8

    References
    ----------
    Aryl (EuroSys '22) §5.2-§5.3.
    """
    ref = _reference_compute(cluster)
    used: dict[str, int] = {}
    total = 0.0
    for job_id in placement.jobs():
        job = jobs[job_id]
        rows = sorted(
            placement.servers_of(job_id).items(),
            key=lambda kv: (cluster.gpu_type(cluster.server(kv[0]).gpu_type).compute, kv[0]),
        )
        flexible = (
            (sum(n for _, n in rows) - job.min_workers) * job.gpus_per_worker if job.elastic else 0
        )
        for server, n in rows:
            gpus = n * job.gpus_per_worker
            used[server] = used.get(server, 0) + gpus
            freed = min(flexible, gpus)
            flexible -= freed
            total += freed * cluster.gpu_type(cluster.server(server).gpu_type).compute / ref
    for s in cluster.servers:
        if s.usable_for_training:
            total += (s.gpus - used.get(s.id, 0)) * cluster.gpu_type(s.gpu_type).compute / ref
    return math.floor(total + 1e-9)
