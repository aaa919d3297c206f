"""Aryl two-phase resource allocation for inelastic and elastic training jobs.

Given the free GPUs, the queued jobs and the running elastic jobs, decide how
many workers each job gets now so that the average job completion time (JCT)
is small. Aryl §5.1-§5.2, Appendix C (two-job analysis) and Appendix D
(Algorithm 2): phase one runs shortest-job-first on the inelastic workload
(inelastic jobs and elastic jobs' base demand); phase two gives the remaining
GPUs to elastic jobs' flexible demand with a multiple-choice knapsack
(:mod:`scheduling_opt.solvers.knapsack`).

Library API: :func:`two_phase`, the baselines :func:`fifo`, :func:`afs`,
:func:`max_elastic`, the enumeration :func:`exact_allocation`, the evaluator
:func:`simulate_elastic` (JCT of every job when an initial allocation runs
and finished jobs' GPUs are handed on), :func:`knapsack_groups` (Aryl's
phase-two MCKP) and :func:`free_capacity` (free GPUs of a cluster, on-loan
inference GPUs normalized to training GPUs). Every planner takes a
:class:`AllocationInput` and returns a :class:`Plan`.

Choices where the paper is vague (docs/allocation.md has the reasons): an
item's weight is ``w * D_j`` (the flexible GPUs; Algorithm 2 line 17 writes
``(w + w_min) D_j``); ``Job.duration`` is the (remaining) running time at
``max_workers``; scaling is linear unless ``Scaling.exponent`` < 1
(throughput ~ workers ** exponent, Aryl §7.2).

Complexity: two-phase O(n log n + MCKP), the MCKP being O(sum_j
(max_j - min_j) * C') by :func:`~scheduling_opt.solvers.knapsack.solve_dp`;
``fifo``, ``max-elastic`` O(n log n); ``afs`` O(n C); :func:`simulate_elastic`
O(n^2); ``exact`` O(prod_j choices_j * n^2), refused above
:data:`EXACT_LIMIT` allocations.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from scheduling_opt.errors import InstanceTooLargeError, InvalidInstanceError, VerificationError
from scheduling_opt.instance import FORMAT, Instance, from_dict
from scheduling_opt.jsonpath import check_keys, read_int, read_number, read_object
from scheduling_opt.model import Cluster, Job, Placement
from scheduling_opt.result import Result, SolveOptions, Status
from scheduling_opt.solvers import knapsack
from scheduling_opt.solvers.registry import Method, Problem

#: The exact method refuses instances with more initial allocations than this.
EXACT_LIMIT = 200_000

#: Relative tolerance of time comparisons in the simulator and the checker.
TOLERANCE = 1e-9


# --------------------------------------------------------------------------- model


@dataclass(frozen=True, slots=True)
class Scaling:
    """Throughput ~ workers ** exponent within a job's range (1: linear, Aryl §5)."""

    exponent: float = 1.0

    def __post_init__(self) -> None:
        if not 0 < self.exponent <= 1 or not math.isfinite(self.exponent):
            raise InvalidInstanceError("exponent", f"must be in (0, 1], got {self.exponent!r}")

    def time(self, job: Job, workers: int) -> float:
        """Running time of the whole job at a constant ``workers``."""
        return float(job.duration * (job.max_workers / workers) ** self.exponent)


LINEAR = Scaling()


