"""EDL's Elastic-Tiresias in the simulator: the step's rules kept incrementally across calls.

The policy is :func:`~scheduling_opt.policies.edl.elastic_tiresias_step`
(EDL (TPDS '22) §5.1 Algorithm 1, §6.3; Tiresias (NSDI '19)) over the
unfinished jobs: one worker per GPU, ``min_gpus``..``max_gpus`` workers, the
requested parallelism P_j = the trace's GPU count, the attained service
(GPU-time since the last promotion), the time waited since the job last
ran, and S(p)/S(1) from the job's scaling curve (the engine's speed model,
so the policy's gains and the simulated speeds agree). Its new placement
becomes preemptions, resizes (shrinks before growths, so a compaction frees
GPUs before they are used) and starts; the timer is the next threshold
crossing of a running job or starvation promotion of a waiting one.

Times: the trace's unit; ``unit_seconds`` converts EDL's thresholds (500 and
10,000 GPU-seconds) and starvation limit (3,600 s) into it (60 for the
Chronus-Philly minutes).

Cost (issue 25). Rebuilding the step's state at every call cost O(J)
objects per call for J unfinished jobs, and the full P_MIX2 trace makes
~30,000 calls over ~500-1,500 jobs. The adapter now keeps, across calls,
each job's queue (a sorted list of indices per queue, so the priority order
is their concatenation), each running job's workers, and a heap of the
times at which a queue can change: a running job's next threshold crossing
and a waiting job's starvation promotion, keyed a little early. A job's
queue is recomputed exactly (``bisect`` on its attained service, as the
step does) only when something happened to it or its heap time has come;
every other job's queue is unchanged, because attained service only grows
while a job runs at a fixed width and is constant while it waits. Per call
the Tiresias plan walks the priority order once over plain integers
(O(J), a few operations per job); the starts use the step's gang
placement on the free GPUs plus the victims' (what the step's kept jobs
leave); the timer is the exact minimum of the step's formula over the jobs
that changed and the heap's first entries (the heap's keys are within
float noise of the exact times, and entries are read until a key exceeds
the best exact time found by more than that noise). Only a call in which
compaction runs, or expansion with idle GPUs, builds the step's scratch
round (O(J)) and runs the step's own rules
(:func:`~scheduling_opt.policies.edl.elastic_tiresias.elastic_rules`). The
decisions are the step's, call by call:
``tests/policies/test_edl_incremental_equivalence.py`` runs the previous
adapter (the whole state rebuilt and the pure step called at every call,
``tests/policies/edl_rebuild.py``) beside this one.
"""

from __future__ import annotations

import bisect
import heapq
import math

from scheduling_opt.model import Cluster, GpuType, Job, Placement, Server
from scheduling_opt.policies.edl import (
    DEFAULT_COMPACTION,
    DEFAULT_QOS,
    DEFAULT_STARVATION,
    DEFAULT_THRESHOLDS,
    EdlJob,
    EdlState,
    Mode,
    TiresiasParams,
    qos_floor,
)
from scheduling_opt.policies.edl._round import Round
from scheduling_opt.policies.edl.elastic_tiresias import elastic_rules, gang_on
from scheduling_opt.policies.edl.waiting import Stream, Waiting, kind
from scheduling_opt.sim.cluster import Placement as SimPlacement
from scheduling_opt.sim.protocol import Decision, JobView, View
from scheduling_opt.sim.speed import _curve
from scheduling_opt.sim.workload import SimJob

#: Tolerance of a timer against the current time (float noise of service sums).
_EPS = 1e-9


def speedup(job: SimJob) -> tuple[float, ...]:
    """S(p)/S(1) for p = 1..max_gpus, from the job's scaling curve (empty: linear).

    The same interpolation the engine's speed model applies to an elastic job.

    Examples
    --------
    >>> speedup(SimJob("a", 0.0, 2, 10.0, min_gpus=1, max_gpus=3,
    ...                scaling=((1, 1.0), (2, 1.8), (3, 2.4))))
    (1.0, 1.8, 2.4)
    >>> speedup(SimJob("b", 0.0, 2, 10.0))
    ()
    """
    if not job.scaling:
        return ()
    base = _curve(job.scaling, 1)
    return tuple(_curve(job.scaling, p) / base for p in range(1, job.max_gpus + 1))


