"""The Chronus artifact's minute loop over the engine's view (``queue="artifact"``).

The artifact advances a clock of whole minutes (``time_aware_with_lease.py``,
``run``): at a term boundary (multiples of T_l) the selection and the
release (``flush_lease_jobs``); every 5 minutes the arrivals' admission and
the pending pass (``flush_event_jobs_with_cache_solution``,
``flush_pending_jobs``); every odd minute the fill (``filling_jobs``).
Between minutes, and at a second call in the same minute (the engine calls
again after preemptions), nothing: a timer wakes the policy at the next
minute while jobs wait. The queue's classes and the moves between them are
:class:`~scheduling_opt.sim.policies.chronus.artifact.queue.QueueState`'s;
the selection and the admission are the policy's, given to the loop.

The pass serves, in :func:`~scheduling_opt.sim.policies.chronus.artifact.rules.pass_key`
order, first the jobs ``force_short`` forced (preempting opportunistic
jobs, :func:`~scheduling_opt.sim.policies.chronus.artifact.rules.victim_key`
order, when they lack GPUs), then every pending job that fits; the fill
serves the pending jobs in
:func:`~scheduling_opt.sim.policies.chronus.artifact.rules.fill_key` order.
Starts outside the pass may owe no start overhead (``fill_overhead=False``)
and may be credited the minutes since the last pass (``start_credit``):
:class:`~scheduling_opt.sim.protocol.StartTerms`. Cost per minute: O(n log n)
for n jobs, plus the selection at a boundary and the admission.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

from scheduling_opt.sim.cluster import FreeMap, Placement
from scheduling_opt.sim.policies.chronus.artifact.queue import QueueState
from scheduling_opt.sim.policies.chronus.artifact.rules import (
    PASS_STEP,
    fill_key,
    pass_key,
    victim_key,
)
from scheduling_opt.sim.policies.chronus.ledger import Ledger
from scheduling_opt.sim.policies.chronus.options import ChronusOptions
from scheduling_opt.sim.protocol import Decision, JobView, StartTerms, View

__all__ = ["MinuteLoop"]

#: ``admit(view, arrived, origin)``: the policy's admission of a batch for terms from ``origin``.
Admit = Callable[[View, Sequence[JobView], float], None]
#: ``place(plan, gpus)``: a placement on the free GPUs, or None.
Place = Callable[[FreeMap, int], Placement | None]


class MinuteLoop:
    """The artifact's loop of whole minutes: terms, 5-minute passes, odd-minute fills.

    Parameters
    ----------
    options : ChronusOptions
        ``lease_length``, ``admission``, ``term_release``,
        ``force_short``, ``fill_overhead``, ``start_credit``.
    ledger : Ledger
        The guaranteed and selected jobs, the selection's start order.
    queue : QueueState
        The artifact's queue classes and lists.
    select : callable
        ``select(view)``: the term's selection (the ledger's ``selected``).
    admit : callable
        ``admit(view, arrived, origin)``: the admission of a batch.
    place : callable
        ``place(plan, gpus)``: the placement of one job.
    """

    def __init__(
        self,
        options: ChronusOptions,
        ledger: Ledger,
        queue: QueueState,
        *,
        select: Callable[[View], None],
        admit: Admit,
        place: Place,
    ) -> None:
        self.options = options
        self.ledger = ledger
        self.queue = queue
        self.select = select
        self.admit = admit
        self.place = place
        self.last_minute = -math.inf
        #: The next term's start.
        self.next_term = -math.inf

    def decide(self, view: View) -> Decision:
        """The preemptions and starts of this minute, and the timer for the next."""
        options, ledger, queue = self.options, self.ledger, self.queue
        now = view.now
        queue.arriving.extend(view.arrived)
        minute = math.floor(now + 1e-9)
        waiting = bool(view.pending or view.running or queue.arriving)
        if abs(now - minute) > 1e-9 or minute == self.last_minute:
            return Decision(wake_at=minute + 1 if waiting else None)
        self.last_minute = minute
        length = options.lease_length
        plan = view.plan()
        preempt: list[int] = []
        starts: list[tuple[int, Placement]] = []
        # Jobs submitted since the last 5-minute pass are not in its queue yet.
        unseen = {st.index for st in queue.arriving}
        pending = {i: st for i, st in view.pending.items() if i not in unseen}
        running: dict[int, JobView] = dict(view.running)
        boundary = abs(minute / length - round(minute / length)) < 1e-9
        credit: list[tuple[int, float]] = []
        if boundary or minute % PASS_STEP == 0:
            queue.check_overrun(running, now, boundary)
        if boundary:
            self.select(view)
            queue.count_unaccepted(view)
            self.next_term = minute + length
            queue.holding = set(ledger.selected)
            queue.forced.clear()
            release = [
                i for i in running if i not in ledger.selected and (options.term_release == "all")
            ]
            for i in release:
                st = running.pop(i)
                preempt.append(i)
                plan.give(st.placement)
                pending[i] = st
            # A selected job that waited since the last pass (the pass of this
            # minute runs after the selection) counts its progress from that
            # pass: ``flush_lease_jobs`` sets no ``last_check_time``.
            since = minute - PASS_STEP * math.floor((minute - 1) / PASS_STEP)
            first = [i for i in ledger.select_order if i in ledger.selected]
            for i in first + sorted(ledger.selected.difference(first)):
                waiting_job = pending.get(i)
                if waiting_job is None:
                    continue
                placement = self._make_room(plan, waiting_job, running, pending, preempt)
                if placement is not None:
                    plan.take(placement)
                    starts.append((i, placement))
                    del pending[i]
                    if options.start_credit and minute >= PASS_STEP and i not in release:
                        credit.append((i, float(since)))
        if minute % PASS_STEP == 0:
            arrived, queue.arriving = queue.arriving, []
            if options.admission and arrived:
                origin = (math.floor(minute / length + 1e-9) + 1) * length
                self.admit(view, arrived, origin)
            pending.update((st.index, st) for st in arrived if st.index in view.pending)
            self._pending_pass(plan, now, pending, running, preempt, starts)
        free: tuple[int, ...] = ()
        if minute % 2 == 1:
            order = sorted(
                pending.items(),
                key=lambda it: fill_key(
                    queue.cls(*it),
                    queue.emergence.get(it[0], 0.0),
                    it[0] in queue.overran,
                    it[1].job.submit,
                    it[0],
                ),
            )
            before = len(starts)
            self._take(plan, order, pending, starts)
            if not options.fill_overhead:
                # ``filling_jobs`` counts no resume: these starts owe no overhead.
                free = tuple(i for i, _ in starts[before:])
            since = minute - PASS_STEP * math.floor(minute / PASS_STEP)
            if options.start_credit and since > 0:
                # Progress counts from the last pass, which updated every waiting job.
                credit.extend((i, float(since)) for i, _ in starts[before:])
        for i, _ in starts:
            # Appended to the artifact's running list in this order.
            queue.start_seq[i] = queue.start_count
            queue.start_count += 1
        waiting = bool(pending or running or starts or queue.arriving)
        credited = dict(credit)
        terms = tuple(
            (i, StartTerms(overhead=i not in free, credit=credited.get(i, 0.0)))
            for i, _ in starts
            if i in free or i in credited
        )
        return Decision(
            preempt=tuple(preempt),
            starts=tuple(starts),
            wake_at=minute + 1 if waiting else None,
            terms=terms,
        )

    def _make_room(
        self,
        plan: FreeMap,
        st: JobView,
        running: dict[int, JobView],
        pending: dict[int, JobView],
        preempt: list[int],
    ) -> Placement | None:
        """A place for a selected job, releasing opportunistic jobs if it has none (lowest first)."""
        placement = self.place(plan, st.job.gpus)
        if placement is not None or self.options.term_release == "all":
            return placement
        queue = self.queue
        victims = sorted(
            (v for i, v in running.items() if i not in queue.holding),
            key=lambda v: pass_key(
                v.index in queue.overran,
                queue.cls(v.index, v),
                queue.emergence.get(v.index, 0.0),
                v.job.submit,
                v.index,
            ),
            reverse=True,
        )
        for v in victims:
            if plan.total_free >= st.job.gpus:
                break
            running.pop(v.index)
            preempt.append(v.index)
            plan.give(v.placement)
            pending[v.index] = v
        return self.place(plan, st.job.gpus)

    def _pending_pass(
        self,
        plan: FreeMap,
        now: float,
        pending: dict[int, JobView],
        running: dict[int, JobView],
        preempt: list[int],
        starts: list[tuple[int, Placement]],
    ) -> None:
        """The artifact's 5-minute pass (``flush_pending_jobs``): force, demote, rank, run."""
        queue = self.queue
        if self.options.force_short:
            queue.force(now, pending, running, sum(plan.capacity), self.next_term)
        for i, st in pending.items():
            queue.rank(i, st, now)
        forced = [(i, st) for i, st in pending.items() if i in queue.forced]
        need = sum(st.job.gpus for _, st in forced)
        if need > plan.total_free:
            victims = [
                (i, st)
                for i, st in running.items()
                if i not in queue.holding and i not in queue.forced
            ]
            for i, st in victims:
                queue.rank(i, st, now)
            victims.sort(
                key=lambda it: victim_key(
                    it[0] in queue.overran,
                    queue.cls(*it),
                    queue.emergence.get(it[0], 0.0),
                    it[1].job.submit,
                    queue.start_seq.get(it[0], -1),
                )
            )
            for i, st in victims:
                if need <= plan.total_free:
                    break
                running.pop(i)
                preempt.append(i)
                plan.give(st.placement)
                pending[i] = st
        for i, st in forced:
            placement = self.place(plan, st.job.gpus)
            if placement is not None:
                plan.take(placement)
                starts.append((i, placement))
                del pending[i]
        order = sorted(
            pending.items(),
            key=lambda it: pass_key(
                it[0] in queue.overran,
                queue.cls(*it),
                queue.emergence.get(it[0], 0.0),
                it[1].job.submit,
                it[0],
            ),
        )
        self._take(plan, order, pending, starts)

    def _take(
        self,
        plan: FreeMap,
        order: Sequence[tuple[int, JobView]],
        pending: dict[int, JobView],
        starts: list[tuple[int, Placement]],
    ) -> None:
        """Start the jobs of ``order`` that fit the free GPUs, in order, skipping those that do not."""
        for i, st in order:
            if plan.total_free == 0:
                break
            if st.job.gpus > plan.total_free:
                continue
            placement = self.place(plan, st.job.gpus)
            if placement is not None:
                plan.take(placement)
                starts.append((i, placement))
                del pending[i]
