"""Compaction over streams of like waiting jobs decides as the loop over every waiting job.

On a long queue a compaction loop over every waiting job costs O(J) per
call, most of a heavily loaded run. The step merges streams of jobs of one
queue class and kind instead, and skips a class, until the round changes,
once one of its jobs fails before the next-plan check. ``_every_job`` is
the plain loop (every waiting job in priority order, the same attempt and
check per job); a wrapper records the attempts of the streams' loop so
that the tests also show the skip, and its undoing by a start, happening
(not only the same decisions).

A check that refuses a job among its own plan's victims also marks the
class dead. ``_LostClass`` checks the rule itself under the reference
loop: after such a refusal every later attempt of the class in the call
fails until a start (the variant that marks a class dead at any refusal
fails it, and the equivalence above, on the long queue).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from scheduling_opt.model import Cluster, GpuType, Job, Placement, Server
from scheduling_opt.policies import edl as el
from scheduling_opt.policies.edl import elastic_tiresias as et
from scheduling_opt.policies.edl.replan import PlanCheck
from scheduling_opt.policies.edl.round import Round
from scheduling_opt.policies.edl.waiting import Waiting, kind
from scheduling_opt.reproduce.workloads import ElasticRule
from scheduling_opt.sim import ClusterSpec, simulate
from scheduling_opt.sim.policies.edl.elastic_tiresias import EdlTiresias
from scheduling_opt.sim.synthetic import SyntheticSpec, generate
from scheduling_opt.sim.workload import Workload
from tests.policies.edl_rollout import rollout


def _every_job(r: Round, waiting: Waiting, gone: set[str], started: list[str]) -> None:
    """The compaction loop before the streams: each waiting job in priority order."""
    alloc = r.alloc
    order = sorted(r.jobs.values(), key=lambda j: r.prio[j.job.id])
    todo = [j for j in order if j.job.id not in alloc]
    check = PlanCheck(waiting)
    for j in todo:
        k = j.job.id
        if k not in gone and et.compact_stable(r, j, check):
            started.append(k)
            check.started(r, r.prio[k], j)  # listed, and the check's demands rebuilt


class _Attempts:
    """Stands for ``compact_stable``: records each call's attempts (class, reached check, result)."""

    def __init__(self) -> None:
        self.inner = et.compact_stable
        self.calls: list[list[tuple[object, bool, bool]]] = []

    def __call__(self, r: Round, j: el.EdlJob, check: PlanCheck) -> bool:
        ok = self.inner(r, j, check)
        self.calls[-1].append(((max(1, r.queue[j.job.id]), kind(j)), check.asked, ok))
        return ok

    def revived(self) -> int:
        """Attempts on a class that had failed before the check, after a start in the same call."""
        n = 0
        for call in self.calls:
            failed: set[object] = set()
            back: set[object] = set()  # failed, then a start: tried again
            for cls, asked, ok in call:
                n += cls in back
                if ok:
                    back |= failed
                    failed = set()
                elif not asked:
                    failed.add(cls)
        return n


@contextmanager
def _recording(loop: object = None) -> Iterator[_Attempts]:
    """Attempts recorded per call, under the streams' loop or ``loop`` (the reference)."""
    attempts = _Attempts()
    inner = loop or et._compaction

    def compaction(r: Round, waiting: Waiting, gone: set[str], started: list[str]) -> None:
        attempts.calls.append([])
        inner(r, waiting, gone, started)  # type: ignore[operator]

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(et, "compact_stable", attempts)
        mp.setattr(et, "_compaction", compaction)
        yield attempts


def _outputs(workload: Workload, servers: int) -> tuple[object, ...]:
    out = simulate(workload, ClusterSpec.uniform(servers, 8), EdlTiresias(unit_seconds=60.0))
    return (out.first_start, out.end, out.preemptions, out.gpu_time, out.changes, out.calls)


@pytest.mark.parametrize(
    ("seed", "rule", "revived"),
    [
        (5, ElasticRule(share=0.5, min_fraction=0.5, max_factor=1.5, serial=0.1), True),
        (1, ElasticRule(), False),
    ],
)
def test_streams_decide_as_every_job_in_a_long_queue(
    seed: int, rule: ElasticRule, revived: bool
) -> None:
    # Jobs arriving 3x faster than 2 x 8 GPUs serve: the queue grows to tens of
    # jobs, of a few kinds (the rule's curve depends only on the GPU count).
    base = generate(SyntheticSpec(jobs=120, rate=3.0, max_gpus=8), seed)
    workload = Workload.of(tuple(rule.apply(j) for j in base.jobs), "w")
    with _recording() as fast:
        got = _outputs(workload, 2)
    with _recording(_every_job) as slow:
        want = _outputs(workload, 2)
    assert got == want
    # The same calls, far fewer attempts: whole classes skipped.
    assert len(fast.calls) == len(slow.calls) > 0
    tried, every = sum(map(len, fast.calls)), sum(map(len, slow.calls))
    assert 0 < 3 * tried < every
    assert (fast.revived() > 0) == revived  # a skipped class tried again after a start


