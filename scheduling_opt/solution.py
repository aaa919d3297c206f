"""What every algorithm returns: :class:`Solution`, with its :class:`Status`.

One calling convention for the whole library: every algorithm is a plain
function ``name(inp, *, seed=None, time_limit=None) -> Solution[D]`` over the
typed input of its problem (``D`` is the problem's typed decision). A
:class:`Solution` says what was decided, how good it is known to be
(``status``, ``objective``, ``bound``, ``gap``) and what it cost
(``seconds``), in the same shape for every problem, like
``scipy.optimize.milp``'s result.

Seeds: an ``int``, a ``numpy.random.Generator`` or ``None`` (seed 0); numpy's
``Generator`` is the only kind of randomness inside the library
(:func:`as_rng`), so the same call gives the same answer.
"""

from __future__ import annotations

import enum
import functools
import math
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any, Generic, ParamSpec, TypeVar

import numpy as np

#: Default time limit (seconds) of every method when the caller gives none.
DEFAULT_TIME_LIMIT = 60.0

#: What a ``seed`` argument accepts (``None`` means seed 0: runs are repeatable).
Seed = int | np.random.Generator | None

D = TypeVar("D")
E = TypeVar("E")
R = TypeVar("R")
P = ParamSpec("P")


class Status(str, enum.Enum):
    """How good an answer is known to be.

    ``optimal``: proven optimal. ``feasible``: a valid answer with no
    optimality claim (heuristics). ``infeasible``: proven to have no valid
    answer. ``time_limit``: a method stopped by its time limit before a proof;
    the answer (if any) is its best incumbent and ``bound`` (if known) says
    how far from optimal it may be.
    """

    OPTIMAL = "optimal"
    FEASIBLE = "feasible"
    INFEASIBLE = "infeasible"
    TIME_LIMIT = "time_limit"

    def __str__(self) -> str:
        return self.value


def relative_gap(objective: float | None, bound: float | None) -> float | None:
    """``|objective - bound| / max(|bound|, 1)``, or None if either is unknown.

    The denominator is floored at one objective unit so that a bound of 0
    (no preemption needed, say) gives a finite gap; it is the benchmark's gap
    with the bound in place of the optimum, hence never below the true gap.

    Examples
    --------
    >>> relative_gap(12.0, 10.0)
    0.2
    >>> relative_gap(0.5, 0.0)
    0.5
    >>> relative_gap(None, 3.0) is None
    True
    """
    if objective is None or bound is None:
        return None
    if not (math.isfinite(objective) and math.isfinite(bound)):
        return None
    return abs(objective - bound) / max(abs(bound), 1.0)


@dataclass(frozen=True, slots=True)
class Solution(Generic[D]):
    """The answer of one algorithm run on one typed input.

    Attributes
    ----------
    status : Status
        What is proven about ``decision`` (see :class:`Status`).
    objective : float or None
        The objective of ``decision`` in the problem's sense (None when there
        is no decision, e.g. ``infeasible`` or a time limit with no incumbent).
    decision : D or None
        The problem's typed decision (None when there is none).
    bound : float or None
        A proven bound on the optimum: a lower bound for a minimization, an
        upper bound for a maximization (the solver's dual bound for exact
        methods, a cheap relaxation for heuristics that have one). Equal to
        ``objective`` when ``status`` is ``optimal``.
    seconds : float
        Wall time of the run.
    method : str
        The registry name of the method that produced it, whether it was
        called through the registry or directly (:func:`named`); ``""`` only
        for a solution built by hand.
    message : str
        A human-readable note (the solver's word on a time limit, a refusal).
    key : tuple of float
        The full objective when it is lexicographic (reclaim: preempted jobs,
        then collateral GPUs); ``(objective,)`` otherwise.
    """

    status: Status
    objective: float | None
    decision: D | None
    bound: float | None = None
    seconds: float = 0.0
    method: str = ""
    message: str = ""
    key: tuple[float, ...] = field(default=())

    def __post_init__(self) -> None:
        if self.status is Status.OPTIMAL and self.bound is None and self.objective is not None:
            object.__setattr__(self, "bound", self.objective)
        if not self.key and self.objective is not None:
            object.__setattr__(self, "key", (self.objective,))

    @property
    def gap(self) -> float | None:
        """Certified relative gap ``|objective - bound| / max(|bound|, 1)`` (None if unknown)."""
        if self.status is Status.OPTIMAL:
            return 0.0
        return relative_gap(self.objective, self.bound)

    @property
    def has_decision(self) -> bool:
        """Whether the run produced a decision (an incumbent or better)."""
        return self.decision is not None

    def with_(self, **changes: Any) -> Solution[D]:
        """A copy with some fields changed (``method``, ``seconds``, ...)."""
        return replace(self, **changes)

    def map(self, fn: Callable[[D], E]) -> Solution[E]:
        """The same solution with its decision converted by ``fn``."""
        return Solution(
            status=self.status,
            objective=self.objective,
            decision=None if self.decision is None else fn(self.decision),
            bound=self.bound,
            seconds=self.seconds,
            method=self.method,
            message=self.message,
            key=self.key,
        )


