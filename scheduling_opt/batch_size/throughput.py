"""ONES throughput model X_j(B, c): samples per second of a data-parallel job.

A job runs synchronous data parallelism on ``c`` GPUs with global batch ``B``
split into local batches; one iteration costs compute for the largest local
batch plus communication that grows with ``c`` and jumps when the GPUs span
servers. ONES §2.2 (Figures 2-3: throughput stops growing with a fixed
global batch because of communication) and §3.2.1 (Eq. 5: T = Y / X).

The default :class:`AnalyticThroughput` has iteration time
``overhead + per_sample * b_max + comm * log2(c) + cross_node * [spans nodes]``
and throughput ``B / time``. Any object with the :class:`ThroughputModel`
method plugs in. :func:`fit_analytic` fits the analytic form to measured
(B, b_max, c, spread, throughput) points by bounded linear least squares
(the iteration time ``B / X`` is linear in the four coefficients).

:func:`batch_table` turns a model into the table the solvers use: for every
GPU count ``c`` and spread flag, the global batch B <= R_j (and <= c times
the largest local batch) that maximizes throughput, split evenly. Cost
O(c_max * max_local_batch) model evaluations per job, once per solve.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

import numpy as np
from numpy.typing import ArrayLike, NDArray

from scheduling_opt.errors import InvalidInstanceError

FloatArray = NDArray[np.float64]
IntArray = NDArray[np.int64]


class ThroughputModel(Protocol):
    """Samples per second of one job (vectorized over equal-shaped arrays).

    ``batch``: global batch B; ``local``: largest local batch (it sets the
    iteration time); ``gpus``: c >= 1; ``spread``: 1.0 when the GPUs span
    more than one server. The throughput must not decrease when ``batch``
    grows at fixed ``local``, ``gpus`` and ``spread`` (more samples in the
    same iteration): :func:`batch_table` relies on it.
    """

    def throughput(
        self, batch: FloatArray, local: FloatArray, gpus: FloatArray, spread: FloatArray
    ) -> FloatArray: ...


@dataclass(frozen=True, slots=True)
class AnalyticThroughput:
    """Iteration time = overhead + per_sample * b_max + comm * log2(c) + cross_node * spread.

    Seconds per iteration, per sample of local batch, per doubling of the GPU
    count (ring/tree all-reduce steps) and once when the job spans servers.
    """

    overhead: float
    per_sample: float
    comm: float = 0.0
    cross_node: float = 0.0

    def __post_init__(self) -> None:
        for name in ("overhead", "per_sample", "comm", "cross_node"):
            value = getattr(self, name)
            if not np.isfinite(value) or value < 0:
                raise InvalidInstanceError(name, f"must be a finite number >= 0, got {value!r}")
        if self.overhead + self.per_sample <= 0:
            raise InvalidInstanceError("per_sample", "overhead + per_sample must be > 0")

    def iteration_time(self, local: FloatArray, gpus: FloatArray, spread: FloatArray) -> FloatArray:
        return np.asarray(
            self.overhead
            + self.per_sample * local
            + self.comm * np.log2(np.maximum(gpus, 1.0))
            + self.cross_node * spread,
            dtype=np.float64,
        )

    def throughput(
        self, batch: FloatArray, local: FloatArray, gpus: FloatArray, spread: FloatArray
    ) -> FloatArray:
        return np.asarray(batch / self.iteration_time(local, gpus, spread), dtype=np.float64)


def fit_analytic(
    batch: ArrayLike,
    local: ArrayLike,
    gpus: ArrayLike,
    spread: ArrayLike,
    throughput: ArrayLike,
) -> AnalyticThroughput:
    """Least-squares fit of :class:`AnalyticThroughput` to measured points.

    Fits the iteration time ``B / X`` (linear in the coefficients) with
    ``scipy.optimize.lsq_linear`` under ``coefficients >= 0``: a negative
    communication cost fitted to noise would make more GPUs look free.
    Needs at least one point; coefficients the data cannot identify (no
    multi-GPU or no cross-node point) come out 0.
    """
    from scipy.optimize import lsq_linear

    b, loc, c, s, x = (
        np.asarray(a, dtype=np.float64).reshape(-1)
        for a in (batch, local, gpus, spread, throughput)
    )
    if not len(b) or not (len(b) == len(loc) == len(c) == len(s) == len(x)):
        raise InvalidInstanceError("points", "need one or more points of equal-length arrays")
    if np.any(x <= 0) or np.any(b <= 0) or np.any(c < 1):
        raise InvalidInstanceError("points", "batch, throughput must be > 0 and gpus >= 1")
    design = np.column_stack([np.ones_like(b), loc, np.log2(c), s])
    fit = lsq_linear(design, b / x, bounds=(0.0, np.inf), method="bvls")
    o, p, m, n = (float(v) for v in fit.x)
    if o + p <= 0:  # all-zero fit: data with no signal; keep the model usable
        o = float(np.mean(b / x))
    return AnalyticThroughput(o, p, m, n)


@dataclass(frozen=True, slots=True, eq=False)
class BatchTable:
    """Best global batch and its throughput per GPU count and spread flag.

    Arrays of shape ``(c_max + 1, 2)``: row ``c`` (row 0: not running),
    column 0 packed on one server, column 1 spanning servers.
    """

    batch: IntArray
    rate: FloatArray


def batch_table(model: ThroughputModel, limit: int, max_local: int, max_gpus: int) -> BatchTable:
    """For c = 1..max_gpus: B <= min(limit, c * max_local) maximizing throughput.

    For a given largest local batch q the best B is min(limit, c q) (the
    model's monotonicity in B), so only q = 1..max_local are tried. Ties go
    to the smaller batch (convergence prefers small batches, §3.3.2). Even
    split: ``B mod c`` GPUs take ``ceil(B / c)`` samples, the rest ``floor``.
    ``max_gpus`` must be <= ``limit`` so every GPU gets at least one sample.
    """
    if max_gpus > limit:
        raise InvalidInstanceError("max_gpus", f"{max_gpus} GPUs cannot share batch limit {limit}")
    batch = np.zeros((max_gpus + 1, 2), np.int64)
    rate = np.zeros((max_gpus + 1, 2), np.float64)
    if max_gpus == 0:
        return BatchTable(batch, rate)
    c = np.arange(1, max_gpus + 1, dtype=np.float64)[:, None]
    q = np.arange(1, max_local + 1, dtype=np.float64)[None, :]
    b = np.minimum(float(limit), c * q)
    local = np.ceil(b / c)
    for s in (0, 1):
        x = model.throughput(b, local, np.broadcast_to(c, b.shape), np.full(b.shape, float(s)))
        best = np.argmax(x, axis=1)
        rows = np.arange(max_gpus)
        batch[1:, s] = b[rows, best].astype(np.int64)
        rate[1:, s] = x[rows, best]
    if np.any(~np.isfinite(rate[1:])) or np.any(rate[1:] <= 0):
        raise InvalidInstanceError("throughput", "the model gave a non-positive or non-finite rate")
    return BatchTable(batch, rate)


def split_batch(batch: int, gpus: int) -> list[int]:
    """Even split of a global batch over ``gpus`` GPUs (larger shares first)."""
    q, r = divmod(batch, gpus)
    return [q + 1] * r + [q] * (gpus - r)
