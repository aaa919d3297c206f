"""AntMan GPU-memory split among opportunistic jobs sharing one GPU (problem ``memory-split``).

A GPU's memory left over by its resource-guarantee job is split, in chunks,
among the opportunistic jobs co-located on it; each job's speed is a
piecewise-linear slowdown curve of the fraction of its peak memory it gets
(the rest spills to host memory), and the split maximizes the sum of the jobs'
normalized speeds. AntMan §3.3 ("Local coordinator", Figure 10) uses a greedy
trial-and-error; the exact baseline is a multiple-choice knapsack over memory
chunks solved by :func:`scheduling_opt.solvers.knapsack.solve_dp`.

Methods: ``greedy`` (the paper's heuristic: start every job at its minimum and
give one chunk at a time to the job whose normalized speed gains most, stop
when no chunk helps), ``exact`` (MCKP dynamic program), ``exact-milp`` (the
same MCKP through HiGHS, a cross-check).

Complexity, n jobs, C chunks of spare memory, K <= C chunks per job: greedy
O(C log n) with a heap; exact O(n K C) (the knapsack DP); the MILP is
exponential in the worst case.
"""

from __future__ import annotations

import heapq
import math
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from scheduling_opt.errors import InvalidInstanceError, VerificationError
from scheduling_opt.instance import FORMAT, Instance, from_dict
from scheduling_opt.jsonpath import (
    check_keys,
    read_array,
    read_number,
    read_object,
    read_string,
)
from scheduling_opt.result import Result, SolveOptions, Status
from scheduling_opt.solvers import knapsack as kn
from scheduling_opt.solvers.registry import Method, Problem

#: Relative tolerance of objective comparisons.
TOLERANCE = 1e-9

Curve = tuple[tuple[float, float], ...]

#: Slowdown curves read off AntMan Figure 10 as (memory fraction, normalized speed).
#: SR: ~25% slower at a 90% memory cut; VGG: keeps most speed at half its
#: memory; ResNet: a 10% cut costs more than 60% of its speed.
PRESETS: Mapping[str, Curve] = {
    "sr": ((0.1, 0.75), (1.0, 1.0)),
    "vgg": ((0.1, 0.35), (0.5, 0.9), (1.0, 1.0)),
    "resnet": ((0.1, 0.1), (0.9, 0.38), (1.0, 1.0)),
}


def check_curve(curve: Sequence[tuple[float, float]], path: str = "curve") -> Curve:
    """A valid curve: fractions strictly increasing in (0, 1] ending at 1, speeds
    in [0, 1] and non-decreasing (more device memory never slows a job down)."""
    points = tuple((float(f), float(s)) for f, s in curve)
    if not points:
        raise InvalidInstanceError(path, "needs at least one point")
    for i, (f, s) in enumerate(points):
        if not (0 < f <= 1 and math.isfinite(f)):
            raise InvalidInstanceError(f"{path}[{i}]", f"fraction must be in (0, 1], got {f!r}")
        if not (0 <= s <= 1 and math.isfinite(s)):
            raise InvalidInstanceError(f"{path}[{i}]", f"speed must be in [0, 1], got {s!r}")
        if i and (f <= points[i - 1][0] or s < points[i - 1][1]):
            raise InvalidInstanceError(
                f"{path}[{i}]", "fractions must increase and speeds must not decrease"
            )
    if points[-1][0] != 1.0:
        raise InvalidInstanceError(path, "the last point must be at fraction 1")
    return points


@dataclass(frozen=True, slots=True)
class OpportunisticJob:
    """A job on the shared GPU: peak memory demand and its slowdown curve.

    The curve's first fraction is the least it can run with (its persistent
    model and working set); below it the job cannot run.
    """

    id: str
    peak_gb: float
    curve: Curve

    def __post_init__(self) -> None:
        if not isinstance(self.id, str) or not self.id:
            raise InvalidInstanceError("id", f"must be a non-empty string, got {self.id!r}")
        if not (math.isfinite(self.peak_gb) and self.peak_gb > 0):
            raise InvalidInstanceError("peak_gb", f"must be > 0, got {self.peak_gb!r}")
        object.__setattr__(self, "curve", check_curve(self.curve))

    def speed(self, gb: float) -> float:
        """Normalized speed (1 = exclusive GPU) with ``gb`` of device memory."""
        fractions, speeds = zip(*self.curve, strict=True)
        return float(np.interp(min(gb / self.peak_gb, 1.0), fractions, speeds))


