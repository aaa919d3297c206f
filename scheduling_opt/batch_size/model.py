"""The ``batch-size`` problem: its typed input, objective, result and checker.

Assign each GPU of a homogeneous cluster to at most one job (ONES §3 Eq. 2,
Eq. 4) and give each running job a global batch B_j <= R_j split into local
batches; minimize the predicted GPU-time still needed (Eq. 3 / Eq. 8) with
penalties that make running more jobs and using more GPUs come first.

The objective (Eq. 3 read literally prefers running fewer jobs; docs/evolution.md)::

    F = sum_{j running} c_j * Y_j / X_j(B_j, c_j, spread_j)
        + wait_penalty * #(waiting jobs) + idle_penalty * #(idle GPUs)

with Y_j = ||D_j|| beta_j, the remaining samples at the mean predicted
progress (:mod:`ones_progress`), and X_j the throughput model
(:mod:`ones_model`). By default ``idle_penalty = 2 U`` and
``wait_penalty = 4 U`` where U is the largest utilization term any one job
can reach: then admitting a waiting job (on an idle GPU, or on one taken
from a job that keeps a GPU) and filling an idle GPU always lower F, so an
optimum runs min(jobs, GPUs) jobs, leaves a GPU idle only when every job is
at its cap (Eq. 4 as far as the limits allow), and minimizes Eq. 3 among
such schedules.

Evaluation of a population of K genomes (``genes[k, g]`` = job index or -1)
is O(K (G + J)) with numpy (three bincounts).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sized
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from scheduling_opt.errors import InvalidInstanceError, VerificationError
from scheduling_opt.instance import Instance
from scheduling_opt.jsonpath import (
    check_keys,
    read_array,
    read_bool,
    read_int,
    read_number,
    read_object,
)
from scheduling_opt.result import Status
from scheduling_opt.solvers.ones_model import (
    AnalyticThroughput,
    ThroughputModel,
    batch_table,
    split_batch,
)
from scheduling_opt.solvers.ones_progress import (
    ProgressModel,
    alpha_of,
    mean_remaining_work,
)

IntArray = NDArray[np.int64]
FloatArray = NDArray[np.float64]

#: Relative tolerance of the checker's objective comparison.
TOLERANCE = 1e-6
DEFAULT_MODEL = AnalyticThroughput(overhead=0.05, per_sample=0.002, comm=0.03, cross_node=0.1)


_MAX_COST = 1e150
MAX_POPULATION = 10_000
MAX_GENERATIONS = 1_000_000


def _int_array(values: Any, name: str) -> NDArray[np.int64]:
    """``values`` as an int64 array, or the field named in the error."""
    try:
        return np.array(values, np.int64)
    except (OverflowError, TypeError, ValueError):
        raise InvalidInstanceError(name, "must be integers within 64 bits") from None


@dataclass(frozen=True, slots=True)
class OnesConfig:
    """Search settings: population K, generations, mutation rate theta.

    ``sample_progress``: score selections with rho sampled per generation
    (Algorithm 1, the paper) instead of the mean progress. ``greedy_start``:
    one member of G_0 is the greedy fill instead of a random schedule.
    """

    population: int = 32
    generations: int = 100
    mutation_rate: float = 0.02
    sample_progress: bool = True
    greedy_start: bool = True


@dataclass(frozen=True, slots=True, eq=False)
class BatchSizeInput:
    """The parsed problem as arrays (jobs indexed 0..J-1, GPUs 0..G-1 node-major).

    ``cost[j, c, s]``: GPU-seconds per remaining sample, c / X_j, at the best
    batch for c GPUs (``s`` = 1: spanning servers); inf beyond ``max_gpus``.
    ``work``: Y_j at the mean progress. All arrays are read-only.
    """

    job_ids: tuple[str, ...]
    gpu_ids: tuple[str, ...]
    node_of: IntArray
    node_sizes: IntArray
    epoch_size: IntArray
    limit: IntArray
    max_local: IntArray
    max_workers: IntArray
    processed: IntArray
    processed_time: FloatArray
    submit_time: FloatArray
    max_gpus: IntArray
    alpha: FloatArray
    beta: FloatArray
    work: FloatArray
    models: tuple[ThroughputModel, ...]
    batch: IntArray
    cost: FloatArray
    wait_penalty: float
    idle_penalty: float
    config: OnesConfig

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


def build_input(
    *,
    job_ids: tuple[str, ...],
    node_sizes: tuple[int, ...],
    epoch_size: list[int],
    limit: list[int],
    max_local: list[int],
    max_workers: list[int],
    processed: list[int],
    beta: list[float],
    models: tuple[ThroughputModel, ...],
    processed_time: list[float] | None = None,
    submit_time: list[float] | None = None,
    warmup: list[bool] | None = None,
    wait_penalty: float | None = None,
    idle_penalty: float | None = None,
    config: OnesConfig = OnesConfig(),
    gpu_ids: tuple[str, ...] | None = None,
) -> BatchSizeInput:
    """Build the arrays and tables from plain per-job values (the library entry).

    A job in warm-up (``warmup``) gets at most one GPU (§3.3.2, Start).
    """
    n = len(job_ids)
    per_job: dict[str, Sized] = {
        "epoch_size": epoch_size,
        "limit": limit,
        "max_local": max_local,
        "max_workers": max_workers,
        "processed": processed,
        "beta": beta,
        "models": models,
    }
    for name, values in per_job.items():
        if len(values) != n:
            raise InvalidInstanceError(name, f"need one value per job ({n}), got {len(values)}")
    # Copies (np.array), never views: the arrays are frozen below and must not
    # freeze a caller's array.
    sizes = _int_array(node_sizes, "node_sizes")
    eps = _int_array(epoch_size, "epoch_size")
    lim = _int_array(limit, "limit")
    mw = _int_array(max_workers, "max_workers")
    proc = _int_array(processed, "processed")
    local_cap = _int_array(max_local, "max_local")
    for name, arr, low in (
        ("node_sizes", sizes, 1),
        ("epoch_size", eps, 1),
        ("limit", lim, 1),
        ("max_local", local_cap, 1),
        ("max_workers", mw, 1),
        ("processed", proc, 0),
    ):
        if np.any(arr < low):
            raise InvalidInstanceError(name, f"every value must be >= {low}")
    if not len(sizes):
        raise InvalidInstanceError("node_sizes", "need at least one server")
    if not np.all(np.isfinite(np.asarray(beta, np.float64))):
        raise InvalidInstanceError("beta", "must be finite")
    g = int(sizes.sum())
    node_of = np.repeat(np.arange(len(sizes)), sizes).astype(np.int64)
    cap = np.minimum(np.minimum(mw, lim), g)
    if warmup is not None:
        cap = np.where(np.asarray(warmup, bool), np.minimum(cap, 1), cap)
    width = int(cap.max(initial=0)) + 1
    batch = np.zeros((n, width, 2), np.int64)
    cost = np.full((n, width, 2), np.inf)
    for j in range(n):
        table = batch_table(models[j], int(lim[j]), int(local_cap[j]), int(cap[j]))
        batch[j, : cap[j] + 1] = table.batch
        cost[j, 0] = 0.0
        c = np.arange(1, cap[j] + 1, dtype=np.float64)[:, None]
        cost[j, 1 : cap[j] + 1] = c / table.rate[1:]
    b = np.maximum(np.asarray(beta, np.float64), 1.0)
    with np.errstate(over="ignore", invalid="ignore"):
        work = mean_remaining_work(eps, b)
        finite = np.where(np.isfinite(cost), cost, 0.0) * work[:, None, None]
    top = float(finite.max(initial=0.0)) or 1.0
    if not (np.all(np.isfinite(work)) and math.isfinite(top) and top < _MAX_COST):
        # An objective of inf or NaN would make every comparison meaningless.
        raise InvalidInstanceError(
            "beta", "epoch_size x beta x GPU-time overflows: values too large to compare"
        )
    ids = (
        gpu_ids
        if gpu_ids is not None
        else tuple(f"n{k}/{i}" for k, size in enumerate(node_sizes) for i in range(size))
    )
    if len(ids) != g:
        raise InvalidInstanceError("gpu_ids", f"need one id per GPU ({g}), got {len(ids)}")
    arrays: list[NDArray[Any]] = [node_of, batch, cost, eps, lim, cap, proc, work, b]
    out = BatchSizeInput(
        job_ids=tuple(job_ids),
        gpu_ids=ids,
        node_of=node_of,
        node_sizes=sizes,
        epoch_size=eps,
        limit=lim,
        max_local=local_cap,
        max_workers=mw,
        processed=proc,
        processed_time=np.zeros(n)
        if processed_time is None
        else np.array(processed_time, np.float64),
        submit_time=np.zeros(n) if submit_time is None else np.array(submit_time, np.float64),
        max_gpus=cap,
        alpha=alpha_of(proc, eps),
        beta=b,
        work=work,
        models=models,
        batch=batch,
        cost=cost,
        wait_penalty=4.0 * top if wait_penalty is None else wait_penalty,
        idle_penalty=2.0 * top if idle_penalty is None else idle_penalty,
        config=config,
    )
    for a in (*arrays, sizes, local_cap, mw, out.alpha, out.processed_time, out.submit_time):
        a.setflags(write=False)
    return out


# --------------------------------------------------------------------------- evaluation


def counts(problem: BatchSizeInput, genes: IntArray) -> tuple[IntArray, IntArray]:
    """GPUs per job and spread flag (1: more than one server) per genome row."""
    k, n = genes.shape[0], problem.n_jobs
    slot = (genes + 1 + (n + 1) * np.arange(k)[:, None]).ravel()
    size = k * (n + 1)
    c = np.bincount(slot, minlength=size).reshape(k, n + 1)[:, 1:]
    if problem.n_nodes == 1:
        return c.astype(np.int64), np.zeros_like(c, dtype=np.int64)
    # One server iff the server index has zero variance over the job's GPUs:
    # c * sum(node^2) - sum(node)^2 == 0 (exact in float64 at these sizes),
    # three bincounts instead of a (k, jobs, servers) table.
    node = np.broadcast_to(problem.node_of, genes.shape).ravel().astype(np.float64)
    s1 = np.bincount(slot, weights=node, minlength=size).reshape(k, n + 1)[:, 1:]
    s2 = np.bincount(slot, weights=node * node, minlength=size).reshape(k, n + 1)[:, 1:]
    return c.astype(np.int64), (c * s2 - s1 * s1 > 0.5).astype(np.int64)


def unit_costs(problem: BatchSizeInput, c: IntArray, spread: IntArray) -> FloatArray:
    """GPU-seconds per remaining sample of each (genome, job); 0 when waiting."""
    j = np.broadcast_to(np.arange(problem.n_jobs), c.shape)
    return np.asarray(problem.cost[j, c, spread], dtype=np.float64)


def objectives(problem: BatchSizeInput, genes: IntArray, works: list[FloatArray]) -> FloatArray:
    """F of every genome row under each Y_j vector of ``works`` (shape: works x rows)."""
    c, spread = counts(problem, genes)
    unit = unit_costs(problem, c, spread)
    penalty = problem.wait_penalty * (c == 0).sum(axis=1) + problem.idle_penalty * (genes < 0).sum(
        axis=1
    )
    return np.asarray([unit @ y + penalty for y in works], dtype=np.float64).reshape(
        len(works), genes.shape[0]
    )


def objective(
    problem: BatchSizeInput, genes: IntArray, work: FloatArray | None = None
) -> FloatArray:
    """F of every genome row (``work``: Y_j to use; default the mean progress)."""
    scores = objectives(problem, genes, [problem.work if work is None else work])
    return np.asarray(scores[0], dtype=np.float64)


def local_batches(problem: BatchSizeInput, genes: IntArray) -> IntArray:
    """Local batch per GPU of one genome: each job's best batch, split evenly."""
    c, spread = counts(problem, genes[None, :])
    local = np.zeros(problem.n_gpus, np.int64)
    for j in np.flatnonzero(c[0]):
        gpus = np.flatnonzero(genes == j)
        local[gpus] = split_batch(int(problem.batch[j, c[0, j], spread[0, j]]), len(gpus))
    return local


