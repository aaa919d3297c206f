"""The Chronus artifact's queue classes and the moves between them (``queue="artifact"``).

The artifact's queue (``time_aware_with_lease.py``, the ``queue_priority``
constants) knows four classes: guaranteed, unguaranteed, best effort and
lowest (:data:`~scheduling_opt.sim.policies.chronus.artifact.rules.LOWEST`
and its siblings). Beyond the guaranteed jobs of the
:class:`~scheduling_opt.sim.policies.chronus.ledger.Ledger`, a job moves
between them by three rules, each kept here with the sets it writes:

- overrun (``flush_running_jobs``): a running job that ran past its
  estimate becomes unguaranteed and first in the 5-minute pass;
- forced (``flush_pending_jobs``, ``force_short``): an unguaranteed pending
  job that can finish (by the trace's duration) before the term ends runs
  at once on the GPUs the term's selection leaves, smallest remaining x
  GPUs first; one submitted in this term becomes guaranteed;
- lowest (``flush_pending_jobs``): an SLO job that can no longer meet its
  deadline, even if run now (the trace's remaining duration), joins the
  lowest class.

The queue's urgency ``emergence`` orders the pass and the fill; the count
of unguaranteed jobs decides the sign of the selection's term-0 objective
(:meth:`QueueState.minimize_first`). Each rule is O(1) per job.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from scheduling_opt.sim.policies.chronus.artifact.rules import (
    ACCEPTED,
    BEST_EFFORT,
    LOWEST,
    UNACCEPTED,
    Estimates,
)
from scheduling_opt.sim.policies.chronus.ledger import Ledger
from scheduling_opt.sim.protocol import JobView, View

__all__ = ["QueueState"]


@dataclass(slots=True)
class QueueState:
    """The artifact's queue classes beyond guaranteed or not, and the lists its order reads.

    Under ``queue="chronus"`` the sets stay empty and :meth:`cls` is
    guaranteed, unguaranteed or best effort.

    Attributes
    ----------
    ledger : Ledger
        The guaranteed jobs, the deadlines the queue checks, the counts.
    estimates : Estimates
        The artifact's estimate per job.
    artifact : bool
        The artifact's queue runs (``queue="artifact"``).
    lowest, overran, forced, force_accepted : set of int
        The lowest class; the jobs that ran past their estimate; the jobs
        forced this term; the forced jobs made guaranteed.
    holding : set of int
        The jobs selected at the term's start (they hold its lease).
    emergence : dict of int to float
        Each job's urgency at the last pass.
    arriving : list of JobView
        Jobs submitted since the last 5-minute pass (not in its queue yet).
    start_seq : dict of int to int
        Each running job's place in the artifact's running list (start order).

    Examples
    --------
    >>> from types import SimpleNamespace
    >>> from scheduling_opt.sim import SimJob
    >>> queue = QueueState(Ledger(), Estimates(20.0), artifact=True)
    >>> st = SimpleNamespace(job=SimJob("a", 0.0, 1, 10.0, deadlines=((30.0, 1.0),)))
    >>> queue.cls(0, st) == UNACCEPTED  # type: ignore[arg-type]
    True
    >>> queue.ledger.guaranteed.add(0)
    >>> queue.cls(0, st) == ACCEPTED  # type: ignore[arg-type]
    True
    """

    ledger: Ledger
    estimates: Estimates
    artifact: bool
    lowest: set[int] = field(default_factory=set)
    overran: set[int] = field(default_factory=set)
    forced: set[int] = field(default_factory=set)
    force_accepted: set[int] = field(default_factory=set)
    holding: set[int] = field(default_factory=set)
    emergence: dict[int, float] = field(default_factory=dict)
    arriving: list[JobView] = field(default_factory=list)
    start_seq: dict[int, int] = field(default_factory=dict)
    start_count: int = 0

    def cls(self, index: int, st: JobView) -> int:
        """The artifact's queue class of a job (its ``queue_priority``)."""
        if index in self.lowest:
            return LOWEST
        if index in self.overran:
            return UNACCEPTED
        if not st.job.slo:
            return BEST_EFFORT
        if index in self.ledger.guaranteed or index in self.force_accepted:
            return ACCEPTED
        return UNACCEPTED

    def due(self, index: int, st: JobView) -> float:
        """The deadline the artifact checks: an admitted job's last step down to a term, else the first."""
        got = self.ledger.deadline.get(index)
        return got if got is not None else st.job.deadlines[0][0]

    def emergence_of(self, index: int, st: JobView, now: float) -> float:
        """The artifact's ``emergence``: minus remaining estimate or slack, times GPUs (``flush_pending_jobs``)."""
        cls = self.cls(index, st)
        est = self.estimates.of(st)
        done = st.attained(now)
        if cls in (BEST_EFFORT, UNACCEPTED):
            return -(est - done) * st.job.gpus
        return -(self.due(index, st) - now - est + done) * st.job.gpus

    def rank(self, index: int, st: JobView, now: float) -> None:
        """Demote ``st`` if it is late (:meth:`demote`), then record its urgency."""
        self.demote(index, st, now)
        self.emergence[index] = self.emergence_of(index, st, now)

    def demote(self, index: int, st: JobView, now: float) -> None:
        """An SLO job that cannot meet its deadline even if run now joins the lowest class.

        By the trace's remaining duration (``flush_pending_jobs``).
        """
        late = st.job.slo and self.due(index, st) < now + st.job.work - st.attained(now)
        if late and index not in self.lowest:
            self.lowest.add(index)
            self.ledger.guaranteed.discard(index)
            self.force_accepted.discard(index)
            self.ledger.counts["lowest"] += 1

    def check_overrun(self, running: Mapping[int, JobView], now: float, boundary: bool) -> None:
        """A job that ran past its estimate is unguaranteed and first in the pass (``flush_running_jobs``).

        At a term boundary every running job is checked, between terms only
        those not holding the term's lease.
        """
        for i, st in running.items():
            if i in self.overran or not (boundary or i not in self.holding):
                continue
            if st.executed(now) >= self.estimates.of(st):
                self.overran.add(i)
                self.ledger.guaranteed.discard(i)
                self.force_accepted.discard(i)
                self.ledger.counts["overran"] += 1

    def force(
        self,
        now: float,
        pending: Mapping[int, JobView],
        running: Mapping[int, JobView],
        total: int,
        term_end: float,
    ) -> None:
        """Unguaranteed jobs that can finish within the term (ending at ``term_end``) run at once.

        ``flush_pending_jobs``: by the trace's remaining duration, smallest
        remaining x GPUs first, on the ``total`` GPUs less those the term's
        selection and the jobs forced so far hold; one submitted in this
        term becomes guaranteed.
        """
        left = term_end - now
        held = sum(
            st.job.gpus for i, st in running.items() if i in self.holding or i in self.forced
        )
        held += sum(st.job.gpus for i, st in pending.items() if i in self.forced)
        spot = total - held
        candidates = [
            (max(st.job.work - st.attained(now), 0.0) * st.job.gpus, i, st)
            for i, st in pending.items()
            if i not in self.forced
            and self.cls(i, st) == UNACCEPTED
            and st.job.work - st.attained(now) <= left
        ]
        candidates.sort(key=lambda c: (c[0], c[1]))
        length = self.estimates.lease_length
        for _, i, st in candidates:
            if st.job.gpus <= spot:
                spot -= st.job.gpus
                self.forced.add(i)
                self.ledger.counts["forced"] += 1
                # Guaranteed if submitted in this term: the artifact compares with
                # (cur_lease_index - 1) x T_l, cur_lease_index having moved on at
                # the term's boundary.
                if st.job.submit >= term_end - length and i not in self.overran:
                    self.force_accepted.add(i)

    def count_unaccepted(self, view: View) -> None:
        """The artifact's recount of ``number_of_accepted`` at a selection's end (``flush_lease_jobs``).

        The jobs of its unguaranteed class, leaving out those that arrived
        since the last 5-minute pass (not in its queue yet).
        """
        unseen = {st.index for st in self.arriving}
        self.ledger.unaccepted = sum(
            1
            for jobs in (view.pending, view.running)
            for i, st in jobs.items()
            if i not in unseen and self.cls(i, st) == UNACCEPTED
        )

    def unguaranteed_wait(self, view: View) -> bool:
        """Whether an unguaranteed SLO job waits or runs."""
        return any(
            st.job.slo and self.cls(i, st) == UNACCEPTED
            for jobs in (view.pending, view.running)
            for i, st in jobs.items()
        )

    def minimize_first(self, view: View) -> bool:
        """Whether the artifact's selection minimizes the first term's GPUs (its adaptive objective).

        ``flush_lease_jobs`` sets the objective to minimize while
        ``number_of_accepted`` > 0. Under the artifact's queue, its rule: an
        unguaranteed job was left at the last selection's end or an SLO
        arrival was refused since (``ledger.unaccepted``,
        :meth:`count_unaccepted`). Under our queue, an unguaranteed SLO
        job waits or runs now.
        """
        if self.artifact:
            return self.ledger.unaccepted > 0
        return self.unguaranteed_wait(view)
