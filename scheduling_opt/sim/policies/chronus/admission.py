"""Chronus' admission control of arriving SLO jobs (§3.3.2).

An arriving SLO job is guaranteed only if every guaranteed job and it can
still meet a deadline (``admission_check="resolve"``, the paper's rule).
First the cheap sufficient test: the job fits, in its latest terms before
its last deadline, into the room the current guaranteed schedule (the
term's selection plus the jobs admitted since) leaves, O(H)
(:meth:`~scheduling_opt.sim.policies.chronus.lease_model.LeaseModel.fits`);
otherwise :func:`~scheduling_opt.lease.admit_jobs` over all of them: the
greedy and EDF, then (``admission_prove``, on in ``exact`` mode) the
feasibility MILP within ``admission_time_limit``; not found or undecided
counts as rejected. Terms are counted from the next term's start (the new
job can hold no lease before it; at a term's start, from it) and the
guaranteed jobs' remaining work is taken as of now (an over-estimate for
the running ones), so an admission is conservative.

A rejected job is unguaranteed: as the paper says, it joins the best-effort
queue and is served by SRTF; its deadlines still count in the wDMR. A
deadline the lease cannot reach in whole terms (a 10-minute job due 15
minutes after the next term starts) is a rejection: Chronus' Profiler runs
such short jobs to completion in its profiling cluster, which is not
modelled.

The Chronus artifact's checks are options: ``"reserved"`` (each job packed
before its first deadline into the room the guaranteed schedule leaves, no
re-solve; a refused job refuses the rest of its batch) and ``"batch"``
(:func:`~scheduling_opt.sim.policies.chronus.artifact.admission.admit_batch`);
:mod:`~scheduling_opt.sim.policies.chronus.artifact.rules` explains both.
"""

from __future__ import annotations

import math
import time
from collections.abc import Sequence

from scheduling_opt.lease import LeaseInput, admit_jobs
from scheduling_opt.model import Job
from scheduling_opt.sim.policies.chronus.artifact.admission import admit_batch
from scheduling_opt.sim.policies.chronus.lease_model import LeaseModel
from scheduling_opt.sim.policies.chronus.ledger import Ledger
from scheduling_opt.sim.policies.chronus.options import ChronusOptions
from scheduling_opt.sim.protocol import JobView, View
from scheduling_opt.solution import Status

__all__ = ["Admission"]


class Admission:
    """The admission control of one run: who joins the guaranteed jobs of :class:`Ledger`.

    Parameters
    ----------
    options : ChronusOptions
        ``admission_check``, ``admission_time_limit``, the lease's settings.
    ledger : Ledger
        Gets the admitted jobs (``guaranteed``, ``deadline``) and the counts.
    model : LeaseModel
        The lease jobs and the guaranteed schedule's load.
    """

    def __init__(self, options: ChronusOptions, ledger: Ledger, model: LeaseModel) -> None:
        self.options = options
        self.ledger = ledger
        self.model = model
        #: Seconds spent admitting.
        self.seconds = 0.0

    def admit(self, view: View, arrived: Sequence[JobView], origin: float, *, quick: bool) -> None:
        """Admit or reject the SLO jobs of ``arrived``, in arrival order, for terms from ``origin``.

        ``quick``: first try each candidate in the room the current
        guaranteed schedule leaves; only when it does not fit there, the
        full check over every guaranteed job.
        """
        started = time.perf_counter()
        if self.options.admission_check == "batch":
            admit_batch(view, arrived, origin, self.ledger, self.model.estimates)
        else:
            self._check(view, arrived, origin, quick=quick)
        self.seconds += time.perf_counter() - started

    def _check(self, view: View, arrived: Sequence[JobView], origin: float, *, quick: bool) -> None:
        options, ledger, model = self.options, self.ledger, self.model
        now, capacity = view.now, sum(view.capacity)
        current: list[Job] | None = None
        base: LeaseInput | None = None
        reserved = options.admission_check == "reserved"
        if reserved and model.origin is None:
            model.load, model.origin = [], origin  # nothing reserved yet
        failed = False  # a job of this batch was refused (reserved check)
        for st in sorted(arrived, key=lambda s: s.index):
            if not st.job.slo:
                continue
            candidate = model.lease_job(st, now, origin)
            admitted = False
            if reserved:
                # The first deadline must lie after the first term it can hold.
                # A refused job stays in the artifact's check for the rest of
                # its batch (``process_unaccepted_jobs`` trims only its own
                # copies of the lists), where it fails again and so refuses
                # every later job of the batch (``batch_fast_check_if_packable``).
                admitted = (
                    not failed
                    and candidate is not None
                    and st.job.deadlines[0][0] > origin
                    and model.fits(candidate, origin, capacity, first=True)
                )
                failed = failed or not admitted
            elif candidate is not None and quick and model.fits(candidate, origin, capacity):
                admitted = True
                ledger.counts["admitted_quick"] += 1
            elif candidate is not None:
                if current is None or base is None:
                    current = model.guaranteed_jobs(view, origin, ledger.guaranteed)
                    # Built once per call, extended by each admission (LeaseInput.with_job).
                    base = LeaseInput(
                        tuple(current),
                        capacity,
                        options.lease_length,
                        require_all=True,
                        round_up=options.lease_round_up,
                        max_terms=options.max_terms,
                    )
                verdict = admit_jobs(
                    base,
                    candidate,
                    capacity,
                    options.lease_length,
                    round_up=options.lease_round_up,
                    max_terms=options.max_terms,
                    time_limit=options.admission_time_limit,
                    prove=options.prove,
                )
                admitted = verdict.admitted
                if verdict.status is Status.TIME_LIMIT:
                    ledger.counts["undecided"] += 1
                if admitted and verdict.schedule is not None and verdict.schedule.decision:
                    model.set_load(verdict.schedule.decision.terms, [*current, candidate], origin)
            if admitted and candidate is not None:
                ledger.guaranteed.add(st.index)
                if current is not None:
                    current.append(candidate)
                if base is not None:
                    base = base.with_job(candidate)
                ledger.counts["admitted"] += 1
                # The artifact's deadline of an admitted job: the last step's,
                # down to a term boundary (``flush_event_jobs_with_cache_solution``).
                last = st.job.deadlines[-1][0]
                length = options.lease_length
                ledger.deadline[st.index] = math.floor(last / length) * length
            else:
                ledger.counts["rejected"] += 1
                ledger.unaccepted += 1
