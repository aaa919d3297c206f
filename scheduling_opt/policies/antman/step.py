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

Complexity per step, J unfinished jobs, G GPUs, S servers of at most m
GPUs, W workers per job, L the job's locality limit: O(J + G) to set up the
round (owners, per-server free counts, the opportunistic candidates once)
and for the upgrades; a guarantee job whose tenant's quota or the free GPUs
cannot cover one worker (the usual case on a busy cluster) O(1) besides
giving back its old reservation, else O(S) to read the free counts and,
when a server can hold a worker, O(S log S + L S + L m log m) to choose
servers and GPUs (only the chosen servers' GPUs are listed and sorted); an
opportunistic job O(S) when the
candidates cannot hold it, else O(S + W log S) plus O(m log m) for each
server it lands on. The plain reading (every guarantee job O(G log G + S
log S), every opportunistic worker O(G log G)) is kept in the tests as the
reference that decides the same (tests/policies/test_antman_step_equivalence.py).
"""

from __future__ import annotations

import heapq
import time

from scheduling_opt.model import Job, Server
from scheduling_opt.policies._numbers import expect
from scheduling_opt.policies.antman._round import Round, quota_left, start_round
from scheduling_opt.policies.antman.model import AntManDecision, AntManState, Gpu
from scheduling_opt.policies.antman.upgrade import upgrade_jobs
from scheduling_opt.policies.locality import pick_servers
from scheduling_opt.solution import Seed, Solution, Status, time_limit_of


def _free_on(r: Round, job: Job, server: Server, own: frozenset[Gpu]) -> list[Gpu]:
    """The GPUs of ``server`` no other guarantee job holds or reserves, best first.

    Sorted so that the job's own reservation comes first, then GPUs without
    opportunistic jobs, then the least loaded: a guarantee job disturbs as
    few opportunistic jobs as it can (AntMan still shrinks them if needed).
    """
    gpus = [
        (server.id, i) for i in range(server.gpus) if r.owner.get((server.id, i), job.id) == job.id
    ]
    gpus.sort(key=lambda g: (g not in own, r.shared.get(g, 0) > 0, r.load(g), g))
    return gpus


def _schedule_guarantee(r: Round, job: Job, may_reserve: bool = True) -> tuple[Gpu, ...] | None:
    """Algorithm 1 lines 1, 4-8: launch on nodes0 when it covers the demand, else reserve.

    A job whose tenant's quota, or the cluster's free GPUs, cannot cover one
    worker takes nothing: it returns at once (after giving back its old
    reservation), the common case on a busy cluster. Otherwise the servers
    are chosen from the per-server free counts and only the chosen ones'
    GPUs are listed and sorted. ``may_reserve`` False: a job that does not
    launch keeps nothing (an earlier job of its tenant holds the tenant's
    reservation).
    """
    tenant = job.tenant or ""
    own = r.reserved.pop(job.id, ())
    r.drop(own)
    r.usage[tenant] = r.usage.get(tenant, 0) - len(own)
    d = job.gpus_per_worker
    amount = min(job.max_gpus, quota_left(r.usage, r.state.quotas, tenant))
    if amount < d or r.free_total < d:
        return None
    usable = {s.id: r.free[s.id] // d * d for s in r.fitting(job) if r.free[s.id] >= d}
    if not usable:
        return None
    prefer: dict[str, int] = {}
    for server, _ in own:
        prefer[server] = prefer.get(server, 0) + 1
    servers = pick_servers(usable, job.max_gpus, r.limit(job), r.rank, prefer)
    mine = frozenset(own)
    gpus: list[Gpu] = []
    for s in servers:
        n = min(usable[s], (amount - len(gpus)) // d * d)
        if n > 0:
            gpus.extend(_free_on(r, job, r.servers[s], mine)[:n])
    if gpus:
        r.hold(gpus, job.id)
        r.usage[tenant] = r.usage.get(tenant, 0) + len(gpus)
    if len(gpus) == job.max_gpus:
        r.fresh.update(gpus)
        return tuple(sorted(gpus))
    if gpus and may_reserve:
        r.reserved[job.id] = tuple(sorted(gpus))
    elif gpus:
        r.drop(gpus)
        r.usage[tenant] -= len(gpus)
    return None


class _Shared:
    """The opportunistic phase's candidates: GPUs under M not given out this round.

    Utilization and the fresh GPUs do not change during the phase, so the
    GPUs they exclude and each server's candidate count are found once,
    O(G); a server's candidates are listed, sorted by (load, opportunistic
    jobs, GPU), only when a job may land there, and sorted again only after
    one does.
    """

    def __init__(self, r: Round, m: float) -> None:
        self.r = r
        # Load < M: a GPU without a measured load is idle (0 < M).
        self.blocked = {g for g, u in r.state.utilization.items() if u >= m} | r.fresh
        self.count = {s.id: s.gpus for s in r.state.cluster.servers}
        for server, _ in self.blocked:
            self.count[server] -= 1
        self._order: dict[str, list[Gpu]] = {}

    def order(self, server: str) -> list[Gpu]:
        """The server's candidates, best first."""
        if server not in self._order:
            r, blocked = self.r, self.blocked
            gpus = [(server, i) for i in range(r.servers[server].gpus)]
            gpus = [g for g in gpus if g not in blocked]
            gpus.sort(key=lambda g: (r.load(g), r.shared.get(g, 0), g))
            self._order[server] = gpus
        return self._order[server]

    def place(self, gpus: list[Gpu]) -> None:
        for g in gpus:
            self.r.shared[g] = self.r.shared.get(g, 0) + 1
            self._order.pop(g[0], None)