@dataclass(frozen=True, slots=True)
class AllocationInput:
    """The jobs to allocate and the GPUs they may use.

    ``jobs``: queued jobs and running elastic jobs, in queue order.
    ``capacity``: free GPUs (idle GPUs plus those held by running elastic
    jobs' flexible workers), in training-GPU units. ``running``: current
    worker count of each running elastic job; its base demand keeps running
    and is not part of ``capacity``. Durations of running jobs are their
    remaining running time at ``max_workers``.
    """

    jobs: tuple[Job, ...]
    capacity: int
    running: Mapping[str, int] = field(default_factory=dict)
    scaling: Scaling = LINEAR
    total_gpus: int = field(init=False, repr=False, compare=False)
    """GPUs the simulation hands out: ``capacity`` plus running base demand
    (computed once: the exact method evaluates up to 200,000 allocations)."""

    def __post_init__(self) -> None:
        object.__setattr__(self, "jobs", tuple(self.jobs))
        object.__setattr__(self, "running", dict(self.running))
        if isinstance(self.capacity, bool) or not isinstance(self.capacity, int):
            raise InvalidInstanceError("capacity", f"must be an integer, got {self.capacity!r}")
        if self.capacity < 0:
            raise InvalidInstanceError("capacity", f"must be >= 0, got {self.capacity}")
        ids = {j.id for j in self.jobs}
        if len(ids) != len(self.jobs):
            raise InvalidInstanceError("jobs", "duplicate job ids")
        for job_id in self.running:
            if job_id not in ids:
                raise InvalidInstanceError("running", f"unknown job {job_id!r}")
        by_id = {j.id: j for j in self.jobs}
        base = sum(by_id[j].min_gpus for j in self.running)
        object.__setattr__(self, "total_gpus", self.capacity + base)

    def queued(self) -> list[Job]:
        return [j for j in self.jobs if j.id not in self.running]


@dataclass(frozen=True, slots=True)
class Plan:
    """Workers per job (0: stays queued) and the queued jobs that start now."""

    workers: Mapping[str, int]
    start_now: tuple[str, ...]
    knapsack_value: float | None = None


@dataclass(frozen=True, slots=True)
class AllocationResult:
    """A plan with its simulated completion times; objective = average JCT."""

    plan: Plan
    jct: Mapping[str, float]
    status: Status
    objective: float | None
    seconds: float
    method: str = ""
    evaluated: int = 0

    def decision(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "workers": dict(self.plan.workers),
            "start_now": list(self.plan.start_now),
            "average_jct": self.objective,
            "jct": dict(self.jct),
        }
        if self.plan.knapsack_value is not None:
            out["knapsack_value"] = self.plan.knapsack_value
        return out


# --------------------------------------------------------------------------- simulation


def simulate_elastic(
    jobs: Sequence[Job],
    capacity: int,
    allocation: Mapping[str, int],
    *,
    scaling: Scaling = LINEAR,
) -> dict[str, float]:
    """Completion time of every job when ``allocation`` runs from time 0.

    ``capacity``: GPUs for these jobs; ``allocation``: job id -> workers (0 or
    absent: queued). Whenever jobs finish, their GPUs go first to queued jobs
    in ``jobs`` order at their base demand (a job that does not fit is
    skipped), then to running elastic jobs in ``jobs`` order up to their
    maximum (Aryl Table 3's rule). Nothing is ever shrunk or preempted.
    """
    _check_allocation(jobs, capacity, allocation)
    workers = {j.id: int(allocation.get(j.id, 0)) for j in jobs}
    left = {j.id: 1.0 for j in jobs}
    done: dict[str, float] = {}
    now = 0.0
    while len(done) < len(jobs):
        if not any(workers[j.id] for j in jobs if j.id not in done):
            _hand_out(jobs, capacity, workers, done)
        active = [j for j in jobs if j.id not in done and workers[j.id]]
        if not active:
            raise InvalidInstanceError("capacity", f"{capacity} GPUs cannot run the queued jobs")
        finish = {j.id: left[j.id] * scaling.time(j, workers[j.id]) for j in active}
        step = min(finish.values())
        now += step
        for j in active:
            if finish[j.id] <= step * (1 + TOLERANCE):
                done[j.id] = now
                workers[j.id] = 0
            else:
                left[j.id] -= step / scaling.time(j, workers[j.id])
        _hand_out(jobs, capacity, workers, done)
    return {j.id: done[j.id] for j in jobs}


