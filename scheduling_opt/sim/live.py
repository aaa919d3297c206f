"""The one owner of a simulation's mutable state, and the only module that applies decisions.

:class:`ClusterState` holds the job records, the pending and running sets,
the exclusive free map and the GPU-sharing slots (sim/sharing.py), the
busy-GPU count and the lists a policy call reports (arrived, finished,
started, evicted). Every change goes through its methods: a start, a stop,
a completion, a capacity change, a speed factor, a re-rating when a shared
GPU's partner comes or goes, and :meth:`ClusterState.apply` for a policy's
whole :class:`~scheduling_opt.sim.protocol.Decision`, which checks each part
with the read-only rules of :mod:`scheduling_opt.sim.check` before changing
anything for it.

Data flows one way: the engine (sim/engine.py) owns the clock and the event
heap and calls down into this state; the state tells the engine about a
job's new completion time through the ``schedule`` callback it was given,
never by importing it. Policies read the state through
:class:`~scheduling_opt.sim.view.LiveView`.

Cost: a start or stop is O(servers of the job) plus O(GPUs of the job x
GPUs per server) with sharing; nothing loops over the running jobs except a
capacity change that evicts.
"""

from __future__ import annotations

import math
from collections.abc import Callable

from scheduling_opt.sim.check import (
    capacity_error,
    index_error,
    placement_error,
    preempt_error,
    rate_error,
    resize_error,
    stall_error,
    start_error,
    terms_error,
)
from scheduling_opt.sim.cluster import ClusterSpec, FreeMap, Placement
from scheduling_opt.sim.protocol import DONE, PENDING, RUNNING, Decision, PolicyError, StartTerms
from scheduling_opt.sim.sharing import EXCLUSIVE, OPPORTUNISTIC, Gpu, Sharing
from scheduling_opt.sim.speed import SpeedModel
from scheduling_opt.sim.state import JobState
from scheduling_opt.sim.workload import SimJob, Workload

#: ``schedule(time, job index, version)``: the engine's completion event for a job.
Schedule = Callable[[float, int, int], None]


