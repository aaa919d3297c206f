"""AntMan global scheduler: resource-guarantee vs opportunistic jobs on shared GPUs.

Each scheduling round places pending jobs on a multi-tenant cluster: a
resource-guarantee job gets whole GPUs within its tenant's quota on few
servers (or a reservation when only part fits), an opportunistic job shares
the least-loaded GPUs whose utilization is under M; an opportunistic job is
upgraded to resource-guarantee in place when its tenant's quota allows.
AntMan (OSDI '20) §3.2, §3.3 (Algorithm 1 ``scheduleJob``, job upgrade).

The policy is a pure step function: :func:`step` maps a :class:`SharingState`
to :class:`SharingDecisions`; :func:`apply` gives the next state, and
:func:`check_step` is the independent checker of the invariants (quota, one
guarantee job per GPU, reservations). The memory split among opportunistic
jobs sharing one GPU is :mod:`scheduling_opt.solvers.memory_split`.

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

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

from scheduling_opt.errors import InvalidInstanceError, VerificationError
from scheduling_opt.model import Cluster, Job, JobClass
from scheduling_opt.solvers.locality import locality_limit, pick_servers

#: A GPU: (server id, index on the server).
Gpu = tuple[str, int]
Allocation = Mapping[str, tuple[Gpu, ...]]

#: AntMan §3.3: only GPUs under 80% utilization (past 10 s) take opportunistic jobs.
DEFAULT_MAX_UTILIZATION = 0.8


def _frozen(mapping: Mapping[str, Iterable[Gpu]]) -> Allocation:
    return MappingProxyType({k: tuple(sorted(v)) for k, v in mapping.items()})


@dataclass(frozen=True, slots=True)
class SharingState:
    """Everything the global scheduler knows at one round.

    ``jobs``: every job not finished, in queue (arrival) order; a job is
    pending unless it appears in ``guarantee`` or ``opportunistic`` (its GPUs).
    ``reserved``: GPUs held for pending guarantee jobs. ``utilization``: each
    GPU's SM utilization over the past 10 s (missing: idle). ``pinned``:
    opportunistic jobs the user asked never to upgrade. ``now``: the clock,
    for ``demote_after`` in :func:`step`.
    """

    cluster: Cluster
    quotas: Mapping[str, int]
    jobs: tuple[Job, ...]
    guarantee: Allocation = field(default_factory=dict)
    opportunistic: Allocation = field(default_factory=dict)
    reserved: Allocation = field(default_factory=dict)
    utilization: Mapping[Gpu, float] = field(default_factory=dict)
    pinned: frozenset[str] = frozenset()
    now: float = 0.0

    def __post_init__(self) -> None:
        object.__setattr__(self, "jobs", tuple(self.jobs))
        object.__setattr__(self, "quotas", MappingProxyType(dict(self.quotas)))
        object.__setattr__(self, "utilization", MappingProxyType(dict(self.utilization)))
        for name in ("guarantee", "opportunistic", "reserved"):
            object.__setattr__(self, name, _frozen(getattr(self, name)))
        object.__setattr__(self, "pinned", frozenset(self.pinned))
        self._validate()

    def _validate(self) -> None:
        for tenant, quota in self.quotas.items():
            if isinstance(quota, bool) or not isinstance(quota, int) or quota < 0:
                raise InvalidInstanceError(f"quotas.{tenant}", f"must be >= 0, got {quota!r}")
        if sum(self.quotas.values()) > self.cluster.total_gpus:
            raise InvalidInstanceError("quotas", "the quotas exceed the cluster's GPUs")
        ids = [j.id for j in self.jobs]
        if len(set(ids)) != len(ids):
            raise InvalidInstanceError("jobs", "duplicate job ids")
        known = set(ids)
        for name in ("guarantee", "opportunistic", "reserved"):
            for job_id, gpus in getattr(self, name).items():
                if job_id not in known:
                    raise InvalidInstanceError(f"{name}.{job_id}", "unknown job")
                for gpu in gpus:
                    if not self.has_gpu(gpu):
                        raise InvalidInstanceError(f"{name}.{job_id}", f"unknown GPU {gpu!r}")
        both = set(self.guarantee) & set(self.opportunistic)
        if both:
            raise InvalidInstanceError("opportunistic", f"jobs also guaranteed: {sorted(both)}")
        if set(self.reserved) & (set(self.guarantee) | set(self.opportunistic)):
            raise InvalidInstanceError("reserved", "a running job holds a reservation")
        _check_invariants(self)

    def has_gpu(self, gpu: Gpu) -> bool:
        server, index = gpu
        return self.cluster.has_server(server) and 0 <= index < self.cluster.server(server).gpus

    @property
    def jobs_by_id(self) -> Mapping[str, Job]:
        return {j.id: j for j in self.jobs}

    def pending(self) -> tuple[Job, ...]:
        return tuple(
            j for j in self.jobs if j.id not in self.guarantee and j.id not in self.opportunistic
        )

    def job_class(self, job: Job) -> JobClass:
        """The job's class; unset: guarantee when its tenant has a quota (AntMan's default)."""
        if job.job_class is not None:
            return job.job_class
        return "guarantee" if self.quotas.get(job.tenant or "", 0) > 0 else "opportunistic"

    def tenant_usage(self) -> dict[str, int]:
        """GPUs each tenant's guarantee jobs hold or have reserved (what its quota pays)."""
        by_id = self.jobs_by_id
        usage: dict[str, int] = {}
        for alloc in (self.guarantee, self.reserved):
            for job_id, gpus in alloc.items():
                tenant = by_id[job_id].tenant or ""
                usage[tenant] = usage.get(tenant, 0) + len(gpus)
        return usage


