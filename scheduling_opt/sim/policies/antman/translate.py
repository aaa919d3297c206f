"""One AntMan step's decision as the engine's :class:`~scheduling_opt.sim.protocol.Decision`.

:func:`translate` applies the step's upgrades, launches and opportunistic
starts to the GPUs' layout (:class:`Layout`: each GPU's guarantee job and
opportunistic jobs, every job's :class:`~.coordinator.Need`), with the
local coordinator's rules: a launch evicts the latest opportunistic jobs
whose minimum memory no longer fits beside it; an opportunistic start is
dropped when its memory does not fit (it waits), and waits for the retry
10 s later when a GPU's opportunistic slots are full or its load has
reached M with the jobs placed this round (the step does not update the
loads within a round). Then the coordinator plans the GPUs (memory grants,
speed factors, stalls) and the decision carries the speed factors as
``rate``, the scaling costs as ``stall`` and the wake-ups: the utilization
window after a launch, the retry, a demotion, the next phase change of a
job on a shared GPU. O(J + G) per call for J jobs and G GPUs besides the
coordinator's plan.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Protocol

from scheduling_opt.policies.antman import AntManDecision, AntManParams
from scheduling_opt.sim.cluster import Placement
from scheduling_opt.sim.policies.antman.coordinator import Compute, Coordinator, Need, Scaling
from scheduling_opt.sim.protocol import Decision, JobView, View

Gpu = tuple[int, int]


class Adapter(Protocol):
    """What :func:`translate` reads of the policy (:class:`~.policy.AntMan`)."""

    counters: dict[str, float]
    coordinator: Coordinator
    params: AntManParams
    guests_per_gpu: int
    compute: Compute
    scaling: Scaling
    unit_seconds: float
    window: float

    def need(self, st: JobView, now: float) -> Need: ...
    def phase_left(self, st: JobView, now: float) -> float: ...
    def next_demotion(self, view: View, leaving: set[int]) -> float | None: ...


@dataclass(slots=True)
class Layout:
    """The GPUs' jobs as the decision changes them, and what each job asks."""

    hosts: dict[Gpu, int] = field(default_factory=dict)
    guests: dict[Gpu, list[int]] = field(default_factory=dict)
    needs: dict[int, Need] = field(default_factory=dict)

    def load(self, gpu: Gpu, compute: str, extra: Need | None = None) -> float:
        """The GPU's utilization (``extra``: with one more opportunistic job).

        GpuOpManager: the guarantee job's SM plus what the opportunistic jobs
        use of the rest; the constant variant: full with an opportunistic job.
        """
        h = self.hosts.get(gpu)
        on = [self.needs[j] for j in self.guests.get(gpu, ())]
        if extra is not None:
            on.append(extra)
        base = self.needs[h].sm if h is not None else 0.0
        if compute == "constant":
            return 1.0 if on else base
        return min(1.0, base + min(1.0 - base, sum(n.sm for n in on)))

    def drop_guest(self, job: int, gpus: tuple[Gpu, ...]) -> None:
        for g in gpus:
            on = self.guests.get(g)
            if on is not None and job in on:
                on.remove(job)
                if not on:
                    del self.guests[g]


def _sim_gpus(gpus: tuple[tuple[str, int], ...]) -> tuple[Gpu, ...]:
    return tuple(sorted((int(s[1:]), g) for s, g in gpus))


def _placement(gpus: tuple[Gpu, ...]) -> Placement:
    counts: dict[int, int] = {}
    for s, _ in gpus:
        counts[s] = counts.get(s, 0) + 1
    return tuple(sorted(counts.items()))


