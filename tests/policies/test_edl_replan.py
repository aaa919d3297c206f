"""Compaction's next-plan check decides as the plan run in full.

``replan_preempts`` (would the next call's plan preempt a job after this
compaction?) runs the plan's budget pass, the starts' gangs and the restore
on plain counts, without building the round's placement or a round for the
plan. ``_reference`` is the plan run in full, written apart: a round built
from the trial's placement, every job in priority order against the
budget, the kept jobs placed, the starts placed by ``gang_on`` on what
they leave, and the victims put back where their GPUs are free. A wrapper
calls both at every check of real runs (hypothesis states rolled out by the
step, and a simulated compaction-heavy workload) and asserts the same
answer, counting the answers so that both outcomes (and the path with
victims) are exercised.
"""

from __future__ import annotations

from collections import Counter

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from scheduling_opt.model import Cluster, GpuType, Placement, Server
from scheduling_opt.policies import edl as el
from scheduling_opt.policies.edl import replan
from scheduling_opt.policies.edl.plan import gang_on
from scheduling_opt.policies.edl.round import Round
from scheduling_opt.policies.locality import locality_limit
from scheduling_opt.reproduce.workloads import ElasticRule
from scheduling_opt.sim import ClusterSpec, simulate
from scheduling_opt.sim.policies.edl.elastic_tiresias import EdlTiresias
from scheduling_opt.sim.synthetic import SyntheticSpec, generate
from scheduling_opt.sim.workload import Workload
from scheduling_opt.testing import edl_jobs
from tests.policies.edl_rollout import rollout


def _reference(r: Round, order: list[el.EdlJob]) -> bool:
    """The plan run in full on a round holding ``r``'s placement: does it preempt a job?"""
    cluster = r.cluster
    nxt = Round(
        cluster,
        r.params,
        {},
        {s.id: s.gpus for s in cluster.servers},
        r.queue,
        r.rank,
        r.jobs,
        {},
        r.prio,
    )
    budget = cluster.total_gpus
    keep, start, victims = [], [], []
    for j in order:
        running = r.count[j.id] if j.id in r.alloc else 0
        demand = (running or j.parallelism) * j.job.gpus_per_worker
        if demand <= budget:
            budget -= demand
            (keep if running else start).append(j)
        elif running:
            victims.append(j)
    for j in keep:
        for s, n in r.alloc[j.id].items():
            nxt.add(j.id, s, n)
    for j in start:
        d = j.job.gpus_per_worker
        usable = {
            s.id: nxt.free[s.id] // d
            for s in cluster.servers
            if j.job.fits(s) and nxt.free[s.id] >= d
        }
        where = gang_on(
            usable, j.parallelism, locality_limit(cluster, j.job, j.requested_gpus), r.rank
        )
        for s, n in (where or {}).items():
            nxt.add(j.id, s, n)
    for j in victims:
        rows = r.alloc[j.id]
        if not all(nxt.free[s] >= n * j.job.gpus_per_worker for s, n in rows.items()):
            return True
        for s, n in rows.items():
            nxt.add(j.id, s, n)
    return False


def _victims(r: Round, order: list[el.EdlJob]) -> bool:
    """Whether the budget pass alone lists a victim (the path past the first shortcut)."""
    budget = r.cluster.total_gpus
    for j in order:
        running = r.count[j.id] if j.id in r.alloc else 0
        demand = (running or j.parallelism) * j.job.gpus_per_worker
        if demand <= budget:
            budget -= demand
        elif running:
            return True
    return False


class _Both:
    """Stands for ``replan_preempts``: runs the new and the reference, asserts they agree."""

    def __init__(self) -> None:
        self.fast = replan.replan_preempts
        self.seen: Counter[tuple[bool, bool]] = Counter()

    def __call__(
        self,
        r: Round,
        check: replan.PlanCheck,
        keys: list[int],
        ids: list[str],
        demand: list[int],
        victims: list[str] | None = None,
    ) -> bool:
        got = self.fast(r, check, keys, ids, demand, victims)
        # The lists the caller passed are the round's placed jobs in priority order.
        assert ids == sorted(r.alloc, key=r.prio.__getitem__)
        assert keys == [r.prio[k] for k in ids]
        assert demand == [r.count[k] * r.jobs[k].job.gpus_per_worker for k in ids]
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
        mp.setattr(replan, "replan_preempts", both)
        rollout(state, rounds)


def test_check_equals_the_full_plan_in_a_compaction_heavy_simulation() -> None:
    # 150 elastic jobs arriving 3x faster than 4 x 8 GPUs serve, half of them
    # elastic down to half their GPUs: compaction runs at most calls.
    base = generate(SyntheticSpec(jobs=150, rate=3.0, max_gpus=16), 5)
    rule = ElasticRule(share=0.5, min_fraction=0.5, max_factor=1.5, serial=0.1)
    workload = Workload.of(tuple(rule.apply(j) for j in base.jobs), "w")
    both = _Both()
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(replan, "replan_preempts", both)
        simulate(workload, ClusterSpec.uniform(4, 8), EdlTiresias(unit_seconds=60.0))
    # Every outcome of the check ran: no victim; victims all restored; a victim
    # that cannot go back (the compaction refused).
    assert both.seen[(False, False)] > 0
    assert both.seen[(True, False)] > 0
    assert both.seen[(True, True)] > 0
