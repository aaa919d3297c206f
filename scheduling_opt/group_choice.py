"""At most one item per group: what the MCKP and the MMKP share about their answers.

Both problems (Aryl §5.2's MCKP, Sia §3.3's MMKP) choose per group one item
or none, store their items group after group (``offsets``), and have a
trivial feasible answer (no item at all). So they read a backend's 0/1
vector the same way (:func:`first_set`), answer a run stopped before its
first incumbent the same way (:func:`backend_solution`), and their
independent checkers share the checks that do not depend on the
constraints (:func:`decision_of_solution`, :func:`check_item`,
:func:`check_objective`). O(items) for :func:`first_set`, O(1) otherwise.
"""

from __future__ import annotations

import math
import time
from collections.abc import Sequence
from typing import Protocol, TypeVar

import numpy as np
from numpy.typing import NDArray

from scheduling_opt.errors import VerificationError
from scheduling_opt.solution import Solution, Status


class Chosen(Protocol):
    """A decision listing per group its item (an index inside the group) or None."""

    @property
    def choice(self) -> Sequence[int | None]: ...
    @property
    def value(self) -> float: ...


C = TypeVar("C", bound=Chosen)


def first_set(offsets: Sequence[int], x: Sequence[float] | NDArray[np.float64]) -> list[int | None]:
    """Per group the first item whose variable is set (> 0.5), or None.

    Examples
    --------
    >>> first_set([0, 2, 3, 5], [0.0, 1.0, 0.0, 1.0, 1.0])
    [1, None, 0]
    """
    choice: list[int | None] = [None] * (len(offsets) - 1)
    for g in range(len(offsets) - 1):
        for i in range(offsets[g], offsets[g + 1]):
            if x[i] > 0.5:
                choice[g] = i - offsets[g]
                break
    return choice


def backend_solution(
    status: Status,
    decision: C,
    found: bool,
    bound: float | None,
    start: float,
    method: str = "",
    message: str = "",
) -> Solution[C]:
    """The solution of a backend run that started at ``start`` (perf_counter).

    Choosing nothing is always feasible, so a run stopped before its first
    incumbent (``found`` False: ``decision`` is then the empty choice) still
    answers, with status ``time_limit`` where the backend said ``optimal``
    or ``infeasible``. A dual ``bound`` below the decision's value can only
    be float noise and is clamped to it.

    Examples
    --------
    >>> from types import SimpleNamespace
    >>> empty = SimpleNamespace(choice=[None], value=0.0)
    >>> s = backend_solution(Status.INFEASIBLE, empty, False, -1e-12, time.perf_counter())
    >>> s.status, s.objective, s.bound
    (<Status.TIME_LIMIT: 'time_limit'>, 0.0, 0.0)
    """
    if not found and (status is Status.OPTIMAL or status is Status.INFEASIBLE):
        status = Status.TIME_LIMIT
    if bound is not None and status is not Status.OPTIMAL:
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


def decision_of_solution(solution: Solution[C], n_groups: int) -> C:
    """The solution's decision, checked to exist, not to be called infeasible, to list every group.

    Raises
    ------
    VerificationError
        No decision or an ``infeasible`` claim (choosing nothing is always
        feasible), or a choice of another length than ``n_groups``.
    """
    decision = solution.decision
    if decision is None:
        raise VerificationError(
            f"status {solution.status} with no decision: choosing nothing is always feasible"
        )
    if solution.status is Status.INFEASIBLE:
        raise VerificationError("infeasible claimed, but choosing nothing is always feasible")
    if len(decision.choice) != n_groups:
        raise VerificationError(f"choice must list {n_groups} groups, got {len(decision.choice)}")
    return decision


def check_item(group: int, item: object, size: int) -> int:
    """``item`` as an index in a group of ``size`` items; VerificationError if it is not one."""
    if isinstance(item, bool) or not isinstance(item, int) or not 0 <= item < size:
        raise VerificationError(f"group {group}: invalid item {item!r} (group has {size})")
    return item


def check_objective(solution: Solution[C], total: float, slack: float) -> float:
    """The reported objective, checked against the recomputed ``total`` and the bound.

    Raises
    ------
    VerificationError
        A non-finite objective, a reported objective or decision value more
        than ``slack`` from ``total``, or an upper bound below the objective
        (a NaN bound too).
    """
    reported = solution.objective
    if reported is None or not math.isfinite(reported):
        raise VerificationError(f"objective must be a finite number, got {reported!r}")
    value = solution.decision.value if solution.decision is not None else reported
    if abs(reported - total) > slack or abs(value - total) > slack:
        raise VerificationError(f"reported objective {reported} != recomputed {total}")
    if solution.bound is not None and not (solution.bound >= reported - slack):
        # Written so that a NaN bound fails too.
        raise VerificationError(f"upper bound {solution.bound} below the objective {reported}")
    return reported