def _schedule_opportunistic(ph: _Shared, job: Job) -> tuple[Gpu, ...] | None:
    """Algorithm 1 lines 2-3, 9-10: the least-loaded GPUs under utilization M, worker by worker.

    Each worker goes to the server whose ``d`` least-loaded untaken
    candidates have the lowest summed (load, opportunistic jobs), the first
    in cluster order on ties. The servers can host sum(candidates // d)
    workers whatever the order of picks, so a job that needs more waits at
    once; otherwise a heap keyed by (that sum, cluster position) picks each
    worker: only the chosen server's key changes, and a server's taken GPUs
    are always a prefix of its sorted candidates.
    """
    r = ph.r
    d = job.gpus_per_worker
    servers = [s.id for s in r.fitting(job) if ph.count[s.id] >= d]
    if sum(ph.count[s] // d for s in servers) < job.max_workers:
        return None

    def key(pick: list[Gpu]) -> tuple[float, int]:
        return (sum(r.load(g) for g in pick), sum(r.shared.get(g, 0) for g in pick))

    orders = [ph.order(s) for s in servers]
    heap = [(key(gpus[:d]), k) for k, gpus in enumerate(orders)]
    heapq.heapify(heap)
    used = [0] * len(orders)
    taken: list[Gpu] = []
    for _ in range(job.max_workers):
        _, k = heapq.heappop(heap)
        gpus, at = orders[k], used[k]
        taken.extend(gpus[at : at + d])
        used[k] = at = at + d
        if len(gpus) - at >= d:
            heapq.heappush(heap, (key(gpus[at : at + d]), k))
    ph.place(taken)
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
    expect(state, AntManState, "state")
    start = time.perf_counter()
    time_limit_of(time_limit)
    p = state.params
    r = start_round(state)
    released: dict[str, tuple[Gpu, ...]] = {}
    upgraded = upgrade_jobs(r)

    launched: dict[str, tuple[Gpu, ...]] = {}
    late: list[Job] = []
    # One reservation per tenant, its queue's first waiting job's: two partial
    # reservations of one tenant could hold its whole quota between them and
    # wait for each other forever (a job further back still launches when it
    # fits whole).
    reserving: set[str] = set()
    for job in state.pending():
        if state.job_class(job) != "guarantee":
            continue
        before = r.reserved.get(job.id, ())
        tenant = job.tenant or ""
        chosen = _schedule_guarantee(r, job, may_reserve=tenant not in reserving)
        if job.id in r.reserved:
            reserving.add(tenant)
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
    phase = _Shared(r, p.max_utilization)
    waiting = [j for j in state.pending() if state.job_class(j) == "opportunistic"]
    position = {j.id: i for i, j in enumerate(state.jobs)}
    late_ids = {j.id for j in late}
    for job in sorted([*waiting, *late], key=lambda j: position[j.id]):
        shared = _schedule_opportunistic(phase, job)
        if shared is None:
            continue
        started[job.id] = shared
        if job.id in late_ids:
            demoted.append(job.id)
            own = r.reserved.pop(job.id, ())
            r.drop(own)
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
