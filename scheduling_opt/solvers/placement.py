"""Worker placement: on which servers each job's workers run, once counts are known.

Given the cluster, its current placement (so the free GPUs per server) and
jobs to place with their worker counts, choose servers for every worker of a
job (or leave the job unplaced) within free GPUs, GPU-type constraints and
the servers training may use. The objective every method reports is the
total allocation reward RW (Chronus §3.4.2, Eq. 7): a placed job of G GPUs
earns ``G * speed(span) / speed(consolidated span)``, so placing more GPUs
and spreading placement-sensitive jobs less both score.

Methods (papers: Aryl §5.3; Chronus §3.2.2, §3.4, §5.3):

- ``bfd``: Aryl's best-fit decreasing with the elastic/inelastic pool
  preferences, :mod:`~scheduling_opt.solvers.placement_bfd`, O(J log J + P C).
- ``round-up``: Chronus RoundUp + Proposition 1 consolidation,
  ``quasi``: quasi-consolidation, ``local-search``: Algorithm 1 (default),
  :mod:`~scheduling_opt.solvers.placement_chronus`.
- ``exact`` (CP-SAT) and ``exact-pulp`` (CBC): the integer program of
  :mod:`~scheduling_opt.solvers.placement_exact`; NP-hard.

Instance ``params`` (all optional): ``sensitivity`` (a speed model, see
:mod:`scheduling_opt.scaling`; default log2 with t1 = 1, t2 = 1.5),
``models`` ``{job: model name}``, ``workers`` ``{elastic job: count}``
(default ``max_workers``), ``search_space`` (local search's |S|, default
100,000). Jobs with placement rows are running; the others are to place.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from scheduling_opt.errors import InvalidInstanceError, VerificationError
from scheduling_opt.instance import Instance
from scheduling_opt.jsonpath import check_keys, read_int, read_object, read_string
from scheduling_opt.model import Cluster, GpuType, Job, Placement, PlacementRow, Server, used_gpus
from scheduling_opt.result import Result, SolveOptions
from scheduling_opt.scaling import Log2Model, SpeedModel, parse_speed_model
from scheduling_opt.solvers.placement_bfd import bfd_assign, solve_bfd
from scheduling_opt.solvers.placement_chronus import (
    buddy_pack,
    consolidate,
    fits_rounded,
    is_consolidation_friendly,
    local_search,
    node_parts,
    place_span,
    potential,
    quasi_consolidate,
    round_up,
    rounded_demand,
    solve_local_search,
    solve_quasi,
    solve_round_up,
)
from scheduling_opt.solvers.placement_core import (
    DEFAULT_SEARCH_SPACE,
    Assignment,
    PlacementInput,
    PlacementResult,
    consolidated_span,
    make_result,
    reward_table,
    total_rw,
)
from scheduling_opt.solvers.placement_exact import exact_cpsat, exact_pulp
from scheduling_opt.solvers.registry import Method, Problem

__all__ = [
    "PROBLEM",
    "Assignment",
    "PlacementInput",
    "PlacementResult",
    "best_fit_decreasing",
    "bfd_assign",
    "buddy_pack",
    "build_input",
    "check_placement",
    "chronus_local_search",
    "consolidate",
    "exact_cpsat",
    "exact_pulp",
    "fits_rounded",
    "generate_placement",
    "is_consolidation_friendly",
    "local_search",
    "make_result",
    "node_parts",
    "parse",
    "place_span",
    "potential",
    "quasi_consolidate",
    "round_up",
    "round_up_consolidation",
    "rounded_demand",
    "total_rw",
]

_PARAMS = ("sensitivity", "models", "workers", "search_space")

# --------------------------------------------------------------------------- parsing


def _models(params: Mapping[str, Any], instance: Instance, speed: SpeedModel) -> dict[str, str]:
    raw = read_object(params.get("models", {}), "params.models")
    out: dict[str, str] = {}
    for job_id, name in raw.items():
        path = f"params.models.{job_id}"
        if job_id not in instance.jobs_by_id:
            raise InvalidInstanceError(path, f"unknown job {job_id!r}")
        model = read_string(name, path)
        if not speed.knows(model):
            raise InvalidInstanceError(path, f"model {model!r} is not in params.sensitivity")
        out[job_id] = model
    return out


def _workers(params: Mapping[str, Any], instance: Instance, placed: set[str]) -> dict[str, int]:
    raw = read_object(params.get("workers", {}), "params.workers")
    out: dict[str, int] = {}
    for job_id, value in raw.items():
        path = f"params.workers.{job_id}"
        job = instance.jobs_by_id.get(job_id)
        if job is None:
            raise InvalidInstanceError(path, f"unknown job {job_id!r}")
        if job_id in placed:
            raise InvalidInstanceError(path, f"job {job_id!r} is already placed")
        n = read_int(value, path, job.min_workers)
        if n > job.max_workers:
            raise InvalidInstanceError(path, f"must be <= max_workers ({job.max_workers}), got {n}")
        out[job_id] = n
    return out


def _servers(
    cluster: Cluster, placement: Placement, jobs: Mapping[str, Job]
) -> tuple[list[Server], list[int]]:
    used = used_gpus(placement, jobs)
    servers = [s for s in cluster.servers if s.usable_for_training]
    return servers, [s.gpus - used.get(s.id, 0) for s in servers]


def build_input(
    instance: Instance,
    *,
    speed: SpeedModel | None = None,
    models: Mapping[str, str] | None = None,
    workers: Mapping[str, int] | None = None,
    search_space: int = DEFAULT_SEARCH_SPACE,
) -> PlacementInput:
    """The solver input of an instance whose params are already read."""
    cluster = instance.require_cluster()
    model_of = dict(models or {})
    count_of = dict(workers or {})
    sensitivity = speed if speed is not None else Log2Model()
    servers, free = _servers(cluster, instance.placement, instance.jobs_by_id)
    type_names = [t.name for t in cluster.gpu_types]
    type_index = {name: i for i, name in enumerate(type_names)}
    server_type = tuple(type_index[s.gpu_type] for s in servers)
    every = tuple(range(len(servers)))
    by_type = {t: tuple(s for s in every if server_type[s] == t) for t in range(len(type_names))}
    placed = set(instance.placement.jobs())
    todo = [job for job in instance.jobs if job.id not in placed]
    eligible, job_type, n_workers, k_star, rw = [], [], [], [], []
    for job in todo:
        t = -1 if job.gpu_type is None else type_index[job.gpu_type]
        elig = every if t < 0 else by_type[t]
        n = count_of.get(job.id, job.max_workers)
        k = consolidated_span(n, job.gpus_per_worker, [servers[s].gpus for s in elig])
        eligible.append(elig)
        job_type.append(t)
        n_workers.append(n)
        k_star.append(k)
        rw.append(reward_table(sensitivity, model_of.get(job.id), n, job.gpus_per_worker, k))
    return PlacementInput(
        instance=instance,
        server_ids=tuple(s.id for s in servers),
        cap=tuple(s.gpus for s in servers),
        free=tuple(free),
        loan=tuple(s.on_loan for s in servers),
        busy=tuple(f < s.gpus for f, s in zip(free, servers, strict=True)),
        server_type=server_type,
        n_types=len(type_names),
        job_ids=tuple(job.id for job in todo),
        workers=tuple(n_workers),
        gpw=tuple(job.gpus_per_worker for job in todo),
        base=tuple(
            job.min_workers if job.elastic else n for job, n in zip(todo, n_workers, strict=True)
        ),
        elastic=tuple(job.elastic for job in todo),
        job_type=tuple(job_type),
        eligible=tuple(eligible),
        k_star=tuple(k_star),
        rw=tuple(rw),
        speed=sensitivity,
        models=tuple(model_of.get(job.id) for job in todo),
        search_space=search_space,
    )


def parse(instance: Instance) -> PlacementInput:
    """Validate a placement instance's params and build the solver input."""
    instance.require_no_other_sections()
    instance.require_cluster()
    params = read_object(dict(instance.params), "params")
    check_keys(params, "params", _PARAMS, ())
    speed: SpeedModel = Log2Model()
    if "sensitivity" in params:
        speed = parse_speed_model(params["sensitivity"], "params.sensitivity")
    search = read_int(params.get("search_space", DEFAULT_SEARCH_SPACE), "params.search_space", 1)
    placed = set(instance.placement.jobs())
    return build_input(
        instance,
        speed=speed,
        models=_models(params, instance, speed),
        workers=_workers(params, instance, placed),
        search_space=search,
    )


