"""The cheap per-call path of Elastic-Tiresias decides exactly what the full rebuild decided.

The simulator adapter used to rebuild and re-validate the whole state at
every call (an ``EdlJob`` per job through the public constructor,
``Placement.from_mapping``, ``EdlState``'s checks), and the step counted a
job's workers with ``Placement.workers_of`` at each use, sorted the jobs
three times, added kept jobs one server at a time and rebuilt every
placement row. ``_reference_step`` and ``_ReferenceAdapter`` are that code
as it was before the change (2026-11-26), kept here as an independent
model: the step must decide the same on random multi-round states
(hypothesis), and whole simulations must make the same decisions call by
call and produce the same outputs. The livelock fix of 2026-11-26 (idle
victims kept, compactions the next plan would undo not made) changed
decisions on purpose; it is applied to the reference by ``_ref_restore`` and
``_ref_compact_stable``, written apart from the step's code.
"""

from __future__ import annotations

import math
from types import MappingProxyType

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from scheduling_opt.errors import InvalidInstanceError
from scheduling_opt.model import Cluster, GpuType, Job, Placement, Server
from scheduling_opt.policies import edl as el
from scheduling_opt.policies.edl.compaction import compact
from scheduling_opt.policies.edl.expansion import expand
from scheduling_opt.policies.edl.plan import gang_on
from scheduling_opt.policies.edl.round import Round
from scheduling_opt.policies.locality import locality_limit
from scheduling_opt.reproduce.workloads import ElasticRule
from scheduling_opt.sim import ClusterSpec, simulate
from scheduling_opt.sim.policies.edl.elastic_tiresias import EdlTiresias
from scheduling_opt.sim.protocol import Decision, PolicyError, View
from scheduling_opt.sim.synthetic import SyntheticSpec, generate
from scheduling_opt.sim.workload import Workload
from scheduling_opt.testing import edl_jobs
from tests.policies.edl_rebuild import RebuildAdapter, unchecked_job, unchecked_state
from tests.policies.edl_rollout import rollout

# --- the step as it was -----------------------------------------------------------------


def _ref_priority(state: el.EdlState, queue: dict[str, int]) -> list[el.EdlJob]:
    order = {j.id: i for i, j in enumerate(state.jobs)}
    return sorted(state.jobs, key=lambda j: (queue[j.id], order[j.id]))


def _ref_queues(state: el.EdlState) -> tuple[dict[str, int], list[str]]:
    p = state.params
    out, promoted = {}, []
    for j in state.jobs:
        q = p.queue(j.service)
        if q and not state.placement.workers_of(j.id) and j.waiting >= p.starvation:
            q = 0
            promoted.append(j.id)
        out[j.id] = q
    return out, promoted


def _ref_place_gang(r: Round, j: el.EdlJob, workers: int) -> dict[str, int] | None:
    d = j.job.gpus_per_worker
    usable = {
        s.id: r.free[s.id] // d for s in r.cluster.servers if j.job.fits(s) and r.free[s.id] >= d
    }
    limit = locality_limit(r.cluster, j.job, j.requested_gpus)
    # Only the locality limit's computation changed; picking and filling did not.
    return gang_on(usable, workers, limit, r.rank)


def _ref_base_plan(r: Round, state: el.EdlState) -> tuple[list[str], list[str]]:
    budget = r.cluster.total_gpus
    started, preempted = [], []
    keep: list[el.EdlJob] = []
    start: list[el.EdlJob] = []
    for j in _ref_priority(state, r.queue):
        running = state.placement.workers_of(j.id)
        demand = (running or j.parallelism) * j.job.gpus_per_worker
        if demand <= budget:
            budget -= demand
            (keep if running else start).append(j)
        elif running:
            preempted.append(j.id)
    for j in keep:
        for s, n in state.placement.servers_of(j.id).items():
            r.add(j.id, s, n)
    for j in start:
        where = _ref_place_gang(r, j, j.parallelism)
        if where is not None:
            for s, n in where.items():
                r.add(j.id, s, n)
            started.append(j.id)
    return started, preempted


def _ref_restore(r: Round, state: el.EdlState, preempted: list[str]) -> list[str]:
    """The livelock fix (2026-11-26), applied to the reference as the step applies it.

    Written apart from the step's ``_restore``: in every elastic
    round, a victim whose GPUs are all still free after the plan's starts is
    added back server by server (``Round.add``), in priority order.
    """
    still = []
    for k in preempted:
        rows = state.placement.servers_of(k)
        g = r.jobs[k].job.gpus_per_worker
        if all(r.free[s] >= n * g for s, n in rows.items()):
            for s, n in rows.items():
                r.add(k, s, n)
        else:
            still.append(k)
    return still


