"""EDL Elastic-Tiresias: 2D-LAS priority queues with elastic compaction and expansion.

Each scheduling round orders jobs by Tiresias' discretized two-dimensional
least-attained-service queues (attained GPU-seconds against thresholds,
starving jobs promoted back to G0) and keeps, preempts or starts them; then,
when more than N jobs wait, running jobs of lower queues are scaled in to
start waiting ones (compaction), and when none waits, idle GPUs scale out the
running jobs that gain most (expansion). EDL (TPDS '22) §5 Algorithm 1, §5.1,
footnote 4, §6.3; straggler detection §5.2; Tiresias (NSDI '19).

The policy is a pure step function: :func:`step` maps an
:class:`ElasticState` to :class:`ElasticDecisions`; :func:`advance` gives
the next state after some seconds; :func:`check_step` is the independent
checker (capacity, minimums, locality, inelastic jobs untouched).
:func:`find_stragglers` / :func:`straggler_scale_in` implement §5.2.

Choices where the paper is vague are listed in docs/elastic.md.

Complexity per step, J jobs, S servers: ordering O(J log J); the Tiresias
plan O(J S log S); compaction O(J + S + P L D) per waiting job (P its
requested workers, L <= ceil(P g / m) servers, D donors); expansion
O(W J S) for W workers added. Stragglers: O(window * workers).
"""

from __future__ import annotations

import bisect
import itertools
import math
import statistics
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from types import MappingProxyType
from typing import Literal

from scheduling_opt.errors import InvalidInstanceError, VerificationError
from scheduling_opt.model import Cluster, Job, Placement, used_gpus
from scheduling_opt.solvers.locality import locality_limit, pick_servers

#: EDL §6.3: three queues, G0/G1 service thresholds 500 and 10,000 GPU-seconds.
DEFAULT_THRESHOLDS = (500.0, 10_000.0)
#: EDL §6.3: compaction when more than N = 10 jobs wait.
DEFAULT_COMPACTION = 10
#: EDL §6.3: r = 0.5, read as: a scaled-in job keeps half its requested workers.
DEFAULT_QOS = 0.5
#: Gains closer than this are ties.
TOLERANCE = 1e-9
#: Seconds a waiting job may starve before it returns to G0 (a choice, see docs).
DEFAULT_STARVATION = 3600.0


@dataclass(frozen=True, slots=True)
class ElasticJob:
    """A job as Elastic-Tiresias sees it.

    ``service``: attained GPU-seconds since the job last entered G0 (Tiresias
    resets it on a starvation promotion). ``waiting``: seconds since it last
    ran (0 while running). ``speedup``: S(p)/S(1) for p = 1..max_workers
    (profiled, EDL footnote 5); empty means linear scaling. ``requested``:
    the user-specified parallelism P_j Tiresias starts the job with (0:
    ``job.max_workers``); expansion may grow it up to ``job.max_workers``,
    and it never runs below ``job.min_workers``. Inelastic jobs (min = max)
    are never resized.
    """

    job: Job
    service: float = 0.0
    waiting: float = 0.0
    speedup: tuple[float, ...] = ()
    requested: int = 0

    def __post_init__(self) -> None:
        object.__setattr__(self, "speedup", tuple(float(x) for x in self.speedup))
        for name in ("service", "waiting"):
            value = getattr(self, name)
            if not (math.isfinite(value) and value >= 0):
                raise InvalidInstanceError(name, f"must be >= 0, got {value!r}")
        if self.requested and not self.job.min_workers <= self.requested <= self.job.max_workers:
            raise InvalidInstanceError(
                "requested", f"must be 0 or in {self.job.min_workers}..{self.job.max_workers}"
            )
        if self.speedup:
            if len(self.speedup) != self.job.max_workers:
                raise InvalidInstanceError(
                    "speedup", f"needs {self.job.max_workers} values (p = 1..max_workers)"
                )
            if any(not (math.isfinite(x) and x > 0) for x in self.speedup):
                raise InvalidInstanceError("speedup", "values must be finite and > 0")

    @property
    def id(self) -> str:
        return self.job.id

    @property
    def parallelism(self) -> int:
        """P_j: the requested worker count."""
        return self.requested or self.job.max_workers

    @property
    def requested_gpus(self) -> int:
        return self.parallelism * self.job.gpus_per_worker

    def throughput(self, workers: int) -> float:
        """Normalized throughput S(p)/S(1) (0 when not running)."""
        if workers <= 0:
            return 0.0
        return self.speedup[workers - 1] if self.speedup else float(workers)


