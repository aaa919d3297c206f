"""Chronus' lease-term selection through the library's lease solvers (§3.3.3-§3.3.4).

Every lease term (``lease_length``, 20 minutes in the paper) the unfinished
guaranteed jobs whose deadlines have not all passed become a
:class:`~scheduling_opt.lease.LeaseInput` (remaining work, deadline steps
relative to the term's start, the cluster's GPUs, each charged Eq. (6)'s
rounded-up GPUs under Chronus placement) and a lease solver selects which
hold the coming term: ``exact`` (HiGHS) within a per-term time budget, the
greedy when it proves nothing in time (``mode="budget"``); the greedy alone
(``"greedy"``); the exact solver with no fallback (``"exact"``). The
previous term's selection is the warm start. Jobs holding term 0 run this
term.

A guaranteed job the selection gives no deadline (the lease cannot serve it
any more) is demoted to best effort, so the guaranteed set stays one the
lease can serve and admission keeps judging new jobs against a feasible
set. Without admission control (``admission=False``) every SLO job enters
the selection, which rejects what it cannot serve.

The Chronus artifact's selection rules are options:
``selection="artifact"`` (every guaranteed job keeps a level; while
unguaranteed jobs wait, the term holds the fewest GPUs: :meth:`TermSelection.late`),
``"artifact-cbc"`` and ``"artifact-mip"`` (the artifact's own MILP,
:class:`~scheduling_opt.sim.policies.chronus.artifact.selection.RowSelection`),
``search_rows`` (its frozen rows) and ``cache_layout="late"`` (its
reservations laid late);
:mod:`~scheduling_opt.sim.policies.chronus.artifact.rules` explains each.
"""

from __future__ import annotations

import math
import time
from collections.abc import Mapping

from scheduling_opt.lease import LeaseDecision, LeaseInput, exact, greedy
from scheduling_opt.model import Job, RewardStep
from scheduling_opt.sim.policies.chronus.artifact.queue import QueueState
from scheduling_opt.sim.policies.chronus.artifact.rules import late_layout
from scheduling_opt.sim.policies.chronus.artifact.selection import RowSelection, frozen_jobs
from scheduling_opt.sim.policies.chronus.lease_model import LeaseModel
from scheduling_opt.sim.policies.chronus.ledger import Ledger, Tally
from scheduling_opt.sim.policies.chronus.options import ChronusOptions
from scheduling_opt.sim.protocol import View
from scheduling_opt.solution import Solution, Status

__all__ = ["TermSelection"]


