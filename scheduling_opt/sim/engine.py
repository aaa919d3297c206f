"""The event loop: a plain ``heapq`` of ``(time, kind, sequence, a, b)`` tuples.

Kinds, in tie order at one time: completions (0), capacity changes (1),
arrivals (2), timers (3); the sequence number breaks the remaining ties in
push order (arrivals are pushed in workload order: submit time, then id).
All events of one time are processed, then the policy is called once.

A completion event carries the job's version; any change of speed
(preemption, resize, restart) bumps the version and pushes a new event, so
the old one is dropped when popped. A timer carries the timer version: a
decision's ``wake_at`` replaces the previous timer. In round mode
(``round_length``) the policy is called only at multiples of the round and
wake-ups are the round boundaries; completions stay exact.

The engine owns the clock and the heap only. The jobs, the free GPUs and
the GPU-sharing slots belong to :class:`~scheduling_opt.sim.live.ClusterState`,
which applies every decision (checked by the read-only rules of
:mod:`scheduling_opt.sim.check`) and reports new completion times back
through a callback; policies read it through
:class:`~scheduling_opt.sim.view.LiveView`. The imports go one way:
engine -> live -> check, sharing, state.

No simulation library: a plain heap loop runs 1.3-1.5 M events/s on this
machine against 0.46-0.59 M for SimPy, and a full trace is ~61,000 events.
"""

from __future__ import annotations

import heapq
import math
import time as _time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from scheduling_opt.sim import limits
from scheduling_opt.sim.cluster import ClusterSpec
from scheduling_opt.sim.live import ClusterState
from scheduling_opt.sim.protocol import (
    RUNNING,
    Interfering,
    Periodic,
    Policy,
    PolicyError,
    Stacking,
)
from scheduling_opt.sim.sharing import MAX_GUESTS_PER_GPU
from scheduling_opt.sim.speed import SpeedModel
from scheduling_opt.sim.view import LiveView
from scheduling_opt.sim.workload import SimJob, Workload

COMPLETION, CAPACITY, ARRIVAL, TIMER = 0, 1, 2, 3
_ROUND = -1  # timer version of round-mode boundaries (never stale)
#: Calls at one instant before a policy that keeps preempting is declared broken.
MAX_FOLLOW_UPS = 1000
#: Policy calls in a row woken by timers alone between two readings of the
#: slow-livelock guard (:class:`Stall`).
STALL_CALLS = 1_000


class Stall:
    """The slow-livelock guard: a policy that keeps changing the schedule and gets no work done.

    A policy that undoes its own starts across instants (rounds shorter than
    what a start costs: each start adds more work than the job does before
    it is preempted again) never ends, and the one-instant guard
    (:data:`MAX_FOLLOW_UPS`) does not see it. This guard counts the policy
    calls woken by timers alone (no completion, arrival or capacity change
    at that time); every :data:`STALL_CALLS` of them, with no arrival or
    capacity change left in the heap to wait for, it reads the jobs'
    progress (:meth:`~scheduling_opt.sim.live.ClusterState.progress`,
    O(jobs)). A run whose useful work has not grown since the last reading
    while its policy started, preempted or resized jobs (or while nothing
    runs, so nothing can ever end) is in a livelock: a
    :class:`PolicyError` names the policy and the time it began, within
    2 x :data:`STALL_CALLS` calls. A run whose jobs sit in a long restart
    stall is not stopped: nothing changes while they wait.
    """

    __slots__ = ("calls", "mark", "since")

    def __init__(self) -> None:
        self.calls = 0
        self.mark: tuple[float, int] | None = None
        self.since = 0.0

    def reset(self) -> None:
        """Something happened besides timers: a job finished, arrived, or capacity changed."""
        self.calls = 0
        self.mark = None

    def timer_call(self, state: ClusterState, heap: list[tuple[float, int, int, int, int]]) -> None:
        """Count a call woken by timers alone; raise :class:`PolicyError` on a livelock."""
        self.calls += 1
        if self.calls < STALL_CALLS:
            return
        self.calls = 0
        if any(kind in (ARRIVAL, CAPACITY) for _, kind, _, _, _ in heap):
            self.mark = None  # waiting for an arrival or a capacity change may be right
            return
        work, changes = state.progress()
        mark = self.mark
        idle = mark is not None and work <= mark[0] + 1e-9 * max(1.0, abs(mark[0]))
        # A run that waits without changing anything (a long stall) is not stuck.
        if idle and mark is not None and (changes != mark[1] or not state.running):
            raise state.fail(
                None,
                f"no job finished and no work was done from t={self.since:g} over "
                f"{STALL_CALLS:,} calls woken by timers alone, the policy "
                f"{'changing the schedule' if state.running else 'running nothing'}: "
                "a livelock (starts undone before they pay what they cost?)",
            )
        self.mark, self.since = (work, changes), state.now


