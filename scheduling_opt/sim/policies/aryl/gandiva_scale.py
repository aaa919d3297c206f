"""Gandiva's grow-shrink as Aryl ran it: FIFO that grows elastic jobs while nothing waits.

Aryl (EuroSys '22) §7.1 compares its elastic scaling with Gandiva's: "It
exploits elasticity by scaling out jobs to utilize the remaining resources
on servers whenever they are under-utilized. We consider under-utilization
to be the period when there are available resources but no pending jobs";
Appendix F: "Gandiva scales up the job when the cluster is underutilized
and the hosting servers have available resources". On top of Aryl's
Baseline (FIFO, no loaning), each call:

1. if a job waits, every grown job shrinks back to the GPUs it started
   with (Gandiva's shrink: growth lasts only while nothing waits);
2. jobs start in submit order at their requested GPUs, placed by the
   simulator's best fit, stopping at the first that does not fit (the
   Baseline's head-of-line blocking);
3. if no job waits then, each running elastic job, in submit order, grows
   onto the free GPUs of the servers it already holds (its hosting
   servers, no new server) up to its maximum.

A resize pays the run's restart cost (Aryl's 63 s), as Aryl's own do.
Gandiva's time slicing, packing and migration are not part of this
baseline (:mod:`.gandiva` has them). Cost per call: O(P + R x s) for P
waiting and R running jobs of s servers each.
"""

from __future__ import annotations

from scheduling_opt.sim.cluster import Placement
from scheduling_opt.sim.protocol import Decision, View


def _held(placement: Placement) -> int:
    return sum(g for _, g in placement)


class GandivaScale:
    """FIFO with Gandiva's grow-shrink (Aryl §7.1's Gandiva baseline).

    Examples
    --------
    >>> from scheduling_opt.sim import ClusterSpec, SimJob, Workload, simulate
    >>> w = Workload.of([SimJob("e", 0.0, 2, 8.0, min_gpus=1, max_gpus=4)], "demo")
    >>> simulate(w, ClusterSpec.uniform(1, 4), GandivaScale()).end  # grown to 4 at once
    (4.0,)
    """

    name = "gandiva-scale"

    def __init__(self) -> None:
        self.started_as: dict[int, Placement] = {}  # running job -> placement at its start
        self.counters = dict.fromkeys(("grows", "shrinks"), 0.0)

    def stats(self) -> dict[str, float]:
        """Counters: growths and shrinks."""
        return dict(self.counters)

    def decide(self, view: View) -> Decision:
        for st in view.finished:
            self.started_as.pop(st.index, None)
        for st in view.evicted:
            self.started_as.pop(st.index, None)
        plan = view.plan()
        resize: dict[int, Placement] = {}
        waiting = sorted(view.pending)
        if waiting:  # growth lasts only while nothing waits
            for i, st in sorted(view.running.items()):
                first = self.started_as.get(i)
                if first is not None and first != st.placement:
                    plan.give(st.placement)
                    plan.take(first)
                    resize[i] = first
                    self.counters["shrinks"] += 1
        starts: list[tuple[int, Placement]] = []
        for i in waiting:
            placement = plan.place(view.pending[i].job.gpus)
            if placement is None:
                break  # head-of-line blocking, as the Baseline
            plan.take(placement)
            starts.append((i, placement))
            self.started_as[i] = placement
        current = {i: resize.get(i, st.placement) for i, st in view.running.items()}
        current.update(starts)
        if len(starts) == len(waiting):
            for i in sorted(current):
                st = view.running.get(i) or view.pending[i]
                job = st.job
                room = job.max_gpus - _held(current[i])
                if job.min_gpus == job.max_gpus or room <= 0:
                    continue
                grown = dict(current[i])
                for s in sorted(grown):
                    add = min(room, plan.free[s])
                    if add > 0:
                        plan.take(((s, add),))
                        grown[s] += add
                        room -= add
                new = tuple(sorted(grown.items()))
                if new != current[i]:
                    current[i] = new
                    self.counters["grows"] += 1
                    if i in view.running:
                        resize[i] = new
                    else:  # grown at its start
                        starts = [(k, new if k == i else p) for k, p in starts]
        moves = [(i, p) for i, p in sorted(resize.items()) if p != view.running[i].placement]
        # The engine applies resizes in order, each on the GPUs free at its turn: shrinks first.
        moves.sort(key=lambda m: _held(m[1]) > _held(view.running[m[0]].placement))
        return Decision(starts=tuple(starts), resize=tuple(moves))
