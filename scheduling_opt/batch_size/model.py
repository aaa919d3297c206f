"""The ``batch-size`` problem's typed input and typed decision (ONES §3, Eq. 2-4).

Assign each GPU of a homogeneous cluster to at most one job and give each
running job a global batch B_j <= R_j split into local batches; minimize the
predicted GPU-time still needed with penalties for waiting jobs and idle GPUs
(the objective is in :mod:`~scheduling_opt.batch_size.evaluate`). ONES, Bian
et al., SC 2021, §3.2.

:class:`BatchSizeInput` is built from the shared model (a
:class:`~scheduling_opt.model.Cluster`, :class:`~scheduling_opt.model.Job`
values with a :class:`~scheduling_opt.model.BatchInfo`, and a
:class:`JobState` per job), validated with the file reader's rules, and
converted to read-only numpy tables once: O(sum_j cap_j * min(m_j, R_j))
throughput-model evaluations. Sizes are bounded before anything is allocated
(:data:`MAX_GPUS`, :data:`MAX_TABLE_CELLS`): a file cannot exhaust memory.
:class:`Schedule` is the decision: per GPU its job and local batch.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numpy.typing import NDArray

from scheduling_opt.batch_size.progress import alpha_of, mean_remaining_work
from scheduling_opt.batch_size.throughput import AnalyticThroughput, ThroughputModel, cost_tables
from scheduling_opt.errors import InstanceTooLargeError, InvalidInstanceError
from scheduling_opt.jsonpath import read_int, read_number
from scheduling_opt.model import Cluster, Job

IntArray = NDArray[np.int64]
FloatArray = NDArray[np.float64]

#: The throughput model of jobs whose state gives none (seconds; see AnalyticThroughput).
DEFAULT_MODEL = AnalyticThroughput(overhead=0.05, per_sample=0.002, comm=0.03, cross_node=0.1)
#: Largest population / generations an input accepts (far above any useful search).
MAX_POPULATION = 10_000
MAX_GENERATIONS = 1_000_000
#: Largest cluster (GPUs usable for training): every algorithm keeps one gene per GPU.
MAX_GPUS = 4096
#: Largest throughput table (sum over jobs of GPU counts x local batches tried,
#: and jobs x GPU counts): bounds the memory and time of building the input.
MAX_TABLE_CELLS = 10_000_000
#: Utilization terms above this are refused: sums of them must stay comparable.
MAX_COST = 1e150


@dataclass(frozen=True, slots=True)
class OnesConfig:
    """Search settings: population K, generations, mutation rate theta.

    ``sample_progress``: score selections with rho sampled per generation
    (Algorithm 1, the paper) instead of the mean progress. ``greedy_start``:
    one member of G_0 is the greedy fill instead of a random schedule.
    Bounds: 2 <= population <= :data:`MAX_POPULATION`, 0 <= generations <=
    :data:`MAX_GENERATIONS`, 0 <= mutation_rate <= 1.
    """

    population: int = 32
    generations: int = 100
    mutation_rate: float = 0.02
    sample_progress: bool = True
    greedy_start: bool = True

    def __post_init__(self) -> None:
        object.__setattr__(self, "population", read_int(self.population, "population", 2))
        object.__setattr__(self, "generations", read_int(self.generations, "generations", 0))
        if self.population > MAX_POPULATION:
            raise InvalidInstanceError(
                "population", f"must be <= {MAX_POPULATION}, got {self.population}"
            )
        if self.generations > MAX_GENERATIONS:
            raise InvalidInstanceError(
                "generations", f"must be <= {MAX_GENERATIONS}, got {self.generations}"
            )
        rate = read_number(self.mutation_rate, "mutation_rate", 0.0)
        if rate > 1:
            raise InvalidInstanceError("mutation_rate", f"must be <= 1, got {rate!r}")
        object.__setattr__(self, "mutation_rate", rate)
        for name in ("sample_progress", "greedy_start"):
            if not isinstance(getattr(self, name), bool):
                raise InvalidInstanceError(name, "must be true or false")


@dataclass(frozen=True, slots=True)
class JobState:
    """What ONES knows of a job beyond its :class:`~scheduling_opt.model.Job`.

    ``beta``: predicted epochs to go (>= 1 after clipping; from
    :meth:`~scheduling_opt.batch_size.progress.ProgressModel.beta` when the
    job has features); ``throughput``: its model (None: the input's
    default); ``processed_time``: seconds run so far (refresh takes GPUs
    from the longest-running jobs first); ``warmup``: at most one GPU
    (§3.3.2, Start).
    """

    beta: float
    throughput: ThroughputModel | None = None
    processed_time: float = 0.0
    warmup: bool = False

    def __post_init__(self) -> None:
        object.__setattr__(self, "beta", read_number(self.beta, "beta"))
        object.__setattr__(
            self, "processed_time", read_number(self.processed_time, "processed_time", 0.0)
        )
        if not isinstance(self.warmup, bool):
            raise InvalidInstanceError("warmup", "must be true or false")
        if self.throughput is not None and not callable(
            getattr(self.throughput, "throughput", None)
        ):
            raise InvalidInstanceError("throughput", "must have a throughput(...) method")


def _frozen(a: NDArray[Any]) -> NDArray[Any]:
    a.setflags(write=False)
    return a


@dataclass(frozen=True, slots=True, eq=False)
class BatchSizeInput:
    """One scheduling round of ONES: the cluster, the jobs and their states.

    Parameters
    ----------
    cluster : Cluster
        Servers usable for training (training servers, inference servers on
        loan) form the cluster; one GPU compute capacity (homogeneous).
    jobs : sequence of Job
        Each with a ``batch`` (:class:`~scheduling_opt.model.BatchInfo`) and
        ``min_workers = gpus_per_worker = 1`` (1..max_workers single-GPU workers).
    states : mapping of str to JobState
        One per job id.
    throughput : ThroughputModel
        The model of jobs whose state gives none.
    wait_penalty, idle_penalty : float or None
        Per waiting job and per idle GPU; None: 4 U and 2 U, U the largest
        utilization term any job can reach (then an optimum admits as many
        jobs as fit and leaves a GPU idle only when every job is at its cap).
    config : OnesConfig
        The ``ones`` search settings.

    Attributes
    ----------
    wait, idle : float
        The penalties in force. ``cost[j, c, s]``: GPU-seconds per remaining
        sample c / X_j at the best batch ``batch[j, c, s]`` for c GPUs
        (``s`` = 1: spanning servers), inf beyond ``max_gpus[j]``. ``work``:
        Y_j at the mean progress. Jobs indexed 0..J-1 in ``jobs`` order,
        GPUs 0..G-1 server by server. Every array is read-only.

    Raises
    ------
    InvalidInstanceError
        A value the instance reader would refuse, naming the field
        (``jobs[1].batch``, ``states.a.beta``, ``cluster.gpu_types``).
    InstanceTooLargeError
        More than :data:`MAX_GPUS` GPUs or a table over :data:`MAX_TABLE_CELLS`.

    Examples
    --------
    >>> from scheduling_opt.model import BatchInfo, Cluster, GpuType, Job, Server
    >>> cluster = Cluster((GpuType("V100"),), (Server("s0", "V100", 4),))
    >>> jobs = [Job("a", 1, 4, 3600.0, batch=BatchInfo(1000, 128, 64)),
    ...         Job("b", 1, 2, 3600.0, batch=BatchInfo(5000, 64, 32))]
    >>> inp = BatchSizeInput(cluster, jobs, {"a": JobState(beta=5.0), "b": JobState(beta=2.0)})
    >>> inp.n_gpus, inp.n_jobs, inp.max_gpus.tolist(), inp.work.tolist()
    (4, 2, [4, 2], [5000.0, 10000.0])

    References
    ----------
    ONES (Bian et al., SC 2021), §3.1-§3.2 (Eq. 2-8), §3.3.2 (warm-up).
    """

    cluster: Cluster
    jobs: Sequence[Job]
    states: Mapping[str, JobState]
    throughput: ThroughputModel = DEFAULT_MODEL
    wait_penalty: float | None = None
    idle_penalty: float | None = None
    config: OnesConfig = field(default_factory=OnesConfig)
    job_ids: tuple[str, ...] = field(init=False)
    gpu_ids: tuple[str, ...] = field(init=False)
    node_of: IntArray = field(init=False, repr=False)
    node_sizes: IntArray = field(init=False, repr=False)
    epoch_size: IntArray = field(init=False, repr=False)
    limit: IntArray = field(init=False, repr=False)
    max_local: IntArray = field(init=False, repr=False)
    max_workers: IntArray = field(init=False, repr=False)
    processed: IntArray = field(init=False, repr=False)
    processed_time: FloatArray = field(init=False, repr=False)
    submit_time: FloatArray = field(init=False, repr=False)
    max_gpus: IntArray = field(init=False, repr=False)
    alpha: FloatArray = field(init=False, repr=False)
    beta: FloatArray = field(init=False, repr=False)
    work: FloatArray = field(init=False, repr=False)
    models: tuple[ThroughputModel, ...] = field(init=False, repr=False)
    batch: IntArray = field(init=False, repr=False)
    cost: FloatArray = field(init=False, repr=False)
    wait: float = field(init=False)
    idle: float = field(init=False)
    util_max: float = field(init=False)

    def __post_init__(self) -> None:
        set_ = object.__setattr__
        if not isinstance(self.cluster, Cluster):
            raise InvalidInstanceError("cluster", "must be a Cluster")
        jobs = tuple(self.jobs)
        set_(self, "jobs", jobs)
        if not isinstance(self.config, OnesConfig):
            raise InvalidInstanceError("config", "must be a OnesConfig")
        servers = [s for s in self.cluster.servers if s.usable_for_training]
        if not servers:
            raise InvalidInstanceError("cluster.servers", "no server usable for training")
        if len({self.cluster.gpu_type(s.gpu_type).compute for s in servers}) > 1:
            raise InvalidInstanceError(
                "cluster.gpu_types",
                "batch-size needs one GPU compute capacity (homogeneous cluster)",
            )
        g = sum(s.gpus for s in servers)
        if g > MAX_GPUS:
            # Checked before anything per GPU exists: a 10^9-GPU server is refused in O(1).
            raise InstanceTooLargeError(
                "cluster.servers",
                f"{g} GPUs usable for training; batch-size handles at most {MAX_GPUS}",
            )
        warm = self._read_jobs(jobs)
        set_(self, "job_ids", tuple(j.id for j in jobs))
        set_(self, "gpu_ids", tuple(f"{s.id}/{k}" for s in servers for k in range(s.gpus)))
        sizes = np.array([s.gpus for s in servers], np.int64)
        set_(self, "node_sizes", _frozen(sizes))
        set_(self, "node_of", _frozen(np.repeat(np.arange(len(sizes)), sizes).astype(np.int64)))
        self._tables(g, warm)

    def _read_jobs(self, jobs: tuple[Job, ...]) -> NDArray[np.bool_]:
        set_ = object.__setattr__
        states = self.states
        if not isinstance(states, Mapping):
            raise InvalidInstanceError("states", "must map job ids to JobState")
        ids = {j.id for j in jobs}
        for key in states:
            if key not in ids:
                raise InvalidInstanceError(f"states.{key}", f"unknown job {key!r}")
        rows: list[tuple[int, int, int, int, int]] = []
        models: list[ThroughputModel] = []
        for i, job in enumerate(jobs):
            if not isinstance(job, Job):
                raise InvalidInstanceError(f"jobs[{i}]", "must be a Job")
            if job.batch is None:
                raise InvalidInstanceError(
                    f"jobs[{i}].batch", "missing required field for batch-size"
                )
            if job.gpus_per_worker != 1 or job.min_workers != 1:
                raise InvalidInstanceError(
                    f"jobs[{i}].min_workers",
                    "batch-size runs a job on 1..max_workers single-GPU workers "
                    "(min_workers = gpus_per_worker = 1)",
                )
            state = states.get(job.id)
            if not isinstance(state, JobState):
                raise InvalidInstanceError(f"states.{job.id}", "missing (a JobState per job)")
            b = job.batch
            rows.append(
                (
                    b.epoch_size,
                    b.batch_limit,
                    b.max_local_batch,
                    job.max_workers,
                    b.processed_samples,
                )
            )
            models.append(state.throughput if state.throughput is not None else self.throughput)
        table = np.array(rows, np.int64).reshape(-1, 5)
        names = ("epoch_size", "limit", "max_local", "max_workers", "processed")
        for k, name in enumerate(names):
            set_(self, name, _frozen(np.ascontiguousarray(table[:, k])))
        st = [states[j.id] for j in jobs]
        set_(self, "processed_time", _frozen(np.array([s.processed_time for s in st], float)))
        set_(self, "submit_time", _frozen(np.array([j.submit_time for j in jobs], float)))
        set_(self, "beta", _frozen(np.maximum(np.array([s.beta for s in st], float), 1.0)))
        warm = np.array([s.warmup for s in st], bool)
        set_(self, "alpha", _frozen(alpha_of(self.processed, self.epoch_size)))
        set_(self, "models", tuple(models))
        return warm

    def _tables(self, g: int, warm: NDArray[np.bool_]) -> None:
        """The best batch and GPU-time per sample for every (job, GPU count, spread)."""
        set_ = object.__setattr__
        n = len(self.job_ids)
        cap = np.minimum(np.minimum(self.max_workers, self.limit), g)
        cap = np.where(warm, np.minimum(cap, 1), cap)
        width = int(cap.max(initial=0)) + 1
        cells = max(int((cap * np.minimum(self.max_local, self.limit)).sum()), n * width)
        if cells > MAX_TABLE_CELLS:
            raise InstanceTooLargeError(
                "jobs",
                f"throughput tables of {cells} cells (GPU counts x local batches); "
                f"batch-size handles at most {MAX_TABLE_CELLS}",
            )
        try:
            batch, cost = cost_tables(self.models, self.limit, self.max_local, cap)
        except InvalidInstanceError as e:
            index, _, rest = e.path.partition(".")
            where = f"states.{self.job_ids[int(index)]}"
            raise InvalidInstanceError(rest, e.reason).at(where) from None
        with np.errstate(over="ignore", invalid="ignore"):
            work = mean_remaining_work(self.epoch_size, self.beta)
            finite = np.where(np.isfinite(cost), cost, 0.0) * work[:, None, None]
        top = float(finite.max(initial=0.0)) or 1.0
        if not (np.all(np.isfinite(work)) and math.isfinite(top) and top < MAX_COST):
            # An objective of inf or NaN would make every comparison meaningless.
            raise InvalidInstanceError(
                "states", "epoch_size x beta x GPU-time overflows: values too large to compare"
            )
        wait = 4.0 * top if self.wait_penalty is None else self.wait_penalty
        idle = 2.0 * top if self.idle_penalty is None else self.idle_penalty
        for name, value in (("wait_penalty", wait), ("idle_penalty", idle)):
            read_number(value, name, 0.0)
        set_(self, "max_gpus", _frozen(cap.astype(np.int64)))
        set_(self, "work", _frozen(work))
        set_(self, "batch", _frozen(batch))
        set_(self, "cost", _frozen(cost))
        set_(self, "wait", float(wait))
        set_(self, "idle", float(idle))
        set_(self, "util_max", top)

    # ------------------------------------------------------------------ sizes

    @property
    def n_jobs(self) -> int:
        return len(self.job_ids)

    @property
    def n_gpus(self) -> int:
        return len(self.gpu_ids)

    @property
    def n_nodes(self) -> int:
        return len(self.node_sizes)

    @property
    def separable(self) -> bool:
        """Placement cannot change F: one server, or no job pays for spanning."""
        return self.n_nodes == 1 or bool(np.array_equal(self.cost[:, :, 0], self.cost[:, :, 1]))

    @property
    def may_idle(self) -> bool:
        """Whether leaving a GPU idle (or a job waiting) can lower F.

        False when the idle penalty exceeds every utilization term (the
        default): then giving an idle GPU to any job below its cap always
        lowers F, and the search fills every GPU it can.
        """
        return not self.idle > self.util_max


@dataclass(frozen=True, slots=True)
class Schedule:
    """The decision: per GPU its job (index into ``job_ids``, -1 idle) and local batch.

    c_j (:attr:`gpus`) is the number of GPUs of job j and B_j (:attr:`batch`)
    the sum of its local batches; an idle GPU has local batch 0. Validated
    for shape only (one entry per GPU, known job indices); whether it is a
    valid schedule of an input is the checker's job
    (:func:`~scheduling_opt.batch_size.check.check`).

    Examples
    --------
    >>> s = Schedule(("a", "b"), ("s0/0", "s0/1", "s0/2"), (0, 0, -1), (32, 32, 0))
    >>> s.gpus, s.batch, s.job_on("s0/2")
    ((2, 0), (64, 0), None)
    """

    job_ids: tuple[str, ...]
    gpu_ids: tuple[str, ...]
    assignment: tuple[int, ...]
    local_batch: tuple[int, ...]

    def __post_init__(self) -> None:
        for name in ("job_ids", "gpu_ids", "assignment", "local_batch"):
            object.__setattr__(self, name, tuple(getattr(self, name)))
        g = len(self.gpu_ids)
        if len(self.assignment) != g or len(self.local_batch) != g:
            raise InvalidInstanceError("assignment", f"need one job and local batch per GPU ({g})")
        n = len(self.job_ids)
        for k, (j, b) in enumerate(zip(self.assignment, self.local_batch, strict=True)):
            if not -1 <= j < n:
                raise InvalidInstanceError(f"assignment[{k}]", f"job index {j} not in -1..{n - 1}")
            if b < 0 or (j < 0 and b != 0):
                raise InvalidInstanceError(f"local_batch[{k}]", f"local batch {b} of job {j}")

    @property
    def gpus(self) -> tuple[int, ...]:
        """c_j: GPUs per job (0: waiting)."""
        c = [0] * len(self.job_ids)
        for j in self.assignment:
            if j >= 0:
                c[j] += 1
        return tuple(c)

    @property
    def batch(self) -> tuple[int, ...]:
        """B_j: global batch per job (0: waiting)."""
        b = [0] * len(self.job_ids)
        for j, local in zip(self.assignment, self.local_batch, strict=True):
            if j >= 0:
                b[j] += local
        return tuple(b)

    def job_on(self, gpu_id: str) -> str | None:
        """The id of the job on GPU ``gpu_id`` (None: idle)."""
        j = self.assignment[self.gpu_ids.index(gpu_id)]
        return None if j < 0 else self.job_ids[j]
