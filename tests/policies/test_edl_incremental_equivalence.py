"""The incremental Elastic-Tiresias adapter decides what the per-call rebuild decided, call by call.

The simulator's adapter keeps an index of the state (queues, running jobs,
waiting streams, a heap of queue-change times) across calls and runs the
step's rules on it, instead of rebuilding an ``EdlState`` and running the
pure step at every call. ``RebuildAdapter``
(``tests/policies/edl_rebuild.py``) is that simpler adapter: every
unfinished job into a state, the library's ``elastic_tiresias_step``, a
timer scanned over every job. Both run the
same workloads; every decision (starts, preemptions, resizes, timer, to
the last bit) and every output must be equal. The loads are chosen so that
every path runs: compaction (with and without a start it accepts),
expansion with idle GPUs, restored victims, starvation promotions, queue
crossings timed by the heap, preemptions and follow-up calls.
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from scheduling_opt.reproduce.workloads import ElasticRule
from scheduling_opt.sim import ClusterSpec, simulate
from scheduling_opt.sim.policies.edl.elastic_tiresias import EdlTiresias
from scheduling_opt.sim.policies.edl.index import RangeSums
from scheduling_opt.sim.protocol import Decision, PolicyError, View
from scheduling_opt.sim.synthetic import SyntheticSpec, generate
from scheduling_opt.sim.workload import Workload, bundled
from tests.policies.edl_rebuild import RebuildAdapter


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
        out = simulate(workload, ClusterSpec.uniform(servers, 8), rec)
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


def _both(workload: Workload, servers: int, **kw: object) -> tuple[object, object]:
    fast = _run(workload, servers, EdlTiresias(scaling="free", **kw))  # type: ignore[arg-type]
    reference = _run(workload, servers, RebuildAdapter(**kw))  # type: ignore[arg-type]
    return fast, reference


@pytest.mark.parametrize(
    ("seed", "jobs", "rate", "servers", "rule"),
    [
        (0, 250, 1.5, 6, ElasticRule()),
        (2, 250, 0.7, 8, ElasticRule()),
        (5, 250, 3.0, 4, ElasticRule(share=0.5, min_fraction=0.5, max_factor=1.5, serial=0.1)),
        (1, 200, 1.5, 10, ElasticRule(min_fraction=0.5)),
        (3, 200, 1.5, 6, None),  # the trace's inelastic jobs
    ],
)
@pytest.mark.parametrize("elastic", [True, False])
def test_incremental_adapter_decides_as_the_rebuild_call_by_call(
    seed: int, jobs: int, rate: float, servers: int, rule: ElasticRule | None, elastic: bool
) -> None:
    base = generate(SyntheticSpec(jobs=jobs, rate=rate, max_gpus=16), seed)
    workload = base if rule is None else Workload.of(tuple(rule.apply(j) for j in base.jobs), "w")
    fast, reference = _both(workload, servers, elastic=elastic)
    assert len(fast[0]) > 50  # type: ignore[arg-type]  # enough calls to mean something
    assert not isinstance(fast[1], str), fast[1]  # completed, no PolicyError
    assert fast == reference


@pytest.mark.parametrize(
    ("seed", "starvation"),
    [
        # A 5-minute fixed limit: most calls promote or demote someone.
        (7, {"starvation": 300.0}),
        # Tiresias' knob (waiting >= k x executed): the adapter's heap keys
        # and timer against the pure step's rule.
        (11, {"promote_knob": 2.0}),
    ],
    ids=["fixed-limit", "knob"],
)
@pytest.mark.parametrize("elastic", [True, False])
def test_short_starvation_and_thresholds_promote_and_demote_as_the_rebuild(
    elastic: bool, seed: int, starvation: dict[str, float]
) -> None:
    # Thresholds of a few GPU-minutes: most jobs reach the lower queues and
    # starve, so the heap's times decide the queues. 100 jobs (200 cost 47 s
    # of CPU in the default run for the same paths).
    base = generate(SyntheticSpec(jobs=100, rate=2.0, max_gpus=16), seed)
    workload = Workload.of(tuple(ElasticRule(share=0.5).apply(j) for j in base.jobs), "w")
    kw = {"elastic": elastic, "thresholds": (60.0, 600.0, 3000.0), **starvation}
    fast, reference = _both(workload, 5, **kw)
    assert len(fast[0]) > 50  # type: ignore[arg-type]  # enough calls to mean something
    assert not isinstance(fast[1], str), fast[1]
    assert fast == reference


@pytest.mark.slow
@pytest.mark.parametrize("elastic", [True, False])
def test_excerpt_day_decides_as_the_rebuild(elastic: bool) -> None:
    # The bundled excerpt's first 600 jobs on 16 x 8 GPUs (the load of its
    # first 1,500 on 40, at a fifth of the CPU), every job elastic.
    jobs = tuple(ElasticRule().apply(j) for j in bundled().jobs[:600])
    fast, reference = _both(Workload.of(jobs, "w"), 16, elastic=elastic)
    assert len(fast[0]) > 500  # type: ignore[arg-type]  # a busy day's worth of calls
    assert not isinstance(fast[1], str), fast[1]
    assert fast == reference


@settings(max_examples=60, deadline=None)
@given(
    st.lists(st.tuples(st.integers(0, 5000), st.integers(-8, 8)), max_size=60),
    st.lists(st.integers(0, 6000), min_size=1, max_size=10),
)
def test_queue_sums_equal_a_plain_sum(adds: list[tuple[int, int]], queries: list[int]) -> None:
    # The plan's range sums of running workers (a Fenwick tree that doubles
    # from 1,024 indices) against the sum of a plain list.
    sums, plain = RangeSums(), [0] * 6001
    for i, delta in adds:
        sums.add(i, delta)
        plain[i] += delta
        for x in queries:
            assert sums.below(x) == sum(plain[:x])
