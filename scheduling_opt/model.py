"""The shared model: heterogeneous GPU servers, training jobs and placements.

Every solver in the library reads these immutable values. They are validated
when constructed, so a solver can trust them: a violation raises
:class:`~scheduling_opt.errors.InvalidInstanceError` naming the field.

Papers: Aryl §3-§5 and Appendix E (training servers and inference servers on
loan to training; V100 = 1.0 and T4 = 0.25 relative compute), Gavel §3 and
Sia §3 (a throughput per job per GPU type: :mod:`scheduling_opt.throughput`), Chronus §3.3.1
(reward step functions for strict/soft SLOs and best effort), AntMan §3.2
(resource-guarantee vs opportunistic jobs, tenants), ONES §3 (batch sizes).

Solvers convert to numpy arrays inside their hot loops; these classes are the
readable interface, not the representation a DP iterates over.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Literal

from scheduling_opt.errors import InvalidInstanceError
from scheduling_opt.jsonpath import read_int, read_number

Pool = Literal["training", "inference"]
JobClass = Literal["guarantee", "opportunistic"]
POOLS: tuple[Pool, ...] = ("training", "inference")
JOB_CLASSES: tuple[JobClass, ...] = ("guarantee", "opportunistic")


def _check_name(value: object, name: str) -> None:
    if not isinstance(value, str) or not value:
        raise InvalidInstanceError(name, f"must be a non-empty string, got {value!r}")


def _check_int(obj: object, name: str, minimum: int) -> None:
    """The field ``name`` of ``obj`` by the file readers' rules, stored as a plain int.

    The readers' rules (and bounds), so a Job built in code holds nothing an
    instance file would be refused for; a numpy integer is accepted and
    converted.
    """
    object.__setattr__(obj, name, read_int(getattr(obj, name), name, minimum))


def _check_real(obj: object, name: str, *, positive: bool = False) -> None:
    """The field ``name``: a finite real >= 0 (> 0 when ``positive``), stored as a plain number."""
    value = getattr(obj, name)
    number = read_number(value, name)
    if positive and number <= 0:
        raise InvalidInstanceError(name, f"must be > 0, got {value!r}")
    if number < 0:
        raise InvalidInstanceError(name, f"must be >= 0, got {value!r}")
    object.__setattr__(obj, name, number)


def _unique(names: Iterable[str], what: str) -> None:
    seen: set[str] = set()
    for i, name in enumerate(names):
        if name in seen:
            raise InvalidInstanceError(f"[{i}].{what}", f"duplicate {what} {name!r}")
        seen.add(name)


@dataclass(frozen=True, slots=True)
class GpuType:
    """A kind of GPU: relative compute capacity (V100 = 1.0) and memory in GB."""

    name: str
    compute: float = 1.0
    memory_gb: float = 32.0

    def __post_init__(self) -> None:
        _check_name(self.name, "name")
        _check_real(self, "compute", positive=True)
        _check_real(self, "memory_gb", positive=True)


@dataclass(frozen=True, slots=True)
class Server:
    """A physical server with ``gpus`` GPUs of one type.

    ``pool`` is the cluster that owns it. An inference server with ``on_loan``
    is lent to training (Aryl §4): training may use it, and the inference
    cluster may reclaim it. A training server is never on loan.
    """

    id: str
    gpu_type: str
    gpus: int
    pool: Pool = "training"
    on_loan: bool = False

    def __post_init__(self) -> None:
        _check_name(self.id, "id")
        _check_name(self.gpu_type, "gpu_type")
        _check_int(self, "gpus", 1)
        if self.pool not in POOLS:
            raise InvalidInstanceError("pool", f"must be one of {list(POOLS)}, got {self.pool!r}")
        if not isinstance(self.on_loan, bool):
            raise InvalidInstanceError("on_loan", f"must be true or false, got {self.on_loan!r}")
        if self.on_loan and self.pool != "inference":
            raise InvalidInstanceError("on_loan", "only an inference server can be on loan")

    @property
    def usable_for_training(self) -> bool:
        """Training servers, and inference servers lent to training."""
        return self.pool == "training" or self.on_loan


@dataclass(frozen=True, slots=True)
class Cluster:
    """GPU types and servers; ids are unique and every server's type is known."""

    gpu_types: tuple[GpuType, ...]
    servers: tuple[Server, ...]
    _types: Mapping[str, GpuType] = field(init=False, repr=False, compare=False)
    _servers: Mapping[str, Server] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "gpu_types", tuple(self.gpu_types))
        object.__setattr__(self, "servers", tuple(self.servers))
        try:
            _unique((t.name for t in self.gpu_types), "name")
        except InvalidInstanceError as e:
            raise e.at("gpu_types") from None
        try:
            _unique((s.id for s in self.servers), "id")
        except InvalidInstanceError as e:
            raise e.at("servers") from None
        types = {t.name: t for t in self.gpu_types}
        for i, s in enumerate(self.servers):
            if s.gpu_type not in types:
                raise InvalidInstanceError(
                    f"servers[{i}].gpu_type",
                    f"unknown GPU type {s.gpu_type!r} (known: {sorted(types)})",
                )
        object.__setattr__(self, "_types", types)
        object.__setattr__(self, "_servers", {s.id: s for s in self.servers})

    def gpu_type(self, name: str) -> GpuType:
        """The GPU type called ``name`` (KeyError-free: raises InvalidInstanceError)."""
        try:
            return self._types[name]
        except KeyError:
            raise InvalidInstanceError("gpu_type", f"unknown GPU type {name!r}") from None

    def server(self, server_id: str) -> Server:
        """The server with this id; an unknown id raises InvalidInstanceError."""
        try:
            return self._servers[server_id]
        except KeyError:
            raise InvalidInstanceError("server", f"unknown server {server_id!r}") from None

    def has_server(self, server_id: str) -> bool:
        return server_id in self._servers

    def has_gpu_type(self, name: str) -> bool:
        return name in self._types

    @property
    def total_gpus(self) -> int:
        return sum(s.gpus for s in self.servers)

    def on_loan_servers(self) -> tuple[Server, ...]:
        """Inference servers currently lent to training, in file order."""
        return tuple(s for s in self.servers if s.on_loan)


