"""3Sigma (Park et al., EuroSys '18) as Chronus §4.3 runs it: a plan-ahead MILP every 60 s.

3Sigma (built on TetriSched) re-plans the queued jobs at every scheduling
cycle with an MILP that chooses each job's start time within a plan-ahead
window to maximize the sum of the jobs' expected utilities, SLO jobs
valued for meeting their deadlines, best-effort jobs "the sooner the
better". Chronus §4.3 (3): "It is not effective in supporting the
preemption between SLO jobs ... we set the scheduling cycle as 60
seconds." Our reading, every choice the descriptions leave open:

- **Cycle**: the plan runs at multiples of ``cycle`` (1 = 60 s in the
  traces' minutes) when jobs arrived or finished since the last plan and
  some window job fits a server now (otherwise it could start nothing);
  between cycles nothing starts. No job is ever preempted: the MILP plans
  the queued jobs only, running jobs are the capacity it plans around.
- **Runtimes**: 3Sigma plans over a distribution of each job's runtime
  learned from similar past jobs; the traces give no such history, so the
  distribution is the trace's duration as a point mass: 3Sigma's
  "PointPerfEst" (perfect estimates), which the 3Sigma paper shows its
  distribution-based plans approach. The remaining work of a queued job is
  its duration (nothing is preempted).
- **Window** (keeps each MILP small): the first ``window`` (24) queued
  jobs, SLO jobs that can still meet their first deadline (now + duration
  <= it) earliest deadline first, then the others (best effort, and SLO
  jobs that can no longer meet it) in submit order.
- **Start times** (``slots``, 8): now, and the earliest seven cycle ticks at
  or after the times at which GPUs free up: completions of running jobs,
  and the ends of window jobs started now (so a job can be planned after
  another, e.g. an SLO job with slack after an urgent one). Capacity at
  slot k = free GPUs now + GPUs of running jobs that end by then. A job
  started at slot k holds g GPUs until slot time + duration; capacity is
  checked at every slot, which is exact within the plan (planned use grows
  only at slots, capacity only at running jobs' completions). At slot 0
  the servers count too: a job starts now only if it fits a server alone,
  and for h = 2, 4, 8 the jobs of at least h GPUs (rounded up to a power
  of two, or to whole servers above 8) fit the free GPUs counted in whole
  h-blocks per server; for such sizes (each divides the next) that is
  what largest-first placement needs, so the plan's starts find room.
- **Utility** of a job completing at c: ``slo_value`` (100, the Chronus
  reward of a first deadline met) if it is an SLO job and c is at or before
  its first deadline, plus 1 - (c - now) / H for every job, H = the last
  slot minus now plus the longest duration plus 1 (a linearly decaying
  "sooner is better" term in (0, 1]; an SLO job that can no longer meet its
  deadline is then served like a best-effort job).
- **Solve**: HiGHS (:func:`scheduling_opt.exact.solve_milp`) with a node
  budget (``node_limit``, 500: a budget independent of the machine's load)
  and a time limit as a guard (``time_limit``, 10 s); a plan stopped by
  either uses HiGHS' incumbent; with none, the fallback starts the window's
  jobs that fit, in window order (each counted in :meth:`ThreeSigma.stats`:
  ``nodes``, ``clock``, ``fallbacks``). If every queued job fits now, they
  all start and no MILP is built: with utilities that never grow with time
  that is the MILP's optimum.
- **Placement**: the jobs the plan starts now take the default placement
  (one server, best fit, or whole servers), largest first.

Size of one MILP: at most window x slots binaries (24 x 8 = 192), window
rows plus slots + 3 capacity rows. Measured on the excerpt over 60 x 8
GPUs (a heavy load): about 50 ms of CPU per MILP; window 12 x 6 slots
halves that and raises the deadline-miss ratio from 0.18 to 0.24
(docs/reproduction.md).
"""

from __future__ import annotations

import bisect
import math
import time
from collections.abc import Sequence

import numpy as np
from scipy.optimize import LinearConstraint
from scipy.sparse import coo_matrix

from scheduling_opt.exact import solve_milp
from scheduling_opt.sim.cluster import Placement
from scheduling_opt.sim.protocol import Decision, JobView, View

#: The Chronus traces' minutes: 60 s.
THREE_SIGMA_CYCLE = 1.0
#: The value of an SLO job meeting its first deadline (Chronus' reward 100).
SLO_VALUE = 100.0