# --------------------------------------------------------------------------- result


@dataclass(frozen=True, slots=True)
class BatchSizeResult:
    """One schedule: per GPU the job index (-1 idle) and local batch."""

    status: Status
    objective: float | None
    seconds: float
    job_ids: tuple[str, ...]
    gpu_ids: tuple[str, ...]
    genes: tuple[int, ...]
    local: tuple[int, ...]
    method: str = ""
    generations: int = 0

    def decision(self) -> dict[str, Any]:
        """``gpus``: per GPU its job (null: idle) and local batch; ``jobs``: c_j and B_j."""
        jobs: dict[str, dict[str, int]] = {j: {"gpus": 0, "batch": 0} for j in self.job_ids}
        gpus = []
        for gpu, j, b in zip(self.gpu_ids, self.genes, self.local, strict=True):
            job = self.job_ids[j] if j >= 0 else None
            gpus.append({"gpu": gpu, "job": job, "local_batch": b if job else 0})
            if job is not None:
                jobs[job]["gpus"] += 1
                jobs[job]["batch"] += b
        return {"gpus": gpus, "jobs": jobs}


def make_result(
    problem: BatchSizeInput,
    genes: IntArray,
    status: Status,
    seconds: float,
    method: str,
    generations: int = 0,
) -> BatchSizeResult:
    row = np.asarray(genes, np.int64)
    return BatchSizeResult(
        status,
        float(objective(problem, row[None, :])[0]),
        seconds,
        problem.job_ids,
        problem.gpu_ids,
        tuple(int(v) for v in row),
        tuple(int(v) for v in local_batches(problem, row)),
        method,
        generations,
    )


