"""The mutable scratch copy of one AntMan round (never escapes :func:`~.step.antman_step`).

Shared by the step (guarantee and opportunistic scheduling) and the job
upgrade, which must see each other's changes within the round. O(G) to build.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from scheduling_opt.policies.antman.model import AntManState, Gpu


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

    def load(self, gpu: Gpu) -> float:
        return self.state.utilization.get(gpu, 0.0)


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
    rank = {s.id: i for i, s in enumerate(state.cluster.servers)}
    return Round(state, owner, state.tenant_usage(), dict(state.reserved), shared, set(), rank)


def quota_left(usage: Mapping[str, int], quotas: Mapping[str, int], tenant: str) -> int:
    """GPUs the tenant's quota still covers."""
    return quotas.get(tenant, 0) - usage.get(tenant, 0)