@dataclass(frozen=True, slots=True)
class ElasticState:
    """The cluster, every unfinished job (arrival order) and where the running ones run."""

    cluster: Cluster
    jobs: tuple[ElasticJob, ...]
    placement: Placement = field(default_factory=Placement)

    def __post_init__(self) -> None:
        object.__setattr__(self, "jobs", tuple(self.jobs))
        ids = [j.id for j in self.jobs]
        if len(set(ids)) != len(ids):
            raise InvalidInstanceError("jobs", "duplicate job ids")
        _check_placement(self.cluster, self.jobs_by_id, self.placement, "placement")

    @property
    def jobs_by_id(self) -> Mapping[str, ElasticJob]:
        return {j.id: j for j in self.jobs}

    def running(self) -> tuple[ElasticJob, ...]:
        return tuple(j for j in self.jobs if self.placement.workers_of(j.id))

    def pending(self) -> tuple[ElasticJob, ...]:
        return tuple(j for j in self.jobs if not self.placement.workers_of(j.id))


def _check_placement(
    cluster: Cluster, jobs: Mapping[str, ElasticJob], placement: Placement, path: str
) -> None:
    """Known jobs and servers, the GPU type, min..max workers, server capacity."""
    for job_id in placement.jobs():
        if job_id not in jobs:
            raise InvalidInstanceError(path, f"unknown job {job_id!r}")
        job = jobs[job_id].job
        for server_id in placement.servers_of(job_id):
            if not cluster.has_server(server_id) or not job.fits(cluster.server(server_id)):
                raise InvalidInstanceError(path, f"job {job_id!r} cannot run on {server_id!r}")
        n = placement.workers_of(job_id)
        if not job.min_workers <= n <= job.max_workers:
            raise InvalidInstanceError(
                path,
                f"job {job_id!r} has {n} workers, outside {job.min_workers}..{job.max_workers}",
            )
    for server_id, used in used_gpus(placement, {k: j.job for k, j in jobs.items()}).items():
        if used > cluster.server(server_id).gpus:
            raise InvalidInstanceError(path, f"server {server_id!r} over capacity ({used} GPUs)")


@dataclass(frozen=True, slots=True)
class TiresiasParams:
    """Knobs of the policy (defaults: EDL §6.3).

    ``thresholds``: service (GPU-s) at which a job leaves G0, G1, ...;
    ``starvation``: waiting seconds after which a job returns to G0;
    ``compaction``: N, compaction runs when more than N jobs wait; ``qos``: r,
    a scaled-in job keeps at least ceil(r * P_j) workers (and its minimum);
    ``elastic``: False gives plain Tiresias.
    """

    thresholds: tuple[float, ...] = DEFAULT_THRESHOLDS
    starvation: float = DEFAULT_STARVATION
    compaction: int = DEFAULT_COMPACTION
    qos: float = DEFAULT_QOS
    elastic: bool = True

    def __post_init__(self) -> None:
        t = self.thresholds
        if any(b <= a for a, b in itertools.pairwise(t)) or any(x <= 0 for x in t):
            raise InvalidInstanceError("thresholds", "must be positive and increasing")
        if self.starvation < 0 or self.compaction < 0 or not 0 <= self.qos <= 1:
            raise InvalidInstanceError("params", "starvation, compaction >= 0; qos in [0, 1]")

    def queue(self, service: float) -> int:
        return bisect.bisect_right(self.thresholds, service)