def _ref_compact_stable(r: Round, state: el.EdlState, j: el.EdlJob) -> bool:
    """The fix's second rule: a compaction the plan, run again, would undo is not made.

    Compacts a copy, re-runs the reference plan (and restore) on the copy's
    placement, and adopts the copy only when that preempts nothing.
    """
    trial = r.copy()
    if not compact(trial, j):
        return False
    again = el.EdlState(state.cluster, state.jobs, Placement.from_mapping(trial.alloc), r.params)
    nxt = Round(
        again.cluster,
        r.params,
        {},
        {s.id: s.gpus for s in again.cluster.servers},
        r.queue,
        r.rank,
        r.jobs,
        r.floors,
        r.prio,
    )
    if _ref_restore(nxt, again, _ref_base_plan(nxt, again)[1]):
        return False
    r.alloc, r.free, r.count, r.touched = trial.alloc, trial.free, trial.count, trial.touched
    return True


def _reference_step(state: el.EdlState) -> tuple[el.EdlDecision, float]:
    p = state.params
    queue, promoted = _ref_queues(state)
    r = Round(
        state.cluster,
        p,
        {},
        {s.id: s.gpus for s in state.cluster.servers},
        queue,
        {s.id: i for i, s in enumerate(state.cluster.servers)},
        state.jobs_by_id,
        {j.id: el.qos_floor(j, p.qos) for j in state.jobs},
        {j.id: i for i, j in enumerate(_ref_priority(state, queue))},
    )
    started, preempted = _ref_base_plan(r, state)
    mode: el.Mode = "none"
    order = _ref_priority(state, queue)
    if p.elastic:
        preempted = _ref_restore(r, state, preempted)
        waiting = [j for j in order if j.id not in r.alloc]
        if len(waiting) > p.compaction:
            mode = "compaction"
            fresh = [j for j in waiting if j.id not in preempted]
            started += [j.id for j in fresh if _ref_compact_stable(r, state, j)]
        elif not waiting:
            mode = "expansion"
            expand(r, order)
    resized = {
        j.id: r.workers(j.id)
        for j in state.running()
        if j.id in r.alloc and r.workers(j.id) != state.placement.workers_of(j.id)
    }
    placement = Placement.from_mapping(r.alloc)
    decision = el.EdlDecision(
        placement=placement,
        queues=MappingProxyType(queue),
        promoted=tuple(promoted),
        started=tuple(started),
        preempted=tuple(preempted),
        resized=MappingProxyType(resized),
        mode=mode,
    )
    throughput = math.fsum(j.throughput(placement.workers_of(j.id)) for j in state.jobs)
    return decision, throughput


@settings(max_examples=200, deadline=None)
@given(
    st.lists(st.integers(1, 8), min_size=1, max_size=5),
    edl_jobs(),
    st.integers(0, 3),
    st.booleans(),
    st.lists(st.tuples(st.floats(1.0, 5000.0), st.integers(0, 7)), min_size=1, max_size=6),
)
def test_the_step_decides_as_the_reference_over_rounds(
    sizes: list[int],
    jobs: list[el.EdlJob],
    n: int,
    elastic: bool,
    rounds: list[tuple[float, int]],
) -> None:
    cluster = Cluster(
        (GpuType("V100"),), tuple(Server(f"s{i}", "V100", g) for i, g in enumerate(sizes))
    )
    params = el.TiresiasParams(compaction=n, starvation=3000.0, elastic=elastic)
    state = el.EdlState(cluster, tuple(jobs), Placement(), params)
    assert rollout(state, rounds) == rollout(state, rounds, _reference_step)


def test_the_references_unchecked_constructors_build_what_the_public_ones_build() -> None:
    cluster = Cluster((GpuType("V100"),), (Server("s0", "V100", 4),))
    job = Job("a", 1, 3, 60.0)
    public = el.EdlJob(job, 12.5, 0.0, (1.0, 1.8, 2.4), 2)
    trusted = unchecked_job(job, 12.5, 0.0, (1.0, 1.8, 2.4), 2)
    assert trusted == public
    assert repr(trusted) == repr(public)
    placement = Placement.from_mapping({"a": {"s0": 2}})
    state = el.EdlState(cluster, (public,), placement, el.TiresiasParams())
    fast = unchecked_state(cluster, (trusted,), placement, el.TiresiasParams())
    assert fast == state
    assert dict(fast.jobs_by_id) == dict(state.jobs_by_id)
    # The public constructors still check what a user passes.
    with pytest.raises(InvalidInstanceError, match="speedup"):
        el.EdlJob(job, 0.0, 0.0, (1.0, 0.0, 2.0), 2)


