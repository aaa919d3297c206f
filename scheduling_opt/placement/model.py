"""The placement input and decision, built from the shared model objects.

Worker placement chooses servers for every worker of each job to place (or
leaves the job unplaced) within the GPUs the current placement leaves free,
the jobs' GPU types and the servers training may use; every method reports
the total allocation reward RW (Chronus §3.4.2, Eq. 7): a job of G GPUs on
k servers earns ``RW(k) = G * speed(k) / speed(k*)``, k* its consolidated
span (the fewest servers that can hold it: ``ceil(n / max workers per
server)``, ``ceil(G / 8)`` on 8-GPU nodes), and an unplaced job earns 0.

:class:`PlacementInput` is validated at construction with the instance
reader's rules and flattened once into per-server and per-job tuples that
the algorithms index (their loops touch one element at a time, where tuples
beat numpy arrays). A job's reward table stops at its widest possible span
(one worker per eligible server), so a job of 10^9 workers costs no more
than one of 10. Building the input is O(J S) for J jobs and S servers.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from scheduling_opt.errors import InvalidInstanceError
from scheduling_opt.jsonpath import read_int
from scheduling_opt.model import (
    Cluster,
    Job,
    Placement,
    PlacementRow,
    Server,
    index_jobs,
    used_gpus,
)
from scheduling_opt.placement._validate import (
    check_models,
    check_placement_rows,
    check_workers,
)
from scheduling_opt.placement.reward import reward_table, span_of
from scheduling_opt.scaling import Log2Model, SpeedModel

#: Chronus §5.3: the joint search space of the exhaustively searched jobs.
DEFAULT_SEARCH_SPACE = 100_000

#: Prefix of the stand-in jobs :meth:`PlacementInput.with_free` places on busy servers.
IN_USE = "~in-use:"

Assignment = tuple[tuple[int, int], ...]
"""One job's placement: ``((server index, workers), ...)``, servers ascending."""


