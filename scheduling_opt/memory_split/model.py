"""AntMan memory split's typed input (:class:`MemorySplitInput`) and decision.

A GPU's memory left over by its resource-guarantee job is split, in chunks,
among the opportunistic jobs co-located on it; each job's speed is a
piecewise-linear slowdown curve of the fraction of its peak memory it gets
(AntMan §3.3, Figure 10). Validated here once, with the file reader's rules.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from scheduling_opt.errors import InvalidInstanceError

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

MAX_CHUNKS = 100_000
"""Most memory chunks a GPU (or one job's peak) may be split into."""


def _real(value: object, name: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float, np.floating, np.integer)):
        raise InvalidInstanceError(name, f"must be a number, got {value!r}")
    return float(value)


def check_curve(curve: Sequence[tuple[float, float]], path: str = "curve") -> Curve:
    """A valid slowdown curve, as a tuple of (fraction, speed) points.

    Fractions strictly increase in (0, 1] and end at 1; speeds are in [0, 1]
    and do not decrease (more device memory never slows a job down).

    Parameters
    ----------
    curve : sequence of (float, float)
    path : str
        Where to locate errors.

    Returns
    -------
    Curve

    Raises
    ------
    InvalidInstanceError
        Naming ``path`` or ``path[i]``.

    Examples
    --------
    >>> check_curve([(0.5, 0.9), (1, 1)])
    ((0.5, 0.9), (1.0, 1.0))

    References
    ----------
    AntMan (OSDI '20) §3.3, Figure 10.
    """
    try:
        points = tuple((float(f), float(s)) for f, s in curve)
    except (TypeError, ValueError):
        raise InvalidInstanceError(path, "must be (fraction, speed) pairs") from None
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

    Raises
    ------
    InvalidInstanceError
        ``id``, ``peak_gb`` or ``curve`` invalid.

    Examples
    --------
    >>> OpportunisticJob("vgg", 10.0, PRESETS["vgg"]).speed(5.0)
    0.9
    """

    id: str
    peak_gb: float
    curve: Curve

    def __post_init__(self) -> None:
        if not isinstance(self.id, str) or not self.id:
            raise InvalidInstanceError("id", f"must be a non-empty string, got {self.id!r}")
        peak = _real(self.peak_gb, "peak_gb")
        if not (math.isfinite(peak) and peak > 0):
            raise InvalidInstanceError("peak_gb", f"must be > 0, got {self.peak_gb!r}")
        object.__setattr__(self, "peak_gb", peak)
        object.__setattr__(self, "curve", check_curve(self.curve))

    def speed(self, gb: float) -> float:
        """Normalized speed (1 = exclusive GPU) with ``gb`` of device memory."""
        fractions, speeds = zip(*self.curve, strict=True)
        return float(np.interp(min(gb / self.peak_gb, 1.0), fractions, speeds))


@dataclass(frozen=True, slots=True)
class MemorySplitInput:
    """One GPU: its memory, what its guarantee job holds, the chunk size, the jobs.

    Parameters
    ----------
    memory_gb : float
        The GPU's memory (> 0).
    jobs : sequence of OpportunisticJob
        The opportunistic jobs sharing it (unique ids).
    guarantee_gb : float, optional
        Memory held by the resource-guarantee job, in [0, memory_gb].
    chunk_gb : float, optional
        The split's granularity (> 0, at most :data:`MAX_CHUNKS` chunks).

    Raises
    ------
    InvalidInstanceError
        Naming the field (``memory_gb``, ``chunk_gb``, ``guarantee_gb``,
        ``jobs``, ``jobs[i]``).

    Examples
    --------
    >>> job = OpportunisticJob("sr", 8.0, PRESETS["sr"])
    >>> inp = MemorySplitInput(16.0, (job,), guarantee_gb=10.0, chunk_gb=1.0)
    >>> inp.capacity, inp.bounds()
    (6, [(1, 8)])

    References
    ----------
    AntMan (OSDI '20) §3.3.
    """

    memory_gb: float
    jobs: tuple[OpportunisticJob, ...]
    guarantee_gb: float = 0.0
    chunk_gb: float = 0.25

    def __post_init__(self) -> None:
        object.__setattr__(self, "jobs", tuple(self.jobs))
        for i, job in enumerate(self.jobs):
            if not isinstance(job, OpportunisticJob):
                raise InvalidInstanceError(
                    f"jobs[{i}]", f"must be an OpportunisticJob, got {job!r}"
                )
        for name in ("memory_gb", "chunk_gb", "guarantee_gb"):
            object.__setattr__(self, name, _real(getattr(self, name), name))
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
        """The fewest chunks ``job`` can run with (its curve's first fraction)."""
        return math.ceil(job.curve[0][0] * job.peak_gb / self.chunk_gb - 1e-9)

    def max_chunks(self, job: OpportunisticJob) -> int:
        """The chunks that hold ``job``'s peak."""
        return math.ceil(job.peak_gb / self.chunk_gb - 1e-9)

    def grant_gb(self, job: OpportunisticJob, chunks: int) -> float:
        """Device memory ``chunks`` give ``job`` (never above its peak)."""
        return min(chunks * self.chunk_gb, job.peak_gb)

    def speed(self, job: OpportunisticJob, chunks: int) -> float:
        """``job``'s normalized speed with ``chunks`` chunks."""
        return job.speed(self.grant_gb(job, chunks))

    def bounds(self) -> list[tuple[int, int]]:
        """(min_chunks, max_chunks) of every job, in order."""
        return [(self.min_chunks(j), self.max_chunks(j)) for j in self.jobs]

    def minimums_fit(self) -> bool:
        """Whether every job's minimum fits together (else no split exists)."""
        return sum(lo for lo, _ in self.bounds()) <= self.capacity

    def speed_table(self, job: OpportunisticJob) -> NDArray[np.float64]:
        """Speeds at min_chunks .. max_chunks chunks, in one vectorized pass."""
        ks = np.arange(self.min_chunks(job), self.max_chunks(job) + 1)
        fractions, speeds = zip(*job.curve, strict=True)
        grant = np.minimum(ks * self.chunk_gb, job.peak_gb) / job.peak_gb
        out: NDArray[np.float64] = np.interp(np.minimum(grant, 1.0), fractions, speeds)
        return out


@dataclass(frozen=True, slots=True)
class MemorySplitDecision:
    """Chunks per job, with the memory and speed they give (keyed by job id).

    Attributes
    ----------
    chunks : mapping of str to int
    memory_gb : mapping of str to float
        ``min(chunks * chunk_gb, peak_gb)``.
    speed : mapping of str to float
        The normalized speed at that memory; their sum is the objective.
    """

    chunks: Mapping[str, int]
    memory_gb: Mapping[str, float]
    speed: Mapping[str, float]


def decision_of(inp: MemorySplitInput, chunks: Sequence[int]) -> MemorySplitDecision:
    """The decision of ``chunks`` (one count per job, in the input's order)."""
    ids = [j.id for j in inp.jobs]
    grants = [inp.grant_gb(j, k) for j, k in zip(inp.jobs, chunks, strict=True)]
    speeds = [inp.speed(j, k) for j, k in zip(inp.jobs, chunks, strict=True)]
    return MemorySplitDecision(
        dict(zip(ids, (int(k) for k in chunks), strict=True)),
        dict(zip(ids, grants, strict=True)),
        dict(zip(ids, speeds, strict=True)),
    )
