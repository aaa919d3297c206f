"""The Chronus artifact's term selection: its MILP's rows, their order, its frozen jobs.

Each term the artifact (``time_aware_with_lease.py``, ``flush_lease_jobs``)
writes a row per guaranteed job and reward step (``abstract_lease_list``)
and selects by its MILP (``solver.py``, ``MIPSolver.job_selection``):
:class:`RowSelection` builds those rows over the engine's view, in the
artifact's order, and solves them by
:func:`~scheduling_opt.sim.policies.chronus.artifact.cbc.select` (PuLP's
CBC binary, ``selection="artifact-cbc"``) or
:func:`~scheduling_opt.sim.policies.chronus.artifact.mip.select`
(python-mip's CBC, the artifact's build, ``selection="artifact-mip"``).
Only term 0 is scored, so CBC's layout of the later terms follows the row
order, and the artifact's admission and frozen jobs read that layout: the
order is part of the rule (:func:`list_order`).

:func:`frozen_jobs` is the artifact's cap on the MILP's rows
(``search_rows``), which the library's selection also applies.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Mapping, Sequence

from scheduling_opt.lease import LeaseDecision, LeaseInput
from scheduling_opt.model import Job
from scheduling_opt.sim.policies.chronus.artifact.cbc import Row
from scheduling_opt.sim.policies.chronus.artifact.cbc import select as select_rows
from scheduling_opt.sim.policies.chronus.artifact.mip import select as select_rows_mip
from scheduling_opt.sim.policies.chronus.artifact.queue import QueueState
from scheduling_opt.sim.policies.chronus.artifact.rules import bins
from scheduling_opt.sim.policies.chronus.ledger import Ledger, Tally
from scheduling_opt.sim.policies.chronus.options import ChronusOptions
from scheduling_opt.sim.protocol import JobView, View
from scheduling_opt.sim.workload import REWARD_SCALE

__all__ = ["RowSelection", "frozen_jobs", "list_order"]


def _trace_order(tid: str) -> tuple[int, int, str]:
    # The artifact's ids are the trace's integers; others after them, by name.
    return (0, int(tid), "") if tid.isdigit() else (1, 0, tid)


def frozen_jobs(
    view: View,
    jobs: Sequence[Job],
    cache: Mapping[int, Sequence[int]],
    search_rows: int | None,
    lease_length: float,
) -> frozenset[str]:
    """The guaranteed jobs the artifact leaves out of its selection MILP (``search_rows``).

    ``flush_lease_jobs``, its ``lease_info_collection``: the MILP has a row
    per guaranteed job and reward step (``abstract_lease_list``); beyond
    ``MAX_SEARCH_JOB`` rows (1,200 x T_l / 60 = 400 for 20-minute terms,
    :func:`~scheduling_opt.sim.policies.chronus.artifact.rules.search_rows`),
    rows are visited most GPUs first (the binned GPUs), then the latest
    window, then the job id and the step; a job that already holds a
    reservation (``cache_solution``, here ``cache``) is frozen, all its
    rows out, until as many rows as the excess are out. A frozen job runs
    in the term if its reservation holds it (``should_run_jobs``), whatever
    the MILP's term-0 objective. The library's selection re-solves every
    job (per-term capacities are not in the lease model) and then leaves a
    frozen job where the solver put it (its previous terms are the
    solver's hint): the term-0 minimisation does not move its term 0,
    :func:`~scheduling_opt.sim.policies.chronus.artifact.rules.late_layout`
    not its later terms. The artifact keeps the layout CBC chose when the
    job was last in the MILP, which no rule reproduces.

    Parameters
    ----------
    view : View
        The engine's view (the jobs' deadlines and trace ids).
    jobs : sequence of Job
        The term's lease jobs (ids: the engine's indices).
    cache : mapping of int to sequence of int
        The jobs' reserved terms from the last selection.
    search_rows : int or None
        The cap on the rows (None: no cap, nothing frozen).
    lease_length : float
        The term length.

    Returns
    -------
    frozenset of str
        The ids of the frozen jobs.

    Notes
    -----
    O(R log R) for R rows.
    """
    if search_rows is None:
        return frozenset()
    term = round(view.now / lease_length)
    rows: list[tuple[int, int, tuple[int, int, str], int, str]] = []
    for job in jobs:
        st = view.pending.get(int(job.id)) or view.running.get(int(job.id))
        if st is None:
            continue
        key = _trace_order(st.job.id)
        for vid, (t, _) in enumerate(st.job.deadlines):
            window = math.floor(t / lease_length) - term
            rows.append((-bins(st.job.gpus), -window, key, vid, job.id))
    excess = len(rows) - search_rows
    if excess <= 0:
        return frozenset()
    frozen: set[str] = set()
    for *_, j in sorted(rows, key=lambda r: (*r[:2], r[2], r[3], r[4])):
        if int(j) in cache and (excess > 0 or j in frozen):
            frozen.add(j)
            excess -= 1
    return frozenset(frozen)


def list_order(view: View, states: Mapping[str, JobView], queue: QueueState) -> list[str]:
    """The lease jobs in the order of the artifact's lists at a term boundary.

    ``abstract_lease_list`` reads ``pending_jobs + running_jobs`` after the
    release of ``flush_lease_jobs`` appended the running jobs to the
    pending ones, and an uncapped MILP keeps that order (only a capped one
    is sorted by id, in ``lease_info_collection``); CBC's layout of
    equal-value terms follows the row order. The pending list was last
    sorted by the odd-minute fill (``filling_jobs``: class, then emergence,
    ascending), stable over the 5-minute pass's order (``best_func``
    descending: the earlier submission first; the index stands for the
    older order); the running list is in start order
    (``queue.start_seq``). O(n log n).
    """

    def key(j: str) -> tuple[int, float, float, int]:
        st = states[j]
        if st.index in view.running:
            return (1, float(queue.start_seq.get(st.index, -1)), 0.0, st.index)
        return (0, queue.emergence.get(st.index, 0.0), st.job.submit, st.index)

    return sorted(states, key=key)


class RowSelection:
    """The term's selection by the artifact's own MILP and CBC, and its bookkeeping.

    Parameters
    ----------
    options : ChronusOptions
        ``selection`` (which CBC), ``search_rows``, ``cbc_nodes``,
        ``artifact_stops``, ``lease_length``.
    ledger : Ledger
        Reads the reservations (``cache``); gets the selected jobs, their
        start order, the new reservations and the counts.
    queue : QueueState
        The artifact's lists (the row order) and the term-0 objective's sign.
    tally : Tally
        The term selection's record.
    """

    def __init__(
        self, options: ChronusOptions, ledger: Ledger, queue: QueueState, tally: Tally
    ) -> None:
        self.options = options
        self.ledger = ledger
        self.queue = queue
        self.tally = tally
        #: The reward step each job's reservation was laid for (``cache_expect_vid``).
        self.cache_step: dict[int, int] = {}

    def select(
        self,
        view: View,
        inp: LeaseInput,
        remaining: Callable[[JobView, float], float],
    ) -> LeaseDecision | None:
        """Select the term's jobs by the artifact's MILP; None when CBC finds no feasible selection.

        :mod:`~scheduling_opt.sim.policies.chronus.artifact.cbc` states the
        model (``solver.py``, ``MIPSolver.job_selection``): a row per
        guaranteed job and reward step (every step, also those already
        passed), the frozen jobs (:func:`frozen_jobs`) out of it with their
        reserved terms taken off each term's GPUs, and CBC lays out every
        term, so the reservations the admission and the frozen jobs read
        are CBC's. On None the caller's library solve and greedy fallback
        decide, as the artifact falls back to its greedy
        (``MIPSolver.batch_fast_job_selection``). ``remaining(st, now)``:
        the lease's remaining work of a job. O(R W) to build the model of
        R rows and W terms, plus CBC.
        """
        options, ledger = self.options, self.ledger
        now, length = view.now, options.lease_length
        term = round(now / length)
        states: dict[str, JobView] = {}
        for job in inp.jobs:
            st = view.pending.get(int(job.id)) or view.running.get(int(job.id))
            assert st is not None  # the lease input is built from these jobs
            states[job.id] = st
        frozen = frozen_jobs(view, inp.jobs, ledger.cache, options.search_rows, length)
        ledger.counts["frozen"] += len(frozen)

        def windows_of(st: JobView) -> list[int]:
            return [math.floor(t / length) - term for t, _ in st.job.deadlines]

        capped = options.search_rows is not None and (
            sum(len(st.job.deadlines) for st in states.values()) > options.search_rows
        )
        order = (
            sorted(states, key=lambda j: _trace_order(states[j].job.id))
            if capped
            else list_order(view, states, self.queue)
        )
        rows: list[Row] = []
        width = 1
        held: dict[str, tuple[int, ...]] = {}
        for j in order:
            st = states[j]
            need = math.ceil(remaining(st, now) / length)
            windows = windows_of(st)
            width = max(width, *windows)
            if j in frozen:
                # Its reservation, less the earliest terms as its need shrank
                # (as ``flush_running_jobs`` trims a ``cache_solution``).
                cached = [k - term for k in ledger.cache[int(j)] if k >= term]
                held[j] = tuple(cached[len(cached) - min(len(cached), need) :])
                continue
            rows.extend(
                # The artifact's value list (10-8-5-2): the trace's values, which
                # our loader scales by REWARD_SCALE. The scale weighs the values
                # against the term-0 term, so it moves CBC's layout.
                Row(j, bins(st.job.gpus), need, w, float(v) / REWARD_SCALE, vid)
                for vid, (w, (_, v)) in enumerate(zip(windows, st.job.deadlines, strict=True))
            )
        if not rows:
            return None
        free = [sum(view.capacity)] * width
        for j, reserved in held.items():
            for k in reserved:
                if k < width:
                    # Binned, as ``lease_info_collection`` takes them off.
                    free[k] -= bins(states[j].job.gpus)
        started = time.perf_counter()
        minimize = self.queue.minimize_first(view)
        if options.selection == "artifact-mip":
            sel = select_rows_mip(
                rows,
                free,
                minimize_first=minimize,
                max_nodes=options.cbc_nodes,
                artifact_stops=options.artifact_stops,
            )
        else:
            sel = select_rows(rows, free, minimize_first=minimize, max_nodes=options.cbc_nodes)
        self.tally.solver_seconds += time.perf_counter() - started
        if sel is None:
            ledger.counts["selection_fallbacks"] += 1
            return None
        self.tally.record(
            sel.objective, sel.objective if sel.optimal else math.nan, optimal=sel.optimal
        )
        kept = {**sel.terms, **held}
        self.cache_step.update((int(j), step) for j, step in sel.steps.items())
        # should_run_jobs: the MILP's jobs in row order, then the frozen ones
        # in the order the cap visited them (most GPUs, latest window of the
        # cached step, id).
        in_block = list(dict.fromkeys(row.job for row in rows))
        out_block = sorted(
            held,
            key=lambda j: (
                -bins(states[j].job.gpus),
                -windows_of(states[j])[
                    min(self.cache_step.get(int(j), 0), len(states[j].job.deadlines) - 1)
                ],
                _trace_order(states[j].job.id),
            ),
        )
        ledger.select_order = [int(j) for j in (*in_block, *out_block) if 0 in kept.get(j, ())]
        ledger.selected = {int(j) for j, t in kept.items() if 0 in t}
        ledger.cache = {int(j): [term + k for k in t] for j, t in kept.items()}
        return LeaseDecision(
            {j: sel.steps.get(j) for j in states if j not in held} | dict.fromkeys(held, None),
            kept,
            sel.objective,
        )
