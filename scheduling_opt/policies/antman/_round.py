"""The mutable scratch copy of one AntMan round (never escapes :func:`~.step.antman_step`).

Shared by the step (guarantee and opportunistic scheduling) and the job
upgrade, which must see each other's changes within the round. Besides the
GPU owners it keeps, incrementally, the number of GPUs no guarantee job
holds or reserves on each server (so a guarantee job reads its candidate
servers' capacities in O(S) instead of scanning every GPU) and caches the
servers each GPU type admits and each job shape's locality limit. O(G) to
build; :meth:`Round.hold` and :meth:`Round.drop` are O(1) per GPU.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from scheduling_opt.model import Job, Server
from scheduling_opt.policies.antman.model import AntManState, Gpu
from scheduling_opt.policies.locality import locality_limit


@dataclass(slots=True)
class Round:
    """GPU owners, tenant usage, reservations and sharing counts as the round changes them."""

    state: AntManState
    owner: dict[Gpu, str]  # GPU -> guarantee job holding or reserving it
    usage: dict[str, int]
    reserved: dict[str, tuple[Gpu, ...]]
    shared: dict[Gpu, int]  # opportunistic jobs on each GPU
    fresh: set[Gpu]  # GPUs given to a guarantee job this round
    rank: dict[str, int]  # server -> position in the cluster
    free: dict[str, int]  # server -> GPUs not in ``owner``
    free_total: int  # sum of ``free``
    servers: dict[str, Server]  # id -> server
    _fitting: dict[str | None, tuple[Server, ...]] = field(default_factory=dict)
    _limits: dict[tuple[str | None, int], int] = field(default_factory=dict)

    def load(self, gpu: Gpu) -> float:
        return self.state.utilization.get(gpu, 0.0)

    def hold(self, gpus: Iterable[Gpu], job_id: str) -> None:
        """Give ``gpus`` (held by no other guarantee job) to guarantee job ``job_id``."""
        for g in gpus:
            if g not in self.owner:
                self.free[g[0]] -= 1
                self.free_total -= 1
            self.owner[g] = job_id

    def drop(self, gpus: Iterable[Gpu]) -> None:
        """Free ``gpus`` from their guarantee job or reservation."""
        for g in gpus:
            del self.owner[g]
            self.free[g[0]] += 1
            self.free_total += 1

    def fitting(self, job: Job) -> tuple[Server, ...]:
        """The servers whose GPU type the job admits, in cluster order."""
        key = job.gpu_type
        if key not in self._fitting:
            self._fitting[key] = tuple(s for s in self.state.cluster.servers if job.fits(s))
        return self._fitting[key]

    def limit(self, job: Job) -> int:
        """The job's locality limit (:func:`~scheduling_opt.policies.locality.locality_limit`)."""
        key = (job.gpu_type, job.max_gpus)
        if key not in self._limits:
            self._limits[key] = locality_limit(self.state.cluster, job)
        return self._limits[key]


def start_round(state: AntManState) -> Round:
    """The scratch copy of ``state`` at the start of a round."""
    owner: dict[Gpu, str] = {}
    for alloc in (state.guarantee, state.reserved):
        for job_id, gpus in alloc.items():
            owner.update(dict.fromkeys(gpus, job_id))
    shared: dict[Gpu, int] = {}
    for gpus in state.opportunistic.values():
        for gpu in gpus:
            shared[gpu] = shared.get(gpu, 0) + 1
    servers = {s.id: s for s in state.cluster.servers}
    rank = {s: i for i, s in enumerate(servers)}
    free = {s.id: s.gpus for s in state.cluster.servers}
    for server, _ in owner:
        free[server] -= 1
    return Round(
        state,
        owner,
        state.tenant_usage(),
        dict(state.reserved),
        shared,
        set(),
        rank,
        free,
        sum(free.values()),
        servers,
    )


def quota_left(usage: Mapping[str, int], quotas: Mapping[str, int], tenant: str) -> int:
    """GPUs the tenant's quota still covers."""
    return quotas.get(tenant, 0) - usage.get(tenant, 0)