def translate(policy: Adapter, view: View, decision: AntManDecision, layout: Layout) -> Decision:
    """The engine's decision for ``decision`` on ``layout`` (changed in place); see the module."""
    running, pending = view.running, view.pending
    counters = policy.counters
    coord = policy.coordinator
    now = view.now
    upgrade = tuple(int(k) for k in decision.upgraded)
    for i in upgrade:
        layout.drop_guest(i, running[i].gpus)
        for g in running[i].gpus:
            layout.hosts[g] = i
    starts: list[tuple[int, Placement]] = []
    share: list[tuple[int, Placement]] = []
    exact: dict[int, tuple[Gpu, ...]] = {}
    evict: set[int] = set()
    fresh: set[int] = set()
    for k, gpus in decision.launched.items():
        i = int(k)
        sim = _sim_gpus(gpus)
        layout.needs[i] = policy.need(pending[i], now)
        counters["shared_launches"] += any(g in layout.guests for g in sim)
        for g in sim:
            layout.hosts[g] = i
            on = [j for j in layout.guests.get(g, ()) if j not in evict]
            # Static limits: the coordinator's plan evicts for a new job's minimum.
            while policy.scaling == "dynamic" and on and not coord.admits(i, on, g, layout.needs):
                evict.add(on.pop())  # the latest opportunistic job first
        starts.append((i, _placement(sim)))
        exact[i] = sim
        fresh.add(i)
    for i in sorted(evict):
        layout.drop_guest(i, running[i].gpus)
    counters["launched"] += len(starts)
    counters["upgrades"] += len(upgrade)
    counters["demotions"] += len(decision.demoted)
    retry = False
    m = policy.params.max_utilization
    for k, gpus in decision.opportunistic.items():
        i = int(k)
        sim = _sim_gpus(gpus)
        layout.needs[i] = policy.need(pending[i], now)
        if any(len(layout.guests.get(g, ())) >= policy.guests_per_gpu for g in sim) or (
            policy.compute == "gpuopmanager"
            and any(g in layout.guests and layout.load(g, policy.compute) >= m for g in sim)
        ):
            # The step may put two opportunistic jobs on one GPU in a round (it does
            # not update the loads): this one waits for the retry, when they count.
            counters["slot_conflicts"] += 1
            retry = True
            continue
        if not all(
            coord.admits(layout.hosts.get(g), [*layout.guests.get(g, ()), i], g, layout.needs)
            for g in sim
        ):
            counters["memory_refused"] += 1
            continue
        counters["stacked_starts"] += any(g in layout.guests for g in sim)
        counters["shared_starts"] += any(g in layout.hosts for g in sim)
        for g in sim:
            layout.guests.setdefault(g, []).append(i)
        share.append((i, _placement(sim)))
        exact[i] = sim
        fresh.add(i)
        counters["opportunistic_starts"] += 1
    hosts = (
        layout.hosts
        if policy.scaling == "static"
        else {g: layout.hosts[g] for g in layout.guests if g in layout.hosts}
    )
    plan = coord.plan(hosts, layout.guests, layout.needs, fresh)
    for i in plan.evict:
        if i in running:
            evict.add(i)
        else:  # started now: it does not start after all
            share = [(j, p) for j, p in share if j != i]
            del exact[i]
            fresh.discard(i)
            counters["opportunistic_starts"] -= 1
            counters["memory_refused"] += 1
    counters["memory_evictions"] += len(evict)
    # Speed factors: every job that runs after this decision, launches first.
    rate: list[tuple[int, float]] = []
    after = [i for i, _ in starts] + sorted((set(running) - evict) | {i for i, _ in share})
    for i in after:
        st = running.get(i) or pending[i]
        target = plan.factor.get(i, 1.0)
        if st.factor != target:
            rate.append((i, target))
    stall: list[tuple[int, float]] = []
    counters["shrinks"] += plan.shrinks
    counters["growths"] += plan.growths
    for i, seconds in sorted(plan.stall.items()):
        if i in evict:
            continue
        counters["stall_seconds"] += seconds
        stall.append((i, seconds / policy.unit_seconds))
    placements = dict(starts) | dict(share)
    wake = _wake(policy, view, placements, bool(starts), retry, layout, plan.factor, plan.stall)
    return Decision(
        starts=tuple(starts),
        preempt=tuple(sorted(evict)),
        share=tuple(share),
        upgrade=upgrade,
        gpus=tuple(exact.items()),
        rate=tuple(rate),
        wake_at=wake,
        stall=tuple(stall),
    )


def _wake(
    policy: Adapter,
    view: View,
    placements: dict[int, Placement],
    launched: bool,
    retry: bool,
    layout: Layout,
    factor: dict[int, float],
    stalls: dict[int, float],
) -> float | None:
    """The next call: the utilization window, the retry, a demotion, a phase change."""
    now = view.now
    # A GPU launched on now has no measured load yet (antman_step offers it to
    # no opportunistic job this round): look again after the utilization
    # window, AntMan's "past 10 seconds" (also the retry of a start dropped
    # for a full GPU).
    waiting = len(view.pending) > len(placements)
    wake = now + policy.window if (launched and waiting) or retry else None
    demote = policy.next_demotion(view, set(placements))
    if demote is not None and (wake is None or demote < wake):
        wake = demote
    # A job on a shared GPU whose memory or SM changes with its phase.
    shared = {j for on in layout.guests.values() for j in on}
    shared |= {layout.hosts[g] for g in layout.guests if g in layout.hosts}
    for i in sorted(shared):
        st = view.running.get(i) or view.pending.get(i)
        if st is None:
            continue
        left = policy.phase_left(st, now)
        if math.isinf(left):
            continue
        placement = placements.get(i) or st.placement
        base = view.speed(st.job, placement)
        speed = base * factor.get(i, 1.0)
        t = now + (stalls.get(i, 0.0) + left / speed) / policy.unit_seconds
        if t > now and (wake is None or t < wake):
            wake = t
    return wake