# --------------------------------------------------------------------------- checker


def check(problem: BatchSizeInput, result: Any) -> None:
    """Independent check from the reported decision and the throughput models.

    Every GPU listed once; a busy GPU's job known, its local batch in
    1..max_local_batch; per job B_j <= R_j, c_j <= its GPU cap; the summary
    agrees; F recomputed with the models (not the solver's tables).
    """
    decision = result.decision()
    rows = decision.get("gpus")
    if not isinstance(rows, list) or [r.get("gpu") for r in rows] != list(problem.gpu_ids):
        raise VerificationError("gpus must list every GPU of the cluster once, in order")
    index = {j: i for i, j in enumerate(problem.job_ids)}
    per_job: dict[int, list[tuple[int, int]]] = {}
    for g, row in enumerate(rows):
        job, b = row.get("job"), row.get("local_batch")
        if job is None:
            continue
        if job not in index:
            raise VerificationError(f"GPU {problem.gpu_ids[g]}: unknown job {job!r}")
        j = index[job]
        if not isinstance(b, int) or not 1 <= b <= problem.max_local[j]:
            raise VerificationError(f"GPU {problem.gpu_ids[g]}: local batch {b!r} of {job!r}")
        per_job.setdefault(j, []).append((g, b))
    util = 0.0
    for j, placed in per_job.items():
        c, total = len(placed), sum(b for _, b in placed)
        name = problem.job_ids[j]
        if total > problem.limit[j]:
            raise VerificationError(f"job {name!r}: batch {total} > limit {problem.limit[j]}")
        if c > problem.max_gpus[j]:
            raise VerificationError(f"job {name!r}: {c} GPUs > cap {problem.max_gpus[j]}")
        nodes = {int(problem.node_of[g]) for g, _ in placed}
        rate = problem.models[j].throughput(
            np.array([float(total)]),
            np.array([float(max(b for _, b in placed))]),
            np.array([float(c)]),
            np.array([1.0 if len(nodes) > 1 else 0.0]),
        )
        util += c * float(problem.work[j]) / float(rate[0])
    summary = decision.get("jobs", {})
    for j, name in enumerate(problem.job_ids):
        placed = per_job.get(j, [])
        want = {"gpus": len(placed), "batch": sum(b for _, b in placed)}
        if summary.get(name) != want:
            raise VerificationError(f"job {name!r}: summary {summary.get(name)} != {want}")
    idle = sum(1 for r in rows if r.get("job") is None)
    f = util + problem.wait_penalty * (problem.n_jobs - len(per_job)) + problem.idle_penalty * idle
    reported = result.objective
    if reported is None or not math.isclose(reported, f, rel_tol=TOLERANCE, abs_tol=1e-9):
        raise VerificationError(f"reported objective {reported} != recomputed {f}")


