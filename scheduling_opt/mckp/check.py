"""The independent MCKP checker: one item per group at most, capacity, objective.

Recomputes everything from the input (Aryl §5.2's constraints) and trusts
nothing the solver reports. O(number of groups).
"""

from __future__ import annotations

from scheduling_opt.errors import VerificationError
from scheduling_opt.group_choice import check_item, check_objective, decision_of_solution
from scheduling_opt.mckp.model import TOLERANCE, Mckp, MckpDecision
from scheduling_opt.solution import Solution, Status


def check(inp: Mckp, solution: Solution[MckpDecision]) -> None:
    """Verify a solution independently; raise :class:`VerificationError` if it fails.

    Parameters
    ----------
    inp : Mckp
    solution : Solution[MckpDecision]

    Returns
    -------
    None
        Returns only when the solution holds.

    Raises
    ------
    VerificationError
        On a missing decision (choosing nothing is always feasible, so an
        MCKP always has one), an invalid item, an overweight choice, a
        reported weight or objective that does not match the choice, a
        non-finite objective, a bound on the wrong side of the objective (or
        NaN), or an ``optimal`` claim below the best single item that fits.

    Examples
    --------
    >>> from scheduling_opt.mckp import Mckp, dp
    >>> p = Mckp.from_groups([[(3, 5.0)], [(2, 4.0)]], 4)
    >>> check(p, dp(p))

    References
    ----------
    Aryl (EuroSys '22) §5.2.
    """
    decision = decision_of_solution(solution, inp.n_groups)
    choice = decision.choice
    total_w, total_v = 0, 0.0
    for g, item in enumerate(choice):
        if item is None:
            continue
        a, b = int(inp.offsets[g]), int(inp.offsets[g + 1])
        item = check_item(g, item, b - a)
        total_w += int(inp.weights[a + item])
        total_v += float(inp.values[a + item])
    if total_w > inp.capacity:
        raise VerificationError(f"weight {total_w} exceeds the capacity {inp.capacity}")
    if decision.weight != total_w:
        raise VerificationError(f"reported weight {decision.weight} != {total_w}")
    reported = check_objective(solution, total_v, TOLERANCE * (1 + abs(total_v)))
    if solution.status is Status.OPTIMAL:
        # The checker's own cheap witness: the most valuable single item that fits.
        fits = (inp.weights <= inp.capacity) & (inp.values > 0)
        single = float(inp.values[fits].max()) if fits.any() else 0.0
        if reported < single - TOLERANCE * (1 + abs(single)):
            raise VerificationError(
                f"optimal claimed with {reported}, but one item alone is worth {single}"
            )