@dataclass(frozen=True, slots=True, eq=False)
class PlacementInput:
    """Jobs to place on a cluster with a current placement: the typed input.

    Built from model objects only; validated like an instance file (errors
    name the field: ``jobs[2].gpu_type``, ``placement[0].workers``,
    ``workers.a``, ``models.a``, ``search_space``). Jobs with rows in
    ``placement`` are running; the others are to place.

    Parameters
    ----------
    cluster : Cluster
        Servers and GPU types.
    jobs : sequence of Job
        Every job: the running ones (with placement rows) and those to place.
    placement : Placement, optional
        The current placement (its GPUs are not free).
    workers : mapping of str to int, optional
        Workers of an elastic job to place (``min..max_workers``; default
        ``max_workers``).
    models : mapping of str to str, optional
        Each job's model name in ``speed`` (default: ``speed``'s default).
    speed : SpeedModel, optional
        Placement sensitivity (default log2 with t1 = 1, t2 = 1.5).
    search_space : int, optional
        Local search's |S| (default 100,000, Chronus §5.3).

    Attributes
    ----------
    server_ids, cap, free, loan, busy, server_type : tuple
        Per training-usable server (index ``s``, file order): id, GPUs, GPUs
        the current placement leaves free, an inference server on loan,
        already running workers, index of its GPU type (``n_types`` types).
    job_ids, job_workers, gpw, base, elastic, job_type, job_models : tuple
        Per job to place (index ``j``, file order): id, workers to place,
        GPUs per worker, base demand (``min_workers``; all workers for an
        inelastic job), elastic, GPU type index (-1: any), model name.
    eligible : tuple of tuple of int
        The servers of each job's GPU type.
    k_star : tuple of int
        Consolidated span (``job_workers + 1`` if no server holds a worker).
    rw : tuple of tuple of float
        ``rw[j][k]``: Eq. (7) reward on k servers, ``k`` = 0..``max_span(j)``.

    Examples
    --------
    >>> from scheduling_opt.model import Cluster, GpuType, Job, Server
    >>> cluster = Cluster((GpuType("V100"),), (Server("n0", "V100", 8), Server("n1", "V100", 8)))
    >>> inp = PlacementInput(cluster, [Job("a", 12, 12, 60.0)])
    >>> inp.free, inp.k_star, inp.rw[0][2]
    ((8, 8), (2,), 12.0)

    References
    ----------
    Chronus §3.4.2 (Eq. 7), §5.3 (|S|); Aryl §5.3 (pools, elastic jobs).
    """

    cluster: Cluster
    jobs: Sequence[Job]
    placement: Placement = field(default_factory=Placement)
    workers: Mapping[str, int] = field(default_factory=dict)
    models: Mapping[str, str] = field(default_factory=dict)
    speed: SpeedModel = field(default_factory=Log2Model)
    search_space: int = DEFAULT_SEARCH_SPACE
    server_ids: tuple[str, ...] = field(init=False)
    cap: tuple[int, ...] = field(init=False)
    free: tuple[int, ...] = field(init=False)
    loan: tuple[bool, ...] = field(init=False)
    busy: tuple[bool, ...] = field(init=False)
    server_type: tuple[int, ...] = field(init=False)
    n_types: int = field(init=False)
    job_ids: tuple[str, ...] = field(init=False)
    job_workers: tuple[int, ...] = field(init=False)
    gpw: tuple[int, ...] = field(init=False)
    base: tuple[int, ...] = field(init=False)
    elastic: tuple[bool, ...] = field(init=False)
    job_type: tuple[int, ...] = field(init=False)
    job_models: tuple[str | None, ...] = field(init=False)
    eligible: tuple[tuple[int, ...], ...] = field(init=False)
    k_star: tuple[int, ...] = field(init=False)
    rw: tuple[tuple[float, ...], ...] = field(init=False)

    def __post_init__(self) -> None:
        if not isinstance(self.cluster, Cluster):
            raise InvalidInstanceError("cluster", f"must be a Cluster, got {self.cluster!r}")
        if not isinstance(self.placement, Placement):
            raise InvalidInstanceError("placement", f"must be a Placement, got {self.placement!r}")
        if not callable(getattr(self.speed, "speed", None)) or not callable(
            getattr(self.speed, "knows", None)
        ):
            raise InvalidInstanceError("speed", f"must be a SpeedModel, got {self.speed!r}")
        jobs = tuple(self.jobs)
        by_id = index_jobs(self.cluster, jobs)
        check_placement_rows(self.cluster, by_id, self.placement)
        placed = set(self.placement.jobs())
        model_of = check_models(self.models, by_id, self.speed)
        count_of = check_workers(self.workers, by_id, placed)
        search_space = read_int(self.search_space, "search_space", 1)
        set_ = object.__setattr__
        set_(self, "jobs", jobs)
        set_(self, "search_space", search_space)
        set_(self, "workers", MappingProxyType(count_of))
        set_(self, "models", MappingProxyType(model_of))
        self._flatten([j for j in jobs if j.id not in placed], by_id, count_of, model_of)

    @classmethod
    def with_free(
        cls,
        cluster: Cluster,
        jobs: Sequence[Job],
        free: Mapping[str, int],
        *,
        models: Mapping[str, str] | None = None,
        speed: SpeedModel | None = None,
        search_space: int = DEFAULT_SEARCH_SPACE,
    ) -> PlacementInput:
        """Jobs to place on servers of which only ``free[server]`` GPUs are free.

        A scheduler that is not ours knows how many GPUs of each server its
        other jobs use, not their placement rows: each server's used GPUs
        become one stand-in job placed there (``IN_USE`` + server id), so
        that the server keeps its true size (and the jobs their consolidated
        span ``k*``). Servers missing from ``free`` are entirely free.
        O(S) stand-ins, then the constructor.

        Parameters
        ----------
        cluster : Cluster
            Servers and GPU types.
        jobs : sequence of Job
            The jobs to place.
        free : mapping of str to int
            Free GPUs per server id (0..the server's GPUs).
        models, speed, search_space
            As the constructor's.

        Returns
        -------
        PlacementInput

        Raises
        ------
        InvalidInstanceError
            ``free.<id>`` for an unknown server or a count out of range,
            ``jobs[i].id`` for a job id that starts with ``IN_USE``; then
            the constructor's errors.

        Examples
        --------
        >>> from scheduling_opt.model import Cluster, GpuType, Job, Server
        >>> cluster = Cluster((GpuType("V100"),), (Server("n0", "V100", 8), Server("n1", "V100", 8)))
        >>> inp = PlacementInput.with_free(cluster, [Job("a", 6, 6, 60.0)], {"n0": 3})
        >>> inp.free, inp.cap, inp.job_ids, inp.k_star
        ((3, 8), (8, 8), ('a',), (1,))

        References
        ----------
        Chronus §3.4.2 (Eq. 7: ``k*`` from the servers' sizes).
        """
        sizes = {s.id: s.gpus for s in cluster.servers}
        for i, job in enumerate(jobs):
            if isinstance(job, Job) and job.id.startswith(IN_USE):
                raise InvalidInstanceError(
                    f"jobs[{i}].id", f"must not start with {IN_USE!r} (the stand-ins' prefix)"
                )
        stand_ins: list[Job] = []
        rows: list[PlacementRow] = []
        for server, count in free.items():
            if server not in sizes:
                raise InvalidInstanceError(f"free.{server}", "is not a server of the cluster")
            n = read_int(count, f"free.{server}", 0)
            if n > sizes[server]:
                raise InvalidInstanceError(
                    f"free.{server}", f"must be at most the server's {sizes[server]} GPUs, got {n}"
                )
            used = sizes[server] - n
            if used:
                name = f"{IN_USE}{server}"
                stand_ins.append(Job(name, used, used, 1.0))
                rows.append(PlacementRow(name, server, used))
        return cls(
            cluster,
            (*stand_ins, *jobs),
            Placement(tuple(rows)),
            models=dict(models or {}),
            speed=speed if speed is not None else Log2Model(),
            search_space=search_space,
        )

    @classmethod
    def _trusted(
        cls,
        cluster: Cluster,
        jobs: tuple[Job, ...],
        placement: Placement,
        models: dict[str, str],
        speed: SpeedModel,
        search_space: int,
    ) -> PlacementInput:
        """An input from values the caller already checked, skipping the input checks.

        The caller guarantees what ``__post_init__`` checks: jobs with
        unique ids and no GPU type, a placement of those jobs within the
        servers (every job placed whole), models known to ``speed``, no
        ``workers``, an int ``search_space`` >= 1. Equal, field for field,
        to the public constructor's input. For the simulator's Chronus
        placement, which builds such an input at every scheduling event
        (about 10,000 per full trace); users build inputs the public way.
        O(the flattening).
        """
        out = object.__new__(cls)
        set_ = object.__setattr__
        for name, value in (
            ("cluster", cluster),
            ("jobs", jobs),
            ("placement", placement),
            ("workers", MappingProxyType({})),
            ("models", MappingProxyType(models)),
            ("speed", speed),
            ("search_space", search_space),
        ):
            set_(out, name, value)
        by_id = {job.id: job for job in jobs}
        placed = set(placement.jobs())
        out._flatten([j for j in jobs if j.id not in placed], by_id, {}, models)
        return out

    def _flatten(
        self,
        todo: list[Job],
        by_id: Mapping[str, Job],
        count_of: Mapping[str, int],
        model_of: Mapping[str, str],
    ) -> None:
        servers: list[Server] = [s for s in self.cluster.servers if s.usable_for_training]
        used = used_gpus(self.placement, by_id)
        free = [s.gpus - used.get(s.id, 0) for s in servers]
        type_index = {t.name: i for i, t in enumerate(self.cluster.gpu_types)}
        server_type = tuple(type_index[s.gpu_type] for s in servers)
        every = tuple(range(len(servers)))
        by_type = {t: tuple(s for s in every if server_type[s] == t) for t in type_index.values()}
        eligible, job_type, n_workers, k_star, rw = [], [], [], [], []
        # Per GPU type, its servers and capacities; per (type, workers, GPUs per
        # worker, model) the span and reward table: jobs repeat these (the
        # simulator's Chronus placement builds an input at every event).
        of_type: dict[int, tuple[list[Server], list[int]]] = {}
        tables: dict[tuple[int, int, int, str | None], tuple[int, tuple[float, ...]]] = {}
        for job in todo:
            t = -1 if job.gpu_type is None else type_index[job.gpu_type]
            elig = every if t < 0 else by_type[t]
            n = count_of.get(job.id, job.max_workers)
            mine = of_type.get(t)
            if mine is None:
                mine = of_type[t] = ([servers[s] for s in elig], [servers[s].gpus for s in elig])
            _check_fits(job, n, mine[0], self.jobs)
            model = model_of.get(job.id)
            key = (t, n, job.gpus_per_worker, model)
            got = tables.get(key)
            if got is None:
                k = span_of(n, job.gpus_per_worker, mine[1])
                last = min(n, len(elig))
                table = reward_table(self.speed, model, n, job.gpus_per_worker, k, last)
                got = tables[key] = (k, table)
            eligible.append(elig)
            job_type.append(t)
            n_workers.append(n)
            k_star.append(got[0])
            rw.append(got[1])
        values: dict[str, Any] = {
            "server_ids": tuple(s.id for s in servers),
            "cap": tuple(s.gpus for s in servers),
            "free": tuple(free),
            "loan": tuple(s.on_loan for s in servers),
            "busy": tuple(f < s.gpus for f, s in zip(free, servers, strict=True)),
            "server_type": server_type,
            "n_types": len(type_index),
            "job_ids": tuple(job.id for job in todo),
            "job_workers": tuple(n_workers),
            "gpw": tuple(job.gpus_per_worker for job in todo),
            "base": tuple(
                job.min_workers if job.elastic else n
                for job, n in zip(todo, n_workers, strict=True)
            ),
            "elastic": tuple(job.elastic for job in todo),
            "job_type": tuple(job_type),
            "job_models": tuple(model_of.get(job.id) for job in todo),
            "eligible": tuple(eligible),
            "k_star": tuple(k_star),
            "rw": tuple(rw),
        }
        for name, value in values.items():
            object.__setattr__(self, name, value)

    @property
    def n_servers(self) -> int:
        """Training-usable servers."""
        return len(self.server_ids)

    @property
    def n_jobs(self) -> int:
        """Jobs to place."""
        return len(self.job_ids)

    def job_index(self, j: object, name: str = "j") -> int:
        """``j`` checked as an index of a job to place (numpy ints too; no wrap-around)."""
        k = read_int(j, name, 0)
        if k >= self.n_jobs:
            raise InvalidInstanceError(name, f"job index {k} is not in 0..{self.n_jobs - 1}")
        return k

    def gpus(self, j: int) -> int:
        """GPUs of job ``j``: workers times GPUs per worker."""
        return self.job_workers[j] * self.gpw[j]

    def max_span(self, j: int) -> int:
        """The most servers job ``j`` can span: one worker each."""
        return min(self.job_workers[j], len(self.eligible[j]))

    def best_rw(self, j: int) -> float:
        """The largest reward job ``j`` can earn on any span."""
        return max(self.rw[j])

    def spans(self, j: int) -> range:
        """The placement solutions A_j of job ``j``: its possible spans."""
        return range(self.k_star[j], self.max_span(j) + 1)


