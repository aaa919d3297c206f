"""ONES in the simulator: the online evolutionary batch-size search at each schedule update.

At each update (:mod:`.base`: by default once every running job has
finished an epoch, ONES §3.2.2) the unfinished jobs become a
:class:`~scheduling_opt.batch_size.BatchSizeInput`: the usable GPUs as
servers, per job its epoch size, its current batch-size limit R_j, largest
local batch, processed samples and seconds run, its throughput model
(:mod:`~scheduling_opt.sim.ones_workload`), and the Beta progress model's
beta (predicted epochs to go: ONES' online regression, or the task's
prior, :mod:`.base`). The library's solver picks each job's GPU count and
batch: ``ones`` = :func:`~scheduling_opt.batch_size.ones_step` with the
previous step's population carried over (ONES §3.2.2; the online search
continues, ``generations`` per update); ``exact`` =
:func:`~scheduling_opt.batch_size.exact` within a budget of CP-SAT's
deterministic time per call (``work_limit``, :data:`EXACT_WORK`), so that
the same run gives the same schedule on any load; a call it stops reports
``time_limit`` and the policy uses its incumbent (at worst the greedy
fill), counted in :meth:`Ones.stats` (``work_limited``). A clock limit
(``time_limit``, :data:`EXACT_CLOCK` s) stays as a guard against a
runaway call; a call it stops is counted apart (``clock_limited``): such a
run depends on the load (none did in the measured runs, docs/simulation.md).
The counts become preemptions (0 GPUs), shrinks, growths and starts; the
batch for the job's actual placement (the library's table ``batch[j, c,
spread]``) sets its speed through ``Decision.rate``: X(B, c, spread) /
X(B0, c0) over the engine's placement speed, divided by the epochs factor
of that batch when the convergence option is on (``epoch_limit``).

Batch-size change cost (``change_cost``, ONES §4.3: elastic batch-size
scaling costs about 1 s, against 20 s and more for checkpoint-based
migration): a running job whose GPU count or global batch changes at an
update stalls that long (``Decision.stall``: it holds its GPUs without
progress). A job started or resumed is not charged (its start is not a
scaling; a resume's checkpoint restart is the engine's ``restart_cost``,
the same for every policy of a run).

Placement (ours, the paper deploys the genome's GPUs): a running job keeps
its GPUs; a shrink gives back GPUs from its smallest share first; a growth
takes free GPUs on its own servers first, then on the servers with the
most free GPUs; a start takes the best-fitting server, else the servers
with the most free GPUs. So no job migrates; the spread the engine charges
is the actual one. Cost per update: building the input, O(sum_j cap_j
min(m_j, R_j)), plus the search, O(generations K (G log G + J servers)).

:class:`~scheduling_opt.sim.policies.ones.fixed.FixedBatch` (ONES' static
contrast) lives in :mod:`.fixed`.
"""

from __future__ import annotations

import time
from collections.abc import Sequence

import numpy as np

from scheduling_opt.batch_size import (
    BatchSizeInput,
    JobState,
    OnesConfig,
    Population,
    Schedule,
    exact,
    greedy,
    ones_step,
)
from scheduling_opt.model import BatchInfo, Cluster, GpuType, Job, Server
from scheduling_opt.sim.cluster import FreeMap, Placement
from scheduling_opt.sim.ones_workload import GPUS_PER_SERVER, JobModel, epochs_factor
from scheduling_opt.sim.policies.ones.base import Deployed, OnesBase
from scheduling_opt.sim.protocol import Decision, JobView, View
from scheduling_opt.solution import Status

#: Relative change of a speed factor below which it is not re-sent.
SAME = 1e-12
#: CP-SAT's deterministic time per ``ones-exact`` call (units of about 1-3 s
#: of CPU): 14x the most a call of the full ONES workload needed (0.07).
EXACT_WORK = 1.0
#: Seconds per ``ones-exact`` call on the clock: a guard only, far above what
#: EXACT_WORK takes on this loaded machine (a stop by it is counted apart).
EXACT_CLOCK = 60.0
#: ONES §4.3: elastic batch-size scaling costs "basically around 1 second".
CHANGE_COST = 1.0


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
    >>> from scheduling_opt.sim.ones_workload import job_model
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


