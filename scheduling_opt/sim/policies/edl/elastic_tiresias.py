"""EDL's Elastic-Tiresias in the simulator: the step's rules on an index of the state kept across calls.

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

Every rule is the step's own function, called here on the adapter's view
of the state: a job's queue and promotion and when they next change
(:mod:`~scheduling_opt.policies.edl.priority`), Tiresias' budget pass, the
starts' gangs and the restore of idle victims
(:mod:`~scheduling_opt.policies.edl.plan`), which elastic rule runs and the
rules themselves (:func:`~scheduling_opt.policies.edl.elastic_tiresias.elastic_rules`
on a :class:`~scheduling_opt.policies.edl.round.Round`). What the adapter
keeps is an index of the state (:mod:`.index`), so that a call costs what
changed rather than O(J) objects: the full P_MIX2 trace makes tens of
thousands to over a million calls over hundreds to thousands of jobs. A
job's queue is recomputed only when something happened to it or the time
at which it can change has come (a heap of those times, as
:func:`~scheduling_opt.policies.edl.priority.job_queue` gave them at the
last look): attained service only grows while a job runs at a fixed
width and is constant while it waits. The timer is the exact minimum of
that formula over the jobs this call changed and the heap's first entries
(the keys are within float noise of the exact times, and entries are read
until a key exceeds the best exact time by more than that noise). The
round for the elastic rules (O(J)) is built only in a call where
compaction runs, or expansion with idle GPUs.
``tests/policies/test_edl_incremental_equivalence.py`` runs an adapter
that rebuilds the whole state and calls the pure step at every call
(``tests/policies/edl_rebuild.py``) beside this one: the same decisions,
call by call.
"""

from __future__ import annotations

import heapq
import math