def rounded(gpus: int, per_server: int = 8) -> int:
    """A job's GPUs in whole blocks: the next power of two up to a server, else whole servers.

    Examples
    --------
    >>> [rounded(g) for g in (1, 2, 3, 5, 8, 12, 16)]
    [1, 2, 4, 8, 8, 16, 16]
    """
    if gpus > per_server:
        return per_server * -(-gpus // per_server)
    block = 1
    while block < gpus:
        block *= 2
    return min(block, per_server)


def units(free: Sequence[int], per_server: int = 8) -> dict[int, int]:
    """GPUs free in whole blocks of h, for h = 2, 4, ..., a server's GPUs: sum of h floor(f / h).

    Examples
    --------
    >>> units([3, 8, 5])
    {2: 14, 4: 12, 8: 8}
    """
    out: dict[int, int] = {}
    h = 2
    while h <= per_server:
        out[h] = sum(h * (f // h) for f in free)
        h *= 2
    return out


class ThreeSigma:
    """A plan-ahead MILP over the queued jobs each cycle; never preempts.

    Examples
    --------
    >>> ThreeSigma().name
    '3sigma'
    """

    name = "3sigma"

    def __init__(
        self,
        cycle: float = THREE_SIGMA_CYCLE,
        window: int = 24,
        slots: int = 8,
        node_limit: int = 500,
        time_limit: float = 10.0,
        slo_value: float = SLO_VALUE,
    ) -> None:
        if not (cycle > 0 and math.isfinite(cycle)):
            raise ValueError(f"3sigma: cycle must be > 0, got {cycle!r}")
        if window < 1 or slots < 1 or node_limit < 1:
            raise ValueError("3sigma: window, slots and node_limit must be >= 1")
        if not (time_limit > 0 and slo_value >= 0):
            raise ValueError("3sigma: time_limit must be > 0 and slo_value >= 0")
        self.cycle = cycle
        self.window = window
        self.slots = slots
        self.node_limit = node_limit
        self.time_limit = time_limit
        self.slo_value = slo_value
        # Queued SLO jobs by (first deadline, index) while they can meet it;
        # the others (best effort, late SLO) by index. Lateness only grows.
        self.slo: list[tuple[float, int]] = []
        self.other: list[int] = []
        self.sizes: dict[int, int] = {}  # queued jobs per GPU count
        self.dirty = False
        self.counters = dict.fromkeys(
            ("plans", "milps", "proven", "nodes", "clock", "fallbacks", "all_fit", "no_room"),
            0,
        )
        self.solver_seconds = 0.0

    # ---------------------------------------------------------------- queue

    def _queue(self, job: JobView) -> None:
        if job.job.deadlines:
            bisect.insort(self.slo, (job.job.deadlines[0][0], job.index))
        else:
            bisect.insort(self.other, job.index)
        g = job.job.gpus
        self.sizes[g] = self.sizes.get(g, 0) + 1

    def _unqueue(self, job: JobView) -> None:
        item = (job.job.first_deadline, job.index)
        i = bisect.bisect_left(self.slo, item)
        if i < len(self.slo) and self.slo[i] == item:
            del self.slo[i]
        else:
            del self.other[bisect.bisect_left(self.other, job.index)]
        g = job.job.gpus
        self.sizes[g] -= 1
        if not self.sizes[g]:
            del self.sizes[g]

    def _window(self, view: View) -> list[JobView]:
        now, pending = view.now, view.pending
        chosen: list[JobView] = []
        k = 0
        while k < len(self.slo) and len(chosen) < self.window:
            deadline, index = self.slo[k]
            st = pending[index]
            if now + st.remaining(now) > deadline + 1e-9:
                del self.slo[k]  # late for good: served with the others
                bisect.insort(self.other, index)
                continue
            chosen.append(st)
            k += 1
        for index in self.other:
            if len(chosen) >= self.window:
                break
            chosen.append(pending[index])
        return chosen

    # ---------------------------------------------------------------- decide

    def _is_tick(self, now: float) -> bool:
        q = now / self.cycle
        return abs(q - round(q)) <= 1e-9 * max(1.0, abs(q))

    def _tick_at_or_after(self, t: float) -> float:
        q = t / self.cycle
        return math.ceil(q - 1e-9 * max(1.0, abs(q))) * self.cycle

    def decide(self, view: View) -> Decision:
        now = view.now
        for st in (*view.arrived, *view.evicted):
            self._queue(st)
        if view.arrived or view.finished or view.evicted:
            self.dirty = True
        if not self.sizes or not self.dirty:
            return Decision()
        if min(self.sizes) > view.free_total:
            return Decision()  # nothing can start; a completion will call again
        if not self._is_tick(now):
            return Decision(wake_at=self._tick_at_or_after(now))
        self.dirty = False
        self.counters["plans"] += 1
        window = self._window(view)
        starts = self._plan(view, window)
        for index, _ in starts:
            self._unqueue(view.pending[index])
        return Decision(starts=tuple(starts))

    def _plan(self, view: View, window: list[JobView]) -> list[tuple[int, Placement]]:
        queued = sum(n for n in self.sizes.values())
        demand = sum(g * n for g, n in self.sizes.items())
        if demand <= view.free_total and len(window) == queued:
            starts = self._place(view, window)
            if len(starts) == len(window):
                self.counters["all_fit"] += 1
                return starts
        now = view.now
        probe = view.plan()
        startable = {st.index for st in window if probe.place(st.job.gpus) is not None}
        if not startable:
            return []  # the plan could start nothing now; a completion calls again
        running = view.running.values()
        later = {self._tick_at_or_after(st.end) for st in running if st.end > now}
        later.update(self._tick_at_or_after(now + st.remaining(now)) for st in window)
        later.discard(now)
        times = [now, *sorted(later)[: self.slots - 1]]
        freed = sorted((st.end, st.job.gpus) for st in running)
        cap = []
        k, acc = 0, view.free_total
        for t in times:
            while k < len(freed) and freed[k][0] <= t + 1e-9:
                acc += freed[k][1]
                k += 1
            cap.append(acc)
        k_max = view.cluster.gpus_per_server
        plan = self._solve(window, times, cap, now, startable, units(view.free, k_max), k_max)
        if plan is None:
            self.counters["fallbacks"] += 1
            chosen = [st for st in window if st.index in startable]
        else:
            chosen = [window[j] for j, k in plan if k == 0]
        # Largest first (best fit decreasing), the order the unit rows assume.
        chosen.sort(key=lambda st: -st.job.gpus)
        starts = self._place(view, chosen)
        self.counters["no_room"] += len(chosen) - len(starts)
        return starts

    def _place(self, view: View, jobs: list[JobView]) -> list[tuple[int, Placement]]:
        plan = view.plan()
        starts: list[tuple[int, Placement]] = []
        for st in jobs:
            placement = plan.place(st.job.gpus)
            if placement is not None:
                plan.take(placement)
                starts.append((st.index, placement))
        return starts

    def _solve(
        self,
        window: list[JobView],
        times: list[float],
        cap: list[int],
        now: float,
        startable: set[int],
        free_units: dict[int, int],
        per_server: int,
    ) -> list[tuple[int, int]] | None:
        """The plan: (window position, slot) of each job it schedules (None: none found)."""
        rem = [st.remaining(now) for st in window]
        horizon = times[-1] - now + max(rem) + 1.0
        cols: list[tuple[int, int]] = []  # (job position, slot)
        value: list[float] = []
        for j, st in enumerate(window):
            g = st.job.gpus
            deadline = st.job.first_deadline
            for k, t in enumerate(times):
                if g > cap[k] or (k == 0 and st.index not in startable):
                    continue
                c = t + rem[j]
                u = 1.0 - (c - now) / horizon
                if st.job.deadlines and c <= deadline + 1e-9:
                    u += self.slo_value
                cols.append((j, k))
                value.append(u)
        if not cols:
            return []
        n = len(cols)
        one = coo_matrix(
            (np.ones(n), ([j for j, _ in cols], np.arange(n))), shape=(len(window), n)
        ).tocsr()
        rows: list[int] = []
        cidx: list[int] = []
        data: list[float] = []
        for col, (j, k) in enumerate(cols):
            end = times[k] + rem[j]
            held = float(window[j].job.gpus)
            for t in range(k, len(times)):
                if times[t] >= end - 1e-9:
                    break
                rows.append(t)
                cidx.append(col)
                data.append(held)
        # Slot 0 also by server: for each unit h, the rounded demands of
        # the jobs of at least h GPUs fit the free GPUs in whole h-blocks.
        now_cols = [
            (c, rounded(window[j].job.gpus, per_server)) for c, (j, k) in enumerate(cols) if k == 0
        ]
        limits = [float(c) for c in cap]
        for r, h in enumerate(sorted(free_units)):
            for c, size in now_cols:
                if size >= h:
                    rows.append(len(times) + r)
                    cidx.append(c)
                    data.append(float(size))
            limits.append(float(free_units[h]))
        use = coo_matrix((data, (rows, cidx)), shape=(len(limits), n)).tocsr()
        started = time.perf_counter()
        out = solve_milp(
            np.asarray(value),
            constraints=(
                LinearConstraint(one, 0.0, 1.0),
                LinearConstraint(use, 0.0, np.asarray(limits, dtype=float)),
            ),
            integrality=np.ones(n, dtype=int),
            bounds=(0.0, 1.0),
            time_limit=self.time_limit,
            maximize=True,
            mip_rel_gap=1e-6,
            node_limit=self.node_limit,
        )
        self.solver_seconds += time.perf_counter() - started
        self.counters["milps"] += 1
        if out.x is None:
            return None
        if out.status.value == "optimal":
            self.counters["proven"] += 1
        elif out.seconds >= self.time_limit:
            self.counters["clock"] += 1  # stopped by the clock: depends on the load
        else:
            self.counters["nodes"] += 1
        return [cols[c] for c in range(n) if out.x[c] > 0.5]

    def stats(self) -> dict[str, float]:
        """Counters: plans, MILPs (proven, stopped by a budget), fallbacks, solver seconds."""
        out = {k: float(v) for k, v in self.counters.items()}
        out["solver_seconds"] = self.solver_seconds
        return out