def as_rng(seed: Seed) -> np.random.Generator:
    """The numpy ``Generator`` for a ``seed`` argument (None: seed 0).

    A ``Generator`` passed in is used as is (the caller owns its state).

    Examples
    --------
    >>> bool(as_rng(3).integers(100) == as_rng(3).integers(100))
    True
    """
    if isinstance(seed, np.random.Generator):
        return seed
    if seed is None:
        return np.random.default_rng(0)
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)):
        raise TypeError(f"seed must be an int, a numpy Generator or None, got {seed!r}")
    if seed < 0:
        raise ValueError(f"seed must be >= 0, got {seed}")
    return np.random.default_rng(int(seed))


def time_limit_of(time_limit: float | None) -> float:
    """The time limit in force: ``time_limit`` or :data:`DEFAULT_TIME_LIMIT`.

    Raises ``ValueError`` for a limit that is not a positive finite number.
    """
    if time_limit is None:
        return DEFAULT_TIME_LIMIT
    value = float(time_limit)
    if not (math.isfinite(value) and value > 0):
        raise ValueError(f"time_limit must be a positive number of seconds, got {time_limit!r}")
    return value


def timed(fn: Callable[[], R]) -> tuple[R, float]:
    """Run ``fn`` and return its value with the elapsed wall time in seconds."""
    start = time.perf_counter()
    value = fn()
    return value, time.perf_counter() - start


def named(method: str) -> Callable[[Callable[P, Solution[D]]], Callable[P, Solution[D]]]:
    """Decorator: every solution the algorithm returns carries ``method``, its registry name.

    A scheduler calling ``scheduling_opt.placement.exact(inp)`` directly gets
    the same ``Solution.method`` (``"exact"``) as one calling it through the
    registry; an algorithm that delegates to another (``auto`` to ``exact``)
    reports its own name. O(1) per call.

    Parameters
    ----------
    method : str
        The registry name: the function's name with ``-`` for ``_`` (or the
        short name it is registered under, such as ``bfd``).

    Returns
    -------
    callable
        A decorator that keeps the function's name, signature and docstring.

    Examples
    --------
    >>> @named("demo")
    ... def demo(inp: int) -> Solution[int]:
    ...     return Solution(Status.FEASIBLE, float(inp), inp)
    >>> demo(3).method, demo.__name__
    ('demo', 'demo')
    """

    def decorate(fn: Callable[P, Solution[D]]) -> Callable[P, Solution[D]]:
        @functools.wraps(fn)
        def labelled(*args: P.args, **kwargs: P.kwargs) -> Solution[D]:
            solution = fn(*args, **kwargs)
            return solution if solution.method == method else solution.with_(method=method)

        return labelled

    return decorate