Mode = Literal["compaction", "expansion", "none"]


@dataclass(frozen=True, slots=True)
class ElasticDecisions:
    """One round: the new placement of every running job and what changed.

    ``queues``: every job's queue after promotion; ``started``, ``preempted``
    and ``resized`` (job -> new worker count, by compaction or expansion)
    describe the changes; ``mode`` says which elastic rule ran.
    """

    placement: Placement
    queues: Mapping[str, int]
    promoted: tuple[str, ...]
    started: tuple[str, ...]
    preempted: tuple[str, ...]
    resized: Mapping[str, int]
    mode: Mode


# --------------------------------------------------------------------------- the round


@dataclass(slots=True)
class _Round:
    """Mutable scratch copy of one round (never escapes :func:`step`)."""

    state: ElasticState
    params: TiresiasParams
    alloc: dict[str, dict[str, int]]
    free: dict[str, int]
    queue: dict[str, int]
    rank: dict[str, int]
    jobs: Mapping[str, ElasticJob]
    floors: Mapping[str, int]
    prio: Mapping[str, int]  # position in Tiresias' priority order
    count: dict[str, int] = field(default_factory=dict)  # workers per job, kept by add()

    def copy(self) -> _Round:
        alloc = {k: dict(v) for k, v in self.alloc.items()}
        return _Round(
            self.state,
            self.params,
            alloc,
            dict(self.free),
            self.queue,
            self.rank,
            self.jobs,
            self.floors,
            self.prio,
            dict(self.count),
        )

    def workers(self, job_id: str) -> int:
        return self.count.get(job_id, 0)

    def add(self, job_id: str, server: str, n: int) -> None:
        self.count[job_id] = self.count.get(job_id, 0) + n
        servers = self.alloc.setdefault(job_id, {})
        servers[server] = servers.get(server, 0) + n
        if servers[server] == 0:
            del servers[server]
        if not servers:
            del self.alloc[job_id]
        self.free[server] -= n * self.jobs[job_id].job.gpus_per_worker

    def floor(self, j: ElasticJob) -> int:
        """Fewest workers compaction may leave a job with (its minimum and the QoS r)."""
        return self.floors[j.id]


def qos_floor(j: ElasticJob, qos: float) -> int:
    """Fewest workers compaction may leave: max(min_j, ceil(r P_j))."""
    return max(j.job.min_workers, math.ceil(qos * j.parallelism))


def _priority(state: ElasticState, queue: Mapping[str, int]) -> list[ElasticJob]:
    """Tiresias order: lower queue first, FIFO (arrival order) inside a queue."""
    order = {j.id: i for i, j in enumerate(state.jobs)}
    return sorted(state.jobs, key=lambda j: (queue[j.id], order[j.id]))


def _place_gang(r: _Round, j: ElasticJob, workers: int) -> dict[str, int] | None:
    """``workers`` whole workers on free GPUs, on at most ceil(P_j g / m) servers."""
    d = j.job.gpus_per_worker
    usable = {
        s.id: r.free[s.id] // d
        for s in r.state.cluster.servers
        if j.job.fits(s) and r.free[s.id] >= d
    }
    limit = locality_limit(r.state.cluster, j.job, j.requested_gpus)
    servers = pick_servers(usable, workers, limit, r.rank)
    if sum(usable[s] for s in servers) < workers:
        return None
    out: dict[str, int] = {}
    left = workers
    for s in servers:
        n = min(usable[s], left)
        out[s] = n
        left -= n
    return out


