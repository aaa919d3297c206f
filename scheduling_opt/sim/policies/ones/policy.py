"""ONES in the simulator: the online evolutionary batch-size search at every scheduling event.

At every call (a job arrived or finished, or the ``interval`` tick) the
unfinished jobs become a :class:`~scheduling_opt.batch_size.BatchSizeInput`:
the usable GPUs as servers, per job its epoch size, its current batch-size
limit R_j, largest local batch, processed samples and seconds run, its
throughput model (:mod:`~scheduling_opt.sim.ones_workload`), and the
Beta progress model's beta (predicted epochs to go: the task's prior mean
epochs minus the epochs done, clipped to >= 1). The library's solver picks
each job's GPU count and batch: ``ones`` = :func:`~scheduling_opt.batch_size.ones_step`
with the previous step's population carried over (ONES §3.2.2; the online
search continues, ``generations`` per call); ``exact`` =
:func:`~scheduling_opt.batch_size.exact` within a budget of CP-SAT's
deterministic time per call (``work_limit``, :data:`EXACT_WORK`), so that
the same run gives the same schedule on any load; a call it stops reports
``time_limit`` and the policy uses its incumbent (at worst the greedy
fill), counted in :meth:`Ones.stats` (``work_limited``). A clock limit
(``time_limit``, :data:`EXACT_CLOCK` s) stays as a guard against a
runaway call; a call it stops is counted apart (``clock_limited``): such a
run depends on the load (none did in the measured runs, docs/simulation.md). The counts become preemptions (0 GPUs), shrinks, growths
and starts; the batch for the job's actual placement (the library's table
``batch[j, c, spread]``) sets its speed through ``Decision.rate``:
X(B, c, spread) / X(B0, c0) over the engine's placement speed.

Limit policies (§3.3.2, :mod:`~scheduling_opt.batch_size.limits`): on
arrival R = min(B0, m) and the job is in warm-up (one GPU) until its first
epoch ends; at each epoch end of a running job R = ceil(2R / ceil(sigma T
+ 1)) (scale-up, and scale-down for a job that ran T seconds; sigma = the
arrival rate, 1/30 s); a job still waiting after a call halves R (resume).
Reading chosen where the paper is silent: R never drops below the Start
limit min(B0, m) (read literally, scale-down would push a long job to one
sample per step) nor rises above ``max_gpus`` x m; limits are updated at the
calls, for every epoch ended since the last one.

Placement (ours, the paper deploys the genome's GPUs): a running job keeps
its GPUs; a shrink gives back GPUs from its smallest share first; a growth
takes free GPUs on its own servers first, then on the servers with the
most free GPUs; a start takes the best-fitting server, else the servers
with the most free GPUs. So no job migrates; the spread the engine charges
is the actual one. The interval: ONES deploys a new schedule once every
running job finished an epoch (§3.2.2 Update) and responds to arrivals at
once (refresh); here every arrival and completion is a call, plus a tick
every ``interval`` seconds (default 60 s, one to a few epochs of most tasks)
so limits follow the epochs. Cost per call: building the input,
O(sum_j cap_j min(m_j, R_j)), plus the search, O(generations K (G log G +
J servers)).

:class:`FixedBatch` is the paper's static contrast: each job keeps its
submitted batch and GPU count; at each call the jobs run in order of
smallest predicted remaining utilization c0 x ||D|| beta / X(B0, c0) (SRUF,
ONES' own priority, §3.2.1) as long as their GPUs fit, lower-ranked
running jobs preempted.
"""

from __future__ import annotations

import math
import time
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from scheduling_opt.batch_size import (
    BatchSizeInput,
    JobState,
    OnesConfig,
    Population,
    Schedule,
    after_epoch,
    exact,
    greedy,
    ones_step,
    resume_limit,
    start_limit,
)
from scheduling_opt.model import BatchInfo, Cluster, GpuType, Job, Server
from scheduling_opt.sim.cluster import FreeMap, Placement
from scheduling_opt.sim.ones_workload import GPUS_PER_SERVER, JobModel, job_model
from scheduling_opt.sim.protocol import Decision, JobView, View
from scheduling_opt.solution import Status