# --------------------------------------------------------------------------- direct calls


def _direct_input(
    cluster: Cluster,
    placement: Placement,
    jobs: Sequence[Job],
    workers: Mapping[str, int] | None,
    speed: SpeedModel | None,
    models: Mapping[str, str] | None,
    search_space: int = DEFAULT_SEARCH_SPACE,
) -> PlacementInput:
    """The validated input of a direct call (same rules as an instance file)."""
    instance = Instance("placement", cluster, tuple(jobs), placement)
    return build_input(
        instance, speed=speed, models=models, workers=workers, search_space=search_space
    )


def best_fit_decreasing(
    cluster: Cluster,
    placement: Placement,
    jobs: Sequence[Job],
    *,
    workers: Mapping[str, int] | None = None,
    speed: SpeedModel | None = None,
    models: Mapping[str, str] | None = None,
) -> PlacementResult:
    """Aryl BFD for the ``jobs`` without rows in ``placement`` (the others run)."""
    return solve_bfd(_direct_input(cluster, placement, jobs, workers, speed, models))


def round_up_consolidation(
    cluster: Cluster,
    placement: Placement,
    jobs: Sequence[Job],
    *,
    workers: Mapping[str, int] | None = None,
    speed: SpeedModel | None = None,
    models: Mapping[str, str] | None = None,
) -> PlacementResult:
    """Chronus round-up consolidation (§3.4.1) of the jobs not yet placed."""
    return solve_round_up(_direct_input(cluster, placement, jobs, workers, speed, models))


