"""AntMan's global scheduler: one round of guarantee / opportunistic scheduling.

Each round places pending jobs on a multi-tenant cluster: a resource-guarantee
job gets whole GPUs within its tenant's quota on few servers (or a
reservation when only part fits), an opportunistic job shares the
least-loaded GPUs whose utilization is under M; running opportunistic jobs
are upgraded first where their tenant's quota allows (:mod:`.upgrade`).
AntMan (OSDI '20) §3.2, §3.3 (Algorithm 1 ``scheduleJob``, job upgrade). The
memory split among opportunistic jobs sharing one GPU is the separate
problem ``memory-split`` (:mod:`scheduling_opt.memory_split`).

Choices where the paper is vague (docs/sharing.md): a job's demand is
``max_gpus`` and is gang-scheduled (each worker's GPUs on one server); the
topology constraint is "at most ceil(G / m) servers", m the largest server;
a reservation counts against its tenant's quota; a GPU freshly given to a
guarantee job this round has no measured load and is not offered to
opportunistic jobs in the same round.

Complexity per step, J jobs, G GPUs, S servers, W workers per job:
O(J (G log G + S log S)) for guarantee jobs and upgrades, O(J W G log G) for
opportunistic jobs (a least-loaded pick per worker).
"""

from __future__ import annotations

import time
from collections.abc import Mapping

from scheduling_opt.model import Job
from scheduling_opt.policies.antman._round import Round, quota_left, start_round
from scheduling_opt.policies.antman.model import AntManDecision, AntManState, Gpu
from scheduling_opt.policies.antman.upgrade import upgrade_jobs
from scheduling_opt.policies.locality import locality_limit, pick_servers
from scheduling_opt.solution import Seed, Solution, Status, time_limit_of


def _free_for(r: Round, job: Job, own: frozenset[Gpu]) -> dict[str, list[Gpu]]:
    """Per fitting server, GPUs no other guarantee job holds or reserves.

    Sorted so that the job's own reservation comes first, then GPUs without
    opportunistic jobs, then the least loaded: a guarantee job disturbs as
    few opportunistic jobs as it can (AntMan still shrinks them if needed).
    """
    out: dict[str, list[Gpu]] = {}
    for server in r.state.cluster.servers:
        if not job.fits(server):
            continue
        gpus = [
            (server.id, i)
            for i in range(server.gpus)
            if r.owner.get((server.id, i), job.id) == job.id
        ]
        gpus.sort(key=lambda g: (g not in own, r.shared.get(g, 0) > 0, r.load(g), g))
        out[server.id] = gpus
    return out


