"""Chronus in the simulator: lease terms selected by the lease solvers, SRTF on what is left.

Every lease term (``lease_length``, 20 minutes in the paper) the unfinished
SLO jobs whose deadlines have not all passed become a
:class:`~scheduling_opt.lease.LeaseInput` (remaining work, deadline steps
relative to the term's start, the cluster's GPUs) and a lease solver selects
which hold the coming term: ``exact`` (HiGHS) within a per-term time budget,
the greedy when it proves nothing in time (``chronus``); the greedy alone
(``chronus-greedy``); the exact solver with no fallback (``chronus-exact``).
The previous term's selection is the warm start. Jobs holding term 0 run
this term: they start first (EDF order), and running jobs that are not
selected lose their GPUs to them (best effort first, longest remaining
first). Between terms, the GPUs left over go, at every event, to the
pending jobs in this order: selected jobs, unselected SLO jobs by earliest
deadline, best-effort jobs (and SLO jobs whose deadlines all passed) by
shortest remaining time; these run opportunistically until the next term.
Placement is the simulator's default consolidating best fit.

Not modelled (docs/reproduction.md): admission control on arrival (every
SLO job enters the next term's selection, and the selection rejects the ones
it cannot serve), and the round-up + local-search placement. Chronus (SoCC
'21) §3.3, §4.3.
"""

from __future__ import annotations

import math
import time

from scheduling_opt.lease import LeaseDecision, LeaseInput, exact, greedy, hint_terms
from scheduling_opt.model import Job, RewardStep
from scheduling_opt.sim.cluster import Placement
from scheduling_opt.sim.policy import Decision, JobView, View
from scheduling_opt.solution import Solution, Status


class Chronus:
    """Chronus' lease-term selection over a simulated cluster.

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

    Examples
    --------
    >>> from scheduling_opt.sim import ClusterSpec, SimJob, Workload, simulate
    >>> w = Workload.of([SimJob("a", 0.0, 8, 30.0, deadlines=((40.0, 100.0),)),
    ...                  SimJob("b", 0.0, 8, 10.0)], "demo")
    >>> out = simulate(w, ClusterSpec.uniform(1, 8), Chronus(mode="greedy"))
    >>> out.end  # the SLO job holds the first terms, the best-effort job waits
    (30.0, 40.0)

    References
    ----------
    Chronus (SoCC '21) §3.3.2-§3.3.4, §4.3.
    """

    def __init__(
        self,
        *,
        mode: str = "budget",
        lease_length: float = 20.0,
        time_limit: float = 10.0,
        max_terms: int = 72,
    ) -> None:
        if mode not in ("budget", "greedy", "exact"):
            raise ValueError(f"mode must be budget, greedy or exact, got {mode!r}")
        self.name = {"budget": "chronus", "greedy": "chronus-greedy", "exact": "chronus-exact"}[
            mode
        ]
        self.mode = mode
        self.lease_length = lease_length
        self.time_limit = time_limit
        self.max_terms = max_terms
        self.next_term = -math.inf
        self.selected: set[int] = set()
        self.last: LeaseDecision | None = None
        self.solver_seconds = 0.0
        self.terms = 0
        self.fallbacks = 0
        self.proven = 0
        self.rewards: list[tuple[float, float]] = []  # (objective, bound) per term

    def _select(self, view: View) -> None:
        now = view.now
        jobs = []
        for st in sorted((*view.pending.values(), *view.running.values()), key=lambda s: s.index):
            steps = [(t - now, v) for t, v in st.job.deadlines if t > now]
            if not steps:
                continue
            jobs.append(
                Job(
                    str(st.index),
                    st.job.gpus,
                    st.job.gpus,
                    max(st.remaining(now), 1e-9),
                    deadlines=tuple(RewardStep(t, v) for t, v in steps),
                )
            )
        if not jobs:
            self.selected = set()
            self.last = None
            return
        inp = LeaseInput(
            tuple(jobs),
            capacity=sum(view.capacity),
            lease_length=self.lease_length,
            max_terms=self.max_terms,
        )
        hint = hint_terms(self.last) if self.last is not None else None
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
        self.solver_seconds += time.perf_counter() - started
        if sol.status is Status.OPTIMAL:
            self.proven += 1
        self.terms += 1
        decision = sol.decision
        self.last = decision
        self.rewards.append(
            (sol.objective or 0.0, sol.bound if sol.bound is not None else math.nan)
        )
        self.selected = {int(j) for j in decision.run_now} if decision is not None else set()

    def stats(self) -> dict[str, float]:
        """Counters of the run: terms, solver seconds, proven terms, fallbacks, reward, bound."""
        bounds = [b for _, b in self.rewards if not math.isnan(b)]
        return {
            "terms": float(self.terms),
            "solver_seconds": self.solver_seconds,
            "proven_terms": float(self.proven),
            "fallbacks": float(self.fallbacks),
            "selected_reward": sum(r for r, _ in self.rewards),
            "reward_bound": sum(bounds) if len(bounds) == len(self.rewards) else math.nan,
        }

    def _priority(self, st: JobView, now: float) -> tuple[float, ...]:
        if st.index in self.selected:
            return (0.0, st.job.first_deadline, float(st.index))
        if st.job.deadlines and st.job.deadlines[-1][0] > now:
            return (1.0, st.job.first_deadline, float(st.index))
        return (2.0, st.remaining(now), float(st.index))

    def decide(self, view: View) -> Decision:
        now = view.now
        boundary = now >= self.next_term - 1e-9
        preempt: list[int] = []
        plan = view.plan()
        if boundary:
            self._select(view)
            self.next_term = now + self.lease_length
            # Selected jobs that wait get GPUs from unselected running jobs.
            need = (
                sum(st.job.gpus for i, st in view.pending.items() if i in self.selected)
                - view.free_total
            )
            if need > 0:
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
        starts: list[tuple[int, Placement]] = []
        order = sorted(view.pending.values(), key=lambda st: self._priority(st, now))
        for st in order:
            if plan.total_free == 0:
                break
            placement = plan.place(st.job.gpus)
            if placement is not None:
                plan.take(placement)
                starts.append((st.index, placement))
        wake = self.next_term if (view.pending or view.running) else None
        return Decision(starts=tuple(starts), wake_at=wake)
