"""The benchmark's gaps: objective gap, tie-break gap of a lexicographic key, bound sides.

Pure arithmetic on objectives, keys and bounds in a problem's sense (``min``
or ``max``), O(key length) each; the rules are stated in docs/benchmarks.md.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

#: Relative tolerance under which two objectives (or key components) are equal.
GAP_TOLERANCE = 1e-7
#: Relative tolerance of the bound checks (a solver's bound is exact up to its
#: feasibility tolerance, about 1e-6 for HiGHS).
BOUND_TOLERANCE = 1e-6

Sense = Literal["min", "max"]


def objective_gap(sense: Sense, objective: float | None, optimum: float | None) -> float | None:
    """Relative gap of ``objective`` to a proven ``optimum`` (None if either is unknown).

    Parameters
    ----------
    sense : {"min", "max"}
        The problem's sense.
    objective, optimum : float or None
        A method's objective and the proven optimum of the same instance.

    Returns
    -------
    float or None
        ``(objective - optimum) / max(|optimum|, 1)`` for ``min`` (the
        opposite difference for ``max``): positive when worse than the
        optimum, negative only if a method beat a proven optimum.

    Examples
    --------
    >>> objective_gap("min", 12.0, 10.0)
    0.2
    >>> objective_gap("max", 9.0, 10.0)
    0.1
    >>> objective_gap("min", 1.0, 0.0)
    1.0
    """
    if objective is None or optimum is None:
        return None
    diff = objective - optimum if sense == "min" else optimum - objective
    return diff / max(abs(optimum), 1.0)


def _same(a: float, b: float, tolerance: float = GAP_TOLERANCE) -> bool:
    return abs(a - b) <= tolerance * max(abs(b), 1.0)


def wrong_side(sense: Sense, bound: float, value: float) -> bool:
    """Whether ``bound`` claims more than ``value`` achieves (beyond :data:`BOUND_TOLERANCE`).

    A bound on the optimum of a minimization must not exceed any achieved
    objective (nor the optimum); of a maximization, not fall below it.

    Examples
    --------
    >>> wrong_side("min", 11.0, 10.0), wrong_side("min", 9.0, 10.0)
    (True, False)
    >>> wrong_side("max", 9.0, 10.0)
    True
    """
    if _same(bound, value, BOUND_TOLERANCE):
        return False
    return bound > value if sense == "min" else bound < value


def tie_gap(
    sense: Sense,
    objective: float | None,
    key: Sequence[float],
    optimum: float | None,
    optimum_key: Sequence[float],
) -> float | None:
    """The tie-break gap of a lexicographic objective whose first component ties.

    When both keys have more than one component, are of the same length and
    their first components (the objectives) tie within :data:`GAP_TOLERANCE`,
    the tie-break gap is the relative gap (as :func:`objective_gap`) of the
    first later component where they differ, 0 when the whole keys tie. It
    is None otherwise: the objective is not lexicographic, or the first
    components differ (then :func:`objective_gap` alone decides), or a value
    is unknown. A row is at the optimum only when its gap and its tie-break
    gap are both 0.

    Parameters
    ----------
    sense : {"min", "max"}
        The problem's sense (applied to every key component).
    objective, optimum : float or None
        The row's objective and the proven optimum.
    key, optimum_key : sequence of float
        Their full keys (``Solution.key``; empty or one component when the
        objective is not lexicographic).

    Returns
    -------
    float or None
        The tie-break gap.

    References
    ----------
    Aryl §4 (reclaiming servers: fewest preemptions) and §7.3 (collateral
    damage, the GPUs vacated beyond the demand); docs/benchmarks.md states
    the rule.

    Examples
    --------
    Reclaim: both preempt 3 jobs, but 6 collateral GPUs against the optimum's 4.

    >>> tie_gap("min", 3.0, (3.0, 6.0), 3.0, (3.0, 4.0))
    0.5
    >>> tie_gap("min", 3.0, (3.0, 4.0), 3.0, (3.0, 4.0))
    0.0
    >>> tie_gap("min", 4.0, (4.0, 0.0), 3.0, (3.0, 4.0)) is None  # the count decides
    True
    """
    if objective is None or optimum is None:
        return None
    if not (len(key) > 1 and len(key) == len(optimum_key)) or not _same(objective, optimum):
        return None
    for mine, best in zip(key[1:], optimum_key[1:], strict=True):
        if not _same(mine, best):
            return objective_gap(sense, mine, best)
    return 0.0


def better_key(sense: Sense, a: Sequence[float], b: Sequence[float]) -> bool:
    """Whether key ``a`` is lexicographically strictly better than ``b`` in the problem's sense.

    Examples
    --------
    >>> better_key("min", (3.0, 4.0), (3.0, 6.0)), better_key("min", (3.0, 4.0), (3.0, 4.0))
    (True, False)
    """
    for x, y in zip(a, b, strict=False):
        if not _same(x, y):
            return x < y if sense == "min" else x > y
    return False
