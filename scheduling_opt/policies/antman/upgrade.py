"""AntMan job upgrade: a running opportunistic job becomes resource-guarantee in place.

AntMan "prefers to upgrade the opportunistic job rather than launch a new
one" when its tenant's quota allows: the job keeps the GPUs it holds, which
must all be free of guarantee jobs and reservations, and the tenant's unused
quota must cover all of them (no partial upgrade: a synchronous job is as
slow as its slowest worker). AntMan (OSDI '20) §3.3. O(J + G) per round.
"""

from __future__ import annotations

from scheduling_opt.model import Job
from scheduling_opt.policies.antman._round import Round, quota_left
from scheduling_opt.policies.antman.model import Gpu


def try_upgrade(r: Round, job: Job, gpus: tuple[Gpu, ...]) -> bool:
    """Upgrade ``job`` on ``gpus`` in the round if every GPU is free and the quota covers all."""
    tenant = job.tenant or ""
    if any(g in r.owner for g in gpus) or quota_left(r.usage, r.state.quotas, tenant) < len(gpus):
        return False
    r.hold(gpus, job.id)
    r.usage[tenant] = r.usage.get(tenant, 0) + len(gpus)
    for g in gpus:
        r.shared[g] -= 1
    return True


def upgrade_jobs(r: Round) -> list[str]:
    """Upgrade, in queue order, every running opportunistic job that may be upgraded.

    Skipped: pinned jobs and jobs of tenants without a quota.
    """
    state = r.state
    upgraded = []
    for job in state.jobs:
        held = state.opportunistic.get(job.id)
        if held is None or job.id in state.pinned or not state.quotas.get(job.tenant or "", 0):
            continue
        if try_upgrade(r, job, held):
            upgraded.append(job.id)
    return upgraded
