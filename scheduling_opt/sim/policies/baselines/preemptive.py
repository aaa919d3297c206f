"""Preemptive baselines: SRTF and Tiresias (discretized 2D-LAS).

Both walk the pending jobs in priority order (ties: submit time, then id).
A job that fits the free GPUs starts (default placement). One that does not
may preempt running jobs of lower priority: they are considered lowest
priority first until one server could hold the job (a job of at most one
server's GPUs) or enough servers would be whole (a larger one); then only
the considered jobs on those target servers are preempted, lowest priority
first, until the targets have room; the others keep running. If no target
exists even with every lower-priority job gone, nothing is preempted and the
walk passes over the job and over every later job of its size in this call. The
victims rejoin the queue at the engine's follow-up call at the same instant
(the engine calls again while a decision preempts), where they may restart
on GPUs left free.

- ``srtf``: priority = shortest remaining time (for a pending job its
  remaining work plus what starting it costs: the engine's restart stall
  and start overhead, ``View.start_cost``; for a running one the time to its
  scheduled completion, which includes what its start cost). Counting the
  cost keeps a run stable under any restart cost: a job that preempts
  another finishes sooner than it would, start cost included, so the
  victim cannot win its GPUs back at once. Without it a started job, its
  end pushed back by its own start cost, lost to the job it had just
  preempted, again and again at one instant.
- ``tiresias``: priority = (queue, submit order), queue by attained service
  (GPU-time since the job's last promotion) against ``thresholds``; a job
  preempts only jobs of lower queues (latest submitted first), never one of
  its own queue, whose jobs start in FIFO order (MLFQ); a running
  job is demoted exactly when it crosses a threshold (a timer); a pending job
  in a lower queue is promoted to the first when it has waited
  ``promote_knob`` times its executed time since it last ran (Tiresias §3.2
  ``STARVELIMIT``; None disables). Defaults: two queues split at 3,250
  GPU-seconds (the Tiresias artifact's ``queue_limit``; 54.17 GPU-minutes in
  the trace's unit) and a knob of 8.
"""

from __future__ import annotations

import heapq
import math

from scheduling_opt.sim.cluster import FreeMap, Placement
from scheduling_opt.sim.policies.baselines.queues import ClassQueue, Key
from scheduling_opt.sim.protocol import PENDING, RUNNING, Decision, JobView, View

#: Tiresias artifact's first queue limit, 3,250 GPU-seconds, in minutes.
TIRESIAS_THRESHOLDS: tuple[float, ...] = (3250.0 / 60.0,)
TIRESIAS_KNOB = 8.0