def _base_plan(r: _Round) -> tuple[list[str], list[str]]:
    """Tiresias: in priority order, a job is in the plan if its GPUs still fit the cluster.

    A running job keeps its workers and placement; one that no longer fits is
    preempted; a waiting job in the plan starts with P_j workers where the
    locality rule finds room (no migration, so fragmentation can defer it).
    """
    budget = r.state.cluster.total_gpus
    started, preempted = [], []
    keep: list[ElasticJob] = []
    start: list[ElasticJob] = []
    for j in _priority(r.state, r.queue):
        running = r.state.placement.workers_of(j.id)
        demand = (running or j.parallelism) * j.job.gpus_per_worker
        if demand <= budget:
            budget -= demand
            (keep if running else start).append(j)
        elif running:
            preempted.append(j.id)
    for j in keep:
        for s, n in r.state.placement.servers_of(j.id).items():
            r.add(j.id, s, n)
    for j in start:
        where = _place_gang(r, j, j.parallelism)
        if where is not None:
            for s, n in where.items():
                r.add(j.id, s, n)
            started.append(j.id)
    return started, preempted


def _donors(r: _Round, j: ElasticJob) -> list[ElasticJob]:
    """Donors for waiting job j: running elastic jobs above their floor, lowest priority first.

    Algorithm 1 takes GPUs from queues i != 0 only; we read "lower queues" as
    j's own queue or a lower one (so a queue-0 job takes from queue 1 and
    below). Within j's queue a running job may be ahead of j in priority: the
    paper's compaction still shrinks it (never below its floor), and it is
    tried last among the donors.
    """
    lowest = max(1, r.queue[j.id])
    found = [
        k
        for k in r.alloc
        if k != j.id and r.queue[k] >= lowest and r.jobs[k].job.elastic and r.count[k] > r.floors[k]
    ]
    return [r.jobs[k] for k in sorted(found, key=r.prio.__getitem__)]


def _cheapest_worker(
    r: _Round, j: ElasticJob, server: str, donors: list[ElasticJob]
) -> tuple[float, list[str]] | None:
    """Lowest throughput loss that frees room for one more worker of j on ``server``.

    Free GPUs cost nothing; then donors there lose one worker at a time,
    smallest marginal loss S(p) - S(p-1) first (ties: priority order; greedy
    is optimal for concave speed-ups). Returns the loss and the donors
    scaled in, or None when the server cannot make room.
    """
    need = j.job.gpus_per_worker - r.free[server]
    if need <= 0:
        return 0.0, []
    counts = {d.id: r.workers(d.id) for d in donors}
    here = {d.id: r.alloc.get(d.id, {}).get(server, 0) for d in donors}
    loss, taken = 0.0, []
    while need > 0:
        best: tuple[float, int] | None = None
        for i, d in enumerate(donors):
            if here[d.id] and counts[d.id] > r.floor(d):
                cost = d.throughput(counts[d.id]) - d.throughput(counts[d.id] - 1)
                if best is None or (cost, i) < best:
                    best = (cost, i)
        if best is None:
            return None
        d = donors[best[1]]
        loss += best[0]
        counts[d.id] -= 1
        here[d.id] -= 1
        need -= d.job.gpus_per_worker
        taken.append(d.id)
    return loss, taken


