"""EDL's Elastic-Tiresias in the simulator: an adapter to ``elastic_tiresias_step``.

At every call the unfinished jobs (pending and running, in workload order)
become an :class:`~scheduling_opt.policies.edl.EdlState`: one worker per GPU,
``min_gpus``..``max_gpus`` workers, the requested parallelism P_j = the
trace's GPU count, the attained service (GPU-time since the last promotion),
the time waited since the job last ran, and S(p)/S(1) from the job's scaling
curve (the engine's speed model, so the policy's gains and the simulated
speeds agree). The step's new placement is turned into preemptions, resizes
(shrinks before growths, so a compaction frees GPUs before they are used)
and starts. Timers: the next threshold crossing of a running job and the
next starvation promotion of a waiting one. EDL (TPDS '22) §5.1 Algorithm 1,
§6.3; Tiresias (NSDI '19).

Times: the trace's unit; ``unit_seconds`` converts EDL's thresholds (500 and
10,000 GPU-seconds) and starvation limit (3,600 s) into it (60 for the
Chronus-Philly minutes). A call costs one step, O(J S log S) for J
unfinished jobs on S servers. The adapter validates each job (its speed-up
curve, P_j) once, when it first sees it, and keeps each running job's
placement rows until the job moves; per call it only updates service and
waiting time and builds the state with the step's trusted constructors
(the engine already enforces what their checks would: capacity, min..max).
"""

from __future__ import annotations

import bisect
import math

from scheduling_opt.model import Cluster, GpuType, Job, Placement, PlacementRow, Server
from scheduling_opt.policies.edl import (
    DEFAULT_COMPACTION,
    DEFAULT_QOS,
    DEFAULT_STARVATION,
    DEFAULT_THRESHOLDS,
    EdlDecision,
    EdlJob,
    EdlState,
    TiresiasParams,
    elastic_tiresias_step,
)
from scheduling_opt.policies.edl.model import worker_counts
from scheduling_opt.sim.cluster import Placement as SimPlacement
from scheduling_opt.sim.policy import Decision, JobView, View
from scheduling_opt.sim.speed import _curve
from scheduling_opt.sim.workload import SimJob

#: Tolerance of a timer against the current time (float noise of service sums).
_EPS = 1e-9


def speedup(job: SimJob) -> tuple[float, ...]:
    """S(p)/S(1) for p = 1..max_gpus, from the job's scaling curve (empty: linear).

    The same interpolation the engine's speed model applies to an elastic job.

    Examples
    --------
    >>> speedup(SimJob("a", 0.0, 2, 10.0, min_gpus=1, max_gpus=3,
    ...                scaling=((1, 1.0), (2, 1.8), (3, 2.4))))
    (1.0, 1.8, 2.4)
    >>> speedup(SimJob("b", 0.0, 2, 10.0))
    ()
    """
    if not job.scaling:
        return ()
    base = _curve(job.scaling, 1)
    return tuple(_curve(job.scaling, p) / base for p in range(1, job.max_gpus + 1))


