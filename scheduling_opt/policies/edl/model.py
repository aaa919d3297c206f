"""The typed state and decision of EDL's Elastic-Tiresias policy.

An :class:`EdlState` is one scheduling round's input: the cluster, every
unfinished job with its attained service, waiting time, speed-up curve and
requested parallelism (:class:`EdlJob`), where the running ones run, and the
policy's knobs (:class:`TiresiasParams`). An :class:`EdlDecision` is the
round's output. Both are validated at construction with the instance file's
rules (an :class:`~scheduling_opt.errors.InvalidInstanceError` names the
field). :func:`~.transitions.advance` and :func:`~.transitions.finish` give
the next state, so a simulator needs nothing else. EDL (TPDS '22) §5, §6.3; Tiresias (NSDI '19).
Construction is O(J + S + rows of the placement).
"""

from __future__ import annotations

import bisect
import itertools
import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Literal

from scheduling_opt.errors import InvalidInstanceError
from scheduling_opt.model import Cluster, Job, Placement, used_gpus
from scheduling_opt.policies._numbers import as_fraction, as_int, as_number, expect

#: EDL §6.3: three queues, G0/G1 service thresholds 500 and 10,000 GPU-seconds.
DEFAULT_THRESHOLDS = (500.0, 10_000.0)
#: EDL §6.3: compaction when more than N = 10 jobs wait.
DEFAULT_COMPACTION = 10
#: EDL §6.3: r = 0.5, read as: a scaled-in job keeps half its requested workers.
DEFAULT_QOS = 0.5
#: Seconds a waiting job may starve before it returns to G0 (a choice, see docs).
DEFAULT_STARVATION = 3600.0
#: Tiresias' STARVELIMIT knob as the simulator's ``tiresias`` sets it (docs/elastic.md).
TIRESIAS_PROMOTE_KNOB = 8.0

Mode = Literal["compaction", "expansion", "none"]
MODES: tuple[Mode, ...] = ("compaction", "expansion", "none")