def chronus_local_search(
    cluster: Cluster,
    placement: Placement,
    jobs: Sequence[Job],
    *,
    workers: Mapping[str, int] | None = None,
    speed: SpeedModel | None = None,
    models: Mapping[str, str] | None = None,
    search_space: int = DEFAULT_SEARCH_SPACE,
) -> PlacementResult:
    """Chronus Algorithm 1 (§3.4.2) for the jobs not yet placed."""
    inp = _direct_input(cluster, placement, jobs, workers, speed, models, search_space)
    return solve_local_search(inp)


# --------------------------------------------------------------------------- checker


def _rows(decision: Mapping[str, Any]) -> list[tuple[str, str, int]]:
    rows = decision.get("placement")
    if not isinstance(rows, list):
        raise VerificationError("placement must be a list of rows")
    out = []
    for i, row in enumerate(rows):
        if not isinstance(row, dict) or set(row) != {"job", "server", "workers"}:
            raise VerificationError(f"placement[{i}] must have exactly job, server, workers")
        job, server, w = row["job"], row["server"], row["workers"]
        if not isinstance(job, str) or not isinstance(server, str):
            raise VerificationError(f"placement[{i}]: job and server must be strings")
        if isinstance(w, bool) or not isinstance(w, int) or w < 1:
            raise VerificationError(f"placement[{i}].workers must be an integer >= 1, got {w!r}")
        out.append((job, server, w))
    return out


def _expected_rw(
    cluster: Cluster, speed: SpeedModel, model: str | None, job: Job, n: int, span: int
) -> float:
    """Eq. (7) from the cluster directly (not the solver's reward table)."""
    caps = [
        s.gpus // job.gpus_per_worker
        for s in cluster.servers
        if s.usable_for_training and job.fits(s)
    ]
    k_star = math.ceil(n / max(caps))
    gpus = n * job.gpus_per_worker
    return gpus * speed.speed(model, gpus, span) / speed.speed(model, gpus, k_star)


