"""Aryl's running-time estimate without the oracle: a job's duration predicted at submission.

Aryl's phase one sorts jobs by running time (Algorithm 2, SJF), which §6
takes from a job profiler: history runs of the same job for routine jobs,
a per-iteration model (Habitat) for the others; §7.5 shows the gain
holding with up to 60% of the predictions 25% off. The trace has neither
the job identities nor the profiles, so this predictor uses only what a
scheduler knows when a job is submitted: its user (``SimJob.tenant``, the
trace's ``user`` column), its GPU count, and the durations of the jobs
that have finished by then (a finished job's duration at its requested
GPUs: the trace's ``duration``, which its run reveals).

Rule, first that applies:

1. the median duration of the finished jobs of the same user with the same
   GPU count, when there are at least :data:`MIN_HISTORY` of them;
2. the median of the finished jobs with the same GPU count (at least
   :data:`MIN_HISTORY`);
3. the median of all finished jobs (at least one);
4. nothing has finished yet: 0 (every such job ties, and phase one's ties
   go in submit order: FIFO until a history exists).

Why not the model name or the iteration count: in P_MIX2 the duration per
iteration of one model at one GPU count spans three to four orders of
magnitude (alexnet on 1 GPU: 0.002 to 10 minutes per iteration), so they
predict nothing here. The prediction is made once, at submission; a
preempted job's remaining time is its prediction minus the work it has
done (at least 0). Cost: O(log n) to predict, O(n) to record a finished
job (sorted insertion), n the finished jobs.
"""

from __future__ import annotations

import bisect

from scheduling_opt.sim.workload import SimJob

#: Finished jobs a user (or a GPU count) needs before its median is trusted.
MIN_HISTORY = 3


def _median(values: list[float]) -> float:
    n = len(values)
    mid = n // 2
    return values[mid] if n % 2 else 0.5 * (values[mid - 1] + values[mid])


class DurationPredictor:
    """Median durations of finished jobs by (user, GPUs), by GPUs, and overall.

    Examples
    --------
    >>> p = DurationPredictor()
    >>> p.predict(SimJob("a", 0.0, 1, 50.0, tenant="u"))  # nothing finished yet
    0.0
    >>> for k, w in enumerate((10.0, 30.0, 20.0)):
    ...     p.observe(SimJob(str(k), 0.0, 1, w, tenant="u"))
    >>> p.predict(SimJob("b", 0.0, 1, 99.0, tenant="u"))  # the user's 1-GPU median
    20.0
    >>> p.predict(SimJob("c", 0.0, 4, 99.0, tenant="u"))  # no 4-GPU history: all jobs
    20.0
    """

    __slots__ = ("by_gpus", "by_user", "every")

    def __init__(self) -> None:
        self.by_user: dict[tuple[str, int], list[float]] = {}
        self.by_gpus: dict[int, list[float]] = {}
        self.every: list[float] = []

    def observe(self, job: SimJob) -> None:
        """Record finished ``job``'s duration (its work at its requested GPUs)."""
        user = (job.tenant or "", job.gpus)
        for bucket in (
            self.by_user.setdefault(user, []),
            self.by_gpus.setdefault(job.gpus, []),
            self.every,
        ):
            bisect.insort(bucket, job.work)

    def predict(self, job: SimJob) -> float:
        """``job``'s predicted duration at its requested GPUs (the module's rule)."""
        mine = self.by_user.get((job.tenant or "", job.gpus), [])
        if len(mine) >= MIN_HISTORY:
            return _median(mine)
        size = self.by_gpus.get(job.gpus, [])
        if len(size) >= MIN_HISTORY:
            return _median(size)
        return _median(self.every) if self.every else 0.0
