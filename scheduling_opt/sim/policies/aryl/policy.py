"""Aryl in the simulator: capacity loaning, Algorithm 1 reclaiming, two-phase elastic scaling.

The cluster is a training pool (servers available from the start) and an
inference pool (servers ``available=False``, lent by this policy; by default
2 GPUs at V100 speed each: Aryl §5.2 normalizes on-loan GPUs to training
GPUs, and 8 T4s are 2 V100s). Every ``interval`` (60 minutes: the
orchestrator runs "in a much larger interval" than the job scheduler, §3)
the inference scheduler's decision is read from the
:class:`~scheduling_opt.sim.policies.aryl.load.LoadCurve`: it keeps the most
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

Job scheduling (§5), at every call, non-preemptive: phase one in SJF order
(Algorithm 2) on running times predicted at submission from the jobs
finished so far (:mod:`~scheduling_opt.sim.policies.aryl.predict`; Aryl's
profiler predicts them too, §6), phase two by the MCKP allocation, in
:mod:`~scheduling_opt.sim.policies.aryl.jobs`; the reclaim solver's input
and answer in :mod:`~scheduling_opt.sim.policies.aryl.reclaim`.

Variants (the registry's names): ``aryl`` (loan + scale), ``aryl-scf``,
``aryl-random``, ``aryl-plus``, ``aryl-exact`` (reclaim method),
``aryl-loan-only``, ``aryl-scale-only``, ``aryl-fifo`` (loan + scale in
FIFO order: ours, to separate what SJF buys), ``aryl-oracle`` (SJF on the
trace's durations, an oracle: what perfect prediction buys), and the
paper's baselines
``fifo-no-loan`` (neither, FIFO) and ``afs`` (scale only, AFS allocation,
queue order).

The base and flexible server groups of §5.3 are kept across calls
(``groups``, :mod:`~scheduling_opt.sim.policies.aryl.groups`; off: Table
6's naive BFD); heterogeneous training (``hetero_share``,
``hetero_efficiency``: the Advanced and Ideal scenarios of §7.1,
:mod:`~scheduling_opt.sim.policies.aryl.hetero`) sets the speed factor
(``Decision.rate``) of a job placed on both pools. Not modelled: batch-size
halving on T4 (Appendix E: a normalized on-loan GPU runs at V100 speed).
Aryl (EuroSys '22) §3-§6, Appendix A, B, D. A call costs O(Q + S) for Q
queued jobs and S servers, plus the solvers when they run.
"""

from __future__ import annotations

import bisect
import math

import numpy as np

from scheduling_opt.sim.policies.aryl.groups import FLEXIBLE
from scheduling_opt.sim.policies.aryl.hetero import ADVANCED_EFFICIENCY, mixed_factor
from scheduling_opt.sim.policies.aryl.jobs import MIXED, JobScheduler
from scheduling_opt.sim.policies.aryl.load import LoadCurve, load_curve
from scheduling_opt.sim.policies.aryl.pools import held
from scheduling_opt.sim.policies.aryl.predict import DurationPredictor
from scheduling_opt.sim.policies.aryl.reclaim import RECLAIM_METHODS, reclaim_servers
from scheduling_opt.sim.policies.aryl.shape import LOAN, TRAIN, any_gpu_type
from scheduling_opt.sim.protocol import Decision, View

__all__ = ["RECLAIM_METHODS", "RETURN_DELAY", "ArylPolicy", "any_gpu_type"]

