"""The multiplier search: subgradient steps on L(mu), repairs along the way.

Polyak's step ``mu <- max(0, mu - theta (L(mu) - z) / |s|^2 s)`` with the
incumbent's value z as the target (Held, Wolfe and Crowder 1974; Fisher
1981), theta halved after :data:`STALL` steps without a better bound. The
repair (:mod:`scheduling_opt.mmkp._repair`) turns the subproblem's choice
into a feasible incumbent every :data:`REPAIR_EVERY` steps and whenever the
bound improves. The search stops when the bound proves the incumbent
optimal (:class:`~scheduling_opt.mmkp._relax.Precision`), when theta falls
under :data:`THETA_MIN`, after ``max_steps`` or at the deadline.

Each step is one evaluation of L, O(m R); a repair is a few more.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np

from scheduling_opt.mmkp._relax import Evaluation, Precision, Relaxed
from scheduling_opt.mmkp._repair import repair
from scheduling_opt.mmkp.model import FloatArray, IntArray

#: Steps without a better bound before theta is halved.
STALL = 5
#: Smallest theta; the search ends below it.
THETA_MIN = 1e-4
#: Steps between two repairs when the bound does not improve, and at least
#: between two when it does.
REPAIR_EVERY = 10
REPAIR_GAP = 4
#: Default step budget.
MAX_STEPS = 400
#: Steps before the first repair (targeting the empty choice's value, 0).
WARM_STEPS = 5


@dataclass(slots=True)
class Outcome:
    """The search's incumbent (per-group candidates) and bound, in gains (no base)."""

    picked: IntArray
    value: float
    best: Evaluation
    steps: int = 0
    repairs: int = 0

    @property
    def bound(self) -> float:
        return self.best.bound

    def offer(self, rel: Relaxed, picked: IntArray) -> None:
        """Keep ``picked`` (feasible) if it beats the incumbent."""
        value = rel.value_of(picked)
        if value > self.value:
            self.picked, self.value = picked, value


def start(rel: Relaxed) -> Evaluation:
    """L at mu = 0: every group takes its best candidate."""
    return rel.evaluate(np.zeros(len(rel.capacity)))


def search(
    rel: Relaxed,
    precision: Precision,
    deadline: float,
    max_steps: int = MAX_STEPS,
    first: Evaluation | None = None,
    incumbent: IntArray | None = None,
) -> Outcome:
    """Subgradient search from ``first`` (default mu = 0, then :data:`WARM_STEPS` steps
    before the first repair) and ``incumbent`` (default: that repair); see the module
    docstring."""
    ev = start(rel) if first is None else first
    out = Outcome(np.full(rel.n, -1, np.int64), 0.0, ev)
    clock = time.perf_counter
    # A few steps toward the empty choice's value first: at mu = 0 every
    # group takes its best item, and repairing that is the slowest repair.
    for _ in range(WARM_STEPS if first is None else 0):
        norm = float(ev.subgradient @ ev.subgradient)
        if norm == 0.0 or clock() >= deadline:
            break
        ev = rel.evaluate(np.maximum(ev.mu - ev.bound / norm * ev.subgradient, 0.0))
        out.steps += 1
        if ev.bound < out.bound:
            out.best = ev
    if incumbent is None:
        out.offer(rel, repair(rel, out.best.choice, out.best.mu, deadline))
        out.repairs = 1
    else:
        out.offer(rel, incumbent)
    ev = out.best
    theta, stall, repaired = 1.0, 0, out.steps
    while out.steps < max_steps and theta >= THETA_MIN and clock() < deadline:
        if precision.closes(out.bound, out.value):
            break
        s = ev.subgradient
        norm = float(s @ s)
        if norm == 0.0:
            # The subproblem's choice uses every capacity exactly: it is
            # feasible, and L = its value, so the bound has closed.
            out.offer(rel, ev.choice)
            break
        gap = max(ev.bound - out.value, precision.tol)
        mu: FloatArray = np.maximum(ev.mu - theta * gap / norm * s, 0.0)
        ev = rel.evaluate(mu)
        out.steps += 1
        improved = ev.bound < out.bound - precision.tol
        if improved:
            out.best, stall = ev, 0
        else:
            stall += 1
            if stall >= STALL:
                theta, stall = theta / 2, 0
        since = out.steps - repaired
        if since >= REPAIR_EVERY or (improved and since >= REPAIR_GAP):
            out.offer(rel, repair(rel, ev.choice, ev.mu, deadline))
            out.repairs += 1
            repaired = out.steps
    return out
