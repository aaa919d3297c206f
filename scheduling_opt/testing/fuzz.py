"""Fuzzing strategies for the file format: random ids, real numbers, every optional field.

:func:`fuzzed_instances` draws instances of reclaim, placement or lease whose
common sections (cluster, jobs, placement) take random ids from
:data:`ID_TEXT`, random reals and every optional job field, for round-trip
tests of the reader and writer (docs/instance-format.md); the params are
not the problem's. Drawing is linear in the drawn size.
"""

from __future__ import annotations

from hypothesis import strategies as st

from scheduling_opt.io.instance import Instance
from scheduling_opt.model import (
    POOLS,
    BatchInfo,
    Cluster,
    GpuType,
    Job,
    Placement,
    PlacementRow,
    Pool,
    RewardStep,
    Server,
)

__all__ = [
    "ID_TEXT",
    "REALS",
    "fuzzed_clusters",
    "fuzzed_instances",
    "fuzzed_jobs",
    "greedy_placement",
]

#: Ids for fuzzing: short strings of letters, digits, dashes and underscores.
ID_TEXT = st.text(alphabet="abcdefghij0123456789-_", min_size=1, max_size=6)
#: Positive reals a file may hold (durations, compute, memory).
REALS = st.floats(min_value=0.001, max_value=1e6, allow_nan=False, allow_infinity=False)


@st.composite
def fuzzed_clusters(draw: st.DrawFn) -> Cluster:
    """1-3 GPU types and 1-6 servers with random ids, reals and pools.

    Returns
    -------
    SearchStrategy of Cluster

    Examples
    --------
    >>> from hypothesis import find
    >>> find(fuzzed_clusters(), lambda c: True).servers
    (Server(id='0', gpu_type='0', gpus=1, pool='training', on_loan=False),)
    """
    names = draw(st.lists(ID_TEXT, min_size=1, max_size=3, unique=True))
    types = tuple(GpuType(n, draw(REALS), draw(REALS)) for n in names)
    server_ids = draw(st.lists(ID_TEXT, min_size=1, max_size=6, unique=True))
    servers = []
    for sid in server_ids:
        pool: Pool = draw(st.sampled_from(POOLS))
        on_loan = pool == "inference" and draw(st.booleans())
        servers.append(
            Server(sid, draw(st.sampled_from(names)), draw(st.integers(1, 16)), pool, on_loan)
        )
    return Cluster(types, tuple(servers))


@st.composite
def fuzzed_jobs(draw: st.DrawFn, cluster: Cluster) -> tuple[Job, ...]:
    """0-6 jobs with random ids and every optional field drawn (steps, class, tenant, batch).

    Parameters
    ----------
    cluster : Cluster
        Jobs may be bound to one of its GPU types.

    Returns
    -------
    SearchStrategy of tuple of Job

    Examples
    --------
    >>> from hypothesis import find
    >>> c = Cluster((GpuType("V100"),), (Server("s0", "V100", 1),))
    >>> find(fuzzed_jobs(c), lambda js: True)
    ()
    """
    job_ids = draw(st.lists(ID_TEXT, max_size=6, unique=True))
    out = []
    for jid in job_ids:
        lo = draw(st.integers(1, 4))
        hi = draw(st.integers(lo, 8))
        times = sorted(draw(st.sets(st.integers(0, 10_000), max_size=3)))
        steps = tuple(RewardStep(float(t), draw(st.integers(0, 100))) for t in times)
        batch = (
            BatchInfo(
                draw(st.integers(1, 10**6)),
                draw(st.integers(1, 4096)),
                draw(st.integers(1, 512)),
                draw(st.integers(0, 10**6)),
            )
            if draw(st.booleans())
            else None
        )
        out.append(
            Job(
                id=jid,
                min_workers=lo,
                max_workers=hi,
                duration=draw(REALS),
                gpus_per_worker=draw(st.sampled_from([1, 2, 4])),
                submit_time=draw(st.sampled_from([0.0, 5.0, 123.5])),
                gpu_type=draw(st.none() | st.sampled_from([t.name for t in cluster.gpu_types])),
                deadlines=steps,
                job_class=draw(st.none() | st.sampled_from(["guarantee", "opportunistic"])),
                tenant=draw(st.none() | ID_TEXT),
                batch=batch,
            )
        )
    return tuple(out)


def greedy_placement(cluster: Cluster, jobs: tuple[Job, ...], take: list[bool]) -> Placement:
    """Place each chosen job at ``min_workers``, first fit (skipped when it does not fit).

    Parameters
    ----------
    cluster : Cluster
    jobs : tuple of Job
    take : list of bool
        Which jobs to try, in order.

    Returns
    -------
    Placement

    Examples
    --------
    >>> c = Cluster((GpuType("V100"),), (Server("s0", "V100", 2),))
    >>> greedy_placement(c, (Job("a", 2, 2, 1.0), Job("b", 1, 1, 1.0)), [True, True]).as_mapping()
    {'a': {'s0': 2}}
    """
    free = {s.id: s.gpus for s in cluster.servers if s.usable_for_training}
    rows = []
    for job, wanted in zip(jobs, take, strict=False):
        if not wanted:
            continue
        plan: dict[str, int] = {}
        left = job.min_workers
        trial = dict(free)
        for s in cluster.servers:
            if left == 0:
                break
            if s.id not in trial or not job.fits(s):
                continue
            n = min(left, trial[s.id] // job.gpus_per_worker)
            if n:
                plan[s.id] = n
                trial[s.id] -= n * job.gpus_per_worker
                left -= n
        if left == 0:
            free = trial
            rows += [PlacementRow(job.id, sid, n) for sid, n in plan.items()]
    return Placement(tuple(rows))


@st.composite
def fuzzed_instances(draw: st.DrawFn) -> Instance:
    """Instances of reclaim, placement or lease with random ids, reals and params.

    For round-trip tests of the file format's common sections: the params
    are not the problem's (a problem's reader may refuse them).

    Returns
    -------
    SearchStrategy of Instance

    Examples
    --------
    >>> from hypothesis import find
    >>> find(fuzzed_instances(), lambda i: True).problem
    'reclaim'
    """
    cluster = draw(fuzzed_clusters())
    jobs = draw(fuzzed_jobs(cluster))
    take = draw(st.lists(st.booleans(), min_size=len(jobs), max_size=len(jobs)))
    params = draw(
        st.dictionaries(
            st.sampled_from(["servers_to_reclaim", "lease_length", "note"]),
            st.integers(0, 5) | st.text(max_size=5),
            max_size=2,
        )
    )
    return Instance(
        draw(st.sampled_from(["reclaim", "placement", "lease"])),
        cluster,
        jobs,
        greedy_placement(cluster, jobs, take),
        params,
    )