#: Relative change of a speed factor below which it is not re-sent.
_SAME = 1e-12
#: CP-SAT's deterministic time per ``ones-exact`` call (units of about 1-3 s
#: of CPU): 14x the most a call of the full ONES workload needed (0.07).
EXACT_WORK = 1.0
#: Seconds per ``ones-exact`` call on the clock: a guard only, far above what
#: EXACT_WORK takes on this loaded machine (a stop by it is counted apart).
EXACT_CLOCK = 60.0


@dataclass(slots=True)
class _Track:
    """What the policy keeps per job between calls (ONES' job state)."""

    model: JobModel
    limit: int
    warm: bool = True
    epochs: int = 0  # epochs ended at the last update
    rejected: bool = False
    total: float = field(default=0.0)  # samples to convergence (known only as work)


def placement_spread(placement: Placement) -> bool:
    """Whether ``placement`` spans more than one server.

    Examples
    --------
    >>> placement_spread(((0, 2),)), placement_spread(((0, 2), (3, 1)))
    (False, True)
    """
    return len(placement) > 1


def place(plan: FreeMap, gpus: int, prefer: Placement = ()) -> Placement:
    """A placement of ``gpus`` GPUs on ``plan``'s free GPUs, taken from ``plan``.

    One server when one has room: the tightest fit, the job's own servers
    (``prefer``) first on ties; else the servers of ``prefer``, then those
    with the most free GPUs. The caller checked that ``plan`` has ``gpus``
    free GPUs (and gave back the job's own GPUs for a resize). O(servers log
    servers).

    Examples
    --------
    >>> plan = FreeMap([4, 4, 4])
    >>> plan.take(((0, 3), (1, 1)))
    >>> place(plan, 3)  # server 1 has exactly 3 free
    ((1, 3),)
    >>> place(plan, 5, prefer=((0, 1),))  # no server has 5: server 0's 1, then server 2's 4
    ((0, 1), (2, 4))
    """
    free = plan.free
    fits = [(free[s] - gpus, s not in dict(prefer), s) for s in range(len(free)) if free[s] >= gpus]
    if fits:
        new: Placement = ((min(fits)[2], gpus),)
    else:
        own = {s for s, _ in prefer}
        order = sorted(range(len(free)), key=lambda s: (s not in own, -free[s], s))
        held: dict[int, int] = {}
        need = gpus
        for s in order:
            take = min(need, free[s])
            if take:
                held[s] = take
                need -= take
            if need == 0:
                break
        if need:
            raise ValueError(f"no room for {gpus} GPUs")
        new = tuple(sorted(held.items()))
    plan.take(new)
    return new


#: A GPU that adds less than this share of a job's throughput is not given (see useful_gpus).
GAIN = 0.01


def useful_gpus(model: JobModel, limit: int, most: int) -> int:
    """The fewest GPUs (<= ``most``) within :data:`GAIN` of the job's best throughput at ``limit``.

    At c GPUs the batch is min(``limit``, c m) split evenly, spread when c
    exceeds a server. Beyond this count a GPU adds (almost) nothing: with a
    fixed global batch the throughput stops growing (ONES §2.2, Figure 2).

    Examples
    --------
    >>> from scheduling_opt.sim.workload import SimJob
    >>> m = job_model(SimJob("0", 0.0, 1, 10.0, model="resnet18/cifar10/20000"))
    >>> useful_gpus(m, 128, 16), useful_gpus(m, 2048, 16)  # 2,973 samples/s on 3, 2,991 on 4
    (3, 16)
    """
    c = np.arange(1, most + 1, dtype=np.float64)
    m = model.task.max_local
    batch = np.minimum(float(limit), c * m)
    local = np.ceil(batch / c)
    x = model.task.throughput.throughput(batch, local, c, (c > GPUS_PER_SERVER).astype(float))
    return int(np.argmax(x >= (1.0 - GAIN) * x.max())) + 1