class EdlTiresias:
    """(Elastic-)Tiresias through :func:`~scheduling_opt.policies.edl.elastic_tiresias_step`.

    Parameters
    ----------
    elastic : bool
        True: Elastic-Tiresias (compaction and expansion); False: the same
        step's plain Tiresias (the ablation that isolates elasticity).
    unit_seconds : float
        Seconds per time unit of the trace (60 for minutes).
    thresholds, starvation : float
        In seconds (EDL §6.3: 500 and 10,000 GPU-seconds; 3,600 s).
    compaction : int
        N: compaction when more than N jobs wait (EDL §6.3: 10).
    qos : float
        r: a scaled-in job keeps ceil(r P_j) workers (EDL §6.3: 0.5).

    Examples
    --------
    >>> from scheduling_opt.sim import ClusterSpec, Workload, simulate
    >>> w = Workload.of([SimJob("a", 0.0, 2, 10.0, min_gpus=1, max_gpus=4)], "demo")
    >>> out = simulate(w, ClusterSpec.uniform(1, 4), EdlTiresias(unit_seconds=1.0))
    >>> out.end  # expanded to 4 GPUs at once: linear scaling, twice as fast
    (5.0,)

    References
    ----------
    EDL (TPDS '22) §5.1 Algorithm 1, §6.3.
    """

    def __init__(
        self,
        *,
        elastic: bool = True,
        unit_seconds: float = 60.0,
        thresholds: tuple[float, ...] = DEFAULT_THRESHOLDS,
        starvation: float = DEFAULT_STARVATION,
        compaction: int = DEFAULT_COMPACTION,
        qos: float = DEFAULT_QOS,
    ) -> None:
        self.name = "elastic-tiresias" if elastic else "edl-tiresias"
        self.params = TiresiasParams(
            thresholds=tuple(t / unit_seconds for t in thresholds),
            starvation=starvation / unit_seconds,
            compaction=compaction,
            qos=qos,
            elastic=elastic,
        )
        self.cluster: Cluster | None = None
        self.capacity: tuple[int, ...] = ()
        # Per job: the EdlJob validated once (service and waiting are refreshed per call).
        self.jobs: dict[int, EdlJob] = {}
        # Per running job: its engine placement and the same as placement rows.
        self.rows: dict[int, tuple[SimPlacement, tuple[PlacementRow, ...]]] = {}
        self.offset: dict[int, float] = {}  # service at the last promotion to G0
        self.modes: dict[str, int] = {"compaction": 0, "expansion": 0, "none": 0}

    def stats(self) -> dict[str, float]:
        """How many calls ran each elastic rule (``compaction``, ``expansion``, ``none``)."""
        return {f"calls_{k}": float(v) for k, v in self.modes.items()}

    def _cluster(self, view: View) -> Cluster:
        capacity = tuple(view.capacity)
        if self.cluster is None or capacity != self.capacity:
            servers = tuple(Server(f"s{i}", "V100", c) for i, c in enumerate(capacity) if c > 0)
            self.cluster = Cluster((GpuType("V100"),), servers)
            self.capacity = capacity
        return self.cluster

    def _job(self, st: JobView) -> EdlJob:
        job = self.jobs.get(st.index)
        if job is None:
            j = st.job
            model = Job(str(st.index), j.min_gpus, j.max_gpus, j.work)
            # The public constructor checks the curve and P_j, once per job.
            job = self.jobs[st.index] = EdlJob(model, 0.0, 0.0, speedup(j), j.gpus)
        return job

    def _rows(self, st: JobView) -> tuple[PlacementRow, ...]:
        cached = self.rows.get(st.index)
        if cached is not None and cached[0] == st.placement:
            return cached[1]
        job_id = str(st.index)
        # Zero counts dropped, as Placement.from_mapping does.
        rows = tuple(PlacementRow(job_id, f"s{s}", g) for s, g in st.placement if g)
        self.rows[st.index] = (st.placement, rows)
        return rows

    def decide(self, view: View) -> Decision:
        now = view.now
        for st in view.finished:
            self.jobs.pop(st.index, None)
            self.rows.pop(st.index, None)
            self.offset.pop(st.index, None)
        live = sorted((*view.pending.values(), *view.running.values()), key=lambda s: s.index)
        if not live:
            return Decision()
        edl_jobs = []
        rows: list[PlacementRow] = []
        trusted = EdlJob._trusted
        offset = self.offset
        for st in live:
            # float(): EdlJob's check would convert; both are finite and >= 0 here.
            las = float(max(0.0, st.service(now) - offset.get(st.index, 0.0)))
            waiting = 0.0 if st.placement else float(max(0.0, now - st.queued_since))
            base = self._job(st)
            edl_jobs.append(trusted(base.job, las, waiting, base.speedup, base.requested))
            if st.placement:
                rows.extend(self._rows(st))
        state = EdlState._trusted(
            self._cluster(view), tuple(edl_jobs), Placement(tuple(rows)), self.params
        )
        decision = elastic_tiresias_step(state).decision
        assert decision is not None  # a policy step always decides
        return self._apply(view, state, decision)

    def _apply(self, view: View, state: EdlState, decision: EdlDecision) -> Decision:
        """Count the rule that ran, restart promoted jobs' service, translate for the engine."""
        now = view.now
        self.modes[decision.mode] += 1
        for job_id in decision.promoted:
            index = int(job_id)
            self.offset[index] = view.pending[index].service(now)
        return engine_decision(
            decision, state.placement, self._wake(now, state, decision.placement)
        )

    def _wake(self, now: float, state: EdlState, new: Placement) -> float | None:
        """The next threshold crossing of a running job or starvation promotion of a waiting one."""
        p = self.params
        best = math.inf
        counts = worker_counts(new)
        thresholds, starvation = p.thresholds, p.starvation
        levels = len(thresholds)
        for j in state.jobs:
            q = bisect.bisect_right(thresholds, j.service)  # p.queue, inlined: once per job
            held = counts.get(j.job.id, 0)
            if held and q < levels:
                at = now + (thresholds[q] - j.service) / held
            elif q > 0 and not held:
                at = now + max(0.0, starvation - j.waiting)
            else:
                continue
            if now + _EPS < at < best:
                best = at
        return best if best < math.inf else None


def engine_decision(decision: EdlDecision, before: Placement, wake_at: float | None) -> Decision:
    """The engine's :class:`Decision` for one EDL round: starts, preemptions, resizes.

    Server ids ``s<k>`` become the engine's server indices. Resizes go
    shrinks first: their GPUs are what the growths and starts use. O(J).

    Parameters
    ----------
    decision : EdlDecision
        The step's decision.
    before : Placement
        The placement the round started from (a resize's worker change).
    wake_at : float or None
        When to call the policy again.

    Returns
    -------
    Decision
        For :func:`~scheduling_opt.sim.simulate`.

    Examples
    --------
    >>> from scheduling_opt.model import Placement
    >>> d = EdlDecision(Placement.from_mapping({"3": {"s1": 2}}), {}, (), ("3",), (), {}, "none")
    >>> engine_decision(d, Placement(), None).starts
    ((3, ((1, 2),)),)
    """
    new = decision.placement

    def placed(job_id: str) -> SimPlacement:
        return tuple(sorted((int(s[1:]), n) for s, n in new.servers_of(job_id).items()))

    resize = sorted(
        (workers - before.workers_of(job_id), int(job_id), placed(job_id))
        for job_id, workers in decision.resized.items()
    )
    return Decision(
        starts=tuple((int(i), placed(i)) for i in decision.started),
        preempt=tuple(int(i) for i in decision.preempted),
        resize=tuple((i, p) for _, i, p in resize),
        wake_at=wake_at,
    )
