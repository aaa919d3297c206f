"""Chronus in the simulator: admission control, lease terms, SRTF, round-up and local-search placement.

The policy object the ``chronus`` declarations make. It holds one run's
parts, each with its own state, and hands the engine's calls to the
scheduling loop:

- :mod:`.options`: the run's settings, frozen and validated;
- :mod:`.ledger`: what the parts share (guaranteed and selected jobs,
  reservations, counters);
- :mod:`.lease_model`: each SLO job as the lease solvers see it, and the
  guaranteed schedule's load per term;
- :mod:`.admission`: admission control on arrival (§3.3.2);
- :mod:`.selection`: each term's selection by the library's lease solvers
  (§3.3.3-§3.3.4);
- :mod:`.placement`: round-up consolidation, Algorithm 1's local search and
  the migration of spread jobs (§3.4);
- :mod:`.loop`: the paper's loop (``queue="chronus"``), or the Chronus
  artifact's minute loop (``queue="artifact"``,
  :mod:`.artifact.minute`) with its queue classes (:mod:`.artifact.queue`),
  its batch admission (:mod:`.artifact.admission`) and its own selection
  MILP (:mod:`.artifact.selection`).

Variants: ``admission=False`` puts every SLO job in each term's selection
(the selection rejects what it cannot serve); ``placement="best-fit"``
keeps the simulator's consolidating best fit alone. Chronus (SoCC '21)
§3.3, §3.4.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import replace

from scheduling_opt.sim.policies.chronus.admission import Admission
from scheduling_opt.sim.policies.chronus.artifact.minute import MinuteLoop
from scheduling_opt.sim.policies.chronus.artifact.mip import require_mip
from scheduling_opt.sim.policies.chronus.artifact.queue import QueueState
from scheduling_opt.sim.policies.chronus.artifact.rules import Estimates
from scheduling_opt.sim.policies.chronus.lease_model import LeaseModel
from scheduling_opt.sim.policies.chronus.ledger import Ledger
from scheduling_opt.sim.policies.chronus.loop import PaperLoop
from scheduling_opt.sim.policies.chronus.main_view import MainView
from scheduling_opt.sim.policies.chronus.options import ChronusOptions
from scheduling_opt.sim.policies.chronus.placement import Allocator
from scheduling_opt.sim.policies.chronus.profiling import Profiler
from scheduling_opt.sim.policies.chronus.selection import TermSelection
from scheduling_opt.sim.protocol import Decision, JobView, View

__all__ = ["Chronus"]


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
    max_terms : int or None
        Deadlines further than this many terms count as met at it (keeps
        the model small; the paper's horizon is the trace's; None: no cap).
    admission : bool
        Admission control on arrival (§3.3.2); False: every SLO job enters
        each term's selection.
    admission_time_limit : float
        Seconds for one admission's feasibility MILP.
    admission_prove : bool or None
        Run the feasibility MILP when the greedy and EDF find no schedule
        (None: only in ``exact`` mode; otherwise such a job is rejected, the
        conservative answer, and the run stays deterministic and fast).
    placement : {"chronus", "best-fit", "pool"}
        Round-up consolidation + local search (§3.4), the simulator's
        default consolidating best fit, or any free GPUs (the artifact's).
    search_space : int
        Local search's |S| per call.
    placement_time_limit : float
        Seconds per local-search call (its best combination so far past it).
    placement_table : bool
        Use the bundled ``model_info.json`` sensitivity in the local search
        (False: every span is worth its GPUs).
    estimate, admission_check, term_release, selection, queue : str
        The lease's remaining work (``oracle``, ``artifact``), how an
        arriving SLO job is admitted (``resolve``, ``reserved``,
        ``batch``), the running jobs a term releases (``selected``,
        ``all``), the term selection's model and solver (``reward``,
        ``artifact``, ``artifact-cbc``, ``artifact-mip``), the scheduling
        loop (``chronus``, ``artifact``).
    force_short, fill_overhead, start_credit : bool
        Unguaranteed jobs that fit the term run at once; the odd-minute
        fill's starts owe the start overhead; starts are credited the
        minutes since the last pass.
    cache_layout : {"selected", "late"}
        Where reserved terms lie for the batch admission.
    search_rows, cbc_nodes : int or None
        The selection MILP's row cap; CBC's node limit.
    artifact_stops : bool
        The artifact's wall-clock stops on CBC (``selection="artifact-mip"``).
    profiler : bool
        Every job passes through the Profiler first (§3.2,
        :mod:`.profiling`): the Profiling cluster, FCFS runs of
        ``t_profile``, short jobs ending there, submission control.
    t_profile : float
        Profiling time per job (trace units; the paper's 300 s).
    profiler_gpus : int or None
        A fixed Profiling cluster of this many GPUs (whole servers); None:
        re-sized by ``profiler_scaling``.
    profiler_scaling : {"backlog", "hourly"}
        How the Profiling cluster is re-sized (§3.2.3, :mod:`.profiling`):
        ``"hourly"``, to the lower bound ceil(lambda T_profile) from the past
        hour's submissions, every hour; ``"backlog"``, that bound plus the
        GPUs waiting in the Profiler's queue, checked every ``t_profile``.
    submission_cap : int or None
        GPUs per user per ``t_profile`` entering profiling (§5.1: 24);
        None: no submission control.
    runtime_noise : float
        Standard deviation of the Profiler estimate's relative Gaussian
        error (Fig. 6(d); 0: the estimate is exact).
    noise_seed : int
        Seeds that noise.
    be_lease : float or None
        The BE lease of the Spot cluster (§3.3.5: 300 s; :mod:`.spot`);
        None: best-effort jobs take left-over GPUs at every event.

    The options after ``placement_table`` are the rules of the Chronus
    authors' simulator, explained in
    :mod:`~scheduling_opt.sim.policies.chronus.artifact.rules`.

    Raises
    ------
    ValueError
        An option out of its range (:class:`ChronusOptions`).
    ImportError
        ``selection="artifact-mip"`` without python-mip (the ``parity``
        extra), at construction rather than at the first term.

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
        search_space: int = 100_000,
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
        profiler: bool = True,
        t_profile: float = 5.0,
        profiler_gpus: int | None = None,
        profiler_scaling: str = "backlog",
        submission_cap: int | None = 24,
        runtime_noise: float = 0.0,
        noise_seed: int = 0,
        be_lease: float | None = 5.0,
    ) -> None:
        options = ChronusOptions(
            mode=mode,
            lease_length=lease_length,
            time_limit=time_limit,
            max_terms=max_terms,
            admission=admission,
            admission_time_limit=admission_time_limit,
            admission_prove=admission_prove,
            placement=placement,
            search_space=search_space,
            placement_time_limit=placement_time_limit,
            placement_table=placement_table,
            estimate=estimate,
            admission_check=admission_check,
            term_release=term_release,
            selection=selection,
            queue=queue,
            force_short=force_short,
            fill_overhead=fill_overhead,
            start_credit=start_credit,
            cache_layout=cache_layout,
            search_rows=search_rows,
            cbc_nodes=cbc_nodes,
            artifact_stops=artifact_stops,
            profiler=profiler,
            t_profile=t_profile,
            profiler_gpus=profiler_gpus,
            profiler_scaling=profiler_scaling,
            submission_cap=submission_cap,
            runtime_noise=runtime_noise,
            noise_seed=noise_seed,
            be_lease=be_lease,
        )
        if options.selection == "artifact-mip":
            require_mip()
        self.options = options
        self.name = options.name
        #: Chronus decides once a lease term while jobs are left (sim/limits.py counts them).
        self.period = options.lease_length
        self.ledger = Ledger()
        estimates = Estimates(options.lease_length)
        self.model = LeaseModel(options, estimates)
        self.queue = QueueState(self.ledger, estimates, artifact=options.queue == "artifact")
        self.admission = Admission(options, self.ledger, self.model)
        self.selection = TermSelection(options, self.ledger, self.model, self.queue)
        self.allocator = Allocator(options, self.ledger)
        self.profiler: Profiler | None = None
        if options.profiler:
            self.profiler = Profiler(
                options.t_profile,
                options.profiler_gpus,
                options.submission_cap,
                options.runtime_noise,
                options.noise_seed,
                options.profiler_scaling,
            )
            if options.runtime_noise > 0:
                # Without noise the estimate is the work left: the engine's own.
                self.model.estimate = self.profiler.estimate
        self.loop: PaperLoop | MinuteLoop
        if options.queue == "artifact":
            self.loop = MinuteLoop(
                options,
                self.ledger,
                self.queue,
                select=self.selection.select,
                admit=self._admit_batch,
                place=self.allocator.place_one,
            )
        else:
            self.loop = PaperLoop(
                options,
                self.ledger,
                self.model,
                self.admission,
                self.selection,
                self.allocator,
                None
                if self.profiler is None or options.runtime_noise == 0
                else self.profiler.estimate,
            )

    def _admit_batch(self, view: View, arrived: Sequence[JobView], origin: float) -> None:
        self.admission.admit(view, arrived, origin, quick=True)

    def decide(self, view: View) -> Decision:
        """The engine's call: the Profiler's and the scheduling loop's decision."""
        profiler = self.profiler
        if profiler is None:
            return self.loop.decide(view)
        evicted = profiler.record(view, self.ledger.guaranteed)
        done = (*evicted, *profiler.expire(view))
        if done:
            # The engine calls again at once: the loop sees them as arrivals then.
            return Decision(preempt=done, wake_at=None)
        main = MainView(view, profiler.main, profiler.servers, profiler.take_handed())
        decision = self.loop.decide(main)
        if decision.preempt:
            return decision
        used = tuple(p for _, placement in decision.starts for p in placement)
        starts = profiler.start(view, used)
        wake = min(
            decision.wake_at if decision.wake_at is not None else math.inf,
            profiler.next_event(),
        )
        return replace(
            decision,
            starts=(*decision.starts, *starts),
            wake_at=None if math.isinf(wake) else wake,
        )

    def stats(self) -> dict[str, float]:
        """Counters of the run: terms, solver, admission and placement seconds and counts."""
        tally, allocator = self.selection.tally, self.allocator
        out = {
            "terms": float(tally.terms),
            "solver_seconds": tally.solver_seconds,
            "proven_terms": float(tally.proven),
            "fallbacks": float(tally.fallbacks),
            "selected_reward": tally.reward(),
            "reward_bound": tally.bound(),
            "admission_seconds": self.admission.seconds,
            "placement_seconds": allocator.seconds,
            "placement_max_seconds": allocator.max_seconds,
            "placement_stopped": float(allocator.placer.stopped),
        }
        out.update({k: float(v) for k, v in self.ledger.counts.items()})
        if self.profiler is not None:
            out.update(self.profiler.stats.as_dict())
        return out
