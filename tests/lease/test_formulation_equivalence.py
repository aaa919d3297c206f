"""The faster model builders give the former rows exactly (issue 25).

The reference is the former code (tests/lease/_formulation_reference.py);
HiGHS receives the same matrix, so every decision that depends on it stays
the same. Instances: the lease generator at several sizes and pressures,
with ``require_all``, ``round_up`` and every formulation switch.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from scheduling_opt.lease import LeaseInput
from scheduling_opt.lease.formulation import (
    ModelConfig,
    _layout,
    _rows,
    build,
    build_levels,
    make_blocks,
)
from scheduling_opt.lease.io import generate_lease, read

from . import _formulation_reference as ref

CASES = [(2, 6, 1), (4, 20, 2), (10, 60, 3), (15, 120, 4), (3, 30, 5)]


def _inputs() -> list[LeaseInput]:
    out = []
    for (servers, jobs, seed), pressure in itertools.product(CASES, (1.0, 3.0)):
        inp = read(generate_lease(servers, jobs, seed, pressure=pressure))
        out.append(inp)
        for require_all, round_up in ((True, False), (False, True)):
            out.append(
                LeaseInput(
                    inp.jobs,
                    inp.capacity,
                    inp.lease_length,
                    require_all=require_all,
                    round_up=round_up,
                    max_terms=inp.max_terms,
                )
            )
    return out


CONFIGS = [
    ModelConfig(tight=t, symmetry=s, aggregate=a, feasibility=f)
    for t, s, a, f in itertools.product((True, False), repeat=4)
]


def _same_rows(got: list, want: list) -> None:
    assert len(got) == len(want)
    for g, w in zip(got, want, strict=True):
        assert list(g[0]) == list(w[0])
        assert [float(x) for x in g[1]] == [float(x) for x in w[1]]
        assert (g[2], g[3]) == (w[2], w[3])


@pytest.mark.parametrize(
    "cfg", CONFIGS, ids=lambda c: f"t{c.tight:d}s{c.symmetry:d}a{c.aggregate:d}"
)
def test_full_and_levels_models_equal_the_former_builders(cfg: ModelConfig) -> None:
    for inp in _inputs():
        blocks = make_blocks(inp, cfg.aggregate)
        lay, want_lay = _layout(inp, blocks), ref.layout(inp, blocks)
        assert (lay.s, lay.y, lay.size) == (want_lay.s, want_lay.y, want_lay.size)
        _same_rows(_rows(inp, blocks, lay, cfg), ref.rows(inp, blocks, want_lay, cfg))
        model = build(inp, cfg)
        _same_rows(model.rows, ref.rows(inp, blocks, want_lay, cfg))
        levels = build_levels(inp, cfg)
        _same_rows(levels.rows, ref.levels_rows(inp, blocks, want_lay, cfg))
        assert np.array_equal(levels.c, build_levels(inp, cfg).c)
