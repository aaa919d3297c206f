"""The packing search over counts per work value is the former search, node for node (issue 25).

Reference: the former search over every job's work left
(tests/lease/_packing_reference.py). Both must give the same terms and
verdict under every node budget: a budget that stops one search at another
node than the other would show as ``unknown`` against an answer, so equal
answers at budgets 1..60 mean the same nodes in the same order. Instances:
random jobs near the capacity (packable, unpackable, with branching), small
enough for a few milliseconds each.
"""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from scheduling_opt.lease.packing import Verdict, pack

from . import _packing_reference as ref

Jobs = list[tuple[int, int, int]]


@st.composite
def packings(draw: st.DrawFn) -> tuple[Jobs, int]:
    capacity = draw(st.sampled_from([3, 4, 8, 12, 16]))
    horizon = draw(st.integers(1, 8))
    sizes = draw(
        st.lists(st.sampled_from([1, 2, 3, 4, 8, 16]), min_size=1, max_size=4, unique=True)
    )
    sizes = [g for g in sizes if g <= capacity + 1] or [1]
    # Work around the capacity: from light (every job fits) to over-full.
    budget = capacity * horizon * draw(st.sampled_from([0.3, 0.7, 0.9, 1.0, 1.1]))
    jobs: Jobs = []
    while budget > 0 and len(jobs) < 24:
        dl = draw(st.integers(1, horizon))
        g = draw(st.sampled_from(sizes))
        rl = draw(st.integers(0, dl))
        jobs.append((g, rl, dl))
        budget -= g * max(rl, 1)
    return jobs, capacity


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(packings())
def test_counts_search_equals_the_former_search(case: tuple[Jobs, int]) -> None:
    jobs, capacity = case
    want = ref.pack(jobs, capacity, 60.0)
    assert pack(jobs, capacity, 60.0) == want
    for budget in (1, 2, 3, 5, 8, 13, 21, 34, 60):
        assert pack(jobs, capacity, 60.0, budget) == ref.pack(jobs, capacity, 60.0, budget)


def test_a_full_packing_by_hand() -> None:
    # Six 3-GPU jobs and two 2-GPU jobs, one term each, on 8 GPUs over 3 terms
    # (22 of 24 GPU-terms): two 3s per term, the 2s in two different terms.
    jobs = [(3, 1, 3)] * 6 + [(2, 1, 3)] * 2
    terms, verdict = pack(jobs, 8, 60.0)
    assert (terms, verdict) == ref.pack(jobs, 8, 60.0)
    assert verdict is Verdict.PACKED
    assert terms is not None
    load = [0, 0, 0]
    for (g, rl, dl), held in zip(jobs, terms, strict=True):
        assert len(set(held)) == rl
        assert all(0 <= k < dl for k in held)
        for k in held:
            load[k] += g
    assert max(load) <= 8