class Ones(OnesBase):
    """ONES: the library's batch-size solver at every update, applied as GPUs, speeds and stalls.

    Parameters
    ----------
    method : {"ones", "exact"}
        ``ones``: the online evolutionary search (population carried over);
        ``exact``: the exact method within ``work_limit`` (``ones-exact``).
    interval : float
        Seconds between ticks when ``update`` is ``"event"``.
    generations : int
        Search generations per update (``ones``).
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
        Seed of the search (a generator carried across calls) and of the
        progress history's sampling.
    update : {"epoch", "epoch-fill", "event"}
        When a schedule is deployed (:mod:`.base`): after every running
        job's epoch (ONES §3.2.2); so, with waiting jobs started on idle
        GPUs meanwhile (one GPU each, smallest predicted utilization first);
        or at every event and tick.
    progress : {"regression", "prior"}
        beta from ONES' online regression (§3.2.1) or the task's prior.
    history : int
        Points the regression keeps.
    change_cost : float
        Seconds a running job stalls when its GPUs or batch change (§4.3).
    epoch_limit : float or None
        The convergence option: past ``epoch_limit`` x its submitted batch a
        job needs more epochs (:func:`~scheduling_opt.sim.ones_workload.epochs_factor`;
        None: epochs equal at any batch).
    epoch_growth : float
        The exponent of that growth.

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
    ONES (Bian et al., SC 2021), §2.2 (convergence), §3.2 (search, prediction,
    update), §3.3.2 (limits), §4.3 (scaling cost), §4.2.
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
        update: str = "epoch",
        progress: str = "regression",
        history: int = 1000,
        change_cost: float = CHANGE_COST,
        epoch_limit: float | None = None,
        epoch_growth: float = 1.0,
    ) -> None:
        if method not in ("ones", "exact"):
            raise ValueError(f"method must be ones or exact, got {method!r}")
        super().__init__(
            interval=interval,
            sigma=sigma,
            update=update,
            progress=progress,
            history=history,
            epoch_limit=epoch_limit,
            epoch_growth=epoch_growth,
            seed=seed,
        )
        if not change_cost >= 0:
            raise ValueError(f"change_cost must be >= 0, got {change_cost!r}")
        self.name = "ones" if method == "ones" else "ones-exact"
        self.method = method
        self.generations = generations
        self.population_size = population
        self.change_cost = change_cost
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
        self.changes = 0

    def stats(self) -> dict[str, float]:
        """Counters: calls, solver seconds, proven calls, fallbacks, limit stops, changes charged.

        ``exact``: ``fallbacks`` unproven calls, of which ``work_limited``
        stopped by the work budget and ``clock_limited`` by the clock (a
        run with any of the latter depends on the machine's load);
        ``ones``: ``time_limited`` searches cut by ``time_limit``;
        ``changes``: batch or GPU changes of running jobs (each stalled
        ``change_cost``); the update gate's and the regression's counters
        (:meth:`OnesBase.stats`).
        """
        out = super().stats()
        out.update(
            proven=float(self.proven),
            fallbacks=float(self.fallbacks),
            greedy_fallbacks=float(self.greedy_fallbacks),
            time_limited=float(self.time_limited),
            changes=float(self.changes),
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
            processed = int(self.samples(st, now))
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

    def deploy(self, view: View, live: list[JobView]) -> Deployed:
        inp = self.input_of(view, live)
        schedule = self._solve(inp)
        return self._apply(view, live, inp, schedule.gpus)

    def fill(self, view: View, live: list[JobView]) -> Deployed:
        # Waiting jobs on idle GPUs, one each (a new job's warm-up size), smallest
        # predicted utilization ||D|| beta / X(min(R, m), 1) first; the rest waits.
        now = view.now
        plan = view.plan()
        ranked = []
        for st in live:
            if st.placement:
                continue
            tr = self.tracks[st.index]
            batch = min(tr.limit, tr.model.task.max_local)
            x = tr.model.throughput(batch, 1, False)
            ranked.append((tr.model.epoch_size * self.beta(st, now) / x, st.index, st, batch, x))
        starts, rates, speeds = [], [], []
        for _, index, st, batch, x in sorted(ranked, key=lambda r: (r[0], r[1]))[: plan.total_free]:
            tr = self.tracks[index]
            placement = place(plan, 1)
            mult = epochs_factor(batch, tr.model.batch0, self.epoch_limit, self.epoch_growth)
            factor = x / tr.model.reference / view.speed(st.job, placement) / mult
            starts.append((index, placement))
            if abs(factor - st.factor) > SAME * factor:
                rates.append((index, factor))
            self.set_batch(st, batch, now, mult)
            speeds.append((st, x))
        return Deployed(Decision(starts=tuple(starts), rate=tuple(rates)), tuple(speeds))

    def _apply(
        self,
        view: View,
        live: Sequence[JobView],
        inp: BatchSizeInput,
        counts: Sequence[int],
    ) -> Deployed:
        now = view.now
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
        stalls = []
        speeds: list[tuple[JobView, float]] = []
        pos = {st.index: j for j, st in enumerate(live)}
        for index, placement in sorted(where.items()):
            st = live[pos[index]]
            tr = self.tracks[index]
            c = sum(g for _, g in placement)
            s = int(placement_spread(placement))
            x = c / float(inp.cost[pos[index], c, s])  # samples/s at the best batch <= R
            batch = int(inp.batch[pos[index], c, s])
            mult = epochs_factor(batch, tr.model.batch0, self.epoch_limit, self.epoch_growth)
            factor = x / tr.model.reference / view.speed(st.job, placement) / mult
            if abs(factor - st.factor) > SAME * factor:
                rates.append((index, factor))
            if st.placement and (batch != tr.batch or placement != st.placement):
                # A running job rescaled (§4.3): its batch or its GPUs changed.
                self.changes += 1
                if self.change_cost > 0:
                    stalls.append((index, self.change_cost))
            if batch != tr.batch or mult != tr.mult:
                self.set_batch(st, batch, now, mult)
            speeds.append((st, x))
        for i in preempt:
            self.set_batch(live[pos[i]], 0, now, self.tracks[i].mult)
        for st, c in zip(live, counts, strict=True):
            self.tracks[st.index].rejected = c == 0
        decision = Decision(
            starts=tuple(starts),
            preempt=tuple(preempt),
            resize=tuple(shrinks + grows),
            rate=tuple(rates),
            stall=tuple(stalls),
        )
        return Deployed(decision, tuple(speeds))