class _Base:
    """Shared state of the ONES policies: job tracks, limits, the beta predictor, ticks."""

    name = "ones-base"

    def __init__(self, *, interval: float, sigma: float) -> None:
        if not interval > 0 or not sigma >= 0:
            raise ValueError("interval must be > 0 and sigma >= 0")
        self.interval = interval
        #: A schedule is deployed every interval while jobs are left (sim/limits.py counts them).
        self.period = interval
        self.sigma = sigma
        self.tracks: dict[int, _Track] = {}
        self.last = -math.inf
        self.calls = 0
        self.solver_seconds = 0.0

    def _tick(self, now: float) -> float:
        return (math.floor(now / self.interval + 1e-9) + 1) * self.interval

    def _samples(self, st: JobView, now: float) -> float:
        tr = self.tracks[st.index]
        return tr.total * min(1.0, st.attained(now) / st.job.work)

    def beta(self, st: JobView, now: float) -> float:
        """Predicted epochs to go: the task's prior mean epochs minus epochs done (>= 1)."""
        tr = self.tracks[st.index]
        done = self._samples(st, now) / tr.model.epoch_size
        return max(tr.model.task.prior_epochs - done, 1.0)

    def _refresh(self, view: View) -> list[JobView] | None:
        """Update tracks and limits; the unfinished jobs, or None for a follow-up call."""
        now = view.now
        for st in view.finished:
            self.tracks.pop(st.index, None)
        if now == self.last and not (view.arrived or view.finished or view.evicted):
            return None  # the follow-up of our own preemptions: nothing new
        self.last = now
        for st in view.arrived:
            model = job_model(st.job)
            limit = start_limit(model.batch0, model.task.max_local)
            self.tracks[st.index] = _Track(model, limit, total=model.total_samples(st.job.work))
        live = sorted((*view.pending.values(), *view.running.values()), key=lambda s: s.index)
        for st in live:
            tr = self.tracks[st.index]
            cap = max(st.job.max_gpus * tr.model.task.max_local, tr.model.batch0)
            if tr.warm:
                if st.executed(now) <= 0:
                    continue  # still waiting for its first GPU: one GPU's batch
                tr.warm = False
            if st.placement:
                epochs = int(self._samples(st, now) // tr.model.epoch_size)
                for _ in range(tr.epochs, epochs):
                    tr.limit = after_epoch(tr.limit, st.executed(now), self.sigma, cap)
                tr.epochs = max(tr.epochs, epochs)
            elif tr.rejected:
                tr.limit = resume_limit(tr.limit, rejected=True)
            tr.limit = max(tr.limit, tr.model.batch0)
        return live

    def stats(self) -> dict[str, float]:
        """Counters: calls that ran a solver, solver seconds."""
        return {"calls": float(self.calls), "solver_seconds": self.solver_seconds}


class Ones(_Base):
    """ONES: the library's batch-size solver every call, applied as GPUs and speed factors.

    Parameters
    ----------
    method : {"ones", "exact"}
        ``ones``: the online evolutionary search (population carried over);
        ``exact``: the exact method within ``work_limit`` (``ones-exact``).
    interval : float
        Seconds between ticks (limits follow the epochs ended).
    generations : int
        Search generations per call (``ones``).
    population : int or None
        Population K (None: the GPUs, ONES' suggestion).
    time_limit : float or None
        Solver seconds per call (None: 10 for ``ones``, whose generations
        decide the answer, so runs are reproducible; :data:`EXACT_CLOCK`
        for ``exact``, a guard behind its work budget).
    work_limit : float or None
        ``exact``: CP-SAT's deterministic time per call (None:
        :data:`EXACT_WORK`); unused by ``ones``.
    sigma : float
        The scale-down factor (ONES: the arrival rate, 1 / 30 s).
    seed : int
        Seed of the search (a generator carried across calls).

    Examples
    --------
    >>> from scheduling_opt.sim import ClusterSpec, simulate
    >>> from scheduling_opt.sim.workload import SimJob, Workload
    >>> w = Workload.of([SimJob("0", 0.0, 1, 300.0, model="resnet18/cifar10/20000",
    ...                         min_gpus=1, max_gpus=4)], "demo")
    >>> out = simulate(w, ClusterSpec.uniform(1, 4), Ones(generations=2))
    >>> out.end[0] < 300.0  # grew to 4 GPUs with a larger batch after warm-up
    True

    References
    ----------
    ONES (Bian et al., SC 2021), §3.2 (search), §3.3.2 (limits), §4.2.
    """

    def __init__(
        self,
        *,
        method: str = "ones",
        interval: float = 60.0,
        generations: int = 10,
        population: int | None = None,
        time_limit: float | None = None,
        work_limit: float | None = None,
        sigma: float = 1.0 / 30.0,
        seed: int = 0,
    ) -> None:
        if method not in ("ones", "exact"):
            raise ValueError(f"method must be ones or exact, got {method!r}")
        super().__init__(interval=interval, sigma=sigma)
        self.name = "ones" if method == "ones" else "ones-exact"
        self.method = method
        self.generations = generations
        self.population_size = population
        # The search's budget is its generations and exact's its work budget
        # (a clock limit that never strikes keeps runs reproducible).
        self.time_limit = (
            time_limit if time_limit is not None else (10.0 if method == "ones" else EXACT_CLOCK)
        )
        self.work_limit = work_limit if work_limit is not None else EXACT_WORK
        if not self.work_limit > 0:
            raise ValueError(f"work_limit must be > 0, got {self.work_limit!r}")
        self.rng = np.random.default_rng(seed)
        self.population: Population | None = None
        self.cluster: Cluster | None = None
        self.capacity: tuple[int, ...] = ()
        self.proven = 0
        self.fallbacks = 0
        self.greedy_fallbacks = 0
        self.time_limited = 0
        self.work_limited = 0
        self.clock_limited = 0

    def stats(self) -> dict[str, float]:
        """Counters: calls, solver seconds, proven calls, fallbacks, limit stops.

        ``exact``: ``fallbacks`` unproven calls, of which ``work_limited``
        stopped by the work budget and ``clock_limited`` by the clock (a
        run with any of the latter depends on the machine's load);
        ``ones``: ``time_limited`` searches cut by ``time_limit``.
        """
        out = super().stats()
        out.update(
            proven=float(self.proven),
            fallbacks=float(self.fallbacks),
            greedy_fallbacks=float(self.greedy_fallbacks),
            time_limited=float(self.time_limited),
        )
        if self.method == "exact":
            out.update(
                work_limited=float(self.work_limited), clock_limited=float(self.clock_limited)
            )
        return out

    def _cluster(self, view: View) -> Cluster:
        capacity = tuple(view.capacity)
        if self.cluster is None or capacity != self.capacity:
            servers = tuple(Server(f"s{i}", "V100", c) for i, c in enumerate(capacity) if c > 0)
            self.cluster = Cluster((GpuType("V100"),), servers)
            self.capacity = capacity
            self.population = None  # a population belongs to one cluster
        return self.cluster

    def input_of(self, view: View, live: Sequence[JobView]) -> BatchSizeInput:
        """The round's :class:`~scheduling_opt.batch_size.BatchSizeInput` (jobs in ``live`` order)."""
        now = view.now
        cluster = self._cluster(view)
        jobs, states = [], {}
        for st in live:
            tr = self.tracks[st.index]
            m = tr.model
            key = str(st.index)
            processed = int(self._samples(st, now))
            jobs.append(
                Job(
                    key,
                    1,
                    useful_gpus(m, tr.limit, st.job.max_gpus),
                    st.job.work,
                    submit_time=st.job.submit,
                    batch=BatchInfo(m.epoch_size, tr.limit, m.task.max_local, processed),
                )
            )
            states[key] = JobState(
                beta=self.beta(st, now),
                throughput=m.task.throughput,
                processed_time=st.executed(now),
                warmup=tr.warm,
            )
        k = self.population_size or max(2, cluster.total_gpus)
        return BatchSizeInput(
            cluster, jobs, states, config=OnesConfig(population=k, generations=self.generations)
        )

    def _solve(self, inp: BatchSizeInput) -> Schedule:
        started = time.perf_counter()
        try:
            if self.method == "ones":
                sol = ones_step(inp, self.population, seed=self.rng, time_limit=self.time_limit)
                step = sol.decision
                assert step is not None  # the search always returns a schedule
                self.population = step.population
                if sol.message:
                    self.time_limited += 1
                return step.schedule
            found = exact(inp, time_limit=self.time_limit, work_limit=self.work_limit)
            if found.status is Status.OPTIMAL and found.decision is not None:
                self.proven += 1
                return found.decision
            self.fallbacks += 1
            if "work budget" in found.message:
                self.work_limited += 1
            elif found.status is Status.TIME_LIMIT:
                self.clock_limited += 1
            if found.decision is not None:
                return found.decision
            self.greedy_fallbacks += 1
            fallback = greedy(inp).decision
            assert fallback is not None
            return fallback
        finally:
            self.solver_seconds += time.perf_counter() - started
            self.calls += 1

    def decide(self, view: View) -> Decision:
        live = self._refresh(view)
        wake = self._tick(view.now)
        if live is None:
            return Decision(wake_at=wake)
        if not live:
            return Decision()
        inp = self.input_of(view, live)
        schedule = self._solve(inp)
        return self._apply(view, live, inp, schedule.gpus, wake)

    def _apply(
        self,
        view: View,
        live: Sequence[JobView],
        inp: BatchSizeInput,
        counts: Sequence[int],
        wake: float,
    ) -> Decision:
        plan = view.plan()
        preempt: list[int] = []
        shrinks: list[tuple[int, Placement]] = []
        grows: list[tuple[int, Placement]] = []
        starts: list[tuple[int, Placement]] = []
        for st, c in zip(live, counts, strict=True):
            if st.placement and c == 0:
                preempt.append(st.index)
                plan.give(st.placement)
        # Shrinks before growths before starts: the engine applies the
        # resizes in this order, so each one finds the GPUs planned here.
        resized = [
            (c - sum(g for _, g in st.placement), st, c) for st, c in zip(live, counts, strict=True)
        ]
        for delta, st, c in sorted(resized, key=lambda r: (r[0], r[1].index)):
            if st.placement and c > 0 and delta != 0:
                plan.give(st.placement)
                (shrinks if delta < 0 else grows).append((st.index, place(plan, c, st.placement)))
        for st, c in sorted(zip(live, counts, strict=True), key=lambda p: (-p[1], p[0].index)):
            if not st.placement and c > 0:
                starts.append((st.index, place(plan, c)))
        where = {st.index: st.placement for st in live if st.placement}
        where.update(shrinks + grows + starts)
        for i in preempt:
            del where[i]
        rates = []
        pos = {st.index: j for j, st in enumerate(live)}
        for index, placement in sorted(where.items()):
            st = live[pos[index]]
            c = sum(g for _, g in placement)
            s = int(placement_spread(placement))
            x = c / float(inp.cost[pos[index], c, s])  # samples/s at the best batch <= R
            factor = x / self.tracks[index].model.reference / view.speed(st.job, placement)
            if abs(factor - st.factor) > _SAME * factor:
                rates.append((index, factor))
        for st, c in zip(live, counts, strict=True):
            self.tracks[st.index].rejected = c == 0
        return Decision(
            starts=tuple(starts),
            preempt=tuple(preempt),
            resize=tuple(shrinks + grows),
            rate=tuple(rates),
            wake_at=wake,
        )


class FixedBatch(_Base):
    """Each job at its submitted batch and GPU count, run in SRUF order (ONES' priority).

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
    ONES (Bian et al., SC 2021), §2.1 (static batch sizes), §3.2.1 (SRUF).
    """

    name = "fixed-batch"

    def __init__(self, *, interval: float = 60.0, sigma: float = 1.0 / 30.0) -> None:
        super().__init__(interval=interval, sigma=sigma)

    def decide(self, view: View) -> Decision:
        live = self._refresh(view)
        wake = self._tick(view.now)
        if live is None:
            return Decision(wake_at=wake)
        if not live:
            return Decision()
        now = view.now
        started = time.perf_counter()

        def rank(st: JobView) -> tuple[float, int]:
            m = self.tracks[st.index].model
            x0 = m.reference
            return (st.job.gpus * m.epoch_size * self.beta(st, now) / x0, st.index)

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
        for index, placement in starts:
            st = view.pending[index]
            m = self.tracks[index].model
            x = m.throughput(m.batch0, m.gpus0, placement_spread(placement))
            factor = x / m.reference / view.speed(st.job, placement)
            if abs(factor - st.factor) > _SAME * factor:
                rates.append((index, factor))
        for st in live:
            self.tracks[st.index].rejected = st.index not in keep
        self.calls += 1
        self.solver_seconds += time.perf_counter() - started
        return Decision(
            starts=tuple(starts), preempt=tuple(preempt), rate=tuple(rates), wake_at=wake
        )