def _compact(r: _Round, j: ElasticJob) -> int:
    """Algorithm 1 lines 2-4 for one waiting job: scale in lower-queue jobs to start it.

    Workers of j are gathered one at a time on the servers that footnote 4's
    locality rule allows (at most ceil(P_j g / m) machines: those with the
    most obtainable GPUs), each where it costs the least throughput; the
    worker count k in [min_j, P_j] that maximizes the gain
    S_j(k)/S_j(1) - (the donors' lost normalized throughput) is kept when
    that gain is positive. Returns the workers j starts with (0: it waits).
    """
    d = j.job.gpus_per_worker
    donors = _donors(r, j)
    give = dict.fromkeys(r.free, 0)
    for x in donors:
        slack = r.count[x.id] - r.floors[x.id]
        for server, n in r.alloc[x.id].items():
            give[server] += min(n, slack) * x.job.gpus_per_worker
    obtainable = {
        s.id: (r.free[s.id] + give[s.id]) // d for s in r.state.cluster.servers if j.job.fits(s)
    }
    limit = locality_limit(r.state.cluster, j.job, j.requested_gpus)
    servers = pick_servers(obtainable, j.parallelism, limit, r.rank)
    if sum(obtainable[s] for s in servers) < j.job.min_workers:
        return 0
    trial = r.copy()  # a scratch copy, so that an unprofitable attempt leaves no trace
    steps: list[tuple[str, list[str]]] = []
    gains: list[float] = []
    loss = 0.0
    for _ in range(j.parallelism):
        options = []
        for s in servers:
            found = _cheapest_worker(trial, j, s, donors)
            if found is not None:
                options.append((found[0], trial.rank[s], s, found[1]))
        if not options:
            break
        cost, _, s, taken = min(options)
        for donor in taken:
            trial.add(donor, s, -1)
        trial.add(j.id, s, 1)
        steps.append((s, taken))
        loss += cost
        gains.append(j.throughput(len(steps)) - loss)
    feasible = [(g, k + 1) for k, g in enumerate(gains) if k + 1 >= j.job.min_workers]
    if not feasible:
        return 0
    gain = max(g for g, _ in feasible)
    if gain <= TOLERANCE:
        return 0
    # Ties go to fewer workers: moving GPUs for no gain only costs a rescale.
    k = min(k for g, k in feasible if g >= gain - TOLERANCE)
    for s, taken in steps[:k]:
        for donor in taken:
            r.add(donor, s, -1)
        r.add(j.id, s, 1)
    return k


def _expand(r: _Round, order: list[ElasticJob]) -> None:
    """Algorithm 1 lines 7-12: each free GPU to the running job gaining most.

    Gain: S(p+1)/S(p) - 1 > 0 (EDL §6.3: never a scale-out that lowers
    throughput). A worker needs its GPUs on one server, and the job may use
    a new server only within ceil((p+1) g / m) servers. Ties: priority order,
    then a server the job already uses, then cluster order.
    """
    while True:
        best: tuple[tuple[float, int, bool, int], ElasticJob, str] | None = None
        for i, j in enumerate(order):
            p = r.workers(j.id)
            if not p or not j.job.elastic or p >= j.job.max_workers:
                continue
            gain = j.throughput(p + 1) / j.throughput(p) - 1
            if gain <= 0:
                continue
            on = r.alloc[j.id]
            limit = locality_limit(r.state.cluster, j.job, (p + 1) * j.job.gpus_per_worker)
            for s in r.state.cluster.servers:
                if r.free[s.id] < j.job.gpus_per_worker or not j.job.fits(s):
                    continue
                if s.id not in on and len(on) + 1 > limit:
                    continue
                key = (-gain, i, s.id not in on, r.rank[s.id])
                if best is None or key < best[0]:
                    best = (key, j, s.id)
        if best is None:
            return
        r.add(best[1].id, best[2], 1)


def queues(state: ElasticState, params: TiresiasParams) -> tuple[dict[str, int], list[str]]:
    """Every job's queue, and the waiting jobs promoted to G0 for starving."""
    out, promoted = {}, []
    for j in state.jobs:
        q = params.queue(j.service)
        if q and not state.placement.workers_of(j.id) and j.waiting >= params.starvation:
            q = 0
            promoted.append(j.id)
        out[j.id] = q
    return out, promoted


