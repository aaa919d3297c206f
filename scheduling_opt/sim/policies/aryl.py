"""Aryl in the simulator: capacity loaning, Algorithm 1 reclaiming, two-phase elastic scaling.

The cluster is a training pool (servers available from the start) and an
inference pool (servers ``available=False``, lent by this policy; by default
2 GPUs at V100 speed each: Aryl §5.2 normalizes on-loan GPUs to training
GPUs, and 8 T4s are 2 V100s). Every ``interval`` (60 minutes: the
orchestrator runs "in a much larger interval" than the job scheduler, §3)
the inference scheduler's decision is read from the
:class:`~scheduling_opt.sim.policies.aryl_load.LoadCurve`: it keeps the most
servers it needs during the coming interval and lends the rest (§4: the
inference side alone decides how many). More to lend: the lowest-index idle
inference servers are lent (``Decision.capacity``). Fewer: N_R on-loan
servers are chosen by a :mod:`scheduling_opt.reclaim` solver (``aryl``,
Algorithm 1 with the free-server phase of §5.3, by default), the jobs it
preempts are preempted, the elastic jobs it scales in are resized, and the
servers, now empty, are taken back at the next call (the engine applies
capacity changes before resizes, so the return waits for the resizes: the
same instant when something was preempted, else ``RETURN_DELAY`` later).
After the curve's last sample no more ticks are scheduled.

Job scheduling (§5), at every call, non-preemptive:

- phase one, the jobs' base demand in ``order``: ``sjf`` (the default,
  Algorithm 2: running time at base demand, the trace's remaining work as
  an oracle, skipping the jobs that do not fit), ``queue`` (submit order,
  skipping: AFS as §7.1 runs it) or ``fifo`` (submit order, stopping at the
  first job that does not fit: the baseline). A job runs on one pool (no
  heterogeneous training, the Basic scenario): an inelastic job on the
  training pool, else on the on-loan pool if it may use any GPU type
  (``any_gpu_share`` of the jobs by a hash of the id, 21% in §2.1, plus
  every elastic job); an elastic job on the on-loan pool first, then the
  training pool (§5.3). Placement: :func:`~.aryl_pools.bfd_start`, the
  library's best-fit decreasing. When a job's base demand does not fit the
  free GPUs, running elastic jobs of that pool give back their flexible
  GPUs (largest flexible share first) until it does (§5.2: flexible
  workers' GPUs are available resources);
- phase two, per pool: the running elastic jobs share the free GPUs plus
  their flexible GPUs by :func:`scheduling_opt.allocation.two_phase` (its
  MCKP phase, exact DP; linear scaling, §5) or
  :func:`scheduling_opt.allocation.afs` (the AFS baseline, §7.1); it runs
  only when the pool has free GPUs. Shrinks are applied before growths.

Variants (the registry's names): ``aryl`` (loan + scale), ``aryl-scf``,
``aryl-random``, ``aryl-plus``, ``aryl-exact`` (reclaim method),
``aryl-loan-only``, ``aryl-scale-only``, ``aryl-fifo`` (loan + scale in
FIFO order: ours, to separate what SJF buys), and the paper's baselines
``fifo-no-loan`` (neither, FIFO) and ``afs`` (scale only, AFS allocation,
queue order).

Not modelled: the base/flexible server groups across calls (each start is
placed on the free GPUs alone), heterogeneous training, batch-size halving
on T4. Aryl (EuroSys '22) §3-§5, Appendix B, D. A call costs O(Q + S) for
Q queued jobs and S servers (a job is skipped without placement once a
smaller one failed on the same pools), plus the solvers when they run.
"""

from __future__ import annotations

import bisect
import hashlib
import math
import time
from collections.abc import Callable
from typing import Any

import numpy as np

