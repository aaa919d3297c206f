"""The scheduling loop's view of the cluster without the Profiler: the main cluster's jobs and servers.

With the Profiler in the loop (:mod:`.profiling`), Chronus' scheduling
loop sees only the jobs the Profiler handed to it and the servers outside
the Profiling cluster: :class:`MainView` filters the engine's
:class:`~scheduling_opt.sim.protocol.View` so that the loop, unchanged,
schedules the main cluster alone. Its arrivals are the jobs handed this
call; the Profiling cluster's servers have capacity 0. O(jobs + servers)
per call (the maps are built once per call).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from scheduling_opt.sim.cluster import ClusterSpec, FreeMap, Placement
from scheduling_opt.sim.protocol import JobView, View
from scheduling_opt.sim.workload import SimJob

__all__ = ["MainView"]


class MainView:
    """``view`` restricted to the jobs in ``main`` and the servers outside ``hidden``.

    Parameters
    ----------
    view : View
        The engine's view of the call.
    main : set of int
        The jobs the Profiler handed to the scheduling loop.
    hidden : set of int
        The Profiling cluster's servers.
    arrived : sequence of JobView
        The jobs handed this call (the loop's arrivals).
    """

    def __init__(
        self, view: View, main: set[int], hidden: set[int], arrived: Sequence[JobView]
    ) -> None:
        self._view = view
        self._pending = {i: st for i, st in view.pending.items() if i in main}
        self._running = {i: st for i, st in view.running.items() if i in main}
        self._arrived = tuple(arrived)
        self._capacity = tuple(0 if s in hidden else c for s, c in enumerate(view.capacity))
        self._free = tuple(0 if s in hidden else f for s, f in enumerate(view.free))
        self._main = main

    @property
    def now(self) -> float:
        return self._view.now

    @property
    def pending(self) -> Mapping[int, JobView]:
        return self._pending

    @property
    def running(self) -> Mapping[int, JobView]:
        return self._running

    @property
    def arrived(self) -> Sequence[JobView]:
        return self._arrived

    @property
    def finished(self) -> Sequence[JobView]:
        return tuple(st for st in self._view.finished if st.index in self._main)

    @property
    def started(self) -> Sequence[JobView]:
        return tuple(st for st in self._view.started if st.index in self._main)

    @property
    def evicted(self) -> Sequence[JobView]:
        return tuple(st for st in self._view.evicted if st.index in self._main)

    @property
    def cluster(self) -> ClusterSpec:
        return self._view.cluster

    @property
    def capacity(self) -> Sequence[int]:
        return self._capacity

    @property
    def free(self) -> Sequence[int]:
        return self._free

    @property
    def free_total(self) -> int:
        return sum(self._free)

    @property
    def share_free(self) -> Sequence[int]:
        return self._view.share_free

    def plan_shared(self) -> FreeMap:
        return self._view.plan_shared()

    def plan(self) -> FreeMap:
        return FreeMap.with_free(self._capacity, self._free)

    def speed(self, job: SimJob, placement: Placement) -> float:
        return self._view.speed(job, placement)

    def start_cost(self, job: JobView, gpus: int) -> float:
        return self._view.start_cost(job, gpus)
