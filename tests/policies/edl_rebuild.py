"""A reference Elastic-Tiresias adapter: the whole state rebuilt and the pure step called per call.

At every call it builds an :class:`~scheduling_opt.policies.edl.EdlState`
of every unfinished job (each job validated once, placement rows cached)
and runs the library's pure
:func:`~scheduling_opt.policies.edl.elastic_tiresias_step` on it, then
computes the next timer by a scan of every job: the simplest correct
adapter, the code of ``sim/policies/edl/elastic_tiresias.py`` at commit
f714fb9, kept as the reference the simulator's adapter (an index kept
across calls) must equal call by call
(``test_edl_incremental_equivalence.py``); O(J) objects per call.
"""

from __future__ import annotations

import bisect
import math
from types import MappingProxyType

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
from scheduling_opt.sim.policies.edl.elastic_tiresias import speedup
from scheduling_opt.sim.protocol import Decision, JobView, View

#: Tolerance of a timer against the current time (float noise of service sums).
_EPS = 1e-9


def unchecked_job(
    job: Job,
    service: float,
    waiting: float,
    speedup: tuple[float, ...],
    requested: int,
    executed: float = 0.0,
) -> EdlJob:
    """An EdlJob from values already in checked form, without ``__post_init__``'s checks.

    The job was validated once (an EdlJob built the public way); only
    ``service``, ``waiting`` and ``executed`` change, finite floats >= 0.
    Re-checking every speed-up value at every call would make this
    reference adapter too slow for the tests that run it.
    """
    out = object.__new__(EdlJob)
    for name, value in (
        ("job", job),
        ("service", service),
        ("waiting", waiting),
        ("speedup", speedup),
        ("requested", requested),
        ("executed", executed),
    ):
        object.__setattr__(out, name, value)
    return out


def unchecked_state(
    cluster: Cluster, jobs: tuple[EdlJob, ...], placement: Placement, params: TiresiasParams
) -> EdlState:
    """An EdlState from parts the engine keeps valid, without ``__post_init__``'s checks. O(J)."""
    out = object.__new__(EdlState)
    object.__setattr__(out, "cluster", cluster)
    object.__setattr__(out, "jobs", jobs)
    object.__setattr__(out, "placement", placement)
    object.__setattr__(out, "params", params)
    object.__setattr__(out, "_by_id", MappingProxyType({j.job.id: j for j in jobs}))
    return out


class RebuildAdapter:
    """(Elastic-)Tiresias through the pure step on a state rebuilt at every call.

    The parameters are :class:`~scheduling_opt.sim.policies.EdlTiresias`'s.
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
        promote_knob: float | None = None,
    ) -> None:
        self.name = "elastic-tiresias" if elastic else "edl-tiresias"
        self.params = TiresiasParams(
            thresholds=tuple(t / unit_seconds for t in thresholds),
            starvation=starvation / unit_seconds,
            compaction=compaction,
            qos=qos,
            elastic=elastic,
            promote_knob=promote_knob,
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
        trusted = unchecked_job
        offset = self.offset
        for st in live:
            # float(): EdlJob's check would convert; both are finite and >= 0 here.
            las = float(max(0.0, st.service(now) - offset.get(st.index, 0.0)))
            waiting = 0.0 if st.placement else float(max(0.0, now - st.queued_since))
            base = self._job(st)
            executed = float(st.executed(now))
            edl_jobs.append(trusted(base.job, las, waiting, base.speedup, base.requested, executed))
            if st.placement:
                rows.extend(self._rows(st))
        state = unchecked_state(
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
        thresholds = p.thresholds
        levels = len(thresholds)
        for j in state.jobs:
            q = bisect.bisect_right(thresholds, j.service)  # p.queue, inlined: once per job
            held = counts.get(j.job.id, 0)
            if held and q < levels:
                at = now + (thresholds[q] - j.service) / held
            elif q > 0 and not held:
                at = now + max(0.0, p.limit(j.executed) - j.waiting)
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
    >>> from scheduling_opt.policies.edl import EdlDecision
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
