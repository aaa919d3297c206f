"""Compaction's next-plan check decides as the plan run in full (issue 25).

``_replan_preempts`` (would the next call's plan preempt a job after this
compaction?) used to build the round's placement and a fresh round and run
``_base_plan`` and ``_restore_idle_victims`` on them at every compaction
attempt: most of a full-trace Elastic-Tiresias run. It now runs the budget
pass, the starts' gangs and the restore on plain counts. ``_reference`` is
the previous code (commit b8b9394); a wrapper calls both at every check of
real runs (hypothesis states rolled out by the step, and a simulated
compaction-heavy workload) and asserts the same answer, counting the
answers so that both outcomes (and the path with victims) are exercised.
"""

from __future__ import annotations

from collections import Counter

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from scheduling_opt.model import Cluster, GpuType, Placement, Server
from scheduling_opt.policies import edl as el
from scheduling_opt.policies.edl import elastic_tiresias as et
from scheduling_opt.policies.edl._round import Round
from scheduling_opt.policies.edl.model import worker_counts
from scheduling_opt.policies.edl.waiting import Waiting
from scheduling_opt.reproduce.workloads import ElasticRule
from scheduling_opt.sim import ClusterSpec, simulate
from scheduling_opt.sim.policies.edl.elastic_tiresias import EdlTiresias
from scheduling_opt.sim.synthetic import SyntheticSpec, generate
from scheduling_opt.sim.workload import Workload
from scheduling_opt.testing import edl_jobs
from tests.policies.edl_rollout import rollout


def _reference(r: Round, order: list[el.EdlJob]) -> bool:
    """The check as it was: the plan and the restore run on a round built from ``r``'s placement."""
    state = r.state
    placement = Placement._trusted(r.alloc)
    nxt = Round(
        el.EdlState._trusted(state.cluster, state.jobs, placement, r.params),
        r.params,
        {},
        {s.id: s.gpus for s in state.cluster.servers},
        r.queue,
        r.rank,
        r.jobs,
        {},
        r.prio,
        {},
        worker_counts(placement),
    )
    _, preempted = et._base_plan(nxt, order)
    return bool(et._restore_idle_victims(nxt, preempted))


def _victims(r: Round, order: list[el.EdlJob]) -> bool:
    """Whether the budget pass alone lists a victim (the path past the first shortcut)."""
    budget = r.state.cluster.total_gpus
    for j in order:
        running = r.count[j.id] if j.id in r.alloc else 0
        demand = (running or j.parallelism) * j.job.gpus_per_worker
        if demand <= budget:
            budget -= demand
        elif running:
            return True
    return False


class _Both:
    """Stands for ``_replan_preempts``: runs the new and the reference, asserts they agree."""

    def __init__(self) -> None:
        self.fast = et._replan_preempts
        self.seen: Counter[tuple[bool, bool]] = Counter()

    def __call__(
        self,
        r: Round,
        waiting: Waiting,
        running: list[tuple[int, str, int]],
        demand: list[int] | None = None,
        victims: list[str] | None = None,
    ) -> bool:
        got = self.fast(r, waiting, running, demand, victims)
        # The demands the caller passed are the round's workers (built apart).
        assert demand is None or demand == [r.count[k] * g for _, k, g in running]
        # The priority order, as the step built it (r.prio sorts as the positions).
        order = sorted(r.jobs.values(), key=lambda j: r.prio[j.job.id])
        assert got == _reference(r, order)
        self.seen[(_victims(r, order), got)] += 1
        return got


@settings(max_examples=120, deadline=None)
@given(
    st.lists(st.integers(1, 8), min_size=1, max_size=4),
    edl_jobs(),
    st.lists(st.tuples(st.floats(1.0, 5000.0), st.integers(0, 7)), min_size=1, max_size=5),
)
def test_check_equals_the_full_plan_on_random_rollouts(
    sizes: list[int], jobs: list[el.EdlJob], rounds: list[tuple[float, int]]
) -> None:
    cluster = Cluster(
        (GpuType("V100"),), tuple(Server(f"s{i}", "V100", g) for i, g in enumerate(sizes))
    )
    # N = 0: compaction runs whenever a job waits, so the check runs often.
    state = el.EdlState(
        cluster, tuple(jobs), Placement(), el.TiresiasParams(compaction=0, starvation=3000.0)
    )
    both = _Both()
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(et, "_replan_preempts", both)
        rollout(state, rounds)


def test_check_equals_the_full_plan_in_a_compaction_heavy_simulation() -> None:
    # 150 elastic jobs arriving 3x faster than 4 x 8 GPUs serve, half of them
    # elastic down to half their GPUs: compaction runs at most calls.
    base = generate(SyntheticSpec(jobs=150, rate=3.0, max_gpus=16), 5)
    rule = ElasticRule(share=0.5, min_fraction=0.5, max_factor=1.5, serial=0.1)
    workload = Workload.of(tuple(rule.apply(j) for j in base.jobs), "w")
    both = _Both()
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(et, "_replan_preempts", both)
        simulate(workload, ClusterSpec.uniform(4, 8), EdlTiresias(unit_seconds=60.0))
    # Every outcome of the check ran: no victim; victims all restored; a victim
    # that cannot go back (the compaction refused).
    assert both.seen[(False, False)] > 0
    assert both.seen[(True, False)] > 0
    assert both.seen[(True, True)] > 0