class _Sums:
    """Workers of one queue's running jobs, summed over a range of job indices (Fenwick tree).

    ``add(i, delta)`` and ``below(i)`` (the sum over indices < i) in
    O(log N) for N the largest index seen; the tree doubles when an index
    outgrows it (O(N) then, O(log N) times per run).
    """

    def __init__(self) -> None:
        self.tree = [0] * 1024
        self.values = [0] * 1024

    def add(self, i: int, delta: int) -> None:
        tree = self.tree
        n = len(tree)
        if i >= n:
            self._grow(i)
            tree = self.tree
            n = len(tree)
        self.values[i] += delta
        i += 1
        while i <= n:
            tree[i - 1] += delta
            i += i & -i

    def below(self, i: int) -> int:
        tree = self.tree
        i = min(i, len(tree))
        total = 0
        while i > 0:
            total += tree[i - 1]
            i &= i - 1
        return total

    def _grow(self, i: int) -> None:
        n = len(self.tree)
        while n <= i:
            n *= 2
        values = self.values + [0] * (n - len(self.values))
        tree = values.copy()  # the linear build: each node passes its sum to its parent
        for k in range(1, n + 1):
            parent = k + (k & -k)
            if parent <= n:
                tree[parent - 1] += tree[k - 1]
        self.values, self.tree = values, tree


