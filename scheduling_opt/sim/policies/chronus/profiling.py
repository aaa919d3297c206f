"""Chronus' Profiler in the loop: the Profiling cluster, FCFS, T_profile, submission control (§3.2).

Every submitted job first passes through the Profiler (Chronus §3.2,
Fig. 1 step 1) before the scheduling loop sees it:

- **Submission control** (§3.2.1): each user may send at most
  ``submission_cap`` GPUs into profiling per interval of ``t_profile``; a
  job over its user's budget waits for the first later interval with room
  (:class:`SubmissionGate`, the rule of
  :func:`scheduling_opt.policies.profiler.submission_control` applied
  online, one arrival at a time).
- **The Profiling cluster**: whole servers carved from the cluster. Its
  size is ``profiler_gpus`` rounded up to whole servers, or §3.2.3's
  dynamic scaling. Every 60 minutes lambda is measured from the GPUs
  submitted over the past hour and gives the lower bound
  C_profile >= ceil(lambda T_profile)
  (:func:`scheduling_opt.policies.profiler.profiling_capacity`). With
  ``scaling="hourly"`` the cluster is sized at that bound for the hour.
  With ``scaling="backlog"`` (the default) the bound is a floor: every
  ``t_profile`` the cluster is re-sized to the larger of the bound and the
  GPUs its runs hold plus those its queued jobs' runs would hold (a job of
  more than one server counts its two whole servers, §3.2.2).
  The reading: §3.2.3 asks for C_profile >= lambda T_profile "to guarantee
  the stability of this queuing system" and calls the hourly estimate "the
  lower bound"; an hour's mean rate does not bound the next hour's, and the
  submissions are bursty (§3.2.1, Fig. 5(b)), so a bound held at equality
  leaves a burst queued for up to an hour (on the bundled day: 22 minutes
  on average). A queue in front of the Profiler is the measurement that
  lambda is above the estimate, and the cluster grows by what is waiting.
  Either way the size is at least one server and at most what leaves the
  main cluster one server and room for the largest job seen so far (none
  when that is every server: jobs then skip profiling). Before an hour of
  history has passed (the trace's start), lambda is measured over the time
  since the first submission (at least ``t_profile``) and re-measured
  every ``t_profile``: a choice, the paper's cluster has a past. When it
  grows, it takes the main servers that host no guaranteed job first (an
  SLO lease holds its GPUs for the term, §3.3.3), the emptiest first, and
  the main jobs on them are preempted (they go back to the loop's queue);
  when it shrinks, a server returns to the main cluster once no profiling
  run holds it.
- **FCFS runs of T_profile** (§3.2): the released jobs start in their
  release order (the head waits until it fits; no job overtakes it). A job
  of at most one server's GPUs runs on one server of the Profiling cluster
  on its own GPUs: its progress counts, and a job that ends within
  ``t_profile`` ends there and never reaches the main cluster. A larger
  job's one-node and two-node runs (§3.2.2) hold two whole servers (one if
  the Profiling cluster has one) for ``t_profile``: they count as GPU time
  of the Profiler, the job itself makes no progress (its iterations on two
  nodes are not its run on its own GPUs).
- **The runtime estimate** (§3.2.2): the simulator's durations are what
  the log2 model t_n = t_1 + log2(n) (t_2 - t_1) predicts
  (:func:`scheduling_opt.policies.profiler.iteration_time`), so the
  estimate is the job's work times ``1 + e``, e ~ N(0, ``runtime_noise``)
  (Fig. 6(d)'s perturbation; the factor is floored at 0.05), drawn from a
  generator seeded by ``noise_seed`` and the job's id. The lease and SRTF
  read a job's remaining work as that estimate less the work done.

A job that leaves the Profiler unfinished is preempted there (one
preemption in the run's counts) and joins the scheduling loop as an
arrival. O(servers + jobs in the Profiler) per call.
"""

from __future__ import annotations

import math
import zlib
from collections import deque
from collections.abc import Collection
from dataclasses import dataclass, field

import numpy as np

from scheduling_opt.policies.profiler import Submission, profiling_capacity
from scheduling_opt.sim.cluster import FreeMap, Placement
from scheduling_opt.sim.protocol import JobView, View

__all__ = ["HOUR", "NOISE_FLOOR", "Profiler", "ProfilerStats", "SubmissionGate"]

#: The capacity rule's update period and window (trace minutes; §3.2.3: every hour).
HOUR = 60.0
#: The smallest factor a noisy estimate may take (the estimate stays > 0).
NOISE_FLOOR = 0.05
_EPS = 1e-9