@dataclass(frozen=True, slots=True)
class RewardStep:
    """One step of a Chronus reward function: finish by ``time`` to earn ``reward``.

    Times are seconds relative to the instance's "now" (Chronus §3.3.1).
    """

    time: float
    reward: float

    def __post_init__(self) -> None:
        _check_real(self, "time")
        _check_real(self, "reward")

    @classmethod
    def _trusted(cls, time: float, reward: float) -> RewardStep:
        """A step from finite floats >= 0 the caller already checked, skipping ``__post_init__``.

        For a simulator adapter that derives steps from a validated job at
        every scheduling event (Chronus' lease terms: one per guaranteed job
        and term); users build steps the public way. O(1).
        """
        out = object.__new__(cls)
        object.__setattr__(out, "time", time)
        object.__setattr__(out, "reward", reward)
        return out


@dataclass(frozen=True, slots=True)
class BatchInfo:
    """ONES batch-size data of a job (ONES §3, Table 1).

    ``epoch_size``: samples in one epoch; ``batch_limit``: the current limit
    R_j on the global batch size; ``max_local_batch``: the largest local batch
    that fits one GPU's memory; ``processed_samples``: progress so far.
    """

    epoch_size: int
    batch_limit: int
    max_local_batch: int
    processed_samples: int = 0

    def __post_init__(self) -> None:
        _check_int(self, "epoch_size", 1)
        _check_int(self, "batch_limit", 1)
        _check_int(self, "max_local_batch", 1)
        _check_int(self, "processed_samples", 0)