# --------------------------------------------------------------------------- parsing


def _model(value: object, path: str) -> AnalyticThroughput:
    obj = read_object(value, path)
    keys = ("overhead", "per_sample", "comm", "cross_node")
    check_keys(obj, path, keys, keys[:2])
    vals = [read_number(obj.get(k, 0.0), f"{path}.{k}", 0.0) for k in keys]
    if vals[0] + vals[1] <= 0:
        raise InvalidInstanceError(f"{path}.per_sample", "overhead + per_sample must be > 0")
    return AnalyticThroughput(*vals)


_PARAMS = (
    "population",
    "generations",
    "mutation_rate",
    "sample_progress",
    "greedy_start",
    "wait_penalty",
    "idle_penalty",
    "throughput",
    "progress_model",
    "jobs",
)
_JOB_PARAMS = ("throughput", "beta", "features", "processed_time", "warmup")


def _progress_model(params: Mapping[str, Any]) -> ProgressModel | None:
    if "progress_model" not in params:
        return None
    p = "params.progress_model"
    obj = read_object(params["progress_model"], p)
    check_keys(obj, p, ("weights", "bias"), ("weights", "bias"))
    w = [
        read_number(v, f"{p}.weights[{i}]")
        for i, v in enumerate(read_array(obj["weights"], f"{p}.weights"))
    ]
    return ProgressModel(np.asarray(w, np.float64), read_number(obj["bias"], f"{p}.bias"))


