"""``compact`` and ``load_of`` as they were before issue 25's speed-up: the reference.

tests/lease/test_schedule_equivalence.py proves that the faster versions in
:mod:`scheduling_opt.lease._schedule` make the same moves.
"""

from __future__ import annotations

import bisect
from collections.abc import Sequence

import numpy as np
from numpy.typing import NDArray

from scheduling_opt.lease._schedule import Schedule, relevel
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
