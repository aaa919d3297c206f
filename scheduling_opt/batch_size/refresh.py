"""Refresh (ONES §3.2.2): map the previous step's population onto this round's jobs.

Between two scheduling rounds jobs finish, arrive and change their batch
limits R_j. Refresh turns the previous population into valid schedules of
the new round: (1) GPUs of finished jobs go idle; (2) a job whose last
global batch exceeds its new limit keeps floor(R c / B) GPUs; (3) each new
job (earliest submitted first, at most one per GPU) gets one GPU, an idle
one or the tail GPU of the longest-running job; (4) idle GPUs are filled
greedily (Figure 7). O(K G log G) numpy work plus O(K * new jobs * G).
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from scheduling_opt.batch_size.evaluate import counts
from scheduling_opt.batch_size.model import BatchSizeInput
from scheduling_opt.batch_size.operators import Population, cap_to, fill, trim

IntArray = NDArray[np.int64]
FloatArray = NDArray[np.float64]


def scale_to_limits(inp: BatchSizeInput, genes: IntArray, batch: FloatArray) -> IntArray:
    """Refresh (2): a job whose batch ``batch[k, j]`` exceeds R_j keeps floor(R c / B) GPUs.

    At least one GPU (R >= 1 fits one GPU); never more than the job's cap.
    """
    c, _ = counts(inp, genes)
    limit = inp.limit[None, :].astype(np.float64)
    shrunk = np.maximum(1, np.floor(limit * c / np.maximum(batch, 1)))
    target = np.where(batch > limit, shrunk, c).astype(np.int64)
    return cap_to(genes, np.minimum(target, inp.max_gpus))


def admit(inp: BatchSizeInput, genes: IntArray, new: list[int]) -> IntArray:
    """Refresh (3): each job of ``new`` gets one GPU in every row.

    An idle GPU if any (the lowest index), else the tail GPU of the running
    job with the largest processed time (§3.2.2: take GPUs from the jobs with
    the largest T_processed); jobs of ``new`` are never donors. Needs
    ``len(new) <= GPUs``.
    """
    out = np.array(genes, dtype=np.int64, copy=True)
    n = inp.n_jobs
    if not new:
        return out
    if len(new) > inp.n_gpus:
        raise ValueError(f"cannot admit {len(new)} jobs on {inp.n_gpus} GPUs")
    is_new = np.zeros(n + 1, bool)
    is_new[np.asarray(new) + 1] = True
    order = np.argsort(-inp.processed_time, kind="stable")
    rank = np.empty(n + 1, np.int64)
    rank[order + 1] = np.arange(n)
    rank[0] = -1  # idle GPUs first
    for row in out:
        for j in new:
            if (row == j).any():
                continue
            key = np.where(is_new[row + 1], n + 1, rank[row + 1])
            best = np.flatnonzero(key == key.min())
            row[best[0] if key.min() < 0 else best[-1]] = j
    return out


def refresh(
    inp: BatchSizeInput,
    population: Population,
    work: FloatArray,
    deadline: float | None = None,
) -> IntArray:
    """Refresh (§3.2.2) a previous population onto the new job states.

    (1) GPUs of finished jobs (absent from ``inp``) go idle;
    (2) :func:`scale_to_limits` with each job's last global batch;
    (3) :func:`admit` the new jobs (absent from the population), earliest
    submitted first, at most one per GPU; (4) idle GPUs are filled greedily
    by utilization gain (Figure 7).
    """
    old = {name: i for i, name in enumerate(inp.job_ids)}
    remap = np.array([old.get(name, -1) for name in population.job_ids] + [-1], np.int64)
    genes = remap[np.where(population.genes >= 0, population.genes, len(remap) - 1)]
    k, n = genes.shape[0], inp.n_jobs
    if n == 0:
        return np.full_like(genes, -1)
    slot = (genes + 1 + (n + 1) * np.arange(k)[:, None]).ravel()
    prev = np.bincount(slot, weights=population.local.ravel(), minlength=k * (n + 1))
    batch = np.asarray(prev, dtype=np.float64).reshape(k, n + 1)[:, 1:]
    genes = scale_to_limits(inp, genes, batch)
    known = set(population.job_ids)
    new = sorted(
        (j for j, name in enumerate(inp.job_ids) if name not in known),
        key=lambda j: (inp.submit_time[j], j),
    )[: inp.n_gpus]
    return trim(inp, fill(inp, admit(inp, genes, new), work, deadline=deadline), deadline)
