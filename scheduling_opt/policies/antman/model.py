"""The typed state and decision of AntMan's global scheduler.

An :class:`AntManState` is one round's input: the multi-tenant cluster, the
tenants' GPU quotas, every unfinished job (model :class:`~scheduling_opt.model.Job`
objects with ``job_class`` and ``tenant``), the GPUs of running guarantee and
opportunistic jobs, the reservations of waiting guarantee jobs, each GPU's
recent utilization, and the knobs (:class:`AntManParams`). An
:class:`AntManDecision` is the round's output. Construction validates the
invariants (quota; one guarantee job or reservation per GPU) and names the
broken one. AntMan (OSDI '20) §3.2, §3.3. Construction is O(J + G).
"""

from __future__ import annotations

import sys
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

from scheduling_opt.errors import InvalidInstanceError
from scheduling_opt.jsonpath import MAX_INT
from scheduling_opt.model import Cluster, Job, JobClass
from scheduling_opt.policies._numbers import as_fraction, as_int, as_number, expect

_TINY = sys.float_info.min  # as_fraction refuses a subnormal

#: A GPU: (server id, index on the server).
Gpu = tuple[str, int]
Allocation = Mapping[str, tuple[Gpu, ...]]

#: AntMan §3.3: only GPUs under 80% utilization (past 10 s) take opportunistic jobs.
DEFAULT_MAX_UTILIZATION = 0.8


def _gpu(value: object, path: str) -> Gpu:
    # Fast path for what a scheduler passes (a plain (str, int) tuple): a
    # simulator builds a state per event, millions of GPUs per run. The same
    # values pass as through the checks below.
    if (
        type(value) is tuple
        and len(value) == 2
        and type(value[0]) is str
        and type(value[1]) is int
        and 0 <= value[1] <= MAX_INT
    ):
        return value[0], value[1]
    if not isinstance(value, tuple) or len(value) != 2 or not isinstance(value[0], str):
        raise InvalidInstanceError(path, f"a GPU is (server id, index), got {value!r:.60}")
    return value[0], as_int(value[1], path, 0)


def _frozen(mapping: Mapping[str, Iterable[Gpu]], path: str) -> Allocation:
    if not isinstance(mapping, Mapping):
        raise InvalidInstanceError(path, "must be a mapping of job id to GPUs")
    out = {}
    for k, v in mapping.items():
        out[k] = tuple(sorted(_gpu(g, f"{path}.{k}") for g in v))
    return MappingProxyType(out)


@dataclass(frozen=True, slots=True)
class AntManParams:
    """Knobs of the global scheduler.

    Attributes
    ----------
    max_utilization : float
        AntMan's M in (0, 1]: only GPUs below it take opportunistic jobs.
    demote_after : float or None
        Seconds a pending guarantee job may wait after submission before it
        runs as opportunistic (None: never).
    """

    max_utilization: float = DEFAULT_MAX_UTILIZATION
    demote_after: float | None = None

    def __post_init__(self) -> None:
        m = as_fraction(self.max_utilization, "max_utilization", open_low=True)
        object.__setattr__(self, "max_utilization", m)
        if self.demote_after is not None:
            object.__setattr__(
                self, "demote_after", as_number(self.demote_after, "demote_after", 0)
            )