class SubmissionGate:
    """§3.2.1's submission control, online: when each arriving job may enter profiling.

    Intervals are ``[m T, (m + 1) T)``. A user's jobs, in arrival order,
    enter in their own interval when the user's GPUs there stay within
    ``limit``, else at the start of the first later interval that has room
    (a job larger than ``limit`` enters alone in an interval). The same
    rule as :func:`~scheduling_opt.policies.profiler.submission_control`,
    which needs every submission up front; O(1) amortized per job.

    Examples
    --------
    >>> gate = SubmissionGate(24, 5.0)
    >>> gate.release("u", 0.0, 16), gate.release("u", 1.0, 16), gate.release("v", 1.0, 16)
    (0.0, 5.0, 1.0)
    """

    def __init__(self, limit: int, interval: float) -> None:
        self.limit = limit
        self.interval = interval
        self._used: dict[tuple[str, int], int] = {}
        self._last: dict[str, int] = {}

    def release(self, user: str, time: float, gpus: int) -> float:
        """The time the job of ``user`` submitted at ``time`` with ``gpus`` GPUs enters profiling."""
        slot = max(math.floor(time / self.interval), self._last.get(user, 0))
        while True:
            spent = self._used.get((user, slot), 0)
            if spent + gpus <= self.limit or spent == 0:
                break
            slot += 1
        self._used[(user, slot)] = self._used.get((user, slot), 0) + gpus
        self._last[user] = slot
        return max(time, slot * self.interval)


@dataclass(slots=True)
class ProfilerStats:
    """What the Profiler measured: its queueing, its finished jobs, its GPU time.

    ``pending``: per profiled job, its start in the Profiler less its
    submission (submission control's wait included); ``short_jct``,
    ``short_work``: the JCT and the work of each job that ended in the
    Profiler (``profiler_short_slowdown``: mean JCT over mean work, 1 with
    no wait); ``gpu_time``: GPU-minutes the
    profiling runs held; ``servers``: the Profiling cluster's size after
    each capacity update.
    """

    pending: list[float] = field(default_factory=list)
    short_jct: list[float] = field(default_factory=list)
    short_work: list[float] = field(default_factory=list)
    gpu_time: float = 0.0
    released: int = 0
    servers: list[int] = field(default_factory=list)

    def as_dict(self) -> dict[str, float]:
        """The counters under the ``profiler_`` names of :meth:`Chronus.stats`."""
        pending = self.pending
        return {
            "profiler_jobs": float(len(pending)),
            "profiler_pending_mean": sum(pending) / len(pending) if pending else 0.0,
            "profiler_pending_max": max(pending, default=0.0),
            "profiler_finished": float(len(self.short_jct)),
            "profiler_short_jct_mean": (
                sum(self.short_jct) / len(self.short_jct) if self.short_jct else 0.0
            ),
            "profiler_short_slowdown": (
                sum(self.short_jct) / sum(self.short_work) if self.short_work else 0.0
            ),
            "profiler_released": float(self.released),
            "profiler_gpu_time": self.gpu_time,
            "profiler_servers_mean": (
                sum(self.servers) / len(self.servers) if self.servers else 0.0
            ),
        }


