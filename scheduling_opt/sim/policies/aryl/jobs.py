"""Aryl's job scheduling in the simulator (§5): phase one in SJF order, phase two by MCKP.

:class:`JobScheduler` holds what the job scheduler knows between calls: the
pools (training servers, on-loan servers), the queue in phase one's order,
each running job's pool and the running elastic jobs. Each call
(:meth:`JobScheduler.schedule`):

- phase one, the jobs' base demand in ``order``: ``sjf`` (Algorithm 2:
  running time at base demand, skipping the jobs that do not fit; the
  running time is predicted at submission by
  :class:`~.aryl_predict.DurationPredictor`, or with ``predictor=None``
  the trace's remaining work, an oracle), ``queue`` (submit order, skipping:
  AFS as §7.1 runs it) or ``fifo`` (submit order, stopping at the first job
  that does not fit: the baseline). A job runs on one pool: an inelastic
  job on the training pool, else on the on-loan pool if it may use any GPU
  type (:func:`~.shape.any_gpu_type`); an elastic job, with ``groups`` (§5.3), on
  the on-loan pool first, then the training pool, and without them (Table
  6's naive BFD) on the training pool first, like an inelastic job.
  Placement: the library's best-fit decreasing (:mod:`.pools`), with the
  on-loan servers' base and flexible groups kept across calls
  (:mod:`.groups`) when ``groups`` is on. When a job's base demand does not
  fit the free GPUs, running elastic jobs of that pool give back their
  flexible GPUs (largest flexible share first) until it does (§5.2);
- heterogeneous training (``hetero_share`` of the jobs, :mod:`.hetero`):
  such a job that fits neither pool is placed last, across both, on the
  GPUs left (§6), its base demand on training servers first; its flexible
  workers then grow on the on-loan pool; the policy sets its speed factor;
- phase two, per pool: the running elastic jobs share the free GPUs plus
  their flexible GPUs by :func:`scheduling_opt.allocation.two_phase` (its
  MCKP phase, exact DP; linear scaling, §5) or
  :func:`scheduling_opt.allocation.afs` (the AFS baseline, §7.1); it runs
  only when the pool has free GPUs. Shrinks are applied before growths, in
  an order the engine can apply (:func:`sequence`); with groups a shrink
  gives back flexible workers first and a growth places flexible workers
  on the flexible group.

Aryl (EuroSys '22) §5, Algorithm 2. A call costs O(Q + S) for Q queued jobs
and S servers (a job is skipped without placement once a smaller one failed
on the same pools), plus the allocation solver when it runs.
"""

from __future__ import annotations

import bisect
import math
import time
from collections.abc import Callable

from scheduling_opt.allocation import (
    AllocationDecision,
    AllocationInput,
    afs,
    flexible_workers,
    two_phase,
)
from scheduling_opt.model import Job
from scheduling_opt.sim.cluster import FreeMap
from scheduling_opt.sim.cluster import Placement as SimPlacement
from scheduling_opt.sim.policies.aryl.groups import BASE, FLEXIBLE, ServerGroups
from scheduling_opt.sim.policies.aryl.hetero import hetero_capable, mixed_factor, mixed_worker
from scheduling_opt.sim.policies.aryl.pools import (
    bfd_place,
    bfd_start,
    grow,
    held,
    trim,
    worker_gpus,
)
from scheduling_opt.sim.policies.aryl.predict import DurationPredictor
from scheduling_opt.sim.policies.aryl.shape import LOAN, TRAIN, Shape, lent_pools, pool_keys
from scheduling_opt.sim.protocol import JobView, View
from scheduling_opt.sim.workload import SimJob
from scheduling_opt.solution import Solution

#: A running job's pool: training servers, on-loan servers, or both (heterogeneous).
MIXED = 2

Allocator = Callable[..., Solution[AllocationDecision]]
#: Phase two's allocation methods by name.
ALLOCATION_METHODS: dict[str, Allocator] = {"two-phase": two_phase, "afs": afs}
#: Phase one's orders.
ORDERS = ("sjf", "queue", "fifo")


