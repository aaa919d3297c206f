"""Non-preemptive baselines: FIFO, SJF, non-preemptive EDF, YARN capacity scheduler.

All use the default placement rule (:mod:`scheduling_opt.sim.cluster`) and
break every order by submit time, then job id (the workload index). Each
keeps its queue incrementally from ``view.arrived`` and ``view.evicted``.

- ``fifo``: submit order; start jobs while they fit; stop at the first that
  does not (strict, head-of-line blocking).
- ``sjf``: shortest duration (the trace's, an oracle) first, backfilling.
- ``edf-np``: earliest absolute first deadline first, best-effort jobs after
  all SLO jobs in submit order, backfilling, no preemption (``edf`` is
  Chronus §4.3's, where SLO jobs preempt best-effort jobs:
  :mod:`~scheduling_opt.sim.policies.baselines.deadline`).
- ``yarn-cs``: per-tenant quotas, strict FIFO inside a tenant; tenants are
  served least-used first (used GPUs / quota, then head's submit order),
  first within their quota, then elastically on idle GPUs; no preemption.
  The tenant is the trace's user (``yarn-cs``) or the job's class, SLO or
  best effort (``yarn-cs-slo``, Chronus §4.3: "we configure the static quota
  according to the ratio between SLO and best-effort jobs", read as the
  ratio of their job counts: :func:`class_quotas`).
"""

from __future__ import annotations

from collections.abc import Mapping

from scheduling_opt.sim.cluster import Placement
from scheduling_opt.sim.policies.baselines.queues import ClassQueue, Key, backfill, strict
from scheduling_opt.sim.protocol import Decision, JobView, View
from scheduling_opt.sim.workload import SimJob, Workload


class _Queued:
    """A queue policy: key jobs on arrival, walk the queue each call."""

    name = "queued"
    is_strict = False

    def __init__(self) -> None:
        self.queue = ClassQueue()

    def key(self, job: JobView) -> Key:
        raise NotImplementedError

    def decide(self, view: View) -> Decision:
        for st in view.arrived:
            self.queue.add(self.key(st), st.job.gpus)
        for st in view.evicted:
            self.queue.add(self.key(st), st.job.gpus)
        if not self.queue.count or view.free_total == 0:
            return Decision()
        plan = view.plan()
        walk = strict if self.is_strict else backfill
        return Decision(starts=tuple(walk(self.queue, plan)))


class Fifo(_Queued):
    """First in, first out, strict (head-of-line blocking).

    Examples
    --------
    >>> Fifo().name
    'fifo'
    """

    name = "fifo"
    is_strict = True

    def key(self, job: JobView) -> Key:
        return (job.index,)


class Sjf(_Queued):
    """Shortest job (trace duration) first, with backfilling."""

    name = "sjf"

    def key(self, job: JobView) -> Key:
        return (job.job.work, job.index)


class EdfNp(_Queued):
    """Earliest first deadline first (best effort last), with backfilling, no preemption."""

    name = "edf-np"

    def key(self, job: JobView) -> Key:
        if job.job.deadlines:
            return (0, job.job.deadlines[0][0], job.index)
        return (1, 0.0, job.index)


def _largest_remainder(weights: dict[str, float], total: int) -> dict[str, int]:
    """``total`` split in proportion to ``weights`` (largest remainder; ties by name)."""
    whole = sum(weights.values())
    if whole <= 0:
        return dict.fromkeys(sorted(weights), 0)
    exact = {t: total * d / whole for t, d in weights.items()}
    quotas = {t: int(v) for t, v in exact.items()}
    left = total - sum(quotas.values())
    for t in sorted(exact, key=lambda t: (-(exact[t] - quotas[t]), t))[:left]:
        quotas[t] += 1
    return dict(sorted(quotas.items()))


def proportional_quotas(workload: Workload, total_gpus: int) -> dict[str, int]:
    """Quotas proportional to each tenant's GPU-time demand (largest remainder).

    Examples
    --------
    >>> from scheduling_opt.sim.workload import SimJob, Workload
    >>> w = Workload.of([SimJob("0", 0, 1, 30.0, tenant="a"),
    ...                  SimJob("1", 0, 1, 10.0, tenant="b")], "demo")
    >>> proportional_quotas(w, 8)
    {'a': 6, 'b': 2}
    """
    demand: dict[str, float] = {}
    for j in workload.jobs:
        t = j.tenant or ""
        demand[t] = demand.get(t, 0.0) + j.gpus * j.work
    return _largest_remainder(demand, total_gpus)


