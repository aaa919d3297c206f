"""The faster ``compact``, ``load_of`` and ``place`` equal the former ones (issue 25).

Reference: the former code (tests/lease/_schedule_reference.py). Schedules:
the greedy's uncompacted placements on generated inputs (the ones
``compact`` sees in the greedy), and random feasible schedules of a few
terms per job at random places, including duplicate terms for ``load_of``.
"""

from __future__ import annotations

import numpy as np
import pytest

from scheduling_opt.lease._schedule import compact, load_of, relevel
from scheduling_opt.lease.greedy import deadline_order, density_order, place, slack_order
from scheduling_opt.lease.io import generate_lease, read

from . import _schedule_reference as ref


@pytest.mark.parametrize("seed", range(12))
def test_compact_makes_the_former_moves(seed: int) -> None:
    rng = np.random.default_rng(seed)
    servers, jobs = [(2, 8), (5, 30), (12, 90), (20, 200)][seed % 4]
    inp = read(generate_lease(servers, jobs, seed, pressure=float(rng.uniform(0.5, 4.0))))
    schedules = []
    for order in (density_order, deadline_order, slack_order):
        held = place(inp, order(inp))
        assert held == ref.place(inp, order(inp))
        schedules.append(relevel(inp, held))
        # On top of a start (the greedy's repair of a hint): half the jobs kept.
        start = [t if k % 2 else [] for k, t in enumerate(held)]
        assert place(inp, order(inp), start=start) == ref.place(inp, order(inp), start=start)
    # Random feasible schedules: each job's terms anywhere before its last due, capacity kept.
    load = np.zeros(max(inp.horizon, 1), dtype=np.int64)
    held: list[list[int]] = []
    for job in inp.lease_jobs:
        room = [k for k in range(job.last_due) if load[k] + job.gpus <= inp.capacity]
        if job.levels and len(room) >= job.terms:
            pick = sorted(rng.choice(room, size=job.terms, replace=False).tolist())
            load[pick] += job.gpus
            held.append(pick)
        else:
            held.append([])
    schedules.append(relevel(inp, held))
    for schedule in schedules:
        assert compact(inp, schedule) == ref.compact(inp, schedule)
        assert np.array_equal(load_of(inp, schedule.terms), ref.load_of(inp, schedule.terms))
    twice = [list(t) + list(t[:1]) for t in schedules[-1].terms]  # a term listed twice
    assert np.array_equal(load_of(inp, twice), ref.load_of(inp, twice))