@dataclass(frozen=True, slots=True)
class Job:
    """A training job: workers of ``gpus_per_worker`` GPUs each.

    Inelastic when ``min_workers == max_workers``; elastic otherwise (Aryl
    §5.2: the base demand is ``min_workers``, the flexible demand the rest).
    The first four arguments may be given by position; naming them reads
    without this docstring (docs/api.md, "Jobs: name the arguments").

    Parameters
    ----------
    id : str
        The job's name (unique within an instance).
    min_workers, max_workers : int
        The worker range (>= 1, ``min_workers <= max_workers``).
    duration : float
        Running time in seconds at ``max_workers`` (linear scaling below).
    gpus_per_worker : int
        GPUs per worker (default 1).
    submit_time : float
        Seconds (default 0).
    gpu_type : str or None
        The one GPU type the job runs on (None: any type).
    deadlines : tuple of RewardStep
        A Chronus reward step function, strictly increasing in time (empty:
        no SLO).
    job_class, tenant : str or None
        AntMan's guarantee/opportunistic class and tenant.
    batch : BatchInfo or None
        ONES' batch-size data.

    Examples
    --------
    >>> job = Job(id="a", min_workers=2, max_workers=6, duration=3600.0)
    >>> job == Job("a", 2, 6, 3600.0), job.elastic, job.running_time(3)
    (True, True, 7200.0)
    """

    id: str
    min_workers: int
    max_workers: int
    duration: float
    gpus_per_worker: int = 1
    submit_time: float = 0.0
    gpu_type: str | None = None
    deadlines: tuple[RewardStep, ...] = ()
    job_class: JobClass | None = None
    tenant: str | None = None
    batch: BatchInfo | None = None

    def __post_init__(self) -> None:
        _check_name(self.id, "id")
        _check_int(self, "min_workers", 1)
        _check_int(self, "max_workers", 1)
        if self.max_workers < self.min_workers:
            raise InvalidInstanceError(
                "max_workers",
                f"must be >= min_workers ({self.min_workers}), got {self.max_workers}",
            )
        _check_real(self, "duration", positive=True)
        _check_int(self, "gpus_per_worker", 1)
        _check_real(self, "submit_time")
        if self.gpu_type is not None:
            _check_name(self.gpu_type, "gpu_type")
        object.__setattr__(self, "deadlines", tuple(self.deadlines))
        for i, step in enumerate(self.deadlines):
            if not isinstance(step, RewardStep):
                raise InvalidInstanceError(f"deadlines[{i}]", "must be a RewardStep")
            if i and step.time <= self.deadlines[i - 1].time:
                raise InvalidInstanceError(
                    f"deadlines[{i}].time",
                    f"deadline times must be strictly increasing, got {step.time!r} "
                    f"after {self.deadlines[i - 1].time!r}",
                )
        if self.job_class is not None and self.job_class not in JOB_CLASSES:
            raise InvalidInstanceError(
                "class", f"must be one of {list(JOB_CLASSES)}, got {self.job_class!r}"
            )
        if self.tenant is not None:
            _check_name(self.tenant, "tenant")
        if self.batch is not None and not isinstance(self.batch, BatchInfo):
            raise InvalidInstanceError("batch", "must be a BatchInfo")

    @classmethod
    def _trusted(
        cls, id: str, workers: int, duration: float, deadlines: tuple[RewardStep, ...]
    ) -> Job:
        """An inelastic one-GPU-per-worker job from checked values, skipping ``__post_init__``.

        The caller guarantees what the public constructor checks: a
        non-empty id, ``workers`` an int >= 1, ``duration`` a finite float
        > 0, ``deadlines`` a tuple of steps at strictly increasing times.
        For a simulator adapter that rebuilds a validated job with its
        remaining time at every scheduling event (Chronus: every guaranteed
        job at every lease term and admission check); users build jobs the
        public way. O(1).
        """
        out = object.__new__(cls)
        for name, value in (
            ("id", id),
            ("min_workers", workers),
            ("max_workers", workers),
            ("duration", duration),
            ("gpus_per_worker", 1),
            ("submit_time", 0.0),
            ("gpu_type", None),
            ("deadlines", deadlines),
            ("job_class", None),
            ("tenant", None),
            ("batch", None),
        ):
            object.__setattr__(out, name, value)
        return out

    @property
    def elastic(self) -> bool:
        return self.max_workers > self.min_workers

    @property
    def min_gpus(self) -> int:
        """GPUs of the base demand."""
        return self.min_workers * self.gpus_per_worker

    @property
    def max_gpus(self) -> int:
        return self.max_workers * self.gpus_per_worker

    @property
    def work(self) -> float:
        """Worker-seconds to finish under linear scaling: ``duration * max_workers``."""
        return self.duration * self.max_workers

    def running_time(self, workers: int) -> float:
        """Running time at a constant ``workers`` under linear scaling (Aryl §5)."""
        if not self.min_workers <= workers <= self.max_workers:
            raise InvalidInstanceError(
                "workers",
                f"job {self.id!r} runs with {self.min_workers}..{self.max_workers} "
                f"workers, got {workers}",
            )
        return self.work / workers

    def fits(self, server: Server) -> bool:
        """Whether the job's GPU-type constraint admits this server."""
        return self.gpu_type is None or self.gpu_type == server.gpu_type