@dataclass(frozen=True, slots=True)
class CapacityChange:
    """At ``time`` server ``server`` gets ``gpus`` usable GPUs (0: taken away).

    Jobs on a server shrunk below the GPUs they use are preempted by the
    engine (they count as preemptions) and reported in ``view.evicted``.
    """

    time: float
    server: int
    gpus: int


@dataclass(frozen=True, slots=True)
class EngineParams:
    """Cost and mode parameters (times in the trace's unit).

    ``restart_cost``: time a job holds its GPUs without progress after each
    resume, resize or migration (Aryl measured 63 s); ``preemption_cost``:
    work lost at each preemption (progress since the last checkpoint);
    ``resize_cost``: the stall of a resize or migration instead, when it is
    not a checkpoint restart (None: ``restart_cost``; EDL's stop-free
    scaling stops a job under 1 s, §6.1, against 30-60 s for Stop-Resume);
    ``round_length``: call the policy only at multiples of it (None: at every
    event time); ``share_slowdown``, ``host_slowdown``: the interference
    model of a GPU shared by an opportunistic and an exclusive job (the
    first runs at ``1 - share_slowdown``, the second at ``1 -
    host_slowdown``; AntMan §5.1's measurements, sim/sharing.py). A policy
    whose sharing has other speeds declares them itself
    (:class:`~scheduling_opt.sim.protocol.Interfering`: its
    ``interference`` replaces these two; Gandiva's is ``(0.0, 0.0)``, it
    sets every shared job's speed through ``Decision.rate``), so that the
    policy runs right whoever builds the engine.

    ``start_overhead``: work a job owes at each start from pending, the
    first included, times ``1 + log2 g`` for ``g`` GPUs (the Chronus
    artifact's checkpoint + resume overhead, 0.1 + 0.4 = 0.5 minutes:
    ``time_aware_with_lease.py`` lines 35-36, 398-402; a resize pays
    ``restart_cost`` only). ``arrival_step``: a job submitted at ``t`` is
    seen by the policy at the first multiple of the step at or after ``t``
    (the artifact takes arrivals every 5 minutes, lines 1192-1193); its
    JCT still counts from ``t``. Defaults: off.

    Validated when built: the costs (``resize_cost`` when given), ``start_overhead``, ``round_length``
    and ``arrival_step`` are times on the clock (finite, >= 0, at most
    ``limits.MAX_TIME``; the round and the step > 0), the slowdowns in
    [0, 1); an error names the field.

    Examples
    --------
    >>> EngineParams(round_length=0.0)
    Traceback (most recent call last):
    ...
    scheduling_opt.errors.InvalidInstanceError: round_length: must be > 0, got 0.0
    """

    restart_cost: float = 0.0
    preemption_cost: float = 0.0
    round_length: float | None = None
    share_slowdown: float = 0.43
    host_slowdown: float = 0.034
    start_overhead: float = 0.0
    arrival_step: float | None = None
    resize_cost: float | None = None

    def __post_init__(self) -> None:
        # The costs and the round are times on the clock (sim/limits.py);
        # the slowdowns fractions in [0, 1). Errors name the field.
        for name in ("restart_cost", "preemption_cost", "start_overhead"):
            object.__setattr__(self, name, limits.clock(getattr(self, name), name))
        if self.resize_cost is not None:
            object.__setattr__(self, "resize_cost", limits.clock(self.resize_cost, "resize_cost"))
        if self.round_length is not None:
            round_length = limits.clock(self.round_length, "round_length", positive=True)
            object.__setattr__(self, "round_length", round_length)
        if self.arrival_step is not None:
            step = limits.clock(self.arrival_step, "arrival_step", positive=True)
            object.__setattr__(self, "arrival_step", step)
        for name in ("share_slowdown", "host_slowdown"):
            object.__setattr__(self, name, limits.fraction(getattr(self, name), name))


def arrival_time(submit: float, step: float | None) -> float:
    """When a job submitted at ``submit`` arrives: the first multiple of ``step`` at or after it.

    Examples
    --------
    >>> arrival_time(7.3, 5.0), arrival_time(10.0, 5.0), arrival_time(0.0, 5.0)
    (10.0, 10.0, 0.0)
    >>> arrival_time(7.3, None)
    7.3
    """
    if step is None:
        return submit
    t = math.ceil(submit / step) * step
    # Float division may overshoot an exact multiple by one step.
    return t - step if t - step >= submit else float(t)


