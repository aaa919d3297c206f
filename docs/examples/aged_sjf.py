"""A policy of one's own for ``scheduling-opt simulate --plugin``: shortest job first, with aging.

Non-preemptive: at every event, the waiting jobs are ranked by their work
less ``aging`` times the time they have waited (so a long job that has
waited long enough goes before a short one that just came), and started
in that order wherever the cluster's best fit finds room. ``aging`` 0 is
plain SJF with backfilling.

Run it (docs/write-a-policy.md)::

    scheduling-opt simulate --plugin docs/examples/aged_sjf.py \\
        --policy aged-sjf:aging=0.5 --policy sjf
"""

from __future__ import annotations

from scheduling_opt.sim import (
    ClusterSpec,
    Decision,
    JobView,
    Param,
    View,
    Workload,
    register_policy,
)


class AgedSjf:
    """Shortest job first; a waiting job's work counts down by ``aging`` x its wait."""

    name = "aged-sjf"

    def __init__(self, aging: float) -> None:
        self.aging = aging

    def rank(self, job: JobView, now: float) -> tuple[float, int]:
        """The order of the waiting jobs: work less aging x wait, then arrival order."""
        return (job.job.work - self.aging * (now - job.queued_since), job.index)

    def decide(self, view: View) -> Decision:
        plan = view.plan()  # a scratch copy of the free GPUs to plan several starts on
        starts = []
        for job in sorted(view.pending.values(), key=lambda j: self.rank(j, view.now)):
            placement = plan.place(job.job.gpus)  # the simulator's best fit, or None
            if placement is not None:
                plan.take(placement)
                starts.append((job.index, placement))
        return Decision(starts=tuple(starts))


def make(workload: Workload, cluster: ClusterSpec, *, aging: float = 0.0) -> AgedSjf:
    """Shortest job first; a waiting job's work counts down by aging x its wait."""
    return AgedSjf(aging)


register_policy(
    "aged-sjf",
    make,
    params=(Param("aging", "float", 0.0, "work forgiven per unit of waiting", low=0.0),),
    replace=True,
)