@dataclass(frozen=True, slots=True)
class PlacementRow:
    """``workers`` of job ``job`` run on server ``server``."""

    job: str
    server: str
    workers: int

    def __post_init__(self) -> None:
        _check_name(self.job, "job")
        _check_name(self.server, "server")
        _check_int(self, "workers", 1)


@dataclass(frozen=True, slots=True)
class Placement:
    """Where jobs' workers run: rows with at most one row per (job, server)."""

    rows: tuple[PlacementRow, ...] = ()
    _by_job: Mapping[str, Mapping[str, int]] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "rows", tuple(self.rows))
        by_job: dict[str, dict[str, int]] = {}
        for i, row in enumerate(self.rows):
            servers = by_job.setdefault(row.job, {})
            if row.server in servers:
                raise InvalidInstanceError(
                    f"[{i}]",
                    f"duplicate row for job {row.job!r} on server {row.server!r}",
                )
            servers[row.server] = row.workers
        object.__setattr__(self, "_by_job", by_job)

    @classmethod
    def from_mapping(cls, mapping: Mapping[str, Mapping[str, int]]) -> Placement:
        """Build from ``{job: {server: workers}}``, dropping zero counts."""
        return cls(
            tuple(
                PlacementRow(job, server, n)
                for job, servers in mapping.items()
                for server, n in servers.items()
                if n
            )
        )

    @classmethod
    def _trusted(cls, mapping: Mapping[str, Mapping[str, int]]) -> Placement:
        """``from_mapping`` without the checks, for a mapping already in checked form.

        The caller guarantees what the rows' constructors would check: job
        and server names, worker counts that are ints > 0 (zero counts are
        still dropped). For a solver's scratch copy of a placement it built
        itself (EDL's next-plan check rebuilt and re-validated a row per
        (job, server) at every compaction it considered). O(rows).
        """
        rows = []
        by_job: dict[str, dict[str, int]] = {}
        new_row = object.__new__
        for job, servers in mapping.items():
            kept = {server: n for server, n in servers.items() if n}
            if kept:
                by_job[job] = kept
            for server, n in kept.items():
                row = new_row(PlacementRow)
                object.__setattr__(row, "job", job)
                object.__setattr__(row, "server", server)
                object.__setattr__(row, "workers", n)
                rows.append(row)
        out = new_row(cls)
        object.__setattr__(out, "rows", tuple(rows))
        object.__setattr__(out, "_by_job", by_job)
        return out

    def servers_of(self, job_id: str) -> Mapping[str, int]:
        """``{server: workers}`` of one job (empty if the job is not placed)."""
        return self._by_job.get(job_id, {})

    def workers_of(self, job_id: str) -> int:
        return sum(self._by_job.get(job_id, {}).values())

    def jobs(self) -> tuple[str, ...]:
        """Placed job ids, in order of first appearance."""
        return tuple(self._by_job)

    def as_mapping(self) -> dict[str, dict[str, int]]:
        return {job: dict(servers) for job, servers in self._by_job.items()}


def used_gpus(placement: Placement, jobs: Mapping[str, Job]) -> dict[str, int]:
    """GPUs in use per server id under ``placement`` (servers with none omitted)."""
    used: dict[str, int] = {}
    for row in placement.rows:
        used[row.server] = used.get(row.server, 0) + row.workers * jobs[row.job].gpus_per_worker
    return used


def index_jobs(cluster: Cluster, jobs: tuple[Job, ...]) -> dict[str, Job]:
    """Jobs by id, with the instance file's rules for jobs built in code.

    Each entry must be a :class:`Job`, ids must be unique and a job's GPU type
    (if any) must be one of the cluster's; errors name ``jobs[i]``. Shared by
    the problem inputs that take a cluster and jobs (placement, reclaim).
    """
    by_id: dict[str, Job] = {}
    for i, job in enumerate(jobs):
        if not isinstance(job, Job):
            raise InvalidInstanceError(f"jobs[{i}]", f"must be a Job, got {type(job).__name__}")
        if job.id in by_id:
            raise InvalidInstanceError(f"jobs[{i}].id", f"duplicate job id {job.id!r}")
        if job.gpu_type is not None and not cluster.has_gpu_type(job.gpu_type):
            raise InvalidInstanceError(f"jobs[{i}].gpu_type", f"unknown GPU type {job.gpu_type!r}")
        by_id[job.id] = job
    return by_id