class EdlTiresias:
    """(Elastic-)Tiresias: :func:`~scheduling_opt.policies.edl.elastic_tiresias_step`'s rules.

    Parameters
    ----------
    elastic : bool
        True: Elastic-Tiresias (compaction and expansion); False: the same
        step's plain Tiresias (the ablation that isolates elasticity).
    unit_seconds : float
        Seconds per time unit of the trace (60 for minutes).
    thresholds, starvation : float
        In seconds (EDL §6.3: 500 and 10,000 GPU-seconds; 3,600 s).
    promote_knob : float or None
        None: a waiting job of a lower queue returns to G0 after
        ``starvation``; k: once it has waited k times the time it has run
        (Tiresias' STARVELIMIT rule, as the simulator's ``tiresias``
        applies it with k = 8; ``TiresiasParams.promote_knob``).
    compaction : int
        N: compaction when more than N jobs wait (EDL §6.3: 10).
    qos : float
        r: a scaled-in job keeps ceil(r P_j) workers (EDL §6.3: 0.5).

    Examples
    --------
    >>> from scheduling_opt.sim import ClusterSpec, Workload, simulate
    >>> w = Workload.of([SimJob("a", 0.0, 2, 10.0, min_gpus=1, max_gpus=4)], "demo")
    >>> out = simulate(w, ClusterSpec.uniform(1, 4), EdlTiresias(unit_seconds=1.0))
    >>> out.end  # expanded to 4 GPUs at once: linear scaling, twice as fast
    (5.0,)

    References
    ----------
    EDL (TPDS '22) §5.1 Algorithm 1, §6.3.
    """

    def __init__(
        self,
        *,
        elastic: bool = True,
        unit_seconds: float = 60.0,
        thresholds: tuple[float, ...] = DEFAULT_THRESHOLDS,
        starvation: float = DEFAULT_STARVATION,
        compaction: int = DEFAULT_COMPACTION,
        qos: float = DEFAULT_QOS,
        promote_knob: float | None = None,
    ) -> None:
        self.name = "elastic-tiresias" if elastic else "edl-tiresias"
        self.params = TiresiasParams(
            thresholds=tuple(t / unit_seconds for t in thresholds),
            starvation=starvation / unit_seconds,
            compaction=compaction,
            qos=qos,
            elastic=elastic,
            promote_knob=promote_knob,
        )
        self.cluster: Cluster | None = None
        self.capacity: tuple[int, ...] = ()
        # Per unfinished job, by index (inserted at arrival, so in arrival order):
        # the EdlJob validated once, its id, its P_j and its queue (after promotions).
        self.jobs: dict[int, EdlJob] = {}
        self.ids: dict[int, str] = {}
        self.want: dict[int, int] = {}
        self.level: dict[int, int] = {}
        # The same by id, as the step's round reads them (compaction's floors).
        self.by_id: dict[str, EdlJob] = {}
        self.floors: dict[str, int] = {}
        # Job indices of each queue, ascending: the priority order is their concatenation.
        levels = len(self.params.thresholds) + 1
        self.lists: list[list[int]] = [[] for _ in range(levels)]
        # The same split for the plan: running jobs, and waiting jobs by kind
        # (waiting.kind, numbered in order of appearance; kind_want: its P_j g,
        # which is P_j here: one GPU per worker).
        self.runs: list[list[int]] = [[] for _ in range(levels)]
        self.waits: list[dict[int, list[int]]] = [{} for _ in range(levels)]
        self.kind: dict[int, int] = {}
        self.kinds: dict[tuple[object, ...], int] = {}
        self.kind_want: list[int] = []
        self.on: set[int] = set()  # the jobs listed in ``runs``
        # Workers of each queue's running jobs, and each one's as listed there.
        self.run_total: list[int] = [0] * levels
        self.sums = [_Sums() for _ in range(levels)]  # the same by index range
        self.listed: dict[int, int] = {}
        # Per running job: its engine placement, workers and the step's placement
        # (server ids), as of the last look at it.
        self.running: dict[int, SimPlacement] = {}
        self.count: dict[int, int] = {}
        self.servers: dict[int, dict[str, int]] = {}
        # The same two by id, as the step's round takes them (kept, not rebuilt per call).
        self.held: dict[str, int] = {}
        self.alloc: dict[str, dict[str, int]] = {}
        # The jobs' tuple for the step's state, kept until a job comes or goes.
        self.state_jobs: tuple[EdlJob, ...] | None = None
        self.server_rank: dict[str, int] = {}  # the cluster's server ids -> their index
        # Each unfinished job's queue by id (the step's round reads it so), and
        # its place in the priority order as ``(queue << 32) | index`` (the
        # queues' lists concatenated sort so; job indices are below 2^32, as
        # ``limits.MAX_JOBS`` is 10^6): what the round's ``prio`` is read for
        # (compaction's donor order, the check's keys), kept as queues change.
        self.queue: dict[str, int] = {}
        self.prio: dict[str, int] = {}
        self.offset: dict[int, float] = {}  # service at the last promotion to G0
        # (time a little before a job's queue may change, job, stamp); stale when
        # the stamp is not the job's current one.
        self.events: list[tuple[float, int, int]] = []
        self.stamp: dict[int, int] = {}
        self.dirty: set[int] = set()  # jobs to look at again at the next call
        self.rank: dict[int, int] = {}  # server index -> itself (the step's tie-break)
        # The capacities last seen, their sum and the largest (0: none).
        self.sizes: tuple[tuple[int, ...], int, int] = ((), 0, 0)
        self.named: list[tuple[int, str]] = []  # (index, step's id) of the servers with GPUs
        # The waiting streams by (queue, kind), each over its list in ``waits``.
        self.streams: dict[tuple[int, int], Stream] = {}
        self.modes: dict[str, int] = {"compaction": 0, "expansion": 0, "none": 0}

    def stats(self) -> dict[str, float]:
        """How many calls ran each elastic rule (``compaction``, ``expansion``, ``none``)."""
        return {f"calls_{k}": float(v) for k, v in self.modes.items()}

    def _cluster(self, capacity: tuple[int, ...]) -> Cluster:
        if self.cluster is None or capacity != self.capacity:
            servers = tuple(Server(f"s{i}", "V100", c) for i, c in enumerate(capacity) if c > 0)
            self.cluster = Cluster((GpuType("V100"),), servers)
            self.capacity = capacity
            self.server_rank = {s.id: k for k, s in enumerate(servers)}
        return self.cluster

    # ------------------------------------------------------------------ bookkeeping

    def _admit(self, st: JobView) -> None:
        """A new job: validated once (the public EdlJob constructor checks the curve and P_j)."""
        i, j = st.index, st.job
        key = str(i)
        job = EdlJob(Job(key, j.min_gpus, j.max_gpus, j.work), 0.0, 0.0, speedup(j), j.gpus)
        self.jobs[i] = job
        self.ids[i] = key
        self.want[i] = job.parallelism
        self.by_id[key] = job
        self.floors[key] = qos_floor(job, self.params.qos)
        k = self.kinds.setdefault(kind(job), len(self.kinds))
        if k == len(self.kind_want):
            self.kind_want.append(job.requested_gpus)
        self.kind[i] = k
        self.level[i] = -1
        self.state_jobs = None
        self.dirty.add(i)

    def _forget(self, i: int) -> None:
        level = self.level.pop(i, None)
        if level is None:
            return
        if level >= 0:
            self._unlist(i, level)
            self._unsplit(i, level)
        key = self.ids.pop(i)
        del self.jobs[i], self.want[i], self.kind[i], self.by_id[key], self.floors[key]
        for d in (self.running, self.count, self.servers, self.offset, self.stamp):
            d.pop(i, None)
        self.held.pop(key, None)
        self.alloc.pop(key, None)
        self.state_jobs = None
        del self.queue[key], self.prio[key]
        self.dirty.discard(i)

    def _unlist(self, i: int, level: int) -> None:
        lst = self.lists[level]
        del lst[bisect.bisect_left(lst, i)]

    def _unsplit(self, i: int, level: int) -> None:
        if i in self.on:
            self.on.discard(i)
            n = self.listed.pop(i)
            self.run_total[level] -= n
            self.sums[level].add(i, -n)
            lst = self.runs[level]
        else:
            lst = self.waits[level][self.kind[i]]
        del lst[bisect.bisect_left(lst, i)]

    def _requeue(self, i: int, q: int, running: bool) -> None:
        old = self.level[i]
        if old == q and (i in self.on) == running:
            if running:  # a resize in place: the queue's total follows
                n = self.count[i]
                self.run_total[q] += n - self.listed[i]
                self.sums[q].add(i, n - self.listed[i])
                self.listed[i] = n
            return
        if old >= 0:
            self._unsplit(i, old)
        if running:
            self.on.add(i)
            self.listed[i] = self.count[i]
            self.run_total[q] += self.count[i]
            self.sums[q].add(i, self.count[i])
            bisect.insort(self.runs[q], i)
        else:
            bisect.insort(self.waits[q].setdefault(self.kind[i], []), i)
        if old != q:
            if old >= 0:
                self._unlist(i, old)
            bisect.insort(self.lists[q], i)
            self.level[i] = q
            key = self.ids[i]
            self.queue[key] = q
            self.prio[key] = (q << 32) | i

    def _refresh(self, view: View, now: float) -> list[int]:
        """Look again at the jobs that changed or whose heap time came; returns the promoted.

        Each such job's queue is the step's: ``bisect`` on its attained
        service now, G0 for a waiting job starving past the limit; its next
        heap time is pushed. Promoted jobs are returned in arrival order.
        """
        p = self.params
        th, levels, starvation, knob = p.thresholds, len(p.thresholds), p.starvation, p.promote_knob
        heap, stamp, dirty = self.events, self.stamp, self.dirty
        # Keys run up to ~1e-11 early or late against the exact crossing (float
        # noise of the service sums); a job is looked at from this much before.
        tol = 1e-7 * (1.0 + abs(now))
        while heap and heap[0][0] <= now + tol:
            _, i, s = heapq.heappop(heap)
            if stamp.get(i) == s:
                dirty.add(i)
        pending, running = view.pending, view.running
        promoted: list[int] = []
        offset, ids = self.offset, self.ids
        elastic = p.elastic  # only the elastic rules read the placements by server id
        for i in dirty:
            st = running.get(i) or pending.get(i)
            if st is None:
                continue
            las = st.service(now) - offset.get(i, 0.0)
            las = float(las) if las > 0.0 else 0.0  # max(0.0, las), the same float
            q = bisect.bisect_right(th, las)
            s = stamp[i] = stamp.get(i, 0) + 1
            place = st.placement
            if place:
                held = sum(g for _, g in place) if len(place) > 1 else place[0][1]
                self.running[i] = place
                self.count[i] = held
                key = ids[i]
                self.held[key] = held
                if elastic:
                    self.servers[i] = self.alloc[key] = {f"s{s}": g for s, g in place if g}
                if q < levels:
                    heapq.heappush(heap, (now + (th[q] - las) / held, i, s))
            else:
                self.running.pop(i, None)
                self.count.pop(i, None)
                self.servers.pop(i, None)
                key = ids[i]
                self.held.pop(key, None)
                self.alloc.pop(key, None)
                if q:
                    # A waiting job's executed time is constant: its limit is fixed.
                    limit = starvation if knob is None else knob * st.executed(now)
                    if float(max(0.0, now - st.queued_since)) >= limit:
                        promoted.append(i)
                        q = 0
                    else:
                        heapq.heappush(heap, (st.queued_since + limit, i, s))
            self._requeue(i, q, bool(place))
        dirty.clear()
        promoted.sort()
        return promoted

    # ------------------------------------------------------------------ the call

    def decide(self, view: View) -> Decision:
        now = view.now
        for st in view.finished:
            self._forget(st.index)
        for st in view.arrived:
            self._admit(st)
        self.dirty.update(st.index for st in view.started)
        self.dirty.update(st.index for st in view.evicted)
        if not self.level:
            return Decision()
        promoted = self._refresh(view, now)
        capacity = tuple(view.capacity)
        if capacity != self.sizes[0]:  # the cluster's total and largest server, once
            self.sizes = (capacity, sum(capacity), max((c for c in capacity if c > 0), default=0))
            self.named = [(s, f"s{s}") for s, c in enumerate(capacity) if c > 0]
        count, want = self.count, self.want
        # The Tiresias plan (the step's _base_plan): in priority order a job is in
        # the plan while its GPUs fit the cluster's; a running job outside it stops.
        budget = self.sizes[1]
        start: list[int] = []
        preempted: list[int] = []
        for q in range(len(self.runs)):
            budget = self._plan_queue(q, budget, start, preempted)
        # Kept jobs hold their GPUs; the victims' are free for the starts.
        free = list(view.free)
        for i in preempted:
            for s, g in self.running[i]:
                free[s] += g
        m = self.sizes[2]
        if len(self.rank) != len(capacity):
            self.rank = {s: s for s in range(len(capacity))}
        started: list[int] = []
        placed: dict[int, SimPlacement] = {}
        top: list[int] = []  # the free counts, largest first (until a start changes them)
        biggest = -1  # the largest free count (-1: to compute)
        for i in start:
            need = want[i]
            limit = -(-need // m) if m else 0
            if limit == 1:
                # gang_on's choice of one server (pick_servers): the fewest free
                # GPUs that hold the gang, then the lowest index (its rank).
                if biggest < 0:
                    biggest = max(free, default=0)
                if biggest < need:
                    continue  # most attempts: no server holds it
                # min((f, s) for f >= need): the smallest such count present,
                # its first server (list scans in C: counts are at most m).
                f = need
                while f not in free:
                    f += 1
                s = free.index(f)
                free[s] -= need
                started.append(i)
                placed[i] = ((s, need),)
                top, biggest = [], -1
                continue
            # The gang fits iff the `limit` largest free counts cover it (the
            # step's greedy takes the largest servers first): most attempts
            # fail, and this test skips their O(S log S) server choice.
            if not top:
                top = sorted(free, reverse=True)
            if sum(top[:limit]) < need:
                continue
            usable = {s: f for s, f in enumerate(free) if f >= 1}
            where = gang_on(usable, need, limit, self.rank)
            if where is not None:
                for s, n in where.items():
                    free[s] -= n
                started.append(i)
                placed[i] = tuple(sorted(where.items()))
                top, biggest = [], -1
        mode: Mode = "none"
        resize: list[tuple[int, int, SimPlacement]] = []
        after: dict[int, int] = {}  # new worker counts of the jobs the rules changed
        p = self.params
        if p.elastic:
            still = []
            running = self.running
            for i in preempted:  # a victim whose GPUs no start took keeps running
                place = running[i]
                if len(place) == 1:  # most jobs: one server, no generator
                    s, g = place[0]
                    if free[s] >= g:
                        free[s] -= g
                    else:
                        still.append(i)
                elif all(free[s] >= g for s, g in place):
                    for s, g in place:
                        free[s] -= g
                else:
                    still.append(i)
            preempted = still
            waiting = len(self.level) - (len(count) - len(preempted) + len(started))
            if waiting > p.compaction or (waiting == 0 and max(free, default=0) > 0):
                mode = self._elastic_rules(
                    capacity, free, preempted, started, placed, after, waiting
                )
                resize = [(after[i] - count[i], i, placed[i]) for i in sorted(after) if i in count]
                resize.sort()
            elif waiting == 0:
                mode = "expansion"  # no idle GPU: expansion changes nothing
        self.modes[mode] += 1
        for i in started:
            after.setdefault(i, sum(n for _, n in placed[i]))
        for i in preempted:
            after[i] = 0
        for i in promoted:
            after.setdefault(i, 0)
        wake = self._wake(view, now, after)
        for i in after:  # look at them again next call; their heap entries are stale
            self.stamp[i] += 1
            self.dirty.add(i)
        for i in promoted:
            self.offset[i] = view.pending[i].service(now)
        return Decision(
            starts=tuple((i, placed[i]) for i in started),
            preempt=tuple(preempted),
            resize=tuple((i, place) for _, i, place in resize),
            wake_at=wake,
        )

    def _plan_queue(self, q: int, budget: int, start: list[int], preempted: list[int]) -> int:
        """The Tiresias plan over one queue, in index order; returns the budget left.

        A running job stays while its GPUs fit the budget, else it stops; a
        waiting job is a start candidate when its P_j fits. Each P_j's
        waiting jobs are merged by index (a heap of their heads); a P_j above
        the budget is dropped at its first job, since the budget only falls:
        the jobs that cannot fit are never visited, which is most of a long
        queue. The running jobs between two candidates are taken in one
        step when their workers (a range sum of the queue's Fenwick tree)
        fit, one by one only when they do not (then some are preempted).
        O(C (log B + log N) + P) for C candidates, B distinct P_j, N jobs
        and P running jobs visited one by one (issue 25: the running jobs
        were visited one by one through the heap, most of a run).
        """
        count, runs, waits, sums = self.count, self.runs[q], self.waits[q], self.sums[q]
        pos = 0  # runs[pos:] not yet planned
        of = self.kind_want
        streams = [lst for k, lst in waits.items() if lst and of[k] <= budget]
        if streams:
            wants = [of[k] for k, lst in waits.items() if lst and of[k] <= budget]
            heads = [(lst[0], k) for k, lst in enumerate(streams)]
            heapq.heapify(heads)
            at = [0] * len(streams)
            while heads:
                x, k = heads[0]
                w = wants[k]
                if w > budget:
                    heapq.heappop(heads)  # this P_j no longer fits, nor will it
                    continue
                end = bisect.bisect_left(runs, x, pos)
                if end > pos:  # the running jobs before candidate x
                    held = sums.below(x) - sums.below(runs[pos])
                    if held <= budget:
                        budget -= held
                    else:
                        budget = _keep_or_stop(runs[pos:end], count, budget, preempted)
                    pos = end
                    if w > budget:
                        heapq.heappop(heads)
                        continue
                budget -= w
                start.append(x)
                n = at[k] = at[k] + 1
                if n < len(streams[k]):
                    heapq.heapreplace(heads, (streams[k][n], k))
                else:
                    heapq.heappop(heads)
        if pos >= len(runs):
            return budget
        rest = self.run_total[q] - (sums.below(runs[pos]) if pos else 0)
        if rest <= budget:
            return budget - rest  # every one fits: all kept
        return _keep_or_stop(runs[pos:], count, budget, preempted)

    def _elastic_rules(
        self,
        capacity: tuple[int, ...],
        free: list[int],
        preempted: list[int],
        started: list[int],
        placed: dict[int, SimPlacement],
        after: dict[int, int],
        waiting: int,
    ) -> Mode:
        """Compaction or expansion on the step's scratch round, built for this call.

        Fills ``started`` (compaction's starts appended), ``placed`` (the final
        placement of every started or resized job) and ``after`` (the new
        worker count of every resized job). ``waiting``: how many jobs wait
        after the plan. The waiting jobs go to the rules as the kept streams
        (each queue's lists by kind, plus one per victim), so that the rules
        visit only what they need of a long queue (issue 25); the priority
        order (O(J)) is built only for expansion, when no job waits. O(R + S)
        for R running jobs and S streams, plus the rules (the O(R) parts are
        dict copies).
        """
        ids, held = self.ids, self.held
        alloc = dict(self.alloc)  # the entries are shared: the round copies what it changes
        workers = dict(held)
        for i in preempted:
            key = ids[i]
            del alloc[key], workers[key]
        for i in started:
            key = ids[i]
            alloc[key] = {f"s{s}": n for s, n in placed[i]}
            workers[key] = sum(n for _, n in placed[i])
        jobs = self.jobs
        of, kinds, level = self.kind_want, self.kind, self.level
        # A queue's stream of a kind reads the kind's list itself (never
        # replaced, changed only between calls), so it is made once.
        made = self.streams
        streams = []
        for q, by_kind in enumerate(self.waits):
            for k, lst in by_kind.items():
                if lst:
                    stream = made.get((q, k))
                    if stream is None:
                        stream = made[q, k] = Stream(q << 32, (max(1, q), k), of[k], lst)
                    streams.append(stream)
        for i in preempted:  # waiting again: one stream each
            q, k = level[i], kinds[i]
            streams.append(Stream(q << 32, (max(1, q), k), of[k], (i,)))
        order = [] if waiting else [jobs[i] for lst in self.lists for i in lst]
        cluster = self._cluster(capacity)
        if self.state_jobs is None:
            self.state_jobs = tuple(jobs.values())
        state = EdlState._trusted(cluster, self.state_jobs, Placement(), self.params, self.by_id)
        r = Round(
            state,
            self.params,
            alloc,
            {name: free[s] for s, name in self.named},
            self.queue,
            self.server_rank,
            self.by_id,
            self.floors,
            self.prio,
            workers,
            held,
        )
        begun = [ids[i] for i in started]
        queued = Waiting(streams, jobs.__getitem__, waiting)
        mode = elastic_rules(r, order, [ids[i] for i in preempted], begun, queued)
        started[len(started) :] = [int(k) for k in begun[len(started) :]]
        for key in begun:
            placed[int(key)] = tuple(sorted((int(s[1:]), n) for s, n in r.alloc[key].items()))
        for key in r.touched:  # only the jobs the rules changed can be resized
            n = held.get(key)
            if n is not None and key in r.alloc and r.count[key] != n:
                i = int(key)
                after[i] = r.count[key]
                placed[i] = tuple(sorted((int(s[1:]), g) for s, g in r.alloc[key].items()))
        return mode

    def _wake(self, view: View, now: float, after: dict[int, int]) -> float | None:
        """The step's timer: the next threshold crossing or starvation promotion, exactly.

        The adapter's formula over every job (``now + (threshold - service) /
        workers`` for a running job below the last queue, ``now + starvation
        - waiting`` for a waiting job of a lower queue; only times after
        ``now + 1e-9``) is evaluated for the jobs in ``after`` (changed by
        this call, with their new workers) and for the heap's jobs in key
        order until a key exceeds the best time by more than its noise.
        """
        p = self.params
        th, levels, starvation, knob = p.thresholds, len(p.thresholds), p.starvation, p.promote_knob
        pending, running, offset = view.pending, view.running, self.offset
        floor = now + _EPS

        def at(i: int, held: int) -> float:
            st = running.get(i) or pending[i]
            las = st.service(now) - offset.get(i, 0.0)
            las = float(las) if las > 0.0 else 0.0  # max(0.0, las), the same float
            q = bisect.bisect_right(th, las)
            if held and q < levels:
                return now + (th[q] - las) / held
            if q > 0 and not held:
                waiting = 0.0 if st.placement else float(max(0.0, now - st.queued_since))
                limit = starvation if knob is None else knob * st.executed(now)
                return now + max(0.0, limit - waiting)
            return math.inf

        best = math.inf
        for i, held in after.items():
            t = at(i, held)
            if floor < t < best:
                best = t
        heap, stamp, count = self.events, self.stamp, self.count
        tol = 1e-7 * (1.0 + abs(now))
        kept: list[tuple[float, int, int]] = []
        while heap:
            entry = heap[0]
            if entry[0] - tol > best:
                break
            heapq.heappop(heap)
            i = entry[1]
            if stamp.get(i) != entry[2] or i in after:
                continue  # stale: dropped for good
            kept.append(entry)
            t = at(i, count.get(i, 0))
            if floor < t < best:
                best = t
        for entry in kept:
            heapq.heappush(heap, entry)
        return best if best < math.inf else None


def _keep_or_stop(runs: list[int], count: dict[int, int], budget: int, preempted: list[int]) -> int:
    """Running jobs in order: kept while their workers fit the budget, else preempted."""
    for i in runs:
        c = count[i]
        if c <= budget:
            budget -= c
        else:
            preempted.append(i)
    return budget
