"""The MMKP as a 0-1 MILP solved by HiGHS (method ``exact``, the proving model).

Binary x_i per item; one capacity row per resource, one "at most one per
group" row per group; maximize the gains (values over the groups' ``none``
values) plus the sum of the ``none`` values. HiGHS via
``scipy.optimize.milp``; exponential in the worst case.

Only the items that survive the Lagrangian reduced-cost fixing enter the
model: the relaxation of :mod:`scheduling_opt.mmkp._lagrange` runs first
(at most :data:`RELAX_SHARE` of the time limit; its multipliers are the
LP relaxation's duals, :mod:`scheduling_opt.mmkp._lp`), and an item whose
forced bound cannot beat its incumbent by a value step
(:meth:`~scheduling_opt.mmkp._relax.Relaxed.survivors`) is in no better
solution. When the relaxation's bound already proves the incumbent (most
of Sia's rounds: their LP optimum is integral), HiGHS' MILP does not run;
when no item survives, the incumbent is optimal. Measured on Sia's rounds
(docs/mmkp.md): the LP, one evaluation of L and the rounding took 6-22 ms
of CPU from 6 to 2,080 candidates, where HiGHS' MILP on every candidate
took 10-14 ms already on 6 to 60 (its set-up dominates), and the
subgradient search 5-155 ms on the 32x rounds. At 32x of the synthetic
Sia-like rounds HiGHS on every candidate (about 12,000 binaries) took
3.1 s of CPU; CP-SAT, on the same model, did not prove some 16x and 32x
rounds in 60 s.

With one resource the instance goes to the MCKP core
(:func:`~scheduling_opt.mmkp.model.to_mckp`, exact).
"""

from __future__ import annotations

import time

import numpy as np

from scheduling_opt import exact as backends
from scheduling_opt.errors import SolverError
from scheduling_opt.mmkp._lagrange import (
    Run,
    nothing,
    one_resource,
    relaxed,
    run,
    solution_of,
)
from scheduling_opt.mmkp._lp import matrix
from scheduling_opt.mmkp._relax import Relaxed
from scheduling_opt.mmkp._search import search
from scheduling_opt.mmkp.model import IntArray, Mmkp, MmkpDecision, decision_of
from scheduling_opt.solution import Seed, Solution, Status, named, time_limit_of

#: Share of the time limit the relaxation may use before HiGHS starts.
RELAX_SHARE = 0.5
#: HiGHS does not look at its clock while it builds and solves its first LPs:
#: it starts only when the time left covers this much per binary (measured:
#: 160,000 binaries took it 10 s before its first check on a loaded 2-core
#: machine, 60 us each), else the relaxation's answer stands (``time_limit``).
HIGHS_SECONDS_PER_ITEM = 1e-4


def milp(
    rel: Relaxed, keep: IntArray, limit: float, started: float
) -> tuple[Status, IntArray | None, float | None]:
    """HiGHS on the candidates ``keep``: status, per-group candidate choice, bound (gains)."""
    from scipy.optimize import LinearConstraint

    a, upper = matrix(rel, keep)
    m = len(keep)
    out = backends.solve_milp(
        rel.gain[keep],
        constraints=[LinearConstraint(a, -np.inf, upper)],
        integrality=np.ones(m, np.int64),
        bounds=(0, 1),
        time_limit=limit,
        maximize=True,
        started=started,
        presolve=False,
    )
    if out.status is Status.INFEASIBLE:
        raise SolverError("HiGHS called a knapsack infeasible (choosing nothing is feasible)")
    picked = None
    if out.x is not None:
        picked = np.full(rel.n, -1, np.int64)
        on = keep[out.x > 0.5]
        picked[rel.group[on]] = on
    return out.status, picked, out.bound


