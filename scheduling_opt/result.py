"""What every solver returns: a status, an objective, the wall time, a decision.

Each problem defines its own frozen result dataclass (the decision fields it
needs); all of them satisfy :class:`Result`, which is what the CLI, the
benchmark runner and the checkers rely on.
"""

from __future__ import annotations

import enum
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol, TypeVar

#: Default time limit (seconds) of exact methods when the caller gives none.
DEFAULT_TIME_LIMIT = 60.0


class Status(str, enum.Enum):
    """How good an answer is known to be.

    ``optimal``: proven optimal (exact methods only). ``feasible``: a valid
    answer with no optimality claim (heuristics). ``infeasible``: proven to
    have no valid answer. ``time_limit``: an exact method stopped by its time
    limit before a proof; the answer (if any) is its best incumbent.
    """

    OPTIMAL = "optimal"
    FEASIBLE = "feasible"
    INFEASIBLE = "infeasible"
    TIME_LIMIT = "time_limit"

    def __str__(self) -> str:
        return self.value


class Result(Protocol):
    """The part of a solver's result shared by every problem."""

    @property
    def status(self) -> Status: ...

    @property
    def objective(self) -> float | None: ...

    @property
    def seconds(self) -> float: ...

    def decision(self) -> dict[str, Any]:
        """The decision as JSON-ready values (the keys the problem documents)."""
        ...


@dataclass(frozen=True, slots=True)
class SolveOptions:
    """Options every method accepts (a method ignores what it does not use).

    ``seed``: the only source of randomness (same seed, same answer).
    ``time_limit``: seconds for exact methods (None: ``DEFAULT_TIME_LIMIT``).
    """

    seed: int = 0
    time_limit: float | None = None

    @property
    def limit(self) -> float:
        return DEFAULT_TIME_LIMIT if self.time_limit is None else self.time_limit


R = TypeVar("R")


def timed(fn: Callable[[], R]) -> tuple[R, float]:
    """Run ``fn`` and return its value with the elapsed wall time in seconds."""
    start = time.perf_counter()
    value = fn()
    return value, time.perf_counter() - start