def step(state: ElasticState, params: TiresiasParams | None = None) -> ElasticDecisions:
    """One round of (Elastic-)Tiresias; pure: ``state`` is not changed.

    (1) queues from attained service, starving jobs promoted to G0; (2) the
    Tiresias plan: keep, preempt or start jobs in priority order; (3) with
    ``elastic``: compaction when more than N jobs still wait, expansion when
    none waits and GPUs are idle.
    """
    p = params or TiresiasParams()
    queue, promoted = queues(state, p)
    r = _Round(
        state,
        p,
        {},
        {s.id: s.gpus for s in state.cluster.servers},
        queue,
        {s.id: i for i, s in enumerate(state.cluster.servers)},
        state.jobs_by_id,
        {j.id: qos_floor(j, p.qos) for j in state.jobs},
        {j.id: i for i, j in enumerate(_priority(state, queue))},
    )
    started, preempted = _base_plan(r)
    mode: Mode = "none"
    order = _priority(state, queue)
    if p.elastic:
        waiting = [j for j in order if j.id not in r.alloc]
        if len(waiting) > p.compaction:
            mode = "compaction"
            # A job Tiresias just preempted waits one round rather than restart
            # smaller at once: stop-and-restart churn in a single round is no scale-in.
            fresh = [j for j in waiting if j.id not in preempted]
            started += [j.id for j in fresh if _compact(r, j)]
        elif not waiting:
            mode = "expansion"
            _expand(r, order)
    resized = {
        j.id: r.workers(j.id)
        for j in state.running()
        if j.id in r.alloc and r.workers(j.id) != state.placement.workers_of(j.id)
    }
    return ElasticDecisions(
        placement=Placement.from_mapping(r.alloc),
        queues=MappingProxyType(queue),
        promoted=tuple(promoted),
        started=tuple(started),
        preempted=tuple(preempted),
        resized=MappingProxyType(resized),
        mode=mode,
    )


def advance(state: ElasticState, decisions: ElasticDecisions, seconds: float) -> ElasticState:
    """The state ``seconds`` after applying the decisions (finished jobs stay:
    remove them with :func:`finish`). Running jobs attain workers * g * seconds
    of service; waiting ones wait longer; a promoted job's service restarts at 0."""
    jobs = []
    promoted = set(decisions.promoted)
    for j in state.jobs:
        service = 0.0 if j.id in promoted else j.service
        n = decisions.placement.workers_of(j.id)
        if n:
            attained = service + n * j.job.gpus_per_worker * seconds
            jobs.append(replace(j, service=attained, waiting=0.0))
        else:
            jobs.append(replace(j, service=service, waiting=j.waiting + seconds))
    return ElasticState(state.cluster, tuple(jobs), decisions.placement)


def finish(state: ElasticState, job_ids: Sequence[str]) -> ElasticState:
    """The state without these (finished) jobs; their GPUs become free."""
    gone = set(job_ids)
    mapping = {k: v for k, v in state.placement.as_mapping().items() if k not in gone}
    jobs = tuple(j for j in state.jobs if j.id not in gone)
    return ElasticState(state.cluster, jobs, Placement.from_mapping(mapping))


# --------------------------------------------------------------------------- metrics


def cluster_throughput(state: ElasticState, placement: Placement) -> float:
    """EDL §6.3: the sum of running jobs' normalized throughputs S(p)/S(1)."""
    return math.fsum(j.throughput(placement.workers_of(j.id)) for j in state.jobs)


# --------------------------------------------------------------------------- checker