class TermSelection:
    """The selection of each lease term: which guaranteed jobs hold which terms.

    Parameters
    ----------
    options : ChronusOptions
        ``mode``, ``time_limit``, ``selection``, the lease's settings.
    ledger : Ledger
        Reads and demotes the guaranteed jobs; gets the term's selected
        jobs and, under the artifact's batch admission, their reservations.
    model : LeaseModel
        The lease jobs; gets the guaranteed schedule's load.
    queue : QueueState
        The artifact's queue (the sign of its term-0 objective, its lists).
    """

    def __init__(
        self, options: ChronusOptions, ledger: Ledger, model: LeaseModel, queue: QueueState
    ) -> None:
        self.options = options
        self.ledger = ledger
        self.model = model
        self.queue = queue
        self.tally = Tally()
        self.rows = RowSelection(options, ledger, queue, self.tally)
        #: The last term's decision (the next term's warm start).
        self.last: LeaseDecision | None = None

    def _jobs(self, view: View) -> list[Job]:
        """The term's lease jobs from now, demoting the guaranteed ones the lease cannot serve."""
        options, ledger, now = self.options, self.ledger, view.now
        jobs = []
        for st in sorted((*view.pending.values(), *view.running.values()), key=lambda s: s.index):
            if not st.job.slo or (options.admission and st.index not in ledger.guaranteed):
                continue
            if options.admission:
                job = self.model.lease_job(st, now, now)
                if job is None:
                    # Its deadlines are out of reach: served as best effort from now on.
                    ledger.guaranteed.discard(st.index)
                    ledger.counts["demoted"] += 1
                    continue
            else:
                steps = [(t - now, v) for t, v in st.job.deadlines if t > now]
                if not steps:
                    continue
                job = Job(
                    str(st.index),
                    st.job.gpus,
                    st.job.gpus,
                    max(st.remaining(now), 1e-9),
                    deadlines=tuple(RewardStep(t, v) for t, v in steps),
                )
            jobs.append(job)
        return jobs

    def select(self, view: View) -> None:
        """Select the jobs holding the term that starts now (the ledger's ``selected``)."""
        options, ledger, now = self.options, self.ledger, view.now
        ledger.select_order = []
        jobs = self._jobs(view)
        if not jobs:
            ledger.selected = set()
            self.last = None
            self.model.set_load({}, [], now)
            ledger.cache = {}
            return
        inp = LeaseInput(
            tuple(jobs),
            capacity=sum(view.capacity),
            lease_length=options.lease_length,
            round_up=options.lease_round_up,
            max_terms=options.max_terms,
            require_all=options.selection != "reward",
        )
        if options.selection in ("artifact-cbc", "artifact-mip"):
            by_rows = self.rows.select(view, inp, self.model.remaining)
            if by_rows is not None:
                self.last = by_rows
                if options.admission:
                    self.model.set_load(by_rows.terms, inp.jobs, now)
                return
        decision = self._solve(inp)
        self.last = decision
        if decision is None:
            ledger.selected = set()
            ledger.cache = {}
            return
        kept = {j: t for j, t in decision.terms.items() if decision.levels[j] is not None}
        frozen = frozen_jobs(view, jobs, ledger.cache, options.search_rows, options.lease_length)
        ledger.counts["frozen"] += len(frozen)
        if options.selection == "artifact" and self.queue.minimize_first(view):
            kept = self.late(inp, decision, kept, frozen)
        ledger.selected = {int(j) for j, t in kept.items() if t and t[0] == 0}
        if options.admission_check == "batch":
            term = round(now / options.lease_length)
            laid = kept
            if options.cache_layout == "late":
                info = {job.id: job for job in inp.lease_jobs}
                due = {
                    j: next(lv.due for lv in info[j].levels if lv.index == decision.levels[j])
                    for j in kept
                }
                laid = late_layout(
                    kept, {j: info[j].gpus for j in kept}, due, inp.capacity, keep=frozen
                )
            ledger.cache = {int(j): [term + k for k in t] for j, t in laid.items()}
        if options.admission:
            for job_id, level in decision.levels.items():
                if level is None:
                    ledger.guaranteed.discard(int(job_id))
                    ledger.counts["demoted"] += 1
            self.model.set_load(kept, jobs, now)

    def _solve(self, inp: LeaseInput) -> LeaseDecision | None:
        """The library's solve of the term (``mode``), recorded in the tally."""
        options, tally = self.options, self.tally
        # hint_terms(self.last) without re-reading every term of our own decision.
        hint = (
            {j: [k - 1 for k in held if k >= 1] for j, held in self.last.terms.items()}
            if self.last is not None
            else None
        )
        started = time.perf_counter()
        sol: Solution[LeaseDecision] | None = None
        if options.mode == "greedy":
            sol = greedy(inp, hint=hint)
        else:
            sol = exact(inp, time_limit=options.time_limit, hint=hint)
            if options.mode == "budget" and (
                sol.decision is None or sol.status is not Status.OPTIMAL
            ):
                fallback = greedy(inp, hint=hint)
                tally.fallbacks += 1
                if sol.decision is None or (fallback.objective or 0.0) > (sol.objective or 0.0):
                    sol = fallback
        if sol.decision is None and inp.require_all:
            # Not every guaranteed job can keep a level: the artifact falls back
            # to a greedy selection (``MIPSolver.batch_fast_job_selection``);
            # ours keeps the most.
            self.ledger.counts["selection_fallbacks"] += 1
            sol = greedy(
                LeaseInput(
                    inp.jobs,
                    inp.capacity,
                    inp.lease_length,
                    round_up=inp.round_up,
                    max_terms=inp.max_terms,
                ),
                hint=hint,
            )
        tally.solver_seconds += time.perf_counter() - started
        tally.record(
            sol.objective or 0.0,
            sol.bound if sol.bound is not None else math.nan,
            optimal=sol.status is Status.OPTIMAL,
        )
        return sol.decision

    def late(
        self,
        inp: LeaseInput,
        decision: LeaseDecision,
        terms: Mapping[str, tuple[int, ...]],
        frozen: frozenset[str] = frozenset(),
    ) -> dict[str, tuple[int, ...]]:
        """The selection with the fewest GPUs in term 0 that keeps every level (a greedy).

        The artifact's MILP minimizes the first term's GPUs while
        unguaranteed SLO jobs wait (its adaptive objective:
        ``flush_lease_jobs``, ``MIPSolver.job_selection``): here each job
        holding term 0, latest deadline first, moves that term to the
        latest term before its deadline with room; the ``frozen`` jobs
        (:func:`~scheduling_opt.sim.policies.chronus.artifact.selection.frozen_jobs`,
        not in the artifact's MILP) stay. O(N H) for N jobs over H terms.
        """
        info = {job.id: job for job in inp.lease_jobs}
        held = {j: list(t) for j, t in terms.items()}
        due = {
            j: next(lv.due for lv in info[j].levels if lv.index == decision.levels[j]) for j in held
        }
        load = [0] * (max(due.values(), default=0) + 1)
        for j, t in held.items():
            for k in t:
                load[k] += info[j].gpus
        for j in sorted(
            (j for j, t in held.items() if t and t[0] == 0 and j not in frozen),
            key=lambda j: (-due[j], j),
        ):
            t, g = held[j], info[j].gpus
            have = set(t)
            for k in range(due[j] - 1, 0, -1):
                if k not in have and load[k] + g <= inp.capacity:
                    t.pop(0)
                    load[0] -= g
                    load[k] += g
                    t.append(k)
                    t.sort()
                    self.ledger.counts["late_terms"] += 1
                    break
        return {j: tuple(t) for j, t in held.items()}