def _check_invariants(state: SharingState) -> None:
    """Quota, one guarantee job (or one reservation) per GPU, opportunistic gangs."""
    owner: dict[Gpu, str] = {}
    for name in ("guarantee", "reserved"):
        for job_id, gpus in getattr(state, name).items():
            for gpu in gpus:
                if gpu in owner:
                    raise InvalidInstanceError(
                        f"{name}.{job_id}", f"GPU {gpu!r} already held by {owner[gpu]!r}"
                    )
                owner[gpu] = job_id
    for tenant, used in state.tenant_usage().items():
        if used > state.quotas.get(tenant, 0):
            raise InvalidInstanceError(
                "quotas",
                f"tenant {tenant!r} uses {used} GPUs over its quota {state.quotas.get(tenant, 0)}",
            )


@dataclass(frozen=True, slots=True)
class SharingParams:
    """``max_utilization``: AntMan's M. ``demote_after``: seconds a pending
    guarantee job may wait before it runs as opportunistic (None: never)."""

    max_utilization: float = DEFAULT_MAX_UTILIZATION
    demote_after: float | None = None

    def __post_init__(self) -> None:
        if not 0 < self.max_utilization <= 1:
            raise InvalidInstanceError("max_utilization", "must be in (0, 1]")
        if self.demote_after is not None and self.demote_after < 0:
            raise InvalidInstanceError("demote_after", "must be >= 0")


@dataclass(frozen=True, slots=True)
class SharingDecisions:
    """One round's decisions.

    ``launched``: guarantee jobs started, with their GPUs; ``opportunistic``:
    opportunistic jobs started (sharing GPUs); ``upgraded``: running
    opportunistic jobs that become guarantee on the GPUs they hold;
    ``demoted``: guarantee jobs that waited too long and start as
    opportunistic (they are in ``opportunistic`` too); ``reserved``: every
    reservation after the round; ``released``: reserved GPUs given back, per job.
    """

    launched: Allocation
    opportunistic: Allocation
    upgraded: tuple[str, ...]
    demoted: tuple[str, ...]
    reserved: Allocation
    released: Allocation


# --------------------------------------------------------------------------- helpers


def all_gpus(cluster: Cluster) -> list[Gpu]:
    return [(s.id, i) for s in cluster.servers for i in range(s.gpus)]


def _quota_left(usage: Mapping[str, int], quotas: Mapping[str, int], tenant: str) -> int:
    return quotas.get(tenant, 0) - usage.get(tenant, 0)


