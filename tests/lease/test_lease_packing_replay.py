"""The packing search's faster ``_replay`` gives the former terms (issue 25).

Reference: the former code (tests/lease/_packing_reference.py), on random
jobs and random count vectors (feasible or not: both versions must take the
same jobs in the same order either way), and on the search's own answers.
"""

from __future__ import annotations

import numpy as np
import pytest

from scheduling_opt.lease.packing import Verdict, _replay, pack

from . import _packing_reference as ref


@pytest.mark.parametrize("seed", range(20))
def test_replay_gives_the_former_terms(seed: int) -> None:
    rng = np.random.default_rng(seed)
    sizes_pool = [1, 2, 4, 8, 16]
    n = int(rng.integers(1, 40))
    jobs = []
    for _ in range(n):
        dl = int(rng.integers(1, 15))
        jobs.append((int(rng.choice(sizes_pool)), int(rng.integers(0, dl + 1)), dl))
    work = [j for j in jobs if j[1] > 0]
    if not work:
        return
    horizon = max(dl for _, _, dl in work)
    sizes = sorted({g for g, _, _ in work}, reverse=True)
    count = [sum(1 for g, _, _ in work if g == size) for size in sizes]
    choice = [tuple(int(rng.integers(0, c + 1)) for c in count) for _ in range(horizon)]
    assert _replay(jobs, horizon, sizes, choice) == ref.replay(jobs, horizon, sizes, choice)


def test_search_answers_are_packings() -> None:
    rng = np.random.default_rng(5)
    packed = 0
    for _ in range(40):
        jobs = [
            (int(rng.choice([1, 2, 4, 8])), int(rng.integers(1, 4)), int(rng.integers(3, 8)))
            for _ in range(int(rng.integers(2, 12)))
        ]
        terms, verdict = pack(jobs, 8, 5.0)
        if verdict is Verdict.PACKED:
            assert terms is not None
            packed += 1
            load = [0] * 8
            for (g, rl, dl), held in zip(jobs, terms, strict=True):
                assert len(set(held)) == rl
                assert all(0 <= k < dl for k in held)
                for k in held:
                    load[k] += g
            assert max(load) <= 8
    assert packed > 5
