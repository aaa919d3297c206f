"""The pattern model of ``batch-size`` (exact_patterns) and ``exact``'s deterministic work budget."""

from __future__ import annotations

import importlib
import itertools
import time

import pytest

from scheduling_opt.batch_size.bounds import lower_bound
from scheduling_opt.batch_size.check import check
from scheduling_opt.batch_size.dp import knapsack_relaxation, place
from scheduling_opt.batch_size.evaluate import objective
from scheduling_opt.batch_size.exact import brute_force, exact
from scheduling_opt.batch_size.exact_patterns import (
    exact_patterns,
    partitions,
    pattern_count,
    patterns_apply,
)
from scheduling_opt.batch_size.model import BatchSizeInput
from scheduling_opt.solution import Status
from scheduling_opt.testing import seeded_batch_size_input

patterns_module = importlib.import_module("scheduling_opt.batch_size.exact_patterns")

#: Seeds of seeded_batch_size_input(seed, nodes=(4, 4), jobs=3) whose knapsack
#: relaxation cannot be placed at its bound, so ``exact`` must run CP-SAT
#: (each test asserts it again).
CPSAT_SEEDS = (8, 66, 104, 108)


def _certified(inp: BatchSizeInput) -> bool:
    r = knapsack_relaxation(inp)
    assert r is not None
    genes = place(inp, r.gpus, r.packed)
    return genes is not None and bool(
        objective(inp, genes[None, :])[0] - r.bound <= 1e-8 * abs(r.bound)
    )


def test_partitions_are_the_known_ones() -> None:
    # p(n) for n = 1..10 (Hardy and Wright, OEIS A000041).
    assert [len(partitions(n)) for n in range(1, 11)] == [1, 2, 3, 5, 7, 11, 15, 22, 30, 42]
    # The ways to fill a 4-GPU server, written out.
    assert set(partitions(4)) == {(4,), (3, 1), (2, 2), (2, 1, 1), (1, 1, 1, 1)}
    for n in (5, 8):
        # Every partition once: all multisets of 1..n summing to n, enumerated blindly.
        blind = {
            tuple(sorted(parts, reverse=True))
            for k in range(1, n + 1)
            for parts in itertools.combinations_with_replacement(range(1, n + 1), k)
            if sum(parts) == n
        }
        assert sorted(partitions(n)) == sorted(blind)
    assert pattern_count(seeded_batch_size_input(0, nodes=(4, 4, 2), jobs=2)) == 5 + 2


@pytest.mark.parametrize("seed", CPSAT_SEEDS)
def test_pattern_model_meets_brute_force_where_the_certificate_fails(seed: int) -> None:
    inp = seeded_batch_size_input(seed, nodes=(4, 4), jobs=3)
    assert patterns_apply(inp)
    assert not _certified(inp)
    brute = brute_force(inp)  # all 4^8 genomes
    assert brute.objective is not None
    for sol in (
        exact_patterns(inp, time_limit=30, work_limit=5.0),
        exact(inp, time_limit=30, work_limit=5.0),
    ):
        assert sol.status is Status.OPTIMAL
        assert sol.objective == pytest.approx(brute.objective, rel=1e-9)
        assert sol.bound == sol.objective
        check(inp, sol)


def test_pattern_model_on_servers_of_three() -> None:
    inp = seeded_batch_size_input(150, nodes=(3, 3), jobs=3)
    assert patterns_apply(inp)
    assert not _certified(inp)
    brute = brute_force(inp)
    sol = exact(inp, time_limit=30, work_limit=5.0)
    assert sol.status is Status.OPTIMAL
    assert sol.objective == pytest.approx(brute.objective, rel=1e-9)


def test_same_schedule_on_a_slow_clock(monkeypatch: pytest.MonkeyPatch) -> None:
    # The work budget, not the clock, bounds the search: a clock limit ten
    # times larger, or a clock that jumps 2 s at every reading (a loaded
    # machine as the Python side sees it), changes nothing.
    inps = [seeded_batch_size_input(s, nodes=(4, 4), jobs=3) for s in CPSAT_SEEDS[:2]]
    first = [exact(inp, time_limit=60, work_limit=1.0) for inp in inps]
    again = [exact(inp, time_limit=600, work_limit=1.0) for inp in inps]
    real = time.perf_counter
    ticks = itertools.count()
    monkeypatch.setattr(time, "perf_counter", lambda: real() + 2.0 * next(ticks))
    slow = [exact(inp, time_limit=600, work_limit=1.0) for inp in inps]
    monkeypatch.undo()
    assert next(ticks) > 3  # the slow clock was read
    for a, b, c in zip(first, again, slow, strict=True):
        assert a.status is b.status is c.status is Status.OPTIMAL
        assert a.decision == b.decision == c.decision


def test_a_stop_by_the_work_budget_is_time_limit_with_a_proven_bound() -> None:
    inp = seeded_batch_size_input(CPSAT_SEEDS[0], nodes=(4, 4), jobs=3)
    brute = brute_force(inp).objective
    assert brute is not None
    runs = [exact(inp, time_limit=60, work_limit=1e-9) for _ in range(2)]
    sol = runs[0]
    assert sol.status is Status.TIME_LIMIT
    assert sol.message == "time limit: CP-SAT's work budget (1e-09 units)"
    assert sol.objective is not None
    assert sol.bound is not None
    assert lower_bound(inp) - 1e-9 <= sol.bound <= brute * (1 + 1e-12)
    assert sol.objective >= brute * (1 - 1e-12)
    assert sol.bound < sol.objective  # the budget stopped it short of a proof
    assert runs[1].decision == sol.decision  # stopped at the same point
    check(inp, sol)


def test_a_stop_by_the_clock_is_named_as_such() -> None:
    inp = seeded_batch_size_input(CPSAT_SEEDS[0], nodes=(4, 4), jobs=3)
    sol = exact_patterns(inp, time_limit=1e-9, work_limit=1.0)
    assert sol.status is Status.TIME_LIMIT
    assert sol.message == "time limit: the clock (depends on the machine's load)"
    check(inp, sol)  # the start schedule, valid


def test_too_many_patterns_leave_it_to_the_per_server_model(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    inp = seeded_batch_size_input(CPSAT_SEEDS[0], nodes=(4, 4), jobs=3)
    monkeypatch.setattr(patterns_module, "MAX_PATTERNS", 4)  # (4, 4) needs 5
    assert not patterns_apply(inp)
    with pytest.raises(ValueError, match="patterns_apply"):
        exact_patterns(inp, time_limit=30)
    brute = brute_force(inp).objective
    sol = exact(inp, time_limit=30, work_limit=5.0)  # exact_cpsat's model
    assert sol.status is Status.OPTIMAL
    assert sol.objective == pytest.approx(brute, rel=1e-6)