def _config(params: Mapping[str, Any]) -> OnesConfig:
    default = OnesConfig()
    rate = read_number(
        params.get("mutation_rate", default.mutation_rate), "params.mutation_rate", 0.0
    )
    if rate > 1:
        raise InvalidInstanceError("params.mutation_rate", f"must be <= 1, got {rate!r}")
    population = read_int(params.get("population", default.population), "params.population", 2)
    generations = read_int(params.get("generations", default.generations), "params.generations", 0)
    # Bounds far above any useful search, so that a typo cannot run for days.
    if population > MAX_POPULATION:
        raise InvalidInstanceError(
            "params.population", f"must be <= {MAX_POPULATION}, got {population}"
        )
    if generations > MAX_GENERATIONS:
        raise InvalidInstanceError(
            "params.generations", f"must be <= {MAX_GENERATIONS}, got {generations}"
        )
    return OnesConfig(
        population,
        generations,
        rate,
        read_bool(params.get("sample_progress", default.sample_progress), "params.sample_progress"),
        read_bool(params.get("greedy_start", default.greedy_start), "params.greedy_start"),
    )


def _penalty(params: Mapping[str, Any], key: str) -> float | None:
    value = params.get(key)
    return None if value is None else read_number(value, f"params.{key}", 0.0)