def check_step(
    state: ElasticState, decisions: ElasticDecisions, params: TiresiasParams | None = None
) -> None:
    """Independent check of one round; raises VerificationError.

    Capacity of every server, min..max workers and GPU types
    (:func:`_check_placement`); inelastic jobs keep their worker count;
    scale-in only by compaction, never below max(min_j, ceil(r P_j)) and only
    of queues i != 0; scale-out only by expansion, within the locality rule;
    started jobs were waiting and respect footnote 4; preempted jobs were
    running; promotions only of starving waiting jobs.
    """
    p = params or TiresiasParams()
    by_id = state.jobs_by_id
    new = decisions.placement
    try:
        _check_placement(state.cluster, by_id, new, "placement")
    except InvalidInstanceError as e:
        raise VerificationError(str(e)) from None
    for job_id in decisions.promoted:
        j = by_id[job_id]
        if state.placement.workers_of(job_id) or j.waiting < p.starvation:
            raise VerificationError(f"{job_id!r} promoted without starving")
        if decisions.queues.get(job_id) != 0:
            raise VerificationError(f"promoted {job_id!r} is not in G0")
    for job_id in decisions.started:
        j = by_id[job_id]
        if state.placement.workers_of(job_id) or not new.workers_of(job_id):
            raise VerificationError(f"started {job_id!r} was running or is not placed")
        # Expansion in the same round may widen it, within its own rule.
        gpus = max(j.parallelism, new.workers_of(job_id)) * j.job.gpus_per_worker
        if len(new.servers_of(job_id)) > locality_limit(state.cluster, j.job, gpus):
            raise VerificationError(f"started {job_id!r} spans too many servers")
    for job_id in decisions.preempted:
        if not state.placement.workers_of(job_id) or new.workers_of(job_id):
            raise VerificationError(f"preempted {job_id!r} was not running or still runs")
    for j in state.running():
        before, after = state.placement.workers_of(j.id), new.workers_of(j.id)
        if not after:
            if j.id not in decisions.preempted:
                raise VerificationError(f"{j.id!r} stopped without a preemption")
            continue
        if after != before and not j.job.elastic:
            raise VerificationError(f"inelastic {j.id!r} resized {before} -> {after}")
        if after < before:
            floor = qos_floor(j, p.qos)
            if decisions.mode != "compaction" or after < floor:
                raise VerificationError(f"{j.id!r} scaled in to {after} (floor {floor})")
            if decisions.queues[j.id] == 0:
                raise VerificationError(f"{j.id!r} of G0 scaled in")
        if after > before:
            limit = locality_limit(state.cluster, j.job, after * j.job.gpus_per_worker)
            spread = len(new.servers_of(j.id))
            if decisions.mode != "expansion" or spread > max(
                limit, len(state.placement.servers_of(j.id))
            ):
                raise VerificationError(f"{j.id!r} scaled out outside expansion or locality")
        if decisions.resized.get(j.id, before) != after:
            raise VerificationError(f"{j.id!r}: resized misreported")


# --------------------------------------------------------------------------- stragglers


def find_stragglers(
    history: Sequence[Mapping[str, float]], factor: float = 1.2, window: int = 10
) -> tuple[str, ...]:
    """EDL §5.2: workers slower than ``factor`` x the median in each of the last ``window``
    mini-batches.

    ``history``: per mini-batch (oldest first) each worker's time. A worker
    missing from one of those mini-batches is not judged. Slowest first
    (mean ratio to the median), ties by name.
    """
    if window < 1 or factor <= 0:
        raise InvalidInstanceError("window", "window >= 1 and factor > 0")
    if len(history) < window:
        return ()
    recent = history[-window:]
    ratios: dict[str, list[float]] = {}
    for i, batch in enumerate(recent):
        for worker, t in batch.items():
            if not (math.isfinite(t) and t >= 0):
                raise InvalidInstanceError(
                    f"history[{len(history) - window + i}][{worker!r}]",
                    f"a mini-batch time must be finite and >= 0, got {t!r}",
                )
        median = statistics.median(batch.values()) if batch else 0.0
        for worker, t in batch.items():
            # With a zero median only a worker that took time at all is slower.
            ratio = t / median if median > 0 else (math.inf if t > 0 else 0.0)
            ratios.setdefault(worker, []).append(ratio)
    slow = [
        (statistics.fmean(rs), w)
        for w, rs in ratios.items()
        if len(rs) == window and all(x > factor for x in rs)
    ]
    return tuple(w for _, w in sorted(slow, key=lambda x: (-x[0], x[1])))


def straggler_scale_in(
    job: Job,
    workers: int,
    history: Sequence[Mapping[str, float]],
    factor: float = 1.2,
    window: int = 10,
) -> tuple[str, ...]:
    """The stragglers to remove with one ``scale_in()``: slowest first, never
    leaving the job below ``min_workers`` (an inelastic job keeps them all)."""
    return find_stragglers(history, factor, window)[: max(0, workers - job.min_workers)]
