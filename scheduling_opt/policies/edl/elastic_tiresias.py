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
waiting job tried (P its requested workers, L <= ceil(P g / m) servers, D
donors; the donors and obtainable GPUs are computed once per change of the
round; a class of like jobs that fails before the check is not tried again
until the round changes: :func:`_compaction`), plus one re-run of the plan
per job it would start (the fixed-point check, on plain counts: O(R + S_w +
C log S_w) for R placed jobs, S_w streams of waiting jobs and C visited,
plus O(S log S) per start that fits);
expansion O(J log J + W log J) plus server scans for W workers added.
"""

from __future__ import annotations

import bisect
import heapq
import math
import time
from collections.abc import Hashable, Mapping, Sequence
from types import MappingProxyType

from scheduling_opt.model import Cluster, Placement, PlacementRow
from scheduling_opt.policies._numbers import expect
from scheduling_opt.policies.edl._round import Round
from scheduling_opt.policies.edl.compaction import compact
from scheduling_opt.policies.edl.model import (
    EdlDecision,
    EdlJob,
    EdlState,
    Mode,
    cluster_throughput,
    qos_floor,
    worker_counts,
)
from scheduling_opt.policies.edl.waiting import Waiting, take_head
from scheduling_opt.policies.locality import K, pick_servers
from scheduling_opt.solution import Seed, Solution, Status, time_limit_of


def _priority(state: EdlState, queue: Mapping[str, int]) -> list[EdlJob]:
    """Tiresias order: lower queue first, FIFO (arrival order) inside a queue.

    Python's sort is stable, so sorting the arrival-ordered jobs by queue
    alone keeps FIFO inside a queue.
    """
    return sorted(state.jobs, key=lambda j: queue[j.job.id])


def _largest(cluster: Cluster, j: EdlJob, cache: dict[str | None, int]) -> int:
    """m: GPUs of the largest server j's GPU type fits (0: none), once per type and round."""
    t = j.job.gpu_type
    if t not in cache:
        cache[t] = max((s.gpus for s in cluster.servers if j.job.fits(s)), default=0)
    return cache[t]


def _place_gang(
    r: Round, j: EdlJob, workers: int, largest: dict[str | None, int]
) -> dict[str, int] | None:
    """``workers`` whole workers on the round's free GPUs (:func:`_gang`)."""
    return _gang(r.state.cluster, r.free, r.rank, j, workers, largest)


