"""The live read-only view a policy gets of the simulation's state.

:class:`LiveView` implements :class:`~scheduling_opt.sim.protocol.View` over
a :class:`~scheduling_opt.sim.live.ClusterState` without copying it: the
pending and running maps are read-only proxies of the state's own, the
per-call lists are copied into tuples (a policy may keep them), and
:meth:`LiveView.plan` hands out a scratch copy of the free map.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from types import MappingProxyType

from scheduling_opt.sim.cluster import ClusterSpec, FreeMap, Placement
from scheduling_opt.sim.live import ClusterState
from scheduling_opt.sim.protocol import JobView
from scheduling_opt.sim.workload import SimJob


class LiveView:
    """The :class:`~scheduling_opt.sim.protocol.View` the engine hands to policies."""

    __slots__ = ("_pending", "_running", "_state")

    def __init__(self, state: ClusterState) -> None:
        self._state = state
        self._pending: Mapping[int, JobView] = MappingProxyType(state.pending)
        self._running: Mapping[int, JobView] = MappingProxyType(state.running)

    @property
    def now(self) -> float:
        return self._state.now

    @property
    def pending(self) -> Mapping[int, JobView]:
        return self._pending

    @property
    def running(self) -> Mapping[int, JobView]:
        return self._running

    @property
    def arrived(self) -> Sequence[JobView]:
        return tuple(self._state.arrived)

    @property
    def finished(self) -> Sequence[JobView]:
        return tuple(self._state.finished)

    @property
    def started(self) -> Sequence[JobView]:
        return tuple(self._state.started)

    @property
    def evicted(self) -> Sequence[JobView]:
        return tuple(self._state.evicted)

    @property
    def cluster(self) -> ClusterSpec:
        return self._state.cluster

    @property
    def capacity(self) -> Sequence[int]:
        return tuple(self._state.freemap.capacity)

    @property
    def free(self) -> Sequence[int]:
        return tuple(self._state.freemap.free)

    @property
    def free_total(self) -> int:
        return self._state.freemap.total_free

    @property
    def share_free(self) -> Sequence[int]:
        return tuple(self._state.sharing.guests.free)

    def plan_shared(self) -> FreeMap:
        return self._state.sharing.guests.copy()

    def plan(self) -> FreeMap:
        return self._state.freemap.copy()

    def speed(self, job: SimJob, placement: Placement) -> float:
        return self._state.speed_of(job, placement)

    def start_cost(self, job: JobView, gpus: int) -> float:
        return self._state.start_cost(job.first_start == job.first_start, gpus)
