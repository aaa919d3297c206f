"""Lagrangian relaxation with repair (method ``lagrange``): fast, with a proven bound.

1. Relax every capacity (:mod:`scheduling_opt.mmkp._relax`) at the best
   multipliers: the LP relaxation's duals, from one HiGHS LP solve, with
   the LP's solution rounded and repaired as the first incumbent
   (:mod:`scheduling_opt.mmkp._lp`, :mod:`scheduling_opt.mmkp._repair`).
   When the LP cannot run (too little time left, or HiGHS fails), search
   the multipliers by subgradient steps instead, repairing the
   subproblem's choices along the way (:mod:`scheduling_opt.mmkp._search`).
2. Keep one capacity, relax the others at the best multipliers: for each
   resource k the subproblem is a multiple-choice knapsack on resource k
   with gains ``a_i - sum_{r != k} mu_r w_ir``, solved exactly by the MCKP
   core (:func:`scheduling_opt.mckp.core`). Its optimum plus
   ``sum_{r != k} mu_r C_r`` bounds the MMKP from above (same argument as
   for L, with resource k's capacity kept as a constraint), and is never
   above L(mu) (the MCKP's optimum is at most its LP relaxation). Its
   choice fits resource k and is repaired on the others.
3. Polish the best choices by exchanges (one group up, another down).

The answer is ``optimal`` when the bound proves it
(:class:`~scheduling_opt.mmkp._relax.Precision`: on a decimal value grid,
a bound under the incumbent plus one step), else ``feasible`` with the
bound (``time_limit`` when the clock stopped the search). With one
resource there is nothing to relax: the instance goes to the MCKP core as
is (:func:`~scheduling_opt.mmkp.model.to_mckp`), whose answer is returned.

Complexity: one LP of m columns and R + n rows (polynomial; or O(m R)
per subgradient step, at most :data:`~scheduling_opt.mmkp._search.MAX_STEPS`),
a few O(m R) passes per repair, and R MCKP core solves (O(m log m) plus
their DP over a core).
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np

from scheduling_opt.errors import InstanceTooLargeError
from scheduling_opt.mckp import Mckp, core
from scheduling_opt.mmkp._lp import lp_start
from scheduling_opt.mmkp._relax import Precision, Relaxed
from scheduling_opt.mmkp._repair import polish, repair
from scheduling_opt.mmkp._search import Outcome, search
from scheduling_opt.mmkp.model import IntArray, Mmkp, MmkpDecision, decision_of, to_mckp
from scheduling_opt.solution import Seed, Solution, Status, named, time_limit_of

#: Most cells (items x resources) the relaxation's arrays may hold: about
#: 40 bytes per cell live at once, so 10^7 cells stay near 400 MB.
CELL_LIMIT = 10_000_000


def relaxed(inp: Mmkp) -> Relaxed:
    """The relaxation's candidates, after checking that its arrays fit.

    Raises
    ------
    InstanceTooLargeError
        More than :data:`CELL_LIMIT` item x resource cells.
    """
    cells = len(inp.values) * inp.n_resources
    if cells > CELL_LIMIT:
        raise InstanceTooLargeError(
            "groups",
            f"{len(inp.values)} items x {inp.n_resources} resources = {cells:.3g} cells, "
            f"above the relaxation's limit {CELL_LIMIT:.0e}",
        )
    return Relaxed.of(inp)


@dataclass(slots=True)
class Run:
    """What the relaxation found: candidates, incumbent, bounds (gains, no base)."""

    rel: Relaxed
    precision: Precision
    outcome: Outcome
    bound: float  # the best bound: min of L and the kept-one bounds
    stopped: bool  # the deadline cut the search short

    @property
    def value(self) -> float:
        return self.outcome.value

    @property
    def proven(self) -> bool:
        return self.precision.closes(self.bound, self.value)


def kept_one(rel: Relaxed, out: Outcome, deadline: float) -> tuple[float, list[IntArray]]:
    """Per resource k, the MCKP bound with k kept, and its choice (per group candidate)."""
    mu = out.best.mu
    r = len(mu)
    offsets = np.r_[rel.starts, len(rel.gain)]
    bound, choices = out.bound, []
    for k in range(r):
        if time.perf_counter() >= deadline:
            break
        other = np.arange(r) != k
        gains = rel.gain - rel.fweight[:, other] @ mu[other]
        sub = Mckp(int(rel.inp.capacity[k]), rel.weight[:, k], gains, offsets)
        sol = core(sub, time_limit=max(deadline - time.perf_counter(), 1e-3))
        if sol.bound is not None:
            bound = min(bound, float(mu[other] @ rel.capacity[other]) + sol.bound)
        if sol.decision is not None:
            picked = np.array(
                [
                    -1 if i is None else int(rel.starts[g]) + i
                    for g, i in enumerate(sol.decision.choice)
                ],
                dtype=np.int64,
            )
            choices.append(picked)
    return bound, choices


def first_outcome(rel: Relaxed, precision: Precision, deadline: float) -> Outcome:
    """Step 1: the multipliers and a first incumbent, from the LP or by subgradient steps.

    The LP's duals minimize L (:mod:`scheduling_opt.mmkp._lp`), so no
    subgradient step can lower the bound they give; the search runs only
    when the LP does not (too little time left, or HiGHS fails).
    """
    start = lp_start(rel, deadline)
    if start is None:
        return search(rel, precision, deadline)
    ev, picked = start
    out = Outcome(np.full(rel.n, -1, np.int64), 0.0, ev)
    out.offer(rel, picked)
    return out


def run(rel: Relaxed, deadline: float, kept: bool = True) -> Run:
    """Steps 1-3 of the module docstring on an instance with candidates (step 2 if ``kept``)."""
    precision = Precision.of(rel.inp)
    out = first_outcome(rel, precision, deadline)
    stopped = time.perf_counter() >= deadline
    bound = out.bound
    best = out.best
    mu = best.mu
    starts = [out.picked]
    if not stopped and not precision.closes(bound, out.value):
        starts.append(repair(rel, best.choice, mu, deadline))
    if kept and not precision.closes(bound, out.value) and time.perf_counter() < deadline:
        bound, choices = kept_one(rel, out, deadline)
        starts += [repair(rel, c, mu, deadline) for c in choices]
    for picked in starts:
        out.offer(rel, picked)
        if precision.closes(bound, out.value) or time.perf_counter() >= deadline:
            continue
        out.offer(rel, polish(rel, picked, mu, deadline))
    stopped = stopped or time.perf_counter() >= deadline
    return Run(rel, precision, out, max(bound, out.value), stopped)


def nothing(inp: Mmkp, start: float, method: str) -> Solution[MmkpDecision]:
    """The empty choice, optimal: no item gains over its group's ``none`` value and fits."""
    decision = decision_of(inp, [None] * inp.n_groups)
    seconds = time.perf_counter() - start
    return Solution(Status.OPTIMAL, decision.value, decision, seconds=seconds, method=method)


