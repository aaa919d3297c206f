"""Themis (Mahajan et al., NSDI '20) as Gavel implements it: finish-time fairness in rounds.

Chronus §4.3 (6): "Themis proposes the finish time fairness as a new metric
to evaluate scheduling fairness. We follow the same implementation in
[38]" ([38] = Gavel, Narayanan et al., OSDI '20: its ``finish_time_fairness``
policy and its round-based mechanism). On a homogeneous cluster that is:

1. **Isolated share** (Gavel's max-min fairness, Themis' "1/N of the
   cluster"): every active job (submitted, unfinished) gets
   ``min(g_i, s)`` GPUs, the level ``s`` chosen so that the shares fill the
   G GPUs (water filling; every job its ``g_i`` when they all fit); its
   isolated time fraction is ``x_iso_i = min(g_i, s) / g_i``.
2. **Finish-time fairness**: rho_i(x) = (t_i + r_i / x_i) / (t_i + r_i / x_iso_i),
   t_i the time since the job's arrival, r_i its remaining work at full
   speed (the trace's duration: Gavel knows each job's remaining steps);
   the allocation x (time fractions, 0 <= x_i <= 1, sum g_i x_i <= G)
   minimizes max_i rho_i. For a target rho each job needs
   x_i >= r_i / (rho T_id_i - t_i) (T_id_i the denominator), decreasing in
   rho, so the optimum is the smallest rho at which those needs fit:
   bisection to a relative 1e-9 (60 halvings), O(N) each. The leftover of a
   GPU budget the needs do not fill stays unallocated in x, as any min-max
   optimum may leave it; the mechanism below gives it away anyway.
3. **Rounds** (Gavel: 6-minute rounds, priority = allocation / share of
   time received): every ``round_length`` the jobs are ranked by
   x_i / f_i, f_i = time run / time since arrival (a job that never ran
   ranks first, then by x_i; ties by submit order). Walking that order, a
   job is chosen while its GPUs fit the G GPUs still unclaimed; running jobs
   not chosen are preempted (progress kept); chosen running jobs keep their
   servers (no migration); chosen pending jobs start by the default
   placement (one that finds no room is skipped); a running job not chosen
   whose GPUs no chosen start took keeps them; then any GPUs left go to
   the other pending jobs in the same order (work conserving). A round
   with no pending job is skipped (it would change nothing).
4. **Between rounds** the GPUs a finished job frees are given at once to
   the pending jobs in the last round's order, jobs arrived since first in
   submit order (they have received nothing), without preemption: Themis
   offers resources as soon as they free up.

5. **Start costs** (the engine's restart stall and start overhead,
   ``View.start_cost``: the time a start adds before the job's work goes
   on, the cost SRTF counts in its comparisons): a running job whose last
   start cost ``c > 0`` keeps its GPUs at the rounds until its work since
   that start is ``2 c`` (the cost, and as much useful work again): its
   start is paid back. Without it a round shorter than a start's cost
   re-shuffled the jobs before any of them got past its cost: every start
   added more work than the round let it do, and the run never ended (an
   8-GPU start owing 2 x (1 + log2 8) = 8 minutes against 6-minute
   rounds). With it every start of cost ``c`` buys ``c`` of useful work,
   so the run finishes; at zero cost nothing is held and the rounds are
   Gavel's.

Themis' own mechanism, a partial-allocation auction among the 1 - f
fraction of jobs furthest from fair share, reduces to the same order when
each job bids for exactly its gang of g GPUs (the trace's jobs are
inelastic): the jobs with the largest rho win. Themis ignores deadlines:
SLO and best-effort jobs are treated alike.

Cost per round: O(N log N) for N active jobs (numpy for the bisection);
between rounds one :class:`~scheduling_opt.sim.policies.baselines.queues.ClassQueue` walk,
O(starts x sizes).
"""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import NDArray

from scheduling_opt.sim.cluster import Placement
from scheduling_opt.sim.policies.baselines.queues import ClassQueue, Key, backfill
from scheduling_opt.sim.protocol import Decision, JobView, View

#: Gavel's round: 360 seconds, in the Chronus traces' minutes.
THEMIS_ROUND = 6.0
_BISECTIONS = 60


