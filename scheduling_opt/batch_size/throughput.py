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
O(c_max * min(max_local_batch, R_j)) model evaluations per job, once per
input (:class:`~scheduling_opt.batch_size.model.BatchSizeInput` refuses
tables above :data:`~scheduling_opt.batch_size.model.MAX_TABLE_CELLS`).
"""

from __future__ import annotations

from collections.abc import Sequence
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
    Every coefficient is finite and >= 0, and overhead + per_sample > 0
    (else :class:`~scheduling_opt.errors.InvalidInstanceError` naming it).

    Examples
    --------
    >>> import numpy as np
    >>> m = AnalyticThroughput(overhead=0.05, per_sample=0.002, comm=0.03, cross_node=0.1)
    >>> one = np.array([1.0])
    >>> round(float(m.throughput(64 * one, 64 * one, one, 0 * one)[0]), 2)  # 64 / 0.178
    359.55

    References
    ----------
    ONES (Bian et al., SC 2021), §2.2, Figures 2-3.
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
    Coefficients the data cannot identify (no multi-GPU or no cross-node
    point) come out 0.

    Parameters
    ----------
    batch, local, gpus, spread, throughput : array_like
        Per measured point: global batch B, largest local batch, GPU count
        c >= 1, 1.0 when spanning servers, samples per second X > 0.

    Returns
    -------
    AnalyticThroughput
        The fitted model.

    Raises
    ------
    InvalidInstanceError
        No point, arrays of unequal length, or a non-positive value.

    Examples
    --------
    >>> true = AnalyticThroughput(0.04, 0.002)
    >>> b = [32.0, 64.0, 128.0]
    >>> x = [float(true.throughput(v, v, 1.0, 0.0)) for v in b]
    >>> fit = fit_analytic(b, b, [1, 1, 1], [0, 0, 0], x)
    >>> round(fit.overhead, 6), round(fit.per_sample, 6)
    (0.04, 0.002)

    References
    ----------
    ONES (Bian et al., SC 2021), §2.2.
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
    model's monotonicity in B), so only q = 1..min(max_local, limit) are
    tried (any q >= limit gives B = limit with the same local batch as
    q = limit). Ties go to the smaller batch (convergence prefers small
    batches, §3.3.2). Even split: ``B mod c`` GPUs take ``ceil(B / c)``
    samples, the rest ``floor``.

    Parameters
    ----------
    model : ThroughputModel
        The job's throughput model.
    limit : int
        The batch-size limit R_j (>= ``max_gpus``: every GPU gets a sample).
    max_local : int
        The largest local batch one GPU holds.
    max_gpus : int
        The largest GPU count to tabulate.

    Returns
    -------
    BatchTable
        ``batch[c, s]`` and ``rate[c, s]`` for c = 0..max_gpus, s = packed/spread.

    Raises
    ------
    InvalidInstanceError
        ``max_gpus > limit``, or the model gives a non-positive or non-finite rate.

    Examples
    --------
    >>> t = batch_table(AnalyticThroughput(0.05, 0.002), limit=100, max_local=32, max_gpus=4)
    >>> t.batch[:, 0].tolist()  # B per GPU count, packed on one server
    [0, 32, 64, 96, 100]

    References
    ----------
    ONES (Bian et al., SC 2021), §3.2 (Eq. 2) and §3.3.2.
    """
    if max_gpus > limit:
        raise InvalidInstanceError("max_gpus", f"{max_gpus} GPUs cannot share batch limit {limit}")
    batch = np.zeros((max_gpus + 1, 2), np.int64)
    rate = np.zeros((max_gpus + 1, 2), np.float64)
    if max_gpus == 0:
        return BatchTable(batch, rate)
    c = np.arange(1, max_gpus + 1, dtype=np.float64)[:, None]
    q = np.arange(1, min(max_local, limit) + 1, dtype=np.float64)[None, :]
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
    """Even split of a global batch over ``gpus`` GPUs (larger shares first).

    Examples
    --------
    >>> split_batch(10, 4)
    [3, 3, 2, 2]
    """
    q, r = divmod(batch, gpus)
    return [q + 1] * r + [q] * (gpus - r)


def cost_tables(
    models: Sequence[ThroughputModel], limit: IntArray, max_local: IntArray, cap: IntArray
) -> tuple[IntArray, FloatArray]:
    """Per job j, GPU count c and spread s: the best batch and GPU-seconds per sample c / X.

    Shapes (J, max cap + 1, 2); row c = 0 has batch 0 and cost 0 (waiting),
    costs beyond ``cap[j]`` are inf. Errors of job j's table are raised
    with a path starting ``"<j>."``.

    Examples
    --------
    >>> import numpy as np
    >>> b, c = cost_tables([AnalyticThroughput(0.05, 0.002)], np.array([100]),
    ...                    np.array([32]), np.array([2]))
    >>> b[0, :, 0].tolist(), round(float(c[0, 1, 0]), 7)  # 1 GPU: 0.114 s per 32 samples
    ([0, 32, 64], 0.0035625)
    """
    n = len(models)
    width = int(np.max(cap, initial=0)) + 1
    batch = np.zeros((n, width, 2), np.int64)
    cost = np.full((n, width, 2), np.inf)
    for j in range(n):
        try:
            table = batch_table(models[j], int(limit[j]), int(max_local[j]), int(cap[j]))
        except InvalidInstanceError as e:
            raise e.at(str(j)) from None
        batch[j, : cap[j] + 1] = table.batch
        cost[j, 0] = 0.0
        c = np.arange(1, cap[j] + 1, dtype=np.float64)[:, None]
        cost[j, 1 : cap[j] + 1] = c / table.rate[1:]
    return batch, cost
