"""The ``batch-size`` objective F of genomes, and genome -> :class:`Schedule`.

The objective (Eq. 3 read literally prefers running fewer jobs; docs/batch-size.md)::

    F = sum_{j running} c_j * Y_j / X_j(B_j, c_j, spread_j)
        + wait_penalty * #(waiting jobs) + idle_penalty * #(idle GPUs)

with Y_j = ||D_j|| beta_j, the remaining samples at the mean predicted
progress (:mod:`~scheduling_opt.batch_size.progress`), and X_j the throughput
model at the best batch for c_j GPUs (:mod:`~scheduling_opt.batch_size.throughput`).
A genome is one row ``genes[g]`` = job index on GPU g (-1 idle); local
batches follow from it (each job's best batch, split evenly). ONES §3.2.1,
Eq. (3), (8). Evaluating K genomes is O(K (G + J)) with numpy (three bincounts).
"""

from __future__ import annotations

import time

import numpy as np
from numpy.typing import NDArray

from scheduling_opt.batch_size.model import BatchSizeInput, Schedule
from scheduling_opt.solution import Solution, Status

IntArray = NDArray[np.int64]
FloatArray = NDArray[np.float64]


def counts(inp: BatchSizeInput, genes: IntArray) -> tuple[IntArray, IntArray]:
    """GPUs per job and spread flag (1: more than one server) per genome row.

    Examples
    --------
    >>> from scheduling_opt.batch_size.examples import tiny_input
    >>> c, spread = counts(tiny_input(), np.array([[0, 1, 0, -1]]))  # job 0 on both servers
    >>> c.tolist(), spread.tolist()
    ([[2, 1]], [[1, 0]])
    """
    k, n = genes.shape[0], inp.n_jobs
    slot = (genes + 1 + (n + 1) * np.arange(k)[:, None]).ravel()
    size = k * (n + 1)
    c = np.bincount(slot, minlength=size).reshape(k, n + 1)[:, 1:]
    if inp.n_nodes == 1:
        return c.astype(np.int64), np.zeros_like(c, dtype=np.int64)
    # One server iff the server index has zero variance over the job's GPUs:
    # c * sum(node^2) - sum(node)^2 == 0 (exact in float64 at these sizes),
    # three bincounts instead of a (k, jobs, servers) table.
    node = np.broadcast_to(inp.node_of, genes.shape).ravel().astype(np.float64)
    s1 = np.bincount(slot, weights=node, minlength=size).reshape(k, n + 1)[:, 1:]
    s2 = np.bincount(slot, weights=node * node, minlength=size).reshape(k, n + 1)[:, 1:]
    return c.astype(np.int64), (c * s2 - s1 * s1 > 0.5).astype(np.int64)


def unit_costs(inp: BatchSizeInput, c: IntArray, spread: IntArray) -> FloatArray:
    """GPU-seconds per remaining sample of each (genome, job); 0 when waiting."""
    j = np.broadcast_to(np.arange(inp.n_jobs), c.shape)
    return np.asarray(inp.cost[j, c, spread], dtype=np.float64)


def objectives(inp: BatchSizeInput, genes: IntArray, works: list[FloatArray]) -> FloatArray:
    """F of every genome row under each Y_j vector of ``works`` (shape: works x rows)."""
    c, spread = counts(inp, genes)
    unit = unit_costs(inp, c, spread)
    penalty = inp.wait * (c == 0).sum(axis=1) + inp.idle * (genes < 0).sum(axis=1)
    return np.asarray([unit @ y + penalty for y in works], dtype=np.float64).reshape(
        len(works), genes.shape[0]
    )


