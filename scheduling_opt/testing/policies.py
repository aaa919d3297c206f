"""Strategies for the online policies' states: AntMan rounds and EDL rounds.

Each draws a state with the typed constructor (its invariants checked at
construction): :func:`antman_states` for AntMan's global scheduler (OSDI
'20 §3.2-§3.3: tenants, quotas, guarantee and opportunistic jobs), with
:func:`antman_worlds` adding rounds of finishing jobs and utilizations;
:func:`edl_states` and :func:`edl_jobs` for EDL's Elastic-Tiresias (TPDS
'22 §5, §6.3).
Drawing is linear in the size.
"""

from __future__ import annotations

from collections.abc import Mapping

from hypothesis import strategies as st

from scheduling_opt.model import Cluster, GpuType, Job, JobClass, Server
from scheduling_opt.policies.antman import AntManState, Gpu, all_gpus
from scheduling_opt.policies.edl import EdlJob, EdlState
from scheduling_opt.testing.model import clusters
from scheduling_opt.testing.workload import jobs, placements

__all__ = ["antman_states", "antman_worlds", "edl_jobs", "edl_states"]


@st.composite
def antman_states(
    draw: st.DrawFn, *, max_servers: int = 2, max_gpus: int = 4, max_jobs: int = 4
) -> AntManState:
    """AntMan rounds: tenants A and B with quotas, guarantee and opportunistic jobs.

    Nothing runs yet; each GPU has a recent utilization (0, 0.3 or 0.9).

    Parameters
    ----------
    max_servers, max_gpus, max_jobs : int, optional
        Servers, GPUs per server and jobs at most.

    Returns
    -------
    SearchStrategy of AntManState

    Examples
    --------
    >>> from hypothesis import find
    >>> s = find(antman_states(), lambda s: len(s.jobs) == 1)
    >>> dict(s.quotas), [(j.id, j.tenant, j.max_gpus) for j in s.jobs]
    ({'A': 0, 'B': 0}, [('j0', 'A', 1)])

    References
    ----------
    AntMan (OSDI '20) §3.2, §3.3.
    """
    cluster = draw(clusters(max_servers=max_servers, max_gpus=max_gpus, kinds=("training",)))
    total = cluster.total_gpus
    qa = draw(st.integers(0, total))
    qb = draw(st.integers(0, total - qa))
    job_list = draw(
        jobs(
            cluster,
            max_jobs=max_jobs,
            max_workers=2,
            deadlines=False,
            batch=False,
            tenants=("A", "B"),
            classes=True,
            elastic=False,
            bind_gpu_type=False,
        )
    )
    util = {g: draw(st.sampled_from([0.0, 0.3, 0.9])) for g in all_gpus(cluster)}
    return AntManState(cluster, {"A": qa, "B": qb}, job_list, utilization=util)


@st.composite
def edl_states(
    draw: st.DrawFn, *, max_servers: int = 2, max_gpus: int = 8, max_jobs: int = 4
) -> EdlState:
    """EDL rounds: a training cluster, jobs (some running), requested workers.

    Parameters
    ----------
    max_servers, max_gpus, max_jobs : int, optional
        Servers, GPUs per server and jobs at most.

    Returns
    -------
    SearchStrategy of EdlState

    Examples
    --------
    >>> from hypothesis import find
    >>> s = find(edl_states(), lambda s: len(s.jobs) == 1)
    >>> [(j.job.id, j.requested) for j in s.jobs]
    [('j0', 0)]

    References
    ----------
    EDL (TPDS '22) §5, §6.3.
    """
    cluster = draw(
        clusters(max_servers=max_servers, max_gpus=max_gpus, kinds=("training",), max_types=1)
    )
    job_list = draw(
        jobs(cluster, max_jobs=max_jobs, deadlines=False, batch=False, bind_gpu_type=False)
    )
    running = draw(placements(cluster, job_list))
    requested = {j.id: draw(st.sampled_from([0, j.min_workers, j.max_workers])) for j in job_list}
    return EdlState.from_jobs(cluster, job_list, running, requested=requested)