def one_resource(inp: Mmkp, time_limit: float, start: float, method: str) -> Solution[MmkpDecision]:
    """The MCKP core's answer on the one-resource instance, in MMKP terms."""
    sol = core(to_mckp(inp), time_limit=time_limit)
    assert sol.decision is not None
    decision = decision_of(inp, sol.decision.choice)
    bound = None if sol.bound is None else sol.bound + inp.base
    return Solution(
        sol.status,
        decision.value,
        decision,
        bound=decision.value if sol.status is Status.OPTIMAL else bound,
        seconds=time.perf_counter() - start,
        method=method,
        message=sol.message,
    )


@named("lagrange")
def lagrange(
    inp: Mmkp, *, seed: Seed = None, time_limit: float | None = None
) -> Solution[MmkpDecision]:
    """Lagrangian relaxation of the capacities, repair and MCKP-core bounds (method ``lagrange``).

    Parameters
    ----------
    inp : Mmkp
    seed : int, numpy Generator or None
        Unused (deterministic).
    time_limit : float, optional
        Seconds (default :data:`~scheduling_opt.solution.DEFAULT_TIME_LIMIT`),
        checked before every subgradient step, MCKP solve and polish.

    Returns
    -------
    Solution[MmkpDecision]
        ``optimal`` when the bound proves it; otherwise ``feasible`` (or
        ``time_limit``) with the incumbent and the Lagrangian bound.

    Raises
    ------
    InstanceTooLargeError
        More than :data:`CELL_LIMIT` item x resource cells.

    Examples
    --------
    >>> from scheduling_opt.mmkp import Mmkp
    >>> p = Mmkp.from_groups(
    ...     [[((2, 0), 3.0), ((0, 2), 2.0)], [((2, 0), 2.5), ((0, 1), 1.0)]], (2, 2)
    ... )
    >>> sol = lagrange(p)
    >>> sol.status.value, sol.objective, sol.decision.choice, sol.method
    ('optimal', 4.5, (1, 0), 'lagrange')

    References
    ----------
    M. L. Fisher, "The Lagrangian relaxation method for solving integer
    programming problems", Management Science 27 (1981) 1-18; Pisinger,
    EJOR 83 (1995) (the MCKP core of each subproblem).
    """
    start = time.perf_counter()
    limit = time_limit_of(time_limit)
    if inp.n_resources == 1:
        return one_resource(inp, limit, start, "lagrange")
    rel = relaxed(inp)
    if not len(rel.item):
        return nothing(inp, start, "lagrange")
    found = run(rel, start + limit)
    return solution_of(found, start, "lagrange")


def solution_of(found: Run, start: float, method: str) -> Solution[MmkpDecision]:
    """The :class:`Solution` of a relaxation run (optimal when its bound closes)."""
    inp = found.rel.inp
    decision = decision_of(inp, found.rel.choice_of(found.outcome.picked))
    seconds = time.perf_counter() - start
    if found.proven:
        return Solution(Status.OPTIMAL, decision.value, decision, seconds=seconds, method=method)
    status = Status.TIME_LIMIT if found.stopped else Status.FEASIBLE
    bound = max(found.bound + inp.base, decision.value)
    message = "the time limit stopped the multiplier search" if found.stopped else ""
    return Solution(status, decision.value, decision, bound, seconds, method, message)