def isolated_fractions(gpus: NDArray[np.int_], total: int) -> NDArray[np.float64]:
    """Each job's isolated time fraction min(g_i, s) / g_i (water filling of ``total`` GPUs).

    Examples
    --------
    >>> isolated_fractions(np.array([1, 2, 8]), 8).tolist()  # s = 5: 1 + 2 + 5
    [1.0, 1.0, 0.625]
    >>> isolated_fractions(np.array([2, 2]), 8).tolist()
    [1.0, 1.0]
    """
    g = np.asarray(gpus, dtype=np.float64)
    if g.sum() <= total:
        return np.ones_like(g)
    order = np.sort(g)
    left, n = float(total), len(order)
    level = 0.0
    for k, gk in enumerate(order):
        share = left / (n - k)
        if gk >= share:
            level = share
            break
        left -= gk
    out: NDArray[np.float64] = np.minimum(g, level) / g
    return out


def fair_allocation(
    gpus: NDArray[np.int_], since: NDArray[np.float64], remaining: NDArray[np.float64], total: int
) -> tuple[NDArray[np.float64], float]:
    """The allocation x minimizing the largest finish-time fairness rho, and that rho.

    Parameters
    ----------
    gpus, since, remaining : numpy.ndarray
        Per active job: GPUs, time since arrival, remaining work at full speed.
    total : int
        The cluster's GPUs.

    Returns
    -------
    (numpy.ndarray, float)
        x (time fractions in [0, 1]) and rho* = max_i rho_i(x).

    Examples
    --------
    Two 8-GPU jobs on 8 GPUs, just arrived, 10 and 30 minutes of work: the
    isolated share is 4 GPUs each (x_iso = 0.5, T_id = 20 and 60); equal
    rho needs x_1 = 10 / (20 rho), x_2 = 30 / (60 rho), summing to 1 at
    rho = 1: x = (0.5, 0.5).

    >>> x, rho = fair_allocation(np.array([8, 8]), np.zeros(2), np.array([10.0, 30.0]), 8)
    >>> [round(float(v), 6) for v in x], round(rho, 6)
    ([0.5, 0.5], 1.0)
    """
    g = gpus.astype(float)
    t = since.astype(float)
    r = remaining.astype(float)
    t_id = t + r / isolated_fractions(gpus, total)
    low = float(np.max((t + r) / t_id))  # every job at full speed: x_i = 1

    def need(rho: float) -> NDArray[np.float64]:
        out: NDArray[np.float64] = np.minimum(1.0, r / np.maximum(rho * t_id - t, 1e-300))
        return out

    def fits(rho: float) -> bool:
        return float(np.dot(g, need(rho))) <= total * (1 + 1e-12)

    if fits(low):
        return need(low), low
    high = 2.0 * low
    while not fits(high):
        high *= 2.0
    for _ in range(_BISECTIONS):
        mid = 0.5 * (low + high)
        if fits(mid):
            high = mid
        else:
            low = mid
    return need(high), high