def objective(inp: BatchSizeInput, genes: IntArray, work: FloatArray | None = None) -> FloatArray:
    """F of every genome row (``work``: Y_j to use; default the mean progress).

    Parameters
    ----------
    inp : BatchSizeInput
        The round.
    genes : numpy.ndarray
        Shape (K, G): job index per GPU (-1 idle), within the jobs' caps.
    work : numpy.ndarray, optional
        Remaining samples Y_j per job (default ``inp.work``).

    Returns
    -------
    numpy.ndarray
        F per row.

    Examples
    --------
    >>> from scheduling_opt.batch_size.examples import tiny_input
    >>> inp = tiny_input()
    >>> f = objective(inp, np.array([[0, 0, 1, 1], [0, -1, -1, -1]]))
    >>> bool(f[0] < f[1])  # running both jobs on every GPU beats one job on one GPU
    True

    References
    ----------
    ONES (Bian et al., SC 2021), §3.2.1, Eq. (3) and (8).
    """
    scores = objectives(inp, genes, [inp.work if work is None else work])
    return np.asarray(scores[0], dtype=np.float64)


def local_batches(inp: BatchSizeInput, genes: IntArray) -> IntArray:
    """Local batches of genome rows: each job's best batch, split evenly in GPU order.

    ``genes`` of shape (G,) gives shape (G,), (K, G) gives (K, G); a job with
    c GPUs and best batch B gives its first ``B mod c`` GPUs ``ceil(B / c)``
    and the rest ``floor(B / c)`` (:func:`~.throughput.split_batch`); idle
    GPUs 0. O(K G log G), vectorized.

    Examples
    --------
    >>> from scheduling_opt.batch_size.examples import tiny_input
    >>> local_batches(tiny_input(), np.array([0, 0, 0, 1])).tolist()  # a: B = 192 on 3 GPUs
    [64, 64, 64, 32]
    """
    rows = np.atleast_2d(np.asarray(genes, np.int64))
    k, g = rows.shape
    if inp.n_jobs == 0 or g == 0:
        return np.zeros_like(genes, dtype=np.int64)
    c, spread = counts(inp, rows)
    total = inp.batch[np.arange(inp.n_jobs), c, spread]
    # Rank of each GPU among its job's GPUs of the row (stable: in GPU order).
    order = np.argsort(rows, axis=1, kind="stable")
    s = np.take_along_axis(rows, order, axis=1)
    pos = np.broadcast_to(np.arange(g), (k, g))
    new_run = np.ones((k, g), bool)
    new_run[:, 1:] = s[:, 1:] != s[:, :-1]
    start = np.maximum.accumulate(np.where(new_run, pos, 0), axis=1)
    rank = np.empty((k, g), np.int64)
    np.put_along_axis(rank, order, pos - start, axis=1)
    j = np.maximum(rows, 0)
    at = np.arange(k)[:, None]
    q, r = np.divmod(total[at, j], np.maximum(c[at, j], 1))
    local = np.where(rows >= 0, q + (rank < r), 0).astype(np.int64)
    return local.reshape(np.shape(genes))


def schedule_of(inp: BatchSizeInput, genes: IntArray) -> Schedule:
    """The :class:`Schedule` of one genome (local batches decoded)."""
    row = np.asarray(genes, np.int64)
    return Schedule(
        inp.job_ids,
        inp.gpu_ids,
        tuple(int(v) for v in row),
        tuple(int(v) for v in local_batches(inp, row)),
    )


def genes_of(schedule: Schedule) -> IntArray:
    """The genome of a schedule (job index per GPU, -1 idle)."""
    return np.asarray(schedule.assignment, np.int64)


def solution_of(
    inp: BatchSizeInput,
    genes: IntArray,
    status: Status,
    start: float,
    *,
    bound: float | None = None,
    message: str = "",
) -> Solution[Schedule]:
    """A solution from a genome: its schedule and F; ``seconds`` since ``start``."""
    row = np.asarray(genes, np.int64)
    return Solution(
        status=status,
        objective=float(objective(inp, row[None, :])[0]),
        decision=schedule_of(inp, row),
        bound=bound,
        seconds=time.perf_counter() - start,
        message=message,
    )