@named("exact")
def exact(
    inp: Mmkp, *, seed: Seed = None, time_limit: float | None = None
) -> Solution[MmkpDecision]:
    """Exact MILP with HiGHS on the items the Lagrangian bound keeps (method ``exact``).

    Parameters
    ----------
    inp : Mmkp
    seed : int, numpy Generator or None
        Unused (deterministic).
    time_limit : float, optional
        Seconds (default :data:`~scheduling_opt.solution.DEFAULT_TIME_LIMIT`)
        for the relaxation and HiGHS together.

    Returns
    -------
    Solution[MmkpDecision]
        ``optimal`` when proven; otherwise ``time_limit`` with the best
        incumbent and the tighter of the Lagrangian and HiGHS bounds.

    Raises
    ------
    InstanceTooLargeError
        More than :data:`~scheduling_opt.mmkp._lagrange.CELL_LIMIT` item x
        resource cells.
    SolverError
        If HiGHS fails.

    Examples
    --------
    >>> from scheduling_opt.mmkp import Mmkp
    >>> p = Mmkp.from_groups(
    ...     [[((2, 0), 3.0), ((0, 2), 2.0)], [((2, 0), 2.5), ((0, 1), 1.0)]], (2, 2)
    ... )
    >>> sol = exact(p, time_limit=10)
    >>> sol.status.value, sol.objective, sol.decision.choice, sol.method
    ('optimal', 4.5, (1, 0), 'exact')

    References
    ----------
    Sia (SOSP '23) §3.3 (the MILP it solves with CBC); HiGHS (Huangfu and
    Hall, 2018); Fisher, Management Science 27 (1981) (reduced-cost fixing).
    """
    start = time.perf_counter()
    limit = time_limit_of(time_limit)
    if inp.n_resources == 1:
        return one_resource(inp, limit, start, "exact")
    rel = relaxed(inp)
    if not len(rel.item):
        return nothing(inp, start, "exact")
    found = run(rel, start + RELAX_SHARE * limit)
    if found.proven:
        return solution_of(found, start, "exact")
    return _finish(found, start, limit)


def _finish(found: Run, start: float, limit: float) -> Solution[MmkpDecision]:
    """HiGHS on the survivors of reduced-cost fixing, and the combined answer."""
    rel, out = found.rel, found.outcome
    inp = rel.inp
    floor = found.precision.threshold(out.value)
    keep = np.flatnonzero(rel.survivors(out.best, floor))
    status, bound = Status.OPTIMAL, None
    message = "reduced-cost fixing left no item that could beat the incumbent"
    left = limit - (time.perf_counter() - start)
    if len(keep) and left < HIGHS_SECONDS_PER_ITEM * len(keep):
        # HiGHS would overrun the limit: the multiplier search goes on instead.
        status = Status.TIME_LIMIT
        message = f"HiGHS not started: {len(keep)} candidates for {max(left, 0):.2g} s"
        more = search(rel, found.precision, start + limit, first=out.best, incumbent=out.picked)
        out.offer(rel, more.picked)
        found.bound = min(found.bound, max(more.bound, out.value))
    elif len(keep):
        status, picked, bound = milp(rel, keep, limit, start)
        message = f"HiGHS on {len(keep)} of {len(rel.gain)} candidates"
        if picked is not None:
            out.offer(rel, picked)
    decision = decision_of(inp, rel.choice_of(out.picked))
    seconds = time.perf_counter() - start
    if status is Status.OPTIMAL:
        return Solution(
            Status.OPTIMAL,
            decision.value,
            decision,
            seconds=seconds,
            method="exact",
            message=message,
        )
    # A better solution uses only survivors (at most HiGHS' bound) or a fixed
    # item (below the fixing's floor); the relaxation's bound holds for all.
    reduced = found.bound if bound is None else max(bound, floor)
    total = max(min(found.bound, reduced) + inp.base, decision.value)
    if not message.startswith("HiGHS not started"):
        message = f"the time limit stopped HiGHS ({message})"
    return Solution(Status.TIME_LIMIT, decision.value, decision, total, seconds, "exact", message)