from scheduling_opt.allocation import AllocationDecision, AllocationInput, afs, two_phase
from scheduling_opt.model import Cluster, GpuType, Job, Placement, PlacementRow, Server
from scheduling_opt.reclaim import (
    ReclaimDecision,
    ReclaimInput,
    aryl,
    aryl_plus,
    exact,
    random_servers,
    scf,
)
from scheduling_opt.sim.cluster import FreeMap
from scheduling_opt.sim.cluster import Placement as SimPlacement
from scheduling_opt.sim.policies.aryl_load import LoadCurve, load_curve
from scheduling_opt.sim.policies.aryl_pools import bfd_start, grow, held, trim
from scheduling_opt.sim.policy import Decision, JobView, View
from scheduling_opt.sim.workload import SimJob
from scheduling_opt.solution import Solution, Status

TRAIN, LOAN = 0, 1
#: Delay of a server's return after its scale-ins (trace units; 60 microseconds in minutes).
RETURN_DELAY = 1e-6

Reclaimer = Callable[..., Solution[ReclaimDecision]]
#: The reclaim solvers by method name.
RECLAIM_METHODS: dict[str, Reclaimer] = {
    "aryl": aryl,
    "scf": scf,
    "random": random_servers,
    "aryl-plus": aryl_plus,
    "exact": exact,
}
Allocator = Callable[..., Solution[AllocationDecision]]
ALLOCATION_METHODS: dict[str, Allocator] = {"two-phase": two_phase, "afs": afs}


def any_gpu_type(job: SimJob, share: float) -> bool:
    """Whether ``job`` may run on inference GPUs: elastic, or in ``share`` by a hash of its id.

    Examples
    --------
    >>> any_gpu_type(SimJob("1", 0.0, 1, 5.0, max_gpus=2), 0.0)
    True
    >>> any_gpu_type(SimJob("1", 0.0, 1, 5.0), 1.0), any_gpu_type(SimJob("1", 0.0, 1, 5.0), 0.0)
    (True, False)
    """
    if job.min_gpus < job.max_gpus or share >= 1.0:
        return True
    h = int.from_bytes(hashlib.sha256(f"aryl-any:{job.id}".encode()).digest()[:8], "big")
    return h / 2**64 < share


