"""The one policy interface: ``decide(view) -> Decision``, and what a policy may offer besides.

A policy is any object with a ``name`` and a ``decide`` method. The engine
calls it once per distinct event time (after that time's completions,
capacity changes, arrivals and timers) with a read-only :class:`View` of
the live state, and applies the :class:`Decision` it returns, in this
order: preemptions, capacity changes, speed factors, upgrades, resizes,
starts, opportunistic starts (``share``). Then
the ``wake_at`` time, if any, becomes the policy's only timer (a new decision replaces the previous one):
a scheduling round, a lease term, a Tiresias demotion.

A policy object holds the state of one run (its queues); the registry makes
a fresh one per run, so two simulations never share anything.

Three optional parts, each its own small protocol that the engine and the
run function test for (``isinstance``): :class:`Periodic` (``period``: the
policy decides on a timer of that period while jobs are left, so the
resource model counts its calls before a run), :class:`Interfering`
(``interference``: the speeds of a GPU shared by two jobs, when the
policy's sharing differs from the engine's model) and :class:`Reporting`
(``stats()``: counters of the run, kept in ``RunResult.extra``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

from scheduling_opt.errors import SchedulingOptError
from scheduling_opt.sim.cluster import ClusterSpec, FreeMap, Placement
from scheduling_opt.sim.workload import SimJob

PENDING = 1
RUNNING = 2
DONE = 3


class PolicyError(SchedulingOptError):
    """A policy's decision broke a rule of the cluster (the message names both)."""


@dataclass(frozen=True, slots=True)
class Decision:
    """What a policy wants done now.

    ``starts``: ``(job index, placement)`` pairs, applied in order;
    ``preempt``: indices of running jobs to stop (back to pending);
    ``capacity``: ``(server, usable GPUs)`` changes the policy makes itself
    (Aryl lending an idle inference server, or reclaiming one: jobs still on
    it are evicted and reported in ``view.evicted``), applied after the
    preemptions; ``resize``: ``(job index, new placement)`` of running
    elastic jobs (or a migration: same size, other servers); ``rate``:
    ``(job index, factor)``: the job's speed from now on is the engine's
    placement speed times ``factor`` (finite, > 0; default 1), for a job
    pending or running after the preemptions and kept across its later
    starts and resizes until set again: ONES sets it from the batch size it
    chose (a job's progress depends on its batch, not only its GPUs);
    applied after the capacity changes, before the resizes, with no restart
    cost; ``wake_at``: call me again then.

    Examples
    --------
    >>> Decision(starts=((0, ((1, 4),)),), wake_at=20.0).wake_at
    20.0
    >>> Decision(rate=((0, 1.5),)).rate
    ((0, 1.5),)
    """

    starts: tuple[tuple[int, Placement], ...] = ()
    preempt: tuple[int, ...] = ()
    capacity: tuple[tuple[int, int], ...] = ()
    resize: tuple[tuple[int, Placement], ...] = ()
    wake_at: float | None = None
    rate: tuple[tuple[int, float], ...] = ()
    #: Opportunistic starts ``(job index, placement)`` on the GPUs' second
    #: slot (sim/sharing.py: one per GPU, beside or without an exclusive job).
    share: tuple[tuple[int, Placement], ...] = ()
    #: Running opportunistic jobs made exclusive on their GPUs (AntMan's upgrade).
    upgrade: tuple[int, ...] = ()
    #: Exact GPUs ``(job index, ((server, GPU index), ...))`` for jobs started
    #: or shared by this decision (default: the engine's choice, sim/sharing.py).
    gpus: tuple[tuple[int, tuple[tuple[int, int], ...]], ...] = ()
    #: ``(job index, StartTerms)`` for jobs of ``starts`` that the engine
    #: charges otherwise than by default (a start owing no start overhead, or
    #: credited work); each job at most once.
    terms: tuple[tuple[int, StartTerms], ...] = ()


@dataclass(frozen=True, slots=True)
class StartTerms:
    """How the engine charges one start of ``Decision.starts``.

    ``overhead``: the start owes ``EngineParams.start_overhead`` (False: it
    does not, a start the policy models as free); ``credit``: work counted
    done as the job starts (finite, >= 0, at most what is left), progress a
    policy whose clock is coarser than the engine's counts from an earlier
    check. The Chronus artifact's fill uses both (docs/simulation.md).

    Examples
    --------
    >>> Decision(starts=((0, ((0, 1),)),), terms=((0, StartTerms(overhead=False)),)).terms[0][1]
    StartTerms(overhead=False, credit=0.0)
    """

    overhead: bool = True
    credit: float = 0.0


#: The decision that changes nothing.
NOTHING = Decision()


