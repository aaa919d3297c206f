"""Chronus in the simulator: admission control, lease terms, SRTF, round-up and local-search placement.

- Admission control on arrival (§3.3.2): an arriving SLO job is guaranteed
  only if every guaranteed job and it can still meet a deadline. First the
  cheap sufficient test: the job fits, in its latest terms before its last
  deadline, into the room the current guaranteed schedule (the term's
  selection plus the jobs admitted since) leaves, O(H); otherwise
  :func:`~scheduling_opt.lease.admit_jobs` over all of them: the greedy and
  EDF, then (``admission_prove``, on in ``exact`` mode) the feasibility MILP
  within ``admission_time_limit``; not found or undecided counts as
  rejected. Terms are counted from the next term's start (the new job can
  hold no lease before it; at a term's start, from it) and the guaranteed
  jobs' remaining work is taken as of now (an over-estimate for the running
  ones), so an admission is conservative. A rejected job is unguaranteed:
  as the paper says, it joins the best-effort queue and is served by SRTF;
  its deadlines still count in the wDMR. A guaranteed job that a term's
  selection gives no deadline (the lease cannot serve it any more) is
  demoted the same way, so the guaranteed set stays one the lease can serve
  and admission keeps judging new jobs against a feasible set. A deadline
  the lease cannot reach in whole terms (a 10-minute job due 15 minutes
  after the next term starts) is a rejection: Chronus' Profiler runs such
  short jobs to completion in its profiling cluster, which is not modelled.
- Every lease term (``lease_length``, 20 minutes in the paper) the
  unfinished guaranteed jobs whose deadlines have not all passed become a
  :class:`~scheduling_opt.lease.LeaseInput` (remaining work, deadline steps
  relative to the term's start, the cluster's GPUs, each charged Eq. (6)'s
  rounded-up GPUs under Chronus placement) and a lease solver selects which
  hold the coming term: ``exact`` (HiGHS) within a per-term time budget,
  the greedy when it proves nothing in time (``chronus``); the greedy alone
  (``chronus-greedy``); the exact solver with no fallback
  (``chronus-exact``). The previous term's selection is the warm start.
  Jobs holding term 0 run this term: running jobs that are not selected
  lose their GPUs to them (best effort first, longest remaining first).
- Between terms, the GPUs left over go, at every event, to the pending jobs
  in this order: selected jobs, unselected guaranteed jobs by earliest
  deadline, then best-effort and unguaranteed jobs (and SLO jobs whose
  deadlines all passed) by shortest remaining time; these run
  opportunistically until the next term.
- Placement (§3.4, :mod:`~scheduling_opt.sim.policies.chronus.placement`):
  the jobs that fit in the free GPUs in that order are placed, the
  selected ones by round-up consolidation, the others (and a selected job
  the consolidation could not place) by Algorithm 1's local search with the
  ``model_info.json`` placement sensitivity (it may spread a job at the
  table's slower speed instead of leaving it waiting); then the simulator's
  consolidating best fit tries the jobs still pending on what is left.
  Chronus re-places best-effort jobs at every 5-minute BE lease; here a
  spread job is migrated onto its fewest servers as soon as the GPUs left
  over at an event allow it. ``placement="best-fit"`` keeps the
  simulator's default rule alone.

Variants: ``admission=False`` puts every SLO job in each term's selection
(the selection rejects what it cannot serve); ``placement="best-fit"``.
Chronus (SoCC '21) §3.3, §3.4.
"""

from __future__ import annotations

import itertools
import math
import time
from collections.abc import Mapping, Sequence

import numpy as np

from scheduling_opt.lease import (
    LeaseDecision,
    LeaseInput,
    admit_jobs,
    exact,
    greedy,
    round_up_gpus,
)
from scheduling_opt.model import Job, RewardStep
from scheduling_opt.scaling import TableModel
from scheduling_opt.sim.cluster import FreeMap, Placement
from scheduling_opt.sim.policies.chronus.artifact.cbc import Row
from scheduling_opt.sim.policies.chronus.artifact.cbc import select as select_rows
from scheduling_opt.sim.policies.chronus.artifact.mip import require_mip
from scheduling_opt.sim.policies.chronus.artifact.mip import select as select_rows_mip
from scheduling_opt.sim.policies.chronus.artifact.rules import (
    ACCEPTED,
    BEST_EFFORT,
    LOWEST,
    PASS_STEP,
    UNACCEPTED,
    Entry,
    bins,
    estimate,
    fill_key,
    late_layout,
    packs,
    pass_key,
    pool_place,
    relaxed_window,
    victim_key,
)
from scheduling_opt.sim.policies.chronus.placement import Placer
from scheduling_opt.sim.protocol import Decision, JobView, StartTerms, View
from scheduling_opt.sim.speed import bundled_table
from scheduling_opt.sim.workload import REWARD_SCALE
from scheduling_opt.solution import Solution, Status

_MODES = {"budget": "chronus", "greedy": "chronus-greedy", "exact": "chronus-exact"}


