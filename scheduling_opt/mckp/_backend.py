"""Turning an MILP backend's 0/1 vector into an MCKP :class:`Solution`."""

from __future__ import annotations

import time
from collections.abc import Sequence

from scheduling_opt.group_choice import backend_solution, first_set
from scheduling_opt.mckp.model import FloatArray, Mckp, MckpDecision, decision_of
from scheduling_opt.solution import Solution, Status


def assignment(inp: Mckp, x: Sequence[float] | FloatArray) -> list[int | None]:
    """Per group the first item whose variable is set (> 0.5), or None."""
    return first_set(inp.offsets.tolist(), x)


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
    choice: list[int | None] = [None] * inp.n_groups if x is None else assignment(inp, x)
    decision = decision_of(inp, choice)
    return backend_solution(status, decision, x is not None, bound, start, "", message)


def empty(inp: Mckp, start: float) -> Solution[MckpDecision]:
    """The optimal answer when no item can be in any optimal solution (or there is none)."""
    decision = decision_of(inp, [None] * inp.n_groups)
    return Solution(Status.OPTIMAL, decision.value, decision, seconds=time.perf_counter() - start)