MAX_CHUNKS = 100_000
"""Most memory chunks a GPU (or one job's peak) may be split into."""


@dataclass(frozen=True, slots=True)
class MemorySplitInput:
    """One GPU: its memory, what its guarantee job holds, the chunk size, the jobs."""

    memory_gb: float
    jobs: tuple[OpportunisticJob, ...]
    guarantee_gb: float = 0.0
    chunk_gb: float = 0.25

    def __post_init__(self) -> None:
        object.__setattr__(self, "jobs", tuple(self.jobs))
        for name in ("memory_gb", "chunk_gb"):
            value = getattr(self, name)
            if not (math.isfinite(value) and value > 0):
                raise InvalidInstanceError(name, f"must be > 0, got {value!r}")
        if not (0 <= self.guarantee_gb <= self.memory_gb):
            raise InvalidInstanceError(
                "guarantee_gb", f"must be in [0, memory_gb], got {self.guarantee_gb!r}"
            )
        ids = [j.id for j in self.jobs]
        if len(set(ids)) != len(ids):
            raise InvalidInstanceError("jobs", f"duplicate job ids in {ids}")
        # The exact split is a DP over chunks: 1e-12 GB chunks would ask for
        # terabytes of table, so the chunk count is bounded up front.
        chunks = max([self.memory_gb, *(j.peak_gb for j in self.jobs)]) / self.chunk_gb
        if chunks > MAX_CHUNKS:
            raise InvalidInstanceError(
                "chunk_gb",
                f"{self.chunk_gb!r} GB makes {chunks:.3g} chunks of memory, more than "
                f"{MAX_CHUNKS}; use a larger chunk",
            )

    @property
    def capacity(self) -> int:
        """Whole chunks of memory left by the guarantee job (float noise forgiven)."""
        return math.floor((self.memory_gb - self.guarantee_gb) / self.chunk_gb + 1e-9)

    def min_chunks(self, job: OpportunisticJob) -> int:
        return math.ceil(job.curve[0][0] * job.peak_gb / self.chunk_gb - 1e-9)

    def max_chunks(self, job: OpportunisticJob) -> int:
        return math.ceil(job.peak_gb / self.chunk_gb - 1e-9)

    def grant_gb(self, job: OpportunisticJob, chunks: int) -> float:
        return min(chunks * self.chunk_gb, job.peak_gb)

    def speed(self, job: OpportunisticJob, chunks: int) -> float:
        return job.speed(self.grant_gb(job, chunks))

    def bounds(self) -> list[tuple[int, int]]:
        return [(self.min_chunks(j), self.max_chunks(j)) for j in self.jobs]

    def speed_table(self, job: OpportunisticJob) -> NDArray[np.float64]:
        """Speeds at min_chunks .. max_chunks chunks, in one vectorized pass."""
        ks = np.arange(self.min_chunks(job), self.max_chunks(job) + 1)
        fractions, speeds = zip(*job.curve, strict=True)
        grant = np.minimum(ks * self.chunk_gb, job.peak_gb) / job.peak_gb
        out: NDArray[np.float64] = np.interp(np.minimum(grant, 1.0), fractions, speeds)
        return out


@dataclass(frozen=True, slots=True)
class MemorySplit:
    """Chunks per job (same order as the input's jobs); empty when infeasible."""

    status: Status
    objective: float | None
    seconds: float
    method: str
    ids: tuple[str, ...]
    chunks: tuple[int, ...]
    memory_gb: tuple[float, ...]
    speeds: tuple[float, ...]

    def decision(self) -> dict[str, Any]:
        return {
            "chunks": dict(zip(self.ids, self.chunks, strict=True)),
            "memory_gb": dict(zip(self.ids, self.memory_gb, strict=True)),
            "speed": dict(zip(self.ids, self.speeds, strict=True)),
        }