class Chronus:
    """Chronus' admission control, lease-term selection and placement over a simulated cluster.

    Parameters
    ----------
    mode : {"budget", "greedy", "exact"}
        ``budget``: exact within ``time_limit`` per term, greedy fallback;
        ``greedy``: greedy only; ``exact``: exact with no fallback (its
        best incumbent at ``time_limit``).
    lease_length : float
        Term length in the trace's unit (20 minutes).
    time_limit : float
        Solver seconds per term.
    max_terms : int
        Deadlines further than this many terms count as met at it (keeps
        the model small; the paper's horizon is the trace's).
    admission : bool
        Admission control on arrival (§3.3.2); False: every SLO job enters
        each term's selection.
    admission_time_limit : float
        Seconds for one admission's feasibility MILP.
    admission_prove : bool or None
        Run the feasibility MILP when the greedy and EDF find no schedule
        (None: only in ``exact`` mode; otherwise such a job is rejected, the
        conservative answer, and the run stays deterministic and fast).
    placement : {"chronus", "best-fit"}
        Round-up consolidation + local search (§3.4), or the simulator's
        default consolidating best fit.
    search_space : int
        Local search's |S| per call.
    placement_time_limit : float
        Seconds per local-search call (its best combination so far past it).
    placement_table : bool
        Use the bundled ``model_info.json`` sensitivity in the local search
        (False: every span is worth its GPUs).

    Examples
    --------
    >>> from scheduling_opt.sim import ClusterSpec, SimJob, Workload, simulate
    >>> w = Workload.of([SimJob("a", 0.0, 8, 30.0, deadlines=((40.0, 100.0),)),
    ...                  SimJob("b", 0.0, 8, 10.0)], "demo")
    >>> policy = Chronus(mode="greedy")
    >>> out = simulate(w, ClusterSpec.uniform(1, 8), policy)
    >>> out.end  # the SLO job holds the first terms, the best-effort job waits
    (30.0, 40.0)
    >>> policy.stats()["admitted"], policy.stats()["rejected"]
    (1.0, 0.0)

    References
    ----------
    Chronus (SoCC '21) §3.3.2-§3.3.5, §3.4.
    """

    def __init__(
        self,
        *,
        mode: str = "budget",
        lease_length: float = 20.0,
        time_limit: float = 10.0,
        max_terms: int | None = 72,
        admission: bool = True,
        admission_time_limit: float = 1.0,
        admission_prove: bool | None = None,
        placement: str = "chronus",
        search_space: int = 1000,
        placement_time_limit: float = 0.5,
        placement_table: bool = True,
        estimate: str = "oracle",
        admission_check: str = "resolve",
        term_release: str = "selected",
        selection: str = "reward",
        queue: str = "chronus",
        force_short: bool = False,
        fill_overhead: bool = True,
        start_credit: bool = False,
        cache_layout: str = "selected",
        search_rows: int | None = None,
        cbc_nodes: int | None = None,
        artifact_stops: bool = False,
    ) -> None:
        if mode not in _MODES:
            raise ValueError(f"mode must be budget, greedy or exact, got {mode!r}")
        for name, value, allowed in (
            ("placement", placement, ("chronus", "best-fit", "pool")),
            ("estimate", estimate, ("oracle", "artifact")),
            ("admission_check", admission_check, ("resolve", "reserved", "batch")),
            ("term_release", term_release, ("selected", "all")),
            ("selection", selection, ("reward", "artifact", "artifact-cbc", "artifact-mip")),
            ("queue", queue, ("chronus", "artifact")),
            ("cache_layout", cache_layout, ("selected", "late")),
        ):
            if value not in allowed:
                raise ValueError(f"{name} must be one of {', '.join(allowed)}, got {value!r}")
        if max_terms is not None and (not isinstance(max_terms, int) or max_terms < 1):
            raise ValueError(f"max_terms must be an int >= 1 or None, got {max_terms!r}")
        if search_rows is not None and (
            isinstance(search_rows, bool) or not isinstance(search_rows, int) or search_rows < 1
        ):
            raise ValueError(f"search_rows must be an int >= 1 or None, got {search_rows!r}")
        if cbc_nodes is not None and (
            isinstance(cbc_nodes, bool) or not isinstance(cbc_nodes, int) or cbc_nodes < 1
        ):
            raise ValueError(f"cbc_nodes must be an int >= 1 or None, got {cbc_nodes!r}")
        if not isinstance(start_credit, bool):
            raise ValueError(f"start_credit must be True or False, got {start_credit!r}")
        if not isinstance(artifact_stops, bool):
            raise ValueError(f"artifact_stops must be True or False, got {artifact_stops!r}")
        if selection == "artifact-mip":
            require_mip()  # at construction, not at the first term deep in a run
        self.name = (
            _MODES[mode]
            + ("" if admission else "-no-admission")
            + {"chronus": "", "best-fit": "-best-fit", "pool": "-pool"}[placement]
        )
        self.mode = mode
        self.lease_length = lease_length
        #: Chronus decides once a lease term while jobs are left (sim/limits.py counts them).
        self.period = lease_length
        self.time_limit = time_limit
        self.max_terms = max_terms
        self.admission = admission
        self.admission_time_limit = admission_time_limit
        self.admission_prove = mode == "exact" if admission_prove is None else admission_prove
        self.placement = placement
        self.round_up = placement == "chronus"  # Eq. (6) promises the consolidation
        self.search_space = search_space
        self.placement_time_limit = placement_time_limit
        self.table: TableModel | None = bundled_table() if placement_table else None
        self.estimate = estimate
        self.admission_check = admission_check
        self.term_release = term_release
        self.selection = selection
        self.queue = queue
        self.force_short = force_short
        self.fill_overhead = fill_overhead
        self.start_credit = start_credit
        self.cache_layout = cache_layout
        self.search_rows = search_rows
        self.cbc_nodes = cbc_nodes
        self.artifact_stops = artifact_stops
        # admission_check="batch": each guaranteed job's reserved terms (absolute
        # term indices) from the last selection, the artifact's cache_solution.
        self.cache: dict[int, list[int]] = {}
        # The artifact's lists (queue="artifact"): each running job's place in
        # its running list (start order), the reward step its cache was laid
        # for (cache_expect_vid) and the order the last selection starts
        # its jobs in (should_run_jobs); they order the MILP's rows.
        self.start_seq: dict[int, int] = {}
        self.cache_step: dict[int, int] = {}
        self.select_order: list[int] = []
        self.start_count = 0
        # The lease charges Eq. (6)'s round-up under Chronus placement, the
        # artifact's bins under its estimate (the job's GPUs are then binned).
        self.lease_round_up = self.round_up and estimate == "oracle"
        self.est: dict[int, int] = {}  # the artifact's estimate per job (on first need)
        # Per job its last lease job (origin, remaining, job or None, steps from
        # origin): between terms every admission check rebuilds the same steps.
        self.lease_jobs: dict[int, tuple[float, float, Job | None, tuple[RewardStep, ...]]] = {}
        self.deadline: dict[int, float] = {}  # absolute deadline of the artifact's checks
        # The artifact's queue (queue="artifact"): its classes beyond guaranteed/not.
        self.lowest: set[int] = set()
        self.overran: set[int] = set()
        self.forced: set[int] = set()  # started by force_short this term
        self.force_accepted: set[int] = set()
        self.holding: set[int] = set()  # selected at the term start (they hold its lease)
        self.emergence: dict[int, float] = {}
        self.arriving: list[JobView] = []
        # The artifact's number_of_accepted (lines 1013-1017, 1398-1399): the
        # unguaranteed jobs at the last selection's end, plus the SLO arrivals
        # refused since; its term-0 objective minimizes while it is > 0.
        self.unaccepted = 0
        self.last_minute = -math.inf
        self.next_term = -math.inf
        self.selected: set[int] = set()
        self.guaranteed: set[int] = set()
        self.spread: set[int] = set()  # running jobs local search spread
        self.last: LeaseDecision | None = None
        self.solver_seconds = 0.0
        self.terms = 0
        self.fallbacks = 0
        self.proven = 0
        self.rewards: list[tuple[float, float]] = []  # (objective, bound) per term
        self.counts = {
            "admitted": 0,
            "rejected": 0,
            "undecided": 0,
            "admitted_quick": 0,
            "demoted": 0,
            "placement_calls": 0,
            "spread_starts": 0,
            "consolidated_moves": 0,
            "lowest": 0,
            "overran": 0,
            "forced": 0,
            "late_terms": 0,
            "selection_fallbacks": 0,
            "frozen": 0,
        }
        self.load: list[int] = []  # GPUs per term the guaranteed schedule holds
        self.load_origin: float | None = None
        self.admission_seconds = 0.0
        self.placement_seconds = 0.0
        self.placement_max = 0.0
        self.placer = Placer()

    # -- lease terms --------------------------------------------------------

    def _charged(self, gpus: int) -> int:
        if self.estimate == "artifact":
            return bins(gpus)
        return round_up_gpus(gpus) if self.round_up else gpus

    def _cap(self, terms: int) -> int:
        return terms if self.max_terms is None else min(terms, self.max_terms)

    def _estimate(self, st: JobView) -> int:
        """The artifact's running-time estimate of ``st`` (computed once per job)."""
        est = self.est.get(st.index)
        if est is None:
            est = self.est[st.index] = estimate(st.job.work, st.job.gpus, self.lease_length)
        return est

    def _remaining(self, st: JobView, now: float) -> float:
        """The lease's remaining work: the trace's (an oracle), or the estimate less the time run."""
        if self.estimate == "artifact":
            return max(self._estimate(st) - st.attained(now), 1e-9)
        return max(st.remaining(now), 1e-9)

    def _lease_job(self, st: JobView, now: float, origin: float) -> Job | None:
        """The job in the lease model from ``origin``, or None when no deadline is reachable."""
        remaining = self._remaining(st, now)
        cached = self.lease_jobs.get(st.index)
        if cached is not None and cached[0] == origin:
            if cached[1] == remaining:
                return cached[2]
            steps = cached[3]
        else:
            # Trusted: the SimJob was validated; steps after origin are finite and > 0.
            steps = tuple(
                RewardStep._trusted(t - origin, v) for t, v in st.job.deadlines if t > origin
            )
        need = math.ceil(remaining / self.lease_length)
        if not steps or self._cap(math.floor(steps[-1].time / self.lease_length)) < need:
            job = None
        else:
            gpus = bins(st.job.gpus) if self.estimate == "artifact" else st.job.gpus
            job = Job._trusted(str(st.index), gpus, remaining, steps)
        self.lease_jobs[st.index] = (origin, remaining, job, steps)
        return job

    def _admit(self, view: View, origin: float, *, quick: bool) -> None:
        """Admission control of the SLO jobs that arrived (§3.3.2), in arrival order.

        ``quick``: first try the candidate in the room the current guaranteed
        schedule (``self.load``) leaves, O(H); only when it does not fit
        there, the full check over every guaranteed job.
        """
        self._admit_jobs(view, view.arrived, origin, quick=quick)

    def _admit_jobs(
        self, view: View, arrived: Sequence[JobView], origin: float, *, quick: bool
    ) -> None:
        started = time.perf_counter()
        now, capacity = view.now, sum(view.capacity)
        current: list[Job] | None = None
        base: LeaseInput | None = None
        if self.admission_check == "batch":
            self._admit_batch(view, arrived, origin)
            self.admission_seconds += time.perf_counter() - started
            return
        reserved = self.admission_check == "reserved"
        if reserved and self.load_origin is None:
            self.load, self.load_origin = [], origin  # nothing reserved yet
        failed = False  # a job of this batch was refused (reserved check)
        for st in sorted(arrived, key=lambda s: s.index):
            if not st.job.slo:
                continue
            candidate = self._lease_job(st, now, origin)
            admitted = False
            if reserved:
                # The first deadline must lie after the first term it can hold.
                # A refused job stays in the artifact's check for the rest of its
                # batch (process_unaccepted_jobs trims only its own copies of the
                # lists, lines 1251-1258), where it fails again and so refuses
                # every later job of the batch (solver.py 291).
                admitted = (
                    not failed
                    and candidate is not None
                    and st.job.deadlines[0][0] > origin
                    and self._fits(candidate, origin, capacity, first=True)
                )
                failed = failed or not admitted
            elif candidate is not None and quick and self._fits(candidate, origin, capacity):
                admitted = True
                self.counts["admitted_quick"] += 1
            elif candidate is not None:
                if current is None or base is None:
                    current = self._guaranteed_jobs(view, origin)
                    # Built once per call, extended by each admission (LeaseInput.with_job).
                    base = LeaseInput(
                        tuple(current),
                        capacity,
                        self.lease_length,
                        require_all=True,
                        round_up=self.lease_round_up,
                        max_terms=self.max_terms,
                    )
                verdict = admit_jobs(
                    base,
                    candidate,
                    capacity,
                    self.lease_length,
                    round_up=self.lease_round_up,
                    max_terms=self.max_terms,
                    time_limit=self.admission_time_limit,
                    prove=self.admission_prove,
                )
                admitted = verdict.admitted
                if verdict.status is Status.TIME_LIMIT:
                    self.counts["undecided"] += 1
                if admitted and verdict.schedule is not None and verdict.schedule.decision:
                    self._set_load(verdict.schedule.decision.terms, [*current, candidate], origin)
            if admitted and candidate is not None:
                self.guaranteed.add(st.index)
                if current is not None:
                    current.append(candidate)
                if base is not None:
                    base = base.with_job(candidate)
                self.counts["admitted"] += 1
                # The artifact's deadline of an admitted job: the last step's,
                # down to a term boundary (lines 1367-1368).
                last = st.job.deadlines[-1][0]
                self.deadline[st.index] = math.floor(last / self.lease_length) * self.lease_length
            else:
                self.counts["rejected"] += 1
                self.unaccepted += 1
        self.admission_seconds += time.perf_counter() - started

    def _admit_batch(self, view: View, arrived: Sequence[JobView], origin: float) -> None:
        """The artifact's admission of one batch of arrivals (``admission_check="batch"``).

        ``flush_event_jobs_with_cache_solution`` (lines 1261-1397): the
        reservations of the guaranteed jobs the last selection placed (their
        ``cache_solution``: its terms after the current one, less the
        earliest as the job's remaining estimate shrinks, flush_running_jobs
        421-434) are taken off each term; the guaranteed jobs admitted since
        then, and the batch's jobs before this one, are packed again with it
        by :func:`~scheduling_opt.sim.policies.chronus.artifact.rules.packs`, each
        at its first deadline; it is admitted when all fit (``solver.py``
        262-293). A refused job stays in the rest of the batch's packing
        (``process_unaccepted_jobs`` trims only its own copies of the
        lists, 1251-1258): at its first deadline, or, for a one-step job,
        at the window the binary search leaves (1219-1249). O(B E (log E +
        W)) for B arrivals, E packed jobs and windows of W terms.
        """
        length, now = self.lease_length, view.now
        capacity = sum(view.capacity)
        first = round(origin / length)  # the next term: window position 0
        free: list[int] = []
        entries: list[Entry] = []
        horizon = 0
        for i in sorted(self.guaranteed):
            st = view.pending.get(i) or view.running.get(i)
            if st is None:
                continue
            need = max(math.ceil((self._estimate(st) - st.attained(now)) / length), 0)
            horizon = max(horizon, math.floor(st.job.deadlines[-1][0] / length) - first)
            terms = self.cache.get(i)
            if terms is None:
                if need >= 1:
                    window = math.floor(st.job.deadlines[0][0] / length) - first
                    entries.append((bins(st.job.gpus), need, window))
                continue
            held = [t - first for t in terms if t >= first]
            for k in held[len(held) - min(len(held), need) :]:
                if k >= len(free):
                    free.extend([capacity] * (k + 1 - len(free)))
                free[k] -= st.job.gpus  # the cache counts the job's own GPUs (line 743)
        for st in sorted(arrived, key=lambda s: s.index):
            if not st.job.slo:
                continue
            gpus, need = bins(st.job.gpus), math.ceil(self._estimate(st) / length)
            window = math.floor(st.job.deadlines[0][0] / length) - first
            last = math.floor(st.job.deadlines[-1][0] / length) - first
            entry = (gpus, need, window)
            if 1 <= need <= last and packs([*entries, entry], free, capacity):
                self.guaranteed.add(st.index)
                self.counts["admitted"] += 1
                # The artifact's deadline of an admitted job: the last step's,
                # down to a term boundary (lines 1367-1368).
                self.deadline[st.index] = (first + last) * length
            else:
                self.counts["rejected"] += 1
                self.unaccepted += 1
                if len(st.job.deadlines) == 1:
                    high = max(horizon, window, *(w for _, _, w in entries)) + need + 1
                    entry = (gpus, need, relaxed_window([*entries, entry], free, capacity, high))
            entries.append(entry)
            horizon = max(horizon, last, entry[2])

    def _guaranteed_jobs(self, view: View, origin: float) -> list[Job]:
        out: list[Job] = []
        for st in sorted((*view.pending.values(), *view.running.values()), key=lambda s: s.index):
            if st.index in self.guaranteed:
                job = self._lease_job(st, view.now, origin)
                if job is not None:
                    out.append(job)
        return out

    def _set_load(
        self, terms: Mapping[str, Sequence[int]], jobs: Sequence[Job], origin: float
    ) -> None:
        """The GPUs per term that a schedule of the guaranteed jobs holds, from ``origin``."""
        gpus = {job.id: self._lease_charge(job) for job in jobs}
        size = self.max_terms + 2 if self.max_terms is not None else 2
        # One bincount over every held term (terms >= 0; exact: integer sums).
        counts = [len(held) for held in terms.values()]
        flat = np.fromiter(itertools.chain.from_iterable(terms.values()), np.int64, sum(counts))
        weights = np.repeat(np.array([gpus[j] for j in terms], dtype=np.float64), counts)
        load = np.bincount(flat, weights, minlength=size).astype(np.int64).tolist()
        self.load, self.load_origin = load, origin

    def _lease_charge(self, job: Job) -> int:
        """GPUs the lease charges a lease job (its GPUs are already binned under the estimate)."""
        return round_up_gpus(job.max_gpus) if self.lease_round_up else job.max_gpus

    def _fits(self, job: Job, origin: float, capacity: int, *, first: bool = False) -> bool:
        """Add ``job`` to the guaranteed schedule in the latest terms with room before its last deadline.

        The guaranteed schedule plus these terms is a schedule meeting a
        deadline of every job: admission proven without a new search.
        ``first``: before its first deadline (the artifact's check).
        """
        if self.load_origin is None:
            return False
        shift = round((origin - self.load_origin) / self.lease_length)
        need = math.ceil(job.duration / self.lease_length)
        step = job.deadlines[0] if first else job.deadlines[-1]
        due = self._cap(math.floor(step.time / self.lease_length))
        gpus = self._lease_charge(job)
        load = self.load
        if shift + due > len(load):
            load.extend([0] * (shift + due - len(load)))
        picked = [shift + k for k in range(due - 1, -1, -1) if load[shift + k] + gpus <= capacity][
            :need
        ]
        if len(picked) < need:
            return False
        for k in picked:
            load[k] += gpus
        return True

    def _select(self, view: View) -> None:
        now = view.now
        self.select_order = []
        jobs = []
        for st in sorted((*view.pending.values(), *view.running.values()), key=lambda s: s.index):
            if not st.job.slo or (self.admission and st.index not in self.guaranteed):
                continue
            if self.admission:
                job = self._lease_job(st, now, now)
                if job is None:
                    # Its deadlines are out of reach: served as best effort from now on.
                    self.guaranteed.discard(st.index)
                    self.counts["demoted"] += 1
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
        if not jobs:
            self.selected = set()
            self.last = None
            self._set_load({}, [], now)
            self.cache = {}
            return
        inp = LeaseInput(
            tuple(jobs),
            capacity=sum(view.capacity),
            lease_length=self.lease_length,
            round_up=self.lease_round_up,
            max_terms=self.max_terms,
            require_all=self.selection != "reward",
        )
        if self.selection in ("artifact-cbc", "artifact-mip") and self._select_cbc(view, inp):
            return
        # hint_terms(self.last) without re-reading every term of our own decision.
        hint = (
            {j: [k - 1 for k in held if k >= 1] for j, held in self.last.terms.items()}
            if self.last is not None
            else None
        )
        started = time.perf_counter()
        sol: Solution[LeaseDecision] | None = None
        if self.mode == "greedy":
            sol = greedy(inp, hint=hint)
        else:
            sol = exact(inp, time_limit=self.time_limit, hint=hint)
            if self.mode == "budget" and (sol.decision is None or sol.status is not Status.OPTIMAL):
                fallback = greedy(inp, hint=hint)
                self.fallbacks += 1
                if sol.decision is None or (fallback.objective or 0.0) > (sol.objective or 0.0):
                    sol = fallback
        if sol.decision is None and inp.require_all:
            # Not every guaranteed job can keep a level: the artifact falls
            # back to a greedy selection (lines 912-957); ours keeps the most.
            self.counts["selection_fallbacks"] += 1
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
        self.solver_seconds += time.perf_counter() - started
        if sol.status is Status.OPTIMAL:
            self.proven += 1
        self.terms += 1
        decision = sol.decision
        self.last = decision
        self.rewards.append(
            (sol.objective or 0.0, sol.bound if sol.bound is not None else math.nan)
        )
        if decision is None:
            self.selected = set()
            self.cache = {}
            return
        kept = {j: t for j, t in decision.terms.items() if decision.levels[j] is not None}
        frozen = self._frozen(view, jobs) if self.search_rows is not None else frozenset()
        self.counts["frozen"] += len(frozen)
        if self.selection == "artifact" and self._minimize_first(view):
            kept = self._late(inp, decision, kept, frozen)
        self.selected = {int(j) for j, t in kept.items() if t and t[0] == 0}
        if self.admission_check == "batch":
            term = round(now / self.lease_length)
            laid = kept
            if self.cache_layout == "late":
                info = {job.id: job for job in inp.lease_jobs}
                due = {
                    j: next(lv.due for lv in info[j].levels if lv.index == decision.levels[j])
                    for j in kept
                }
                laid = late_layout(
                    kept, {j: info[j].gpus for j in kept}, due, inp.capacity, keep=frozen
                )
            self.cache = {int(j): [term + k for k in t] for j, t in laid.items()}
        if self.admission:
            for job_id, level in decision.levels.items():
                if level is None:
                    self.guaranteed.discard(int(job_id))
                    self.counts["demoted"] += 1
            self._set_load(kept, jobs, now)

    def _select_cbc(self, view: View, inp: LeaseInput) -> bool:
        """The term's selection by the artifact's own MILP and CBC (``selection="artifact-cbc"``,
        or python-mip's CBC, the artifact's build, under ``selection="artifact-mip"``).

        :mod:`~scheduling_opt.sim.policies.chronus.artifact.cbc` writes the model as
        ``solver.py`` 347-424 does: a row per guaranteed job and reward step
        (every step, also those already passed), the frozen jobs
        (``search_rows``) out of it with their reserved terms taken off each
        term's GPUs, and CBC lays out every term, so the reservations the
        admission and the frozen jobs read are CBC's. False when CBC finds no
        feasible selection: the caller's library solve and greedy fallback
        then decide, as the artifact falls back to its greedy (890-957).
        O(R W) to build the model of R rows and W terms, plus CBC.
        """
        now, length = view.now, self.lease_length
        term = round(now / length)
        states: dict[str, JobView] = {}
        for job in inp.jobs:
            st = view.pending.get(int(job.id)) or view.running.get(int(job.id))
            assert st is not None  # the lease input is built from these jobs
            states[job.id] = st
        frozen = self._frozen(view, inp.jobs) if self.search_rows is not None else frozenset()
        self.counts["frozen"] += len(frozen)

        def order(j: str) -> tuple[int, int, str]:
            # The artifact's ids are the trace's integers; others after them, by name.
            tid = states[j].job.id
            return (0, int(tid), "") if tid.isdigit() else (1, 0, tid)

        def windows_of(st: JobView) -> list[int]:
            return [math.floor(t / length) - term for t, _ in st.job.deadlines]

        capped = self.search_rows is not None and (
            sum(len(st.job.deadlines) for st in states.values()) > self.search_rows
        )
        rows: list[Row] = []
        width = 1
        held: dict[str, tuple[int, ...]] = {}
        for j in sorted(states, key=order) if capped else self._list_order(view, states):
            st = states[j]
            need = math.ceil(self._remaining(st, now) / length)
            windows = windows_of(st)
            width = max(width, *windows)
            if j in frozen:
                # Its reservation, less the earliest terms as its need shrank (421-434).
                cached = [k - term for k in self.cache[int(j)] if k >= term]
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
            return False
        free = [sum(view.capacity)] * width
        for j, reserved in held.items():
            for k in reserved:
                if k < width:
                    free[k] -= bins(states[j].job.gpus)  # binned, as line 852 takes them off
        started = time.perf_counter()
        minimize = self._minimize_first(view)
        if self.selection == "artifact-mip":
            sel = select_rows_mip(
                rows,
                free,
                minimize_first=minimize,
                max_nodes=self.cbc_nodes,
                artifact_stops=self.artifact_stops,
            )
        else:
            sel = select_rows(rows, free, minimize_first=minimize, max_nodes=self.cbc_nodes)
        self.solver_seconds += time.perf_counter() - started
        if sel is None:
            self.counts["selection_fallbacks"] += 1
            return False
        self.terms += 1
        self.proven += sel.optimal
        self.rewards.append((sel.objective, sel.objective if sel.optimal else math.nan))
        kept = {**sel.terms, **held}
        self.cache_step.update((int(j), step) for j, step in sel.steps.items())
        # should_run_jobs (906-911): the MILP's jobs in row order, then the
        # frozen ones in the order the cap visited them (most GPUs, latest
        # window of the cached step, id).
        in_block = list(dict.fromkeys(row.job for row in rows))
        out_block = sorted(
            held,
            key=lambda j: (
                -bins(states[j].job.gpus),
                -windows_of(states[j])[
                    min(self.cache_step.get(int(j), 0), len(states[j].job.deadlines) - 1)
                ],
                order(j),
            ),
        )
        self.select_order = [int(j) for j in (*in_block, *out_block) if 0 in kept.get(j, ())]
        self.last = LeaseDecision(
            {j: sel.steps.get(j) for j in states if j not in held} | dict.fromkeys(held, None),
            kept,
            sel.objective,
        )
        self.selected = {int(j) for j, t in kept.items() if 0 in t}
        self.cache = {int(j): [term + k for k in t] for j, t in kept.items()}
        if self.admission:
            self._set_load(kept, inp.jobs, now)
        return True

    def _list_order(self, view: View, states: Mapping[str, JobView]) -> list[str]:
        """The lease jobs in the order of the artifact's lists at a term boundary.

        ``abstract_lease_list`` (620-665) reads ``pending_jobs +
        running_jobs`` after the release (789-810) appended the running jobs
        to the pending ones, and an uncapped MILP keeps that order (only a
        capped one is sorted by id, 867-877); CBC's layout of equal-value
        terms follows the row order. The pending list was last sorted by
        the odd-minute fill (class, then emergence, ascending, 1141),
        stable over the 5-minute pass's order (``best_func`` descending:
        the earlier submission first; the index stands for the older
        order); the running list is in start order (:attr:`start_seq`).
        O(n log n).
        """

        def key(j: str) -> tuple[int, float, float, int]:
            st = states[j]
            if st.index in view.running:
                return (1, float(self.start_seq.get(st.index, -1)), 0.0, st.index)
            return (0, self.emergence.get(st.index, 0.0), st.job.submit, st.index)

        return sorted(states, key=key)

    def _minimize_first(self, view: View) -> bool:
        """Whether the artifact's selection minimizes the first term's GPUs (lines 769-772).

        Under ``queue="artifact"``, its rule: an unguaranteed job was left at
        the last selection's end or an SLO arrival was refused since
        (:attr:`unaccepted`, :meth:`_count_unaccepted`); jobs that arrived
        since the last 5-minute pass are not in its queue and do not count.
        Under our queue, an unguaranteed SLO job waits or runs now.
        """
        if self.queue == "artifact":
            return self.unaccepted > 0
        return self._unguaranteed_wait(view)

    def _count_unaccepted(self, view: View) -> None:
        """The artifact's recount at a selection's end (lines 1013-1017): jobs of its unguaranteed class."""
        unseen = {st.index for st in self.arriving}
        self.unaccepted = sum(
            1
            for jobs in (view.pending, view.running)
            for i, st in jobs.items()
            if i not in unseen and self._cls(i, st) == UNACCEPTED
        )

    def _unguaranteed_wait(self, view: View) -> bool:
        """Whether an unguaranteed SLO job waits or runs (the artifact then minimizes term 0)."""
        return any(
            st.job.slo and self._cls(i, st) == UNACCEPTED
            for jobs in (view.pending, view.running)
            for i, st in jobs.items()
        )

    def _frozen(self, view: View, jobs: Sequence[Job]) -> frozenset[str]:
        """The guaranteed jobs the artifact leaves out of its selection MILP (``search_rows``).

        ``lease_info_collection`` (lines 828-881, 906-911): the MILP has a row per
        guaranteed job and reward step (``abstract_lease_list``, 620-665);
        beyond ``MAX_SEARCH_JOB`` rows (1,200 x T_l / 60 = 400 for 20-minute
        terms, lines 11 and 146-147), rows are visited most GPUs first (the
        binned GPUs), then the latest window, then the job id and the step;
        a job that already holds a reservation (``cache_solution``, here
        ``self.cache``) is frozen, all its rows out, until as many rows as
        the excess are out. A frozen job runs in the term if its reservation
        holds it (906-911), whatever the MILP's term-0 objective. Ours
        re-solves every job (per-term capacities are not in the lease
        model) and then leaves a frozen job where the solver put it (its
        previous terms are the solver's hint): :meth:`_late` does not move
        its term 0, :func:`late_layout` not its later terms. The artifact
        keeps the layout CBC chose when the job was last in the MILP, which
        no rule reproduces. O(R log R) for R rows.
        """
        assert self.search_rows is not None
        length = self.lease_length
        term = round(view.now / length)
        rows: list[tuple[int, int, tuple[int, int, str], int, str]] = []
        for job in jobs:
            st = view.pending.get(int(job.id)) or view.running.get(int(job.id))
            if st is None:
                continue
            tid = st.job.id
            # The artifact's ids are the trace's integers; others after them, by name.
            key = (0, int(tid), "") if tid.isdigit() else (1, 0, tid)
            for vid, (t, _) in enumerate(st.job.deadlines):
                window = math.floor(t / length) - term
                rows.append((-bins(st.job.gpus), -window, key, vid, job.id))
        excess = len(rows) - self.search_rows
        if excess <= 0:
            return frozenset()
        frozen: set[str] = set()
        for *_, j in sorted(rows, key=lambda r: (*r[:2], r[2], r[3], r[4])):
            if int(j) in self.cache and (excess > 0 or j in frozen):
                frozen.add(j)
                excess -= 1
        return frozenset(frozen)

    def _late(
        self,
        inp: LeaseInput,
        decision: LeaseDecision,
        terms: Mapping[str, tuple[int, ...]],
        frozen: frozenset[str] = frozenset(),
    ) -> dict[str, tuple[int, ...]]:
        """The selection with the fewest GPUs in term 0 that keeps every level (a greedy).

        The artifact's MILP minimizes the first term's GPUs while
        unguaranteed SLO jobs wait (lines 769-772, ``solver.py`` 372-374):
        here each job holding term 0, latest deadline first, moves that term
        to the latest term before its deadline with room; the ``frozen``
        jobs (:meth:`_frozen`, not in the artifact's MILP) stay. O(N H).
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
                    self.counts["late_terms"] += 1
                    break
        return {j: tuple(t) for j, t in held.items()}

    def stats(self) -> dict[str, float]:
        """Counters of the run: terms, solver, admission and placement seconds and counts."""
        bounds = [b for _, b in self.rewards if not math.isnan(b)]
        out = {
            "terms": float(self.terms),
            "solver_seconds": self.solver_seconds,
            "proven_terms": float(self.proven),
            "fallbacks": float(self.fallbacks),
            "selected_reward": sum(r for r, _ in self.rewards),
            "reward_bound": sum(bounds) if len(bounds) == len(self.rewards) else math.nan,
            "admission_seconds": self.admission_seconds,
            "placement_seconds": self.placement_seconds,
            "placement_max_seconds": self.placement_max,
            "placement_stopped": float(self.placer.stopped),
        }
        out.update({k: float(v) for k, v in self.counts.items()})
        return out

    # -- scheduling ---------------------------------------------------------

    def _priority(self, st: JobView, now: float) -> tuple[float, ...]:
        if st.index in self.selected:
            return (0.0, st.job.first_deadline, float(st.index))
        guaranteed = not self.admission or st.index in self.guaranteed
        if guaranteed and st.job.deadlines and st.job.deadlines[-1][0] > now:
            return (1.0, st.job.first_deadline, float(st.index))
        return (2.0, st.remaining(now), float(st.index))

    def decide(self, view: View) -> Decision:
        if self.queue == "artifact":
            return self._decide_artifact(view)
        now = view.now
        boundary = now >= self.next_term - 1e-9
        if self.admission and view.arrived:
            # At a term's start the new jobs join this term's selection; between
            # terms they can hold a lease from the next term on.
            self._admit(view, now if boundary else self.next_term, quick=not boundary)
        preempt: list[int] = []
        plan = view.plan()
        if boundary:
            self._select(view)
            self.next_term = now + self.lease_length
            # Selected jobs that wait get GPUs from unselected running jobs.
            need = (
                sum(
                    self._charged(st.job.gpus)
                    for i, st in view.pending.items()
                    if i in self.selected
                )
                - view.free_total
            )
            if self.term_release == "all":
                # Every running job the term does not hold is released (the
                # artifact's lines 792-816); the next call restarts them by priority.
                preempt = [i for i in view.running if i not in self.selected]
            elif need > 0:
                victims = sorted(
                    (st for i, st in view.running.items() if i not in self.selected),
                    key=lambda st: (st.job.slo, -st.remaining(now), -st.index),
                )
                for st in victims:
                    if need <= 0:
                        break
                    preempt.append(st.index)
                    plan.give(st.placement)
                    need -= st.job.gpus
        if preempt:
            # The engine calls again at once: the starts go on the freed GPUs then.
            return Decision(preempt=tuple(preempt), wake_at=None)
        order = sorted(view.pending.values(), key=lambda st: self._priority(st, now))
        starts = self._place(plan, order) if self.placement == "chronus" else []
        placed = {i for i, _ in starts}
        for st in order:
            if plan.total_free == 0:
                break
            if st.index in placed:
                continue
            placement = self._place_one(plan, st.job.gpus)
            if placement is not None:
                plan.take(placement)
                starts.append((st.index, placement))
        moves = self._consolidate(view, plan, {i for i, _ in starts}) if self.spread else ()
        wake = self.next_term if (view.pending or view.running) else None
        return Decision(starts=tuple(starts), resize=moves, wake_at=wake)

    def _place_one(self, plan: FreeMap, gpus: int) -> Placement | None:
        """The simulator's default placement, or any free GPUs under ``placement="pool"``."""
        return pool_place(plan, gpus) if self.placement == "pool" else plan.place(gpus)

    # -- the artifact's queue (queue="artifact") ------------------------------

    def _cls(self, index: int, st: JobView) -> int:
        """The artifact's queue class of a job (``queue_priority``, lines 24-27)."""
        if index in self.lowest:
            return LOWEST
        if index in self.overran:
            return UNACCEPTED
        if not st.job.slo:
            return BEST_EFFORT
        if index in self.guaranteed or index in self.force_accepted:
            return ACCEPTED
        return UNACCEPTED

    def _due(self, index: int, st: JobView) -> float:
        """The deadline the artifact checks: an admitted job's last step down to a term, else the first."""
        got = self.deadline.get(index)
        return got if got is not None else st.job.deadlines[0][0]

    def _emergence(self, index: int, st: JobView, now: float) -> float:
        """The artifact's urgency (lines 494-497): minus remaining estimate or slack, times GPUs."""
        cls = self._cls(index, st)
        est = self._estimate(st)
        done = st.attained(now)
        if cls in (BEST_EFFORT, UNACCEPTED):
            return -(est - done) * st.job.gpus
        return -(self._due(index, st) - now - est + done) * st.job.gpus

    def _demote(self, index: int, st: JobView, now: float) -> None:
        """An SLO job that cannot meet its deadline even if run now joins the lowest class.

        By the trace's remaining duration (lines 487-488, 528-529).
        """
        late = st.job.slo and self._due(index, st) < now + st.job.work - st.attained(now)
        if late and index not in self.lowest:
            self.lowest.add(index)
            self.guaranteed.discard(index)
            self.force_accepted.discard(index)
            self.counts["lowest"] += 1

    def _decide_artifact(self, view: View) -> Decision:
        """The artifact's minute loop (lines 1158-1211) over the engine's view.

        At whole minutes only: at a term boundary (multiples of T_l) the
        selection and the release; every 5 minutes the arrivals' admission
        and the pending pass; every odd minute the fill. Between minutes,
        and at a second call in the same minute (the engine calls again
        after preemptions), nothing: a timer wakes the policy at the next
        minute while jobs wait.
        """
        now = view.now
        self.arriving.extend(view.arrived)
        minute = math.floor(now + 1e-9)
        waiting = bool(view.pending or view.running or self.arriving)
        if abs(now - minute) > 1e-9 or minute == self.last_minute:
            return Decision(wake_at=minute + 1 if waiting else None)
        self.last_minute = minute
        length = self.lease_length
        plan = view.plan()
        preempt: list[int] = []
        starts: list[tuple[int, Placement]] = []
        # Jobs submitted since the last 5-minute pass are not in its queue yet.
        unseen = {st.index for st in self.arriving}
        pending = {i: st for i, st in view.pending.items() if i not in unseen}
        running: dict[int, JobView] = dict(view.running)
        boundary = abs(minute / length - round(minute / length)) < 1e-9
        credit: list[tuple[int, float]] = []
        if boundary or minute % PASS_STEP == 0:
            self._check_overrun(running, now, boundary)
        if boundary:
            self._select(view)
            self._count_unaccepted(view)
            self.next_term = minute + length
            self.holding = set(self.selected)
            self.forced.clear()
            release = [
                i for i in running if i not in self.selected and (self.term_release == "all")
            ]
            for i in release:
                st = running.pop(i)
                preempt.append(i)
                plan.give(st.placement)
                pending[i] = st
            # A selected job that waited since the last pass (the pass of this
            # minute runs after the selection) counts its progress from that
            # pass: flush_lease_jobs (985-1000) sets no last_check_time.
            since = minute - PASS_STEP * math.floor((minute - 1) / PASS_STEP)
            first = [i for i in self.select_order if i in self.selected]
            for i in first + sorted(self.selected.difference(first)):
                waiting_job = pending.get(i)
                if waiting_job is None:
                    continue
                placement = self._make_room(plan, waiting_job, running, pending, preempt)
                if placement is not None:
                    plan.take(placement)
                    starts.append((i, placement))
                    del pending[i]
                    if self.start_credit and minute >= PASS_STEP and i not in release:
                        credit.append((i, float(since)))
        if minute % PASS_STEP == 0:
            arrived, self.arriving = self.arriving, []
            if self.admission and arrived:
                origin = (math.floor(minute / length + 1e-9) + 1) * length
                self._admit_jobs(view, arrived, origin, quick=True)
            pending.update((st.index, st) for st in arrived if st.index in view.pending)
            self._pending_pass(plan, now, pending, running, preempt, starts)
        free: tuple[int, ...] = ()
        if minute % 2 == 1:
            order = sorted(
                pending.items(),
                key=lambda it: fill_key(
                    self._cls(*it),
                    self.emergence.get(it[0], 0.0),
                    it[0] in self.overran,
                    it[1].job.submit,
                    it[0],
                ),
            )
            before = len(starts)
            self._take(plan, order, pending, starts)
            if not self.fill_overhead:
                # filling_jobs (1137-1155) counts no resume: these starts owe no overhead.
                free = tuple(i for i, _ in starts[before:])
            since = minute - PASS_STEP * math.floor(minute / PASS_STEP)
            if self.start_credit and since > 0:
                # Progress counts from the last pass, which updated every waiting job.
                credit.extend((i, float(since)) for i, _ in starts[before:])
        for i, _ in starts:
            # Appended to the artifact's running list in this order.
            self.start_seq[i] = self.start_count
            self.start_count += 1
        waiting = bool(pending or running or starts or self.arriving)
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

    def _check_overrun(self, running: Mapping[int, JobView], now: float, boundary: bool) -> None:
        """A job that ran past its estimate is unguaranteed and first in the pass (lines 412-417)."""
        for i, st in running.items():
            if i in self.overran or not (boundary or i not in self.holding):
                continue
            if st.executed(now) >= self._estimate(st):
                self.overran.add(i)
                self.guaranteed.discard(i)
                self.force_accepted.discard(i)
                self.counts["overran"] += 1

    def _make_room(
        self,
        plan: FreeMap,
        st: JobView,
        running: dict[int, JobView],
        pending: dict[int, JobView],
        preempt: list[int],
    ) -> Placement | None:
        """A place for a selected job, releasing opportunistic jobs if it has none (lowest first)."""
        placement = self._place_one(plan, st.job.gpus)
        if placement is not None or self.term_release == "all":
            return placement
        victims = sorted(
            (v for i, v in running.items() if i not in self.holding),
            key=lambda v: pass_key(
                v.index in self.overran,
                self._cls(v.index, v),
                self.emergence.get(v.index, 0.0),
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
        return self._place_one(plan, st.job.gpus)

    def _pending_pass(
        self,
        plan: FreeMap,
        now: float,
        pending: dict[int, JobView],
        running: dict[int, JobView],
        preempt: list[int],
        starts: list[tuple[int, Placement]],
    ) -> None:
        """The artifact's 5-minute pass (lines 446-601): force, demote, rank, run."""
        if self.force_short:
            self._force(now, pending, running, sum(plan.capacity))
        for i, st in pending.items():
            self._demote(i, st, now)
            self.emergence[i] = self._emergence(i, st, now)
        forced = [(i, st) for i, st in pending.items() if i in self.forced]
        need = sum(st.job.gpus for _, st in forced)
        if need > plan.total_free:
            victims = [
                (i, st)
                for i, st in running.items()
                if i not in self.holding and i not in self.forced
            ]
            for i, st in victims:
                self._demote(i, st, now)
                self.emergence[i] = self._emergence(i, st, now)
            victims.sort(
                key=lambda it: victim_key(
                    it[0] in self.overran,
                    self._cls(*it),
                    self.emergence.get(it[0], 0.0),
                    it[1].job.submit,
                    self.start_seq.get(it[0], -1),
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
            placement = self._place_one(plan, st.job.gpus)
            if placement is not None:
                plan.take(placement)
                starts.append((i, placement))
                del pending[i]
        order = sorted(pending.items(), key=lambda it: self._pass_key(*it))
        self._take(plan, order, pending, starts)

    def _pass_key(self, i: int, st: JobView) -> tuple[float, ...]:
        return pass_key(
            i in self.overran, self._cls(i, st), self.emergence.get(i, 0.0), st.job.submit, i
        )

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
            placement = self._place_one(plan, st.job.gpus)
            if placement is not None:
                plan.take(placement)
                starts.append((i, placement))
                del pending[i]

    def _force(
        self,
        now: float,
        pending: Mapping[int, JobView],
        running: Mapping[int, JobView],
        total: int,
    ) -> None:
        """Unguaranteed jobs that can finish within the term run at once (lines 455-478).

        By the trace's remaining duration, smallest remaining x GPUs first,
        on the GPUs that the term's selection and the jobs forced so far
        leave; one submitted in this term becomes guaranteed.
        """
        left = self.next_term - now
        held = sum(
            st.job.gpus for i, st in running.items() if i in self.holding or i in self.forced
        )
        held += sum(st.job.gpus for i, st in pending.items() if i in self.forced)
        spot = total - held
        candidates = [
            (max(st.job.work - st.attained(now), 0.0) * st.job.gpus, i, st)
            for i, st in pending.items()
            if i not in self.forced
            and self._cls(i, st) == UNACCEPTED
            and st.job.work - st.attained(now) <= left
        ]
        candidates.sort(key=lambda c: (c[0], c[1]))
        for _, i, st in candidates:
            if st.job.gpus <= spot:
                spot -= st.job.gpus
                self.forced.add(i)
                self.counts["forced"] += 1
                # Guaranteed if submitted in this term: (cur_lease_index - 1) x T_l
                # is its start, cur_lease_index having moved on at its boundary (475).
                if st.job.submit >= self.next_term - self.lease_length and i not in self.overran:
                    self.force_accepted.add(i)

    def _consolidate(
        self, view: View, plan: FreeMap, starting: set[int]
    ) -> tuple[tuple[int, Placement], ...]:
        """Move spread jobs onto their fewest servers when the GPUs left over allow it.

        Chronus re-places best-effort jobs at every BE lease (§3.3.5); the
        simulator keeps a placement until the job stops, so a job that local
        search spread (at the table's slower speed) is migrated back as soon
        as the leftover GPUs hold it consolidated.
        """
        moves: list[tuple[int, Placement]] = []
        fewest_of = max(plan.capacity)
        for index in sorted(self.spread - starting):
            st = view.running.get(index)
            fewest = -(-st.job.gpus // fewest_of) if st is not None else 0
            if st is None or len(st.placement) <= fewest:
                self.spread.discard(index)
                continue
            if not _may_consolidate(plan, st.placement, st.job.gpus):
                continue  # plan.place would not find its fewest servers: nothing to try
            plan.give(st.placement)
            target = plan.place(st.job.gpus)
            if target is not None and len(target) <= fewest:
                plan.take(target)
                moves.append((index, target))
                self.spread.discard(index)
                self.counts["consolidated_moves"] += 1
            else:
                plan.take(st.placement)
        return tuple(moves)

    def _place(self, plan: FreeMap, order: list[JobView]) -> list[tuple[int, Placement]]:
        """Round-up consolidation of the selected jobs, local search of the others (§3.4)."""
        room = plan.total_free
        chosen: list[JobView] = []
        for st in order:
            if room == 0:
                break
            if st.job.gpus <= room:
                chosen.append(st)
                room -= st.job.gpus
        if not chosen:
            return []
        started = time.perf_counter()
        starts: list[tuple[int, Placement]] = []
        selected = [st for st in chosen if st.index in self.selected]
        rest = [st for st in chosen if st.index not in self.selected]
        if selected:
            got = self.placer.place(
                plan.capacity, plan.free, [st.job for st in selected], method="round-up", table=None
            )
            for st, placement in zip(selected, got, strict=True):
                if placement is None:
                    rest.insert(0, st)
                else:
                    plan.take(placement)
                    starts.append((st.index, placement))
        if rest:
            got = self.placer.place(
                plan.capacity,
                plan.free,
                [st.job for st in rest],
                method="local-search",
                table=self.table,
                search_space=self.search_space,
                time_limit=self.placement_time_limit,
            )
            fewest = max(plan.capacity)
            for st, placement in zip(rest, got, strict=True):
                if placement is not None:
                    plan.take(placement)
                    starts.append((st.index, placement))
                    if len(placement) > -(-st.job.gpus // fewest):
                        self.counts["spread_starts"] += 1
                        self.spread.add(st.index)
        spent = time.perf_counter() - started
        self.placement_seconds += spent
        self.placement_max = max(self.placement_max, spent)
        self.counts["placement_calls"] += 1
        return starts


def _may_consolidate(plan: FreeMap, placement: Placement, gpus: int) -> bool:
    """Whether ``plan.place(gpus)``, with ``placement`` given back, could use its fewest servers.

    False only when it surely cannot: a job of at most K GPUs needs one
    server with that many free (counting its own GPUs there), a larger one
    on a uniform cluster ``ceil(gpus / K)`` whole free servers. Lets
    :meth:`Chronus._consolidate` skip the give, place and take back of a
    spread job that stays spread (the free map's levels are sorted lists, so
    giving and taking back left the same map): O(K + |placement|).
    """
    kmax = plan.kmax
    free, levels = plan.free, plan.levels
    if gpus <= kmax:
        top = next((k for k in range(kmax, 0, -1) if levels[k]), 0)
        return top >= gpus or any(free[s] + g >= gpus for s, g in placement)
    if not plan.uniform:
        return True
    whole = len(levels[kmax]) + sum(
        1 for s, g in placement if free[s] < kmax and free[s] + g == kmax
    )
    return whole * kmax >= gpus