class Profiler:
    """The Profiler of one run: its cluster, its FCFS queue, its runs and the estimates.

    Parameters
    ----------
    t_profile : float
        Profiling time per job (trace units; §3.2: 300 s = 5 minutes).
    gpus : int or None
        A fixed Profiling cluster of this many GPUs (rounded up to whole
        servers); None: §3.2.3's dynamic scaling, by ``scaling``.
    submission_cap : int or None
        GPUs per user per ``t_profile`` (§5.1: 24); None: no control.
    noise : float
        Standard deviation of the estimate's relative error (Fig. 6(d)).
    seed : int
        Seeds the estimate's noise.
    scaling : {"backlog", "hourly"}
        The dynamic scaling's rule (the module's docstring): the hourly
        lower bound, or (default) that bound as a floor and the Profiler's
        held and queued GPUs checked every ``t_profile``.

    Attributes
    ----------
    servers : set of int
        The Profiling cluster's servers now.
    main : set of int
        Jobs the Profiler has handed to the scheduling loop.
    factor : dict of int to float
        Each handed job's estimate over its work (absent: exact).
    """

    def __init__(
        self,
        t_profile: float,
        gpus: int | None,
        submission_cap: int | None,
        noise: float,
        seed: int,
        scaling: str = "backlog",
    ) -> None:
        self.t_profile = t_profile
        self.gpus = gpus
        self.scaling = scaling
        # The hourly lower bound lambda T_profile (GPUs) and when it is next measured.
        self.bound = 0
        self.next_measure = -math.inf
        self.gate = None if submission_cap is None else SubmissionGate(submission_cap, t_profile)
        self.noise = noise
        self.seed = seed
        self.servers: set[int] = set()
        self.target = 0
        self.next_update = -math.inf
        self.recent: deque[tuple[float, int]] = deque()
        self.first: float | None = None
        self.largest = 0
        # Jobs released to profiling and not started, by (release time, index).
        self.waiting: list[tuple[float, int]] = []
        # Released jobs not yet started, in FCFS order (release time <= now).
        self.queue: deque[int] = deque()
        # Engine-running profiling runs: index -> (start, end of its profiling).
        self.running: dict[int, tuple[float, float]] = {}
        # Runs of multi-server jobs: index -> (end, whole servers held).
        self.virtual: dict[int, tuple[float, tuple[int, ...]]] = {}
        self.main: set[int] = set()
        self.handed: list[JobView] = []
        self.factor: dict[int, float] = {}
        self.stats = ProfilerStats()

    # -- the scheduling loop's side -------------------------------------------------

    def estimate(self, st: JobView, now: float) -> float:
        """``st``'s remaining work as the Profiler estimated it (exact without noise)."""
        f = self.factor.get(st.index)
        rem = st.remaining(now)
        if f is None:
            return rem
        return max(rem + (f - 1.0) * st.job.work, 1e-9)

    def take_handed(self) -> list[JobView]:
        """The jobs handed to the loop since the last call (its arrivals), and forget them."""
        out, self.handed = self.handed, []
        return out

    # -- one call ----------------------------------------------------------------------

    def record(self, view: View, keep: Collection[int] = ()) -> tuple[int, ...]:
        """Take the call's arrivals and completions, update the cluster's size.

        Returns the main-cluster jobs to preempt: those on the servers the
        Profiling cluster takes when it grows (servers of jobs in ``keep``
        last).
        """
        now = view.now
        for st in view.arrived:
            job = st.job
            self.recent.append((job.submit, job.gpus))
            if job.gpus > self.largest:
                self.largest = job.gpus
                self.target = min(self.target, self._room(view))
            user = job.tenant or job.id
            release = now if self.gate is None else self.gate.release(user, now, job.gpus)
            self.waiting.append((release, st.index))
        self.waiting.sort()
        while self.waiting and self.waiting[0][0] <= now + _EPS:
            self.queue.append(self.waiting.pop(0)[1])
        for st in view.finished:
            run = self.running.pop(st.index, None)
            if run is not None:
                self.stats.gpu_time += st.job.gpus * (now - run[0])
                self.stats.short_jct.append(now - st.job.submit)
                self.stats.short_work.append(st.job.work)
        evict: tuple[int, ...] = ()
        if now >= self.next_update - _EPS:
            self._update_target(view)
            evict = self._grow(view, keep)
        self._shrink(view)
        return evict

    def _update_target(self, view: View) -> None:
        now = view.now
        per = view.cluster.gpus_per_server
        if self.gpus is not None:
            want = self.gpus
            self.next_update = now + HOUR
        else:
            if now >= self.next_measure - _EPS:
                self._measure(now)
            want = self.bound
            self.next_update = self.next_measure
            if self.scaling == "backlog":
                # A queue is the evidence that the arrivals outrun the past
                # hour's lambda: the cluster grows to hold its runs and every
                # queued job, checked every T_profile (one profiling run).
                want = max(want, self._demand(view))
                self.next_update = now + self.t_profile
        self.target = min(max(1, math.ceil(want / per)), self._room(view))
        self.stats.servers.append(self.target)

    def _demand(self, view: View) -> int:
        """GPUs the Profiler's runs hold plus those its queued jobs' runs would hold."""
        per = view.cluster.gpus_per_server
        held = sum(view.running[i].job.gpus for i in self.running if i in view.running)
        held += sum(len(servers) * per for _, servers in self.virtual.values())
        for i in self.queue:
            gpus = view.pending[i].job.gpus
            held += gpus if gpus <= per else 2 * per
        return held

    def _measure(self, now: float) -> None:
        """Measure lambda over the past hour: the lower bound ceil(lambda T_profile) (§3.2.3)."""
        while self.recent and self.recent[0][0] <= now - HOUR:
            self.recent.popleft()
        if self.first is None:
            self.first = now
        # Warm-up: before an hour of history, lambda over the time since the
        # first submission (at least T_profile), re-measured every T_profile.
        window = min(HOUR, max(now - self.first, self.t_profile))
        subs = [Submission(str(k), "u", t, g) for k, (t, g) in enumerate(self.recent)]
        self.bound = profiling_capacity(subs, now, t_profile=self.t_profile, window=window)
        warm = now - self.first < HOUR
        self.next_measure = now + (self.t_profile if warm else HOUR)

    def _room(self, view: View) -> int:
        """The most servers the Profiling cluster may hold: the main cluster keeps the largest job.

        The main cluster keeps at least one server and room for the largest
        job seen so far (0: no Profiling cluster, jobs skip profiling).
        """
        per = view.cluster.gpus_per_server
        return max(0, len(view.capacity) - max(1, math.ceil(self.largest / per)))

    def _grow(self, view: View, keep: Collection[int]) -> tuple[int, ...]:
        """Take main servers up to the target; the main jobs on them.

        Servers that host no job of ``keep`` (the guaranteed jobs, whose SLO
        lease holds their GPUs for the term) go first, the emptiest first.
        """
        if self.target <= len(self.servers):
            return ()
        capacity, free, running = view.capacity, view.free, view.running
        others = [s for s in range(len(capacity)) if s not in self.servers and capacity[s] > 0]
        # Over the running jobs, not ``keep``: it also holds jobs long finished.
        kept = {s for i, st in running.items() if i in keep for s, _ in st.placement}
        others.sort(key=lambda s: (s in kept, capacity[s] - free[s], -s))
        taken = set(others[: self.target - len(self.servers)])
        self.servers |= taken
        return tuple(
            sorted(
                i
                for i, st in running.items()
                if i in self.main and any(s in taken for s, _ in st.placement)
            )
        )

    def _shrink(self, view: View) -> None:
        """Give idle Profiling servers back to the main cluster down to the target."""
        capacity, free = view.capacity, view.free
        held = {s for _, servers in self.virtual.values() for s in servers}
        while len(self.servers) > self.target:
            idle = [s for s in self.servers if free[s] == capacity[s] and s not in held]
            if not idle:
                break
            self.servers.discard(min(idle))

    def expire(self, view: View) -> tuple[int, ...]:
        """The profiling runs whose ``t_profile`` ended: engine runs to preempt, others handed."""
        now = view.now
        if self.target == 0:
            while self.queue:
                self._hand(view.pending[self.queue.popleft()], now)
        for i, (end, _) in sorted(self.virtual.items()):
            if end <= now + _EPS:
                del self.virtual[i]
                self._hand(view.pending[i], now)
        out = []
        for i, (start, end) in sorted(self.running.items()):
            if end <= now + _EPS and i in view.running:
                out.append(i)
                del self.running[i]
                st = view.running[i]
                self.stats.gpu_time += st.job.gpus * (now - start)
                self._hand(st, now)
        return tuple(out)

    def _hand(self, st: JobView, now: float) -> None:
        self.main.add(st.index)
        self.handed.append(st)
        self.stats.released += 1
        if self.noise > 0:
            rng = np.random.default_rng([self.seed, zlib.crc32(st.job.id.encode())])
            self.factor[st.index] = max(NOISE_FLOOR, 1.0 + self.noise * float(rng.normal()))

    def start(self, view: View, used: Placement) -> list[tuple[int, Placement]]:
        """FCFS starts on the Profiling cluster's free GPUs (``used``: GPUs this call took)."""
        now = view.now
        plan = self.plan(view)
        for s, g in used:
            if s in self.servers:
                plan.take(((s, g),))
        held = {s for _, servers in self.virtual.values() for s in servers}
        for s in held:
            if plan.free[s] > 0:
                plan.take(((s, plan.free[s]),))
        per = view.cluster.gpus_per_server
        starts: list[tuple[int, Placement]] = []
        while self.queue:
            i = self.queue[0]
            st = view.pending[i]
            gpus = st.job.gpus
            if gpus <= per:
                placement = plan.place(gpus)
                if placement is None:
                    break
                plan.take(placement)
                starts.append((i, placement))
                self.running[i] = (now, now + self.t_profile)
            else:
                whole = sorted(s for s in self.servers if plan.free[s] == plan.capacity[s] > 0)
                want = min(2, len(self.servers))
                if len(whole) < want:
                    break
                take = tuple(whole[:want])
                for s in take:
                    plan.take(((s, plan.capacity[s]),))
                    held.add(s)
                    self.stats.gpu_time += plan.capacity[s] * self.t_profile
                self.virtual[i] = (now + self.t_profile, take)
            self.queue.popleft()
            self.stats.pending.append(now - st.job.submit)
        return starts

    def plan(self, view: View) -> FreeMap:
        """The Profiling cluster's free GPUs (other servers at capacity 0)."""
        capacity, free = view.capacity, view.free
        cap = [capacity[s] if s in self.servers else 0 for s in range(len(capacity))]
        plan = FreeMap(cap)
        for s in self.servers:
            if capacity[s] > free[s]:
                plan.take(((s, capacity[s] - free[s]),))
        return plan

    def next_event(self) -> float:
        """The next time the Profiler needs a call (a run's end, a release, an update)."""
        times = [end for _, end in self.running.values()]
        times += [end for end, _ in self.virtual.values()]
        if self.waiting:
            times.append(self.waiting[0][0])
        if self.running or self.virtual or self.waiting or self.queue:
            times.append(self.next_update)
        return min(times, default=math.inf)
