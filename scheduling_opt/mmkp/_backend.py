"""Turning an MILP backend's 0/1 vector into an MMKP :class:`Solution`."""

from __future__ import annotations

from collections.abc import Sequence

from scheduling_opt.group_choice import backend_solution, first_set
from scheduling_opt.mmkp.model import FloatArray, Mmkp, MmkpDecision, decision_of
from scheduling_opt.solution import Solution, Status


def assignment(inp: Mmkp, x: Sequence[float] | FloatArray) -> list[int | None]:
    """Per group the first item whose variable is set (> 0.5), or None."""
    return first_set(inp.offsets.tolist(), x)


def from_backend(
    inp: Mmkp,
    status: Status,
    x: Sequence[float] | FloatArray | None,
    bound: float | None,
    start: float,
    method: str,
    message: str = "",
) -> Solution[MmkpDecision]:
    """The solution of a backend run that started at ``start`` (perf_counter).

    Choosing nothing is always feasible, so a run stopped before its first
    incumbent still answers with the empty choice (status ``time_limit``).
    ``bound`` is in the instance's terms (``none`` values included).
    """
    choice: list[int | None] = [None] * inp.n_groups if x is None else assignment(inp, x)
    decision = decision_of(inp, choice)
    return backend_solution(status, decision, x is not None, bound, start, method, message)
