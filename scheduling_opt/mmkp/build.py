"""An MMKP from jobs on a cluster with several GPU types: one item per configuration.

A configuration of a job is a GPU type and a worker count (Sia's
configurations are (GPU type, nodes, GPUs); the nodes are placement's
business here). Job j's configuration (t, k), for every GPU type t the job
may use and every k in ``min_workers..max_workers`` whose ``k *
gpus_per_worker`` GPUs fit the type's capacity, weighs that many GPUs on
resource t and is worth ``value(job, t, k)``: by default the job's
throughput with k workers in units of one reference GPU, ``k *
job_speed(t)`` (:func:`~scheduling_opt.throughput.job_speed`: the throughput
matrix when given, Gavel §3, else the type's ``compute``), the objective of
Gavel's max-sum-throughput policy under linear scaling. A scheduler passes
its own ``value`` (Sia: minus its powered goodput) and ``none`` (Sia:
minus ``lambda_n``).

Complexity: O(jobs x types x workers) items, counted before anything is
built (:data:`CONFIG_LIMIT`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from scheduling_opt.errors import InstanceTooLargeError, InvalidInstanceError
from scheduling_opt.jsonpath import read_int, read_number
from scheduling_opt.mmkp.model import Mmkp, MmkpDecision
from scheduling_opt.model import Cluster, Job, index_jobs
from scheduling_opt.throughput import ThroughputMatrix, job_speed

#: Most configurations (items) a built instance may have.
CONFIG_LIMIT = 2_000_000


@dataclass(frozen=True, slots=True)
class Config:
    """A job's configuration: ``workers`` workers (``gpus`` GPUs) of one GPU type."""

    gpu_type: str
    workers: int
    gpus: int


@dataclass(frozen=True, slots=True, eq=False)
class JobKnapsack:
    """An MMKP built from jobs, with the configuration behind every item.

    Attributes
    ----------
    mmkp : Mmkp
        One group per job (in ``jobs`` order), one resource per GPU type.
    jobs : tuple of str
        The job of each group.
    configs : tuple of tuple of Config
        Per group, the configuration of each item.
    """

    mmkp: Mmkp
    jobs: tuple[str, ...]
    configs: tuple[tuple[Config, ...], ...]

    def allocation(self, decision: MmkpDecision) -> dict[str, Config | None]:
        """Each job's chosen configuration (None: not allocated this round).

        Examples
        --------
        >>> from scheduling_opt.model import GpuType, Server
        >>> cluster = Cluster((GpuType("V100"),), (Server("s", "V100", 4),))
        >>> ks = job_knapsack([Job("a", 1, 2, 10.0)], cluster)
        >>> from scheduling_opt.mmkp import exact
        >>> ks.allocation(exact(ks.mmkp).decision)
        {'a': Config(gpu_type='V100', workers=2, gpus=2)}
        """
        return {
            job: None if i is None else self.configs[g][i]
            for g, (job, i) in enumerate(zip(self.jobs, decision.choice, strict=True))
        }


Value = Callable[[Job, str, int], float]


def _capacities(cluster: Cluster, capacity: Mapping[str, int] | None) -> dict[str, int]:
    """GPUs per type: the caller's (free GPUs), else every training-usable GPU."""
    if capacity is None:
        out = {t.name: 0 for t in cluster.gpu_types}
        for s in cluster.servers:
            if s.usable_for_training:
                out[s.gpu_type] += s.gpus
        return out
    out = {}
    for name, gpus in capacity.items():
        if not cluster.has_gpu_type(name):
            raise InvalidInstanceError(f"capacity.{name}", f"unknown GPU type {name!r}")
        out[name] = read_int(gpus, f"capacity.{name}", 0)
    return out


