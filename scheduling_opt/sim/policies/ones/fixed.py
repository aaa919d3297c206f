"""ONES' static contrast: each job at its submitted batch and GPU count, in ONES' SRUF order.

At each update (ONES' gate and predictor, :mod:`.base`) the jobs run in
order of smallest predicted remaining utilization c0 x ||D|| beta / X(B0,
c0) (SRUF, ONES' own priority, §3.2.1) as long as their GPUs fit;
lower-ranked running jobs are preempted. The batch never changes, so no
scaling cost is charged and the convergence option never applies (B0 is
within any limit). Cost per update: O(J log J + servers x starts).
"""

from __future__ import annotations

import time

from scheduling_opt.sim.policies.ones.base import Deployed, OnesBase
from scheduling_opt.sim.policies.ones.policy import SAME, place, placement_spread
from scheduling_opt.sim.protocol import Decision, JobView, View


class FixedBatch(OnesBase):
    """Each job at its submitted batch and GPU count, run in SRUF order (ONES' priority).

    Parameters
    ----------
    interval, sigma, update, progress, history, seed
        As for :class:`~scheduling_opt.sim.policies.ones.policy.Ones`.

    Examples
    --------
    >>> from scheduling_opt.sim import ClusterSpec, simulate
    >>> from scheduling_opt.sim.workload import SimJob, Workload
    >>> w = Workload.of([SimJob("0", 0.0, 1, 300.0, model="resnet18/cifar10/20000",
    ...                         min_gpus=1, max_gpus=4)], "demo")
    >>> simulate(w, ClusterSpec.uniform(1, 4), FixedBatch()).end
    (300.0,)

    References
    ----------
    ONES (Bian et al., SC 2021), §2.1 (static batch sizes), §3.2.1 (SRUF), §3.2.2 (update).
    """

    name = "fixed-batch"

    def __init__(
        self,
        *,
        interval: float = 60.0,
        sigma: float = 1.0 / 30.0,
        update: str = "epoch",
        progress: str = "regression",
        history: int = 1000,
        seed: int = 0,
    ) -> None:
        super().__init__(
            interval=interval,
            sigma=sigma,
            update=update,
            progress=progress,
            history=history,
            seed=seed,
        )

    def _rank(self, st: JobView, now: float) -> tuple[float, int]:
        m = self.tracks[st.index].model
        return (st.job.gpus * m.epoch_size * self.beta(st, now) / m.reference, st.index)

    def fill(self, view: View, live: list[JobView]) -> Deployed:
        # Waiting jobs that fit the idle GPUs at their submitted size, in SRUF order.
        now = view.now
        plan = view.plan()
        starts, rates, speeds = [], [], []
        waiting = [st for st in live if not st.placement]
        for st in sorted(waiting, key=lambda s: self._rank(s, now)):
            if st.job.gpus > plan.total_free:
                continue
            m = self.tracks[st.index].model
            placement = place(plan, st.job.gpus)
            x = m.throughput(m.batch0, m.gpus0, placement_spread(placement))
            factor = x / m.reference / view.speed(st.job, placement)
            starts.append((st.index, placement))
            if abs(factor - st.factor) > SAME * factor:
                rates.append((st.index, factor))
            speeds.append((st, x))
        return Deployed(Decision(starts=tuple(starts), rate=tuple(rates)), tuple(speeds))

    def deploy(self, view: View, live: list[JobView]) -> Deployed:
        now = view.now
        started = time.perf_counter()

        def rank(st: JobView) -> tuple[float, int]:
            return self._rank(st, now)

        room = sum(view.capacity)
        chosen = []
        for st in sorted(live, key=rank):
            if st.job.gpus <= room:
                chosen.append(st)
                room -= st.job.gpus
        keep = {st.index for st in chosen}
        plan = view.plan()
        preempt = []
        for st in live:
            if st.placement and st.index not in keep:
                preempt.append(st.index)
                plan.give(st.placement)
        starts = []
        for st in sorted(chosen, key=lambda s: (-s.job.gpus, s.index)):
            if not st.placement:
                starts.append((st.index, place(plan, st.job.gpus)))
        rates = []
        where = {st.index: st.placement for st in chosen}
        where.update(starts)
        for index, placement in starts:
            st = view.pending[index]
            m = self.tracks[index].model
            x = m.throughput(m.batch0, m.gpus0, placement_spread(placement))
            factor = x / m.reference / view.speed(st.job, placement)
            if abs(factor - st.factor) > SAME * factor:
                rates.append((index, factor))
        speeds = []
        for st in chosen:
            m = self.tracks[st.index].model
            speeds.append((st, m.throughput(m.batch0, m.gpus0, placement_spread(where[st.index]))))
        for st in live:
            self.tracks[st.index].rejected = st.index not in keep
        self.calls += 1
        self.solver_seconds += time.perf_counter() - started
        decision = Decision(starts=tuple(starts), preempt=tuple(preempt), rate=tuple(rates))
        return Deployed(decision, tuple(speeds))