from scheduling_opt.model import Cluster, GpuType, Job, Server
from scheduling_opt.policies.edl import (
    DEFAULT_COMPACTION,
    DEFAULT_QOS,
    DEFAULT_STARVATION,
    DEFAULT_THRESHOLDS,
    EdlJob,
    Mode,
    TiresiasParams,
    qos_floor,
)
from scheduling_opt.policies.edl.elastic_tiresias import elastic_rule, elastic_rules
from scheduling_opt.policies.edl.plan import Gangs, restore_idle
from scheduling_opt.policies.edl.priority import job_queue
from scheduling_opt.policies.edl.round import Round
from scheduling_opt.policies.edl.stragglers import DEFAULT_FACTOR, DEFAULT_WINDOW
from scheduling_opt.policies.edl.waiting import Waiting
from scheduling_opt.sim.cluster import Placement as SimPlacement
from scheduling_opt.sim.policies.edl.index import QueueIndex
from scheduling_opt.sim.policies.edl.system import (
    STRAGGLER_SPEED,
    Costs,
    Stragglers,
    make_room,
)
from scheduling_opt.sim.protocol import Decision, JobView, View
from scheduling_opt.sim.speed import scaling_at
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
    base = scaling_at(job.scaling, 1)
    return tuple(scaling_at(job.scaling, p) / base for p in range(1, job.max_gpus + 1))


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
        scaling: str = "edl",
        straggler_rate: float = 0.0,
        straggler_speed: float = STRAGGLER_SPEED,
        straggler_factor: float = DEFAULT_FACTOR,
        straggler_window: int = DEFAULT_WINDOW,
        mitigate: bool = True,
        seed: int = 0,
        migrate: bool = False,
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
        self.index = QueueIndex(len(self.params.thresholds) + 1)
        # Per unfinished job, by index (inserted at arrival, so in arrival
        # order): the EdlJob validated once and its P_j; by id, as the step's
        # round reads them: the job and compaction's floor.
        self.jobs: dict[int, EdlJob] = {}
        self.want: dict[int, int] = {}
        self.by_id: dict[str, EdlJob] = {}
        self.floors: dict[str, int] = {}
        # Per running job: its engine placement and workers as of the last look
        # at it; the same by id as the round takes them (kept, not rebuilt per call).
        self.running: dict[int, SimPlacement] = {}
        self.count: dict[int, int] = {}
        self.held: dict[str, int] = {}
        self.alloc: dict[str, dict[str, int]] = {}
        self.offset: dict[int, float] = {}  # service at the last promotion to G0
        # (time a little before a job's queue may change, job, stamp); stale when
        # the stamp is not the job's current one.
        self.events: list[tuple[float, int, int]] = []
        self.stamp: dict[int, int] = {}
        self.dirty: set[int] = set()  # jobs to look at again at the next call
        # The cluster as the step sees it (servers with GPUs, ids "s<index>") and
        # as the plan's gangs see it (positions = engine indices), per capacity.
        self.capacity: tuple[int, ...] | None = None
        self.cluster: Cluster | None = None
        self.server_rank: dict[str, int] = {}  # step's server id -> its rank
        self.named: list[tuple[int, str]] = []  # (index, step's id) of the servers with GPUs
        self.total = 0
        self.gangs = Gangs([], ())  # the starts' gangs, on the free GPUs of each call
        self.modes: dict[str, int] = {"compaction": 0, "expansion": 0, "none": 0}
        # EDL's runtime (system.py): what a resize stops, and the stragglers.
        self.costs = Costs.of(scaling, unit_seconds)
        self.stragglers = Stragglers(
            straggler_rate,
            straggler_speed,
            straggler_factor,
            straggler_window,
            mitigate,
            unit_seconds,
            seed,
        )
        self.stopped = 0.0  # trace units of stops charged
        self.migrate = migrate
        self.migrations = 0

    def stats(self) -> dict[str, float]:
        """Calls per elastic rule (``calls_compaction`` ...), stragglers removed, stops charged."""
        out = {f"calls_{k}": float(v) for k, v in self.modes.items()}
        if self.stragglers.rate:
            out["stragglers_removed"] = float(self.stragglers.removed)
        if self.costs.out or self.costs.inward:
            out["scaling_stop"] = self.stopped
        if self.migrate:
            out["migrations"] = float(self.migrations)
        return out

    def _servers(self, capacity: tuple[int, ...]) -> None:
        """The step's cluster and the server maps for ``capacity``, once per capacity."""
        self.capacity = capacity
        servers = tuple(Server(f"s{i}", "V100", c) for i, c in enumerate(capacity) if c > 0)
        self.cluster = Cluster((GpuType("V100"),), servers)
        self.server_rank = {s.id: k for k, s in enumerate(servers)}
        self.named = [(s, f"s{s}") for s, c in enumerate(capacity) if c > 0]
        self.total = sum(capacity)
        self.gangs = Gangs([], capacity, None, {s: s for s in range(len(capacity))})

    # ------------------------------------------------------------------ bookkeeping

    def _admit(self, st: JobView) -> None:
        """A new job: validated once (the public EdlJob constructor checks the curve and P_j)."""
        i, j = st.index, st.job
        job = EdlJob(Job(str(i), j.min_gpus, j.max_gpus, j.work), 0.0, 0.0, speedup(j), j.gpus)
        self.jobs[i] = job
        self.want[i] = job.parallelism
        self.by_id[job.id] = job
        self.floors[job.id] = qos_floor(job, self.params.qos)
        self.index.admit(i, job)
        self.dirty.add(i)

    def _forget(self, i: int) -> None:
        if not self.index.forget(i):
            return
        key = self.jobs.pop(i).id
        self.stragglers.gone(i)
        del self.want[i], self.by_id[key], self.floors[key]
        for d in (self.running, self.count, self.offset, self.stamp):
            d.pop(i, None)
        self.held.pop(key, None)
        self.alloc.pop(key, None)
        self.dirty.discard(i)

    def _refresh(self, view: View, now: float) -> list[int]:
        """Look again at the jobs that changed or whose heap time came; returns the promoted.

        Each such job's queue is the step's
        (:func:`~scheduling_opt.policies.edl.priority.job_queue` on its
        service since it last entered G0), and the time its queue can next
        change is pushed on the heap. Promoted jobs are returned in arrival
        order.
        """
        p = self.params
        heap, stamp, dirty, index = self.events, self.stamp, self.dirty, self.index
        # Keys run up to ~1e-11 early or late against the exact time (float
        # noise of the service sums); a job is looked at from this much before.
        tol = 1e-7 * (1.0 + abs(now))
        while heap and heap[0][0] <= now + tol:
            _, i, s = heapq.heappop(heap)
            if stamp.get(i) == s:
                dirty.add(i)
        pending, running = view.pending, view.running
        promoted: list[int] = []
        elastic = p.elastic  # only the elastic rules read the placements by server id
        offset = self.offset
        for i in dirty:
            st = running.get(i) or pending.get(i)
            if st is None:
                continue
            las = st.service(now) - offset.get(i, 0.0)
            las = float(las) if las > 0.0 else 0.0  # max(0.0, las), the same float
            s = stamp[i] = stamp.get(i, 0) + 1
            place = st.placement
            key = index.ids[i]
            if place:
                held = sum(g for _, g in place) if len(place) > 1 else place[0][1]
                self.running[i] = place
                self.count[i] = self.held[key] = held
                if elastic:
                    self.alloc[key] = {f"s{s}": g for s, g in place if g}
                q, up, wait = job_queue(p, las, held, 0.0, 0.0)
            else:
                held = 0
                self.running.pop(i, None)
                self.count.pop(i, None)
                self.held.pop(key, None)
                self.alloc.pop(key, None)
                # A waiting job's executed time is constant: its limit is fixed.
                waited = float(max(0.0, now - st.queued_since))
                q, up, wait = job_queue(p, las, 0, waited, st.executed(now))
                if up:
                    promoted.append(i)
                    wait = math.inf
            if wait < math.inf:
                heapq.heappush(heap, (now + wait, i, s))
            index.requeue(i, q, held)
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
        if not len(self.index):
            return Decision()
        promoted = self._refresh(view, now)
        capacity = tuple(view.capacity)
        if capacity != self.capacity:
            self._servers(capacity)
        count, want = self.count, self.want
        # Tiresias' plan: the budget pass, then the starts' gangs on the GPUs
        # the kept jobs leave (the view's free GPUs and the victims').
        start: list[int] = []
        preempted: list[int] = []
        self.index.plan(self.total, start, preempted)
        free = list(view.free)
        for i in preempted:
            for s, g in self.running[i]:
                free[s] += g
        gangs = self.gangs
        gangs.reset(free)
        started: list[int] = []
        placed: dict[int, SimPlacement] = {}
        for i in start:
            where = gangs.place(want[i])
            if where is not None:
                started.append(i)
                placed[i] = tuple(sorted(where))
        mode: Mode = "none"
        resize: list[tuple[int, int, SimPlacement]] = []
        after: dict[int, int] = {}  # new worker counts of the jobs the rules changed
        p = self.params
        if p.elastic:
            preempted = restore_idle(free, preempted, self.running.__getitem__)
            waiting = len(self.index) - (len(count) - len(preempted) + len(started))
            mode = elastic_rule(p, waiting)
            # Expansion with no idle GPU changes nothing: no round to build.
            if mode == "compaction" or (mode == "expansion" and max(free, default=0) > 0):
                self._elastic_rules(free, preempted, started, placed, after, waiting)
                resize = [(after[i] - count[i], i, placed[i]) for i in sorted(after) if i in count]
                resize.sort()
        self.modes[mode] += 1
        rates: list[tuple[int, float]] = []
        stalls: list[tuple[int, float]] = []
        if self.migrate and len(started) < len(start):
            self._make_room(view, start, started, preempted, placed, after, resize)
        if self.stragglers.rate:
            self._stragglers(now, started, preempted, placed, after, resize, rates)
        if resize and (self.costs.out or self.costs.inward):
            for _, i, _ in resize:
                stop = self.costs.stop(count[i], after[i])
                if stop > 0.0:
                    stalls.append((i, stop))
                    self.stopped += stop
        for i in started:
            after.setdefault(i, sum(n for _, n in placed[i]))
        for i in preempted:
            after[i] = 0
        for i in promoted:
            after.setdefault(i, 0)
        wake = self._wake(view, now, after)
        due = self.stragglers.next_due()
        if due is not None and (wake is None or due < wake):
            wake = due
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
            rate=tuple(rates),
            stall=tuple(stalls),
        )

    def _make_room(
        self,
        view: View,
        start: list[int],
        started: list[int],
        preempted: list[int],
        placed: dict[int, SimPlacement],
        after: dict[int, int],
        resize: list[tuple[int, int, SimPlacement]],
    ) -> None:
        """Worker migration (:func:`.system.make_room`) for the plan's starts that found no gang.

        The free GPUs after the call's decisions are rebuilt (O(R + S));
        a job the call already resized does not move. A move is a resize
        to the same size on one server; the waiting job then starts.
        """
        failed = [i for i in start if i not in placed]
        if not failed:
            return
        gone = set(preempted)
        free = list(view.capacity)
        movable: list[tuple[int, SimPlacement]] = []
        for i, place in self.running.items():
            if i in gone:
                continue
            rows = placed[i] if i in after else place
            for s, g in rows:
                free[s] -= g
            if i not in after:
                movable.append((i, rows))
        for i in started:
            for s, g in placed[i]:
                free[s] -= g
        gangs, want = self.gangs, self.want
        for f in failed:

            def fits(trial: list[int], n: int = want[f]) -> list[tuple[int, int]] | None:
                gangs.reset(trial)
                return gangs.place(n)

            found = make_room(free, movable, fits)
            if found is None:
                continue
            j, server, free, where = found
            for s, g in where:
                free[s] -= g
            placed[j] = ((server, self.count[j]),)
            after[j] = self.count[j]
            resize.append((0, j, placed[j]))
            movable = [m for m in movable if m[0] != j]
            started.append(f)
            placed[f] = tuple(sorted(where))
            self.migrations += 1
        resize.sort()

    def _stragglers(
        self,
        now: float,
        started: list[int],
        preempted: list[int],
        placed: dict[int, SimPlacement],
        after: dict[int, int],
        resize: list[tuple[int, int, SimPlacement]],
        rates: list[tuple[int, float]],
    ) -> None:
        """The straggler model and its removal (:mod:`.system`), after the rules' decision.

        A preempted job loses its straggler (speed factor back to 1); a
        started one may get one; a job whose removal is due loses one
        worker (the last GPU of its last server) when above its minimum,
        resized like the rules' resizes (``after``, ``placed``, ``resize``).
        """
        s = self.stragglers
        for i in preempted:
            if i in s.slow:
                s.gone(i)
                rates.append((i, 1.0))
        for i in started:
            factor = s.onset(i, self.jobs[i].job, sum(n for _, n in placed[i]), now)
            if factor is not None:
                rates.append((i, factor))
        count = self.count
        for i in s.ripe(now):
            n = after.get(i, count.get(i, 0))
            if i not in count or i in preempted or n - 1 < self.jobs[i].job.min_workers:
                continue
            rows = list(placed[i] if i in after else self.running[i])
            server, gpus = rows[-1]
            rows[-1:] = [(server, gpus - 1)] if gpus > 1 else []
            placed[i] = tuple(rows)
            after[i] = n - 1
            resize[:] = [r for r in resize if r[1] != i]
            resize.append((n - 1 - count[i], i, placed[i]))
            rates.append((i, 1.0))
            s.removed += 1
        resize.sort()  # shrinks first: the engine applies them in order

    def _elastic_rules(
        self,
        free: list[int],
        preempted: list[int],
        started: list[int],
        placed: dict[int, SimPlacement],
        after: dict[int, int],
        waiting: int,
    ) -> None:
        """Compaction or expansion on the step's round, built for this call from the index.

        Fills ``started`` (compaction's starts appended), ``placed`` (the final
        placement of every started or resized job) and ``after`` (the new
        worker count of every resized job). ``waiting``: how many jobs wait
        after the plan. The waiting jobs go to the rules as the index's
        streams plus one per victim, so that the rules visit only what they
        need of a long queue; the priority order (O(J)) is built only for
        expansion, when no job waits. O(R + S) for R running jobs and S
        streams, plus the rules (the O(R) parts are dict copies).
        """
        index, held = self.index, self.held
        ids = index.ids
        alloc = dict(self.alloc)  # the entries are shared: the round copies what it changes
        workers = dict(held)
        for i in preempted:
            key = ids[i]
            del alloc[key], workers[key]
        for i in started:
            key = ids[i]
            alloc[key] = {f"s{s}": n for s, n in placed[i]}
            workers[key] = sum(n for _, n in placed[i])
        assert self.cluster is not None
        r = Round(
            self.cluster,
            self.params,
            alloc,
            {name: free[s] for s, name in self.named},
            index.queue,
            self.server_rank,
            self.by_id,
            self.floors,
            index.prio,
            workers,
            held,
        )
        jobs = self.jobs
        order = [] if waiting else index.order(jobs)
        queued = Waiting(index.streams(preempted), jobs.__getitem__, waiting)
        begun = [ids[i] for i in started]
        elastic_rules(r, order, [ids[i] for i in preempted], begun, queued)
        started[len(started) :] = [int(k) for k in begun[len(started) :]]
        for key in begun:
            placed[int(key)] = tuple(sorted((int(s[1:]), n) for s, n in r.alloc[key].items()))
        for key in r.touched:  # only the jobs the rules changed can be resized
            n = held.get(key)
            if n is not None and key in r.alloc and r.count[key] != n:
                i = int(key)
                after[i] = r.count[key]
                placed[i] = tuple(sorted((int(s[1:]), g) for s, g in r.alloc[key].items()))

    def _wake(self, view: View, now: float, after: dict[int, int]) -> float | None:
        """The step's timer: the next threshold crossing or starvation promotion, exactly.

        The time :func:`~scheduling_opt.policies.edl.priority.job_queue`
        gives a job's queue, after now (only times after ``now + 1e-9``),
        evaluated for the jobs in
        ``after`` (changed by this call, with their new workers) and for the
        heap's jobs in key order until a key exceeds the best time by more
        than its noise.
        """
        p = self.params
        pending, running, offset = view.pending, view.running, self.offset
        floor = now + _EPS

        def at(i: int, held: int) -> float:
            st = running.get(i) or pending[i]
            las = st.service(now) - offset.get(i, 0.0)
            las = float(las) if las > 0.0 else 0.0  # as _refresh computes it
            waited = 0.0 if st.placement else float(max(0.0, now - st.queued_since))
            return now + job_queue(p, las, held, waited, st.executed(now))[2]

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
