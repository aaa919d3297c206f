"""Chronus' scheduling loop over the engine's events (§3.3-§3.4, ``queue="chronus"``).

At every event the loop admits the SLO jobs that arrived
(:class:`~scheduling_opt.sim.policies.chronus.admission.Admission`); at a
term's start it selects the jobs holding the term
(:class:`~scheduling_opt.sim.policies.chronus.selection.TermSelection`) and,
when the selected jobs that wait need GPUs, preempts running jobs the term
does not hold (best effort first, longest remaining first; the engine then
calls again at once and the starts go on the freed GPUs). Between terms,
the GPUs left over go, at every event, to the pending jobs in this order:
selected jobs, unselected guaranteed jobs by earliest deadline, then
best-effort and unguaranteed jobs (and SLO jobs whose deadlines all
passed) by shortest remaining time (SRTF); these run opportunistically
until the next term. Placement:
:class:`~scheduling_opt.sim.policies.chronus.placement.Allocator`.

With ``be_lease`` set (the paper's system, :mod:`.spot`) the time between
terms is not free-for-all: the best-effort queue gets BE leases by SRTF at
BE cycles only, on the GPUs the selected jobs leave (the Spot cluster),
and a guaranteed job the term does not hold waits for the next term (its
SLO lease, if it held one, is not renewed: it is preempted at the term's
start). Without it (``be_lease=None``) the left-over GPUs go at every
event to the order above.

``term_release="all"`` (the Chronus artifact's rule, ``flush_lease_jobs``)
releases every running job the term does not hold at its start. Cost per
call: O(n log n) for n waiting jobs, plus the term's selection and the
placement.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable

from scheduling_opt.sim.cluster import Placement
from scheduling_opt.sim.policies.chronus.admission import Admission
from scheduling_opt.sim.policies.chronus.lease_model import LeaseModel
from scheduling_opt.sim.policies.chronus.ledger import Ledger
from scheduling_opt.sim.policies.chronus.options import ChronusOptions
from scheduling_opt.sim.policies.chronus.placement import Allocator
from scheduling_opt.sim.policies.chronus.selection import TermSelection
from scheduling_opt.sim.policies.chronus.spot import SpotCycles
from scheduling_opt.sim.protocol import Decision, JobView, View

__all__ = ["PaperLoop"]


class PaperLoop:
    """The paper's loop: admission at arrivals, a selection per term, SRTF between terms.

    Parameters
    ----------
    options : ChronusOptions
        ``admission``, ``lease_length``, ``term_release``, ``placement``.
    ledger : Ledger
        The guaranteed and selected jobs.
    model : LeaseModel
        What the lease charges a job's GPUs.
    admission, selection, allocator
        The run's admission control, term selection and placement.
    remaining : callable, optional
        A job's remaining work as estimated (SRTF's key; default: the
        trace's, an oracle).
    """

    def __init__(
        self,
        options: ChronusOptions,
        ledger: Ledger,
        model: LeaseModel,
        admission: Admission,
        selection: TermSelection,
        allocator: Allocator,
        remaining: Callable[[JobView, float], float] | None = None,
    ) -> None:
        self.options = options
        self.ledger = ledger
        self.model = model
        self.admission = admission
        self.selection = selection
        self.allocator = allocator
        #: The next term's start.
        self.next_term = -math.inf
        self.remaining = remaining or (lambda st, now: st.remaining(now))
        self.spot = (
            None if options.be_lease is None else SpotCycles(options.be_lease, self.remaining)
        )

    def level(self, st: JobView, now: float) -> float:
        """The job's class: 0 selected, 1 guaranteed with a deadline ahead, 2 the rest."""
        if st.index in self.ledger.selected:
            return 0.0
        guaranteed = not self.options.admission or st.index in self.ledger.guaranteed
        if guaranteed and st.job.deadlines and st.job.deadlines[-1][0] > now:
            return 1.0
        return 2.0

    def priority(self, st: JobView, now: float) -> tuple[float, ...]:
        """Ascending order of the waiting jobs: selected, guaranteed by deadline, the rest by SRTF."""
        level = self.level(st, now)
        if level < 2.0:
            return (level, st.job.first_deadline, float(st.index))
        return (2.0, self.remaining(st, now), float(st.index))

    def decide(self, view: View) -> Decision:
        """The preemptions of a term's start, or the starts and migrations of any event."""
        options, ledger = self.options, self.ledger
        now = view.now
        boundary = now >= self.next_term - 1e-9
        if options.admission and view.arrived:
            # At a term's start the new jobs join this term's selection; between
            # terms they can hold a lease from the next term on.
            origin = now if boundary else self.next_term
            self.admission.admit(view, view.arrived, origin, quick=not boundary)
        preempt: list[int] = []
        plan = view.plan()
        if boundary:
            self.selection.select(view)
            self.next_term = now + options.lease_length
            # Selected jobs that wait get GPUs from unselected running jobs.
            need = (
                sum(
                    self.model.charged(st.job.gpus)
                    for i, st in view.pending.items()
                    if i in ledger.selected
                )
                - view.free_total
            )
            if options.term_release == "all":
                # Every running job the term does not hold is released; the next
                # call restarts them by priority.
                preempt = [i for i in view.running if i not in ledger.selected]
            elif need > 0 and self.spot is None:
                victims = sorted(
                    (st for i, st in view.running.items() if i not in ledger.selected),
                    key=lambda st: (st.job.slo, -st.remaining(now), -st.index),
                )
                for st in victims:
                    if need <= 0:
                        break
                    preempt.append(st.index)
                    plan.give(st.placement)
                    need -= st.job.gpus
        spot = self.spot
        if spot is not None and (boundary or spot.due(now)):
            preempt = self._open_cycle(view, spot, boundary)
        if preempt:
            # The engine calls again at once: the starts go on the freed GPUs then.
            return Decision(preempt=tuple(preempt), wake_at=None)
        allocator = self.allocator
        waiting: Iterable[JobView] = view.pending.values()
        if spot is not None:
            # Selected jobs start at any call; leased best-effort jobs at their cycle only.
            # Filtered before the sort: between cycles most of the queue cannot start.
            cycle = spot.open_now(now)
            waiting = [
                st
                for st in waiting
                if st.index in ledger.selected or (cycle and st.index in spot.leased)
            ]
        order = sorted(waiting, key=lambda st: self.priority(st, now))
        starts: list[tuple[int, Placement]] = (
            allocator.place(plan, order) if options.placement == "chronus" else []
        )
        placed = {i for i, _ in starts}
        for st in order:
            if plan.total_free == 0:
                break
            if st.index in placed:
                continue
            placement = allocator.place_one(plan, st.job.gpus)
            if placement is not None:
                plan.take(placement)
                starts.append((st.index, placement))
        moves = (
            allocator.consolidate(view, plan, {i for i, _ in starts}) if allocator.spread else ()
        )
        wake = self.next_term if (view.pending or view.running) else None
        if wake is not None and spot is not None:
            wake = min(wake, spot.next_cycle)
        return Decision(starts=tuple(starts), resize=moves, wake_at=wake)

    def _open_cycle(self, view: View, spot: SpotCycles, boundary: bool) -> list[int]:
        """A BE cycle (and at a term's start the end of unrenewed SLO leases): the jobs to stop."""
        now, ledger = view.now, self.ledger
        jobs = [*view.pending.values(), *view.running.values()]
        held = sum(self.model.charged(st.job.gpus) for st in jobs if st.index in ledger.selected)
        queue = [
            st for st in jobs if st.index not in ledger.selected and self.level(st, now) == 2.0
        ]
        room = sum(view.capacity) - held
        stop = spot.open(
            now, queue, room, self.next_term, lambda st: view.start_cost(st, st.job.gpus)
        )
        if boundary:
            # A guaranteed job this term does not hold: its SLO lease is not renewed.
            stop += [
                i
                for i, st in view.running.items()
                if i not in ledger.selected and self.level(st, now) == 1.0
            ]
        return stop
