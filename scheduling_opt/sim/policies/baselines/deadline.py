"""Deadline-aware baselines of Chronus §4.3: EDF (SLO jobs preempt best effort) and GENIE.

Both order SLO jobs (jobs with a deadline, strict or soft) by their first
deadline step only (Chronus §5.4: "these deadline-aware schedulers only
consider the strict deadlines") and put best-effort jobs after every SLO
job, in submit order. Ties fall to submit time, then id (the workload
index). Both use the trace's durations as their runtime estimates (the
simulator's oracle, as for ``sjf`` and ``srtf``).

- ``edf`` (Chronus §4.3, "Deadline-aware scheduler (2)"): earliest first
  deadline first with backfilling; "SLO jobs are allowed to preempt
  best-effort jobs. To prevent the abuse of the SLO service, we disable the
  preemption of SLO jobs." An SLO job that does not fit preempts running
  best-effort jobs, latest submitted first, by the simulator's preemption
  rule (:mod:`~scheduling_opt.sim.policies.baselines.preemptive`: victims are considered until
  one server, or enough whole servers, could hold the job; only those on the
  target servers are stopped). A running SLO job is never preempted; a
  best-effort job never preempts. A preempted job keeps its progress and
  rejoins the queue at its place. The non-preemptive EDF the simulator had
  before is ``edf-np`` (:class:`~scheduling_opt.sim.policies.baselines.nonpreemptive.EdfNp`).
- ``genie`` (Chronus §4.3 (4); GENIE, Chen et al., DATE '19 and TPDS '19):
  least laxity first for SLO jobs ("shortest waiting allowance first"),
  laxity = first deadline - now - remaining work; best-effort jobs at the
  lowest priority (Chronus' assignment: GENIE itself "prioritizes SLO jobs
  with the smallest laxity without considering best-effort jobs").
  Event-driven and non-preemptive, with backfilling. Placement: GENIE picks
  "the best placement" from its performance model; with the simulator's
  placement table (``model_info.json``) that is the consolidated one (the
  default rule: one server, best fit, or whole servers); when no consolidated
  placement is free, an SLO job is spread over the fewest servers with free
  GPUs if its predicted end at the spread placement's speed still meets its
  first deadline (GENIE's QoS-guided choice), and waits otherwise. The
  elastic GPU count GENIE also chooses is not modelled: the trace's jobs have
  one size and no scaling curve. ``spread=False`` (a parameter) turns the
  QoS-guided spread off.

Laxity of a pending job changes only with the clock, the same for every
job (``d - now - remaining``), so the order is the static key
``d - remaining`` taken when the job is queued: one :class:`ClassQueue`
walk per call, O(starts x sizes), as for the other backfilling baselines.
"""

from __future__ import annotations

from scheduling_opt.sim.cluster import FreeMap, Placement
from scheduling_opt.sim.policies.baselines.preemptive import _Preemptive
from scheduling_opt.sim.policies.baselines.queues import ClassQueue, Key
from scheduling_opt.sim.protocol import Decision, JobView, View


def _edf_key(job: JobView) -> Key:
    if job.job.deadlines:
        return (0, job.job.deadlines[0][0], job.index)
    return (1, 0.0, job.index)


class Edf(_Preemptive):
    """Earliest first deadline first; SLO jobs preempt best-effort jobs, never SLO jobs.

    Examples
    --------
    >>> Edf().name
    'edf'
    """

    name = "edf"

    def pending_key(self, job: JobView, view: View) -> Key:
        return _edf_key(job)

    def running_rank(self, job: JobView, now: float) -> tuple[float, ...]:
        return tuple(float(x) for x in _edf_key(job))

    def beats(self, rank: tuple[float, ...], victim: tuple[float, ...]) -> bool:
        # Class 0 = SLO, 1 = best effort: only an SLO job preempts, only a
        # best-effort job is preempted.
        return rank[0] == 0 and victim[0] == 1


def spread(plan: FreeMap, gpus: int) -> Placement | None:
    """``gpus`` GPUs on the fewest servers with free GPUs (most free first), or None.

    Ties fall to the lowest server index; the placement lists servers
    ascending. O(servers log servers).

    Examples
    --------
    >>> spread(FreeMap([3, 5, 2, 5]), 8)
    ((1, 5), (3, 3))
    >>> spread(FreeMap([1, 1]), 3) is None
    True
    """
    if plan.total_free < gpus:
        return None
    order = sorted(range(len(plan.free)), key=lambda s: (-plan.free[s], s))
    taken: list[tuple[int, int]] = []
    left = gpus
    for s in order:
        f = plan.free[s]
        if f <= 0:
            break
        g = min(f, left)
        taken.append((s, g))
        left -= g
        if left == 0:
            return tuple(sorted(taken))
    return None


class Genie:
    """Least laxity first for SLO jobs, best effort last; QoS-guided spread; no preemption.

    Examples
    --------
    >>> Genie().name
    'genie'
    """

    name = "genie"

    def __init__(self, spread: bool = True) -> None:
        self.queue = ClassQueue()
        self.spread = spread
        self.spread_starts = 0

    def key(self, job: JobView, now: float) -> Key:
        """(class, first deadline - remaining work, index): least laxity first."""
        if job.job.deadlines:
            return (0, job.job.deadlines[0][0] - job.remaining(now), job.index)
        return (1, 0.0, job.index)

    def decide(self, view: View) -> Decision:
        now = view.now
        for st in (*view.arrived, *view.evicted):
            self.queue.add(self.key(st, now), st.job.gpus)
        if not self.queue.count or view.free_total == 0:
            return Decision()
        plan = view.plan()
        pending = view.pending
        starts: list[tuple[int, Placement]] = []
        heads = self.queue.heads()
        # The backfilling walk (queues.backfill) with one more chance for an
        # SLO head that fits no consolidated placement: a spread that keeps
        # its deadline. A head that cannot start passes over its size class.
        while heads and plan.total_free > 0:
            key, g = heads.pop(0)
            placement = plan.place(g)
            if placement is None and key[0] == 0 and self.spread:
                placement = self._qos_spread(view, plan, pending[int(key[-1])], now)
            if placement is None:
                continue
            plan.take(placement)
            self.queue.pop_head(g)
            starts.append((int(key[-1]), placement))
            lst = self.queue.lists[g]
            if lst:
                heads.append((lst[0], g))
                heads.sort()
        return Decision(starts=tuple(starts))

    def _qos_spread(self, view: View, plan: FreeMap, job: JobView, now: float) -> Placement | None:
        placement = spread(plan, job.job.gpus)
        if placement is None:
            return None
        speed = view.speed(job.job, placement)
        if speed <= 0 or now + job.remaining(now) / speed > job.job.deadlines[0][0]:
            return None
        self.spread_starts += 1
        return placement

    def stats(self) -> dict[str, float]:
        """Counters: starts spread over more servers than the fewest (QoS-guided)."""
        return {"spread_starts": float(self.spread_starts)}
