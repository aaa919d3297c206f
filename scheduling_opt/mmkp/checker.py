"""The independent MMKP checker: one item per group at most, every capacity, objective.

Recomputes everything from the input with plain Python sums and trusts
nothing the solver reports. O(groups x resources).
"""

from __future__ import annotations

import numpy as np

from scheduling_opt.errors import VerificationError
from scheduling_opt.group_choice import check_item, check_objective, decision_of_solution
from scheduling_opt.mmkp.model import TOLERANCE, Mmkp, MmkpDecision
from scheduling_opt.solution import Solution, Status


def check(inp: Mmkp, solution: Solution[MmkpDecision]) -> None:
    """Verify a solution independently; raise :class:`VerificationError` if it fails.

    Parameters
    ----------
    inp : Mmkp
    solution : Solution[MmkpDecision]

    Returns
    -------
    None
        Returns only when the solution holds.

    Raises
    ------
    VerificationError
        On a missing decision (choosing nothing is always feasible), an
        ``infeasible`` claim, an invalid item, a capacity exceeded, a
        reported weight or objective that does not match the choice, a
        non-finite objective, a bound on the wrong side of the objective (or
        NaN), or an ``optimal`` claim below the checker's own witness (every
        group at ``none`` but one, which takes the best item that fits).

    Examples
    --------
    >>> from scheduling_opt.mmkp import Mmkp, exact
    >>> p = Mmkp.from_groups([[((3, 1), 5.0)], [((2, 1), 4.0)]], (4, 2))
    >>> check(p, exact(p))

    References
    ----------
    Sia (SOSP '23) §3.3 (the constraints of its per-round MILP).
    """
    decision = decision_of_solution(solution, inp.n_groups)
    choice = decision.choice
    capacity = [int(c) for c in inp.capacity]
    weights = inp.weights.tolist()
    values = inp.values.tolist()
    assert inp.none is not None
    none = inp.none.tolist()
    offsets = inp.offsets.tolist()
    used = [0] * len(capacity)
    total = 0.0
    for g, item in enumerate(choice):
        a, b = offsets[g], offsets[g + 1]
        if item is None:
            total += none[g]
            continue
        item = check_item(g, item, b - a)
        total += values[a + item]
        used = [u + w for u, w in zip(used, weights[a + item], strict=True)]
    for r, (u, c) in enumerate(zip(used, capacity, strict=True)):
        if u > c:
            name = inp.resources[r]
            raise VerificationError(f"resource {name!r}: weight {u} exceeds the capacity {c}")
    if tuple(decision.weight) != tuple(used):
        raise VerificationError(f"reported weights {tuple(decision.weight)} != {tuple(used)}")
    scale = 1.0 + sum(abs(v) for v in values) + sum(abs(v) for v in none)
    slack = TOLERANCE * scale
    reported = check_objective(solution, total, slack)
    if solution.status is Status.OPTIMAL:
        witness = _witness(inp)
        if reported < witness - slack:
            raise VerificationError(
                f"optimal claimed with {reported}, but a single item (the rest at none) gives {witness}"
            )


def _witness(inp: Mmkp) -> float:
    """All groups at ``none`` but the one whose best fitting item gains the most."""
    assert inp.none is not None
    fits = np.all(inp.weights <= inp.capacity[None, :], axis=1)
    gains = inp.values - np.repeat(inp.none, np.diff(inp.offsets))
    best = float(gains[fits].max()) if fits.any() else 0.0
    return float(inp.none.sum()) + max(best, 0.0)