def _check_fits(job: Job, n: int, servers: Sequence[Server], jobs: Sequence[Job]) -> None:
    """Refuse a job whose ``n`` workers cannot fit even on its empty servers.

    The library's one rule for a job bigger than the cluster
    (docs/architecture.md): such a job is a malformed instance, refused
    naming the job and the numbers, never silently left unplaced. A worker
    needs all its GPUs on one server, so the servers of the job's GPU type
    that training may use hold at most ``sum(cap // gpus_per_worker)`` of
    its workers. O(servers).
    """
    gpw = job.gpus_per_worker
    slots = sum(s.gpus // gpw for s in servers)
    if n <= slots:
        return
    i = next(k for k, other in enumerate(jobs) if other.id == job.id)
    kind = "" if job.gpu_type is None else f" of type {job.gpu_type!r}"
    raise InvalidInstanceError(
        f"jobs[{i}]",
        f"job {job.id!r} needs {n * gpw} GPUs ({n} workers of {gpw}), more than the "
        f"{slots * gpw} its {len(servers)} training servers{kind} can ever hold",
    )


@dataclass(frozen=True, slots=True)
class PlacementDecision:
    """Where each placed job's workers go, the unplaced jobs and the total RW.

    Attributes
    ----------
    rows : tuple of (str, str, int)
        ``(job, server, workers)``, jobs in input order, servers in index order.
    unplaced : tuple of str
        Jobs to place that got no GPUs, in input order.
    reward : float
        Total allocation reward (Eq. 7 summed over the placed jobs).
    nodes_spanned : int
        Servers summed over the placed jobs.
    """

    rows: tuple[tuple[str, str, int], ...]
    unplaced: tuple[str, ...]
    reward: float
    nodes_spanned: int

    def servers_of(self, job_id: str) -> dict[str, int]:
        """``{server: workers}`` of one placed job (empty if unplaced)."""
        return {s: w for j, s, w in self.rows if j == job_id}


def total_rw(inp: PlacementInput, assign: Sequence[Assignment | None]) -> float:
    """Chronus Eq. (7): the sum of the placed jobs' rewards RW(span), O(J).

    Parameters
    ----------
    inp : PlacementInput
        The input whose reward tables are read.
    assign : sequence of (Assignment or None)
        Per job its ``(server index, workers)`` pairs (None or empty: unplaced).

    Returns
    -------
    float
        ``sum RW_j(span_j)`` over the placed jobs (exactly rounded).

    Examples
    --------
    >>> from scheduling_opt.model import Cluster, GpuType, Job, Server
    >>> cluster = Cluster((GpuType("V100"),), (Server("n0", "V100", 8), Server("n1", "V100", 8)))
    >>> inp = PlacementInput(cluster, [Job("a", 8, 8, 60.0), Job("b", 4, 4, 60.0)])
    >>> total_rw(inp, [((0, 4), (1, 4)), None])  # 8 GPUs on 2 nodes: 8 / 1.5
    5.333333333333333

    References
    ----------
    Chronus §3.4.2, Eq. (7).
    """
    check_assign(inp, assign)
    return _reward(inp, assign)


def _reward(inp: PlacementInput, assign: Sequence[Assignment | None]) -> float:
    return math.fsum(inp.rw[j][len(a)] for j, a in enumerate(assign) if a)


def check_assign(inp: PlacementInput, assign: Sequence[Assignment | None]) -> None:
    """The shape of a per-job assignment list from a caller, O(rows).

    One entry per job to place, each None (unplaced) or ``(server index,
    workers)`` pairs with distinct in-range servers, at least one worker each
    and at most the job's widest span (a short list used to leave jobs out
    silently, an index past the end raised IndexError).
    What the shape allows but the problem forbids (an over-full server, the
    wrong worker count, a server of the wrong type) is the checker's to refuse.
    """
    if len(assign) != inp.n_jobs:
        raise InvalidInstanceError(
            "assign", f"must have one entry per job to place ({inp.n_jobs}), got {len(assign)}"
        )
    for j, a in enumerate(assign):
        if not a:
            continue
        seen: set[int] = set()
        for i, pair in enumerate(a):
            where = f"assign[{j}][{i}]"
            if not isinstance(pair, (tuple, list)) or len(pair) != 2:
                raise InvalidInstanceError(where, f"must be a (server, workers) pair, got {pair!r}")
            server = read_int(pair[0], where, 0)
            read_int(pair[1], where, 1)
            if server >= inp.n_servers or server in seen:
                raise InvalidInstanceError(
                    where, f"server index {server} is repeated or not in 0..{inp.n_servers - 1}"
                )
            seen.add(server)
        if len(a) >= len(inp.rw[j]):
            raise InvalidInstanceError(
                f"assign[{j}]",
                f"job {inp.job_ids[j]!r} spans {len(a)} servers, more than its "
                f"{len(inp.rw[j]) - 1} workers or eligible servers allow",
            )


def decide(inp: PlacementInput, assign: Sequence[Assignment | None]) -> PlacementDecision:
    """The decision of placing job ``j`` as ``assign[j]`` (None or empty: unplaced).

    Parameters
    ----------
    inp : PlacementInput
        The input (server and job ids, reward tables).
    assign : sequence of (Assignment or None)
        Per job its ``(server index, workers)`` pairs.

    Returns
    -------
    PlacementDecision
        Rows by job then server index, the unplaced jobs, the total reward
        and the servers spanned.

    Examples
    --------
    >>> from scheduling_opt.model import Cluster, GpuType, Job, Server
    >>> cluster = Cluster((GpuType("V100"),), (Server("n0", "V100", 8), Server("n1", "V100", 8)))
    >>> inp = PlacementInput(cluster, [Job("a", 8, 8, 60.0), Job("b", 4, 4, 60.0)])
    >>> decide(inp, [None, ((1, 4),)])
    PlacementDecision(rows=(('b', 'n1', 4),), unplaced=('a',), reward=4.0, nodes_spanned=1)

    References
    ----------
    Chronus §3.4.2, Eq. (7).
    """
    check_assign(inp, assign)
    rows = tuple(
        (inp.job_ids[j], inp.server_ids[s], w)
        for j, a in enumerate(assign)
        if a
        for s, w in sorted(a)
    )
    unplaced = tuple(inp.job_ids[j] for j, a in enumerate(assign) if not a)
    spanned = sum(len(a) for a in assign if a)
    return PlacementDecision(rows, unplaced, _reward(inp, assign), spanned)