def _take(free: Mapping[str, list[Gpu]], servers: list[str], amount: int, d: int) -> list[Gpu]:
    """``amount`` GPUs (a multiple of ``d``) from ``servers`` in order, whole workers per server."""
    out: list[Gpu] = []
    for s in servers:
        n = min(len(free[s]) // d * d, (amount - len(out)) // d * d)
        out.extend(free[s][:n])
    return out


def _schedule_guarantee(r: Round, job: Job) -> tuple[Gpu, ...] | None:
    """Algorithm 1 lines 1, 4-8: launch on nodes0 when it covers the demand, else reserve."""
    tenant = job.tenant or ""
    own = r.reserved.pop(job.id, ())
    for g in own:
        del r.owner[g]
    r.usage[tenant] = r.usage.get(tenant, 0) - len(own)
    mine = frozenset(own)
    free = _free_for(r, job, mine)
    d = job.gpus_per_worker
    servers = pick_servers(
        {s: len(gpus) // d * d for s, gpus in free.items()},
        job.max_gpus,
        locality_limit(r.state.cluster, job),
        r.rank,
        {s: sum(1 for g in gpus if g in mine) for s, gpus in free.items()},
    )
    quota = quota_left(r.usage, r.state.quotas, tenant)
    gpus = _take(free, servers, min(job.max_gpus, quota), d)
    if gpus:
        r.owner.update(dict.fromkeys(gpus, job.id))
        r.usage[tenant] = r.usage.get(tenant, 0) + len(gpus)
    if len(gpus) == job.max_gpus:
        r.fresh.update(gpus)
        return tuple(sorted(gpus))
    if gpus:
        r.reserved[job.id] = tuple(sorted(gpus))
    return None


def _schedule_opportunistic(r: Round, job: Job, m: float) -> tuple[Gpu, ...] | None:
    """Algorithm 1 lines 2-3, 9-10: the least-loaded GPUs under utilization M, worker by worker."""
    d = job.gpus_per_worker
    candidates: dict[str, list[Gpu]] = {}
    for server in r.state.cluster.servers:
        if job.fits(server):
            gpus = [
                (server.id, i)
                for i in range(server.gpus)
                if r.load((server.id, i)) < m and (server.id, i) not in r.fresh
            ]
            candidates[server.id] = gpus
    taken: set[Gpu] = set()
    for _ in range(job.max_workers):
        best: tuple[tuple[float, int], str, list[Gpu]] | None = None
        for s, gpus in candidates.items():
            rest = [g for g in gpus if g not in taken]
            if len(rest) < d:
                continue
            rest.sort(key=lambda g: (r.load(g), r.shared.get(g, 0), g))
            pick = rest[:d]
            key = (sum(r.load(g) for g in pick), sum(r.shared.get(g, 0) for g in pick))
            if best is None or key < best[0]:
                best = (key, s, pick)
        if best is None:
            return None
        taken.update(best[2])
    for g in taken:
        r.shared[g] = r.shared.get(g, 0) + 1
    return tuple(sorted(taken))


def antman_step(
    state: AntManState, *, seed: Seed = None, time_limit: float | None = None
) -> Solution[AntManDecision]:
    """One round of AntMan's global scheduler (pure: ``state`` is not changed).

    Order: (1) running opportunistic jobs are upgraded where their tenant's
    quota allows (preferred over launching new jobs, AntMan §3.3); (2)
    pending guarantee jobs, in queue order, launch or (re)reserve; (3)
    pending opportunistic jobs (and guarantee jobs waiting longer than
    ``params.demote_after``) start on the least-loaded GPUs under M.

    Parameters
    ----------
    state : AntManState
        The cluster, quotas, jobs, current allocations, utilization and knobs.
    seed : int, numpy Generator or None
        Unused (the policy is deterministic); accepted for the common signature.
    time_limit : float, optional
        Validated only: the step is polynomial and bounded by its work.

    Returns
    -------
    Solution[AntManDecision]
        Status ``feasible``; objective None (a round of a priority policy
        optimizes nothing the paper states per round); no bound.

    Raises
    ------
    ValueError
        ``time_limit`` is not a positive number.

    Examples
    --------
    >>> from scheduling_opt.model import Cluster, GpuType, Job, Server
    >>> c = Cluster((GpuType("V100"),), (Server("s0", "V100", 8), Server("s1", "V100", 4)))
    >>> jobs = (Job("a", 4, 4, 60.0, job_class="guarantee", tenant="A"),
    ...         Job("o", 2, 2, 60.0, job_class="opportunistic", tenant="B"))
    >>> sol = antman_step(AntManState(c, {"A": 8}, jobs))
    >>> sol.decision.launched["a"]
    (('s1', 0), ('s1', 1), ('s1', 2), ('s1', 3))
    >>> sol.decision.opportunistic["o"]
    (('s0', 0), ('s0', 1))

    References
    ----------
    AntMan (OSDI '20) §3.2, §3.3 Algorithm 1.
    """
    start = time.perf_counter()
    time_limit_of(time_limit)
    p = state.params
    r = start_round(state)
    released: dict[str, tuple[Gpu, ...]] = {}
    upgraded = upgrade_jobs(r)

    launched: dict[str, tuple[Gpu, ...]] = {}
    late: list[Job] = []
    for job in state.pending():
        if state.job_class(job) != "guarantee":
            continue
        before = r.reserved.get(job.id, ())
        chosen = _schedule_guarantee(r, job)
        if chosen is not None:
            launched[job.id] = chosen
        elif p.demote_after is not None and state.now - job.submit_time > p.demote_after:
            late.append(job)
        after = r.reserved.get(job.id, ())
        gone = tuple(sorted(set(before) - set(after)))
        if gone:
            released[job.id] = gone

    started: dict[str, tuple[Gpu, ...]] = {}
    demoted = []
    waiting = [j for j in state.pending() if state.job_class(j) == "opportunistic"]
    position = {j.id: i for i, j in enumerate(state.jobs)}
    late_ids = {j.id for j in late}
    for job in sorted([*waiting, *late], key=lambda j: position[j.id]):
        shared = _schedule_opportunistic(r, job, p.max_utilization)
        if shared is None:
            continue
        started[job.id] = shared
        if job.id in late_ids:
            demoted.append(job.id)
            own = r.reserved.pop(job.id, ())
            for g in own:
                del r.owner[g]
            r.usage[job.tenant or ""] = r.usage.get(job.tenant or "", 0) - len(own)
            # Released: what it held before the round (a reservation made and
            # dropped within this round was never anyone's).
            released.pop(job.id, None)
            if state.reserved.get(job.id):
                released[job.id] = state.reserved[job.id]
    decision = AntManDecision(
        launched=launched,
        opportunistic=started,
        upgraded=tuple(upgraded),
        demoted=tuple(demoted),
        reserved=r.reserved,
        released=released,
    )
    return Solution(Status.FEASIBLE, None, decision, seconds=time.perf_counter() - start)