class JobView(Protocol):
    """Read-only state of one submitted job (the engine's record, seen through this)."""

    @property
    def job(self) -> SimJob: ...
    @property
    def index(self) -> int:
        """Position in the workload's order (submit time, then id): the tie-breaker."""
        ...

    @property
    def status(self) -> int:
        """:data:`PENDING`, :data:`RUNNING` or :data:`DONE`."""
        ...

    @property
    def placement(self) -> Placement: ...
    @property
    def speed(self) -> float: ...
    @property
    def factor(self) -> float:
        """The speed factor last set by ``Decision.rate`` (1 until then)."""
        ...

    @property
    def gpus(self) -> tuple[tuple[int, int], ...]:
        """The ``(server, GPU index)`` pairs it runs on (empty when not running)."""
        ...

    @property
    def opportunistic(self) -> bool:
        """Whether it runs in the GPUs' opportunistic slot (``Decision.share``)."""
        ...

    @property
    def shared(self) -> bool:
        """Whether a GPU of it holds a job of the other slot (it runs slowed)."""
        ...

    @property
    def end(self) -> float:
        """Scheduled completion time if it keeps running as now (inf when not running)."""
        ...

    @property
    def preemptions(self) -> int: ...
    @property
    def version(self) -> int:
        """Changes at every start, preemption and resize (for policies' lazy heaps)."""
        ...

    @property
    def first_start(self) -> float:
        """First start time (nan before)."""
        ...

    @property
    def queued_since(self) -> float:
        """When it last became pending (its arrival, or its last preemption)."""
        ...

    def attained(self, now: float) -> float:
        """Work done by ``now`` (in speed-1 time units)."""
        ...

    def remaining(self, now: float) -> float:
        """Work left at ``now`` (the remaining work estimate: the trace's duration is an oracle)."""
        ...

    def service(self, now: float) -> float:
        """GPU-time held by ``now`` (Tiresias' attained service)."""
        ...

    def executed(self, now: float) -> float:
        """Wall time run by ``now``."""
        ...


class View(Protocol):
    """Read-only view of the cluster and the jobs, valid during one ``decide`` call."""

    @property
    def now(self) -> float: ...
    @property
    def pending(self) -> Mapping[int, JobView]:
        """Submitted jobs not running, by index, in the order they became pending."""
        ...

    @property
    def running(self) -> Mapping[int, JobView]: ...
    @property
    def arrived(self) -> Sequence[JobView]:
        """Jobs submitted since the last call."""
        ...

    @property
    def finished(self) -> Sequence[JobView]:
        """Jobs completed since the last call."""
        ...

    @property
    def started(self) -> Sequence[JobView]:
        """Jobs the last decision started or resized (their ``end`` is now known)."""
        ...

    @property
    def evicted(self) -> Sequence[JobView]:
        """Jobs the engine preempted since the last call (their server was reclaimed)."""
        ...

    @property
    def cluster(self) -> ClusterSpec: ...
    @property
    def capacity(self) -> Sequence[int]:
        """Usable GPUs per server now (0: not available)."""
        ...

    @property
    def free(self) -> Sequence[int]:
        """Free GPUs per server now."""
        ...

    @property
    def free_total(self) -> int: ...
    @property
    def share_free(self) -> Sequence[int]:
        """Free opportunistic slots per server (``Decision.share``)."""
        ...

    def plan_shared(self) -> FreeMap:
        """A scratch copy of the opportunistic slots' free map."""
        ...

    def plan(self) -> FreeMap:
        """A scratch copy of the free map to plan several starts on."""
        ...

    def speed(self, job: SimJob, placement: Placement) -> float:
        """The speed ``job`` would run at on ``placement``."""
        ...

    def start_cost(self, job: JobView, gpus: int) -> float:
        """Time a start of ``job`` on ``gpus`` GPUs adds before its work goes on, at speed 1.

        The engine's restart stall when the job ran before
        (``EngineParams.restart_cost``) plus its start overhead's work
        (``start_overhead`` x (1 + log2 gpus)); 0 when the run charges
        neither. A preemptive policy that compares a waiting job with a
        running one counts it, or a switch that costs more than it gains
        is undone at once and redone (SRTF under any restart cost).
        """
        ...


class Policy(Protocol):
    """A scheduling policy: a name and ``decide``."""

    name: str

    def decide(self, view: View) -> Decision: ...


@runtime_checkable
class Periodic(Protocol):
    """A policy that decides on a timer of ``period`` (trace units) while jobs are left."""

    period: float


@runtime_checkable
class Interfering(Protocol):
    """A policy whose GPU sharing has its own speeds: ``(share_slowdown, host_slowdown)``.

    They replace ``EngineParams``' interference model for its runs (Gandiva
    sets every shared job's speed itself, so it declares ``(0.0, 0.0)``).
    """

    interference: tuple[float, float]


@runtime_checkable
class Reporting(Protocol):
    """A policy that reports counters of its run (solver seconds, terms, rules used)."""

    def stats(self) -> Mapping[str, float]: ...