def parse(instance: Instance) -> BatchSizeInput:
    """Validate a ``batch-size`` instance; errors name the JSON path."""
    instance.require_no_other_sections()
    cluster = instance.require_cluster()
    params = instance.params
    check_keys(params, "params", _PARAMS, ())
    servers = [s for s in cluster.servers if s.usable_for_training]
    if not servers:
        raise InvalidInstanceError("cluster.servers", "no server usable for training")
    speeds = {cluster.gpu_type(s.gpu_type).compute for s in servers}
    if len(speeds) > 1:
        raise InvalidInstanceError(
            "cluster.gpu_types", "batch-size needs one GPU compute capacity (homogeneous cluster)"
        )
    default = (
        _model(params["throughput"], "params.throughput")
        if "throughput" in params
        else DEFAULT_MODEL
    )
    predictor = _progress_model(params)
    per_job = read_object(params.get("jobs", {}), "params.jobs")
    for key in per_job:
        if key not in instance.jobs_by_id:
            raise InvalidInstanceError(f"params.jobs.{key}", f"unknown job {key!r}")
    models: list[ThroughputModel] = []
    beta: list[float] = []
    ptime: list[float] = []
    warm: list[bool] = []
    for i, job in enumerate(instance.jobs):
        if job.batch is None:
            raise InvalidInstanceError(f"jobs[{i}].batch", "missing required field for batch-size")
        if job.gpus_per_worker != 1 or job.min_workers != 1:
            raise InvalidInstanceError(
                f"jobs[{i}].min_workers",
                "batch-size runs a job on 1..max_workers single-GPU workers "
                "(min_workers = gpus_per_worker = 1)",
            )
        p = f"params.jobs.{job.id}"
        obj = read_object(per_job.get(job.id, {}), p)
        check_keys(obj, p, _JOB_PARAMS, ())
        models.append(
            _model(obj["throughput"], f"{p}.throughput") if "throughput" in obj else default
        )
        if "beta" in obj:
            beta.append(read_number(obj["beta"], f"{p}.beta", 1.0))
        elif "features" in obj:
            if predictor is None:
                raise InvalidInstanceError(f"{p}.features", "features need params.progress_model")
            x = [
                read_number(v, f"{p}.features[{k}]")
                for k, v in enumerate(read_array(obj["features"], f"{p}.features"))
            ]
            try:
                beta.append(float(predictor.beta(np.asarray(x))[0]))
            except InvalidInstanceError as e:
                raise e.at(p) from None
        else:
            raise InvalidInstanceError(f"{p}.beta", "missing (give beta or features)")
        ptime.append(read_number(obj.get("processed_time", 0.0), f"{p}.processed_time", 0.0))
        warm.append(read_bool(obj.get("warmup", False), f"{p}.warmup"))
    jobs = instance.jobs
    return build_input(
        job_ids=tuple(j.id for j in jobs),
        node_sizes=tuple(s.gpus for s in servers),
        gpu_ids=tuple(f"{s.id}/{k}" for s in servers for k in range(s.gpus)),
        epoch_size=[j.batch.epoch_size for j in jobs if j.batch],
        limit=[j.batch.batch_limit for j in jobs if j.batch],
        max_local=[j.batch.max_local_batch for j in jobs if j.batch],
        max_workers=[j.max_workers for j in jobs],
        processed=[j.batch.processed_samples for j in jobs if j.batch],
        beta=beta,
        models=tuple(models),
        processed_time=ptime,
        submit_time=[j.submit_time for j in jobs],
        warmup=warm,
        wait_penalty=_penalty(params, "wait_penalty"),
        idle_penalty=_penalty(params, "idle_penalty"),
        config=_config(params),
    )
