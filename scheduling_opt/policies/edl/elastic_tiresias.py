"""EDL Elastic-Tiresias: 2D-LAS priority queues with elastic compaction and expansion.

Each scheduling round orders jobs by Tiresias' discretized two-dimensional
least-attained-service queues and keeps, preempts or starts them; then, when
more than N jobs wait, running jobs of lower queues are scaled in to start
waiting ones (compaction), and when none waits, idle GPUs scale out the
running jobs that gain most (expansion). EDL (TPDS '22) §5 Algorithm 1, §5.1
footnote 4, §6.3; Tiresias (NSDI '19). Choices where the paper is vague are
listed in docs/elastic.md.

Complexity per step, J jobs, S servers: ordering O(J log J); the Tiresias
plan O(J S log S); compaction (:mod:`.compaction`) O(J + S + P L D) per
waiting job (P its requested workers, L <= ceil(P g / m) servers, D donors);
expansion O(W J S) for W workers added.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from types import MappingProxyType

from scheduling_opt.model import Placement
from scheduling_opt.policies.edl._round import Round
from scheduling_opt.policies.edl.compaction import compact
from scheduling_opt.policies.edl.model import (
    EdlDecision,
    EdlJob,
    EdlState,
    Mode,
    cluster_throughput,
    qos_floor,
)
from scheduling_opt.policies.locality import locality_limit, pick_servers
from scheduling_opt.solution import Seed, Solution, Status, time_limit_of


def _priority(state: EdlState, queue: Mapping[str, int]) -> list[EdlJob]:
    """Tiresias order: lower queue first, FIFO (arrival order) inside a queue."""
    order = {j.id: i for i, j in enumerate(state.jobs)}
    return sorted(state.jobs, key=lambda j: (queue[j.id], order[j.id]))


def _place_gang(r: Round, j: EdlJob, workers: int) -> dict[str, int] | None:
    """``workers`` whole workers on free GPUs, on at most ceil(P_j g / m) servers."""
    d = j.job.gpus_per_worker
    usable = {
        s.id: r.free[s.id] // d
        for s in r.state.cluster.servers
        if j.job.fits(s) and r.free[s.id] >= d
    }
    limit = locality_limit(r.state.cluster, j.job, j.requested_gpus)
    servers = pick_servers(usable, workers, limit, r.rank)
    if sum(usable[s] for s in servers) < workers:
        return None
    out: dict[str, int] = {}
    left = workers
    for s in servers:
        n = min(usable[s], left)
        out[s] = n
        left -= n
    return out


def _base_plan(r: Round) -> tuple[list[str], list[str]]:
    """Tiresias: in priority order, a job is in the plan if its GPUs still fit the cluster.

    A running job keeps its workers and placement; one that no longer fits is
    preempted; a waiting job in the plan starts with P_j workers where the
    locality rule finds room (no migration, so fragmentation can defer it).
    """
    budget = r.state.cluster.total_gpus
    started, preempted = [], []
    keep: list[EdlJob] = []
    start: list[EdlJob] = []
    for j in _priority(r.state, r.queue):
        running = r.state.placement.workers_of(j.id)
        demand = (running or j.parallelism) * j.job.gpus_per_worker
        if demand <= budget:
            budget -= demand
            (keep if running else start).append(j)
        elif running:
            preempted.append(j.id)
    for j in keep:
        for s, n in r.state.placement.servers_of(j.id).items():
            r.add(j.id, s, n)
    for j in start:
        where = _place_gang(r, j, j.parallelism)
        if where is not None:
            for s, n in where.items():
                r.add(j.id, s, n)
            started.append(j.id)
    return started, preempted


#: The servers a GPU type fits (cluster order, and as a set) and the largest one's GPUs (m).
_Fitting = tuple[list[str], frozenset[str], int]


def _expand(r: Round, order: list[EdlJob]) -> None:
    """Algorithm 1 lines 7-12: each free GPU to the running job gaining most.

    Gain: S(p+1)/S(p) - 1 > 0 (EDL §6.3: never a scale-out that lowers
    throughput). A worker needs its GPUs on one server, and the job may use
    a new server only within ceil((p+1) g / m) servers. Ties: priority order,
    then a server the job already uses, then cluster order.

    Each pass looks at the jobs by their key (gain, priority) and searches a
    server only for a job that beats the best found so far; a job's servers
    (those its GPU type fits, in cluster order) and m are computed once per
    call, so a pass costs O(J) plus the server scans of the candidates
    instead of O(J S) (a locality limit per job per pass was O(S) too).
    """
    fitting: dict[str | None, _Fitting] = {}
    for j in order:
        t = j.job.gpu_type
        if t not in fitting:
            servers = [s for s in r.state.cluster.servers if j.job.fits(s)]
            ids = [s.id for s in servers]
            fitting[t] = (ids, frozenset(ids), max((s.gpus for s in servers), default=0))
    while True:
        best: tuple[float, int] | None = None
        choice: tuple[EdlJob, str] | None = None
        for i, j in enumerate(order):
            p = r.workers(j.id)
            if not p or not j.job.elastic or p >= j.job.max_workers:
                continue
            gain = j.throughput(p + 1) / j.throughput(p) - 1
            if gain <= 0 or (best is not None and (-gain, i) >= best):
                continue
            server = _expansion_server(r, j, p, fitting[j.job.gpu_type])
            if server is not None:
                best, choice = (-gain, i), (j, server)
        if choice is None:
            return
        r.add(choice[0].id, choice[1], 1)


def _expansion_server(r: Round, j: EdlJob, p: int, fitting: _Fitting) -> str | None:
    """The server a new worker of ``j`` goes to: one it uses, else a new one within the limit.

    Lowest cluster rank first in each group; None when no server has room.
    """
    d = j.job.gpus_per_worker
    on = r.alloc[j.id]
    servers, fits, m = fitting
    mine = [s for s in on if r.free[s] >= d and s in fits]
    if mine:
        return min(mine, key=r.rank.__getitem__)
    if not m or len(on) + 1 > -(-(p + 1) * d // m):
        return None
    for s in servers:
        if r.free[s] >= d and s not in on:
            return s
    return None


def queues(state: EdlState) -> tuple[dict[str, int], list[str]]:
    """Every job's queue, and the waiting jobs promoted to G0 for starving.

    Parameters
    ----------
    state : EdlState
        The round's input (its ``params`` hold the thresholds and starvation).

    Returns
    -------
    tuple of (dict of str to int, list of str)
        Job id -> queue (0 = G0), and the promoted jobs in arrival order.

    Examples
    --------
    >>> from scheduling_opt.model import Cluster, GpuType, Job, Server
    >>> c = Cluster((GpuType("V100"),), (Server("s0", "V100", 4),))
    >>> s = EdlState.from_jobs(c, [Job("a", 1, 1, 9.0), Job("b", 1, 1, 9.0)],
    ...                        service={"a": 600.0, "b": 600.0}, waiting={"b": 4000.0})
    >>> queues(s)
    ({'a': 1, 'b': 0}, ['b'])

    References
    ----------
    Tiresias (NSDI '19) §4 (discretized 2D-LAS, starvation); EDL (TPDS '22) §6.3.
    """
    p = state.params
    out, promoted = {}, []
    for j in state.jobs:
        q = p.queue(j.service)
        if q and not state.placement.workers_of(j.id) and j.waiting >= p.starvation:
            q = 0
            promoted.append(j.id)
        out[j.id] = q
    return out, promoted


def elastic_tiresias_step(
    state: EdlState, *, seed: Seed = None, time_limit: float | None = None
) -> Solution[EdlDecision]:
    """One round of (Elastic-)Tiresias; pure: ``state`` is not changed.

    (1) queues from attained service, starving jobs promoted to G0; (2) the
    Tiresias plan: keep, preempt or start jobs in priority order; (3) with
    ``params.elastic``: compaction when more than N jobs still wait,
    expansion when none waits and GPUs are idle.

    Parameters
    ----------
    state : EdlState
        The cluster, the unfinished jobs, the running placement and the knobs.
    seed : int, numpy Generator or None
        Unused (the policy is deterministic); accepted for the common signature.
    time_limit : float, optional
        Validated only: the step is polynomial and bounded by its work.

    Returns
    -------
    Solution[EdlDecision]
        Status ``feasible`` (a policy step, no optimality claim); objective:
        the cluster throughput of the new placement (EDL §6.3: the sum of
        S(p)/S(1), see :func:`~.model.cluster_throughput`); no bound.

    Raises
    ------
    ValueError
        ``time_limit`` is not a positive number.

    Examples
    --------
    >>> from scheduling_opt.model import Cluster, GpuType, Job, Server
    >>> c = Cluster((GpuType("V100"),), (Server("s0", "V100", 8),))
    >>> s = EdlState.from_jobs(c, [Job("a", 1, 8, 60.0), Job("b", 1, 8, 60.0)],
    ...                        requested={"a": 2, "b": 2})
    >>> sol = elastic_tiresias_step(s)
    >>> sol.decision.started, sol.decision.mode, sol.objective
    (('a', 'b'), 'expansion', 8.0)

    References
    ----------
    EDL (TPDS '22) §5 Algorithm 1, §5.1 footnote 4, §6.3; Tiresias (NSDI '19).
    """
    start = time.perf_counter()
    time_limit_of(time_limit)
    p = state.params
    queue, promoted = queues(state)
    r = Round(
        state,
        p,
        {},
        {s.id: s.gpus for s in state.cluster.servers},
        queue,
        {s.id: i for i, s in enumerate(state.cluster.servers)},
        state.jobs_by_id,
        {j.id: qos_floor(j, p.qos) for j in state.jobs},
        {j.id: i for i, j in enumerate(_priority(state, queue))},
    )
    started, preempted = _base_plan(r)
    mode: Mode = "none"
    order = _priority(state, queue)
    if p.elastic:
        waiting = [j for j in order if j.id not in r.alloc]
        if len(waiting) > p.compaction:
            mode = "compaction"
            # A job Tiresias just preempted waits one round rather than restart
            # smaller at once: stop-and-restart churn in a single round is no scale-in.
            fresh = [j for j in waiting if j.id not in preempted]
            started += [j.id for j in fresh if compact(r, j)]
        elif not waiting:
            mode = "expansion"
            _expand(r, order)
    resized = {
        j.id: r.workers(j.id)
        for j in state.running()
        if j.id in r.alloc and r.workers(j.id) != state.placement.workers_of(j.id)
    }
    decision = EdlDecision(
        placement=Placement.from_mapping(r.alloc),
        queues=MappingProxyType(queue),
        promoted=tuple(promoted),
        started=tuple(started),
        preempted=tuple(preempted),
        resized=MappingProxyType(resized),
        mode=mode,
    )
    return Solution(
        Status.FEASIBLE,
        cluster_throughput(state, decision.placement),
        decision,
        seconds=time.perf_counter() - start,
    )