def check_placement(inp: PlacementInput, result: Result) -> None:
    """Verify a placement answer from the instance; raise VerificationError if wrong.

    Checks: rows name jobs to place and training-usable servers of the job's
    GPU type, one row per (job, server); a placed job has all its workers;
    ``unplaced`` is exactly the rest; no server exceeds its GPUs counting the
    current placement; the objective is the recomputed total RW.
    """
    instance = inp.instance
    cluster = instance.require_cluster()
    decision = result.decision()
    wanted = dict(zip(inp.job_ids, inp.workers, strict=True))
    model_of = dict(zip(inp.job_ids, inp.models, strict=True))
    used = used_gpus(instance.placement, instance.jobs_by_id)
    per_job: dict[str, dict[str, int]] = {}
    for job_id, sid, w in _rows(decision):
        if job_id not in wanted:
            raise VerificationError(f"job {job_id!r} is not a job to place")
        if not cluster.has_server(sid):
            raise VerificationError(f"unknown server {sid!r}")
        server, job = cluster.server(sid), instance.jobs_by_id[job_id]
        if not server.usable_for_training:
            raise VerificationError(f"server {sid!r} is not usable for training")
        if not job.fits(server):
            raise VerificationError(
                f"job {job_id!r} needs {job.gpu_type}, {sid!r} is {server.gpu_type}"
            )
        if sid in per_job.setdefault(job_id, {}):
            raise VerificationError(f"two rows for job {job_id!r} on server {sid!r}")
        per_job[job_id][sid] = w
        used[sid] = used.get(sid, 0) + w * job.gpus_per_worker
        if used[sid] > server.gpus:
            raise VerificationError(f"server {sid!r} over-full: {used[sid]} of {server.gpus} GPUs")
    total = 0.0
    for job_id, servers in per_job.items():
        n = sum(servers.values())
        if n != wanted[job_id]:
            raise VerificationError(f"job {job_id!r}: {n} workers placed, {wanted[job_id]} wanted")
        job = instance.jobs_by_id[job_id]
        total += _expected_rw(cluster, inp.speed, model_of[job_id], job, n, len(servers))
    unplaced = decision.get("unplaced")
    if not isinstance(unplaced, list) or sorted(unplaced) != sorted(set(wanted) - set(per_job)):
        raise VerificationError(f"unplaced {unplaced!r} is not the set of jobs without rows")
    for name, value in (("result", result.objective), ("decision", decision.get("objective"))):
        if not isinstance(value, (int, float)) or abs(value - total) > 1e-6 * max(1.0, total):
            raise VerificationError(f"{name} objective {value!r} != recomputed RW {total!r}")


# --------------------------------------------------------------------------- generator

#: Log2 profiles (t1, t2) per model, read off the 8-GPU rows of the Chronus
#: artifact's model_info.json (speed on 2 nodes = t1 / t2).
PROFILES: dict[str, tuple[float, float]] = {
    "alexnet": (1.0, 1.97),
    "vgg16": (1.0, 1.75),
    "resnet101": (1.0, 1.055),
    "mobilenet_v2": (1.0, 1.075),
    "inception_v3": (1.0, 1.083),
}
FRIENDLY = (1, 2, 4, 8, 16)
HOSTILE = (3, 5, 6, 7, 12)


def _earlier(rng: np.random.Generator, caps: list[int], target: float) -> list[dict[int, int]]:
    """A random earlier workload: jobs on random servers until ``target`` is used."""
    free = list(caps)
    goal = target * sum(caps)
    jobs: list[dict[int, int]] = []
    while sum(caps) - sum(free) < goal:
        left = int(rng.choice((1, 2, 3, 4, 6, 8)))
        rows: dict[int, int] = {}
        for s in rng.permutation(len(caps)):
            take = min(left, free[s])
            if take:
                rows[int(s)] = take
                free[s] -= take
                left -= take
            if not left:
                break
        if rows:
            jobs.append(rows)
        if left:
            break
    return jobs


