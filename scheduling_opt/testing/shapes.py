"""Strategies of particular shapes: sized for brute force, fuzzing, or one paper's rule.

The project's own property tests draw from these (they moved here from the
test files, so that the suite and the kit have one source of generated
data); a scheduler's authors may use them too. :func:`brute_force_reclaim_instances`,
:func:`tiny_placement_instances` and :func:`tiny_lease_cases` stay small
enough for exhaustive search; :func:`pooled_placement_instances` mixes
training servers, servers on loan and inference servers of two GPU types;
:func:`appendix_c_pairs` draws two elastic jobs in Aryl's Eq. (2) regime.
Drawing is linear in the drawn size.
"""

from __future__ import annotations

from hypothesis import assume
from hypothesis import strategies as st

from scheduling_opt.io.instance import Instance
from scheduling_opt.model import (
    Cluster,
    GpuType,
    Job,
    Placement,
    PlacementRow,
    RewardStep,
    Server,
)
from scheduling_opt.testing.workload import fitting_jobs

__all__ = [
    "TWO_TYPES",
    "appendix_c_pairs",
    "brute_force_reclaim_instances",
    "pooled_placement_instances",
    "tiny_lease_cases",
    "tiny_placement_instances",
]

#: A V100 (1.0 compute) and a T4 (0.25): Aryl's training and inference GPUs (Appendix E).
TWO_TYPES = (GpuType("V100", 1.0, 32.0), GpuType("T4", 0.25, 16.0))


@st.composite
def brute_force_reclaim_instances(draw: st.DrawFn, max_servers: int = 8) -> Instance:
    """Reclaim instances small enough to enumerate every N_R-subset.

    ``1..max_servers`` on-loan servers ``i0, i1, ...`` and one training
    server ``t0``, 8 GPUs each, one GPU type ``G``; jobs span 1-4 servers
    with 1-3 workers on each.

    Parameters
    ----------
    max_servers : int, optional
        On-loan servers at most.

    Returns
    -------
    SearchStrategy of Instance

    Examples
    --------
    >>> from hypothesis import find
    >>> inst = find(brute_force_reclaim_instances(), lambda i: True)
    >>> [s.id for s in inst.cluster.servers], inst.params
    (['i0', 't0'], {'servers_to_reclaim': 0})

    References
    ----------
    Aryl (EuroSys '22) §4.
    """
    n = draw(st.integers(1, max_servers))
    servers = [Server(f"i{s}", "G", 8, "inference", True) for s in range(n)]
    servers.append(Server("t0", "G", 8))
    free = {s.id: 8 for s in servers}
    jobs: list[Job] = []
    rows: list[PlacementRow] = []
    for k in range(draw(st.integers(0, 2 * n + 2))):
        gpw = draw(st.sampled_from([1, 1, 2]))
        span = draw(
            st.lists(st.sampled_from([s.id for s in servers]), min_size=1, max_size=4, unique=True)
        )
        placed = {}
        for sid in span:
            room = free[sid] // gpw
            if room:
                placed[sid] = draw(st.integers(1, min(room, 3)))
                free[sid] -= placed[sid] * gpw
        if not placed:
            continue
        total = sum(placed.values())
        low = draw(st.integers(1, total))
        jobs.append(Job(f"j{k}", low, total + draw(st.integers(0, 2)), 1.0, gpw))
        rows.extend(PlacementRow(f"j{k}", sid, w) for sid, w in placed.items())
    cluster = Cluster((GpuType("G"),), tuple(servers))
    params = {"servers_to_reclaim": draw(st.integers(0, n))}
    return Instance("reclaim", cluster, tuple(jobs), Placement(tuple(rows)), params)


@st.composite
def pooled_placement_instances(draw: st.DrawFn) -> Instance:
    """Placement instances over training, on-loan and inference servers of two GPU types.

    1-6 servers (4, 6 or 8 GPUs) and 1-8 jobs of 1-2 GPUs per worker, some
    bound to a GPU type; nothing runs yet.

    Returns
    -------
    SearchStrategy of Instance

    Examples
    --------
    >>> from hypothesis import find
    >>> inst = find(pooled_placement_instances(), lambda i: True)
    >>> [s.id for s in inst.cluster.servers], [j.id for j in inst.jobs]
    (['s0'], ['j0'])

    References
    ----------
    Aryl (EuroSys '22) §5.3; Chronus (SoCC '21) §3.4.
    """
    servers = []
    for i in range(draw(st.integers(1, 6))):
        kind = draw(st.sampled_from(["t", "loan", "inf"]))
        gpu = draw(st.sampled_from(["V100", "T4"]))
        size = draw(st.sampled_from([4, 6, 8]))
        if kind == "t":
            servers.append(Server(f"s{i}", gpu, size))
        else:
            servers.append(Server(f"s{i}", gpu, size, "inference", kind == "loan"))
    jobs = []
    for i in range(draw(st.integers(1, 8))):
        gpw = draw(st.sampled_from([1, 2]))
        hi = draw(st.integers(1, 5))
        lo = draw(st.integers(1, hi))
        bound = draw(st.sampled_from([None, "V100", "T4"]))
        jobs.append(Job(f"j{i}", lo, hi, 60.0, gpw, gpu_type=bound))
    cluster = Cluster(TWO_TYPES, tuple(servers))
    return Instance("placement", cluster, fitting_jobs(cluster, jobs))