class ArylPolicy:
    """Aryl's loaning, reclaiming and elastic scheduling over a simulated cluster.

    Parameters
    ----------
    loan : bool
        Lend idle inference servers to training.
    scale : bool
        Elastic scaling (else elastic jobs run at their nominal size).
    reclaim : {"aryl", "scf", "random", "aryl-plus", "exact"}
        The reclaim solver.
    allocation : {"two-phase", "afs"}
        Phase two's allocation method.
    order : {"sjf", "queue", "fifo"}
        Phase one's order: shortest running time at base demand first,
        skipping the jobs that do not fit (Algorithm 2); submit order,
        skipping (AFS as §7.1 runs it); submit order, stopping at the first
        job that does not fit (the FIFO baseline).
    curve : LoadCurve, str or None
        The inference demand (a CSV path; None: the bundled curve).
    interval : float
        Orchestrator period (trace units).
    any_gpu_share : float
        Share of inelastic jobs that may run on inference GPUs.
    time_limit : float
        Seconds per reclaim solver call.
    seed : int
        Seed of the ``random`` reclaim and of ``aryl-plus``.
    name : str or None
        The run's label (default from the options).

    Examples
    --------
    >>> from scheduling_opt.sim import ClusterSpec, Workload, simulate
    >>> from scheduling_opt.sim.cluster import ServerSpec
    >>> c = ClusterSpec((ServerSpec(8), ServerSpec(8, "T4", 0.25, False)))
    >>> w = Workload.of([SimJob("a", 0.0, 8, 10.0), SimJob("b", 0.0, 8, 10.0, max_gpus=16)], "d")
    >>> idle = LoadCurve((0.0,), (0.0,))  # inference needs nothing: its server is lent
    >>> out = simulate(w, c, ArylPolicy(curve=idle, any_gpu_share=0.0))
    >>> out.end  # b runs on the lent T4 server, at a quarter of the speed
    (10.0, 40.0)

    References
    ----------
    Aryl (EuroSys '22) §3-§5, Appendix B and D.
    """

    def __init__(
        self,
        *,
        loan: bool = True,
        scale: bool = True,
        reclaim: str = "aryl",
        allocation: str = "two-phase",
        order: str = "sjf",
        curve: LoadCurve | str | None = None,
        interval: float = 60.0,
        any_gpu_share: float = 0.21,
        time_limit: float = 10.0,
        seed: int = 0,
        name: str | None = None,
    ) -> None:
        if reclaim not in RECLAIM_METHODS:
            raise ValueError(f"reclaim must be one of {sorted(RECLAIM_METHODS)}, got {reclaim!r}")
        if allocation not in ALLOCATION_METHODS:
            raise ValueError(f"allocation must be two-phase or afs, got {allocation!r}")
        if order not in ("sjf", "queue", "fifo"):
            raise ValueError(f"order must be sjf, queue or fifo, got {order!r}")
        if not interval > 0:
            raise ValueError(f"interval must be > 0, got {interval!r}")
        self.name = name or "aryl"
        self.loan, self.scale, self.order = loan, scale, order
        self.reclaimer = RECLAIM_METHODS[reclaim]
        self.allocator = ALLOCATION_METHODS[allocation]
        self.curve = curve if isinstance(curve, LoadCurve) else load_curve(curve)
        self.interval = interval
        self.any_share = any_gpu_share
        self.time_limit = time_limit
        self.rng = np.random.default_rng(seed)
        self.ready = False
        self.k = 8
        self.loan_k = 8
        self.size: list[int] = []
        self.total_gpus = self.training_gpus = 0
        self.pools: list[list[int]] = [[], []]  # training servers, on-loan servers (sorted)
        self.inference: list[int] = []
        self.returning: list[int] = []
        self.next_tick = -math.inf
        self.queue: list[tuple[float, int]] = []  # (phase-one key, index), ascending
        self.pool_of: dict[int, int] = {}  # running job -> pool
        self.elastic: set[int] = set()  # running elastic jobs (when scaling)
        self.last_t = math.nan
        self.busy = 0
        self.counts = dict.fromkeys(
            (
                "lends",
                "reclaims",
                "reclaimed_servers",
                "reclaim_preemptions",
                "reclaim_scale_ins",
                "collateral_gpus",
                "reclaim_proven",
                "resizes",
            ),
            0.0,
        )
        self.seconds = {"reclaim": 0.0, "allocation": 0.0, "placement": 0.0}
        self.area = {"busy": 0.0, "training": 0.0, "lent": 0.0, "inference": 0.0}

    # ------------------------------------------------------------------ bookkeeping

    def stats(self) -> dict[str, float]:
        """Counters: loans, reclaims and their preemptions, solver seconds, usage.

        ``training_usage`` is busy GPU-time over the training pool's plus the
        lent GPU-time (the ``utilization`` metric); ``overall_usage`` adds the
        inference demand's GPU-time and divides by every GPU of both
        clusters (Table 5's "Overall" column).
        """
        a = self.area
        everyone = a["training"] * self.total_gpus / max(self.training_gpus, 1)
        out = dict(self.counts)
        out.update({f"{k}_seconds": v for k, v in self.seconds.items()})
        out["lent_gpu_time"] = a["lent"]
        out["training_usage"] = a["busy"] / (a["training"] + a["lent"]) if a["training"] else 0.0
        out["overall_usage"] = (a["busy"] + a["inference"]) / everyone if everyone else 0.0
        return out

    def _init(self, view: View) -> None:
        self.ready = True
        self.k = view.cluster.gpus_per_server
        self.size = [spec.gpus for spec in view.cluster.servers]
        for s, spec in enumerate(view.cluster.servers):
            (self.pools[TRAIN] if spec.available else self.inference).append(s)
        self.total_gpus = sum(self.size)
        self.training_gpus = sum(self.size[s] for s in self.pools[TRAIN])
        self.loan_k = max((self.size[s] for s in self.inference), default=self.k)

    def _account(self, now: float) -> None:
        """Integrate busy, offered and inference GPU-time up to ``now``."""
        if self.last_t == self.last_t and now > self.last_t:
            dt = now - self.last_t
            lent = sum(self.size[s] for s in self.pools[LOAN]) + sum(
                self.size[s] for s in self.returning
            )
            self.area["busy"] += self.busy * dt
            self.area["training"] += self.training_gpus * dt
            self.area["lent"] += lent * dt
            self.area["inference"] += self._inference_area(self.last_t, now)
        self.last_t = now

    def _inference_area(self, a: float, b: float) -> float:
        c, n = self.curve, len(self.inference)
        if not n:
            return 0.0
        total, t = 0.0, a
        while t < b:
            nxt = min(c.next_change(t), b)
            total += c.needed(t, n) * self.loan_k * (nxt - t)
            t = nxt
        return total

    def _absorb(self, view: View) -> None:
        for st in view.finished:
            self.pool_of.pop(st.index, None)
            self.elastic.discard(st.index)
        for st in (*view.arrived, *view.evicted):
            self.pool_of.pop(st.index, None)
            self.elastic.discard(st.index)
            self._enqueue(st, view.now)

    # ------------------------------------------------------------------ decide

    def decide(self, view: View) -> Decision:
        now = view.now
        if not self.ready:
            self._init(view)
        self._account(now)
        self._absorb(view)
        capacity: list[tuple[int, int]] = []
        plan = view.plan()
        if self.returning:  # emptied by the last call's preemptions and scale-ins
            capacity += [(s, 0) for s in self.returning]
            for s, _ in capacity:
                plan.set_capacity(s, 0)
            self.returning = []
        if self.loan and now >= self.next_tick:
            self.next_tick = now + self.interval
            n = len(self.inference)
            target = n - self.curve.peak(now, now + self.interval, n)
            lent = self.pools[LOAN]
            if target < len(lent):
                reclaim = self._reclaim(view, len(lent) - target)
                return Decision(
                    preempt=reclaim.preempt,
                    capacity=tuple(capacity),
                    resize=reclaim.resize,
                    wake_at=now + RETURN_DELAY,
                )
            elif target > len(lent):
                taken = set(lent) | {s for s, _ in capacity}
                new = [s for s in self.inference if s not in taken][: target - len(lent)]
                for s in new:
                    capacity.append((s, self.size[s]))
                    plan.set_capacity(s, self.size[s])
                    bisect.insort(lent, s)
                self.counts["lends"] += len(new)
        starts, resize, busy_delta = self._schedule(view, plan)
        self.busy = sum(view.capacity) - view.free_total + busy_delta
        # After the curve's last sample the lent count cannot change: no more ticks
        # (a job that can never fit then ends the run with the engine's error).
        wake = self.next_tick if self.loan and now < self.curve.times[-1] else None
        return Decision(
            starts=tuple(starts), capacity=tuple(capacity), resize=tuple(resize), wake_at=wake
        )

    # ------------------------------------------------------------------ reclaim

    def _reclaim(self, view: View, n_reclaim: int) -> Decision:
        """Choose N_R on-loan servers; preempt and scale in; return them at the next call."""
        lent = self.pools[LOAN]
        rows: list[PlacementRow] = []
        jobs: list[Job] = []
        for index, pool in self.pool_of.items():
            if pool != LOAN:
                continue
            st = view.running[index]
            n = held(st.placement)
            low, high = (st.job.min_gpus, st.job.max_gpus) if self.scale else (n, n)
            jobs.append(Job(str(index), low, max(high, n), max(st.remaining(view.now), 1e-9)))
            rows += [PlacementRow(str(index), f"s{s}", g) for s, g in st.placement]
        servers = tuple(Server(f"s{s}", "T4", self.size[s], "inference", True) for s in lent)
        inp = ReclaimInput(
            Cluster((GpuType("T4", 0.25, 16.0),), servers),
            tuple(jobs),
            Placement(tuple(rows)),
            n_reclaim,
        )
        started = time.perf_counter()
        sol = self.reclaimer(inp, seed=self.rng, time_limit=self.time_limit)
        if sol.decision is None:  # an exact solver out of time with no incumbent
            sol = aryl(inp)
        self.seconds["reclaim"] += time.perf_counter() - started
        decision = sol.decision
        assert decision is not None
        returned = {int(s[1:]) for s in decision.servers}
        victims = tuple(sorted(int(j) for j in decision.preempted_jobs))
        resize: list[tuple[int, SimPlacement]] = []
        for job_id, _ in decision.scaled_in:
            index = int(job_id)
            kept = tuple((s, g) for s, g in view.running[index].placement if s not in returned)
            resize.append((index, kept))
        for index in victims:
            self.pool_of.pop(index, None)
            self.elastic.discard(index)
            self._enqueue(view.running[index], view.now)
        self.pools[LOAN] = [s for s in lent if s not in returned]
        self.returning = sorted(returned)
        c = self.counts
        c["reclaims"] += 1
        c["reclaimed_servers"] += len(returned)
        c["reclaim_preemptions"] += len(victims)
        c["reclaim_scale_ins"] += len(resize)
        c["collateral_gpus"] += decision.collateral_gpus
        c["reclaim_proven"] += sol.status is Status.OPTIMAL
        self.busy = (
            sum(view.capacity)
            - view.free_total
            - sum(held(view.running[i].placement) for i in victims)
            - sum(held(view.running[i].placement) - held(p) for i, p in resize)
        )
        return Decision(preempt=victims, resize=tuple(resize))

    # ------------------------------------------------------------------ schedule

    def _servers(self, pool: int) -> list[int]:
        return self.pools[pool]

    def _per_server(self, pool: int) -> int:
        return self.k if pool == TRAIN else self.loan_k

    def _pools_for(self, job: SimJob) -> tuple[int, ...]:
        if not self.loan or not self.pools[LOAN]:
            return (TRAIN,)
        if self.scale and job.min_gpus < job.max_gpus:
            return (LOAN, TRAIN)
        return (TRAIN, LOAN) if any_gpu_type(job, self.any_share) else (TRAIN,)

    def _enqueue(self, st: JobView, now: float) -> None:
        """Queue ``st`` under phase one's key (fixed while it waits: no progress)."""
        if self.order == "sjf":  # running time at base demand (Algorithm 2's SortJobs)
            job = st.job
            low = job.min_gpus if self.scale else job.gpus
            key = st.remaining(now) * job.gpus / low
        else:
            key = float(st.index)
        bisect.insort(self.queue, (key, st.index))

    def _schedule(
        self, view: View, plan: FreeMap
    ) -> tuple[list[tuple[int, SimPlacement]], list[tuple[int, SimPlacement]], int]:
        started = time.perf_counter()
        current: dict[int, SimPlacement] = {}  # elastic jobs' placement as planned
        starts: list[tuple[int, SimPlacement]] = []
        started_ids: set[int] = set()
        blocked: dict[tuple[int, ...], int] = {}  # pools -> smallest demand that failed
        for _, index in self.queue:
            if plan.total_free == 0 and not self.elastic:
                break
            st = view.pending[index]
            job = st.job
            elastic = self.scale and job.min_gpus < job.max_gpus
            demand = job.min_gpus if elastic else job.gpus
            pools = self._pools_for(job)
            if demand >= blocked.get(pools, math.inf):
                continue  # a smaller job failed on these pools: this one fails too
            placed: SimPlacement | None = None
            for pool in pools:
                servers = self._servers(pool)
                placed = bfd_start(plan, servers, demand, self._per_server(pool), elastic)
                if placed is None and self.scale:
                    placed = self._make_room(view, plan, pool, demand, elastic, current)
                if placed is not None:
                    break
            if placed is None:
                if self.order == "fifo":
                    break  # head-of-line blocking
                blocked[pools] = demand
                continue
            plan.take(placed)
            starts.append((index, placed))
            started_ids.add(index)
            self.pool_of[index] = pool
            if elastic:
                self.elastic.add(index)
                current[index] = placed
        if started_ids:
            self.queue = [item for item in self.queue if item[1] not in started_ids]
        self.seconds["placement"] += time.perf_counter() - started
        if self.scale and self.elastic:
            self._phase_two(view, plan, current)
        begun = dict(starts)
        moves: dict[int, tuple[SimPlacement, SimPlacement]] = {}
        for index, placement in current.items():
            if index in begun:
                begun[index] = placement
            elif placement != view.running[index].placement:
                moves[index] = (view.running[index].placement, placement)
        resize, delta = _sequence(view, moves)
        delta += sum(held(p) for p in begun.values())
        self.counts["resizes"] += len(moves)
        return list(begun.items()), resize, delta

    def _running_elastic(
        self, view: View, pool: int, current: dict[int, SimPlacement]
    ) -> list[int]:
        return sorted(
            i
            for i in self.elastic
            if self.pool_of.get(i) == pool and (i in current or i in view.running)
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
        if sum(plan.free[s] for s in self._servers(pool)) + flexible < demand:
            return None
        undo: list[tuple[int, SimPlacement]] = []
        for f, index in sorted(jobs, key=lambda x: (-x[0], x[1])):
            if f <= 0:
                break
            before = self._placement(view, index, current)
            after = trim(before, view.running[index].job.min_gpus)
            plan.give(before)
            plan.take(after)
            current[index] = after
            undo.append((index, before))
            placed = bfd_start(plan, self._servers(pool), demand, self._per_server(pool), elastic)
            if placed is not None:
                return placed
        for index, before in reversed(undo):
            plan.give(current[index])
            plan.take(before)
            current[index] = before
        return None

    def _phase_two(self, view: View, plan: FreeMap, current: dict[int, SimPlacement]) -> None:
        """Share each pool's free GPUs and flexible GPUs among its elastic jobs (MCKP or AFS)."""
        now = view.now
        for pool in (TRAIN, LOAN):
            servers = self._servers(pool)
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
            inp = AllocationInput(tuple(jobs), free + flexible, {j.id: j.min_workers for j in jobs})
            decision = self.allocator(inp).decision
            self.seconds["allocation"] += time.perf_counter() - started
            assert decision is not None
            target = {int(k): v for k, v in decision.workers.items()}
            # Shrinks first, then growths on what they and the free GPUs leave.
            for i in ids:
                before = self._placement(view, i, current)
                if target[i] < held(before):
                    after = trim(before, target[i])
                    plan.give(before)
                    plan.take(after)
                    current[i] = after
            for i in ids:
                before = self._placement(view, i, current)
                if target[i] > held(before):
                    after = grow(plan, before, servers, target[i] - held(before))
                    plan.give(before)
                    plan.take(after)
                    current[i] = after


#: The variants: name -> fixed options.
VARIANTS: dict[str, dict[str, Any]] = {
    "aryl": {},
    "aryl-scf": {"reclaim": "scf"},
    "aryl-random": {"reclaim": "random"},
    "aryl-plus": {"reclaim": "aryl-plus"},
    "aryl-exact": {"reclaim": "exact"},
    "aryl-loan-only": {"scale": False},
    "aryl-scale-only": {"loan": False},
    "aryl-fifo": {"order": "fifo"},
    "fifo-no-loan": {"loan": False, "scale": False, "order": "fifo"},
    "afs": {"loan": False, "allocation": "afs", "order": "queue"},
}


def _sequence(
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