class _Preemptive:
    """Priority preemption over a :class:`ClassQueue` and a max-heap of running jobs."""

    name = "preemptive"

    def __init__(self) -> None:
        self.queue = ClassQueue()
        self.keys: dict[int, Key] = {}
        # Lowest priority on top: (negated rank, index, engine version, rank stamp);
        # an entry is live while the job runs with that version and stamp.
        self.victims: list[tuple[tuple[float, ...], int, int, int]] = []
        self.stamp: dict[int, int] = {}
        self.limbo: list[int] = []

    # Subclasses: the queue key of a pending job, and a running job's rank in
    # the same space as rank_pending's (larger = lower priority).
    def pending_key(self, job: JobView, view: View) -> Key:
        raise NotImplementedError

    def rank_pending(self, key: Key, now: float) -> tuple[float, ...]:
        return tuple(float(x) for x in key)

    def running_rank(self, job: JobView, now: float) -> tuple[float, ...]:
        raise NotImplementedError

    def beats(self, rank: tuple[float, ...], victim: tuple[float, ...]) -> bool:
        """Whether a pending job of ``rank`` may preempt a running job of rank ``victim``."""
        return rank < victim

    def before_walk(self, view: View) -> None:
        """Hook: update the priorities that changed with time."""

    def left_running(self, index: int) -> None:
        """Hook: job ``index`` stopped running (finished, evicted or preempted)."""

    def started_now(self, job: JobView, placement: Placement, now: float) -> None:
        """Hook: ``job`` is started on ``placement`` by this call's decision."""

    def wake_at(self) -> float | None:
        """Hook: when priorities will change next (a timer), if ever."""
        return None

    def enqueue(self, job: JobView, view: View) -> None:
        key = self.pending_key(job, view)
        self.keys[job.index] = key
        self.queue.add(key, job.job.gpus)

    def push_running(self, job: JobView, now: float) -> None:
        rank = self.running_rank(job, now)
        stamp = self.stamp[job.index] = self.stamp.get(job.index, 0) + 1
        heapq.heappush(self.victims, (tuple(-x for x in rank), job.index, job.version, stamp))

    def _sync(self, view: View) -> None:
        now = view.now
        for st in (*view.finished, *view.evicted):
            self.left_running(st.index)
        for st in (*view.arrived, *view.evicted):
            self.enqueue(st, view)
        for index in self.limbo:
            back = view.pending.get(index)
            if back is not None:
                self.enqueue(back, view)
        self.limbo.clear()
        for st in view.started:
            if st.status == RUNNING:
                self.push_running(st, now)

    def _top_victim(self, view: View, taken: set[int]) -> JobView | None:
        """The lowest-priority running job, stale heap entries dropped."""
        heap = self.victims
        running = view.running
        stamps = self.stamp
        while heap:
            _, index, version, stamp = heap[0]
            st = running.get(index)
            if st is None or st.version != version or stamps[index] != stamp or index in taken:
                heapq.heappop(heap)  # finished, restarted or re-ranked since
                continue
            return st
        return None

    def _preempt_for(
        self, view: View, plan: FreeMap, rank: tuple[float, ...], gpus: int, taken: set[int]
    ) -> tuple[Placement | None, list[JobView]]:
        # Pop victims lowest priority first, counting the GPUs they would free
        # per server (the plan is left alone until a target is found), until
        # one server can hold the job (g <= K) or enough servers are whole.
        free, cap, kmax = plan.free, plan.capacity, plan.kmax
        extra: dict[int, int] = {}
        popped: list[tuple[tuple[float, ...], int, int, int]] = []
        victims: list[JobView] = []
        need = -(-gpus // kmax) if gpus > kmax else 0
        whole = [s for s, f in enumerate(free) if cap[s] > 0 and f == cap[s]] if need else []
        targets: list[int] = []
        while not targets:
            top = self._top_victim(view, taken)
            if top is None or not self.beats(rank, tuple(-x for x in self.victims[0][0])):
                break
            popped.append(heapq.heappop(self.victims))
            victims.append(top)
            taken.add(top.index)
            for s, g in top.placement:
                e = extra[s] = extra.get(s, 0) + g
                if need == 0 and free[s] + e >= gpus:
                    targets = [s]
                    break
                if need and free[s] + e == cap[s]:
                    whole.append(s)
            if need and len(whole) >= need:
                targets = sorted(whole)[:need]
        if not targets:
            for v in victims:
                taken.discard(v.index)
            for entry in popped:
                heapq.heappush(self.victims, entry)
            return None, []
        # Preempt only the popped victims the target servers need (in pop
        # order, until they have room); the others keep running.
        needed: list[JobView] = []
        for s in targets:
            goal = min(gpus, cap[s]) if need == 0 else cap[s]
            for v in victims:
                if plan.free[s] >= goal:
                    break
                if v not in needed and any(vs == s for vs, _ in v.placement):
                    needed.append(v)
                    plan.give(v.placement)
        for v, entry in zip(victims, popped, strict=True):
            if v not in needed:
                taken.discard(v.index)
                heapq.heappush(self.victims, entry)
        return plan.place(gpus), needed

    def decide(self, view: View) -> Decision:
        self._sync(view)
        self.before_walk(view)
        now = view.now
        plan = view.plan()
        starts: list[tuple[int, Placement]] = []
        preempt: list[int] = []
        taken: set[int] = set()
        heads = self.queue.heads()
        while heads:
            key, g = heads.pop(0)
            placement = plan.place(g)
            victims: list[JobView] = []
            if placement is None:
                rank = self.rank_pending(key, now)
                placement, victims = self._preempt_for(view, plan, rank, g, taken)
                if placement is None:
                    continue  # this size class is passed over for this call
            plan.take(placement)
            self.queue.pop_head(g)
            index = int(key[-1])
            del self.keys[index]
            starts.append((index, placement))
            self.started_now(view.pending[index], placement, now)
            for v in victims:
                preempt.append(v.index)
                self.limbo.append(v.index)
                self.left_running(v.index)
            lst = self.queue.lists[g]
            if lst:
                heads.append((lst[0], g))
                heads.sort()
        return Decision(starts=tuple(starts), preempt=tuple(preempt), wake_at=self.wake_at())


class Srtf(_Preemptive):
    """Shortest remaining time first, preemptive.

    Examples
    --------
    >>> Srtf().name
    'srtf'
    """

    name = "srtf"

    def pending_key(self, job: JobView, view: View) -> Key:
        return (job.remaining(view.now) + view.start_cost(job, job.job.gpus), job.index)

    def rank_pending(self, key: Key, now: float) -> tuple[float, ...]:
        # Compare on the absolute clock: a pending job would end at now + rem.
        return (now + float(key[0]), float(key[1]))

    def running_rank(self, job: JobView, now: float) -> tuple[float, ...]:
        return (job.end, float(job.index))


def _crossing_tolerance(now: float, gpus: int) -> float:
    """Attained service (GPU-time) within which a threshold counts as crossed at ``now``.

    At least 1e-9; and ``gpus`` x the clock's resolution at ``now``, so that
    a threshold not crossed yet is more than 1e-9 (plus rounding) of time
    away: its demotion timer then lands after this call's due timers
    (``before_walk`` pops those up to ``now + 1e-9``). With a fixed 1e-9 a
    job at t = 10^9 (resolution 1.2e-7) got a timer at ``now`` again and
    again: one call never returned (found by the simulator fuzz).
    """
    return gpus * (1e-9 + 2.0 * math.ulp(now))


class Tiresias(_Preemptive):
    """Discretized two-dimensional least-attained-service (Tiresias), preemptive."""

    name = "tiresias"

    def __init__(
        self,
        thresholds: tuple[float, ...] = TIRESIAS_THRESHOLDS,
        promote_knob: float | None = TIRESIAS_KNOB,
    ) -> None:
        super().__init__()
        self.thresholds = tuple(sorted(thresholds))
        self.knob = promote_knob
        self.offset: dict[int, float] = {}  # service at the last promotion
        self.level: dict[int, int] = {}
        self.demotions: list[tuple[float, int]] = []
        self.promotions: list[tuple[float, int, int]] = []
        # GPUs held per queue level per server by running jobs, and where.
        self.held: list[list[int]] = []
        self.where: dict[int, tuple[int, Placement]] = {}
        self.on_server: dict[int, set[int]] = {}

    def _queue_of(self, job: JobView, now: float) -> int:
        las = job.service(now) - self.offset.get(job.index, 0.0)
        tol = _crossing_tolerance(now, sum(g for _, g in job.placement) or job.job.gpus)
        q = 0
        for th in self.thresholds:
            if las >= th - tol:
                q += 1
        return q

    def pending_key(self, job: JobView, view: View) -> Key:
        now = view.now
        q = self._queue_of(job, now)
        self.level[job.index] = q
        if q > 0 and self.knob is not None:
            at = job.queued_since + self.knob * job.executed(now)
            heapq.heappush(self.promotions, (at, job.index, job.version))
        return (q, job.index)

    def running_rank(self, job: JobView, now: float) -> tuple[float, ...]:
        return (float(self.level.get(job.index, 0)), float(job.index))

    def decide(self, view: View) -> Decision:
        if not self.held:
            self.held = [[0] * len(view.capacity) for _ in range(len(self.thresholds) + 1)]
        return super().decide(view)

    def left_running(self, index: int) -> None:
        where = self.where.pop(index, None)
        if where is not None:
            row = self.held[where[0]]
            for s, g in where[1]:
                row[s] -= g
                self.on_server[s].discard(index)

    def _preempt_for(
        self, view: View, plan: FreeMap, rank: tuple[float, ...], gpus: int, taken: set[int]
    ) -> tuple[Placement | None, list[JobView]]:
        # Server-targeted, from per-server counts of the GPUs lower queues
        # hold: O(servers) per attempt instead of popping victims at random
        # places of the cluster (and freeing more than the job needs).
        level = int(rank[0])
        lower = self.held[level + 1 :]
        if not lower:
            return None, []
        free, cap = plan.free, plan.capacity
        if len(lower) == 1:
            room = [f + h for f, h in zip(free, lower[0], strict=True)]
        else:
            room = [f + sum(col) for f, *col in zip(free, *lower, strict=True)]
        if gpus <= plan.kmax:
            fit = [(r, s) for s, r in enumerate(room) if r >= gpus]
            if not fit:
                return None, []
            targets = [min(fit)[1]]  # best fit on free + preemptible GPUs
        else:
            whole = [s for s, r in enumerate(room) if cap[s] > 0 and r == cap[s]]
            n = -(-gpus // plan.kmax)
            if len(whole) < n:
                return None, []
            targets = whole[:n]
        victims: list[JobView] = []
        for s in targets:
            on = [
                (self.level[i], i)
                for i in self.on_server.get(s, ())
                if self.level[i] > level and i not in taken
            ]
            for _, i in sorted(on, reverse=True):  # lowest queue, latest submitted first
                if plan.free[s] >= min(gpus, cap[s]):
                    break
                v = view.running[i]
                victims.append(v)
                taken.add(i)
                plan.give(v.placement)
        placement = plan.place(gpus)
        if placement is None:  # cannot happen: the counts said it fits
            raise AssertionError("tiresias: targeted preemption did not free a placement")
        return placement, victims

    def beats(self, rank: tuple[float, ...], victim: tuple[float, ...]) -> bool:
        # Queues are FIFO and preempt only lower queues: a job is never
        # preempted by one of its own queue (the victims' order inside the
        # lowest queue is latest submitted first).
        return rank[0] < victim[0]

    def push_running(self, job: JobView, now: float) -> None:
        q = self._queue_of(job, now)
        self.level[job.index] = q
        self.left_running(job.index)
        if job.placement:
            row = self.held[q]
            for s, g in job.placement:
                row[s] += g
            self.where[job.index] = (q, job.placement)
            for s, _ in job.placement:
                self.on_server.setdefault(s, set()).add(job.index)
        super().push_running(job, now)
        if job.placement:
            self._demotion(job, job.placement, now)

    def _demotion(self, job: JobView, placement: Placement, now: float) -> None:
        las = job.service(now) - self.offset.get(job.index, 0.0)
        held = sum(g for _, g in placement)
        tol = _crossing_tolerance(now, held)
        q = sum(1 for th in self.thresholds if las >= th - tol)
        if q < len(self.thresholds):
            at = now + (self.thresholds[q] - las) / held
            # The crossing test forgives 1e-9 of service, the timer test 1e-9 of
            # time: a job within the crossing tolerance of its threshold (las
            # 1e-9..held x 1e-9 short, held large) would be re-timed to a
            # crossing that before_walk pops again at once, at the same
            # instant, for ever (the bundled day on 30 x 8 GPUs hung, growing
            # past 6 GB: 2x P_MIX2's density). The timer goes just
            # past the pop tolerance, where it crosses: nextafter keeps it past
            # now + 1e-9 even where the clock's ulp exceeds 1e-9.
            at = max(at, math.nextafter(now + 1e-9, math.inf))
            heapq.heappush(self.demotions, (at, job.index))

    def started_now(self, job: JobView, placement: Placement, now: float) -> None:
        # Its timer must be set now: no event may come before it crosses.
        self._demotion(job, placement, now)

    def before_walk(self, view: View) -> None:
        now = view.now
        while self.demotions and self.demotions[0][0] <= now + 1e-9:
            _, index = heapq.heappop(self.demotions)
            st = view.running.get(index)
            if st is not None:
                self.push_running(st, now)  # re-ranked (and re-timed) in its queue
        while self.promotions and self.promotions[0][0] <= now + 1e-9:
            _, index, version = heapq.heappop(self.promotions)
            st = view.pending.get(index)
            if st is None or st.version != version or st.status != PENDING:
                continue
            key = self.keys.get(index)
            if key is None:
                continue
            self.queue.remove(key, st.job.gpus)
            self.offset[index] = st.service(now)
            self.enqueue(st, view)

    def wake_at(self) -> float | None:
        times = [h[0][0] for h in (self.demotions, self.promotions) if h]
        return min(times) if times else None
