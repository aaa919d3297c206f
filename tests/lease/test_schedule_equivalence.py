"""The faster ``compact``, ``load_of``, ``place`` and greedy equal the former ones (issue 25).

Reference: the former code (tests/lease/_schedule_reference.py). Schedules:
the greedy's uncompacted placements on generated inputs (the ones
``compact`` sees in the greedy), and random feasible schedules of a few
terms per job at random places, including duplicate terms for ``load_of``.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from scheduling_opt.lease._schedule import compact, load_of, relevel
from scheduling_opt.lease.greedy import (
    complete_greedy,
    deadline_order,
    density_order,
    greedy_schedule,
    place,
    slack_order,
)
from scheduling_opt.lease.io import generate_lease, read
from scheduling_opt.lease.model import LeaseInput

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


def _inputs(seed: int) -> list[LeaseInput]:
    """A generated input at a random pressure, as given and with every job required."""
    rng = np.random.default_rng(100 + seed)
    servers, jobs = [(2, 8), (5, 30), (12, 90), (20, 200)][seed % 4]
    inp = read(generate_lease(servers, jobs, seed, pressure=float(rng.uniform(0.5, 4.0))))
    required = replace(inp, require_all=True)
    return [inp, required]


def test_greedy_makes_the_former_choice() -> None:
    """The greedy skips compacting schedules that cannot win: the same schedule as before."""
    outcomes = set()
    for seed in range(12):
        for inp in _inputs(seed):
            # Jobs no schedule serves left out too (with one, require_all is hopeless).
            kept = [job for job, lj in zip(inp.jobs, inp.lease_jobs, strict=True) if lj.levels]
            for jobs in (inp.jobs, kept[: len(kept) // 2], kept):
                sub = LeaseInput(
                    jobs,
                    inp.capacity,
                    inp.lease_length,
                    require_all=inp.require_all,
                    round_up=inp.round_up,
                    max_terms=inp.max_terms,
                )
                expected = ref.greedy_schedule(sub)
                assert greedy_schedule(sub) == expected
                got = complete_greedy(sub)
                assert got == (expected if expected.complete() else None)
                outcomes.add((sub.require_all, got is None))
    assert len(outcomes) == 4  # complete and not, with and without require_all


@pytest.mark.parametrize("seed", range(6))
def test_light_inputs_compact_and_choose_as_before(seed: int) -> None:
    """Where every job fits into every term at once (capacity >= sum G, or just below).

    ``place`` then gives each job its last terms before its first deadline
    and ``compact`` moves each job to its first terms, both without the
    scan, and the greedy stops at the first order that gives every job its
    first level: all must give the former schedules.
    """
    for inp in _inputs(seed):
        total = int(inp.gpus.sum())
        for capacity in (total, total - 1, max(inp.capacity, total + 3)):
            if capacity < int(inp.gpus.max(initial=0)):
                continue
            light = LeaseInput(
                inp.jobs,
                capacity,
                inp.lease_length,
                require_all=inp.require_all,
                round_up=inp.round_up,
                max_terms=inp.max_terms,
            )
            for order in (density_order, deadline_order, slack_order):
                held = place(light, order(light))
                assert held == ref.place(light, order(light))
                raw = relevel(light, held)
                assert compact(light, raw) == ref.compact(light, raw)
            expected = ref.greedy_schedule(light)
            assert greedy_schedule(light) == expected
            assert complete_greedy(light) == (expected if expected.complete() else None)


@pytest.mark.parametrize("seed", range(12))
def test_compacting_twice_moves_nothing(seed: int) -> None:
    """What lets ``finish`` skip compacting the greedy's (compacted) schedule again."""
    for inp in _inputs(seed):
        for order in (density_order, deadline_order, slack_order):
            once = ref.compact(inp, relevel(inp, place(inp, order(inp))))
            assert ref.compact(inp, once) == once
