"""Turning an MILP backend's 0/1 vector into an MMKP :class:`Solution`."""

from __future__ import annotations

import time
from collections.abc import Sequence

from scheduling_opt.mmkp.model import FloatArray, Mmkp, MmkpDecision, decision_of
from scheduling_opt.solution import Solution, Status


def assignment(inp: Mmkp, x: Sequence[float] | FloatArray) -> list[int | None]:
    """Per group the first item whose variable is set (> 0.5), or None."""
    choice: list[int | None] = [None] * inp.n_groups
    offsets = inp.offsets.tolist()
    for g in range(inp.n_groups):
        for i in range(offsets[g], offsets[g + 1]):
            if x[i] > 0.5:
                choice[g] = i - offsets[g]
                break
    return choice


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
        method=method,
        message=message,
    )