def _result(
    problem: MemorySplitInput, chunks: Sequence[int] | None, status: Status, start: float, m: str
) -> MemorySplit:
    ids = tuple(j.id for j in problem.jobs)
    seconds = time.perf_counter() - start
    if chunks is None:
        return MemorySplit(status, None, seconds, m, ids, (), (), ())
    grants = tuple(problem.grant_gb(j, k) for j, k in zip(problem.jobs, chunks, strict=True))
    speeds = tuple(problem.speed(j, k) for j, k in zip(problem.jobs, chunks, strict=True))
    return MemorySplit(status, math.fsum(speeds), seconds, m, ids, tuple(chunks), grants, speeds)


def _infeasible(problem: MemorySplitInput) -> bool:
    return sum(lo for lo, _ in problem.bounds()) > problem.capacity


def solve_greedy(problem: MemorySplitInput) -> MemorySplit:
    """AntMan's trial-and-error: each chunk to the job whose speed gains most.

    Every job first gets its minimum. A trial gives one more chunk to each job
    in turn and measures the gain; the best trial is kept (ties: earlier job).
    It stops when memory runs out or no trial improves the aggregate, so a job
    whose speed only rises near full memory (ResNet) can be starved: that is
    the gap to ``exact``.
    """
    start = time.perf_counter()
    if _infeasible(problem):
        return _result(problem, None, Status.INFEASIBLE, start, "greedy")
    bounds = problem.bounds()
    tables = [problem.speed_table(j).tolist() for j in problem.jobs]
    chunks = [lo for lo, _ in bounds]
    left = problem.capacity - sum(chunks)
    heap: list[tuple[float, int]] = []

    def push(i: int) -> None:
        k = chunks[i] - bounds[i][0]
        if k + 1 < len(tables[i]):
            heapq.heappush(heap, (tables[i][k] - tables[i][k + 1], i))

    for i in range(len(chunks)):
        push(i)
    while left > 0 and heap:
        neg_gain, i = heapq.heappop(heap)
        if -neg_gain <= 0:
            break
        chunks[i] += 1
        left -= 1
        push(i)
    return _result(problem, chunks, Status.FEASIBLE, start, "greedy")


def to_mckp(problem: MemorySplitInput) -> kn.Mckp:
    """One group per job: items are grants above its minimum, valued by the speed gained.

    Choosing no item means the minimum, so every job runs; weights are chunks
    above the minimum and the capacity is what the minimums leave.
    """
    weights, values = [], []
    for job in problem.jobs:
        table = problem.speed_table(job)
        weights.append(np.arange(1, len(table)))
        values.append(table[1:] - table[0])
    capacity = problem.capacity - sum(lo for lo, _ in problem.bounds())
    return kn.Mckp.from_arrays(weights, values, capacity)


def _from_choice(problem: MemorySplitInput, choice: Sequence[int | None]) -> list[int]:
    return [
        lo + (0 if c is None else c + 1)
        for (lo, _), c in zip(problem.bounds(), choice, strict=True)
    ]


def solve_exact(problem: MemorySplitInput) -> MemorySplit:
    """Optimal split: the MCKP of :func:`to_mckp` by the knapsack DP."""
    start = time.perf_counter()
    if _infeasible(problem):
        return _result(problem, None, Status.INFEASIBLE, start, "exact")
    sol = kn.solve_dp(to_mckp(problem))
    return _result(problem, _from_choice(problem, sol.choice), Status.OPTIMAL, start, "exact")


def solve_milp(problem: MemorySplitInput, time_limit: float = 60.0) -> MemorySplit:
    """The same MCKP through HiGHS (an independent cross-check of ``exact``)."""
    start = time.perf_counter()
    if _infeasible(problem):
        return _result(problem, None, Status.INFEASIBLE, start, "exact-milp")
    sol = kn.solve_highs(to_mckp(problem), time_limit=time_limit)
    if not sol.choice or len(sol.choice) != len(problem.jobs):
        return _result(problem, None, sol.status, start, "exact-milp")
    return _result(problem, _from_choice(problem, sol.choice), sol.status, start, "exact-milp")


# --------------------------------------------------------------------------- checker