def _hand_out(
    jobs: Sequence[Job], capacity: int, workers: dict[str, int], done: Mapping[str, float]
) -> None:
    room = capacity - sum(workers[j.id] * j.gpus_per_worker for j in jobs)
    for j in jobs:
        if j.id not in done and not workers[j.id] and j.min_gpus <= room:
            workers[j.id] = j.min_workers
            room -= j.min_gpus
    for j in jobs:
        if j.id not in done and workers[j.id]:
            extra = min(j.max_workers - workers[j.id], room // j.gpus_per_worker)
            workers[j.id] += extra
            room -= extra * j.gpus_per_worker


def _check_allocation(jobs: Sequence[Job], capacity: int, allocation: Mapping[str, int]) -> None:
    known = {j.id for j in jobs}
    for job_id in allocation:
        if job_id not in known:
            raise InvalidInstanceError("allocation", f"unknown job {job_id!r}")
    used = 0
    for j in jobs:
        k = allocation.get(j.id, 0)
        if k and not j.min_workers <= k <= j.max_workers:
            raise InvalidInstanceError(
                f"allocation.{j.id}", f"must be 0 or {j.min_workers}..{j.max_workers}, got {k}"
            )
        used += k * j.gpus_per_worker
    if used > capacity:
        raise InvalidInstanceError("allocation", f"uses {used} GPUs of {capacity}")


def average_jct(inp: AllocationInput, workers: Mapping[str, int]) -> tuple[float, dict[str, float]]:
    """Average and per-job JCT of ``workers`` under :func:`simulate_elastic`."""
    jct = simulate_elastic(inp.jobs, inp.total_gpus, workers, scaling=inp.scaling)
    return (sum(jct.values()) / len(jct) if jct else 0.0), jct


# --------------------------------------------------------------------------- two-phase


def knapsack_groups(jobs: Sequence[Job], capacity: int, scaling: Scaling = LINEAR) -> knapsack.Mckp:
    """Aryl's phase-two MCKP: one group per elastic job, item w = w extra workers.

    Weight ``w * D_j`` (the flexible GPUs the knapsack of remaining GPUs must
    hold); value ``T(min) - T(min + w)``, the JCT reduction over the running
    time at base demand (= ``T_base * w / (w + min)`` when linear).
    """
    weights, values = [], []
    for j in jobs:
        extra = np.arange(1, j.max_workers - j.min_workers + 1)
        base = scaling.time(j, j.min_workers)
        weights.append(extra * j.gpus_per_worker)
        values.append(np.array([base - scaling.time(j, j.min_workers + int(w)) for w in extra]))
    return knapsack.Mckp.from_arrays(weights, values, capacity)


def _sjf_key(
    scaling: Scaling, workers: Callable[[Job], int]
) -> Callable[[tuple[int, Job]], tuple[float, int]]:
    return lambda item: (scaling.time(item[1], workers(item[1])), item[0])


def two_phase(inp: AllocationInput) -> Plan:
    """Aryl Algorithm 2: SJF on the base demand, then an MCKP on flexible demand.

    Phase one walks queued jobs by running time at base demand (shortest
    first) and admits each whose base demand fits, skipping the others.
    Phase two solves :func:`knapsack_groups` over admitted and running
    elastic jobs with the GPUs left, exactly, by dynamic programming.
    """
    order = sorted(enumerate(inp.queued()), key=_sjf_key(inp.scaling, lambda j: j.min_workers))
    room, admitted = inp.capacity, []
    for _, job in order:
        if job.min_gpus <= room:
            admitted.append(job)
            room -= job.min_gpus
    chosen = {j.id for j in admitted}
    elastic = [j for j in inp.jobs if j.elastic and (j.id in chosen or j.id in inp.running)]
    solution = knapsack.solve_dp(knapsack_groups(elastic, room, inp.scaling))
    workers = {
        j.id: j.min_workers if j.id in chosen or j.id in inp.running else 0 for j in inp.jobs
    }
    for job, item in zip(elastic, solution.choice, strict=True):
        if item is not None:
            workers[job.id] += item + 1
    return Plan(workers, tuple(j.id for j in admitted), solution.objective)


# --------------------------------------------------------------------------- baselines


def fifo(inp: AllocationInput) -> Plan:
    """No elasticity, no reordering: queued jobs in order at their full demand.

    Running elastic jobs keep their current workers; the first queued job
    whose maximum demand does not fit blocks the rest of the queue.
    """
    by_id = {j.id: j for j in inp.jobs}
    room = inp.capacity - sum(
        (k - by_id[i].min_workers) * by_id[i].gpus_per_worker for i, k in inp.running.items()
    )
    workers = {j.id: inp.running.get(j.id, 0) for j in inp.jobs}
    started = []
    for job in inp.queued():
        if job.max_gpus > room:
            break
        workers[job.id] = job.max_workers
        room -= job.max_gpus
        started.append(job.id)
    return Plan(workers, tuple(started))


def _throughput_gain(scaling: Scaling, job: Job, k: int) -> float:
    return (1 / scaling.time(job, k + 1) - 1 / scaling.time(job, k)) / job.gpus_per_worker


def afs(inp: AllocationInput) -> Plan:
    """AFS as Aryl §7.1 implements it: base demand first, then worker by worker.

    Queued jobs get their base demand in queue order when it fits; then one
    worker at a time goes to the job with the largest throughput gain per GPU,
    throughput being the job's progress rate 1 / T(workers).
    """
    room, workers, started = inp.capacity, {}, []
    for job in inp.jobs:
        base = job.id in inp.running or job.min_gpus <= room
        if base and job.id not in inp.running:
            room -= job.min_gpus
            started.append(job.id)
        workers[job.id] = job.min_workers if base else 0
    while True:
        best: tuple[float, int, Job] | None = None
        for i, job in enumerate(inp.jobs):
            k = workers[job.id]
            if k and k < job.max_workers and job.gpus_per_worker <= room:
                cand = (-_throughput_gain(inp.scaling, job, k), i, job)
                best = cand if best is None or cand[:2] < best[:2] else best
        if best is None:
            return Plan(workers, tuple(started))
        workers[best[2].id] += 1
        room -= best[2].gpus_per_worker


def max_elastic(inp: AllocationInput) -> Plan:
    """Elastic jobs at their maximum: shortest (at max demand) first, as many workers as fit."""
    order = sorted(enumerate(inp.jobs), key=_sjf_key(inp.scaling, lambda j: j.max_workers))
    room, workers, started = inp.capacity, {j.id: 0 for j in inp.jobs}, []
    for _, job in order:
        running = job.id in inp.running
        if not running and job.min_gpus > room:
            continue
        if not running:
            room -= job.min_gpus
            started.append(job.id)
        extra = min(job.max_workers - job.min_workers, room // job.gpus_per_worker)
        workers[job.id] = job.min_workers + extra
        room -= extra * job.gpus_per_worker
    return Plan(workers, tuple(j for j in (x.id for x in inp.jobs) if j in started))


# --------------------------------------------------------------------------- exact


def _choices(inp: AllocationInput) -> list[list[int]]:
    out = []
    for j in inp.jobs:
        # Largest first: among allocations of equal JCT the first found runs the most.
        span = list(range(j.max_workers, j.min_workers - 1, -1))
        out.append(span if j.id in inp.running else [*span, 0])
    return out


def _magnitude(count: int) -> str:
    """``6.96e+16``; an integer beyond float range (1000 jobs) as ``~10^1234``."""
    try:
        return f"{count:.3g}"
    except OverflowError:
        return f"~10^{len(str(count)) - 1}"


def allocation_count(inp: AllocationInput) -> int:
    """Initial allocations :func:`exact_allocation` would enumerate (capacity ignored)."""
    return math.prod(len(c) for c in _choices(inp))


def _feasible(inp: AllocationInput) -> Iterable[dict[str, int]]:
    choices, jobs = _choices(inp), inp.jobs
    budget = inp.total_gpus
    current: dict[str, int] = {}

    def walk(i: int, room: int) -> Iterable[dict[str, int]]:
        if i == len(jobs):
            yield dict(current)
            return
        for k in choices[i]:
            need = k * jobs[i].gpus_per_worker
            if need <= room:
                current[jobs[i].id] = k
                yield from walk(i + 1, room - need)

    yield from walk(0, budget)


def exact_allocation(inp: AllocationInput, *, time_limit: float = 60.0) -> tuple[Plan, Status, int]:
    """The initial allocation minimizing average JCT under :func:`simulate_elastic`.

    Enumerates every allocation (queued jobs 0 or min..max workers, running
    jobs min..max) that fits; returns the plan, ``optimal`` or
    ``time_limit`` (best so far) and how many allocations it evaluated.
    Refuses (InstanceTooLargeError) above :data:`EXACT_LIMIT` allocations.
    """
    count = allocation_count(inp)
    if count > EXACT_LIMIT:
        raise InstanceTooLargeError(
            "jobs",
            f"{_magnitude(count)} allocations to enumerate, more than the exact method's "
            f"limit {EXACT_LIMIT}",
        )
    start, best, best_value, seen = time.perf_counter(), None, math.inf, 0
    status = Status.OPTIMAL
    for workers in _feasible(inp):
        seen += 1
        value, _ = average_jct(inp, workers)
        if value < best_value * (1 - TOLERANCE):
            best, best_value = workers, value
        if seen % 256 == 0 and time.perf_counter() - start > time_limit:
            status = Status.TIME_LIMIT
            break
    assert best is not None  # all-zero queued / running at min always fits
    started = tuple(j.id for j in inp.queued() if best[j.id])
    return Plan(best, started), status, seen


# --------------------------------------------------------------------------- instances


def _reference_compute(cluster: Cluster) -> float:
    training = [
        cluster.gpu_type(s.gpu_type).compute for s in cluster.servers if s.pool == "training"
    ]
    if training:
        return max(training)
    # No servers at all: no capacity either, any positive reference will do.
    return max((cluster.gpu_type(s.gpu_type).compute for s in cluster.servers), default=1.0)


def free_capacity(cluster: Cluster, jobs: Mapping[str, Job], placement: Placement) -> int:
    """Free GPUs in training-GPU units (Aryl §5.2), floored to an integer.

    Idle GPUs of servers usable for training, plus the GPUs of running elastic
    jobs' flexible workers, each weighted by its type's compute relative to
    the training GPU (the fastest training-pool type): an on-loan T4 (0.25)
    idle next to V100s (1.0) adds a quarter of a GPU. A running job's flexible
    workers are counted on its slowest servers first (Aryl §5.3 places
    flexible demand on inference servers).
    """
    ref = _reference_compute(cluster)
    used: dict[str, int] = {}
    total = 0.0
    for job_id in placement.jobs():
        job = jobs[job_id]
        rows = sorted(
            placement.servers_of(job_id).items(),
            key=lambda kv: (cluster.gpu_type(cluster.server(kv[0]).gpu_type).compute, kv[0]),
        )
        flexible = (
            (sum(n for _, n in rows) - job.min_workers) * job.gpus_per_worker if job.elastic else 0
        )
        for server, n in rows:
            gpus = n * job.gpus_per_worker
            used[server] = used.get(server, 0) + gpus
            freed = min(flexible, gpus)
            flexible -= freed
            total += freed * cluster.gpu_type(cluster.server(server).gpu_type).compute / ref
    for s in cluster.servers:
        if s.usable_for_training:
            total += (s.gpus - used.get(s.id, 0)) * cluster.gpu_type(s.gpu_type).compute / ref
    return math.floor(total + 1e-9)


def _scaling(value: object) -> Scaling:
    if value == "linear":
        return LINEAR
    obj = read_object(value, "params.scaling")
    check_keys(obj, "params.scaling", ("exponent",), ("exponent",))
    exponent = read_number(obj["exponent"], "params.scaling.exponent")
    if not 0 < exponent <= 1:
        raise InvalidInstanceError(
            "params.scaling.exponent", f"must be in (0, 1], got {exponent!r}"
        )
    return Scaling(exponent)


def parse_allocation(instance: Instance) -> AllocationInput:
    """Queued jobs (no placement rows) and running elastic jobs (rows) with the free GPUs.

    ``params``: ``capacity`` (free GPUs, overrides the cluster's count) and
    ``scaling`` (``"linear"`` or ``{"exponent": a}``, 0 < a <= 1). Running
    inelastic jobs only hold GPUs. Without a cluster, ``capacity`` is required.
    """
    params = instance.params
    check_keys(params, "params", ("capacity", "scaling"), ())
    instance.require_no_other_sections()
    scaling = _scaling(params.get("scaling", "linear"))
    placed = set(instance.placement.jobs())
    if "capacity" in params:
        capacity = read_int(params["capacity"], "params.capacity", 0)
    elif instance.cluster is None:
        raise InvalidInstanceError("params.capacity", "missing (needed when there is no cluster)")
    else:
        capacity = free_capacity(instance.cluster, instance.jobs_by_id, instance.placement)
    jobs = tuple(j for j in instance.jobs if j.id not in placed or j.elastic)
    running = {j: instance.placement.workers_of(j) for j in placed if instance.job(j).elastic}
    inp = AllocationInput(jobs, capacity, running, scaling)
    total = inp.total_gpus
    for i, job in enumerate(instance.jobs):
        if job.id not in placed and job.min_gpus > total:
            raise InvalidInstanceError(
                f"jobs[{i}].min_workers",
                f"job {job.id!r} needs {job.min_gpus} GPUs at base demand, only {total} can ever be free",
            )
    return inp


def generate(size: str, seed: int) -> Instance:
    """``n<jobs>``: V100 training servers, one on-loan T4 server, mixed jobs.

    About half the jobs are elastic; a quarter of the elastic ones already
    run (one server each); there are GPUs for roughly half the base demand
    at maximum, so allocation matters.
    """
    try:
        n = int(size.removeprefix("n")) if size.startswith("n") else -1
    except ValueError:
        n = -1
    if n < 1:
        raise InvalidInstanceError("size", f"expected n<jobs> (n >= 1), got {size!r}")
    rng = np.random.default_rng(seed)
    jobs: list[dict[str, Any]] = []
    placement: list[dict[str, Any]] = []
    servers = [{"id": "t4-0", "gpu_type": "T4", "gpus": 8, "pool": "inference", "on_loan": True}]
    for i in range(n):
        d = int(rng.choice([1, 1, 2]))
        lo = int(rng.integers(1, 4))
        hi = lo + (int(rng.integers(1, 4)) if rng.random() < 0.5 else 0)
        job = {
            "id": f"j{i}",
            "gpus_per_worker": d,
            "min_workers": lo,
            "max_workers": hi,
            "duration": float(np.round(rng.uniform(10, 200), 1)),
        }
        jobs.append(job)
        if hi > lo and rng.random() < 0.25 and hi * d <= 8:
            server = f"v{len(servers)}"
            servers.append({"id": server, "gpu_type": "V100", "gpus": 8, "pool": "training"})
            placement.append(
                {"job": job["id"], "server": server, "workers": int(rng.integers(lo, hi + 1))}
            )
    demand = sum(int(j["min_workers"]) * int(j["gpus_per_worker"]) for j in jobs)
    for _ in range(max(1, demand // 16)):
        servers.append(
            {"id": f"v{len(servers)}", "gpu_type": "V100", "gpus": 8, "pool": "training"}
        )
    doc = {
        "format": FORMAT,
        "problem": "allocation",
        "cluster": {
            "gpu_types": [
                {"name": "V100", "compute": 1.0},
                {"name": "T4", "compute": 0.25, "memory_gb": 16},
            ],
            "servers": servers,
        },
        "jobs": jobs,
        "placement": placement,
    }
    return from_dict(doc)


# --------------------------------------------------------------------------- checker


def check_allocation(inp: AllocationInput, result: Result) -> None:
    """Independent check: worker ranges, capacity, running jobs kept, JCTs."""
    decision = result.decision()
    workers = decision.get("workers")
    if not isinstance(workers, dict) or set(workers) != {j.id for j in inp.jobs}:
        raise VerificationError("workers must name every job exactly once")
    gpus = 0
    for j in inp.jobs:
        k = workers[j.id]
        if isinstance(k, bool) or not isinstance(k, int):
            raise VerificationError(f"job {j.id}: workers must be an integer, got {k!r}")
        if j.id in inp.running and not j.min_workers <= k <= j.max_workers:
            raise VerificationError(
                f"running job {j.id} must keep {j.min_workers}..{j.max_workers} workers, got {k}"
            )
        if k and not j.min_workers <= k <= j.max_workers:
            raise VerificationError(
                f"job {j.id}: {k} workers outside {j.min_workers}..{j.max_workers}"
            )
        gpus += (k - (j.min_workers if j.id in inp.running else 0)) * j.gpus_per_worker
    if gpus > inp.capacity:
        raise VerificationError(f"allocation uses {gpus} free GPUs of {inp.capacity}")
    expected = sorted(j.id for j in inp.queued() if workers[j.id])
    if sorted(decision.get("start_now", [])) != expected:
        raise VerificationError(f"start_now must list the queued jobs given workers: {expected}")
    _check_times(inp, workers, result.objective)


def _check_times(inp: AllocationInput, workers: Mapping[str, int], objective: float | None) -> None:
    """Replay the JCTs with an event loop written independently of the simulator."""
    jobs = list(inp.jobs)
    alloc = dict(workers)
    progress = dict.fromkeys(alloc, 0.0)
    finish: dict[str, float] = {}
    t, first = 0.0, True
    while len(finish) < len(jobs):
        live = [j for j in jobs if j.id not in finish and alloc[j.id]]
        if not first or not live:
            _refill(jobs, inp.total_gpus, alloc, finish)
            live = [j for j in jobs if j.id not in finish and alloc[j.id]]
        first = False
        if not live:
            raise VerificationError("no job can run")
        rate = {j.id: 1 / inp.scaling.time(j, alloc[j.id]) for j in live}
        dt = min((1 - progress[j.id]) / rate[j.id] for j in live)
        t += dt
        for j in live:
            progress[j.id] += dt * rate[j.id]
            if progress[j.id] >= 1 - 1e-9:
                finish[j.id] = t
                alloc[j.id] = 0
    mean = sum(finish.values()) / len(finish) if finish else 0.0
    if objective is None or abs(objective - mean) > 1e-6 * (1 + mean):
        raise VerificationError(f"reported average JCT {objective} != replayed {mean}")


def _refill(
    jobs: list[Job], total: int, alloc: dict[str, int], finish: Mapping[str, float]
) -> None:
    free = total - sum(alloc[j.id] * j.gpus_per_worker for j in jobs if j.id not in finish)
    for j in jobs:
        if j.id not in finish and alloc[j.id] == 0 and j.min_gpus <= free:
            alloc[j.id], free = j.min_workers, free - j.min_gpus
    for j in jobs:
        if j.id not in finish and alloc[j.id]:
            grow = min(j.max_workers - alloc[j.id], free // j.gpus_per_worker)
            alloc[j.id], free = alloc[j.id] + grow, free - grow * j.gpus_per_worker


# --------------------------------------------------------------------------- registry


def _wrap(
    name: str, planner: Callable[[AllocationInput], Plan]
) -> Callable[[AllocationInput, SolveOptions], AllocationResult]:
    def run(inp: AllocationInput, options: SolveOptions) -> AllocationResult:
        start = time.perf_counter()
        plan = planner(inp)
        value, jct = average_jct(inp, plan.workers)
        return AllocationResult(
            plan, jct, Status.FEASIBLE, value, time.perf_counter() - start, name
        )

    return run


def _run_exact(inp: AllocationInput, options: SolveOptions) -> AllocationResult:
    start = time.perf_counter()
    plan, status, seen = exact_allocation(inp, time_limit=options.limit)
    value, jct = average_jct(inp, plan.workers)
    return AllocationResult(plan, jct, status, value, time.perf_counter() - start, "exact", seen)


PROBLEM = Problem(
    name="allocation",
    summary="Aryl two-phase allocation of queued and running elastic jobs (avg JCT)",
    sense="min",
    parse=parse_allocation,
    methods=(
        Method(
            "two-phase", _wrap("two-phase", two_phase), summary="SJF on base demand + MCKP (Aryl)"
        ),
        Method("fifo", _wrap("fifo", fifo), summary="queue order, full demand, no elasticity"),
        Method("afs", _wrap("afs", afs), summary="base demand, then best throughput gain per GPU"),
        Method(
            "max-elastic", _wrap("max-elastic", max_elastic), summary="SJF, elastic jobs at max"
        ),
        Method("exact", _run_exact, exact=True, summary="enumerate initial allocations (small n)"),
    ),
    default="two-phase",
    check=check_allocation,
    generate=generate,
    sizes={
        "quick": ("n4",),
        "standard": ("n4", "n5", "n6", "n40"),
        "paper": ("n6", "n200", "n1000"),
    },
)
