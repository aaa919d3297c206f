"""Aryl's one-job BFD start in the simulator against the library's BFD it stands for.

:func:`~scheduling_opt.sim.policies.aryl.pools.bfd_start` places a start by
a sort (each worker opens the server with the fewest free GPUs that fits
it); :func:`~scheduling_opt.sim.policies.aryl.pools.bfd_start_library`
builds the library's input and runs
:func:`scheduling_opt.placement.bfd_assign`. They must agree on every
free map, server order, size and worker size.
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from scheduling_opt.sim.cluster import FreeMap
from scheduling_opt.sim.policies.aryl.pools import bfd_start, bfd_start_library


@pytest.mark.slow
@settings(max_examples=300, deadline=None)
@given(
    st.lists(st.tuples(st.integers(1, 8), st.integers(0, 8)), min_size=1, max_size=12),
    st.integers(1, 40),
    st.sampled_from([2, 4, 8]),
    st.booleans(),
    st.randoms(use_true_random=False),
)
def test_the_sorted_start_is_the_librarys_bfd(
    servers: list[tuple[int, int]], gpus: int, per_server: int, elastic: bool, rng: object
) -> None:
    plan = FreeMap([cap for cap, _ in servers])
    plan.take(tuple((s, min(used, cap)) for s, (cap, used) in enumerate(servers) if used))
    order = list(range(len(servers)))
    rng.shuffle(order)  # type: ignore[attr-defined]
    subset = sorted(order[: max(1, len(order) - 2)])  # a pool: some of the servers, ascending
    for pool in (subset, order):
        assert bfd_start(plan, pool, gpus, per_server, elastic) == bfd_start_library(
            plan, pool, gpus, per_server, elastic
        )


def test_a_start_fills_the_tightest_servers_first_by_hand() -> None:
    # Free GPUs: server 0 has 5, server 1 has 2, server 2 has 8, server 3 has 2.
    plan = FreeMap([8, 8, 8, 8])
    plan.take(((0, 3), (1, 6), (3, 6)))
    # An elastic job's 6 one-GPU workers: server 1 (2 free, the first of the two
    # tightest), then server 3 (2), then 2 of server 0's 5; server 2 stays empty.
    assert bfd_start(plan, [0, 1, 2, 3], 6, 8, True) == ((0, 2), (1, 2), (3, 2))
    # A 4-GPU inelastic job is one 4-GPU worker: server 0 (5 free) is the best fit.
    assert bfd_start(plan, [0, 1, 2, 3], 4, 8, False) == ((0, 4),)
    # A 16-GPU job is two 8-GPU workers: only server 2 holds one.
    assert bfd_start(plan, [0, 1, 2, 3], 16, 8, False) is None