@st.composite
def tiny_placement_instances(draw: st.DrawFn) -> Instance:
    """Placement instances small enough for brute force: 1-3 servers, 1-3 jobs.

    Servers have 1-4 GPUs; an extra running job ``old`` may hold one GPU of
    the first server.

    Returns
    -------
    SearchStrategy of Instance

    Examples
    --------
    >>> from hypothesis import find
    >>> inst = find(tiny_placement_instances(), lambda i: True)
    >>> [(s.id, s.gpus) for s in inst.cluster.servers], [j.id for j in inst.jobs]
    ([('s0', 1)], ['j0'])

    References
    ----------
    Chronus (SoCC '21) §3.4.
    """
    servers = tuple(
        Server(f"s{i}", draw(st.sampled_from(["V100", "T4"])), draw(st.integers(1, 4)))
        for i in range(draw(st.integers(1, 3)))
    )
    jobs = [
        Job(
            f"j{i}",
            n := draw(st.integers(1, 3)),
            n,
            60.0,
            draw(st.sampled_from([1, 1, 2])),
            gpu_type=draw(st.sampled_from([None, None, "V100"])),
        )
        for i in range(draw(st.integers(1, 3)))
    ]
    cluster = Cluster(TWO_TYPES, servers)
    jobs = list(fitting_jobs(cluster, jobs))
    rows = []
    if draw(st.booleans()):
        jobs.append(Job("old", 1, 1, 60.0))
        rows.append(PlacementRow("old", servers[0].id, 1))
    return Instance("placement", cluster, tuple(jobs), Placement(tuple(rows)))


@st.composite
def tiny_lease_cases(
    draw: st.DrawFn, max_jobs: int = 4, max_horizon: int = 6
) -> tuple[list[Job], int]:
    """Lease cases for brute force: 2-``max_jobs`` jobs, 1-4 GPUs, lease length 1 s.

    Each job needs 1-3 terms (durations may end half a term early) and has
    1-3 reward steps up to ``max_horizon`` seconds, rewards not increasing.

    Parameters
    ----------
    max_jobs : int, optional
        Jobs at most (at least 2).
    max_horizon : int, optional
        The latest deadline in terms.

    Returns
    -------
    SearchStrategy of (list of Job, int)
        The jobs and the GPUs of the lease cluster (every job fits it).

    Examples
    --------
    >>> from hypothesis import find
    >>> jobs, gpus = find(tiny_lease_cases(), lambda c: True)
    >>> [(j.id, j.max_gpus, j.duration) for j in jobs], gpus
    ([('j0', 1, 1.0), ('j1', 1, 1.0)], 1)

    References
    ----------
    Chronus (SoCC '21) §3.3.
    """
    n = draw(st.integers(2, max_jobs))
    gpus = draw(st.integers(1, 4))
    jobs = []
    for i in range(n):
        need = draw(st.integers(1, 3))
        times = sorted(draw(st.sets(st.integers(1, max_horizon), min_size=1, max_size=3)))
        rewards = sorted((draw(st.integers(0, 100)) for _ in times), reverse=True)
        duration = need - draw(st.sampled_from([0.0, 0.5]))
        steps = tuple(
            RewardStep(t + draw(st.sampled_from([0.0, 0.5])), v)
            for t, v in zip(times, rewards, strict=True)
        )
        g = draw(st.integers(1, gpus))
        jobs.append(Job(f"j{i}", g, g, float(duration), deadlines=steps))
    return jobs, gpus


@st.composite
def appendix_c_pairs(draw: st.DrawFn) -> tuple[Job, Job, int]:
    """Two elastic jobs ``p``, ``q`` and a capacity in Aryl's Eq. (2) regime.

    ``g_max(p) <= g_max(q)`` and the capacity lies strictly between
    ``max(g_min(p) + g_min(q), g_max(q))`` and ``g_max(p) + g_max(q)``: both
    fit at their minimum, not both at their maximum.

    Returns
    -------
    SearchStrategy of (Job, Job, int)

    Examples
    --------
    >>> from hypothesis import find
    >>> p, q, c = find(appendix_c_pairs(), lambda case: True)
    >>> (p.min_workers, p.max_workers), (q.min_workers, q.max_workers), c
    ((1, 2), (1, 2), 3)

    References
    ----------
    Aryl (EuroSys '22) Appendix C, Eq. (2)-(9).
    """
    gmax_p = draw(st.integers(2, 10))
    gmax_q = draw(st.integers(gmax_p, 12))
    gmin_p = draw(st.integers(1, gmax_p - 1))
    gmin_q = draw(st.integers(1, gmax_q - 1))
    lo, hi = max(gmin_p + gmin_q, gmax_q) + 1, gmax_p + gmax_q - 1
    assume(lo <= hi)
    c = draw(st.integers(lo, hi))
    p = Job("p", gmin_p, gmax_p, float(draw(st.integers(1, 500))))
    q = Job("q", gmin_q, gmax_q, float(draw(st.integers(1, 500))))
    return p, q, c
