"""No claim without proof (issue 17 items 1 and 2).

Item 1: CBC interrupted by its time limit inside preprocessing writes
"Integer infeasible" for problems that have solutions; ``solve_pulp`` must
read that as ``time_limit``. Item 2: the checkers of mckp, allocation and
memory-split refuse NaN objectives and bounds, ``infeasible`` claims when an
obvious answer exists, and ``optimal`` claims beaten by the checker's own
witness.
"""

from __future__ import annotations

import math
import time
from dataclasses import replace
from typing import Any

import numpy as np
import pytest

from scheduling_opt.errors import VerificationError
from scheduling_opt.exact import solve_milp, solve_pulp
from scheduling_opt.solution import Solution, Status


def _fake_cbc(delay: float) -> Any:
    """A PuLP problem whose solve reports CBC's "Integer infeasible" after ``delay`` s."""
    import pulp

    class Fake(pulp.LpProblem):  # type: ignore[misc]
        def solve(self, solver: Any = None, **kwargs: Any) -> int:
            time.sleep(delay)
            self.assignStatus(pulp.LpStatusInfeasible, pulp.LpSolutionNoSolutionFound)
            return int(pulp.LpStatusInfeasible)

    prob = Fake("fake", pulp.LpMaximize)
    x = pulp.LpVariable("x", 0, 1, cat="Binary")
    prob += x
    return prob


def test_cbc_infeasible_after_its_time_limit_is_not_a_proof() -> None:
    out = solve_pulp(_fake_cbc(0.15), time_limit=0.1)
    assert out.status is Status.TIME_LIMIT
    assert not out.has_solution
    assert out.objective is None


def test_cbc_infeasible_well_before_its_time_limit_stays_a_proof() -> None:
    assert solve_pulp(_fake_cbc(0.0), time_limit=5).status is Status.INFEASIBLE


def test_a_model_built_past_the_limit_is_not_solved() -> None:
    import pulp

    prob = pulp.LpProblem("p", pulp.LpMaximize)
    x = pulp.LpVariable("x", 0, 1, cat="Binary")
    prob += x
    out = solve_pulp(prob, time_limit=1, started=time.perf_counter() - 2)
    assert (out.status, out.has_solution) == (Status.TIME_LIMIT, False)
    milp = solve_milp(np.ones(1), time_limit=1, started=time.perf_counter() - 2)
    assert (milp.status, milp.x) == (Status.TIME_LIMIT, None)


def test_exact_pulp_on_a_large_mckp_under_short_limits_never_claims_infeasible() -> None:
    # The reproduction: 3 of 3 runs said infeasible at 0.5 s.
    from scheduling_opt.mckp import check, exact_pulp
    from scheduling_opt.mckp.io import random_mckp

    inp = random_mckp(2000, 16, 10_000, seed=0)
    for limit in (0.3, 0.5):
        sol = exact_pulp(inp, time_limit=limit)
        assert sol.status in (Status.TIME_LIMIT, Status.OPTIMAL)
        check(inp, sol)


# --------------------------------------------------------------------------- item 2


def _forged(sol: Solution[Any], **changes: Any) -> Solution[Any]:
    return replace(sol, **changes)


def _mckp() -> tuple[Any, Solution[Any], Any]:
    from scheduling_opt.mckp import Mckp, check, dp

    inp = Mckp.from_groups([[(1, 60.0), (2, 90.0)], [(1, 20.0)]], 2)
    return inp, dp(inp), check


def _allocation() -> tuple[Any, Solution[Any], Any]:
    from scheduling_opt.allocation import AllocationInput, check, exact
    from scheduling_opt.model import Job

    inp = AllocationInput((Job("A", 2, 6, 50.0), Job("B", 2, 6, 20.0)), 8)
    return inp, exact(inp), check


def _memory_split() -> tuple[Any, Solution[Any], Any]:
    from scheduling_opt.memory_split import (
        PRESETS,
        MemorySplitInput,
        OpportunisticJob,
        check,
        exact,
    )

    jobs = (
        OpportunisticJob("vgg", 10.0, PRESETS["vgg"]),
        OpportunisticJob("resnet", 10.0, PRESETS["resnet"]),
    )
    inp = MemorySplitInput(32.0, jobs, guarantee_gb=21.0, chunk_gb=1.0)
    return inp, exact(inp), check


CASES = [_mckp, _allocation, _memory_split]


@pytest.mark.parametrize("case", CASES, ids=["mckp", "allocation", "memory-split"])
def test_the_honest_answer_passes(case: Any) -> None:
    inp, sol, check = case()
    assert sol.status is Status.OPTIMAL
    check(inp, sol)


@pytest.mark.parametrize("case", CASES, ids=["mckp", "allocation", "memory-split"])
@pytest.mark.parametrize("value", [math.nan, math.inf, -math.inf])
def test_a_non_finite_objective_fails(case: Any, value: float) -> None:
    inp, sol, check = case()
    with pytest.raises(VerificationError, match="objective"):
        check(inp, _forged(sol, objective=value))


@pytest.mark.parametrize("case", CASES, ids=["mckp", "allocation", "memory-split"])
def test_a_nan_bound_fails(case: Any) -> None:
    inp, sol, check = case()
    with pytest.raises(VerificationError, match="bound"):
        check(inp, _forged(sol, status=Status.TIME_LIMIT, bound=math.nan))


@pytest.mark.parametrize("case", CASES, ids=["mckp", "allocation", "memory-split"])
def test_infeasible_when_an_obvious_answer_exists_fails(case: Any) -> None:
    inp, _, check = case()
    with pytest.raises(VerificationError):
        check(inp, Solution(Status.INFEASIBLE, None, None))


def test_mckp_optimal_claim_below_a_single_item_fails() -> None:
    from scheduling_opt.mckp import Mckp, check
    from scheduling_opt.mckp.model import decision_of

    inp = Mckp.from_groups([[(1, 60.0), (2, 90.0)], [(1, 20.0)]], 2)
    empty = decision_of(inp, [None, None])
    with pytest.raises(VerificationError, match="one item alone is worth 90"):
        check(inp, Solution(Status.OPTIMAL, 0.0, empty))
    check(inp, Solution(Status.FEASIBLE, 0.0, empty))  # a heuristic may be that bad


def test_allocation_optimal_claim_worse_than_waiting_fails() -> None:
    from scheduling_opt.allocation import AllocationInput, check, fifo
    from scheduling_opt.model import Job

    # FIFO runs A at its full 6 workers; B waits: (50 + 70) / 2 = 60. Letting
    # both wait hands out 2 + 6 (A at its base, B grows): 41.67 (Aryl Table 3).
    inp = AllocationInput((Job("A", 2, 6, 50.0), Job("B", 2, 6, 20.0)), 8)
    sol = fifo(inp)
    assert sol.objective == pytest.approx(60.0)
    check(inp, sol)
    with pytest.raises(VerificationError, match="letting queued jobs wait"):
        check(inp, _forged(sol, status=Status.OPTIMAL, bound=None))


def test_memory_split_optimal_claim_below_one_job_taking_the_spare_fails() -> None:
    from scheduling_opt.memory_split import check, greedy

    inp, best, _ = _memory_split()
    sol = greedy(inp)  # 1.175 < 1.35: ResNet starved (AntMan Figure 10)
    assert sol.objective is not None
    assert best.objective is not None
    assert sol.objective < best.objective
    check(inp, sol)
    with pytest.raises(VerificationError, match="one job"):
        check(inp, _forged(sol, status=Status.OPTIMAL, bound=None))
