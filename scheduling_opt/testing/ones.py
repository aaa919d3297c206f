"""Seeded ONES (``batch-size``) inputs and the strategy over them.

:func:`seeded_batch_size_input` builds a small input from a numpy seed
(throughput models, batch limits, progress), :func:`batch_size_cases`
draws one over 1-3 small servers, :func:`cluster_of` is the homogeneous
cluster they run on. ONES (SC '21) §3. Building is linear in the jobs.
"""

from __future__ import annotations

import numpy as np
from hypothesis import strategies as st

from scheduling_opt.batch_size import AnalyticThroughput, BatchSizeInput, JobState, OnesConfig
from scheduling_opt.model import BatchInfo, Cluster, GpuType, Job, Server

__all__ = ["batch_size_cases", "cluster_of", "seeded_batch_size_input"]


def cluster_of(nodes: tuple[int, ...]) -> Cluster:
    """Servers ``n0``, ``n1``, ... of the given GPU counts (one V100 type).

    Parameters
    ----------
    nodes : tuple of int
        GPUs of each server.

    Returns
    -------
    Cluster

    Examples
    --------
    >>> [(s.id, s.gpus) for s in cluster_of((2, 4)).servers]
    [('n0', 2), ('n1', 4)]
    """
    return Cluster(
        (GpuType("V100"),), tuple(Server(f"n{k}", "V100", int(g)) for k, g in enumerate(nodes))
    )


def seeded_batch_size_input(
    seed: int,
    nodes: tuple[int, ...] = (2, 2),
    jobs: int = 3,
    cross_node: bool = True,
    config: OnesConfig | None = None,
    names: tuple[str, ...] | None = None,
    wait_penalty: float | None = None,
    idle_penalty: float | None = None,
) -> BatchSizeInput:
    """A seeded small ONES input built from model objects (no JSON).

    Per job: an analytic throughput model (cross-node cost unless
    ``cross_node`` is False), a local batch of 8-64 samples, a limit of 1-8
    times it, 1-8 workers, some progress, a progress rate beta, and a 20%
    chance of being in warm-up.

    Parameters
    ----------
    seed : int
        numpy seed: the same seed gives the same input.
    nodes : tuple of int, optional
        GPUs of each server.
    jobs : int, optional
        Number of jobs.
    cross_node : bool, optional
        Whether spanning servers costs throughput.
    config : OnesConfig, optional
        The search's knobs (default population 8, 30 generations).
    names : tuple of str, optional
        Job ids (default ``j0, j1, ...``).
    wait_penalty, idle_penalty : float, optional
        The schedule's penalties (default: the model's).

    Returns
    -------
    BatchSizeInput

    Examples
    --------
    >>> inp = seeded_batch_size_input(0, nodes=(2,), jobs=2)
    >>> inp.n_gpus, inp.job_ids
    (2, ('j0', 'j1'))

    References
    ----------
    ONES (SC '21) §3.
    """
    rng = np.random.default_rng(seed)
    models = tuple(
        AnalyticThroughput(
            float(rng.uniform(0.01, 0.08)),
            float(rng.uniform(0.0005, 0.004)),
            float(rng.uniform(0.005, 0.05)),
            float(rng.uniform(0.02, 0.3)) if cross_node else 0.0,
        )
        for _ in range(jobs)
    )
    local = [int(rng.choice([8, 16, 32, 64])) for _ in range(jobs)]
    epoch = [int(rng.choice([1000, 5000, 20000])) for _ in range(jobs)]
    limit = [m * int(rng.choice([1, 2, 4, 8])) for m in local]
    workers = [int(rng.integers(1, 9)) for _ in range(jobs)]
    processed = [int(rng.integers(0, 100_000)) for _ in range(jobs)]
    beta = [float(rng.uniform(1, 30)) for _ in range(jobs)]
    ptime = [float(rng.uniform(0, 1000)) for _ in range(jobs)]
    submit = [float(rng.uniform(0, 100)) for _ in range(jobs)]
    warm = [bool(rng.random() < 0.2) for _ in range(jobs)]
    ids = names or tuple(f"j{i}" for i in range(jobs))
    job_list = [
        Job(
            ids[i],
            1,
            workers[i],
            3600.0,
            submit_time=submit[i],
            batch=BatchInfo(epoch[i], limit[i], local[i], processed[i]),
        )
        for i in range(jobs)
    ]
    states = {
        ids[i]: JobState(beta[i], models[i], processed_time=ptime[i], warmup=warm[i])
        for i in range(jobs)
    }
    return BatchSizeInput(
        cluster_of(nodes),
        job_list,
        states,
        wait_penalty=wait_penalty,
        idle_penalty=idle_penalty,
        config=config or OnesConfig(population=8, generations=30),
    )


@st.composite
def batch_size_cases(draw: st.DrawFn, max_jobs: int = 6) -> BatchSizeInput:
    """Small ONES inputs: 1-3 servers of 1-4 GPUs, ``0..max_jobs`` seeded jobs.

    Parameters
    ----------
    max_jobs : int, optional
        Jobs at most.

    Returns
    -------
    SearchStrategy of BatchSizeInput

    Examples
    --------
    >>> from hypothesis import find
    >>> find(batch_size_cases(), lambda i: True).job_ids
    ()

    References
    ----------
    ONES (SC '21) §3.2.
    """
    nodes = tuple(draw(st.lists(st.integers(1, 4), min_size=1, max_size=3)))
    jobs = draw(st.integers(0, max_jobs))
    return seeded_batch_size_input(
        draw(st.integers(0, 2**31)), nodes, jobs, cross_node=draw(st.booleans())
    )
