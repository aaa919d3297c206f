"""The incremental expansion picks exactly what the first, per-pair version picked.

``_expand_reference`` is the expansion as first written (commit 1db5856):
for every job and every server, the locality limit recomputed and the key
(gain, priority, a new server, cluster rank) compared; the step with it and
the step with the incremental ``expand`` must decide the same on random
states (hypothesis), over several rounds so that running, elastic jobs meet
idle GPUs.
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from scheduling_opt.model import Cluster, GpuType, Job, Placement, Server
from scheduling_opt.policies import edl as el
from scheduling_opt.policies.edl import elastic_tiresias as et
from scheduling_opt.policies.edl.round import Round
from scheduling_opt.policies.locality import locality_limit
from scheduling_opt.testing import edl_jobs
from tests.policies.edl_rollout import rollout


def _expand_reference(r: Round, order: list[el.EdlJob]) -> None:
    while True:
        best: tuple[tuple[float, int, bool, int], el.EdlJob, str] | None = None
        for i, j in enumerate(order):
            p = r.workers(j.id)
            if not p or not j.job.elastic or p >= j.job.max_workers:
                continue
            gain = j.throughput(p + 1) / j.throughput(p) - 1
            if gain <= 0:
                continue
            on = r.alloc[j.id]
            limit = locality_limit(r.cluster, j.job, (p + 1) * j.job.gpus_per_worker)
            for s in r.cluster.servers:
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


@settings(max_examples=150, deadline=None)
@given(
    st.lists(st.integers(1, 8), min_size=1, max_size=5),
    edl_jobs(),
    st.integers(0, 3),
    st.lists(st.tuples(st.floats(1.0, 5000.0), st.integers(0, 7)), min_size=1, max_size=5),
)
def test_incremental_expansion_decides_as_the_reference(
    sizes: list[int], jobs: list[el.EdlJob], n: int, rounds: list[tuple[float, int]]
) -> None:
    cluster = Cluster(
        (GpuType("V100"),), tuple(Server(f"s{i}", "V100", g) for i, g in enumerate(sizes))
    )
    state = el.EdlState(
        cluster, tuple(jobs), Placement(), el.TiresiasParams(compaction=n, starvation=3000.0)
    )
    new = rollout(state, rounds)
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(et, "expand", _expand_reference)
        old = rollout(state, rounds)
    assert new == old


def test_expansion_prefers_a_server_the_job_uses_then_cluster_order() -> None:
    # Worked by hand: three 2-GPU servers; a (1..4 workers, linear speedup,
    # gain S(p+1)/S(p) - 1 = 1, 1/2, 1/3 > 0) runs 1 worker on s1, nothing
    # waits. Worker 2: limit ceil(2/2) = 1 server, so s1 (its own, 1 free).
    # Worker 3: s1 is full, limit ceil(3/2) = 2 allows a new server: s0, the
    # first in cluster order (not s2). Worker 4: s0, now its own, 1 free.
    cluster = Cluster((GpuType("V100"),), tuple(Server(f"s{i}", "V100", 2) for i in range(3)))
    a = el.EdlJob(Job("a", 1, 4, 100.0), 0.0, 0.0, (), 1)
    state = el.EdlState(
        cluster, (a,), Placement.from_mapping({"a": {"s1": 1}}), el.TiresiasParams()
    )
    d = el.elastic_tiresias_step(state).decision
    assert d is not None
    assert d.mode == "expansion"
    assert d.placement.servers_of("a") == {"s0": 2, "s1": 2}