def _gang(
    cluster: Cluster,
    free: Mapping[str, int],
    rank: Mapping[str, int],
    j: EdlJob,
    workers: int,
    largest: dict[str | None, int],
) -> dict[str, int] | None:
    """``workers`` whole workers on ``free`` GPUs, on at most ceil(P_j g / m) servers."""
    d = j.job.gpus_per_worker
    usable = {s.id: free[s.id] // d for s in cluster.servers if j.job.fits(s) and free[s.id] >= d}
    # locality_limit's formula with m cached per GPU type (it scans every server).
    m = _largest(cluster, j, largest)
    limit = math.ceil(j.requested_gpus / m) if m else 0
    return gang_on(usable, workers, limit, rank)


def gang_on(
    usable: Mapping[K, int], workers: int, limit: int, rank: Mapping[K, int]
) -> dict[K, int] | None:
    """``workers`` on at most ``limit`` of the ``usable`` servers (free workers each), or None.

    :func:`~scheduling_opt.policies.locality.pick_servers` chooses the
    servers; they are filled in its order. O(S log S).
    """
    servers = pick_servers(usable, workers, limit, rank)
    if sum(usable[s] for s in servers) < workers:
        return None
    out: dict[K, int] = {}
    left = workers
    for s in servers:
        n = min(usable[s], left)
        out[s] = n
        left -= n
    return out


def _base_plan(r: Round, order: list[EdlJob]) -> tuple[list[str], list[str]]:
    """Tiresias: in priority order, a job is in the plan if its GPUs still fit the cluster.

    A running job keeps its workers and placement; one that no longer fits is
    preempted; a waiting job in the plan starts with P_j workers where the
    locality rule finds room (no migration, so fragmentation can defer it).
    """
    budget = r.state.cluster.total_gpus
    started, preempted = [], []
    keep: list[EdlJob] = []
    start: list[EdlJob] = []
    held = r.held  # local names: this loop runs over every job at every round
    for j in order:
        job = j.job
        running = held.get(job.id, 0)
        demand = (running or j.parallelism) * job.gpus_per_worker
        if demand <= budget:
            budget -= demand
            (keep if running else start).append(j)
        elif running:
            preempted.append(job.id)
    servers_of = r.state.placement.servers_of
    for j in keep:
        k = j.job.id
        r.keep(k, servers_of(k), held[k])
    largest: dict[str | None, int] = {}
    for j in start:
        where = _place_gang(r, j, j.parallelism, largest)
        if where is not None:
            for s, n in where.items():
                r.add(j.id, s, n)
            started.append(j.id)
    return started, preempted


class _Check:
    """The next-plan check's inputs in one compaction round (see :func:`_compaction`).

    ``waiting``: the round's waiting jobs; ``running``: ``(priority key,
    id, GPUs per worker)`` of every job the round places, ascending, built
    at the first check of the round (most rounds make none) and kept as
    compaction starts jobs; ``demand``: their GPUs in the round and
    ``index``: each one's place in ``running``, built at the first check
    after the round changed (a start changes its donors' workers);
    ``asked``: whether the last attempt reached the check; ``lost``:
    whether the check refused it with the attempted job among its victims
    (then every later job of its class is refused alike on this round, see
    :func:`_compaction`).
    """

    __slots__ = ("asked", "demand", "index", "lost", "running", "waiting")

    def __init__(self, waiting: Waiting) -> None:
        self.waiting = waiting
        self.running: list[tuple[int, str, int]] | None = None
        self.demand: list[int] | None = None
        self.index: dict[str, int] = {}
        self.asked = False
        self.lost = False

    def placed(self, r: Round) -> list[tuple[int, str, int]]:
        """``running``, built from ``r`` when first asked. O(R log R) then, O(1) after."""
        if self.running is None:
            prio, jobs = r.prio, r.jobs
            self.running = sorted((prio[k], k, jobs[k].job.gpus_per_worker) for k in r.alloc)
        return self.running

    def started(self, r: Round, key: int, j: EdlJob) -> None:
        """``j`` (priority key ``key``) started in ``r``: listed; the demands are stale."""
        bisect.insort(self.placed(r), (key, j.job.id, j.job.gpus_per_worker))
        self.demand = None

    def trial(
        self, r: Round, trial: Round, j: EdlJob
    ) -> tuple[list[tuple[int, str, int]], list[int]]:
        """``running`` and the demands of ``trial``: ``r`` with ``j`` started by compaction.

        The trial differs from ``r`` only in the jobs it ``touched`` (j and
        its donors; the jobs of ``r.touched`` read the same counts), so the
        lists of ``r`` are copied in C and those entries set: O(R) in C plus
        O(T) for T touched jobs, instead of a Python pass over the R placed
        jobs per check (issue 25, fourth pass).
        """
        running = self.placed(r)
        if self.demand is None:
            count = r.count
            self.demand = [count[k] * g for _, k, g in running]
            self.index = {k: i for i, (_, k, _) in enumerate(running)}
        g = j.job.gpus_per_worker
        entry = (r.prio[j.job.id], j.job.id, g)
        at = bisect.bisect_left(running, entry)
        running = running.copy()
        running.insert(at, entry)
        demand = self.demand.copy()
        count, jobs, index = trial.count, trial.jobs, self.index
        demand.insert(at, count[j.job.id] * g)
        for k in trial.touched:
            i = index.get(k)
            if i is not None:
                demand[i + 1 if i >= at else i] = count[k] * jobs[k].job.gpus_per_worker
        return running, demand


def _compact_stable(r: Round, j: EdlJob, check: _Check) -> bool:
    """Compaction of ``j`` (:func:`.compaction.compact`), kept only if the next plan keeps it.

    A start by compaction lies outside Tiresias' budget, and a scale-in frees
    budget the next call's plan may give to a waiting job ahead of ``j``: the
    plan run again on the round's placement (no time passed) would then
    preempt ``j`` or another job. Such a compaction is not made (``j``
    waits), so a call on the step's own output never preempts. The check
    (:func:`_replan_preempts`) runs once per compaction that would start a
    job; ``check.asked`` records that it ran, ``check.lost`` that it refused
    with ``j`` among the plan's victims.
    """

    def accept(trial: Round) -> bool:
        check.asked = True
        running, demand = check.trial(r, trial, j)
        victims: list[str] = []
        refused = _replan_preempts(trial, check.waiting, running, demand, victims)
        check.lost = refused and j.job.id in victims
        return not refused

    return compact(r, j, accept) > 0


def _replan_preempts(
    r: Round,
    waiting: Waiting,
    running: list[tuple[int, str, int]],
    demand: list[int] | None = None,
    victims: list[str] | None = None,
) -> bool:
    """Would the plan, run on the placement the round has so far, preempt a job?

    The next call sees the same jobs, service and queues (a promoted job that
    started keeps G0: its service restarts at 0), so the same priority order.
    That plan (:func:`_base_plan` on a round holding this one's placement,
    then :func:`_restore_idle_victims`) preempts iff a victim of its budget
    pass cannot go back on its GPUs after its starts. Computed here without
    building that placement or round (issue 25: the check ran per
    compaction attempt and was most of a full-trace run): the budget pass
    over plain integers; none of its victims means no preemption; else the
    keeps leave this round's free GPUs plus the victims' (``r.free`` is the
    servers' GPUs less the placement's), the starts take their gangs from
    them in order exactly as the plan places them (a start whose gang
    cannot fit the largest usable counts is skipped without the server
    choice, which would fail), and the victims are put back in order.

    The budget pass visits only the waiting jobs whose P_j g still fits:
    the streams' heads merged by key, a stream dropped once its P_j g
    exceeds the budget (the budget only falls), so a long queue costs
    nothing past what fits (issue 25, second pass: the pass over every job
    in the order was O(J) per check); the placed jobs (``running``, by
    priority key) between two such jobs are kept in one sum when they fit.
    ``tests/policies/test_edl_replan.py`` checks it against the plan run in
    full (the code before both changes). ``demand``: the GPUs of each
    ``running`` job in ``r`` (default: read from ``r.count``); ``victims``:
    filled with the budget pass's victims when given. A start whose
    gang fits one server (ceil(P_j g / m) = 1) takes the server
    :func:`gang_on` would choose, found by one scan: the fewest usable
    workers that hold it, then the lowest rank (issue 25, fourth pass).
    O(R + S + C log S) for R placed jobs, S streams and C waiting jobs
    visited, plus O(S) per start of one server and O(S log S) per other
    start that fits.
    """
    budget = r.state.cluster.total_gpus
    alloc, count, jobs = r.alloc, r.count, r.jobs
    streams, job_of = waiting.streams, waiting.job
    heads = [
        (s.base + s.items[0], n) for n, s in enumerate(streams) if s.items and s.want <= budget
    ]
    heapq.heapify(heads)
    at = [0] * len(streams)
    if victims is None:
        victims = []
    starts: list[EdlJob] = []
    if demand is None:
        demand = [count[k] * g for _, k, g in running]
    pos, placed = 0, len(running)
    while True:
        # The placed jobs before the next candidate: kept in one step when they
        # all fit, else one by one (a victim each that does not; all victims
        # once the budget is 0, since every one holds a GPU).
        end = bisect.bisect_left(running, (heads[0][0],), pos) if heads else placed
        if end > pos:
            held = sum(demand[pos:end])
            if held <= budget:
                budget -= held
            else:
                for t in range(pos, end):
                    if not budget:
                        victims.extend(x[1] for x in running[t:end])
                        break
                    if demand[t] <= budget:
                        budget -= demand[t]
                    else:
                        victims.append(running[t][1])
            pos = end
        if not heads:
            break
        n = heads[0][1]
        st = streams[n]
        if st.want > budget:
            heapq.heappop(heads)  # this P_j g no longer fits, nor will it
            continue
        j = job_of(take_head(heads, streams, at))
        if j.job.id not in alloc:  # else placed: listed in ``running``
            budget -= st.want
            starts.append(j)
    if not victims:
        return False
    free = dict(r.free)
    for k in victims:
        g = jobs[k].job.gpus_per_worker
        for s, n in alloc[k].items():
            free[s] += n * g
    cluster, rank = r.state.cluster, r.rank
    largest: dict[str | None, int] = {}
    tops: dict[tuple[str | None, int], list[int]] = {}
    for j in starts:
        job = j.job
        d = job.gpus_per_worker
        m = _largest(cluster, j, largest)
        limit = math.ceil(j.requested_gpus / m) if m else 0
        if limit == 1:
            # pick_servers with one server: the fewest usable workers that
            # hold the gang, then the rank (none: gang_on's None).
            need, best, pick = j.parallelism, None, ""
            for server in cluster.servers:
                u = free[server.id] // d
                if u >= need and job.fits(server):
                    here = (u, rank[server.id])
                    if best is None or here < best:
                        best, pick = here, server.id
            if best is not None:
                free[pick] -= need * d
                tops.clear()
            continue
        sort = (job.gpu_type, d)
        top = tops.get(sort)
        if top is None:
            top = tops[sort] = sorted(
                (free[s.id] // d for s in cluster.servers if job.fits(s) and free[s.id] >= d),
                reverse=True,
            )
        if sum(top[:limit]) < j.parallelism:
            continue
        where = _gang(cluster, free, rank, j, j.parallelism, largest)
        if where is not None:
            for s, n in where.items():
                free[s] -= n * d
            tops.clear()
    for k in victims:
        g = jobs[k].job.gpus_per_worker
        where = alloc[k]
        if any(free[s] < n * g for s, n in where.items()):
            return True
        for s, n in where.items():
            free[s] -= n * g
    return False


def _restore_idle_victims(r: Round, preempted: list[str]) -> list[str]:
    """Keep running the jobs the plan preempted whose GPUs no started job took.

    In priority order, a victim whose every GPU is still free after the
    plan's starts goes back on exactly its servers; the others stay
    preempted (returned, in the same order). In every elastic round:
    without it, compaction handed an idle victim's GPUs to a waiting job
    behind it, the next call's plan preempted that job for the same budget
    reason and compaction gave the GPUs back to the victim, and so on at
    one instant (docs/elastic.md, rule 5).
    O(rows of the victims).
    """
    held, servers_of = r.held, r.state.placement.servers_of
    still: list[str] = []
    for k in preempted:
        where = servers_of(k)
        g = r.jobs[k].job.gpus_per_worker
        if all(r.free[s] >= n * g for s, n in where.items()):
            r.keep(k, where, held[k])
        else:
            still.append(k)
    return still


#: The servers a GPU type fits (cluster order, and as a set) and the largest one's GPUs (m).
_Fitting = tuple[list[str], frozenset[str], int]


def _expand(r: Round, order: Sequence[EdlJob]) -> None:
    """Algorithm 1 lines 7-12: each free GPU to the running job gaining most.

    Gain: S(p+1)/S(p) - 1 > 0 (EDL §6.3: never a scale-out that lowers
    throughput). A worker needs its GPUs on one server, and the job may use
    a new server only within ceil((p+1) g / m) servers. Ties: priority order,
    then a server the job already uses, then cluster order.

    The jobs wait in a heap by their key (-gain, priority position); the
    top job with a server gets a worker and goes back with its next gain.
    A job without a server is dropped for the call: a worker added elsewhere
    only takes free GPUs and changes no other job's workers or servers, so
    it never finds one later. The first job popped that has a server is the
    one a scan of every job would choose (issue 25; before, each worker
    scanned every job). A job's servers (those its GPU type fits, in cluster
    order) and m are computed once per call; only jobs with a server when
    the call starts get a key, and the loop stops when no GPU is idle.
    O(J log J + W log J) plus the server scans, for W workers added.
    """
    left = sum(r.free.values())
    if left <= 0:
        return  # no idle GPU: no job finds a server
    fitting: dict[str | None, _Fitting] = {}
    heap: list[tuple[float, int]] = []
    workers = r.count.get
    for i, j in enumerate(order):
        job = j.job
        p = workers(job.id, 0)
        if not p or p >= job.max_workers or not job.elastic:
            continue
        t = job.gpu_type
        if t not in fitting:
            servers = [s for s in r.state.cluster.servers if job.fits(s)]
            ids = [s.id for s in servers]
            fitting[t] = (ids, frozenset(ids), max((s.gpus for s in servers), default=0))
        # Without a server now, never in this call (above): not worth a key.
        if _expansion_server(r, j, p, fitting[t]) is None:
            continue
        key = _expansion_key(r, j)
        if key is not None:
            heap.append((key, i))
    heapq.heapify(heap)
    while heap and left > 0:
        _, i = heapq.heappop(heap)
        j = order[i]
        server = _expansion_server(r, j, r.workers(j.id), fitting[j.job.gpu_type])
        if server is None:
            continue
        r.add(j.id, server, 1)
        left -= j.job.gpus_per_worker
        key = _expansion_key(r, j)
        if key is not None:
            heapq.heappush(heap, (key, i))


def _expansion_key(r: Round, j: EdlJob) -> float | None:
    """-gain of one more worker of running elastic ``j``, None when it may not grow or gains <= 0."""
    p = r.workers(j.id)
    if not p or not j.job.elastic or p >= j.job.max_workers:
        return None
    gain = j.throughput(p + 1) / j.throughput(p) - 1
    return -gain if gain > 0 else None


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


def _placement(r: Round) -> Placement:
    """``Placement.from_mapping(r.alloc)``, reusing the rows of the jobs the round kept as they ran.

    Most running jobs keep their servers from round to round, and building
    and validating a row per (job, server) at every round was a large part
    of the step. A job placed by ``Round.keep`` and never ``touched`` has
    exactly its rows of ``state.placement``, in the same server order
    (``keep`` copies ``servers_of``, which follows the rows). O(rows).
    """
    previous: dict[str, list[PlacementRow]] = {}
    for row in r.state.placement.rows:
        previous.setdefault(row.job, []).append(row)
    rows: list[PlacementRow] = []
    touched = r.touched
    for job, servers in r.alloc.items():
        if job in touched or job not in previous:
            rows.extend(PlacementRow(job, server, n) for server, n in servers.items() if n)
        else:
            rows.extend(previous[job])
    return Placement(tuple(rows))


def elastic_rules(
    r: Round,
    order: Sequence[EdlJob],
    preempted: list[str],
    started: list[str],
    waiting: Waiting | None = None,
) -> Mode:
    """Compaction when more than N jobs wait, expansion when none does (after the plan's restore).

    ``order`` is the round's priority order (``r.prio`` its positions),
    ``preempted`` the plan's victims still preempted; jobs compaction
    starts are appended to ``started``. ``waiting``: the round's waiting
    jobs (default: built from ``order``, O(J)); the simulator's adapter
    keeps them across calls and passes them, with ``order`` read only by
    expansion (when no job waits). ``r.floors`` is filled from the state's
    jobs when empty. Returns the rule that ran. Shared by the step and the
    simulator's incremental adapter, which calls it only when a rule runs.
    """
    p = r.params
    if waiting is None:
        waiting = Waiting.of(r, order)
    if waiting.count > p.compaction:
        if not r.floors:
            r.floors = {j.job.id: qos_floor(j, p.qos) for j in r.state.jobs}
        # A job Tiresias just preempted (a start took its GPUs) waits one round
        # rather than restart smaller at once: stop-and-restart churn in a
        # single round is no scale-in.
        _compaction(r, waiting, set(preempted), started)
        return "compaction"
    if not waiting.count:
        _expand(r, order)
        return "expansion"
    return "none"


def _compaction(r: Round, waiting: Waiting, gone: set[str], started: list[str]) -> None:
    """Algorithm 1 lines 1-6: each waiting job in priority order, not ``gone``, compacted if stable.

    The same attempts as a loop over every waiting job, without visiting
    most of a long queue (issue 25): the streams' heads are merged by
    priority key, and a job whose attempt fails before the next-plan check
    marks its class (max(1, queue), :func:`.waiting.kind`) dead, since
    every job of the class fails alike until the round changes, which only
    a start does; a dead class's streams are parked, and a start revives
    them past its own key (their jobs before it were tried, in effect, on
    the unchanged round). A refusal by the check in general says nothing of
    the next job (it depends on the job's place in the order), but one with
    the job itself among the plan's victims (``_Check.lost``) does, and
    marks the class dead too (issue 25, fourth pass: a long queue of 1-GPU
    jobs made hundreds of such checks in one call, one per job).

    Why. Let j (key x) and a later j' (key x' > x) be of one class, on one
    round r. Their attempts are the same (the same donors scaled in, the
    same servers and workers for the started job: compaction reads only
    the class and r), so the two trials differ only in which of j, j' is
    placed, with the same demand c. The check's budget pass is the same on
    both before x; j a victim of its trial means the budget b at x was
    below c <= P_j g. On the trial of j' at x, j waits and does not fit
    (P_j g > b), so its stream is dropped as on j's trial (the pass tests
    the head's P_j g before whether the head is placed); the budget only
    falls, so at x' j' is a victim of its trial, as j' (waiting) fails to
    fit on j's. Between and after, the pass meets the same jobs with the
    same budget: the same other victims and the same starts, whose gangs
    then go on the same free GPUs (j and j' hold the same). The restore
    refuses iff some server holding a victim lost GPUs to the starts beyond
    its free ones (taking the last victim restored there, whose GPUs alone
    are then left: free + its GPUs - started < its GPUs), which reads only
    the victims' servers, the same for both. So j' is refused too.

    O(S + T log S) plus the attempts, for S streams and T jobs tried.
    """
    alloc = r.alloc
    check = _Check(waiting)
    streams, job_of = waiting.streams, waiting.job
    heads = [(s.base + s.items[0], n) for n, s in enumerate(streams) if s.items]
    heapq.heapify(heads)
    at = [0] * len(streams)
    dead: set[Hashable] = set()
    parked: list[int] = []
    while heads:
        key, n = heads[0]
        s = streams[n]
        if s.cls in dead:
            heapq.heappop(heads)
            parked.append(n)
            continue
        j = job_of(take_head(heads, streams, at))
        k = j.job.id
        if k in alloc or k in gone:
            continue
        check.asked = False
        if _compact_stable(r, j, check):
            started.append(k)
            check.started(r, key, j)
            dead.clear()
            for m in parked:
                t = streams[m]
                i = at[m] = bisect.bisect_right(t.items, key - t.base, at[m])
                if i < len(t.items):
                    heapq.heappush(heads, (t.base + t.items[i], m))
            parked.clear()
        elif not check.asked or check.lost:
            dead.add(s.cls)


def queues(state: EdlState) -> tuple[dict[str, int], list[str]]:
    """Every job's queue, and the waiting jobs promoted to G0 for starving.

    Parameters
    ----------
    state : EdlState
        The round's input (its ``params`` hold the thresholds and the
        starvation rule: a fixed limit, or Tiresias' knob times the job's
        executed time).

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
    expect(state, EdlState, "state")
    return _queues(state, worker_counts(state.placement))


def _queues(state: EdlState, held: Mapping[str, int]) -> tuple[dict[str, int], list[str]]:
    """:func:`queues` with the placement's worker counts given (``held``)."""
    p = state.params
    out, promoted = {}, []
    for j in state.jobs:
        q = p.queue(j.service)
        if q and j.id not in held and j.waiting >= p.limit(j):
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
    ``params.elastic``: a preempted job whose GPUs no start took keeps
    running; compaction when more than N jobs still wait (a compaction the
    plan re-run on the result would undo is not made), expansion when none
    waits and GPUs are idle. So a call on the step's own output (no time
    passed) never preempts (docs/elastic.md, rule 5).

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
    expect(state, EdlState, "state")
    start = time.perf_counter()
    time_limit_of(time_limit)
    p = state.params
    held = worker_counts(state.placement)
    queue, promoted = _queues(state, held)
    order = _priority(state, queue)
    r = Round(
        state,
        p,
        {},
        {s.id: s.gpus for s in state.cluster.servers},
        queue,
        {s.id: i for i, s in enumerate(state.cluster.servers)},
        state.jobs_by_id,
        {},  # floors: only compaction reads them, filled below when it runs
        {j.job.id: i for i, j in enumerate(order)},
        {},
        held,
    )
    started, preempted = _base_plan(r, order)
    mode: Mode = "none"
    if p.elastic:
        preempted = _restore_idle_victims(r, preempted)
        mode = elastic_rules(r, order, preempted, started)
    count = r.count
    changed = {k for k, n in held.items() if k in r.alloc and count[k] != n}
    # In arrival order, as the jobs are (a scan of all jobs only when one changed).
    resized = (
        {j.job.id: count[j.job.id] for j in state.jobs if j.job.id in changed} if changed else {}
    )
    decision = EdlDecision(
        placement=_placement(r),
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