@dataclass(frozen=True, slots=True)
class EdlJob:
    """A job as Elastic-Tiresias sees it.

    Attributes
    ----------
    job : Job
        Min/max workers and GPUs per worker. Inelastic (min = max) jobs are
        never resized.
    service : float
        Attained GPU-seconds since the job last entered G0 (Tiresias resets it
        on a starvation promotion), >= 0.
    waiting : float
        Seconds since it last ran (0 while running), >= 0.
    speedup : tuple of float
        S(p)/S(1) for p = 1..max_workers (profiled, EDL footnote 5), each
        finite and > 0; empty means linear scaling. A numpy array is accepted.
    requested : int
        P_j, the user-specified parallelism Tiresias starts the job with (0:
        ``job.max_workers``); expansion may grow it up to ``job.max_workers``
        and it never runs below ``job.min_workers``.
    executed : float
        Seconds it has run in all, >= 0: what ``TiresiasParams.promote_knob``
        multiplies (unused under the fixed ``starvation`` limit).
    """

    job: Job
    service: float = 0.0
    waiting: float = 0.0
    speedup: tuple[float, ...] = ()
    requested: int = 0
    executed: float = 0.0

    def __post_init__(self) -> None:
        if not isinstance(self.job, Job):
            raise InvalidInstanceError("job", f"must be a Job, got {type(self.job).__name__}")
        for name in ("service", "waiting", "executed"):
            object.__setattr__(self, name, as_number(getattr(self, name), name, 0))
        requested = as_int(self.requested, "requested", 0)
        object.__setattr__(self, "requested", requested)
        if requested and not self.job.min_workers <= requested <= self.job.max_workers:
            raise InvalidInstanceError(
                "requested",
                f"must be 0 or in {self.job.min_workers}..{self.job.max_workers}, got {requested}",
            )
        speedup = tuple(as_number(x, f"speedup[{i}]") for i, x in enumerate(self.speedup))
        object.__setattr__(self, "speedup", speedup)
        if speedup:
            if len(speedup) != self.job.max_workers:
                raise InvalidInstanceError(
                    "speedup", f"needs {self.job.max_workers} values (p = 1..max_workers)"
                )
            if any(x <= 0 for x in speedup):
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
class TiresiasParams:
    """Knobs of the policy (defaults: EDL §6.3).

    Attributes
    ----------
    thresholds : tuple of float
        Service (GPU-s) at which a job leaves G0, G1, ...; positive, increasing.
    starvation : float
        Waiting seconds after which a job returns to G0 (>= 0), when
        ``promote_knob`` is None.
    compaction : int
        N: compaction runs when more than N jobs wait (>= 0).
    qos : float
        r in [0, 1]: a scaled-in job keeps at least ceil(r P_j) workers (and
        its minimum).
    elastic : bool
        False gives plain Tiresias.
    promote_knob : float or None
        None: the fixed ``starvation`` limit. A number k > 0: Tiresias'
        STARVELIMIT rule instead, as the simulator's ``tiresias`` applies it
        (:mod:`scheduling_opt.sim.policies.baselines.preemptive`): a waiting job of a lower
        queue returns to G0 once it has waited k times its executed time
        (``EdlJob.waiting >= k * EdlJob.executed``). The Tiresias artifact's
        ``dlas-gpu-K`` schedules; 8 in our ``tiresias``.
    """

    thresholds: tuple[float, ...] = DEFAULT_THRESHOLDS
    starvation: float = DEFAULT_STARVATION
    compaction: int = DEFAULT_COMPACTION
    qos: float = DEFAULT_QOS
    elastic: bool = True
    promote_knob: float | None = None

    def __post_init__(self) -> None:
        t = tuple(as_number(x, f"thresholds[{i}]") for i, x in enumerate(self.thresholds))
        if any(b <= a for a, b in itertools.pairwise(t)) or any(x <= 0 for x in t):
            raise InvalidInstanceError("thresholds", "must be positive and increasing")
        object.__setattr__(self, "thresholds", t)
        object.__setattr__(self, "starvation", as_number(self.starvation, "starvation", 0))
        object.__setattr__(self, "compaction", as_int(self.compaction, "compaction", 0))
        object.__setattr__(self, "qos", as_fraction(self.qos, "qos"))
        if not isinstance(self.elastic, bool):
            raise InvalidInstanceError("elastic", f"must be True or False, got {self.elastic!r}")
        if self.promote_knob is not None:
            knob = as_number(self.promote_knob, "promote_knob", 0)
            if knob <= 0:
                raise InvalidInstanceError("promote_knob", f"must be > 0 or None, got {knob!r}")
            object.__setattr__(self, "promote_knob", knob)

    def limit(self, executed: float) -> float:
        """How long a job of a lower queue waits before it returns to G0, having run ``executed``.

        The fixed ``starvation`` limit, or ``promote_knob`` times the time the
        job has run (Tiresias' STARVELIMIT). O(1).

        Examples
        --------
        >>> TiresiasParams(starvation=3600.0).limit(50.0), TiresiasParams(promote_knob=8.0).limit(50.0)
        (3600.0, 400.0)
        """
        if self.promote_knob is None:
            return self.starvation
        return self.promote_knob * executed

    def queue(self, service: float) -> int:
        """The queue of a job with this attained service (0 = G0)."""
        return bisect.bisect_right(self.thresholds, service)


