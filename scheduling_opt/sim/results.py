"""Per-job records and the run summary (the metrics of ``summary.json``).

Definitions (times in the trace's unit):

- JCT = end - submit; queueing delay = first start - submit; waiting =
  JCT - GPU-time held / requested GPUs: every wait, the first and those
  after preemptions (ONES §4.2's "queuing time" = JCT - execution time),
  exact for a job that keeps its GPU count (not for one resized);
- makespan = the last end on the trace's clock;
- utilization = busy GPU-time / available GPU-time over [first submit, last
  end] (all GPUs x (last end - first submit) on a fixed cluster);
- preemption ratio = preemptions / submissions (Aryl's definition);
- deadline-miss ratio = the share of SLO jobs that end after their first
  deadline step; wDMR as :func:`scheduling_opt.metrics.wdmr` (rewards 1..100);
- percentiles: numpy's linear interpolation.

A measurement window (``skip``, a fraction) leaves the first jobs in submit
order out of the job metrics (ONES drops the first 5%); utilization and
makespan always cover the whole run.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from scheduling_opt.metrics import RW_MIN, wdmr
from scheduling_opt.sim.engine import RunOutput
from scheduling_opt.sim.limits import check_timeline

#: The metric keys every run's ``metrics`` holds (the stable contract).
METRIC_KEYS = (
    "jobs",
    "jct_mean",
    "jct_median",
    "jct_p95",
    "jct_p99",
    "queueing_mean",
    "queueing_median",
    "waiting_mean",
    "makespan",
    "utilization",
    "deadline_miss_ratio",
    "wdmr",
    "preemption_ratio",
    "preemptions",
    "slo_jobs",
    "best_effort_jct_mean",
)


@dataclass(frozen=True, slots=True)
class JobRecord:
    """One row of ``jobs.csv``."""

    job_id: str
    tenant: str
    job_type: str
    gpus: int
    submit: float
    start: float
    end: float
    jct: float
    queueing: float
    preemptions: int
    gpu_time: float
    deadline: float
    deadline_met: bool | None
    reward: float


def _reward(deadlines: Sequence[tuple[float, float]], end: float) -> float:
    """:func:`~scheduling_opt.metrics.reward_at` on a job's validated ``(time, reward)`` steps.

    The same rule without building a checked :class:`~scheduling_opt.model.RewardStep` per step
    (they were most of the time of writing ``jobs.csv`` for a trace run).
    """
    if math.isnan(end):
        return RW_MIN
    for time, reward in deadlines:
        if end <= time:
            return reward
    return RW_MIN


def job_records(out: RunOutput) -> list[JobRecord]:
    """The per-job rows of a run, in workload order.

    Examples
    --------
    >>> from scheduling_opt.sim.policies.baselines.nonpreemptive import Fifo
    >>> from scheduling_opt.sim.cluster import ClusterSpec
    >>> from scheduling_opt.sim.engine import simulate
    >>> from scheduling_opt.sim.workload import SimJob, Workload
    >>> job = SimJob("0", 0.0, 8, 10.0, deadlines=((5.0, 50.0), (12.0, 20.0)))
    >>> out = simulate(Workload.of([job], "demo"), ClusterSpec.uniform(1, 8), Fifo())
    >>> rec = job_records(out)[0]
    >>> rec.end, rec.deadline_met, rec.reward  # misses 5, meets the step at 12
    (10.0, False, 20.0)
    """
    rows = []
    for job, start, end, pre, gt in zip(
        out.jobs, out.first_start, out.end, out.preemptions, out.gpu_time, strict=True
    ):
        met = (end <= job.deadlines[0][0]) if job.deadlines else None
        rows.append(
            JobRecord(
                job_id=job.id,
                tenant=job.tenant or "",
                job_type=job.job_type,
                gpus=job.gpus,
                submit=job.submit,
                start=start,
                end=end,
                jct=end - job.submit,
                queueing=start - job.submit,
                preemptions=pre,
                gpu_time=gt,
                deadline=job.first_deadline,
                deadline_met=met,
                reward=_reward(job.deadlines, end),
            )
        )
    return rows


def _pct(values: np.ndarray[Any, np.dtype[np.float64]], q: float) -> float:
    return float(np.percentile(values, q)) if values.size else 0.0


def summarize(out: RunOutput, *, skip: float = 0.0) -> dict[str, float]:
    """The metrics of one run; ``skip`` is the fraction of first jobs left out.

    Examples
    --------
    >>> from scheduling_opt.sim.policies.baselines.nonpreemptive import Fifo
    >>> from scheduling_opt.sim.cluster import ClusterSpec
    >>> from scheduling_opt.sim.engine import simulate
    >>> from scheduling_opt.sim.workload import SimJob, Workload
    >>> w = Workload.of([SimJob("0", 0.0, 8, 10.0), SimJob("1", 0.0, 8, 10.0)], "demo")
    >>> m = summarize(simulate(w, ClusterSpec.uniform(1, 8), Fifo()))
    >>> m["jct_mean"], m["makespan"], m["utilization"]
    (15.0, 20.0, 1.0)
    """
    if not 0.0 <= skip < 1.0:
        raise ValueError(f"skip must be in [0, 1), got {skip}")
    records = job_records(out)
    n = len(records)
    kept = records[math.floor(n * skip) :]
    jct = np.array([r.jct for r in kept], dtype=np.float64)
    queueing = np.array([r.queueing for r in kept], dtype=np.float64)
    waiting = np.array([r.jct - r.gpu_time / r.gpus for r in kept], dtype=np.float64)
    slo = [r for r in kept if r.deadline_met is not None]
    best = [r.jct for r in kept if r.deadline_met is None]
    first_submit = min((r.submit for r in records), default=0.0)
    last_end = max((r.end for r in records), default=0.0)
    preemptions = sum(r.preemptions for r in kept)
    return {
        "jobs": float(len(kept)),
        "jct_mean": float(jct.mean()) if jct.size else 0.0,
        "jct_median": _pct(jct, 50),
        "jct_p95": _pct(jct, 95),
        "jct_p99": _pct(jct, 99),
        "queueing_mean": float(queueing.mean()) if queueing.size else 0.0,
        "queueing_median": _pct(queueing, 50),
        "waiting_mean": float(waiting.mean()) if waiting.size else 0.0,
        "makespan": last_end,
        "utilization": out.busy_area / out.capacity_area if out.capacity_area > 0 else 0.0,
        "deadline_miss_ratio": (
            sum(1 for r in slo if not r.deadline_met) / len(slo) if slo else 0.0
        ),
        "wdmr": wdmr([r.reward for r in slo]),
        "preemption_ratio": preemptions / len(kept) if kept else 0.0,
        "preemptions": float(preemptions),
        "slo_jobs": float(len(slo)),
        "best_effort_jct_mean": sum(best) / len(best) if best else 0.0,
        "first_submit": first_submit,
    }


def sample(
    changes: Sequence[tuple[float, int, int, int]], step: float
) -> list[tuple[float, int, int, int]]:
    """The state in force at ``t0, t0 + step, ...`` from the change points.

    ``step`` must be a time > 0 giving at most ``limits.MAX_TIMELINE_ROWS``
    samples (:func:`~scheduling_opt.sim.limits.check_timeline`).

    Examples
    --------
    >>> sample([(0.0, 4, 1, 1), (90.0, 0, 0, 0)], 60.0)
    [(0.0, 4, 1, 1), (60.0, 4, 1, 1)]
    """
    if not changes:
        return []
    out = []
    t0, end = changes[0][0], changes[-1][0]
    check_timeline([end - t0], step)
    i = 0
    k = 0
    while t0 + k * step < end:
        t = t0 + k * step
        while i + 1 < len(changes) and changes[i + 1][0] <= t:
            i += 1
        out.append((t, *changes[i][1:]))
        k += 1
    return out