#: One call's answer: starts, resizes, the change in busy GPUs, speed factors.
Schedule = tuple[
    list[tuple[int, SimPlacement]],
    list[tuple[int, SimPlacement]],
    int,
    list[tuple[int, float]],
]


class JobScheduler:
    """Phase one and phase two of Aryl's job scheduler over the two pools.

    Parameters
    ----------
    loan : bool
        Whether on-loan servers may hold jobs (the policy lends them).
    scale : bool
        Elastic scaling (else elastic jobs run at their nominal size).
    allocation : {"two-phase", "afs"}
        Phase two's allocation method.
    order : {"sjf", "queue", "fifo"}
        Phase one's order.
    any_gpu_share : float
        Share of inelastic jobs that may run on inference GPUs.
    predictor : DurationPredictor or None
        Phase one's running times: predicted at submission (the caller
        feeds it the finished jobs), or None for the trace's (an oracle).
    groups : bool
        §5.3's placement: elastic jobs on on-loan servers first, their base
        and flexible workers on separate server groups kept across calls;
        False: Table 6's naive BFD (elastic jobs on training servers first).
    hetero_share : float
        Share of the jobs that may train on both pools at once (§7.1).
    hetero_efficiency : float
        Their throughput, as a share of the sum of their GPUs' compute.
    """

    def __init__(
        self,
        *,
        loan: bool,
        scale: bool,
        allocation: str,
        order: str,
        any_gpu_share: float,
        predictor: DurationPredictor | None = None,
        groups: bool = False,
        hetero_share: float = 0.0,
        hetero_efficiency: float = 1.0,
    ) -> None:
        if allocation not in ALLOCATION_METHODS:
            raise ValueError(f"allocation must be two-phase or afs, got {allocation!r}")
        if order not in ORDERS:
            raise ValueError(f"order must be sjf, queue or fifo, got {order!r}")
        self.loan, self.scale, self.order = loan, scale, order
        self.allocator = ALLOCATION_METHODS[allocation]
        self.any_share = any_gpu_share
        self.k = 8
        self.loan_k = 8
        self.pools: list[list[int]] = [[], []]  # training servers, on-loan servers (sorted)
        self.queue: list[tuple[float, int]] = []  # (phase-one key, index), ascending
        self.pool_of: dict[int, int] = {}  # running job -> pool
        self.elastic: set[int] = set()  # running elastic jobs (when scaling)
        self.resizes = 0
        self.seconds = {"allocation": 0.0, "placement": 0.0}
        self.predictor = predictor
        self.predicted: dict[int, float] = {}  # job -> duration predicted at its submission
        self.groups = ServerGroups() if groups else None
        self.hetero_share, self.hetero_efficiency = hetero_share, hetero_efficiency
        # Per server (set by the policy): an inference server, its GPU type and compute.
        self.is_loan: list[bool] = []
        self.gpu_type: list[str] = []
        self.compute: list[float] = []
        # Per job (fixed by its shape and id): phase one's demand, elastic, pools, hetero.
        self.shapes: dict[int, Shape] = {}

    def forget(self, index: int) -> None:
        """Job ``index`` no longer runs (finished, evicted or preempted)."""
        self.pool_of.pop(index, None)
        self.elastic.discard(index)
        if self.groups is not None:
            self.groups.forget(index)

    def servers(self, pool: int) -> list[int]:
        """The servers of ``pool`` (ascending)."""
        return self.pools[pool]

    def per_server(self, pool: int) -> int:
        """GPUs per server of ``pool`` (K of the placement rule)."""
        return self.k if pool == TRAIN else self.loan_k

    def hetero(self, job: SimJob) -> bool:
        """Whether ``job`` may train on both pools at once (:func:`~.hetero.hetero_capable`)."""
        return self.loan and hetero_capable(job, self.hetero_share)

    def pools_for(self, job: SimJob) -> tuple[int, ...]:
        """The pools ``job`` may run on, in the order they are tried (§5.3, Table 6)."""
        if not self.loan or not self.pools[LOAN]:
            return (TRAIN,)
        return self._lent_pools(job)

    def _lent_pools(self, job: SimJob) -> tuple[int, ...]:
        """:meth:`pools_for` while servers are on loan."""
        return lent_pools(
            job, self.scale, self.groups is not None, self.any_share, self.hetero(job)
        )

    def shape(self, st: JobView) -> Shape:
        """Job ``st``'s phase-one facts, computed once (two hashes of its id): a :class:`Shape`."""
        found = self.shapes.get(st.index)
        if found is None:
            job = st.job
            elastic = self.scale and job.min_gpus < job.max_gpus
            demand = job.min_gpus if elastic else job.gpus
            found = Shape(demand, elastic, self._lent_pools(job), self.hetero(job))
            self.shapes[st.index] = found
        return found

    def home(self, placement: SimPlacement) -> int:
        """The pool of a placement: TRAIN, LOAN, or MIXED when it spans both."""
        loan = {self.is_loan[s] for s, _ in placement}
        return MIXED if len(loan) > 1 else (LOAN if True in loan else TRAIN)

    def enqueue(self, st: JobView, now: float) -> None:
        """Queue ``st`` under phase one's key (fixed while it waits: no progress)."""
        self.shape(st)
        if self.order == "sjf":  # running time at base demand (Algorithm 2's SortJobs)
            job = st.job
            low = job.min_gpus if self.scale else job.gpus
            if self.predictor is None:
                left = st.remaining(now)  # the trace's duration: an oracle
            else:
                if st.index not in self.predicted:  # once, at submission
                    self.predicted[st.index] = self.predictor.predict(job)
                left = max(self.predicted[st.index] - st.attained(now), 0.0)
            key = left * job.gpus / low
        else:
            key = float(st.index)
        bisect.insort(self.queue, (key, st.index))

    def schedule(self, view: View, plan: FreeMap) -> Schedule:
        """One call's phases on ``plan`` (the free map, updated).

        The starts carry their final placement (phase two may grow a job it
        just started); the resizes are in an order the engine can apply
        (:func:`sequence`); the busy change is the GPUs they take minus the
        GPUs they give back; the rates are the speed factors of
        heterogeneous jobs whose placement changed.
        """
        started = time.perf_counter()
        lent = set(self.pools[LOAN])
        if self.groups is not None:
            self.groups.refresh(plan, lent)
        current: dict[int, SimPlacement] = {}  # elastic jobs' placement as planned
        starts: list[tuple[int, SimPlacement]] = []
        started_items: list[tuple[float, int]] = []  # their queue entries
        blocked: dict[tuple[int, ...], int] = {}  # pools -> smallest demand that failed
        # Heterogeneous jobs that fit neither pool (queue entries): placed last (§6).
        late: list[tuple[float, int]] = []
        shapes = self.shapes
        lending = self.loan and bool(self.pools[LOAN])
        keys = pool_keys(lending, self.scale, self.groups is not None)
        rest = len(self.queue)  # the queue's position past the loop
        for position, item in enumerate(self.queue):
            if plan.total_free == 0 and not self.elastic:
                break
            index = item[1]
            demand, elastic, lent_pools, hetero = shapes[index]  # made by enqueue
            pools = lent_pools if lending else (TRAIN,)
            if demand >= blocked.get(pools, math.inf):
                if hetero:
                    late.append(item)
                continue  # a smaller job failed on these pools: this one fails too
            placed: SimPlacement | None = None
            for pool in pools:
                placed = self._start(plan, pool, demand, elastic)
                if placed is None and self.scale:
                    placed = self._make_room(view, plan, pool, demand, elastic, current)
                if placed is not None:
                    break
            if placed is None:
                if hetero:
                    late.append(item)
                if self.order == "fifo":
                    break  # head-of-line blocking
                blocked[pools] = demand
                if demand == 1 and all(blocked.get(k, 0) == 1 for k in keys):
                    rest = position + 1  # a 1-GPU job failed on every pools: all others skip
                    break
                continue
            self._begin(index, placed, elastic, plan, lent, starts, current)
            started_items.append(item)
        # The jobs the loop did not reach would each have been skipped (or, with
        # nothing free and nothing to shrink, the loop stopped): the heterogeneous
        # ones among them wait for the GPUs left, in queue order.
        reached = rest == len(self.queue) or not (plan.total_free or self.elastic)
        if not reached and self.loan and self.hetero_share > 0.0:
            late += [item for item in self.queue[rest:] if shapes[item[1]].hetero]
        for item in late if self.pools[LOAN] else ():
            demand, elastic, _, _ = shapes[item[1]]
            placed = self._start_mixed(plan, demand, elastic)
            if placed is not None:
                self._begin(item[1], placed, elastic, plan, lent, starts, current)
                started_items.append(item)
        self._dequeue(started_items)
        self.seconds["placement"] += time.perf_counter() - started
        if self.scale and self.elastic:
            self._phase_two(view, plan, current, lent)
        begun = dict(starts)
        moves: dict[int, tuple[SimPlacement, SimPlacement]] = {}
        for index, placement in current.items():
            if index in begun:
                begun[index] = placement
            elif placement != view.running[index].placement:
                moves[index] = (view.running[index].placement, placement)
        resize, delta = sequence(view, moves)
        delta += sum(held(p) for p in begun.values())
        self.resizes += len(moves)
        final = {**begun, **dict(resize)}  # the placements the engine will apply
        if self.groups is not None:
            for index in current:
                st = view.running.get(index) or view.pending[index]
                self.groups.settle(index, final.get(index, st.placement), st.job.min_gpus)
        for index, placement in final.items():
            self.pool_of[index] = self.home(placement)
        rates = self.rates(view, final)
        return list(begun.items()), resize, delta, rates

    def _dequeue(self, items: list[tuple[float, int]]) -> None:
        """Take ``items`` (entries of the queue, by identity) out of the sorted queue.

        O(log Q) to find each and a move of the entries after it; a key that
        does not compare to itself (a NaN) falls back to one O(Q) pass.
        """
        queue = self.queue
        for n, item in enumerate(items):
            pos = bisect.bisect_left(queue, item)
            if pos < len(queue) and queue[pos] is item:
                del queue[pos]
            else:
                gone = {id(x) for x in items[n:]}
                self.queue = [x for x in queue if id(x) not in gone]
                return

    def rates(self, view: View, final: dict[int, SimPlacement]) -> list[tuple[int, float]]:
        """The speed factors of the jobs of ``final`` whose factor changes (heterogeneous training)."""
        if self.hetero_share <= 0.0:
            return []
        out = []
        for index, placement in sorted(final.items()):
            st = view.running.get(index) or view.pending[index]
            factor = mixed_factor(placement, self.gpu_type, self.compute, self.hetero_efficiency)
            if factor != st.factor:
                out.append((index, factor))
        return out

    def _begin(
        self,
        index: int,
        placed: SimPlacement,
        elastic: bool,
        plan: FreeMap,
        lent: set[int],
        starts: list[tuple[int, SimPlacement]],
        current: dict[int, SimPlacement],
    ) -> None:
        """Record the start of job ``index`` on ``placed`` (base demand: the base group)."""
        if self.groups is not None:
            self.groups.joined(placed, plan, BASE, lent)
        plan.take(placed)
        starts.append((index, placed))
        self.pool_of[index] = self.home(placed)
        if elastic:
            self.elastic.add(index)
            current[index] = placed

    def _start(self, plan: FreeMap, pool: int, demand: int, elastic: bool) -> SimPlacement | None:
        """A placement of ``demand`` GPUs on ``pool``'s free GPUs (with the kept groups), or None."""
        servers = self.servers(pool)
        k = self.per_server(pool)
        if self.groups is None or pool != LOAN:
            return bfd_start(plan, servers, demand, k, elastic)
        return bfd_place(
            plan,
            servers,
            demand,
            worker_gpus(demand, k, elastic),
            loan=self.is_loan,
            groups=self.groups.in_use(plan),
            kind="base" if elastic else "inelastic",
        )

    def _start_mixed(self, plan: FreeMap, demand: int, elastic: bool) -> SimPlacement | None:
        """§6: a heterogeneous job on the GPUs left of both pools, training servers first."""
        servers = sorted(self.pools[TRAIN] + self.pools[LOAN])
        gpw = mixed_worker(demand, elastic, (self.k, self.loan_k))
        groups = self.groups.in_use(plan) if self.groups is not None else {}
        # Its base demand counts as inelastic workers: training servers first (§6).
        return bfd_place(
            plan, servers, demand, gpw, loan=self.is_loan, groups=groups, kind="inelastic"
        )

    def _trim(self, index: int, placement: SimPlacement, gpus: int) -> SimPlacement:
        """``placement`` cut to ``gpus``: flexible GPUs first with groups, else the fewest first.

        Without groups a job on both pools gives back its on-loan GPUs first
        (its flexible workers grow there, §6).
        """
        if self.groups is not None:
            return self.groups.trim(index, placement, gpus)
        if self.pool_of.get(index) != MIXED:
            return trim(placement, gpus)
        loan = tuple((s, g) for s, g in placement if self.is_loan[s])
        keep = tuple((s, g) for s, g in placement if not self.is_loan[s])
        if held(keep) >= gpus:
            return trim(keep, gpus)
        return tuple(sorted((*keep, *trim(loan, gpus - held(keep)))))

    def _running_elastic(
        self, view: View, pool: int, current: dict[int, SimPlacement]
    ) -> list[int]:
        members = (LOAN, MIXED) if pool == LOAN else (pool,)
        return sorted(
            i
            for i in self.elastic
            if self.pool_of.get(i) in members and (i in current or i in view.running)
        )

    def _placement(self, view: View, index: int, current: dict[int, SimPlacement]) -> SimPlacement:
        return current[index] if index in current else view.running[index].placement

    def _make_room(
        self,
        view: View,
        plan: FreeMap,
        pool: int,
        demand: int,
        elastic: bool,
        current: dict[int, SimPlacement],
    ) -> SimPlacement | None:
        """Shrink this pool's elastic jobs to base, largest flexible share first, until ``demand`` fits."""
        jobs = [
            (
                held(self._placement(view, i, current)) - view.running[i].job.min_gpus
                if i in view.running
                else 0,
                i,
            )
            for i in self._running_elastic(view, pool, current)
        ]
        flexible = sum(f for f, _ in jobs if f > 0)
        if sum(plan.free[s] for s in self.servers(pool)) + flexible < demand:
            return None
        undo: list[tuple[int, SimPlacement, dict[int, int] | None]] = []
        for f, index in sorted(jobs, key=lambda x: (-x[0], x[1])):
            if f <= 0:
                break
            before = self._placement(view, index, current)
            kept = None if self.groups is None else dict(self.groups.flex.get(index, {}))
            after = self._trim(index, before, view.running[index].job.min_gpus)
            plan.give(before)
            plan.take(after)
            current[index] = after
            undo.append((index, before, kept))
            placed = self._start(plan, pool, demand, elastic)
            if placed is not None:
                return placed
        for index, before, kept in reversed(undo):
            plan.give(current[index])
            plan.take(before)
            current[index] = before
            if self.groups is not None and kept is not None:
                self.groups.flex[index] = kept
        return None

    def _phase_two(
        self, view: View, plan: FreeMap, current: dict[int, SimPlacement], lent: set[int]
    ) -> None:
        """Share each pool's free GPUs and flexible GPUs among its elastic jobs (MCKP or AFS)."""
        now = view.now
        for pool in (TRAIN, LOAN):
            servers = self.servers(pool)
            free = sum(plan.free[s] for s in servers)
            if free == 0:
                continue
            ids = self._running_elastic(view, pool, current)
            if not ids:
                continue
            jobs, flexible = [], 0
            for i in ids:
                st = view.running.get(i) or view.pending[i]
                sj = st.job
                n = held(self._placement(view, i, current))
                flexible += n - sj.min_gpus
                at_max = max(st.remaining(now) * sj.gpus / sj.max_gpus, 1e-9)
                jobs.append(Job(str(i), sj.min_gpus, sj.max_gpus, at_max))
            if flexible == sum(j.max_workers - j.min_workers for j in jobs):
                continue  # every job is at its maximum already
            started = time.perf_counter()
            if self.allocator is two_phase:
                # Every job here runs, so Algorithm 2's phase one admits nothing and its
                # phase two alone decides: the same workers without simulating the plan.
                extra, _ = flexible_workers(jobs, free + flexible)
                workers = {j.id: j.min_workers + extra.get(j.id, 0) for j in jobs}
            else:
                inp = AllocationInput(
                    tuple(jobs), free + flexible, {j.id: j.min_workers for j in jobs}
                )
                decision = self.allocator(inp).decision
                assert decision is not None
                workers = dict(decision.workers)
            self.seconds["allocation"] += time.perf_counter() - started
            target = {int(k): v for k, v in workers.items()}
            # Shrinks first, then growths on what they and the free GPUs leave.
            for i in ids:
                before = self._placement(view, i, current)
                if target[i] < held(before):
                    after = self._trim(i, before, target[i])
                    plan.give(before)
                    plan.take(after)
                    current[i] = after
            for i in ids:
                before = self._placement(view, i, current)
                if target[i] > held(before):
                    after = self._grow(plan, i, before, servers, target[i] - held(before), lent)
                    plan.give(before)
                    plan.take(after)
                    current[i] = after

    def _grow(
        self,
        plan: FreeMap,
        index: int,
        before: SimPlacement,
        servers: list[int],
        extra: int,
        lent: set[int],
    ) -> SimPlacement:
        """``before`` plus up to ``extra`` flexible GPUs on ``servers`` (the flexible group first)."""
        if self.groups is None:
            return grow(plan, before, servers, extra)
        on_loan = bool(servers) and self.is_loan[servers[0]]
        if not on_loan:
            after = grow(plan, before, servers, extra)
            old = dict(before)
            self.groups.grown(
                index, tuple((s, g - old.get(s, 0)) for s, g in after if g > old.get(s, 0))
            )
            return after
        extra = min(extra, sum(plan.free[s] for s in servers))
        if extra <= 0:
            return before
        added = bfd_place(
            plan,
            servers,
            extra,
            1,
            loan=self.is_loan,
            groups=self.groups.in_use(plan),
            kind="flexible",
        )
        if added is None:  # 1-GPU workers on as many free GPUs: never refused
            return before
        self.groups.joined(added, plan, FLEXIBLE, lent)
        self.groups.grown(index, added)
        rows = dict(before)
        for s, g in added:
            rows[s] = rows.get(s, 0) + g
        return tuple(sorted(rows.items()))