def _uniform(sizes: list[int]) -> Cluster:
    return Cluster(
        (GpuType("V100"),), tuple(Server(f"s{i}", "V100", n) for i, n in enumerate(sizes))
    )


@st.composite
def antman_worlds(
    draw: st.DrawFn,
) -> tuple[AntManState, list[tuple[int, Mapping[Gpu, float]]]]:
    """An AntMan state and the rounds to run it through.

    1-3 V100 servers of 1-8 GPUs; tenants A and B with quotas summing to at
    most the cluster; 1-10 jobs of tenants A, B or C (class guarantee,
    opportunistic or unset; 1-2 GPUs per worker), submitted one second
    apart; then 1-4 rounds, each a number of jobs to finish (0-9) and every
    GPU's utilization (0, 0.3 or 0.9).

    Returns
    -------
    SearchStrategy of (AntManState, list of (int, mapping of Gpu to float))

    Examples
    --------
    >>> from hypothesis import find
    >>> state, rounds = find(antman_worlds(), lambda w: True)
    >>> dict(state.quotas), [j.id for j in state.jobs], len(rounds)
    ({'A': 0, 'B': 0}, ['j0'], 1)

    References
    ----------
    AntMan (OSDI '20) §3.2, §3.3.
    """
    sizes = draw(st.lists(st.integers(1, 8), min_size=1, max_size=3))
    cluster = _uniform(sizes)
    total = sum(sizes)
    qa = draw(st.integers(0, total))
    qb = draw(st.integers(0, total - qa))
    job_list = []
    for i in range(draw(st.integers(1, 10))):
        gpw = draw(st.sampled_from([1, 1, 2]))
        n = gpw * draw(st.integers(1, 4))
        cls: JobClass | None = draw(st.sampled_from(["guarantee", "opportunistic", None]))
        tenant = draw(st.sampled_from(["A", "B", "C"]))
        job_list.append(
            Job(f"j{i}", n // gpw, n // gpw, 100.0, gpw, float(i), None, (), cls, tenant)
        )
    every = all_gpus(cluster)
    rounds: list[tuple[int, Mapping[Gpu, float]]] = []
    for _ in range(draw(st.integers(1, 4))):
        util = {g: draw(st.sampled_from([0.0, 0.3, 0.9])) for g in every}
        rounds.append((draw(st.integers(0, 9)), util))
    return AntManState(cluster, {"A": qa, "B": qb}, tuple(job_list)), rounds


@st.composite
def edl_jobs(draw: st.DrawFn) -> list[EdlJob]:
    """1-8 EDL jobs: 1-3..6 workers, optional concave speedup curves, attained service.

    Returns
    -------
    SearchStrategy of list of EdlJob
        Jobs ``j0, j1, ...`` with a requested worker count of 0, min or max.

    Examples
    --------
    >>> from hypothesis import find
    >>> [(j.job.id, j.requested) for j in find(edl_jobs(), lambda js: True)]
    [('j0', 0)]

    References
    ----------
    EDL (TPDS '22) §5, §6.3 (Elastic-Tiresias).
    """
    out = []
    for i in range(draw(st.integers(1, 8))):
        lo = draw(st.integers(1, 3))
        hi = draw(st.integers(lo, 6))
        gpw = draw(st.sampled_from([1, 1, 2]))
        incs = draw(st.lists(st.floats(0.0, 1.0), min_size=hi - 1, max_size=hi - 1))
        speedup: tuple[float, ...] = ()
        if draw(st.booleans()):
            total, speeds = 1.0, [1.0]
            for x in sorted(incs, reverse=True):  # concave: decreasing increments
                total += x
                speeds.append(total)
            speedup = tuple(speeds)
        service = draw(st.sampled_from([0.0, 600.0, 20_000.0]))
        requested = draw(st.sampled_from([0, lo, hi]))
        job = Job(f"j{i}", lo, hi, 100.0, gpus_per_worker=gpw)
        out.append(EdlJob(job, service, 0.0, speedup, requested))
    return out
