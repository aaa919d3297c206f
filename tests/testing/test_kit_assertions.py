"""assert_valid and assert_within on the library's own methods, and their failure paths."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings

from scheduling_opt import registry
from scheduling_opt.mckp import Mckp, MckpDecision, dp
from scheduling_opt.model import Job
from scheduling_opt.policies.antman import antman_step
from scheduling_opt.policies.edl import elastic_tiresias_step
from scheduling_opt.registry import Method, Problem
from scheduling_opt.solution import Solution, Status
from scheduling_opt.testing import (
    PROBLEMS,
    InvalidSolutionError,
    NotProvenError,
    NotWithinGapError,
    antman_states,
    assert_valid,
    assert_within,
    edl_states,
    inputs,
    problem_of,
)
from scheduling_opt.testing import assertions as kit

FEW = settings(
    parent=settings.default,
    max_examples=10,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)


def test_allocation_fifo_with_a_running_elastic_job() -> None:
    """Found by this kit: fifo kept a running job's GPUs beyond capacity + base demand."""
    from scheduling_opt.allocation import AllocationInput, fifo

    # Shrunk by hypothesis: j2 runs 2 workers of 2 GPUs (base 1 worker) and
    # the capacity, which counts j2's flexible GPUs, is 1: 3 GPUs in all.
    jobs = (Job("j0", 1, 1, 1.0), Job("j1", 1, 1, 1.0), Job("j2", 1, 2, 1.0, 2))
    inp = AllocationInput(jobs, 1, {"j2": 2})
    sol = fifo(inp)
    assert_valid(inp, sol)
    # By hand: j2's flexible worker (2 GPUs) no longer fits in 1, so j2 keeps
    # its base (2 GPUs); j0 starts on the 1 GPU left and blocks j1: 2 + 1 = 3.
    assert sol.decision is not None
    assert dict(sol.decision.workers) == {"j0": 1, "j1": 0, "j2": 1}
    assert sol.decision.start_now == ("j0",)


@pytest.mark.parametrize("name", sorted(PROBLEMS))
def test_every_method_passes_and_exact_is_within_zero_gap(name: str) -> None:
    problem = registry.get_problem(name)

    @FEW
    @given(inputs(name))
    def run(inp: Any) -> None:
        assert problem_of(inp) == name
        for method in problem.methods:
            assert_valid(inp, method.run(inp, seed=0, time_limit=10.0))
        optimum = assert_within(inp, problem.exact_methods[0].run(inp, time_limit=10.0))
        assert optimum.status in (Status.OPTIMAL, Status.INFEASIBLE)

    run()


def test_policy_steps_pass_assert_valid() -> None:
    @FEW
    @given(antman_states(), edl_states())
    def run(antman: Any, edl: Any) -> None:
        assert_valid(antman, antman_step(antman))
        assert_valid(edl, elastic_tiresias_step(edl))
        assert problem_of(antman) == "antman"
        assert problem_of(edl) == "edl"

    run()


def test_assert_valid_names_rule_and_carries_the_parts() -> None:
    inp = Mckp.from_groups([[(3, 5.0)]], 2)
    with pytest.raises(InvalidSolutionError) as info:
        assert_valid(inp, Solution(Status.FEASIBLE, 5.0, MckpDecision((0,), 3, 5.0)))
    e = info.value
    assert isinstance(e, AssertionError)
    assert (e.problem, e.rule, e.detail) == (
        "mckp",
        "capacity: no more GPUs than there are",
        "weight 3 exceeds the capacity 2",
    )
    assert '"capacity": 2' in str(e)


def test_a_decision_the_checker_cannot_read_is_reported_not_crashed() -> None:
    inp = Mckp.from_groups([[(1, 1.0)]], 2)
    with pytest.raises(InvalidSolutionError, match=r"checker rule|the checker cannot read|choice"):
        assert_valid(inp, Solution(Status.FEASIBLE, 1.0, MckpDecision(("x",), 1, 1.0)))  # type: ignore[arg-type]


def test_a_wrong_objective_is_named() -> None:
    inp = Mckp.from_groups([[(1, 1.0)]], 2)
    with pytest.raises(InvalidSolutionError) as info:
        assert_valid(inp, dp(inp).with_(objective=2.0))
    assert info.value.rule == "the objective follows from the decision"


def test_unknown_input_types_are_refused() -> None:
    with pytest.raises(TypeError, match="no problem takes a int"):
        assert_valid(3, Solution(Status.FEASIBLE, 1.0, None))


def test_policies_have_no_optimum() -> None:
    @settings(FEW, max_examples=1)
    @given(antman_states())
    def run(state: Any) -> None:
        with pytest.raises(TypeError, match="online policy"):
            assert_within(state, antman_step(state))

    run()


def _unproven(inp: Mckp, *, seed: Any = None, time_limit: float | None = None) -> Solution[Any]:
    return Solution(Status.TIME_LIMIT, None, None, bound=9.0)


def test_an_unproven_optimum_raises_or_rejects(monkeypatch: pytest.MonkeyPatch) -> None:
    real = registry.get_problem("mckp")
    fake: Problem[Any, Any] = Problem(
        "mckp",
        real.summary,
        real.sense,
        real.read,
        real.encode,
        (Method("slow", _unproven, exact=True),),
        "slow",
        real.check,
    )
    monkeypatch.setattr(kit, "get_problem", lambda name: fake)
    inp = Mckp.from_groups([[(1, 1.0)]], 2)
    with pytest.raises(NotProvenError, match=r"slow did not prove the optimum in 0.5 s"):
        assert_within(inp, dp(inp), time_limit=0.5)

    rejected = []

    @settings(FEW, max_examples=3, suppress_health_check=list(HealthCheck))
    @given(inputs("mckp"))
    def run(m: Mckp) -> None:
        rejected.append(m)
        assert_within(m, dp(m), unproven="reject")
        raise AssertionError("not reached: the example is rejected")

    with pytest.raises(Exception, match=r"Unsatisfiable|Unable to satisfy|filter"):
        run()
    assert rejected


def test_gap_is_relative_to_the_optimum() -> None:
    inp = Mckp.from_groups([[(1, 10.0)], [(1, 10.0)]], 1)
    half = Solution(Status.FEASIBLE, 0.0, MckpDecision((None, None), 0, 0.0))
    with pytest.raises(
        NotWithinGapError, match=r"objective 0\.0 is 1 short of the proven optimum 10\.0"
    ):
        assert_within(inp, half, gap=0.99)
    assert assert_within(inp, half, gap=1.0).objective == 10.0