def sequence(
    view: View, moves: dict[int, tuple[SimPlacement, SimPlacement]]
) -> tuple[list[tuple[int, SimPlacement]], int]:
    """Resizes in an order the engine can apply, and the change in busy GPUs.

    The engine applies resizes one by one, each on the GPUs free at its
    turn. So every job first shrinks to what its old and new placements
    share (always possible), then grows to the new one; a growth that does
    not fit at its turn (a cycle of moves) is dropped and the job keeps the
    shared part, which only leaves more GPUs free for the starts.
    """
    free = view.plan()
    out: list[tuple[int, SimPlacement]] = []
    delta = 0
    shared: dict[int, SimPlacement] = {}
    for index, (before, after) in sorted(moves.items()):
        mine = dict(after)
        common = tuple((s, min(g, mine[s])) for s, g in before if s in mine)
        job = view.running[index].job
        keep = common if held(common) >= job.min_gpus else before
        shared[index] = keep
        if keep != before:
            out.append((index, keep))
            free.give(before)
            free.take(keep)
            delta += held(keep) - held(before)
    for index, (_, after) in sorted(moves.items()):
        keep = shared[index]
        if after == keep:
            continue
        free.give(keep)
        if free.fits(after):
            free.take(after)
            out.append((index, after))
            delta += held(after) - held(keep)
        else:
            free.take(keep)
    return out, delta