def check_split(problem: MemorySplitInput, result: Result) -> None:
    """Independent check: every job within [min, peak] chunks, capacity, objective."""
    if result.status is Status.INFEASIBLE:
        if not _infeasible(problem):
            raise VerificationError("reported infeasible, but the minimums fit")
        return
    decision = result.decision()
    chunks = decision.get("chunks")
    if not isinstance(chunks, dict) or set(chunks) != {j.id for j in problem.jobs}:
        raise VerificationError(f"chunks must name every job, got {chunks!r}")
    total = 0.0
    used = 0
    for job in problem.jobs:
        k = chunks[job.id]
        lo, hi = problem.min_chunks(job), problem.max_chunks(job)
        if isinstance(k, bool) or not isinstance(k, int) or not lo <= k <= hi:
            raise VerificationError(f"job {job.id!r}: {k!r} chunks outside [{lo}, {hi}]")
        used += k
        fractions, speeds = zip(*job.curve, strict=True)
        total += float(np.interp(min(k * problem.chunk_gb / job.peak_gb, 1.0), fractions, speeds))
    if used > problem.capacity:
        raise VerificationError(f"{used} chunks exceed the {problem.capacity} available")
    reported = result.objective
    if reported is None or abs(reported - total) > TOLERANCE * (1 + total):
        raise VerificationError(f"reported objective {reported} != recomputed {total}")


# --------------------------------------------------------------------------- instances


def _curve(value: object, path: str) -> Curve:
    if isinstance(value, str):
        if value not in PRESETS:
            raise InvalidInstanceError(path, f"unknown preset {value!r} (known: {sorted(PRESETS)})")
        return PRESETS[value]
    points = []
    for i, point in enumerate(read_array(value, path)):
        p = f"{path}[{i}]"
        pair = read_array(point, p)
        if len(pair) != 2:
            raise InvalidInstanceError(p, "must be [fraction, speed]")
        points.append((read_number(pair[0], f"{p}[0]"), read_number(pair[1], f"{p}[1]")))
    return check_curve(points, path)


def parse_memory_split(instance: Instance) -> MemorySplitInput:
    """Validate the ``gpu`` and ``opportunistic`` sections of a ``memory-split`` instance."""
    data = instance.data
    check_keys(data, "", ("gpu", "opportunistic"), ("gpu", "opportunistic"))
    gpu = read_object(data["gpu"], "gpu")
    check_keys(gpu, "gpu", ("memory_gb", "guarantee_gb", "chunk_gb"), ("memory_gb",))
    memory = read_number(gpu["memory_gb"], "gpu.memory_gb", 0)
    guarantee = read_number(gpu.get("guarantee_gb", 0.0), "gpu.guarantee_gb", 0)
    chunk = read_number(gpu.get("chunk_gb", 0.25), "gpu.chunk_gb", 0)
    jobs = []
    for i, item in enumerate(read_array(data["opportunistic"], "opportunistic")):
        p = f"opportunistic[{i}]"
        obj = read_object(item, p)
        check_keys(obj, p, ("id", "peak_gb", "curve"), ("id", "peak_gb", "curve"))
        job_id = read_string(obj["id"], f"{p}.id")
        peak = read_number(obj["peak_gb"], f"{p}.peak_gb", 0)
        curve = _curve(obj["curve"], f"{p}.curve")
        try:
            jobs.append(OpportunisticJob(job_id, float(peak), curve))
        except InvalidInstanceError as e:
            raise e.at(p) from None
    try:
        return MemorySplitInput(float(memory), tuple(jobs), float(guarantee), float(chunk))
    except InvalidInstanceError as e:
        raise e.at("gpu" if e.path != "jobs" else "opportunistic") from None


