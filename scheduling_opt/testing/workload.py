"""Hypothesis strategies for the shared model's work: jobs, reward steps, batch data, placements.

Every strategy draws values the model's constructors (and so the instance
file reader) accept, sized by keyword arguments (jobs, workers, GPUs per
worker), and shrinks towards small readable examples: ids ``j0, j1, ...``,
counts to their minimum, optional parts (deadlines, batch information,
tenants) to absent, a placement to consolidated rows. Papers: Aryl §5.2
(elastic jobs), Chronus §3.3.1 (reward steps), AntMan §3.2 (tenants, job
classes), ONES §3 (batch information). Drawing is linear in the drawn size.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from hypothesis import strategies as st

from scheduling_opt.model import (
    BatchInfo,
    Cluster,
    Job,
    JobClass,
    Placement,
    PlacementRow,
    RewardStep,
)

__all__ = ["batch_infos", "fitting_jobs", "free_gpus", "jobs", "placements", "reward_steps"]


@st.composite
def reward_steps(
    draw: st.DrawFn,
    *,
    min_steps: int = 1,
    max_steps: int = 3,
    max_time: int = 10_000,
    max_reward: int = 100,
    non_increasing: bool = False,
) -> tuple[RewardStep, ...]:
    """A Chronus reward step function: strictly increasing whole-second deadlines.

    Parameters
    ----------
    min_steps, max_steps : int, optional
        How many steps.
    max_time : int, optional
        The latest deadline (seconds from now, >= ``max_steps``).
    max_reward : int, optional
        The largest reward.
    non_increasing : bool, optional
        Rewards do not grow with later deadlines (the lease problem's rule).

    Returns
    -------
    SearchStrategy of tuple of RewardStep

    Examples
    --------
    >>> from hypothesis import find
    >>> find(reward_steps(), lambda s: True)
    (RewardStep(time=1.0, reward=0.0),)

    References
    ----------
    Chronus (SoCC '21) §3.3.1.
    """
    times = sorted(
        draw(
            st.sets(
                st.integers(1, max(max_time, max_steps)), min_size=min_steps, max_size=max_steps
            )
        )
    )
    rewards = [draw(st.integers(0, max_reward)) for _ in times]
    if non_increasing:
        rewards.sort(reverse=True)
    return tuple(RewardStep(float(t), float(v)) for t, v in zip(times, rewards, strict=True))


def batch_infos(*, max_epoch: int = 10**6, max_limit: int = 4096) -> st.SearchStrategy[BatchInfo]:
    """ONES batch information: epoch size, batch limit, largest local batch, progress.

    Parameters
    ----------
    max_epoch : int, optional
        The largest epoch size (and processed-sample count).
    max_limit : int, optional
        The largest batch limit R_j (the local batch is at most ``max_limit // 8``).

    Returns
    -------
    SearchStrategy of BatchInfo

    Examples
    --------
    >>> from hypothesis import find
    >>> find(batch_infos(), lambda b: True)
    BatchInfo(epoch_size=1, batch_limit=1, max_local_batch=1, processed_samples=0)

    References
    ----------
    ONES (SC '21) §3, Table 1.
    """
    return st.builds(
        BatchInfo,
        st.integers(1, max_epoch),
        st.integers(1, max_limit),
        st.integers(1, max(1, max_limit // 8)),
        st.integers(0, max_epoch),
    )


@st.composite
def jobs(
    draw: st.DrawFn,
    cluster: Cluster | None = None,
    *,
    min_jobs: int = 0,
    max_jobs: int = 4,
    max_workers: int = 4,
    gpus_per_worker: Sequence[int] = (1, 2),
    elastic: bool | None = None,
    deadlines: bool | None = None,
    batch: bool | None = None,
    tenants: Sequence[str] = (),
    classes: bool = False,
    bind_gpu_type: bool = True,
    submit_times: Sequence[float] = (0.0,),
    ids: st.SearchStrategy[str] | None = None,
) -> tuple[Job, ...]:
    """Training jobs, elastic or inelastic, with optional SLOs, tenants and batch data.

    Parameters
    ----------
    cluster : Cluster, optional
        Jobs may be bound to one of its GPU types (when ``bind_gpu_type``).
    min_jobs, max_jobs : int, optional
        How many jobs.
    max_workers : int, optional
        Workers at most (``max_workers`` of a job is in ``1..max_workers``).
    gpus_per_worker : sequence of int, optional
        GPUs per worker to pick from (the first is the shrink target).
    elastic : bool, optional
        True: every job elastic (``min < max``, needs ``max_workers >= 2``);
        False: every job inelastic; None (default): drawn per job.
    deadlines, batch : bool, optional
        True: every job has reward steps (batch information); False: none;
        None: drawn per job.
    tenants : sequence of str, optional
        Tenants to pick from (empty: no tenant).
    classes : bool, optional
        Draw AntMan job classes (guarantee, opportunistic or unset).
    bind_gpu_type : bool, optional
        Whether a job may be bound to one GPU type of ``cluster``.
    submit_times : sequence of float, optional
        Submit times to pick from.
    ids : SearchStrategy of str, optional
        Draw unique job ids from it (default ``j0, j1, ...``).

    Returns
    -------
    SearchStrategy of tuple of Job

    Examples
    --------
    >>> from hypothesis import find
    >>> find(jobs(min_jobs=1, elastic=True), lambda js: True)
    (Job(id='j0', min_workers=1, max_workers=2, duration=1.0, gpus_per_worker=1, submit_time=0.0, \
gpu_type=None, deadlines=(), job_class=None, tenant=None, batch=None),)

    References
    ----------
    Aryl (EuroSys '22) §5.2 (elastic jobs); Chronus §3.3.1; AntMan §3.2; ONES §3.
    """
    type_names = [t.name for t in cluster.gpu_types] if cluster is not None else []
    top = max(1, max_workers)

    @st.composite
    def one(draw: st.DrawFn) -> Job:
        is_elastic = draw(st.booleans()) if elastic is None else elastic
        if is_elastic and top >= 2:
            hi = draw(st.integers(2, top))
            lo = draw(st.integers(1, hi - 1))
        else:
            lo = hi = draw(st.integers(1, top))
        steps: tuple[RewardStep, ...] = ()
        if deadlines or (deadlines is None and draw(st.booleans())):
            steps = draw(reward_steps())
        info = None
        if batch or (batch is None and draw(st.booleans())):
            info = draw(batch_infos())
        job_class: JobClass | None = None
        if classes:
            job_class = draw(st.sampled_from([None, "guarantee", "opportunistic"]))
        bound = None
        if bind_gpu_type and type_names:
            bound = draw(st.none() | st.sampled_from(type_names))
        return Job(
            id="j",
            min_workers=lo,
            max_workers=hi,
            duration=float(draw(st.integers(1, 3600))),
            gpus_per_worker=draw(st.sampled_from(list(gpus_per_worker))),
            submit_time=draw(st.sampled_from(list(submit_times))),
            gpu_type=bound,
            deadlines=steps,
            job_class=job_class,
            tenant=draw(st.sampled_from(list(tenants))) if tenants else None,
            batch=info,
        )

    drawn = draw(st.lists(one(), min_size=min_jobs, max_size=max(min_jobs, max_jobs)))
    job_ids = (
        [f"j{k}" for k in range(len(drawn))]
        if ids is None
        else draw(st.lists(ids, min_size=len(drawn), max_size=len(drawn), unique=True))
    )
    out = [replace(job, id=job_id) for job, job_id in zip(drawn, job_ids, strict=True)]
    return tuple(out)


def fitting_jobs(cluster: Cluster, job_list: Sequence[Job]) -> tuple[Job, ...]:
    """``job_list`` cut down so that every job fits the empty cluster (the placement rule).

    A job no server can ever hold is refused as malformed (docs/architecture.md),
    so placement strategies repair their drawn jobs: a job whose GPU type no
    training-usable server has loses its binding, then a worker no server can
    hold gets one GPU, then ``max_workers`` (and ``min_workers``) drop to
    the workers the servers of its type can hold; a job that still fits
    nowhere (no training-usable server) is left out. O(jobs x servers).

    Parameters
    ----------
    cluster : Cluster
    job_list : sequence of Job

    Returns
    -------
    tuple of Job
        The repaired jobs, in order.

    Examples
    --------
    >>> from scheduling_opt.model import GpuType, Server
    >>> c = Cluster((GpuType("V100"), GpuType("T4")), (Server("s0", "V100", 4),))
    >>> [(j.id, j.min_workers, j.max_workers, j.gpus_per_worker, j.gpu_type)
    ...  for j in fitting_jobs(c, [Job("a", 3, 6, 1.0, 2), Job("b", 1, 1, 1.0, 8, gpu_type="T4")])]
    [('a', 2, 2, 2, None), ('b', 1, 1, 1, None)]
    """
    usable = [s for s in cluster.servers if s.usable_for_training]

    def slots(job: Job) -> int:
        return sum(s.gpus // job.gpus_per_worker for s in usable if job.fits(s))

    out: list[Job] = []
    for job in job_list:
        if slots(job) == 0 and job.gpu_type is not None:
            job = replace(job, gpu_type=None)
        if slots(job) == 0 and job.gpus_per_worker > 1:
            job = replace(job, gpus_per_worker=1)
        room = slots(job)
        if room == 0:
            continue
        if job.max_workers > room:
            job = replace(job, min_workers=min(job.min_workers, room), max_workers=room)
        out.append(job)
    return tuple(out)


def free_gpus(cluster: Cluster, job_list: Sequence[Job], placement: Placement) -> dict[str, int]:
    """GPUs each training-usable server has left under ``placement``.

    Parameters
    ----------
    cluster : Cluster
    job_list : sequence of Job
        The placed jobs (at least).
    placement : Placement

    Returns
    -------
    dict of str to int
        Server id -> free GPUs (servers training may not use are absent).

    Examples
    --------
    >>> from scheduling_opt.model import GpuType, Server
    >>> c = Cluster((GpuType("V100"),), (Server("s0", "V100", 8),))
    >>> free_gpus(c, [Job("a", 2, 2, 1.0, 2)], Placement((PlacementRow("a", "s0", 2),)))
    {'s0': 4}
    """
    by_id = {j.id: j for j in job_list}
    free = {s.id: s.gpus for s in cluster.servers if s.usable_for_training}
    for row in placement.rows:
        free[row.server] -= row.workers * by_id[row.job].gpus_per_worker
    return free


@st.composite
def placements(
    draw: st.DrawFn,
    cluster: Cluster,
    job_list: Sequence[Job],
    *,
    place: bool | None = None,
) -> Placement:
    """A placement of some of ``job_list`` consistent with ``cluster``.

    Each placed job gets ``min..max_workers`` workers on training-usable
    servers of its GPU type, no server holds more GPUs than it has (what
    the file reader checks). Rows shrink towards consolidated placements.

    Parameters
    ----------
    cluster : Cluster
    job_list : sequence of Job
    place : bool, optional
        True: place every job that still fits; False: place none; None
        (default): drawn per job.

    Returns
    -------
    SearchStrategy of Placement

    Examples
    --------
    >>> from hypothesis import find
    >>> from scheduling_opt.model import GpuType, Server
    >>> c = Cluster((GpuType("V100"),), (Server("s0", "V100", 2), Server("s1", "V100", 2)))
    >>> p = find(placements(c, [Job("a", 3, 3, 1.0)], place=True), lambda p: True)
    >>> p.as_mapping()
    {'a': {'s0': 2, 's1': 1}}
    """
    free = {s.id: s.gpus for s in cluster.servers if s.usable_for_training}
    rows: list[PlacementRow] = []
    for job in job_list:
        if place is False or (place is None and not draw(st.booleans())):
            continue
        eligible = [s.id for s in cluster.servers if s.id in free and job.fits(s)]
        room = {sid: free[sid] // job.gpus_per_worker for sid in eligible}
        total = sum(room.values())
        if total < job.min_workers:
            continue
        n = draw(st.integers(job.min_workers, min(job.max_workers, total)))
        order = draw(st.permutations(eligible)) if len(eligible) > 1 else eligible
        left, rest = n, total
        for sid in order:
            rest -= room[sid]
            most = min(left, room[sid])
            least = max(0, left - rest)
            # Shrinking takes as many workers as fit here: consolidated rows.
            take = most - draw(st.integers(0, most - least))
            if take:
                rows.append(PlacementRow(job.id, sid, take))
                free[sid] -= take * job.gpus_per_worker
                left -= take
    return Placement(tuple(rows))
