"""The reclaim input (cluster, jobs, placement, N_R) and its typed decision.

The inference cluster takes back N_R of the servers it lent to training; the
decision is which N_R on-loan servers to return, so that as few jobs as
possible are preempted, then as few GPUs as possible are vacated on the kept
servers (Aryl, EuroSys '22, §4 and Appendix B). Building the input checks
every cross-reference once, in O(P) for P placement rows, and precomputes the
job-server incidence lists every algorithm iterates over.
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from scheduling_opt.errors import InvalidInstanceError
from scheduling_opt.jsonpath import read_int
from scheduling_opt.model import Cluster, Job, Placement, index_jobs
from scheduling_opt.solution import Solution, Status

Incidence = tuple[tuple[int, int], ...]


@dataclass(frozen=True, slots=True)
class ReclaimDecision:
    """The servers returned and what returning them does.

    Attributes
    ----------
    servers : tuple of str
        The returned on-loan server ids.
    preempted_jobs : tuple of str
        Jobs whose kept workers fall below ``min_workers`` (they stop everywhere).
    scaled_in : tuple of (str, int)
        Each surviving job that loses workers, with how many it loses.
    collateral_gpus : int
        GPUs the preempted jobs vacate on servers that are not returned.
    """

    servers: tuple[str, ...]
    preempted_jobs: tuple[str, ...]
    scaled_in: tuple[tuple[str, int], ...]
    collateral_gpus: int

    @property
    def key(self) -> tuple[int, int]:
        """The lexicographic objective ``(preempted jobs, collateral GPUs)``."""
        return len(self.preempted_jobs), self.collateral_gpus


def _check_placement(cluster: Cluster, jobs: Mapping[str, Job], placement: Placement) -> None:
    """The instance file's placement rules (io.instance), for inputs built in code."""
    used: dict[str, int] = {}
    for i, row in enumerate(placement.rows):
        job = jobs.get(row.job)
        if job is None:
            raise InvalidInstanceError(f"placement[{i}].job", f"unknown job {row.job!r}")
        if not cluster.has_server(row.server):
            raise InvalidInstanceError(f"placement[{i}].server", f"unknown server {row.server!r}")
        server = cluster.server(row.server)
        if not job.fits(server) or not server.usable_for_training:
            raise InvalidInstanceError(
                f"placement[{i}].server", f"job {job.id!r} cannot run on server {server.id!r}"
            )
        used[server.id] = used.get(server.id, 0) + row.workers * job.gpus_per_worker
        if used[server.id] > server.gpus:
            raise InvalidInstanceError(
                f"placement[{i}].workers",
                f"server {server.id!r} is over-full: {used[server.id]} GPUs of {server.gpus}",
            )
    for job_id in placement.jobs():
        job, n = jobs[job_id], placement.workers_of(job_id)
        if not job.min_workers <= n <= job.max_workers:
            first = next(i for i, r in enumerate(placement.rows) if r.job == job_id)
            raise InvalidInstanceError(
                f"placement[{first}].workers",
                f"job {job_id!r} has {n} workers placed, outside its range "
                f"{job.min_workers}..{job.max_workers}",
            )