#: The two queues of ``yarn-cs-slo``.
SLO_QUEUE, BEST_EFFORT_QUEUE = "slo", "best-effort"


def job_class(job: SimJob) -> str:
    """``"slo"`` for a job with a deadline (strict or soft), ``"best-effort"`` otherwise."""
    return SLO_QUEUE if job.deadlines else BEST_EFFORT_QUEUE


def class_quotas(workload: Workload, total_gpus: int) -> dict[str, int]:
    """Chronus §4.3's YARN-CS quotas: the GPUs split by the ratio of SLO to best-effort jobs.

    The ratio is of job counts (the paper's "ratio between SLO and
    best-effort jobs"; P_MIX2's 90% SLO jobs get 864 of 960 GPUs), largest
    remainder; a class without jobs gets 0 (its jobs, if any, run on idle
    GPUs only).

    Examples
    --------
    >>> from scheduling_opt.sim.workload import SimJob, Workload
    >>> w = Workload.of([SimJob(str(i), 0, 1, 1.0, deadlines=((9.0, 100.0),)) for i in range(7)]
    ...                 + [SimJob(str(i), 0, 8, 50.0) for i in range(7, 10)], "demo")
    >>> class_quotas(w, 16)
    {'best-effort': 5, 'slo': 11}
    """
    counts = {SLO_QUEUE: 0.0, BEST_EFFORT_QUEUE: 0.0}
    for j in workload.jobs:
        counts[job_class(j)] += 1.0
    return _largest_remainder(counts, total_gpus)


class YarnCs:
    """YARN capacity scheduler: tenant quotas, FIFO inside a tenant, elastic, no preemption.

    ``quotas`` maps tenant -> GPUs (a tenant not named has quota 0 and runs
    only on idle GPUs). ``by``: the tenant of a job is its ``tenant`` (the
    trace's user), or with ``"class"`` its :func:`job_class` (then named
    ``yarn-cs-slo``).
    """

    name = "yarn-cs"

    def __init__(self, quotas: Mapping[str, int], by: str = "tenant") -> None:
        if by not in ("tenant", "class"):
            raise ValueError(f"yarn-cs: by must be tenant or class, got {by!r}")
        self.by = by
        if by == "class":
            self.name = "yarn-cs-slo"
        self.quotas = dict(quotas)
        self.queues: dict[str, list[int]] = {}
        self.used: dict[str, int] = {}
        self.gpus: dict[int, tuple[str, int]] = {}

    def _tenant(self, job: JobView) -> str:
        if self.by == "class":
            return job_class(job.job)
        return job.job.tenant or ""

    def _ratio(self, tenant: str) -> float:
        quota = self.quotas.get(tenant, 0)
        used = self.used.get(tenant, 0)
        return used / quota if quota > 0 else float("inf")

    def decide(self, view: View) -> Decision:
        for st in view.finished:
            t, g = self.gpus.pop(st.index)
            self.used[t] -= g
        for st in view.evicted:
            t, g = self.gpus.pop(st.index)
            self.used[t] -= g
        for st in (*view.arrived, *view.evicted):
            q = self.queues.setdefault(self._tenant(st), [])
            q.append(st.index)
            if len(q) > 1 and q[-2] > q[-1]:
                q.sort()
        if view.free_total == 0:
            return Decision()
        plan = view.plan()
        pending = view.pending
        starts: list[tuple[int, Placement]] = []
        blocked: set[str] = set()
        for within_quota in (True, False):
            while True:
                best: tuple[float, int, str] | None = None
                for t, q in self.queues.items():
                    if not q or t in blocked:
                        continue
                    g = pending[q[0]].job.gpus
                    if within_quota and self.used.get(t, 0) + g > self.quotas.get(t, 0):
                        continue
                    cand = (self._ratio(t), q[0], t)
                    if best is None or cand < best:
                        best = cand
                if best is None:
                    break
                t = best[2]
                index = self.queues[t][0]
                g = pending[index].job.gpus
                placement = plan.place(g)
                if placement is None:
                    blocked.add(t)  # strict FIFO inside the tenant
                    continue
                plan.take(placement)
                self.queues[t].pop(0)
                self.used[t] = self.used.get(t, 0) + g
                self.gpus[index] = (t, g)
                starts.append((index, placement))
        return Decision(starts=tuple(starts))