@dataclass(slots=True)
class _Round:
    """The mutable scratch copy of one round (never escapes :func:`step`)."""

    state: SharingState
    owner: dict[Gpu, str]  # GPU -> guarantee job holding or reserving it
    usage: dict[str, int]
    reserved: dict[str, tuple[Gpu, ...]]
    shared: dict[Gpu, int]  # opportunistic jobs on each GPU
    fresh: set[Gpu]  # GPUs given to a guarantee job this round
    rank: dict[str, int]  # server -> position in the cluster

    def load(self, gpu: Gpu) -> float:
        return self.state.utilization.get(gpu, 0.0)


def _start(state: SharingState) -> _Round:
    owner: dict[Gpu, str] = {}
    for alloc in (state.guarantee, state.reserved):
        for job_id, gpus in alloc.items():
            owner.update(dict.fromkeys(gpus, job_id))
    shared: dict[Gpu, int] = {}
    for gpus in state.opportunistic.values():
        for gpu in gpus:
            shared[gpu] = shared.get(gpu, 0) + 1
    rank = {s.id: i for i, s in enumerate(state.cluster.servers)}
    return _Round(state, owner, state.tenant_usage(), dict(state.reserved), shared, set(), rank)


def _free_for(r: _Round, job: Job, own: frozenset[Gpu]) -> dict[str, list[Gpu]]:
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


# --------------------------------------------------------------------------- the step


def _upgrade(r: _Round, job: Job, gpus: tuple[Gpu, ...]) -> bool:
    """AntMan job upgrade: all the job's GPUs free of guarantee jobs, and quota for all."""
    tenant = job.tenant or ""
    if any(g in r.owner for g in gpus) or _quota_left(r.usage, r.state.quotas, tenant) < len(gpus):
        return False
    r.owner.update(dict.fromkeys(gpus, job.id))
    r.usage[tenant] = r.usage.get(tenant, 0) + len(gpus)
    for g in gpus:
        r.shared[g] -= 1
    return True


def _schedule_guarantee(r: _Round, job: Job) -> tuple[Gpu, ...] | None:
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
    quota = _quota_left(r.usage, r.state.quotas, tenant)
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


def _schedule_opportunistic(r: _Round, job: Job, m: float) -> tuple[Gpu, ...] | None:
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


def step(state: SharingState, params: SharingParams | None = None) -> SharingDecisions:
    """One round of AntMan's global scheduler (pure: ``state`` is not changed).

    Order: (1) running opportunistic jobs are upgraded where their tenant's
    quota allows (preferred over launching new jobs, AntMan §3.3); (2) pending guarantee
    jobs, in queue order, launch or (re)reserve; (3) pending opportunistic
    jobs (and guarantee jobs waiting longer than ``demote_after``) start on
    the least-loaded GPUs under M.
    """
    p = params or SharingParams()
    r = _start(state)
    released: dict[str, tuple[Gpu, ...]] = {}
    upgraded = []
    for job in state.jobs:
        held = state.opportunistic.get(job.id)
        if held is None or job.id in state.pinned or not state.quotas.get(job.tenant or "", 0):
            continue
        if _upgrade(r, job, held):
            upgraded.append(job.id)

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
    return SharingDecisions(
        launched=_frozen(launched),
        opportunistic=_frozen(started),
        upgraded=tuple(upgraded),
        demoted=tuple(demoted),
        reserved=_frozen(r.reserved),
        released=_frozen(released),
    )


def apply(state: SharingState, decisions: SharingDecisions) -> SharingState:
    """The state after the round (finished jobs are the caller's to remove)."""
    guarantee = dict(state.guarantee)
    opportunistic = dict(state.opportunistic)
    for job_id in decisions.upgraded:
        guarantee[job_id] = opportunistic.pop(job_id)
    guarantee.update(decisions.launched)
    opportunistic.update(decisions.opportunistic)
    return SharingState(
        cluster=state.cluster,
        quotas=state.quotas,
        jobs=state.jobs,
        guarantee=guarantee,
        opportunistic=opportunistic,
        reserved=decisions.reserved,
        utilization=state.utilization,
        pinned=state.pinned,
        now=state.now,
    )


