"""Hypothesis strategies for valid clusters, jobs, placements and instances."""

from __future__ import annotations

from hypothesis import strategies as st

from scheduling_opt.io.instance import Instance
from scheduling_opt.model import (
    BatchInfo,
    Cluster,
    GpuType,
    Job,
    Placement,
    PlacementRow,
    RewardStep,
    Server,
)

ids = st.text(alphabet="abcdefghij0123456789-_", min_size=1, max_size=6)
reals = st.floats(min_value=0.001, max_value=1e6, allow_nan=False, allow_infinity=False)


@st.composite
def clusters(draw: st.DrawFn) -> Cluster:
    names = draw(st.lists(ids, min_size=1, max_size=3, unique=True))
    types = tuple(GpuType(n, draw(reals), draw(reals)) for n in names)
    server_ids = draw(st.lists(ids, min_size=1, max_size=6, unique=True))
    servers = []
    for sid in server_ids:
        pool = draw(st.sampled_from(["training", "inference"]))
        on_loan = pool == "inference" and draw(st.booleans())
        servers.append(
            Server(sid, draw(st.sampled_from(names)), draw(st.integers(1, 16)), pool, on_loan)
        )
    return Cluster(types, tuple(servers))


@st.composite
def jobs_for(draw: st.DrawFn, cluster: Cluster) -> tuple[Job, ...]:
    job_ids = draw(st.lists(ids, max_size=6, unique=True))
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
                duration=draw(reals),
                gpus_per_worker=draw(st.sampled_from([1, 2, 4])),
                submit_time=draw(st.sampled_from([0.0, 5.0, 123.5])),
                gpu_type=draw(st.none() | st.sampled_from([t.name for t in cluster.gpu_types])),
                deadlines=steps,
                job_class=draw(st.none() | st.sampled_from(["guarantee", "opportunistic"])),
                tenant=draw(st.none() | ids),
                batch=batch,
            )
        )
    return tuple(out)


def greedy_placement(cluster: Cluster, jobs: tuple[Job, ...], take: list[bool]) -> Placement:
    """Place each chosen job at min_workers first-fit (skip it if it does not fit)."""
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
def instances(draw: st.DrawFn) -> Instance:
    cluster = draw(clusters())
    jobs = draw(jobs_for(cluster))
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
