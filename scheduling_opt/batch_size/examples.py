"""A tiny ``batch-size`` input built from model objects, for examples and tests.

Two servers of two V100s and two jobs; small enough to solve by hand or by
brute force over its (J + 1)^G = 81 genomes. ONES §3 (the problem).
"""

from __future__ import annotations

from scheduling_opt.batch_size.model import BatchSizeInput, JobState
from scheduling_opt.batch_size.throughput import AnalyticThroughput
from scheduling_opt.model import BatchInfo, Cluster, GpuType, Job, Server


def tiny_input(
    wait_penalty: float | None = None, idle_penalty: float | None = None
) -> BatchSizeInput:
    """Two servers of 2 GPUs; job ``a`` (up to 4 GPUs) and job ``b`` (up to 2).

    Parameters
    ----------
    wait_penalty, idle_penalty : float or None
        The penalties (None: the defaults, which fill every GPU).

    Returns
    -------
    BatchSizeInput
        The round.

    Examples
    --------
    >>> inp = tiny_input()
    >>> inp.gpu_ids
    ('s0/0', 's0/1', 's1/0', 's1/1')

    References
    ----------
    ONES (Bian et al., SC 2021), §3.
    """
    cluster = Cluster((GpuType("V100"),), (Server("s0", "V100", 2), Server("s1", "V100", 2)))
    jobs = (
        Job("a", 1, 4, 3600.0, batch=BatchInfo(10_000, 256, 64, 30_000)),
        Job("b", 1, 2, 3600.0, batch=BatchInfo(5_000, 64, 32, 0)),
    )
    states = {
        "a": JobState(beta=5.0, processed_time=600.0),
        "b": JobState(beta=12.0, throughput=AnalyticThroughput(0.03, 0.004, 0.02, 0.2)),
    }
    return BatchSizeInput(
        cluster, jobs, states, wait_penalty=wait_penalty, idle_penalty=idle_penalty
    )