# --- the adapter as it was --------------------------------------------------------------


class _ReferenceAdapter(RebuildAdapter):
    """The adapter's ``decide`` before the change: the whole state rebuilt and validated."""

    def decide(self, view: View) -> Decision:
        now = view.now
        for st_ in view.finished:
            self.jobs.pop(st_.index, None)
            self.offset.pop(st_.index, None)
        live = sorted((*view.pending.values(), *view.running.values()), key=lambda s: s.index)
        if not live:
            return Decision()
        edl_jobs_ = []
        mapping: dict[str, dict[str, int]] = {}
        for st_ in live:
            las = max(0.0, st_.service(now) - self.offset.get(st_.index, 0.0))
            waiting = 0.0 if st_.placement else max(0.0, now - st_.queued_since)
            base = self._job(st_)
            edl_jobs_.append(el.EdlJob(base.job, las, waiting, base.speedup, st_.job.gpus))
            if st_.placement:
                mapping[base.id] = {f"s{s}": g for s, g in st_.placement}
        state = el.EdlState(
            self._cluster(view), tuple(edl_jobs_), Placement.from_mapping(mapping), self.params
        )
        decision, _ = _reference_step(state)
        # What follows the step did not change: the adapter's own code for both.
        return self._apply(view, state, decision)


class _Recorder:
    """Wraps a policy and keeps every (time, decision) it returns."""

    def __init__(self, policy: EdlTiresias | RebuildAdapter) -> None:
        self.policy = policy
        self.name = policy.name
        self.calls: list[tuple[float, Decision]] = []

    def decide(self, view: View) -> Decision:
        d = self.policy.decide(view)
        self.calls.append((view.now, d))
        return d


def _run(
    workload: Workload, servers: int, policy: EdlTiresias | RebuildAdapter
) -> tuple[object, ...]:
    rec = _Recorder(policy)
    try:
        out = simulate(workload, ClusterSpec.uniform(servers, 8), rec)  # type: ignore[arg-type]
    except PolicyError as e:  # the same failure at the same call is also "the same"
        return (rec.calls, str(e))
    return (
        rec.calls,
        out.first_start,
        out.end,
        out.preemptions,
        out.gpu_time,
        out.busy_area,
        out.changes,
        policy.stats(),
    )


# Loads chosen so that compaction, expansion, resizes and preemptions all occur.
# The last two made Elastic-Tiresias fail ("still preempting after 1000 calls")
# before the livelock fix (idle victims kept running in a compaction round, applied
# to the reference too): every run must now complete.
@pytest.mark.parametrize(
    ("seed", "jobs", "rate", "servers", "rule"),
    [
        # 200 jobs each: about 1-4 s per case on a quiet machine (slow).
        pytest.param(0, 200, 1.5, 6, ElasticRule(), marks=pytest.mark.slow),
        pytest.param(0, 200, 1.5, 10, ElasticRule(), marks=pytest.mark.slow),
        pytest.param(4, 200, 0.7, 8, ElasticRule(), marks=pytest.mark.slow),
        pytest.param(
            1,
            200,
            1.5,
            8,
            ElasticRule(min_fraction=0.5, max_factor=1.5, serial=0.1),
            marks=pytest.mark.slow,
        ),
        (3, 120, 1.5, 6, None),  # the trace's inelastic jobs
    ],
)
@pytest.mark.parametrize("elastic", [True, False])
def test_simulations_decide_as_the_rebuild_did_call_by_call(
    seed: int, jobs: int, rate: float, servers: int, rule: ElasticRule | None, elastic: bool
) -> None:
    base = generate(SyntheticSpec(jobs=jobs, rate=rate, max_gpus=16), seed)
    workload = base if rule is None else Workload.of(tuple(rule.apply(j) for j in base.jobs), "w")
    fast = _run(workload, servers, EdlTiresias(elastic=elastic, scaling="free"))  # the rules alone
    reference = _run(workload, servers, _ReferenceAdapter(elastic=elastic))
    assert len(fast[0]) > 50  # type: ignore[arg-type]  # enough calls to mean something
    assert not isinstance(fast[1], str), fast[1]  # completed, no PolicyError
    assert fast == reference
