"""The lease model builders as they were before issue 25's speed-up: the reference.

:mod:`scheduling_opt.lease.formulation` now builds the same rows in one pass
per kind (capacity rows per block, the levels model without the full one,
the energy rows vectorized); these are the former loops, kept verbatim so
that tests/lease/test_formulation_equivalence.py can prove the new builders
give the same columns, coefficients and bounds in the same order.
"""

from __future__ import annotations

from scheduling_opt.lease.formulation import (
    Blocks,
    Layout,
    ModelConfig,
    Row,
    identical_pairs,
)
from scheduling_opt.lease.model import LeaseInput


def layout(inp: LeaseInput, blocks: Blocks) -> Layout:
    lay = Layout()
    for job in inp.lease_jobs:
        lay.s.append([lay.new() for _ in job.levels])
        lay.y.append([(b, lay.new()) for b, st in enumerate(blocks.start) if st < job.last_due])
    return lay


def rows(inp: LeaseInput, blocks: Blocks, lay: Layout, cfg: ModelConfig) -> list[Row]:
    inf = float("inf")
    out: list[Row] = []
    for i, job in enumerate(inp.lease_jobs):
        s, y = lay.s[i], lay.y[i]
        if not s:
            continue
        lo = 1.0 if inp.require_all else 0.0
        out.append((s, [1.0] * len(s), lo, 1.0))
        count = ([v for _, v in y] + s, [1.0] * len(y) + [-float(job.terms)] * len(s))
        if cfg.tight:
            out.append((*count, 0.0, 0.0))
            for b, v in y:
                cap = min(blocks.end[b] - blocks.start[b], job.terms)
                open_ = [s[p] for p, lv in enumerate(job.levels) if lv.due >= blocks.end[b]]
                out.append(([v, *open_], [1.0] + [-float(cap)] * len(open_), -inf, 0.0))
        else:
            out.append((*count, -inf, 0.0))
            for p, lv in enumerate(job.levels):
                before = [v for b, v in y if blocks.end[b] <= lv.due]
                out.append(([*before, s[p]], [1.0] * len(before) + [-float(job.terms)], 0.0, inf))
    for b, capped in enumerate(blocks.capped):
        if capped:
            cols = [
                (v, float(inp.lease_jobs[i].gpus))
                for i in range(len(inp.lease_jobs))
                for c, v in lay.y[i]
                if c == b
            ]
            if cols:
                out.append(([c for c, _ in cols], [g for _, g in cols], -inf, float(inp.capacity)))
    if cfg.symmetry:
        for a, b in identical_pairs(inp):
            ranks = [float(len(lay.s[a]) - p) for p in range(len(lay.s[a]))]
            out.append((lay.s[a] + lay.s[b], ranks + [-r for r in ranks], 0.0, inf))
    return out


def energy_rows(inp: LeaseInput, lay: Layout) -> list[Row]:
    out: list[Row] = []
    inf = float("inf")
    for t in range(1, inp.horizon + 1):
        cols: list[int] = []
        coefs: list[float] = []
        for job, s in zip(inp.lease_jobs, lay.s, strict=True):
            for lv, v in zip(job.levels, s, strict=True):
                must = job.terms - max(0, lv.due - t)
                if must > 0:
                    cols.append(v)
                    coefs.append(float(job.gpus * must))
        if cols:
            out.append((cols, coefs, -inf, float(inp.capacity * t)))
    return out


def levels_rows(inp: LeaseInput, blocks: Blocks, lay: Layout, cfg: ModelConfig) -> list[Row]:
    """The levels model's rows: the full rows over level columns only, then the energy rows."""
    full = rows(inp, blocks, lay, cfg)
    s_cols = {v for s in lay.s for v in s}
    kept = [row for row in full if all(c in s_cols for c in row[0])]
    return kept + energy_rows(inp, lay)