@dataclass(frozen=True, slots=True)
class RunOutput:
    """What one run produced (per-job arrays in workload order)."""

    policy: str
    jobs: tuple[SimJob, ...]
    first_start: tuple[float, ...]
    end: tuple[float, ...]
    preemptions: tuple[int, ...]
    gpu_time: tuple[float, ...]
    busy_area: float
    capacity_area: float
    #: ``(time, busy GPUs, pending jobs, running jobs)`` after each policy call.
    changes: tuple[tuple[float, int, int, int], ...]
    events: int
    calls: int
    wall_seconds: float
    cpu_seconds: float


def cpu_time() -> float:
    """CPU seconds of this process and of its finished child processes.

    A policy may run a solver as a child process (``chronus`` with
    ``selection="artifact-cbc"`` runs CBC's binary); its CPU is part of
    the run's cost. Where ``resource`` is missing (Windows), this process's
    alone.
    """
    own = _time.process_time()
    try:
        import resource
    except ImportError:  # pragma: no cover - not on POSIX
        return own
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own + children.ru_utime + children.ru_stime


class Engine:
    """One simulation: the clock and the event heap over a :class:`ClusterState`.

    Use :func:`simulate`. The engine owns time and events only; every change
    of the jobs and the GPUs goes through its
    :class:`~scheduling_opt.sim.live.ClusterState` (``self.state``), which
    applies the policy's decisions.
    """

    def __init__(
        self,
        workload: Workload,
        cluster: ClusterSpec,
        policy: Policy,
        *,
        speed: SpeedModel | None = None,
        params: EngineParams = EngineParams(),
        capacity_changes: Sequence[CapacityChange] = (),
    ) -> None:
        self.cluster = cluster
        self.policy = policy
        self.params = params
        self.heap: list[tuple[float, int, int, int, int]] = []
        self.seq = 0
        share, host = params.share_slowdown, params.host_slowdown
        if isinstance(policy, Interfering):  # its own sharing speeds (EngineParams' docstring)
            share, host = policy.interference
        guests = policy.guests_per_gpu if isinstance(policy, Stacking) else 1
        if type(guests) is not int or not 1 <= guests <= MAX_GUESTS_PER_GPU:
            raise PolicyError(
                f"policy {policy.name!r}: guests_per_gpu must be an integer in "
                f"1..{MAX_GUESTS_PER_GPU}, got {guests!r}"
            )
        self.state = ClusterState(
            workload,
            cluster,
            speed or SpeedModel(None, cluster.gpus_per_server),
            restart_cost=params.restart_cost,
            preemption_cost=params.preemption_cost,
            start_overhead=params.start_overhead,
            resize_cost=params.resize_cost,
            share_slowdown=share,
            host_slowdown=host,
            policy_name=policy.name,
            schedule=self._schedule,
            guests_per_gpu=guests,
        )
        self.t0 = 0.0
        self.timer_version = 0
        self.busy_area = 0.0
        self.capacity_area = 0.0
        self.changes: list[tuple[float, int, int, int]] = []
        self.view = LiveView(self.state)
        # Before any call: the rounds (or a periodic policy's wake-ups) the run asks for, O(jobs).
        limits.check_calls(
            [(j.submit, j.work) for j in workload.jobs],
            params.round_length,
            policy.period if isinstance(policy, Periodic) else None,
            policy.name,
        )
        total = cluster.total_gpus
        for st in self.state.states:
            if st.job.min_gpus > total:
                raise PolicyError(
                    f"job {st.job.id!r} needs {st.job.min_gpus} GPUs, the cluster has {total}"
                )
            self._push(arrival_time(st.job.submit, params.arrival_step), ARRIVAL, st.index, 0)
        for c in capacity_changes:
            if not 0 <= c.server < len(cluster.servers) or c.gpus < 0:
                raise PolicyError(f"capacity change {c}: no such server or negative GPUs")
            self._push(c.time, CAPACITY, c.server, c.gpus)

    def _push(self, t: float, kind: int, a: int, b: int) -> None:
        self.seq += 1
        heapq.heappush(self.heap, (t, kind, self.seq, a, b))

    def _schedule(self, t: float, index: int, version: int) -> None:
        self._push(t, COMPLETION, index, version)

    def _advance(self, t: float) -> None:
        # Integrate from the first submission on (a capacity change may come earlier).
        state = self.state
        dt = t - max(state.now, self.t0)
        if dt > 0:
            self.busy_area += state.busy * dt
            self.capacity_area += state.cap_total * dt
        state.now = t

    def _decide(self, t: float, timers: bool) -> int:
        """Call the policy at ``t`` and apply; again at once while it preempts.

        The follow-up calls make every call time a fixpoint (a call with
        nothing new changes nothing): the victims of a preemption can restart
        and the GPUs it freed beyond need can be used at the same instant, so
        the schedule does not depend on when the next event happens to come
        (round mode equals event mode on aligned times).
        """
        state = self.state
        for calls in range(1, MAX_FOLLOW_UPS + 1):
            decision = self.policy.decide(self.view)
            state.clear_reports()
            state.apply(decision)
            self.timer_version += 1  # a decision's wake-up replaces the last one
            if decision.wake_at is not None and timers:
                if not decision.wake_at > t:
                    raise state.fail(None, f"wake_at {decision.wake_at!r} is not after now")
                self._push(decision.wake_at, TIMER, 0, self.timer_version)
            if not decision.preempt:
                return calls
        raise state.fail(None, f"still preempting after {MAX_FOLLOW_UPS} calls at one instant")

    def _is_boundary(self, t: float) -> bool:
        r = self.params.round_length
        assert r is not None
        k = round(t / r)
        return abs(t - k * r) <= 1e-9 * max(1.0, abs(t))

    def run(self, progress: Callable[[int, int], None] | None = None) -> RunOutput:
        """Run to the last completion; raise :class:`PolicyError` on a bad decision."""
        started_at = _time.perf_counter()
        cpu_at = cpu_time()
        state = self.state
        heap, states = self.heap, state.states
        events = calls = reported = 0
        n_done = 0
        total = len(states)
        rl = self.params.round_length
        next_round = -math.inf
        first_submit = states[0].job.submit if states else 0.0
        state.now = self.t0 = first_submit
        stall = Stall()
        while heap:
            t = heap[0][0]
            self._advance(t)
            live = other = False
            while heap and heap[0][0] == t:
                _, kind, _, a, b = heapq.heappop(heap)
                if kind == COMPLETION:
                    st = states[a]
                    if st.version != b or st.status != RUNNING:
                        continue
                    state.complete(st)
                    n_done += 1
                elif kind == ARRIVAL:
                    state.arrive(a)
                elif kind == CAPACITY:
                    state.set_capacity(a, b)
                elif b != self.timer_version and b != _ROUND:
                    continue
                live = True
                other = other or kind != TIMER
                events += 1
            if not live:
                continue
            call = rl is None or self._is_boundary(t)
            if other:
                stall.reset()
            if call:
                calls += self._decide(t, rl is None)
                if not other:
                    stall.timer_call(state, heap)
                self.changes.append((t, state.busy, len(state.pending), len(state.running)))
            if rl is not None and (state.pending or state.running) and next_round <= t:
                next_round = (math.floor(t / rl + 1e-9) + 1) * rl
                self._push(next_round, TIMER, 0, _ROUND)
            if progress is not None and events - reported >= 4096:
                reported = events
                progress(n_done, total)
            if n_done == total:
                break  # what is left in the heap are timers of a finished run
        if progress is not None:
            progress(n_done, total)
        if state.pending or state.running:
            left = next(iter(state.pending.values() or state.running.values()))
            raise state.fail(
                left, f"{len(state.pending) + len(state.running)} jobs left unfinished at the end"
            )
        return RunOutput(
            policy=self.policy.name,
            jobs=tuple(st.job for st in states),
            first_start=tuple(st.first_start for st in states),
            end=tuple(st.finish for st in states),
            preemptions=tuple(st.preemptions for st in states),
            gpu_time=tuple(st.service_base for st in states),
            busy_area=self.busy_area,
            capacity_area=self.capacity_area,
            changes=tuple(self.changes),
            events=events,
            calls=calls,
            wall_seconds=_time.perf_counter() - started_at,
            cpu_seconds=cpu_time() - cpu_at,
        )


def simulate(
    workload: Workload,
    cluster: ClusterSpec,
    policy: Policy,
    *,
    speed: SpeedModel | None = None,
    params: EngineParams = EngineParams(),
    capacity_changes: Sequence[CapacityChange] = (),
    progress: Callable[[int, int], None] | None = None,
) -> RunOutput:
    """Run ``policy`` on ``workload`` over ``cluster`` and return the raw output.

    Examples
    --------
    >>> from scheduling_opt.sim.policies.baselines.nonpreemptive import Fifo
    >>> from scheduling_opt.sim.workload import SimJob, Workload
    >>> w = Workload.of([SimJob("0", 0.0, 8, 10.0), SimJob("1", 1.0, 8, 5.0)], "demo")
    >>> out = simulate(w, ClusterSpec.uniform(1, 8), Fifo())
    >>> out.first_start, out.end
    ((0.0, 10.0), (10.0, 15.0))
    """
    engine = Engine(
        workload, cluster, policy, speed=speed, params=params, capacity_changes=capacity_changes
    )
    return engine.run(progress)
