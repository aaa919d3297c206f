"""``batch-size`` instance files <-> :class:`BatchSizeInput`, the generator, the registry entry.

The only module of :mod:`scheduling_opt.batch_size` that knows files:
:func:`read` validates an instance's params (errors name the JSON path) and
builds the typed input; :func:`encode` gives the JSON decision (``gpus``: per
GPU its job and local batch; ``jobs``: per job c_j and B_j); :func:`generate`
builds seeded instances like the ONES evaluation (servers of 4 GPUs). ONES,
Bian et al., SC 2021, §3 and §5. Reading is O(jobs + servers) plus the
input's tables (bounded before allocation).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

import numpy as np

from scheduling_opt.batch_size.auto import auto
from scheduling_opt.batch_size.check import check
from scheduling_opt.batch_size.exact import exact
from scheduling_opt.batch_size.greedy import greedy
from scheduling_opt.batch_size.model import (
    DEFAULT_MODEL,
    MAX_GPUS,
    BatchSizeInput,
    JobState,
    OnesConfig,
    Schedule,
)
from scheduling_opt.batch_size.progress import ProgressModel
from scheduling_opt.batch_size.search import MAX_SEARCH_CELLS, ones
from scheduling_opt.batch_size.throughput import AnalyticThroughput
from scheduling_opt.errors import InvalidInstanceError
from scheduling_opt.io.instance import FORMAT, Instance, from_dict
from scheduling_opt.io.sizes import size_number
from scheduling_opt.jsonpath import (
    check_keys,
    read_array,
    read_bool,
    read_int,
    read_number,
    read_object,
)
from scheduling_opt.registry import Method, Problem

#: GPUs per server in generated clusters (the ONES evaluation: 16 servers of 4).
GPUS_PER_SERVER = 4

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


def _model(value: object, path: str) -> AnalyticThroughput:
    obj = read_object(value, path)
    keys = ("overhead", "per_sample", "comm", "cross_node")
    check_keys(obj, path, keys, keys[:2])
    vals = [read_number(obj.get(k, 0.0), f"{path}.{k}", 0.0) for k in keys]
    if vals[0] + vals[1] <= 0:
        raise InvalidInstanceError(f"{path}.per_sample", "overhead + per_sample must be > 0")
    return AnalyticThroughput(*vals)


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
    population = read_int(params.get("population", default.population), "params.population", 2)
    generations = read_int(params.get("generations", default.generations), "params.generations", 0)
    try:
        return OnesConfig(
            population,
            generations,
            rate,
            read_bool(
                params.get("sample_progress", default.sample_progress), "params.sample_progress"
            ),
            read_bool(params.get("greedy_start", default.greedy_start), "params.greedy_start"),
        )
    except InvalidInstanceError as e:
        raise e.at("params") from None


def _penalty(params: Mapping[str, Any], key: str) -> float | None:
    value = params.get(key)
    return None if value is None else read_number(value, f"params.{key}", 0.0)


def _state(obj: dict[str, Any], p: str, predictor: ProgressModel | None, default: Any) -> JobState:
    check_keys(obj, p, _JOB_PARAMS, ())
    model = _model(obj["throughput"], f"{p}.throughput") if "throughput" in obj else default
    if "beta" in obj:
        beta = read_number(obj["beta"], f"{p}.beta", 1.0)
    elif "features" in obj:
        if predictor is None:
            raise InvalidInstanceError(f"{p}.features", "features need params.progress_model")
        x = [
            read_number(v, f"{p}.features[{k}]")
            for k, v in enumerate(read_array(obj["features"], f"{p}.features"))
        ]
        try:
            beta = float(predictor.beta(np.asarray(x))[0])
        except InvalidInstanceError as e:
            raise e.at(p) from None
    else:
        raise InvalidInstanceError(f"{p}.beta", "missing (give beta or features)")
    return JobState(
        beta=beta,
        throughput=model,
        processed_time=read_number(obj.get("processed_time", 0.0), f"{p}.processed_time", 0.0),
        warmup=read_bool(obj.get("warmup", False), f"{p}.warmup"),
    )


def read(instance: Instance) -> BatchSizeInput:
    """Validate a ``batch-size`` instance and build its input; errors name the JSON path.

    Examples
    --------
    >>> from scheduling_opt import load
    >>> inp = read(load("instances/batch-size-example.json"))
    >>> inp.n_gpus, inp.job_ids[:2]
    (8, ('resnet50', 'vgg16'))
    """
    instance.require_no_other_sections()
    cluster = instance.require_cluster()
    params = instance.params
    check_keys(params, "params", _PARAMS, ())
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
    states: dict[str, JobState] = {}
    for i, job in enumerate(instance.jobs):
        if job.batch is None:
            raise InvalidInstanceError(f"jobs[{i}].batch", "missing required field for batch-size")
        p = f"params.jobs.{job.id}"
        states[job.id] = _state(read_object(per_job.get(job.id, {}), p), p, predictor, default)
    wait, idle = _penalty(params, "wait_penalty"), _penalty(params, "idle_penalty")
    config = _config(params)
    try:
        return BatchSizeInput(
            cluster,
            instance.jobs,
            states,
            default,
            wait_penalty=wait,
            idle_penalty=idle,
            config=config,
        )
    except InvalidInstanceError as e:
        if e.path.startswith("states."):
            raise type(e)("params.jobs." + e.path[len("states.") :], e.reason) from None
        raise


def encode(schedule: Schedule) -> dict[str, Any]:
    """The JSON decision: ``gpus`` (per GPU: gpu, job or null, local_batch) and ``jobs``.

    Examples
    --------
    >>> s = Schedule(("a",), ("s0/0", "s0/1"), (0, -1), (32, 0))
    >>> encode(s)["jobs"], encode(s)["gpus"][1]
    ({'a': {'gpus': 1, 'batch': 32}}, {'gpu': 's0/1', 'job': None, 'local_batch': 0})
    """
    jobs: dict[str, dict[str, int]] = {j: {"gpus": 0, "batch": 0} for j in schedule.job_ids}
    gpus = []
    for gpu, j, b in zip(schedule.gpu_ids, schedule.assignment, schedule.local_batch, strict=True):
        job = schedule.job_ids[j] if j >= 0 else None
        gpus.append({"gpu": gpu, "job": job, "local_batch": b if job else 0})
        if job is not None:
            jobs[job]["gpus"] += 1
            jobs[job]["batch"] += b
    return {"gpus": gpus, "jobs": jobs}


#: Most jobs a generated instance may have (the GPUs are bounded by the model's MAX_GPUS).
MAX_JOBS = 10_000

#: The sizes :func:`generate` accepts (``scheduling-opt list`` shows it).
SIZE_GRAMMAR = (
    f"g<gpus>[-n<jobs>] (GPUs a multiple of {GPUS_PER_SERVER}, {GPUS_PER_SERVER}..{MAX_GPUS:,}; "
    f"jobs 0..{MAX_JOBS:,}, default 3/4 of the GPUs)"
)


def _size(size: str) -> tuple[int, int]:
    """``g<gpus>`` or ``g<gpus>-n<jobs>`` -> (gpus, jobs); default jobs = 3/4 gpus."""
    match = re.fullmatch(r"g([^-]*)(?:-n(.*))?", size)
    if not match:
        raise InvalidInstanceError("size", f"expected {SIZE_GRAMMAR}, got {size!r}")
    gpus = size_number(match[1], "GPUs", GPUS_PER_SERVER, MAX_GPUS)
    if gpus % GPUS_PER_SERVER:
        raise InvalidInstanceError(
            "size", f"GPUs must be a multiple of {GPUS_PER_SERVER}, got {gpus}"
        )
    if match[2] is None:
        return gpus, max(1, 3 * gpus // 4)
    return gpus, size_number(match[2], "jobs", 0, MAX_JOBS)


def _population(gpus: int) -> int:
    """Population = GPUs (ONES' suggestion), at least 8, within the search's cell limit.

    The cap (population x GPUs <= ``MAX_SEARCH_CELLS``) only binds above 724
    GPUs: g1024 gets 512.
    """
    return max(8, min(gpus, MAX_SEARCH_CELLS // gpus))


def generate(size: str, seed: int) -> Instance:
    """A seeded instance: servers of 4 GPUs, jobs with random models and progress.

    Jobs: epoch size, memory-bound local batch 32-256, limit R = local x
    1..16 (15% in warm-up: one GPU), 0-20 epochs done, beta ~ U(2, 30)
    epochs to go, analytic throughput with a cross-node penalty.
    Population = GPUs (ONES' suggestion; capped so that population x GPUs
    <= 2^19, 512 at 1,024 GPUs), 100 generations. Every job pays the
    cross-node penalty when it spans servers, so no generated instance with
    more than one server is separable (the search matters from 128 GPUs:
    docs/batch-size.md). Sizes:
    ``g<gpus>`` (a multiple of 4; 3/4 as many jobs) or ``g<gpus>-n<jobs>``.

    Examples
    --------
    >>> inst = generate("g8", 0)
    >>> len(inst.jobs), read(inst).n_gpus
    (6, 8)
    """
    gpus, n = _size(size)
    rng = np.random.default_rng(seed)
    servers = [
        {"id": f"s{i}", "gpu_type": "V100", "gpus": GPUS_PER_SERVER}
        for i in range(gpus // GPUS_PER_SERVER)
    ]
    jobs: list[dict[str, Any]] = []
    per_job: dict[str, Any] = {}
    for i in range(n):
        epoch = int(rng.choice([10_000, 50_000, 60_000, 128_000]))
        local = int(rng.choice([32, 64, 128, 256]))
        warm = bool(rng.random() < 0.15)
        limit = local if warm else local * int(rng.choice([1, 2, 4, 8, 16]))
        done = 0 if warm else int(rng.uniform(0, 20) * epoch)
        jobs.append(
            {
                "id": f"j{i}",
                "min_workers": 1,
                "max_workers": int(min(gpus, rng.choice([2, 4, 8, 16]))),
                "duration": 3600.0,
                "submit_time": round(float(rng.uniform(0, 3600)), 1),
                "batch": {
                    "epoch_size": epoch,
                    "batch_limit": limit,
                    "max_local_batch": local,
                    "processed_samples": done,
                },
            }
        )
        per_job[f"j{i}"] = {
            "beta": round(float(rng.uniform(2, 30)), 3),
            "processed_time": 0.0 if warm else round(float(rng.uniform(0, 7200)), 1),
            "warmup": warm,
            "throughput": {
                "overhead": round(float(rng.uniform(0.01, 0.08)), 4),
                "per_sample": round(float(rng.uniform(0.0005, 0.004)), 5),
                "comm": round(float(rng.uniform(0.005, 0.05)), 4),
                "cross_node": round(float(rng.uniform(0.02, 0.15)), 4),
            },
        }
    return from_dict(
        {
            "format": FORMAT,
            "problem": "batch-size",
            "cluster": {"gpu_types": [{"name": "V100"}], "servers": servers},
            "jobs": jobs,
            "params": {"population": _population(gpus), "generations": 100, "jobs": per_job},
        }
    )


PROBLEM: Problem[BatchSizeInput, Schedule] = Problem(
    name="batch-size",
    summary="ONES: GPUs and batch sizes per job, min predicted GPU-time (ONES §3.2)",
    sense="min",
    read=read,
    encode=encode,
    methods=(
        Method("auto", auto, summary="exact DPs, then CP-SAT (<= 64 GPUs), else ones"),
        Method("ones", ones, summary="online evolutionary search (seeded)"),
        Method("greedy", greedy, summary="greedy fill by utilization gain"),
        Method(
            "exact",
            exact,
            exact=True,
            summary="knapsack DP if separable, else CP-SAT with the cross-node penalty",
        ),
    ),
    default="auto",
    check=check,
    generate=generate,
    size_grammar=SIZE_GRAMMAR,
    sizes={
        "quick": ("g8", "g16"),
        "standard": ("g8", "g16", "g16-n24", "g64"),
        "paper": ("g64", "g64-n96", "g256"),
    },
)
