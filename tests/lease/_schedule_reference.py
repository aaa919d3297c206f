"""``compact``, ``load_of``, the greedy's ``place`` and ``greedy_schedule`` as they were before issue 25's speed-up: the reference.

tests/lease/test_schedule_equivalence.py proves that the faster versions in
:mod:`scheduling_opt.lease._schedule` and :mod:`scheduling_opt.lease.greedy`
make the same moves and choices.
"""

from __future__ import annotations

import bisect
from collections.abc import Sequence

import numpy as np
from numpy.typing import NDArray

from scheduling_opt.lease._schedule import Schedule, fit, relevel
from scheduling_opt.lease.model import LeaseInput


def load_of(inp: LeaseInput, terms: Sequence[Sequence[int]]) -> NDArray[np.int64]:
    load = np.zeros(max(inp.horizon, 1), dtype=np.int64)
    for gpus, held in zip(inp.gpus, terms, strict=True):
        load[list(held)] += gpus
    return load


def compact(inp: LeaseInput, schedule: Schedule) -> Schedule:
    jobs = inp.lease_jobs
    held = [list(t) for t in schedule.terms]
    load = load_of(inp, held)
    order = sorted(
        (i for i, pos in enumerate(schedule.levels) if pos is not None),
        key=lambda i: (jobs[i].levels[schedule.levels[i] or 0].due, jobs[i].id),
    )
    for k in range(inp.horizon):
        for i in order:
            terms, gpus = held[i], jobs[i].gpus
            if terms[-1] <= k or load[k] + gpus > inp.capacity:
                continue
            pos = bisect.bisect_left(terms, k)
            if pos < len(terms) and terms[pos] == k:
                continue
            last = terms.pop()
            load[last] -= gpus
            bisect.insort(terms, k)
            load[k] += gpus
    return relevel(inp, held)


def place(
    inp: LeaseInput, order: Sequence[int], *, start: Sequence[Sequence[int]] | None = None
) -> list[list[int]]:
    held = [list(t) for t in start] if start is not None else [[] for _ in inp.lease_jobs]
    load = load_of(inp, held)
    for i in order:
        if held[i]:
            continue
        for level in inp.lease_jobs[i].levels:
            pick = fit(inp, i, level.due, load, late=True)
            if pick is not None:
                load[pick] += inp.lease_jobs[i].gpus
                held[i] = [int(k) for k in pick]
                break
    return held


def greedy_schedule(inp: LeaseInput) -> Schedule:
    """Every order's schedule compacted, the best kept (complete first under require_all)."""
    from scheduling_opt.lease.greedy import deadline_order, density_order, slack_order

    best: Schedule | None = None
    for order in (density_order, deadline_order, slack_order):
        schedule = compact(inp, relevel(inp, place(inp, order(inp))))
        if best is None:
            best = schedule
            continue
        if inp.require_all and schedule.complete() != best.complete():
            better = schedule.complete()
        else:
            better = schedule.reward(inp) > best.reward(inp) + 1e-9
        if better:
            best = schedule
    assert best is not None
    return best
