"""Turning an MILP backend's 0/1 vector into an MCKP :class:`Solution`."""

from __future__ import annotations

import time
from collections.abc import Sequence

from scheduling_opt.mckp.model import FloatArray, Mckp, MckpDecision, decision_of
from scheduling_opt.solution import Solution, Status


def assignment(inp: Mckp, x: Sequence[float] | FloatArray) -> list[int | None]:
    """Per group the first item whose variable is set (> 0.5), or None."""
    choice: list[int | None] = [None] * inp.n_groups
    for g in range(inp.n_groups):
        a, b = int(inp.offsets[g]), int(inp.offsets[g + 1])
        picked = [i for i in range(a, b) if x[i] > 0.5]
        if picked:
            choice[g] = picked[0] - a
    return choice


def from_backend(
    inp: Mckp,
    status: Status,
    x: Sequence[float] | FloatArray | None,
    bound: float | None,
    start: float,
    message: str = "",
) -> Solution[MckpDecision]:
    """The solution of a backend run that started at ``start`` (perf_counter).

    Choosing nothing is always feasible, so a run stopped before its first
    incumbent still answers with the empty choice (status ``time_limit``).
    """
    if x is None:
        choice: list[int | None] = [None] * inp.n_groups
        if status is Status.OPTIMAL or status is Status.INFEASIBLE:
            status = Status.TIME_LIMIT
    else:
        choice = assignment(inp, x)
    decision = decision_of(inp, choice)
    if bound is not None and status is not Status.OPTIMAL:
        # A dual bound below the incumbent can only be float noise: clamp.
        bound = max(bound, decision.value)
    return Solution(
        status,
        decision.value,
        decision,
        bound=decision.value if status is Status.OPTIMAL else bound,
        seconds=time.perf_counter() - start,
        message=message,
    )


def empty(inp: Mckp, start: float) -> Solution[MckpDecision]:
    """The optimal answer when no item can be in any optimal solution (or there is none)."""
    decision = decision_of(inp, [None] * inp.n_groups)
    return Solution(Status.OPTIMAL, decision.value, decision, seconds=time.perf_counter() - start)