def finish(state: SharingState, job_ids: Iterable[str]) -> SharingState:
    """The state without these jobs (finished or cancelled): their GPUs and
    reservations are released."""
    gone = set(job_ids)

    def keep(a: Allocation) -> dict[str, tuple[Gpu, ...]]:
        return {k: v for k, v in a.items() if k not in gone}

    return SharingState(
        cluster=state.cluster,
        quotas=state.quotas,
        jobs=tuple(j for j in state.jobs if j.id not in gone),
        guarantee=keep(state.guarantee),
        opportunistic=keep(state.opportunistic),
        reserved=keep(state.reserved),
        utilization=state.utilization,
        pinned=state.pinned,
        now=state.now,
    )


# --------------------------------------------------------------------------- checker


def check_step(
    state: SharingState, decisions: SharingDecisions, params: SharingParams | None = None
) -> None:
    """Independent check of one round; raises VerificationError.

    Each started job gets exactly its demand, whole workers per server, on
    GPUs of its type; guarantee launches span at most ceil(G / m) servers and
    take no GPU held by another guarantee job (nor still reserved for another
    job: a reservation released in the same round frees its GPUs);
    opportunistic starts use only GPUs under M; upgrades keep their GPUs;
    only pending jobs start or hold reservations, and the next state keeps
    every quota and the one-guarantee-job-per-GPU rule.
    """
    p = params or SharingParams()
    by_id = state.jobs_by_id
    pending = {j.id for j in state.pending()}
    held = {g: k for k, gpus in state.guarantee.items() for g in gpus}
    # A reservation released this round (its job launched elsewhere, or gave
    # up) frees its GPUs for another launch in the same round.
    reserved_by = {
        g: k
        for k, gpus in state.reserved.items()
        for g in gpus
        if g not in set(decisions.released.get(k, ()))
    }
    for name, alloc in (
        ("launched", decisions.launched),
        ("opportunistic", decisions.opportunistic),
    ):
        for job_id, gpus in alloc.items():
            if job_id not in pending:
                raise VerificationError(f"{name}: {job_id!r} is not pending")
            job = by_id[job_id]
            if len(set(gpus)) != len(gpus) or len(gpus) != job.max_gpus:
                raise VerificationError(f"{job_id!r}: got {len(gpus)} GPUs, needs {job.max_gpus}")
            per_server: dict[str, int] = {}
            for g in gpus:
                if not state.has_gpu(g) or not job.fits(state.cluster.server(g[0])):
                    raise VerificationError(f"{job_id!r}: GPU {g!r} unknown or of the wrong type")
                per_server[g[0]] = per_server.get(g[0], 0) + 1
            if any(n % job.gpus_per_worker for n in per_server.values()):
                raise VerificationError(f"{job_id!r}: a worker split across servers")
            if name == "launched":
                if len(per_server) > locality_limit(state.cluster, job):
                    raise VerificationError(f"{job_id!r}: spans {len(per_server)} servers")
                for g in gpus:
                    owner = reserved_by.get(g)
                    other = held.get(g) or (owner if owner != job_id else None)
                    if other is not None:
                        raise VerificationError(f"{job_id!r}: GPU {g!r} belongs to {other!r}")
            else:
                bad = [g for g in gpus if state.utilization.get(g, 0.0) >= p.max_utilization]
                if bad:
                    raise VerificationError(f"{job_id!r}: GPUs {bad} are at or over M")
    for job_id in decisions.upgraded:
        if job_id not in state.opportunistic:
            raise VerificationError(f"upgraded {job_id!r} is not a running opportunistic job")
    for job_id in decisions.reserved:
        if (
            job_id not in pending
            or job_id in decisions.launched
            or job_id in decisions.opportunistic
        ):
            raise VerificationError(f"reservation of {job_id!r}, which is not waiting")
    for job_id, gpus in state.reserved.items():
        kept = set(decisions.reserved.get(job_id, ()))
        dropped = set(gpus) - kept
        if dropped != set(decisions.released.get(job_id, ())) - kept:
            raise VerificationError(f"{job_id!r}: released GPUs misreported")
    try:
        _check_invariants(apply(state, decisions))
    except InvalidInstanceError as e:
        raise VerificationError(str(e)) from None