def random_input(n: int, seed: int = 0, chunk_gb: float = 0.25) -> MemorySplitInput:
    """Seeded contended GPU: n jobs (presets and random concave/convex curves).

    Peaks ~ U(2, 20) GB; the spare memory covers every minimum plus 30-70% of
    the rest, so the split always matters and is always feasible.
    """
    rng = np.random.default_rng(seed)
    names = sorted(PRESETS)
    jobs = []
    for i in range(n):
        peak = float(np.round(rng.uniform(2, 20), 2))
        if rng.random() < 0.5:
            curve = PRESETS[names[int(rng.integers(len(names)))]]
        else:
            lo = float(np.round(rng.uniform(0.05, 0.5), 2))
            mid = float(np.round(rng.uniform(lo + 0.01, 0.95), 2))
            s0 = float(np.round(rng.uniform(0.05, 0.8), 3))
            s1 = float(np.round(rng.uniform(s0, 1.0), 3))
            curve = ((lo, s0), (mid, s1), (1.0, 1.0))
        jobs.append(OpportunisticJob(f"o{i}", peak, curve))
    # Chunk counts per job do not depend on the GPU's memory: any that holds all.
    probe = MemorySplitInput(sum(j.peak_gb for j in jobs) + chunk_gb, tuple(jobs), 0.0, chunk_gb)
    need = sum(probe.min_chunks(j) for j in jobs) * chunk_gb
    full = sum(probe.max_chunks(j) for j in jobs) * chunk_gb
    guarantee = float(np.round(rng.uniform(0, 8), 1))
    spare = need + rng.uniform(0.3, 0.7) * (full - need)
    memory = float(math.ceil((guarantee + spare) / chunk_gb) * chunk_gb)
    return MemorySplitInput(memory, tuple(jobs), guarantee, chunk_gb)


def to_instance(problem: MemorySplitInput) -> Instance:
    """The ``memory-split`` instance file of ``problem`` (curves by preset name when one matches)."""
    jobs = []
    for j in problem.jobs:
        preset = next((name for name, c in PRESETS.items() if c == j.curve), None)
        curve: object = preset if preset is not None else [list(p) for p in j.curve]
        jobs.append({"id": j.id, "peak_gb": j.peak_gb, "curve": curve})
    gpu = {
        "memory_gb": problem.memory_gb,
        "guarantee_gb": problem.guarantee_gb,
        "chunk_gb": problem.chunk_gb,
    }
    doc = {"format": FORMAT, "problem": "memory-split", "gpu": gpu, "opportunistic": jobs}
    return from_dict(doc)


def generate(size: str, seed: int) -> Instance:
    """``n<jobs>`` (chunks of 0.25 GB) or ``n<jobs>-c<chunk MB>``."""
    parts = size.split("-")
    try:
        if not parts[0].startswith("n") or len(parts) > 2:
            raise ValueError
        n = int(parts[0][1:])
        chunk = 0.25
        if len(parts) == 2:
            if not parts[1].startswith("c"):
                raise ValueError
            chunk = int(parts[1][1:]) / 1000
        if n < 0 or chunk <= 0:
            raise ValueError
    except ValueError:
        raise InvalidInstanceError(
            "size", f"expected n<jobs>[-c<chunk MB>], got {size!r}"
        ) from None
    return to_instance(random_input(n, seed, chunk))


# --------------------------------------------------------------------------- registry


def _run_greedy(problem: MemorySplitInput, options: SolveOptions) -> MemorySplit:
    return solve_greedy(problem)


def _run_exact(problem: MemorySplitInput, options: SolveOptions) -> MemorySplit:
    return solve_exact(problem)


def _run_milp(problem: MemorySplitInput, options: SolveOptions) -> MemorySplit:
    return solve_milp(problem, options.limit)


PROBLEM = Problem(
    name="memory-split",
    summary="AntMan GPU-memory split among co-located opportunistic jobs (AntMan §3.3, Fig. 10)",
    sense="max",
    parse=parse_memory_split,
    methods=(
        Method("exact", _run_exact, exact=True, summary="MCKP over memory chunks, knapsack DP"),
        Method("exact-milp", _run_milp, exact=True, summary="the same MCKP, HiGHS via scipy"),
        Method("greedy", _run_greedy, summary="AntMan trial-and-error: best marginal chunk"),
    ),
    default="exact",
    check=check_split,
    generate=generate,
    sizes={
        "quick": ("n3", "n4", "n8"),
        "standard": ("n4-c50", "n8-c50", "n16", "n32"),
        "paper": ("n8-c10", "n32-c50", "n64", "n128"),
    },
)