@dataclass(frozen=True, slots=True)
class ReclaimInput:
    """A reclaim problem: return ``n_reclaim`` of the cluster's on-loan servers.

    Servers are indexed ``s`` in cluster order among the on-loan servers;
    jobs are indexed ``j`` among the placed jobs with at least one worker on
    an on-loan server (no other job can be touched). The derived tuples are
    what the algorithms iterate over: their hot loops are scalar Python, on
    which tuples are several times faster than numpy element access.

    Parameters
    ----------
    cluster : Cluster
        The servers; those with ``on_loan`` are the candidates.
    jobs : iterable of Job
        The jobs (unique ids; every placed job must be here).
    placement : Placement
        Where each job's workers run now (training servers included).
    n_reclaim : int
        N_R, the number of on-loan servers to return (0..on-loan count).

    Attributes
    ----------
    server_jobs, job_servers : tuple of tuple of (int, int)
        Incidence lists ``((j, workers), ...)`` per server and
        ``((s, workers), ...)`` per job.
    slack : tuple of int
        Placed workers - ``min_workers``: the workers a job can lose and survive.
    loan_workers, gpw, gpus : tuple of int
        Workers on on-loan servers, GPUs per worker, placed GPUs everywhere.
    big : int
        Weight of one preemption in the single-integer objective
        ``preempted * big + collateral`` (above any collateral).

    Raises
    ------
    InvalidInstanceError
        Naming the field: ``cluster``, ``jobs[i]...``, ``placement[i]...``
        (the file reader's rules) or ``n_reclaim``.

    Examples
    --------
    >>> from scheduling_opt.model import Cluster, GpuType, Job, Placement, PlacementRow, Server
    >>> cluster = Cluster((GpuType("T4"),), (Server("i1", "T4", 8, "inference", True),))
    >>> jobs = (Job("a", 1, 1, 60.0),)
    >>> inp = ReclaimInput(cluster, jobs, Placement((PlacementRow("a", "i1", 1),)), 1)
    >>> inp.server_ids, inp.job_ids, inp.slack
    (('i1',), ('a',), (0,))
    >>> ReclaimInput(cluster, jobs, Placement(), 2)
    Traceback (most recent call last):
    ...
    scheduling_opt.errors.InvalidInstanceError: n_reclaim: cannot reclaim 2 servers: only 1 are on loan

    References
    ----------
    Aryl (Li et al., EuroSys '22), §4 (server reclaiming) and Appendix B.
    """

    cluster: Cluster
    jobs: tuple[Job, ...]
    placement: Placement
    n_reclaim: int
    jobs_by_id: Mapping[str, Job] = field(init=False, repr=False, compare=False)
    server_ids: tuple[str, ...] = field(init=False, repr=False, compare=False)
    job_ids: tuple[str, ...] = field(init=False, repr=False, compare=False)
    server_jobs: tuple[Incidence, ...] = field(init=False, repr=False, compare=False)
    job_servers: tuple[Incidence, ...] = field(init=False, repr=False, compare=False)
    slack: tuple[int, ...] = field(init=False, repr=False, compare=False)
    loan_workers: tuple[int, ...] = field(init=False, repr=False, compare=False)
    gpw: tuple[int, ...] = field(init=False, repr=False, compare=False)
    gpus: tuple[int, ...] = field(init=False, repr=False, compare=False)
    big: int = field(init=False, repr=False, compare=False)
    neighbours: tuple[frozenset[int], ...] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        if not isinstance(self.cluster, Cluster):
            raise InvalidInstanceError("cluster", f"must be a Cluster, got {self.cluster!r}")
        if not isinstance(self.placement, Placement):
            raise InvalidInstanceError("placement", f"must be a Placement, got {self.placement!r}")
        jobs = tuple(self.jobs) if isinstance(self.jobs, Iterable) else self.jobs
        if not isinstance(jobs, tuple):
            raise InvalidInstanceError("jobs", f"must be a sequence of Job, got {self.jobs!r}")
        object.__setattr__(self, "jobs", jobs)
        by_id = index_jobs(self.cluster, jobs)
        _check_placement(self.cluster, by_id, self.placement)
        on_loan = self.cluster.on_loan_servers()
        object.__setattr__(self, "n_reclaim", read_int(self.n_reclaim, "n_reclaim", 0))
        if self.n_reclaim > len(on_loan):
            raise InvalidInstanceError(
                "n_reclaim",
                f"cannot reclaim {self.n_reclaim} servers: only {len(on_loan)} are on loan",
            )
        self._derive(by_id, tuple(s.id for s in on_loan))

    def _derive(self, by_id: dict[str, Job], server_ids: tuple[str, ...]) -> None:
        index = {sid: i for i, sid in enumerate(server_ids)}
        job_ids: list[str] = []
        job_servers: list[Incidence] = []
        for job_id in self.placement.jobs():
            rows = self.placement.servers_of(job_id)
            loan = tuple((index[sid], w) for sid, w in rows.items() if sid in index)
            if loan:
                job_ids.append(job_id)
                job_servers.append(loan)
        server_jobs: list[list[tuple[int, int]]] = [[] for _ in server_ids]
        for j, incidences in enumerate(job_servers):
            for s, w in incidences:
                server_jobs[s].append((j, w))
        jobs = [by_id[j] for j in job_ids]
        placed = [self.placement.workers_of(j) for j in job_ids]
        gpus = tuple(n * job.gpus_per_worker for n, job in zip(placed, jobs, strict=True))
        neighbours = tuple(
            frozenset(t for j, _ in inc for t, _ in job_servers[j]) - {s}
            for s, inc in enumerate(server_jobs)
        )
        values = {
            "jobs_by_id": by_id,
            "server_ids": server_ids,
            "job_ids": tuple(job_ids),
            "server_jobs": tuple(tuple(x) for x in server_jobs),
            "job_servers": tuple(job_servers),
            "slack": tuple(n - job.min_workers for n, job in zip(placed, jobs, strict=True)),
            "loan_workers": tuple(sum(w for _, w in inc) for inc in job_servers),
            "gpw": tuple(job.gpus_per_worker for job in jobs),
            "gpus": gpus,
            "big": sum(gpus) + 1,
            "neighbours": neighbours,
        }
        for name, value in values.items():
            object.__setattr__(self, name, value)

    @property
    def n_servers(self) -> int:
        """Number of on-loan servers (the candidates)."""
        return len(self.server_ids)

    def chosen_indices(self, chosen: Iterable[object], name: str = "chosen") -> list[int]:
        """``chosen`` checked as a returned set: N_R distinct server indices (numpy ints too).

        For the public functions that take server indices from a caller (a
        repeated or out-of-range index used to shrink the set or wrap around
        silently); errors name ``name[i]``. O(N_R).
        """
        out: list[int] = []
        seen: set[int] = set()
        for i, raw in enumerate(chosen):
            s = read_int(raw, f"{name}[{i}]", 0)
            if s >= self.n_servers:
                raise InvalidInstanceError(
                    f"{name}[{i}]", f"server index {s} is not in 0..{self.n_servers - 1}"
                )
            if s in seen:
                raise InvalidInstanceError(f"{name}[{i}]", f"server index {s} is repeated")
            seen.add(s)
            out.append(s)
        if len(out) != self.n_reclaim:
            raise InvalidInstanceError(
                name, f"must hold n_reclaim = {self.n_reclaim} servers, got {len(out)}"
            )
        return out

    @property
    def n_jobs(self) -> int:
        """Number of jobs with a worker on an on-loan server."""
        return len(self.job_ids)

    def can_preempt(self, j: int) -> bool:
        """Whether returning every on-loan server of job ``j`` preempts it."""
        return self.loan_workers[j] > self.slack[j]

    def job_cost(self, j: int, lost: int) -> int:
        """Contribution of job ``j`` to ``preempted * big + collateral`` after losing ``lost``."""
        if lost <= self.slack[j]:
            return 0
        return self.big + self.gpus[j] - self.gpw[j] * lost

    def lost_workers(self, chosen: Iterable[int]) -> list[int]:
        """Workers each job loses when the servers ``chosen`` (indices) return."""
        lost = [0] * self.n_jobs
        for s in chosen:
            for j, w in self.server_jobs[s]:
                lost[j] += w
        return lost

    def cost(self, chosen: Iterable[int]) -> int:
        """``preempted * big + collateral`` of returning ``chosen`` (indices)."""
        return sum(self.job_cost(j, lost) for j, lost in enumerate(self.lost_workers(chosen)))

    def decide(self, chosen: Sequence[int]) -> ReclaimDecision:
        """The decision of returning the servers ``chosen`` (indices, kept in that order)."""
        lost = self.lost_workers(chosen)
        slack = self.slack
        preempted = [j for j in range(self.n_jobs) if lost[j] > slack[j]]
        return ReclaimDecision(
            servers=tuple(self.server_ids[s] for s in chosen),
            preempted_jobs=tuple(self.job_ids[j] for j in preempted),
            scaled_in=tuple(
                (self.job_ids[j], lost[j]) for j in range(self.n_jobs) if 0 < lost[j] <= slack[j]
            ),
            collateral_gpus=sum(self.gpus[j] - self.gpw[j] * lost[j] for j in preempted),
        )


def solution_of(
    inp: ReclaimInput,
    chosen: Sequence[int],
    status: Status,
    start: float,
    *,
    bound: float | None = None,
    message: str = "",
) -> Solution[ReclaimDecision]:
    """The :class:`Solution` of returning ``chosen``; ``start`` is the call's ``perf_counter``.

    ``objective`` is the preempted-job count, ``key`` (preempted, collateral).
    """
    decision = inp.decide(chosen)
    count, collateral = decision.key
    return Solution(
        status=status,
        objective=float(count),
        decision=decision,
        bound=bound,
        seconds=time.perf_counter() - start,
        message=message,
        key=(float(count), float(collateral)),
    )
