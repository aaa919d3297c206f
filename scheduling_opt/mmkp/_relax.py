"""The Lagrangian relaxation of every capacity, and what it proves.

For multipliers mu >= 0 (one per resource), relaxing the capacity rows gives

    L(mu) = base + mu . C + sum_g max(0, max_{i in g} (a_i - mu . w_i))

where a_i is item i's gain over its group's ``none`` value. For any feasible
choice x, sum_i a_i x_i <= sum_i a_i x_i + mu . (C - sum_i w_i x_i) <=
L(mu) - base, because each group's term is at most the best reduced gain it
could take (or 0); so L(mu) bounds the optimum from above for every mu >=
0 (Fisher 1981). Its minimum over mu equals the LP relaxation's optimum
(each group's subproblem has the integrality property). Evaluating L, its
maximizing choice and a subgradient ``C - sum_i w_i x_i(mu)`` costs O(m R)
for m items and R resources, in numpy.

Only candidates enter: items whose gain is positive and whose every weight
fits its capacity (any other item can be swapped for "none" without loss).

:func:`survivors` is reduced-cost fixing: forcing item i into group g's
choice lowers the bound by ``best_g - (a_i - mu . w_i)``; an item whose
forced bound cannot beat the incumbent is in no better solution.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from scheduling_opt.mmkp.model import FloatArray, IntArray, Mmkp

#: Largest power of ten a value grid may have (values with up to 6 decimals).
GRID_DIGITS = 6
#: Largest distance (in grid units) between a value and its grid point.
GRID_SLACK = 1e-9


def tolerance(n: int, scale: float) -> float:
    """The float rounding a sum of ``n`` values of total size ``scale`` may carry.

    Examples
    --------
    >>> tolerance(1000, 1e6) < 1e-5
    True
    """
    return max(1e-12, 4.0 * (n + 8) * 2.0**-52) * (1.0 + scale)


@dataclass(frozen=True, slots=True)
class Precision:
    """How much a bound must exceed an incumbent for a better solution to exist.

    When every value and ``none`` value lies on a decimal grid of step
    ``unit`` (10^-d, d <= 6, up to :data:`GRID_SLACK` of a step), every
    objective does too, so a better solution is better by a whole step
    (less the values' distance to their grid points); otherwise by more than
    the float rounding of the sums.

    Examples
    --------
    >>> from scheduling_opt.mmkp.model import Mmkp
    >>> p = Mmkp.from_groups([[((1,), 0.29)], [((1,), 1.5)]], (1,))
    >>> Precision.of(p).unit
    0.01
    """

    tol: float
    unit: float  # 0: no grid
    n: int = 0

    @classmethod
    def of(cls, inp: Mmkp) -> Precision:
        assert inp.none is not None
        raw = np.concatenate([inp.values, inp.none])
        scale = 3.0 * float(np.abs(raw).sum())
        tol = tolerance(inp.n_groups + len(inp.values), scale)
        unit = 0.0
        for digits in range(GRID_DIGITS + 1):
            step = 10.0**digits
            if scale * step >= 2.0**50:
                break
            x = raw * step
            if np.all(np.abs(x - np.round(x)) <= GRID_SLACK):
                unit = 1.0 / step
                break
        # The values sit up to GRID_SLACK steps off the grid: two objectives differ
        # in at most 2 n terms, moved that much each;
        # a grid is used only when that and the
        # float rounding stay under a quarter step.
        if unit and (tol >= 0.25 * unit or (2 * inp.n_groups + 1) * GRID_SLACK >= 0.25):
            unit = 0.0
        return cls(tol, unit, 2 * inp.n_groups + 1)

    def threshold(self, value: float) -> float:
        """What a bound must reach for a solution better than ``value`` to exist."""
        if self.unit:
            return value + self.unit * (1.0 - self.n * GRID_SLACK) - self.tol
        return value + self.tol

    def closes(self, bound: float, value: float) -> bool:
        """Whether ``bound`` proves that no solution beats ``value``."""
        return bound < self.threshold(value)


@dataclass(frozen=True, slots=True)
class Evaluation:
    """L(mu) and what attains it: per group its choice (candidate index or -1)."""

    mu: FloatArray
    bound: float
    best: FloatArray  # per group max(0, best reduced gain)
    choice: IntArray  # per group the candidate taken, -1 for none
    subgradient: FloatArray


@dataclass(frozen=True, slots=True)
class Relaxed:
    """The candidates of an instance, flat and grouped, for the relaxation.

    ``item``: the instance's item index of each candidate; ``group``: its
    group, renumbered 0.. over the groups that keep a candidate (``groups``
    maps back); ``starts``: where each group's candidates begin.
    """

    inp: Mmkp
    item: IntArray
    group: IntArray
    groups: IntArray
    starts: IntArray
    gain: FloatArray
    weight: IntArray
    fweight: FloatArray
    capacity: FloatArray
    index: IntArray  # 0..m-1

    @classmethod
    def of(cls, inp: Mmkp) -> Relaxed:
        """The candidates of ``inp``: positive gain, every weight within its capacity."""
        a = inp.gains()
        keep = (a > 0) & np.all(inp.weights <= inp.capacity[None, :], axis=1)
        item = np.flatnonzero(keep)
        raw_group = inp.group_of_items()[item]
        groups, group = np.unique(raw_group, return_inverse=True)
        group = group.astype(np.int64).reshape(-1)
        starts = np.flatnonzero(np.r_[True, group[1:] != group[:-1]]) if len(item) else item
        weight = inp.weights[item]
        return cls(
            inp,
            item,
            group,
            groups.astype(np.int64),
            starts.astype(np.int64),
            a[item],
            weight,
            weight.astype(np.float64),
            inp.capacity.astype(np.float64),
            np.arange(len(item), dtype=np.int64),
        )

    @property
    def n(self) -> int:
        """Groups with a candidate."""
        return len(self.starts)

    def evaluate(self, mu: FloatArray) -> Evaluation:
        """L(mu) (without the base), the maximizing choice and a subgradient. O(m R)."""
        if not len(self.item):
            return Evaluation(mu, float(mu @ self.capacity), np.zeros(0), self.item, self.capacity)
        red = self.gain - self.fweight @ mu
        top = np.maximum.reduceat(red, self.starts)
        best = np.maximum(top, 0.0)
        # Ties go to the group's first candidate attaining the top.
        pos = np.where(red >= top[self.group], self.index, len(red))
        first = np.minimum.reduceat(pos, self.starts)
        choice = np.where(top > 0, first, -1)
        taken = choice[choice >= 0]
        sub = self.capacity - self.fweight[taken].sum(axis=0)
        return Evaluation(mu, float(mu @ self.capacity + best.sum()), best, choice, sub)

    def reduced(self, mu: FloatArray) -> FloatArray:
        """Every candidate's reduced gain ``a_i - mu . w_i``."""
        out: FloatArray = self.gain - self.fweight @ mu
        return out

    def survivors(self, ev: Evaluation, floor: float) -> NDArray[np.bool_]:
        """Candidates whose forced bound ``L - best_g + red_i`` reaches ``floor`` (both without base).

        ``floor`` is what a bound must reach for a better solution than the
        incumbent to exist (:meth:`Precision.threshold`); the rest are fixed
        to 0 by reduced-cost fixing (their forced bound is a valid bound on
        every solution that takes them).
        """
        red = self.reduced(ev.mu)
        forced = ev.bound - ev.best[self.group] + red
        out: NDArray[np.bool_] = forced >= floor
        return out

    def choice_of(self, picked: IntArray) -> list[int | None]:
        """The instance's choice (index in group, or None) of a per-group candidate vector."""
        inp = self.inp
        choice: list[int | None] = [None] * inp.n_groups
        taken = picked >= 0
        groups = self.groups[taken]
        within = self.item[picked[taken]] - inp.offsets[groups]
        for g, i in zip(groups.tolist(), within.tolist(), strict=True):
            choice[g] = i
        return choice

    def value_of(self, picked: IntArray) -> float:
        """The gain of a per-group candidate vector (without the base)."""
        taken = picked[picked >= 0]
        return float(self.gain[taken].sum()) if len(taken) else 0.0

    def scale(self) -> float:
        """A size of the bound's terms, for float tolerances."""
        return 1.0 + float(np.abs(self.gain).sum()) if len(self.gain) else 1.0


def finite(x: float) -> bool:
    """Whether a bound is a finite number (mu . C may overflow on huge capacities)."""
    return math.isfinite(x)