def _new_job(rng: np.random.Generator, k: int, hostile: float, has_loan: bool) -> Job:
    gpus = int(rng.choice(HOSTILE if rng.random() < hostile else FRIENDLY))
    gpw = 2 if gpus % 2 == 0 and rng.random() < 0.25 else 1
    n = gpus // gpw
    lo = max(1, n // 2) if n > 1 and rng.random() < 0.15 else n
    gpu_type = "V100" if has_loan and rng.random() < 0.1 else None
    return Job(f"j{k + 1}", lo, n, float(rng.integers(600, 86_400)), gpw, gpu_type=gpu_type)


def generate_placement(n_servers: int, seed: int, *, n_jobs: int | None = None) -> Instance:
    """A seeded placement instance on ``n_servers`` 8-GPU servers.

    One in eight servers is a T4 inference server on loan (the rest V100
    training servers); an earlier workload fills 40-70% of the GPUs at
    random; the jobs to place ask for about 90% of the free GPUs (``n_jobs``
    overrides the count), 10-40% of them consolidation-hostile (3, 5, 6, 7, 12
    GPUs), 10% bound to V100, 15% elastic; each names a log2 profile.
    """
    if n_servers < 1:
        raise InvalidInstanceError("size", f"must be >= 1 servers, got {n_servers}")
    rng = np.random.default_rng(seed)
    n_loan = n_servers // 8
    servers = [Server(f"t{i + 1}", "V100", 8) for i in range(n_servers - n_loan)]
    servers += [Server(f"i{i + 1}", "T4", 8, "inference", True) for i in range(n_loan)]
    caps = [s.gpus for s in servers]
    earlier = _earlier(rng, caps, float(rng.uniform(0.4, 0.7)))
    jobs = [
        Job(f"e{k + 1}", sum(r.values()), sum(r.values()), 3600.0) for k, r in enumerate(earlier)
    ]
    rows = [
        PlacementRow(f"e{k + 1}", servers[s].id, w)
        for k, r in enumerate(earlier)
        for s, w in r.items()
    ]
    free = sum(caps) - sum(r.workers for r in rows)
    hostile = float(rng.uniform(0.1, 0.4))
    new: list[Job] = []
    demand = 0
    while (n_jobs is None and demand < 0.9 * free) or (n_jobs is not None and len(new) < n_jobs):
        job = _new_job(rng, len(new), hostile, n_loan > 0)
        new.append(job)
        demand += job.max_gpus
    names = sorted(PROFILES)
    models = {job.id: names[int(rng.integers(len(names)))] for job in new}
    sensitivity = {
        "kind": "log2",
        "models": {m: {"t1": t1, "t2": t2} for m, (t1, t2) in PROFILES.items()},
    }
    cluster = Cluster((GpuType("V100", 1.0, 32.0), GpuType("T4", 0.25, 16.0)), tuple(servers))
    params = {"sensitivity": sensitivity, "models": models}
    return Instance("placement", cluster, tuple(jobs + new), Placement(tuple(rows)), params)


def generate(size: str, seed: int) -> Instance:
    """The registry's generator: ``size`` is the number of servers (``"443"``: 1,000 jobs)."""
    try:
        n = int(size)
    except ValueError:
        raise InvalidInstanceError("size", f"must be a number of servers, got {size!r}") from None
    return generate_placement(n, seed, n_jobs=1000 if n == 443 else None)


# --------------------------------------------------------------------------- registry


def _run_bfd(inp: PlacementInput, options: SolveOptions) -> PlacementResult:
    return solve_bfd(inp)


def _run_round_up(inp: PlacementInput, options: SolveOptions) -> PlacementResult:
    return solve_round_up(inp)


def _run_quasi(inp: PlacementInput, options: SolveOptions) -> PlacementResult:
    return solve_quasi(inp)


def _run_local_search(inp: PlacementInput, options: SolveOptions) -> PlacementResult:
    return solve_local_search(inp)


def _run_exact(inp: PlacementInput, options: SolveOptions) -> PlacementResult:
    return exact_cpsat(inp, time_limit=options.limit, seed=options.seed)


def _run_exact_pulp(inp: PlacementInput, options: SolveOptions) -> PlacementResult:
    return exact_pulp(inp, time_limit=options.limit)


def _check(inp: Any, result: Result) -> None:
    check_placement(inp, result)


PROBLEM = Problem(
    name="placement",
    summary="worker placement: maximize total allocation reward RW (Chronus Eq. 7)",
    sense="max",
    parse=parse,
    methods=(
        Method("bfd", _run_bfd, summary="Aryl best-fit decreasing with pool preferences"),
        Method("round-up", _run_round_up, summary="Chronus RoundUp + Proposition 1 consolidation"),
        Method("quasi", _run_quasi, summary="quasi-consolidation: fewest servers, potential order"),
        Method("local-search", _run_local_search, summary="Chronus Algorithm 1 (|S| = 100,000)"),
        Method("exact", _run_exact, exact=True, summary="integer program, CP-SAT"),
        Method("exact-pulp", _run_exact_pulp, exact=True, summary="independent model, PuLP/CBC"),
    ),
    default="local-search",
    check=_check,
    generate=generate,
    sizes={
        "quick": ("6", "8"),
        "standard": ("16", "96", "120"),
        "paper": ("16", "96", "120"),
    },
)
