"""The Solution every memory-split algorithm returns (objective = sum of speeds)."""

from __future__ import annotations

import math
import time
from collections.abc import Sequence

from scheduling_opt.memory_split.model import MemorySplitDecision, MemorySplitInput, decision_of
from scheduling_opt.solution import Solution, Status


def solution_of(
    inp: MemorySplitInput,
    chunks: Sequence[int] | None,
    status: Status,
    start: float,
    *,
    bound: float | None = None,
    message: str = "",
) -> Solution[MemorySplitDecision]:
    """A Solution from chunk counts (None: no decision) timed from ``start``."""
    seconds = time.perf_counter() - start
    if chunks is None:
        return Solution(status, None, None, bound=bound, seconds=seconds, message=message)
    decision = decision_of(inp, chunks)
    objective = math.fsum(decision.speed.values())
    if bound is not None and status is not Status.OPTIMAL:
        bound = max(bound, objective)  # a bound below the incumbent is float noise
    return Solution(
        status,
        objective,
        decision,
        bound=objective if status is Status.OPTIMAL else bound,
        seconds=seconds,
        message=message,
    )


def infeasible(start: float) -> Solution[MemorySplitDecision]:
    """The proven answer when the jobs' minimums do not fit in the spare memory."""
    return Solution(
        Status.INFEASIBLE,
        None,
        None,
        seconds=time.perf_counter() - start,
        message="the jobs' minimum memory does not fit in what the guarantee job leaves",
    )