@st.composite
def _like_jobs(draw: st.DrawFn) -> list[el.EdlJob]:
    """4-14 jobs of 1-3 kinds (workers, worker size, requested, speed-up), service drawn."""
    kinds = []
    for _ in range(draw(st.integers(1, 3))):
        lo = draw(st.integers(1, 2))
        hi = draw(st.integers(lo, 4))
        gpw = draw(st.sampled_from([1, 2]))
        want = draw(st.sampled_from([0, lo, hi]))
        curve: tuple[float, ...] = ()
        if draw(st.booleans()):
            curve = tuple(1.0 + 0.7 * p for p in range(hi))  # concave enough: linear 0.7
        kinds.append((lo, hi, gpw, want, curve))
    out = []
    for i in range(draw(st.integers(4, 14))):
        lo, hi, gpw, want, curve = draw(st.sampled_from(kinds))
        service = draw(st.sampled_from([0.0, 600.0, 20_000.0]))
        job = Job(f"j{i}", lo, hi, 100.0, gpus_per_worker=gpw)
        out.append(el.EdlJob(job, service, 0.0, curve, want))
    return out


@settings(max_examples=60, deadline=None)
@given(
    st.lists(st.integers(2, 8), min_size=1, max_size=3),
    _like_jobs(),
    st.lists(st.tuples(st.floats(1.0, 3000.0), st.integers(0, 7)), min_size=1, max_size=4),
)
def test_streams_decide_as_every_job_on_random_rollouts(
    sizes: list[int], jobs: list[el.EdlJob], rounds: list[tuple[float, int]]
) -> None:
    cluster = Cluster(
        (GpuType("V100"),), tuple(Server(f"s{i}", "V100", g) for i, g in enumerate(sizes))
    )
    # N = 0: compaction whenever a job waits.
    state = el.EdlState(cluster, tuple(jobs), Placement(), el.TiresiasParams(compaction=0))
    fast = rollout(state, rounds)
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(et, "_compaction", _every_job)
        slow = rollout(state, rounds)
    assert fast == slow


class _LostClass:
    """Stands for ``compact_stable`` under ``_every_job``: checks the rule behind ``PlanCheck.lost``.

    Once a check refuses a job that is among its own plan's victims, every
    later attempt of its class in the call must fail until a start changes
    the round (what lets the streams skip the class). ``followed`` counts
    the attempts that rule covered, so that a test shows it exercised.
    """

    def __init__(self) -> None:
        self.inner = et.compact_stable
        self.lost: set[object] = set()
        self.followed = 0

    def __call__(self, r: Round, j: el.EdlJob, check: PlanCheck) -> bool:
        check.lost = False  # set anew by this attempt's check, if it runs
        ok = self.inner(r, j, check)
        cls = (max(1, r.queue[j.job.id]), kind(j))
        if cls in self.lost:
            assert not ok, f"{j.job.id} started after its class lost on the same round"
            self.followed += 1
        if ok:
            self.lost = set()
        elif check.asked and check.lost:
            self.lost.add(cls)
        return ok


@contextmanager
def _lost_rule() -> Iterator[_LostClass]:
    """The reference loop (every waiting job tried), each attempt checked by ``_LostClass``."""
    rule = _LostClass()

    def compaction(r: Round, waiting: Waiting, gone: set[str], started: list[str]) -> None:
        rule.lost = set()
        _every_job(r, waiting, gone, started)

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(et, "compact_stable", rule)
        mp.setattr(et, "_compaction", compaction)
        yield rule


@pytest.mark.parametrize("seed", [1, 5])
def test_a_class_lost_by_its_own_job_fails_until_a_start(seed: int) -> None:
    # The long queue of the test above, its jobs all elastic (1-GPU jobs of
    # one kind pile up behind the budget): every attempt is made.
    base = generate(SyntheticSpec(jobs=120, rate=3.0, max_gpus=8), seed)
    workload = Workload.of(tuple(ElasticRule().apply(j) for j in base.jobs), "w")
    with _lost_rule() as rule:
        _outputs(workload, 2)
    assert rule.followed > 0


@settings(max_examples=60, deadline=None)
@given(
    st.lists(st.integers(2, 8), min_size=1, max_size=3),
    _like_jobs(),
    st.lists(st.tuples(st.floats(1.0, 3000.0), st.integers(0, 7)), min_size=1, max_size=4),
)
def test_a_class_lost_by_its_own_job_fails_on_random_rollouts(
    sizes: list[int], jobs: list[el.EdlJob], rounds: list[tuple[float, int]]
) -> None:
    cluster = Cluster(
        (GpuType("V100"),), tuple(Server(f"s{i}", "V100", g) for i, g in enumerate(sizes))
    )
    state = el.EdlState(cluster, tuple(jobs), Placement(), el.TiresiasParams(compaction=0))
    with _lost_rule():
        rollout(state, rounds)  # _LostClass asserts at every attempt
