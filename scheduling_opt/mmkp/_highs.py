"""The MMKP as a 0-1 MILP solved by HiGHS (method ``exact``, the proving model).

Binary x_i per item; one capacity row per resource, one "at most one per
group" row per group; maximize the gains (values over the groups' ``none``
values) plus the sum of the ``none`` values. HiGHS via
``scipy.optimize.milp``; exponential in the worst case.

Up to :data:`DIRECT_CANDIDATES` candidates (items that gain over their
group's ``none`` value and fit every capacity) HiGHS gets them all. Beyond,
only the items that survive the Lagrangian reduced-cost fixing enter the
model: the relaxation of :mod:`scheduling_opt.mmkp._lagrange` runs first
(at most :data:`RELAX_SHARE` of the time limit), and an item whose forced
bound cannot beat its incumbent by a value step
(:meth:`~scheduling_opt.mmkp._relax.Relaxed.survivors`) is in no better
solution. When the relaxation's bound already proves the incumbent, HiGHS
does not run; when no item survives, the incumbent is optimal. Measured on
Sia-like rounds (docs/mmkp.md): at 32x HiGHS on every candidate (about
12,000 binaries) took 3.1 s of CPU, ``exact`` 1.2 s in all (median of three);
CP-SAT, on the same model, did not prove some 16x and 32x rounds in 60 s.

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
    has_candidates,
    one_resource,
    relaxed,
    run,
    solution_of,
)
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
#: Up to this many candidates HiGHS alone proves faster than the relaxation
#: and fixing before it (Sia-like rounds: 350 candidates, 10 vs 30 ms of CPU;
#: 1,550: 140 vs 90 ms; docs/mmkp.md), and runs on all of them.
DIRECT_CANDIDATES = 1000


def milp(
    rel: Relaxed, keep: IntArray, limit: float, started: float
) -> tuple[Status, IntArray | None, float | None]:
    """HiGHS on the candidates ``keep``: status, per-group candidate choice, bound (gains)."""
    from scipy.optimize import LinearConstraint
    from scipy.sparse import csr_array

    w = rel.weight[keep]
    group = rel.group[keep]
    m, r = w.shape
    item, resource = np.nonzero(w)
    rows = np.concatenate([resource, r + group])
    cols = np.concatenate([item, np.arange(m)])
    data = np.concatenate([w[item, resource].astype(float), np.ones(m)])
    a = csr_array((data, (rows, cols)), shape=(r + rel.n, m))
    upper = np.concatenate([rel.capacity, np.ones(rel.n)])
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
    if not has_candidates(inp):
        decision = decision_of(inp, [None] * inp.n_groups)
        return Solution(
            Status.OPTIMAL,
            decision.value,
            decision,
            seconds=time.perf_counter() - start,
            method="exact",
        )
    rel = relaxed(inp)
    if len(rel.gain) <= DIRECT_CANDIDATES:
        return _direct(rel, start, limit)
    found = run(rel, start + RELAX_SHARE * limit)
    if found.proven:
        return solution_of(found, start, "exact")
    return _finish(found, start, limit)


def _direct(rel: Relaxed, start: float, limit: float) -> Solution[MmkpDecision]:
    """HiGHS on every candidate (a small instance: at most DIRECT_CANDIDATES)."""
    inp = rel.inp
    status, picked, bound = milp(rel, np.arange(len(rel.gain)), limit, start)
    choice = rel.choice_of(picked) if picked is not None else [None] * inp.n_groups
    decision = decision_of(inp, choice)
    seconds = time.perf_counter() - start
    if status is Status.OPTIMAL:
        return Solution(Status.OPTIMAL, decision.value, decision, seconds=seconds, method="exact")
    total = None if bound is None else max(bound + inp.base, decision.value)
    message = "the time limit stopped HiGHS"
    return Solution(Status.TIME_LIMIT, decision.value, decision, total, seconds, "exact", message)


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
