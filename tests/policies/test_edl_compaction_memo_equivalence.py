"""Compaction with its per-round memo and fast refusal decides as the compaction without them.

``_compact_before`` is :func:`~scheduling_opt.policies.edl.compaction.compact`
as it was at commit f714fb9: the donors, obtainable workers, locality limit
and server choice recomputed for every waiting job. The library now keeps
the donors and obtainable workers per round (``Round.memo``, emptied by
every change of the round) and refuses a job at once when the ``limit``
largest obtainable counts cannot reach its minimum. The step with the old
function patched in and the step as it is must decide the same over
random multi-round states (hypothesis). The next-plan check's trusted
placement (``Placement._trusted``) must equal ``Placement.from_mapping``.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from dataclasses import replace
from unittest import mock

from hypothesis import given, settings
from hypothesis import strategies as st

from scheduling_opt.model import Cluster, GpuType, Placement, Server
from scheduling_opt.policies import edl as el
from scheduling_opt.policies.edl import compaction as cp
from scheduling_opt.policies.edl import replan
from scheduling_opt.policies.edl.compaction import TOLERANCE, _apply, _cheapest_worker, _donors
from scheduling_opt.policies.edl.round import Round
from scheduling_opt.policies.locality import locality_limit, pick_servers
from scheduling_opt.reproduce.workloads import ElasticRule
from scheduling_opt.sim import ClusterSpec, simulate
from scheduling_opt.sim.policies.edl.elastic_tiresias import EdlTiresias
from scheduling_opt.sim.synthetic import SyntheticSpec, generate
from scheduling_opt.sim.workload import Workload
from scheduling_opt.testing import edl_jobs
from tests.policies.edl_rollout import library_step, rollout


def _compact_before(r: Round, j: el.EdlJob, accept: Callable[[Round], bool] | None = None) -> int:
    d = j.job.gpus_per_worker
    donors, give = _donors_and_give(r, j)
    obtainable = {
        s.id: (r.free[s.id] + give[s.id]) // d for s in r.cluster.servers if j.job.fits(s)
    }
    limit = locality_limit(r.cluster, j.job, j.requested_gpus)
    servers = pick_servers(obtainable, j.parallelism, limit, r.rank)
    if sum(obtainable[s] for s in servers) < j.job.min_workers:
        return 0
    trial = r.copy()
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
    k = min(k for g, k in feasible if g >= gain - TOLERANCE)
    if accept is not None:
        final = r.copy()
        _apply(final, j, steps[:k])
        if not accept(final):
            return 0
    _apply(r, j, steps[:k])
    return k


def _step_before(state: el.EdlState) -> tuple[el.EdlDecision, float]:
    with mock.patch.object(replan, "compact", _compact_before):
        return library_step(state)


@settings(max_examples=300, deadline=None)
@given(
    st.lists(st.integers(1, 8), min_size=1, max_size=5),
    edl_jobs(),
    edl_jobs(),
    st.integers(0, 3),
    st.lists(st.tuples(st.floats(1.0, 5000.0), st.integers(0, 7)), min_size=1, max_size=6),
)
def test_the_step_with_the_compaction_memo_decides_as_before(
    sizes: list[int],
    first: list[el.EdlJob],
    second: list[el.EdlJob],
    n: int,
    rounds: list[tuple[float, int]],
) -> None:
    cluster = Cluster(
        (GpuType("V100"),), tuple(Server(f"s{i}", "V100", g) for i, g in enumerate(sizes))
    )
    # Two draws (ids renamed apart) give up to 16 jobs: rounds with many waiting jobs.
    jobs = tuple(first) + tuple(
        replace(j, job=replace(j.job, id=f"k{k}")) for k, j in enumerate(second)
    )
    params = el.TiresiasParams(compaction=n, starvation=3000.0, elastic=True)
    state = el.EdlState(cluster, jobs, Placement(), params)
    assert rollout(state, rounds) == rollout(state, rounds, _step_before)


@given(
    st.dictionaries(
        st.sampled_from(["a", "b", "c", "d"]),
        st.dictionaries(st.sampled_from(["s0", "s1", "s2"]), st.integers(0, 4)),
    )
)
def test_trusted_placement_is_from_mapping(mapping: dict[str, dict[str, int]]) -> None:
    fast, checked = Placement._trusted(mapping), Placement.from_mapping(mapping)
    assert fast == checked
    assert fast.rows == checked.rows
    assert fast.as_mapping() == checked.as_mapping()
    assert fast.jobs() == checked.jobs()


@settings(max_examples=150, deadline=None)
@given(
    st.lists(st.integers(1, 8), min_size=1, max_size=4),
    edl_jobs(),
    st.lists(st.tuples(st.floats(1.0, 5000.0), st.integers(0, 7)), min_size=1, max_size=5),
)
def test_a_waiting_jobs_donors_and_their_gpus_are_the_filtered_queue_one_lists(
    sizes: list[int], jobs: list[el.EdlJob], rounds: list[tuple[float, int]]
) -> None:
    # Every offer for a waiting job: the donors from the round's queue-1 list
    # (filtered by queue) and their free-able GPUs (summed per queue) equal
    # _donors's own pass and the loop over its donors.
    cluster = Cluster(
        (GpuType("V100"),), tuple(Server(f"s{i}", "V100", g) for i, g in enumerate(sizes))
    )
    params = el.TiresiasParams(compaction=0, starvation=3000.0, elastic=True)
    state = el.EdlState(cluster, tuple(jobs), Placement(), params)
    with mock.patch.object(cp, "_waiting_donors", _BothDonors()):
        rollout(state, rounds)


def _donors_and_give(r: Round, j: el.EdlJob) -> tuple[list[el.EdlJob], dict[str, int]]:
    """The donors and the GPUs they can free per server, as ``_offer`` computed them before."""
    donors = _donors(r, j)
    give = dict.fromkeys(r.free, 0)
    for x in donors:
        slack = r.count[x.id] - r.floors[x.id]
        for server, n in r.alloc[x.id].items():
            give[server] += min(n, slack) * x.job.gpus_per_worker
    return donors, give


class _BothDonors:
    """Stands for ``_waiting_donors``: asserts it equals the reference; counts the queue classes."""

    def __init__(self) -> None:
        self.fast = cp._waiting_donors
        self.seen: Counter[int] = Counter()

    def __call__(
        self, r: Round, j: el.EdlJob, lowest: int
    ) -> tuple[list[el.EdlJob], dict[str, int]]:
        got = self.fast(r, j, lowest)
        assert lowest == max(1, r.queue[j.id])
        assert j.id not in r.alloc
        assert got == _donors_and_give(r, j)
        self.seen[lowest] += 1
        return got


def test_a_waiting_jobs_donors_in_a_compaction_heavy_simulation() -> None:
    # 150 elastic jobs arriving 3x faster than 4 x 8 GPUs serve (as in
    # test_edl_replan): offers for both queue classes, from one list per round.
    base = generate(SyntheticSpec(jobs=150, rate=3.0, max_gpus=16), 5)
    rule = ElasticRule(share=0.5, min_fraction=0.5, max_factor=1.5, serial=0.1)
    workload = Workload.of(tuple(rule.apply(j) for j in base.jobs), "w")
    both = _BothDonors()
    with mock.patch.object(cp, "_waiting_donors", both):
        simulate(workload, ClusterSpec.uniform(4, 8), EdlTiresias(unit_seconds=60.0))
    assert both.seen[1] > 0
    assert both.seen[2] > 0