#: Delay of a server's return after its scale-ins (trace units; 60 microseconds in minutes).
RETURN_DELAY = 1e-6


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
    durations : {"predicted", "oracle"}
        SJF's running times: predicted at submission from the finished
        jobs (:mod:`.aryl_predict`), or the trace's (an oracle, the
        ``aryl-oracle`` variant).
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
    groups : bool
        §5.3: elastic jobs on on-loan servers first, their base and flexible
        workers on server groups kept across calls (False: Table 6's naive
        BFD, elastic jobs on training servers first like inelastic ones). Only
        when loaning: without on-loan servers there are no groups to keep.
    hetero_share : float
        Share of the jobs that may train on training and on-loan GPUs at
        once (0: Basic; 0.1: §7.1's Advanced; 1: its Ideal).
    hetero_efficiency : float
        Their throughput as a share of the sum of their GPUs' compute
        (Appendix A: 0.7; the Ideal scenario: 1).
    name : str or None
        The run's label (default from the options).

    Examples
    --------
    >>> from scheduling_opt.sim import ClusterSpec, Workload, simulate
    >>> from scheduling_opt.sim import SimJob
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
        durations: str = "predicted",
        curve: LoadCurve | str | None = None,
        interval: float = 60.0,
        any_gpu_share: float = 0.21,
        time_limit: float = 10.0,
        seed: int = 0,
        groups: bool = True,
        hetero_share: float = 0.0,
        hetero_efficiency: float = ADVANCED_EFFICIENCY,
        name: str | None = None,
    ) -> None:
        if reclaim not in RECLAIM_METHODS:
            raise ValueError(f"reclaim must be one of {sorted(RECLAIM_METHODS)}, got {reclaim!r}")
        if not interval > 0:
            raise ValueError(f"interval must be > 0, got {interval!r}")
        if durations not in ("predicted", "oracle"):
            raise ValueError(f"durations must be predicted or oracle, got {durations!r}")
        self.name = name or "aryl"
        self.predictor = DurationPredictor() if durations == "predicted" else None
        self.jobs = JobScheduler(
            loan=loan,
            scale=scale,
            allocation=allocation,
            order=order,
            any_gpu_share=any_gpu_share,
            predictor=self.predictor,
            groups=groups and loan,
            hetero_share=hetero_share,
            hetero_efficiency=hetero_efficiency,
        )
        self.loan, self.scale = loan, scale
        self.reclaimer = RECLAIM_METHODS[reclaim]
        self.curve = curve if isinstance(curve, LoadCurve) else load_curve(curve)
        self.interval = interval
        self.time_limit = time_limit
        self.rng = np.random.default_rng(seed)
        self.ready = False
        self.size: list[int] = []
        self.total_gpus = self.training_gpus = 0
        self.inference: list[int] = []
        self.returning: list[int] = []
        self.next_tick = -math.inf
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
            ),
            0.0,
        )
        self.reclaim_seconds = 0.0
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
        out["resizes"] = float(self.jobs.resizes)
        out["reclaim_seconds"] = self.reclaim_seconds
        out.update({f"{k}_seconds": v for k, v in self.jobs.seconds.items()})
        out["lent_gpu_time"] = a["lent"]
        out["training_usage"] = a["busy"] / (a["training"] + a["lent"]) if a["training"] else 0.0
        out["overall_usage"] = (a["busy"] + a["inference"]) / everyone if everyone else 0.0
        return out

    def _init(self, view: View) -> None:
        self.ready = True
        jobs = self.jobs
        jobs.k = view.cluster.gpus_per_server
        self.size = [spec.gpus for spec in view.cluster.servers]
        jobs.is_loan = [not spec.available for spec in view.cluster.servers]
        jobs.gpu_type = [spec.gpu_type for spec in view.cluster.servers]
        jobs.compute = [spec.compute for spec in view.cluster.servers]
        for s, spec in enumerate(view.cluster.servers):
            (jobs.pools[TRAIN] if spec.available else self.inference).append(s)
        self.total_gpus = sum(self.size)
        self.training_gpus = sum(self.size[s] for s in jobs.pools[TRAIN])
        jobs.loan_k = max((self.size[s] for s in self.inference), default=jobs.k)

    def _account(self, now: float) -> None:
        """Integrate busy, offered and inference GPU-time up to ``now``."""
        if self.last_t == self.last_t and now > self.last_t:
            dt = now - self.last_t
            lent = sum(self.size[s] for s in self.jobs.pools[LOAN]) + sum(
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
            total += c.needed(t, n) * self.jobs.loan_k * (nxt - t)
            t = nxt
        return total

    def _absorb(self, view: View) -> None:
        jobs = self.jobs
        for st in view.finished:
            jobs.forget(st.index)
            if self.predictor is not None:  # known before this instant's arrivals are keyed
                self.predictor.observe(st.job)
        for st in (*view.arrived, *view.evicted):
            jobs.forget(st.index)
            jobs.enqueue(st, view.now)

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
            lent = self.jobs.pools[LOAN]
            if target < len(lent):
                reclaim = self._reclaim(view, len(lent) - target)
                return Decision(
                    preempt=reclaim.preempt,
                    capacity=tuple(capacity),
                    resize=reclaim.resize,
                    rate=reclaim.rate,
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
        starts, resize, busy_delta, rate = self.jobs.schedule(view, plan)
        self.busy = sum(view.capacity) - view.free_total + busy_delta
        # After the curve's last sample the lent count cannot change: no more ticks
        # (a job that can never fit then ends the run with the engine's error).
        wake = self.next_tick if self.loan and now < self.curve.times[-1] else None
        return Decision(
            starts=tuple(starts),
            capacity=tuple(capacity),
            resize=tuple(resize),
            rate=tuple(rate),
            wake_at=wake,
        )

    # ------------------------------------------------------------------ reclaim

    def _reclaim(self, view: View, n_reclaim: int) -> Decision:
        """Choose N_R on-loan servers; preempt and scale in; return them at the next call.

        With groups the flexible group is listed first: the reclaim solvers
        break ties by the order of the servers, so among servers whose
        return preempts nobody the flexible group goes first (§5.3: "Aryl
        can release the server group for flexible demands first").
        """
        jobs = self.jobs
        lent = jobs.pools[LOAN]
        order = lent
        if jobs.groups is not None:
            flexible = jobs.groups.group
            order = sorted(lent, key=lambda s: (flexible.get(s) != FLEXIBLE, s))
        out = reclaim_servers(
            view,
            order,
            [index for index, pool in jobs.pool_of.items() if pool in (LOAN, MIXED)],
            self.size,
            n_reclaim,
            scale=self.scale,
            reclaimer=self.reclaimer,
            rng=self.rng,
            time_limit=self.time_limit,
        )
        self.reclaim_seconds += out.seconds
        for index in out.preempt:
            jobs.forget(index)
            jobs.enqueue(view.running[index], view.now)
        returned = set(out.returned)
        jobs.pools[LOAN] = [s for s in lent if s not in returned]
        rate = []
        for index, kept in out.resize:
            st = view.running[index]
            jobs.pool_of[index] = jobs.home(kept)
            if jobs.groups is not None:
                jobs.groups.settle(index, kept, st.job.min_gpus)
            if jobs.hetero_share > 0.0:
                factor = mixed_factor(kept, jobs.gpu_type, jobs.compute, jobs.hetero_efficiency)
                if factor != st.factor:
                    rate.append((index, factor))
        self.returning = list(out.returned)
        c = self.counts
        c["reclaims"] += 1
        c["reclaimed_servers"] += len(out.returned)
        c["reclaim_preemptions"] += len(out.preempt)
        c["reclaim_scale_ins"] += len(out.resize)
        c["collateral_gpus"] += out.collateral_gpus
        c["reclaim_proven"] += out.proven
        self.busy = (
            sum(view.capacity)
            - view.free_total
            - sum(held(view.running[i].placement) for i in out.preempt)
            - sum(held(view.running[i].placement) - held(p) for i, p in out.resize)
        )
        return Decision(preempt=out.preempt, resize=out.resize, rate=tuple(rate))