class Themis:
    """Finish-time fair rounds (Gavel's Themis), work conserving between rounds.

    Examples
    --------
    >>> Themis().name
    'themis'
    """

    name = "themis"

    def __init__(self, round_length: float = THEMIS_ROUND) -> None:
        if not (round_length > 0 and math.isfinite(round_length)):
            raise ValueError(f"themis: round_length must be > 0, got {round_length!r}")
        self.round_length = round_length
        self.next_round = 0.0
        self.queue = ClassQueue()
        self.keys: dict[int, Key] = {}
        self.rounds = 0
        self.preemptions = 0
        self.held = 0
        self.last_rho = 0.0
        # Per job started at a cost: the work it must have attained to have
        # paid that start back (2 x the cost past its work at the start).
        self.payback: dict[int, float] = {}

    def _starting(self, view: View, job: JobView) -> None:
        # Called before the start is applied: start_cost sees whether it resumes.
        cost = view.start_cost(job, job.job.gpus)
        if cost > 0:
            self.payback[job.index] = job.attained(view.now) + 2.0 * cost
        else:
            self.payback.pop(job.index, None)

    def _holds(self, job: JobView, now: float) -> bool:
        """Whether running ``job`` has not paid its last start back yet (it keeps its GPUs)."""
        due = self.payback.get(job.index)
        return due is not None and job.attained(now) < due - 1e-9 * max(1.0, due)

    def _enqueue(self, job: JobView, key: Key) -> None:
        self.keys[job.index] = key
        self.queue.add(key, job.job.gpus)

    def decide(self, view: View) -> Decision:
        now = view.now
        for st in view.finished:
            self.payback.pop(st.index, None)
        for st in (*view.arrived, *view.evicted):
            # Nothing received yet: ahead of every ranked job, in submit order.
            self._enqueue(st, (-math.inf, 0.0, st.index))
        # A round with nothing pending would change nothing: every running
        # job fits the budget it already holds.
        if now >= self.next_round - 1e-9 and view.pending:
            decision = self._round(view)
            self.next_round = now + self.round_length
            return decision
        wake = self.next_round if view.pending else None
        if not self.queue.count or view.free_total == 0:
            return Decision(wake_at=wake)
        starts = backfill(self.queue, view.plan())
        for index, _ in starts:
            del self.keys[index]
            self._starting(view, view.pending[index])
        return Decision(starts=tuple(starts), wake_at=wake)

    def _round(self, view: View) -> Decision:
        now = view.now
        self.rounds += 1
        jobs = [*view.running.values(), *view.pending.values()]
        jobs.sort(key=lambda j: j.index)
        total = sum(view.capacity)
        gpus = np.array([j.job.gpus for j in jobs])
        since = np.array([now - j.job.submit for j in jobs])
        remaining = np.array([j.remaining(now) for j in jobs])
        x, self.last_rho = fair_allocation(gpus, since, remaining, total)
        ranked: list[tuple[float, float, int, JobView]] = []
        for k, j in enumerate(jobs):
            ran = j.executed(now) / since[k] if since[k] > 0 else 0.0
            priority = math.inf if ran <= 0 else float(x[k]) / ran
            ranked.append((-priority, -float(x[k]), j.index, j))
        ranked.sort(key=lambda e: e[:3])
        running = view.running
        # A job still paying its start back keeps its GPUs (point 5 above).
        chosen = {i for i, j in running.items() if self._holds(j, now)}
        self.held += len(chosen)
        budget = total - sum(running[i].job.gpus for i in chosen)
        for _, _, index, j in ranked:
            if index not in chosen and j.job.gpus <= budget:
                chosen.add(index)
                budget -= j.job.gpus
        plan = view.plan()
        victims = [e for e in ranked if e[2] in running and e[2] not in chosen]
        for _, _, index, _ in victims:
            plan.give(running[index].placement)
        # This round's order for the pending jobs (victims join after the starts).
        self.queue = ClassQueue()
        self.keys = {}
        for neg, negx, index, j in ranked:
            if index not in running:
                self._enqueue(j, (neg, negx, index))
        starts: list[tuple[int, Placement]] = []
        for _, _, index, j in ranked:
            if index in chosen and index not in running:
                placement = plan.place(j.job.gpus)
                if placement is not None:
                    plan.take(placement)
                    starts.append((index, placement))
                    self._starting(view, j)
                    self.queue.remove(self.keys.pop(index), j.job.gpus)
        # A victim whose GPUs no chosen start took keeps running (a stop and a
        # restart on the same GPUs would change nothing but the counters).
        preempt: list[int] = []
        for _, _, index, j in victims:
            if plan.fits(j.placement):
                plan.take(j.placement)
            else:
                preempt.append(index)
        for index, placement in backfill(self.queue, plan):
            del self.keys[index]
            starts.append((index, placement))
            self._starting(view, view.pending[index])
        for neg, negx, index, j in victims:
            if index in preempt:
                self._enqueue(j, (neg, negx, index))
        self.preemptions += len(preempt)
        return Decision(
            starts=tuple(starts),
            preempt=tuple(sorted(preempt)),
            wake_at=view.now + self.round_length,
        )

    def stats(self) -> dict[str, float]:
        """Counters: rounds, preemptions at rounds, jobs kept at a round to pay a start back, the last rho*."""
        return {
            "rounds": float(self.rounds),
            "round_preemptions": float(self.preemptions),
            "held_for_start_cost": float(self.held),
            "last_rho": self.last_rho,
        }
