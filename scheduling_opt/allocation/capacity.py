"""Free GPUs of a cluster for Aryl's allocation, in training-GPU units (Aryl §5.2).

Idle training-usable GPUs plus the GPUs of running elastic jobs' flexible
workers, each weighted by its speed relative to the fastest training-pool
type: an idle GPU by its type's ``compute``, a running job's GPU by that
job's own speed there (:func:`~scheduling_opt.throughput.job_speed`: the
throughput matrix when one is given, Gavel §3). O(placement rows + servers).
"""

from __future__ import annotations

import math
from collections.abc import Mapping

from scheduling_opt.model import Cluster, Job, Placement
from scheduling_opt.throughput import ThroughputMatrix, job_speed


def _reference_type(cluster: Cluster) -> str | None:
    """The fastest training-pool GPU type by ``compute`` (any type without training servers)."""
    training = [s for s in cluster.servers if s.pool == "training"] or list(cluster.servers)
    if not training:
        return None
    return max(training, key=lambda s: cluster.gpu_type(s.gpu_type).compute).gpu_type


def free_capacity(
    cluster: Cluster,
    jobs: Mapping[str, Job],
    placement: Placement,
    throughputs: ThroughputMatrix | None = None,
) -> int:
    """Free GPUs in training-GPU units (Aryl §5.2), floored to an integer.

    An on-loan T4 (compute 0.25) idle next to V100s (1.0) adds a quarter of a
    GPU. A running job's flexible workers are counted on its slowest servers
    first (Aryl §5.3 places flexible demand on inference servers), each GPU
    at the job's speed there over its speed on the reference type (the
    fastest training-pool type by ``compute``). Without ``throughputs`` that
    ratio is the types' ``compute`` ratio; with it, the job's own row (Gavel
    §3), falling back to ``compute`` for a job whose row is 0 on the
    reference type. Idle GPUs belong to no job and keep ``compute``.

    Parameters
    ----------
    cluster : Cluster
    jobs : mapping of str to Job
        At least every job of ``placement``.
    placement : Placement
        What runs now.
    throughputs : ThroughputMatrix, optional
        Per job and GPU type throughput, with a row for every placed job.

    Returns
    -------
    int
        The ``capacity`` of an :class:`~scheduling_opt.allocation.AllocationInput`.

    Raises
    ------
    KeyError
        A placed job missing from ``jobs``.
    InvalidInstanceError
        A placed job or one of its GPU types missing from ``throughputs``.

    Examples
    --------
    >>> from scheduling_opt.model import Cluster, GpuType, Placement, Server
    >>> cluster = Cluster((GpuType("V100"),), (Server("v", "V100", 8),))
    >>> free_capacity(cluster, {}, Placement(()))
    8

    References
    ----------
    Aryl (EuroSys '22) §5.2-§5.3; Gavel (OSDI '20) §3 (the throughput matrix).
    """
    ref = _reference_type(cluster)
    used: dict[str, int] = {}
    total = 0.0
    ref_compute = 1.0 if ref is None else cluster.gpu_type(ref).compute
    for job_id in placement.jobs():
        job = jobs[job_id]

        def ratio(server: str, job_id: str = job_id) -> float:
            gpu_type = cluster.server(server).gpu_type
            base = 0.0 if ref is None else job_speed(cluster, job_id, ref, throughputs)
            if base <= 0:  # no reference type, or the job's row is 0 there
                return cluster.gpu_type(gpu_type).compute / ref_compute
            return job_speed(cluster, job_id, gpu_type, throughputs) / base

        rows = sorted(placement.servers_of(job_id).items(), key=lambda kv: (ratio(kv[0]), kv[0]))
        flexible = (
            (sum(n for _, n in rows) - job.min_workers) * job.gpus_per_worker if job.elastic else 0
        )
        for server, n in rows:
            gpus = n * job.gpus_per_worker
            used[server] = used.get(server, 0) + gpus
            freed = min(flexible, gpus)
            flexible -= freed
            total += freed * ratio(server)
    for s in cluster.servers:
        if s.usable_for_training:
            total += (
                (s.gpus - used.get(s.id, 0)) * cluster.gpu_type(s.gpu_type).compute / ref_compute
            )
    return math.floor(total + 1e-9)
