"""The levels stage's evident optimum gives what HiGHS gives (issue 25).

When every job's first level keeps every row of the levels model and pays
strictly more than its other levels, that choice is the only optimum, so
:meth:`Levels.evident` returns it without a MILP. The reference is the same
solve with the shortcut switched off (HiGHS decides): the decisions, the
objective and the status must be equal, on light loads (where it applies)
and heavy ones (where it must decline).
"""

from __future__ import annotations

import importlib

import numpy as np
import pytest

from scheduling_opt.lease import LeaseInput, exact
from scheduling_opt.lease.exact import TWO_STAGE_MIN_JOBS
from scheduling_opt.lease.io import generate_lease, read
from scheduling_opt.model import Job, RewardStep

levels_module = importlib.import_module("scheduling_opt.lease._levels")


def _both(inp: LeaseInput, monkeypatch: pytest.MonkeyPatch) -> tuple[object, object, int]:
    used = 0
    real = levels_module.Levels.evident

    def counting(self: object, *args: object) -> object:
        nonlocal used
        out = real(self, *args)  # type: ignore[arg-type]
        used += out is not None
        return out

    monkeypatch.setattr(levels_module.Levels, "evident", counting)
    fast = exact(inp, time_limit=60.0)
    monkeypatch.setattr(levels_module.Levels, "evident", lambda self, *args: None)
    slow = exact(inp, time_limit=60.0)
    return fast, slow, used


def _first_levels_fit(inp: LeaseInput) -> bool:
    """Independently: every job at its first level meets Chronus' energy condition.

    For t = 1..H the work that must fall before t, sum G_i max(0, RL_i -
    max(0, DL_i - t)), fits in M t GPU-terms, and each first level pays
    strictly more than the job's later ones.
    """
    jobs = [j for j in inp.lease_jobs if j.levels]
    if any(len(j.levels) > 1 and j.levels[1].reward >= j.levels[0].reward for j in jobs):
        return False
    for t in range(1, inp.horizon + 1):
        need = sum(j.gpus * max(0, j.terms - max(0, j.levels[0].due - t)) for j in jobs)
        if need > inp.capacity * t:
            return False
    return True


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("pressure", [0.3, 0.8, 3.0])
def test_evident_optimum_equals_highs(
    seed: int, pressure: float, monkeypatch: pytest.MonkeyPatch
) -> None:
    inp = read(generate_lease(10, 40, seed, pressure=pressure))
    fast, slow, used = _both(inp, monkeypatch)
    assert fast.status == slow.status  # type: ignore[attr-defined]
    assert fast.objective == slow.objective  # type: ignore[attr-defined]
    assert fast.decision == slow.decision  # type: ignore[attr-defined]
    two_stage = sum(1 for j in inp.lease_jobs if j.levels) >= TWO_STAGE_MIN_JOBS
    assert used == (two_stage and _first_levels_fit(inp))


def test_the_light_cases_use_the_shortcut() -> None:
    fits = [_first_levels_fit(read(generate_lease(10, 40, s, pressure=0.3))) for s in range(6)]
    assert sum(fits) >= 3  # the parametrized test above covers both branches


def test_tied_best_levels_are_left_to_highs(monkeypatch: pytest.MonkeyPatch) -> None:
    # Two levels paying the same: "every job at its first level" is optimal
    # but not the only optimum, so the shortcut must decline.
    jobs = [
        Job(f"j{i}", 1, 1, 1.0, deadlines=(RewardStep(2.0, 10), RewardStep(4.0, 10)))
        for i in range(12)
    ]
    inp = LeaseInput(jobs, capacity=16, lease_length=1.0)
    fast, slow, used = _both(inp, monkeypatch)
    assert used == 0
    assert fast.decision == slow.decision  # type: ignore[attr-defined]
    assert fast.objective == 120.0  # type: ignore[attr-defined]


def test_an_infeasible_first_choice_is_left_to_highs(monkeypatch: pytest.MonkeyPatch) -> None:
    # 12 one-term jobs of 2 GPUs due in term 1 on 16 GPUs: at most 8 fit their
    # first level (100), the others take the second (50): 8 x 100 + 4 x 50.
    jobs = [
        Job(f"j{i}", 2, 2, 1.0, deadlines=(RewardStep(1.0, 100), RewardStep(2.0, 50)))
        for i in range(12)
    ]
    inp = LeaseInput(jobs, capacity=16, lease_length=1.0)
    fast, slow, used = _both(inp, monkeypatch)
    assert used == 0
    assert fast.objective == slow.objective == 1000.0  # type: ignore[attr-defined]
    assert np.isclose(fast.bound, 1000.0)  # type: ignore[attr-defined]