def check_placement(
    cluster: Cluster, jobs: Mapping[str, EdlJob], placement: Placement, path: str
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
class EdlState:
    """One round's input: the cluster, every unfinished job, the running placement, the knobs.

    Attributes
    ----------
    cluster : Cluster
        The servers.
    jobs : tuple of EdlJob
        Every unfinished job, in arrival order (FIFO inside a queue); ids unique.
    placement : Placement
        Where the running jobs run (a job absent from it waits); every job
        within min..max workers, on servers of its GPU type, within capacity.
    params : TiresiasParams
        The policy's knobs.
    """

    cluster: Cluster
    jobs: tuple[EdlJob, ...]
    placement: Placement = field(default_factory=Placement)
    params: TiresiasParams = field(default_factory=TiresiasParams)
    _by_id: Mapping[str, EdlJob] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        if not isinstance(self.cluster, Cluster):
            raise InvalidInstanceError("cluster", "must be a Cluster")
        object.__setattr__(self, "jobs", tuple(self.jobs))
        by_id: dict[str, EdlJob] = {}
        for i, j in enumerate(self.jobs):
            if not isinstance(j, EdlJob):
                raise InvalidInstanceError(f"jobs[{i}]", f"must be an EdlJob, got {j!r:.60}")
            if j.id in by_id:
                raise InvalidInstanceError(f"jobs[{i}]", f"duplicate job id {j.id!r}")
            by_id[j.id] = j
        if not isinstance(self.placement, Placement):
            raise InvalidInstanceError("placement", "must be a Placement")
        if not isinstance(self.params, TiresiasParams):
            raise InvalidInstanceError("params", "must be a TiresiasParams")
        object.__setattr__(self, "_by_id", MappingProxyType(by_id))
        check_placement(self.cluster, by_id, self.placement, "placement")

    @classmethod
    def from_jobs(
        cls,
        cluster: Cluster,
        jobs: Iterable[Job],
        placement: Placement | None = None,
        *,
        service: Mapping[str, float] | None = None,
        waiting: Mapping[str, float] | None = None,
        speedup: Mapping[str, Iterable[float]] | None = None,
        requested: Mapping[str, int] | None = None,
        params: TiresiasParams | None = None,
        executed: Mapping[str, float] | None = None,
    ) -> EdlState:
        """A state from plain model jobs and per-job mappings (missing: the defaults).

        Parameters
        ----------
        cluster : Cluster
            The servers.
        jobs : iterable of Job
            Every unfinished job, in arrival order.
        placement : Placement, optional
            Where the running jobs run (default: nothing runs).
        service, waiting, speedup, requested, executed : mapping by job id, optional
            The :class:`EdlJob` fields of the jobs that have them.
        params : TiresiasParams, optional
            The knobs (default: EDL §6.3's).

        Returns
        -------
        EdlState
            The validated state.

        Raises
        ------
        InvalidInstanceError
            A mapping key that names no job (``service.x: unknown job``), or
            any value the fields refuse (``jobs[0].requested: ...``).

        Examples
        --------
        >>> from scheduling_opt.model import Cluster, GpuType, Job, Server
        >>> c = Cluster((GpuType("V100"),), (Server("s0", "V100", 8),))
        >>> s = EdlState.from_jobs(c, [Job("a", 1, 4, 60.0)], service={"a": 900.0})
        >>> s.jobs_by_id["a"].service, s.params.queue(900.0)
        (900.0, 1)
        """
        jobs = tuple(jobs)
        known = {j.id for j in jobs if isinstance(j, Job)}
        given: dict[str, Mapping[str, object] | None] = {
            "service": service,
            "waiting": waiting,
            "speedup": speedup,
            "requested": requested,
            "executed": executed,
        }
        for name, mapping in given.items():
            for key in mapping or {}:
                if key not in known:
                    raise InvalidInstanceError(f"{name}.{key}", "unknown job")
        out = []
        for i, job in enumerate(jobs):
            if not isinstance(job, Job):
                raise InvalidInstanceError(f"jobs[{i}]", f"must be a Job, got {job!r:.60}")
            try:
                out.append(
                    EdlJob(
                        job,
                        (service or {}).get(job.id, 0.0),
                        (waiting or {}).get(job.id, 0.0),
                        tuple((speedup or {}).get(job.id, ())),
                        (requested or {}).get(job.id, 0),
                        (executed or {}).get(job.id, 0.0),
                    )
                )
            except InvalidInstanceError as e:
                raise e.at(f"jobs[{i}]") from None
        return cls(cluster, tuple(out), placement or Placement(), params or TiresiasParams())

    @property
    def jobs_by_id(self) -> Mapping[str, EdlJob]:
        return self._by_id

    def running(self) -> tuple[EdlJob, ...]:
        return tuple(j for j in self.jobs if self.placement.workers_of(j.id))

    def pending(self) -> tuple[EdlJob, ...]:
        return tuple(j for j in self.jobs if not self.placement.workers_of(j.id))


@dataclass(frozen=True, slots=True)
class EdlDecision:
    """One round's decision: the new placement of every running job and what changed.

    Attributes
    ----------
    placement : Placement
        Where every job runs after the round.
    queues : Mapping[str, int]
        Every job's queue after promotion.
    promoted : tuple of str
        Waiting jobs returned to G0 for starving.
    started, preempted : tuple of str
        Jobs started and stopped this round.
    resized : Mapping[str, int]
        Running jobs given a new worker count (by compaction or expansion).
    mode : {"compaction", "expansion", "none"}
        Which elastic rule ran.
    """

    placement: Placement
    queues: Mapping[str, int]
    promoted: tuple[str, ...]
    started: tuple[str, ...]
    preempted: tuple[str, ...]
    resized: Mapping[str, int]
    mode: Mode

    def __post_init__(self) -> None:
        if self.mode not in MODES:
            raise InvalidInstanceError("mode", f"must be one of {list(MODES)}, got {self.mode!r}")


def qos_floor(j: EdlJob, qos: float) -> int:
    """Fewest workers compaction may leave a job with: max(min_j, ceil(r P_j)).

    Parameters
    ----------
    j : EdlJob
        The job.
    qos : float
        r in [0, 1] (EDL §6.3: 0.5).

    Returns
    -------
    int
        The floor.

    Examples
    --------
    >>> from scheduling_opt.model import Job
    >>> qos_floor(EdlJob(Job("a", 1, 8, 60.0), requested=5), 0.5)
    3

    References
    ----------
    EDL (TPDS '22) §6.3 (r = 0.5).
    """
    expect(j, EdlJob, "j")
    return max(j.job.min_workers, math.ceil(qos * j.parallelism))


def cluster_throughput(state: EdlState, placement: Placement) -> float:
    """EDL §6.3: the sum of the jobs' normalized throughputs S(p)/S(1) under ``placement``.

    Parameters
    ----------
    state : EdlState
        The jobs and their speed-up curves.
    placement : Placement
        Worker counts (a job absent from it contributes 0).

    Returns
    -------
    float
        Σ_j S_j(p_j)/S_j(1).

    Examples
    --------
    >>> from scheduling_opt.model import Cluster, GpuType, Job, Placement, Server
    >>> c = Cluster((GpuType("V100"),), (Server("s0", "V100", 8),))
    >>> s = EdlState(c, (EdlJob(Job("a", 1, 3, 60.0), speedup=(1.0, 1.8, 2.4)),))
    >>> cluster_throughput(s, Placement.from_mapping({"a": {"s0": 2}}))
    1.8

    References
    ----------
    EDL (TPDS '22) §6.3.
    """
    expect(state, EdlState, "state")
    expect(placement, Placement, "placement")
    # fsum is correctly rounded whatever the order, and an idle job adds an
    # exact 0: summing the placed jobs only (O(rows)) gives the same float.
    by_id = state.jobs_by_id
    return math.fsum(
        by_id[k].throughput(n) for k, n in worker_counts(placement).items() if k in by_id
    )


def worker_counts(placement: Placement) -> dict[str, int]:
    """Workers per placed job, in order of first appearance; O(rows) for all jobs at once.

    ``placement.workers_of`` sums a job's rows at each call; a round asks for
    every job's count several times.

    Parameters
    ----------
    placement : Placement
        Any placement.

    Returns
    -------
    dict of str to int
        Job id -> workers (> 0); a job absent from the placement is absent here.

    Examples
    --------
    >>> from scheduling_opt.model import Placement
    >>> worker_counts(Placement.from_mapping({"a": {"s0": 2, "s1": 1}, "b": {"s1": 3}}))
    {'a': 3, 'b': 3}
    """
    out: dict[str, int] = {}
    for row in placement.rows:
        out[row.job] = out.get(row.job, 0) + row.workers
    return out
