"""The ``auto`` portfolio of ``allocation`` (issue 16)."""

from __future__ import annotations

import importlib

import pytest

from scheduling_opt.allocation import (
    AllocationInput,
    allocation_count,
    check,
    exact,
    max_elastic,
    two_phase,
)
from scheduling_opt.allocation.auto import AUTO_EXACT_COUNT, auto
from scheduling_opt.allocation.io import PROBLEM, generate, read
from scheduling_opt.model import Job
from scheduling_opt.solution import Status

auto_module = importlib.import_module("scheduling_opt.allocation.auto")


def test_auto_proves_the_hand_computed_optimum() -> None:
    # Aryl Table 3: A (2-6 workers, 50 s) and B (2-6, 20 s) on 8 GPUs; the
    # optimum gives B all 6 extra GPUs: JCT B = 20 * 2/6 + ..., average 41.67.
    inp = AllocationInput((Job("A", 2, 6, 50.0), Job("B", 2, 6, 20.0)), 8)
    sol = auto(inp)
    assert sol.status is Status.OPTIMAL
    assert sol.objective == pytest.approx(41.67, abs=0.005)
    assert sol.message.startswith("auto: exact")
    check(inp, sol)


@pytest.mark.parametrize("seed", range(5))
def test_auto_matches_the_enumeration_below_the_size_test(seed: int) -> None:
    inp = read(generate("n4", seed))
    assert allocation_count(inp) <= AUTO_EXACT_COUNT
    sol = auto(inp)
    best = exact(inp)
    assert sol.status is Status.OPTIMAL
    assert sol.objective == pytest.approx(best.objective, rel=1e-12)
    check(inp, sol)


@pytest.mark.parametrize("seed", range(3))
def test_auto_keeps_the_better_planner_above_the_size_test(seed: int) -> None:
    inp = read(generate("n40", seed))
    assert allocation_count(inp) > AUTO_EXACT_COUNT
    sol = auto(inp)
    planners = [two_phase(inp), max_elastic(inp)]
    objectives = [p.objective for p in planners if p.objective is not None]
    assert sol.status is Status.FEASIBLE
    assert sol.objective == pytest.approx(min(objectives), rel=1e-12)
    assert sol.bound is not None
    assert sol.objective is not None
    assert sol.bound <= sol.objective
    check(inp, sol)


def test_auto_is_never_optimal_without_the_enumeration(monkeypatch: pytest.MonkeyPatch) -> None:
    inp = AllocationInput((Job("A", 2, 6, 50.0), Job("B", 2, 6, 20.0)), 8)
    monkeypatch.setattr(auto_module, "AUTO_EXACT_COUNT", 0)
    sol = auto(inp)
    assert sol.status is Status.FEASIBLE
    assert sol.objective is not None
    assert sol.objective >= 41.67 - 0.005  # never below the optimum


def test_auto_is_the_default() -> None:
    assert PROBLEM.default == "auto"