def job_knapsack(
    jobs: Sequence[Job],
    cluster: Cluster,
    throughputs: ThroughputMatrix | None = None,
    *,
    capacity: Mapping[str, int] | None = None,
    value: Value | None = None,
    none: float | Callable[[Job], float] = 0.0,
) -> JobKnapsack:
    """The MMKP of choosing one configuration (GPU type, workers) per job, or none.

    Parameters
    ----------
    jobs : sequence of Job
        The jobs of the round (a job bound to a GPU type gets that type's
        configurations only).
    cluster : Cluster
        Its GPU types are the resources.
    throughputs : ThroughputMatrix, optional
        Per job and GPU type throughput (a row per job, a column per GPU
        type of the cluster); without it, each type's ``compute``.
    capacity : mapping of str to int, optional
        GPUs available per type (default: every training-usable GPU);
        types left out have none.
    value : callable (Job, GPU type, workers) -> float, optional
        An item's value (default ``workers * job_speed``).
    none : float or callable (Job) -> float
        A job's value when it gets no configuration (default 0).

    Returns
    -------
    JobKnapsack

    Raises
    ------
    InvalidInstanceError
        ``jobs[i]`` (not a Job, duplicate id, unknown GPU type), the
        matrix's own errors (``throughputs...``), ``capacity.<type>``, or a
        non-finite ``value`` / ``none`` (``jobs[i].value``, ``jobs[i].none``).
    InstanceTooLargeError
        More than :data:`CONFIG_LIMIT` configurations.

    Examples
    --------
    >>> from scheduling_opt.model import GpuType, Server
    >>> cluster = Cluster(
    ...     (GpuType("V100"), GpuType("K80", 0.3)), (Server("v", "V100", 2), Server("k", "K80", 4))
    ... )
    >>> t = ThroughputMatrix({"a": {"V100": 1.0, "K80": 0.5}})
    >>> ks = job_knapsack([Job("a", 1, 2, 10.0)], cluster, t)
    >>> ks.mmkp.capacity.tolist(), ks.mmkp.values.tolist()
    ([2, 4], [1.0, 2.0, 0.5, 1.0])
    >>> ks.configs[0][3]
    Config(gpu_type='K80', workers=2, gpus=2)

    References
    ----------
    Gavel (OSDI '20) §3 (throughput matrix); Sia (SOSP '23) §3.3 (configurations).
    """
    jobs = tuple(jobs)
    index_jobs(cluster, jobs)
    if throughputs is not None:
        throughputs.check(cluster, (j.id for j in jobs))
    caps = _capacities(cluster, capacity)
    types = [t.name for t in cluster.gpu_types]
    count = 0
    for job in jobs:
        for t in types:
            if job.gpu_type in (None, t):
                top = min(job.max_workers, caps.get(t, 0) // job.gpus_per_worker)
                count += max(0, top - job.min_workers + 1)
        if count > CONFIG_LIMIT:
            raise InstanceTooLargeError(
                "jobs", f"more than {CONFIG_LIMIT:,} configurations (jobs x GPU types x workers)"
            )
    weights: list[list[int]] = []
    values: list[float] = []
    offsets = [0]
    configs: list[tuple[Config, ...]] = []
    nones: list[float] = []
    for i, job in enumerate(jobs):
        mine: list[Config] = []
        for r, t in enumerate(types):
            if job.gpu_type not in (None, t):
                continue
            speed = job_speed(cluster, job.id, t, throughputs)
            top = min(job.max_workers, caps.get(t, 0) // job.gpus_per_worker)
            for k in range(job.min_workers, top + 1):
                gpus = k * job.gpus_per_worker
                w = [0] * len(types)
                w[r] = gpus
                v = k * speed if value is None else value(job, t, k)
                weights.append(w)
                values.append(read_number(v, f"jobs[{i}].value"))
                mine.append(Config(t, k, gpus))
        offsets.append(len(weights))
        configs.append(tuple(mine))
        nones.append(read_number(none(job) if callable(none) else none, f"jobs[{i}].none"))
    mmkp = Mmkp(
        np.array([caps.get(t, 0) for t in types], np.int64),
        np.array(weights, np.int64).reshape(len(weights), len(types)),
        np.array(values, np.float64),
        np.array(offsets, np.int64),
        np.array(nones, np.float64),
        tuple(types),
    )
    return JobKnapsack(mmkp, tuple(j.id for j in jobs), tuple(configs))