class ClusterState:
    """Jobs, free GPUs and sharing slots of one run; every change goes through here.

    Parameters
    ----------
    workload : Workload
        The jobs (one :class:`~scheduling_opt.sim.state.JobState` each, in order).
    cluster : ClusterSpec
        The servers (an unavailable one starts with capacity 0).
    speed : SpeedModel
        The placement speed model.
    restart_cost, preemption_cost : float
        Stall after each resume or resize, work lost at each preemption.
    resize_cost : float or None
        Stall after a resize or migration (None: ``restart_cost``).
    start_overhead : float
        Work owed at each start from pending (the first included), times
        ``1 + log2`` of the GPUs it starts on (EngineParams).
    share_slowdown, host_slowdown : float
        The interference model of a shared GPU (sim/sharing.py).
    guests_per_gpu : int
        Opportunistic slots per GPU (sim/sharing.py; 1 unless the policy
        declares more, :class:`~scheduling_opt.sim.protocol.Stacking`).
    policy_name : str
        Named in every :class:`~scheduling_opt.sim.protocol.PolicyError`.
    schedule : callable
        Called with ``(time, job index, version)`` whenever a running job's
        completion time changes.
    """

    def __init__(
        self,
        workload: Workload,
        cluster: ClusterSpec,
        speed: SpeedModel,
        *,
        restart_cost: float,
        preemption_cost: float,
        share_slowdown: float,
        host_slowdown: float,
        policy_name: str,
        schedule: Schedule,
        start_overhead: float = 0.0,
        resize_cost: float | None = None,
        guests_per_gpu: int = 1,
    ) -> None:
        self.cluster = cluster
        self.speed_model = speed
        self.restart_cost = restart_cost
        self.preemption_cost = preemption_cost
        self.start_overhead = start_overhead
        self.resize_cost = restart_cost if resize_cost is None else resize_cost
        self.policy_name = policy_name
        self.schedule = schedule
        self.compute = tuple(s.compute for s in cluster.servers)
        self.freemap = FreeMap([s.gpus if s.available else 0 for s in cluster.servers])
        self.sharing = Sharing(
            [s.gpus for s in cluster.servers],
            share_slowdown=share_slowdown,
            host_slowdown=host_slowdown,
            guests_per_gpu=guests_per_gpu,
        )
        for i, s in enumerate(cluster.servers):
            if not s.available:
                self.sharing.guests.set_capacity(i, 0)
        self.states = [JobState(j, i) for i, j in enumerate(workload.jobs)]
        self.pending: dict[int, JobState] = {}
        self.running: dict[int, JobState] = {}
        self.arrived: list[JobState] = []
        self.finished: list[JobState] = []
        self.started: list[JobState] = []
        self.evicted: list[JobState] = []
        self.now = 0.0
        self.busy = 0
        self.cap_total = sum(self.freemap.capacity)

    # ------------------------------------------------------------------ basics

    def speed_of(self, job: SimJob, placement: Placement) -> float:
        """Speed of ``job`` on ``placement`` under this run's model."""
        return self.speed_model.speed(job, placement, self.compute)

    def start_cost(self, resumed: bool, gpus: int) -> float:
        """Time a start on ``gpus`` GPUs adds before the job's work goes on, at speed 1.

        The restart stall when it ran before, plus the start overhead's work
        (``start_overhead`` x (1 + log2 g)), as :meth:`launch` charges them.
        """
        stall = self.restart_cost if resumed else 0.0
        if self.start_overhead and gpus > 0:
            stall += self.start_overhead * (1.0 + math.log2(gpus))
        return stall

    def progress(self) -> tuple[float, int]:
        """Useful work done by now over all jobs (start overheads not counted), and the changes made.

        The work grows while any job gets past what its starts cost; the
        second number, the sum of the jobs' versions, grows at every start,
        preemption and resize. O(jobs).
        """
        now = self.now
        work = sum(st.attained(now) - st.owed for st in self.states)
        return work, sum(st.version for st in self.states)

    def fail(self, job: JobState | None, reason: str) -> PolicyError:
        """The loud error naming the policy, the time and the job."""
        who = f" job {job.job.id!r}:" if job is not None else ""
        return PolicyError(f"policy {self.policy_name!r} at t={self.now:g}:{who} {reason}")

    def clear_reports(self) -> None:
        """Forget what the last policy call was told (arrived, finished, started, evicted)."""
        self.started.clear()
        self.arrived.clear()
        self.finished.clear()
        self.evicted.clear()

    def arrive(self, index: int) -> None:
        """Job ``index`` is submitted now: pending, and reported as arrived."""
        st = self.states[index]
        st.status = PENDING
        self.pending[index] = st
        self.arrived.append(st)

    # ------------------------------------------------------------------ changes

    def launch(
        self,
        st: JobState,
        placement: Placement,
        resumed: bool,
        gpus: tuple[Gpu, ...] | None = None,
        start: bool = True,
        credit: float = 0.0,
        stall: float | None = None,
    ) -> None:
        """Run ``st`` on ``placement`` from now (GPUs already counted taken in its layer).

        ``gpus``: the exact GPUs (checked by the caller); None: the default
        choice of :meth:`~scheduling_opt.sim.sharing.Sharing.pick`.
        ``start``: a start that owes the start overhead (not a resize, nor a
        start whose ``StartTerms`` waive it).
        ``credit``: work counted done at the start (``StartTerms.credit``),
        at most what is left.
        ``stall``: the time it holds its GPUs without progress from now
        (None: ``restart_cost`` when ``resumed``, else 0).
        """
        now = self.now
        st.placement = placement
        st.held = sum(g for _, g in placement)
        if start and self.start_overhead:
            st.owed += self.start_overhead * (1.0 + math.log2(st.held))
        if credit:
            st.done = min(st.done + credit, st.job.work + st.owed)
            st.run_base += credit
        sharing = self.sharing
        busy, partners = sharing.occupy(
            st, gpus if gpus is not None else sharing.pick(st.layer, placement)
        )
        self.busy += busy
        for j in partners:
            self.rerate(self.states[j])
        st.slow = sharing.factor(st.layer, st.shared)
        st.speed = self.speed_of(st.job, placement) * st.factor * st.slow
        st.since = now
        if stall is None:
            stall = self.restart_cost if resumed else 0.0
        st.stall_until = now + stall
        st.end = st.stall_until + (st.job.work + st.owed - st.done) / st.speed
        st.version += 1
        st.status = RUNNING
        if st.first_start != st.first_start:  # nan: the first start
            st.first_start = now
        self.running[st.index] = st
        self.started.append(st)
        self.schedule(st.end, st.index, st.version)

    def set_factor(self, st: JobState, factor: float) -> None:
        """Set ``st``'s speed factor now; a running job continues at its new speed.

        No restart cost: the placement is unchanged (ONES changes a batch size
        at the end of a training step, §3.3.1).
        """
        st.factor = factor
        if st.status != RUNNING:
            return
        st.settle(self.now)
        st.speed = self.speed_of(st.job, st.placement) * factor * st.slow
        st.end = max(self.now, st.stall_until) + (st.job.work + st.owed - st.done) / st.speed
        st.version += 1
        self.schedule(st.end, st.index, st.version)

    def stall(self, st: JobState, duration: float) -> None:
        """Running ``st`` makes no progress for ``duration`` more, from now or its current stall's end.

        Its GPUs stay held (a shrink or growth of its memory, AntMan §5.1).
        """
        if not duration:
            return
        now = self.now
        st.settle(now)
        st.stall_until = max(now, st.stall_until) + duration
        st.end = st.stall_until + (st.job.work + st.owed - st.done) / st.speed
        st.version += 1
        self.schedule(st.end, st.index, st.version)

    def rerate(self, st: JobState) -> None:
        """Recompute running ``st``'s sharing and, if it changed, its speed and completion."""
        sharing = self.sharing
        shared = bool(sharing.partners(st))
        if shared == st.shared or st.status != RUNNING:
            st.shared = shared
            return
        now = self.now
        st.settle(now)
        st.shared = shared
        st.slow = sharing.factor(st.layer, shared)
        st.speed = self.speed_of(st.job, st.placement) * st.factor * st.slow
        st.end = max(now, st.stall_until) + (st.job.work + st.owed - st.done) / st.speed
        st.version += 1
        self.schedule(st.end, st.index, st.version)

    def release(self, st: JobState) -> None:
        """Give back running ``st``'s GPUs in its layer (its partners speed up)."""
        (self.sharing.guests if st.layer == OPPORTUNISTIC else self.freemap).give(st.placement)
        idle, partners = self.sharing.vacate(st)
        self.busy -= idle
        for j in partners:
            self.rerate(self.states[j])
        st.layer = 0

    def stop(self, st: JobState) -> None:
        """Take ``st`` off its GPUs now (progress folded in, back to pending)."""
        st.settle(self.now)
        st.done = max(0.0, st.done - self.preemption_cost)
        self.release(st)
        st.placement, st.held, st.end = (), 0, math.inf
        st.version += 1
        st.preemptions += 1
        st.status = PENDING
        st.queued_since = self.now
        del self.running[st.index]
        self.pending[st.index] = st

    def complete(self, st: JobState) -> None:
        """``st`` finishes now: its GPUs are free, it is reported as finished."""
        st.settle(self.now)
        st.done = st.job.work + st.owed
        st.finish = self.now
        self.release(st)
        st.placement, st.held, st.end = (), 0, math.inf
        st.status = DONE
        del self.running[st.index]
        self.finished.append(st)

    def set_capacity(self, server: int, gpus: int) -> None:
        """Give server ``server`` ``gpus`` usable GPUs now, evicting the jobs on it.

        A server keeps its jobs while they still fit; shrunk below the GPUs
        in use (reclaimed), it loses all of them.
        """
        fm, sharing = self.freemap, self.sharing
        if gpus < max(
            fm.capacity[server] - fm.free[server], sharing.busy_gpus(server, OPPORTUNISTIC)
        ):
            victims = [
                st for st in self.running.values() if any(s == server for s, _ in st.placement)
            ]
            for st in victims:
                self.stop(st)
                self.evicted.append(st)
        fm.set_capacity(server, gpus)
        sharing.guests.set_capacity(server, gpus * sharing.guests_per_gpu)
        sharing.widen(server, gpus)
        self.cap_total = sum(fm.capacity)

    # ------------------------------------------------------------------ decisions

    def _job(self, index: object, what: str) -> JobState:
        why = index_error(len(self.states), index, what)
        if why is not None:
            raise self.fail(None, why)
        assert isinstance(index, int)
        return self.states[index]

    def apply(self, decision: Decision) -> None:
        """Apply ``decision``: preemptions, capacity changes, rates, upgrades, resizes, starts, stalls.

        Each part is checked (sim/check.py) before it changes anything; a
        breach raises :class:`~scheduling_opt.sim.protocol.PolicyError`.
        """
        for index in decision.preempt:
            st = self._job(index, "preempt")
            why = preempt_error(st)
            if why is not None:
                raise self.fail(st, why)
            self.stop(st)
        for server, gpus in decision.capacity:
            why = capacity_error(len(self.cluster.servers), server, gpus)
            if why is not None:
                raise self.fail(None, why)
            self.set_capacity(server, gpus)
        for index, factor in decision.rate:
            st = self._job(index, "rate")
            why = rate_error(st, factor)
            if why is not None:
                raise self.fail(st, why)
            self.set_factor(st, float(factor))
        for index in decision.upgrade:
            st = self._job(index, "upgrade")
            why = self.sharing.upgrade(st, self.freemap)
            if why is not None:
                raise self.fail(st, why)
            # Opportunistic jobs left on its GPUs are now beside an exclusive job.
            for j in self.sharing.partners(st):
                self.rerate(self.states[j])
            self.rerate(st)
        exact = self._exact(decision)
        for index, placement in decision.resize:
            st = self._job(index, "resize")
            why = resize_error(st)
            if why is not None:
                raise self.fail(st, why)
            # Its own GPUs count as free for the new placement (a job may grow in
            # place); a failed check aborts the run, so nothing is restored.
            st.settle(self.now)
            self.release(st)
            del self.running[st.index]
            self._fits(st, placement, "resize", self.freemap)
            self.freemap.take(placement)
            self.launch(st, placement, resumed=True, start=False, stall=self.resize_cost)
        terms = self._terms(decision) if decision.terms else {}
        for index, placement in decision.starts:
            st = self._job(index, "start")
            why = start_error(st, "started")
            if why is not None:
                raise self.fail(st, why)
            self._fits(st, placement, "start", self.freemap)
            chosen = self._gpus(st, EXCLUSIVE, placement, exact)
            self.freemap.take(placement)
            del self.pending[st.index]
            resumed = st.first_start == st.first_start
            how = terms.get(index)
            self.launch(
                st,
                placement,
                resumed,
                gpus=chosen,
                start=how is None or how.overhead,
                credit=0.0 if how is None else how.credit,
            )
        for index, placement in decision.share:
            st = self._job(index, "share")
            why = start_error(st, "shared")
            if why is not None:
                raise self.fail(st, why)
            self._fits(st, placement, "share", self.sharing.guests)
            chosen = self._gpus(st, OPPORTUNISTIC, placement, exact)
            if chosen is None:
                chosen = self.sharing.pick(OPPORTUNISTIC, placement)
                if len(chosen) < sum(g for _, g in placement):
                    raise self.fail(st, f"share: placement {placement} exceeds the free GPUs")
            self.sharing.guests.take(placement)
            del self.pending[st.index]
            st.layer = OPPORTUNISTIC
            self.launch(st, placement, resumed=st.first_start == st.first_start, gpus=chosen)
        if exact:
            index = next(iter(exact))
            raise self.fail(self._job(index, "gpus"), "gpus: named but not started or shared")
        stalled: set[int] = set()
        for index, duration in decision.stall:
            st = self._job(index, "stall")
            why = stall_error(st, duration, index in stalled)
            if why is not None:
                raise self.fail(st, why)
            stalled.add(index)
            self.stall(st, float(duration))

    def _terms(self, decision: Decision) -> dict[int, StartTerms]:
        """The decision's start terms by job, each checked (a job it starts, a credit >= 0)."""
        started = {index for index, _ in decision.starts}
        out: dict[int, StartTerms] = {}
        for index, how in decision.terms:
            st = self._job(index, "terms")
            why = terms_error(index in started, index in out, how)
            if why is not None:
                raise self.fail(st, why)
            out[index] = how
        return out

    def _fits(self, st: JobState, placement: Placement, what: str, free: FreeMap) -> None:
        why = placement_error(st, placement, free, what)
        if why is not None:
            raise self.fail(st, why)

    def _exact(self, decision: Decision) -> dict[int, tuple[Gpu, ...]]:
        out: dict[int, tuple[Gpu, ...]] = {}
        for index, gpus in decision.gpus:
            st = self._job(index, "gpus")
            if index in out:
                raise self.fail(st, "gpus: named twice")
            out[index] = tuple(gpus)
        return out

    def _gpus(
        self,
        st: JobState,
        layer: int,
        placement: Placement,
        exact: dict[int, tuple[Gpu, ...]],
    ) -> tuple[Gpu, ...] | None:
        """The exact GPUs named for ``st`` (checked and consumed), or None."""
        gpus = exact.pop(st.index, None)
        if gpus is None:
            return None
        why = self.sharing.valid(layer, placement, gpus)
        if why is not None:
            raise self.fail(st, f"gpus: {why}")
        return gpus