@dataclass(frozen=True, slots=True)
class AntManState:
    """Everything the global scheduler knows at one round.

    Attributes
    ----------
    cluster : Cluster
        The servers; a GPU is ``(server id, index)``.
    quotas : Mapping[str, int]
        Tenant -> guaranteed GPUs (integers >= 0, summing to at most the cluster).
    jobs : tuple of Job
        Every unfinished job, in queue (arrival) order; a job is pending
        unless it appears in ``guarantee`` or ``opportunistic``.
    guarantee, opportunistic : Mapping[str, tuple of Gpu]
        The GPUs of running resource-guarantee and opportunistic jobs.
    reserved : Mapping[str, tuple of Gpu]
        GPUs held for pending guarantee jobs.
    utilization : Mapping[Gpu, float]
        Each GPU's SM utilization over the past 10 s, in [0, 1] (missing: idle).
    pinned : frozenset of str
        Opportunistic jobs the user asked never to upgrade.
    now : float
        The clock (for ``params.demote_after``).
    params : AntManParams
        The knobs.
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
    params: AntManParams = field(default_factory=AntManParams)

    def __post_init__(self) -> None:
        if not isinstance(self.cluster, Cluster):
            raise InvalidInstanceError("cluster", "must be a Cluster")
        object.__setattr__(self, "jobs", tuple(self.jobs))
        for i, j in enumerate(self.jobs):
            if not isinstance(j, Job):
                raise InvalidInstanceError(f"jobs[{i}]", f"must be a Job, got {j!r:.60}")
        if not isinstance(self.quotas, Mapping):
            raise InvalidInstanceError("quotas", "must be a mapping of tenant to GPUs")
        quotas = {str(t): as_int(q, f"quotas.{t}", 0) for t, q in self.quotas.items()}
        object.__setattr__(self, "quotas", MappingProxyType(quotas))
        util = {}
        for g, u in dict(self.utilization).items():
            gpu = _gpu(g, "utilization")
            # Fast path: a plain float that as_fraction would return unchanged.
            if type(u) is float and (u == 0.0 or _TINY <= u <= 1.0):
                util[gpu] = u
            else:
                util[gpu] = as_fraction(u, f"utilization[{gpu!r}]")
        object.__setattr__(self, "utilization", MappingProxyType(util))
        for name in ("guarantee", "opportunistic", "reserved"):
            object.__setattr__(self, name, _frozen(getattr(self, name), name))
        if isinstance(self.pinned, str):
            raise InvalidInstanceError("pinned", "must be a set of job ids, not one string")
        object.__setattr__(self, "pinned", frozenset(self.pinned))
        object.__setattr__(self, "now", as_number(self.now, "now"))
        if not isinstance(self.params, AntManParams):
            raise InvalidInstanceError("params", "must be an AntManParams")
        self._validate()

    def _validate(self) -> None:
        if sum(self.quotas.values()) > self.cluster.total_gpus:
            raise InvalidInstanceError("quotas", "the quotas exceed the cluster's GPUs")
        ids = [j.id for j in self.jobs]
        if len(set(ids)) != len(ids):
            raise InvalidInstanceError("jobs", "duplicate job ids")
        known = set(ids)
        sizes = {s.id: s.gpus for s in self.cluster.servers}  # has_gpu without the calls
        for name in ("guarantee", "opportunistic", "reserved"):
            for job_id, gpus in getattr(self, name).items():
                if job_id not in known:
                    raise InvalidInstanceError(f"{name}.{job_id}", "unknown job")
                for gpu in gpus:
                    if not 0 <= gpu[1] < sizes.get(gpu[0], 0):
                        raise InvalidInstanceError(f"{name}.{job_id}", f"unknown GPU {gpu!r}")
        for gpu in self.utilization:
            if not 0 <= gpu[1] < sizes.get(gpu[0], 0):
                raise InvalidInstanceError("utilization", f"unknown GPU {gpu!r}")
        unknown = sorted(self.pinned - known)
        if unknown:
            raise InvalidInstanceError("pinned", f"unknown jobs {unknown[:5]}")
        both = set(self.guarantee) & set(self.opportunistic)
        if both:
            raise InvalidInstanceError("opportunistic", f"jobs also guaranteed: {sorted(both)}")
        if set(self.reserved) & (set(self.guarantee) | set(self.opportunistic)):
            raise InvalidInstanceError("reserved", "a running job holds a reservation")
        check_invariants(self)

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


def check_invariants(state: AntManState) -> None:
    """Quota, and one guarantee job (or one reservation) per GPU; raises InvalidInstanceError."""
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
class AntManDecision:
    """One round's decisions.

    Attributes
    ----------
    launched : Mapping[str, tuple of Gpu]
        Guarantee jobs started, with their GPUs.
    opportunistic : Mapping[str, tuple of Gpu]
        Opportunistic jobs started (sharing GPUs).
    upgraded : tuple of str
        Running opportunistic jobs that become guarantee on the GPUs they hold.
    demoted : tuple of str
        Guarantee jobs that waited too long and start as opportunistic (they
        are in ``opportunistic`` too).
    reserved : Mapping[str, tuple of Gpu]
        Every reservation after the round.
    released : Mapping[str, tuple of Gpu]
        Reserved GPUs given back (or turned into the job's launch), per job.
    """

    launched: Allocation
    opportunistic: Allocation
    upgraded: tuple[str, ...]
    demoted: tuple[str, ...]
    reserved: Allocation
    released: Allocation

    def __post_init__(self) -> None:
        for name in ("launched", "opportunistic", "reserved", "released"):
            object.__setattr__(self, name, _frozen(getattr(self, name), name))
        object.__setattr__(self, "upgraded", tuple(self.upgraded))
        object.__setattr__(self, "demoted", tuple(self.demoted))


def all_gpus(cluster: Cluster) -> list[Gpu]:
    """Every GPU of the cluster, in cluster order.

    Examples
    --------
    >>> from scheduling_opt.model import Cluster, GpuType, Server
    >>> all_gpus(Cluster((GpuType("V100"),), (Server("s0", "V100", 2),)))
    [('s0', 0), ('s0', 1)]
    """
    expect(cluster, Cluster, "cluster")
    return [(s.id, i) for s in cluster.servers for i in range(s.gpus)]


def apply(state: AntManState, decision: AntManDecision) -> AntManState:
    """The state after the round (finished jobs are the caller's to remove: :func:`finish`).

    Parameters
    ----------
    state : AntManState
        The round's input.
    decision : AntManDecision
        Its decision (from :func:`~.step.antman_step`).

    Returns
    -------
    AntManState
        Upgrades and launches become guarantee jobs, opportunistic starts
        join the opportunistic jobs, reservations are replaced.

    Raises
    ------
    InvalidInstanceError
        The decision breaks the state's invariants (it does not belong to it).

    Examples
    --------
    >>> from scheduling_opt.model import Cluster, GpuType, Job, Server
    >>> from scheduling_opt.policies.antman import antman_step
    >>> c = Cluster((GpuType("V100"),), (Server("s0", "V100", 4),))
    >>> s = AntManState(c, {"A": 4}, (Job("a", 2, 2, 60.0, tenant="A"),))
    >>> dict(apply(s, antman_step(s).decision).guarantee)
    {'a': (('s0', 0), ('s0', 1))}

    References
    ----------
    AntMan (OSDI '20) §3.3.
    """
    expect(state, AntManState, "state")
    expect(decision, AntManDecision, "decision")
    guarantee = dict(state.guarantee)
    opportunistic = dict(state.opportunistic)
    for job_id in decision.upgraded:
        guarantee[job_id] = opportunistic.pop(job_id)
    guarantee.update(decision.launched)
    opportunistic.update(decision.opportunistic)
    return AntManState(
        cluster=state.cluster,
        quotas=state.quotas,
        jobs=state.jobs,
        guarantee=guarantee,
        opportunistic=opportunistic,
        reserved=decision.reserved,
        utilization=state.utilization,
        pinned=state.pinned,
        now=state.now,
        params=state.params,
    )


def finish(state: AntManState, job_ids: Iterable[str]) -> AntManState:
    """The state without these jobs (finished or cancelled): their GPUs and reservations are freed.

    Parameters
    ----------
    state : AntManState
        The current state.
    job_ids : iterable of str
        Ids of jobs of the state.

    Returns
    -------
    AntManState
        The state without them (their pins dropped too).

    Raises
    ------
    InvalidInstanceError
        An id names no job of the state.

    Examples
    --------
    >>> from scheduling_opt.model import Cluster, GpuType, Job, Server
    >>> c = Cluster((GpuType("V100"),), (Server("s0", "V100", 4),))
    >>> s = AntManState(c, {"A": 2}, (Job("a", 2, 2, 60.0, tenant="A"),),
    ...                 guarantee={"a": (("s0", 0), ("s0", 1))})
    >>> finish(s, ["a"]).tenant_usage()
    {}

    References
    ----------
    AntMan (OSDI '20) §3.2.
    """
    expect(state, AntManState, "state")
    if isinstance(job_ids, str):
        raise InvalidInstanceError("job_ids", "must be a collection of job ids, not one string")
    gone = set(job_ids)
    unknown = sorted(gone - {j.id for j in state.jobs})
    if unknown:
        raise InvalidInstanceError("job_ids", f"unknown jobs {unknown[:5]}")

    def keep(a: Allocation) -> dict[str, tuple[Gpu, ...]]:
        return {k: v for k, v in a.items() if k not in gone}

    return AntManState(
        cluster=state.cluster,
        quotas=state.quotas,
        jobs=tuple(j for j in state.jobs if j.id not in gone),
        guarantee=keep(state.guarantee),
        opportunistic=keep(state.opportunistic),
        reserved=keep(state.reserved),
        utilization=state.utilization,
        pinned=state.pinned - gone,
        now=state.now,
        params=state.params,
    )
