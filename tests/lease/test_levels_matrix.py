"""The levels stage's matrix, built at once, is the former row-by-row one exactly (issue 25).

Reference: :func:`~scheduling_opt.lease._highs.matrix` over the rows that
:meth:`Levels.compact` gives one by one (the former path). HiGHS receives
the same CSR arrays and bounds, with and without no-good cuts, so every
levels solve decides as before. Since the second round of issue 25 the
entries are built from the jobs in numpy and the rows only when read.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from scheduling_opt.lease._choice import no_good
from scheduling_opt.lease._highs import matrix
from scheduling_opt.lease._levels import Levels
from scheduling_opt.lease.formulation import ModelConfig, build_levels
from scheduling_opt.lease.io import generate_lease, read


@pytest.mark.parametrize(("servers", "jobs", "seed"), [(2, 8, 1), (5, 40, 2), (15, 150, 3)])
def test_levels_matrix_equals_the_row_by_row_one(servers: int, jobs: int, seed: int) -> None:
    rng = np.random.default_rng(seed)
    base = read(generate_lease(servers, jobs, seed, pressure=2.0))
    for require_all, feasibility, symmetry in ((False, False, True), (True, True, False)):
        inp = replace(base, require_all=require_all)
        relaxed = build_levels(inp, ModelConfig(feasibility=feasibility, symmetry=symmetry))
        stage = Levels(relaxed)
        cuts = []
        for _ in range(3):
            want = matrix([stage.compact(row) for row in [*relaxed.rows, *cuts]], len(stage.cols))
            got = stage.matrix(cuts)
            assert got[0].shape == want[0].shape
            for name in ("data", "indices", "indptr"):
                assert np.array_equal(getattr(got[0], name), getattr(want[0], name))
            assert np.array_equal(got[1], want[1])
            assert np.array_equal(got[2], want[2])
            # A no-good of a random choice of levels (one per job at most).
            x = np.zeros(relaxed.lay.size)
            for s in relaxed.lay.s:
                if s and rng.random() < 0.5:
                    x[s[int(rng.integers(len(s)))]] = 1.0
            cuts.append(no_good(relaxed, x))
        assert len(cuts) == 3
