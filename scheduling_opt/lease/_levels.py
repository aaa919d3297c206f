"""The first stage of the lease ``exact``: deadline levels under energy rows, re-solved after cuts.

:class:`Levels` solves :func:`~scheduling_opt.lease.formulation.build_levels`'
model (a relaxation of the lease MILP whose proven optimum bounds it) on its
level columns only, and after each cut tries a model whose columns are fixed
by reduced costs in a Lagrangian bound first. Chronus §3.3.4.
Cost: one HiGHS MILP over ~450 binaries and ~290 rows at C120 per solve, plus
one LP for the duals.
"""

from __future__ import annotations

import itertools
import time
from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np
from numpy.typing import NDArray

from scheduling_opt.errors import SolverError
from scheduling_opt.exact import stdout_to_stderr
from scheduling_opt.lease._highs import highs
from scheduling_opt.lease.formulation import LevelEntries, Model, Row
from scheduling_opt.solution import Status

if TYPE_CHECKING:
    from scipy.sparse import csr_array


class Levels:
    """The levels stage on its level columns only, with reduced-cost fixing.

    :func:`~scheduling_opt.lease.formulation.build_levels` keeps the term
    columns in the layout at upper bound 0, and HiGHS (presolve off) carries
    them: solving on the level columns alone is the same problem, ~25%
    faster. After a choice is cut, the next solve only has to look at or
    below the previous bound b (a cut removes choices, it adds none), and
    most level columns are then fixed by their reduced costs in a
    Lagrangian bound: for any duals u, v >= 0 of the rows, every choice x
    has c x <= L - |rc_j| when x_j differs from the bound that the sign of
    rc = c - A'(u - v) favours (L = u hi - v lo + sum max(0, rc) ub), so
    x_j is fixed when L - |rc_j| < b: the fixed model holds every choice
    worth b or more. L is computed here from whatever duals the LP returned,
    so the fixing is valid whatever their accuracy (weak duality). The cuts
    are left out of the bound (dropping rows only loosens it). On
    synth-p4-6, 161 of 481 columns stay free at b = 17150 and a solve takes
    ~0.1 s instead of ~0.4 s.
    """

    def __init__(self, relaxed: Model) -> None:
        self.full = relaxed
        self.cols = np.array([v for s in relaxed.lay.s for v in s], dtype=np.int64)
        self.index = {int(v): k for k, v in enumerate(self.cols)}
        # Full-layout column -> level-column position (-1: a term column).
        self.position = np.full(relaxed.lay.size, -1, dtype=np.int64)
        self.position[self.cols] = np.arange(len(self.cols))
        ub = relaxed.ub
        # Rows only over level columns; the term columns (fixed at 0) drop out:
        # every row compacted at once, as COO entries (the matrix of the rows
        # that :meth:`compact` gives one by one, tests/lease/test_levels_matrix.py).
        self.base = relaxed.entries if relaxed.entries is not None else self._entries(relaxed.rows)
        self.c = relaxed.c[self.cols]
        self.ub = ub[self.cols]
        # Each job's level columns (in level order) as positions among ``cols``.
        self.groups = [[self.index[v] for v in s] for s in relaxed.lay.s if s]
        self.step = granularity(self.c)
        self.duals: tuple[float, NDArray[np.float64]] | None = None
        # Off after the first fixed solve that falls short of its floor: then
        # the optimum drops by more than one reward step per cut (jobs large
        # against M), and every later round would pay for two solves.
        self.fixing = True

    def compact(self, row: Row) -> Row:
        """A row over full-layout columns as one over the level columns (others are 0).

        Vectorized over the row (the energy rows hold every level column).
        """
        cols, coefs, lo, hi = row
        if len(cols) != len(coefs):
            raise ValueError("a row needs one coefficient per column")
        pos = self.position[np.asarray(cols, dtype=np.int64)]
        keep = pos >= 0
        if not keep.all():
            if (self.full.ub[np.asarray(cols, dtype=np.int64)[~keep]] != 0.0).any():
                raise SolverError("a levels row holds a free term column")
            coefs = [c for c, k in zip(coefs, keep.tolist(), strict=True) if k]
        return (pos[keep].tolist(), list(coefs), lo, hi)

    def _entries(self, rows: Sequence[Row]) -> LevelEntries:
        """The rows over the level columns as (row, column, value) entries and bounds.

        :meth:`compact` of every row, vectorized over all of them (the rows
        in order, each row's entries in its order): O(nnz) numpy work.
        """
        lengths = np.array([len(cols) for cols, _, _, _ in rows], dtype=np.int64)
        if any(len(cols) != len(coefs) for cols, coefs, _, _ in rows):
            raise ValueError("a row needs one coefficient per column")
        total = int(lengths.sum())
        cols = np.fromiter(
            itertools.chain.from_iterable(row[0] for row in rows), dtype=np.int64, count=total
        )
        coefs = np.fromiter(
            itertools.chain.from_iterable(row[1] for row in rows), dtype=np.float64, count=total
        )
        pos = self.position[cols]
        keep = pos >= 0
        if not keep.all() and (self.full.ub[cols[~keep]] != 0.0).any():
            raise SolverError("a levels row holds a free term column")
        which = np.repeat(np.arange(len(rows), dtype=np.int64), lengths)
        lo = np.array([row[2] for row in rows], dtype=float)
        hi = np.array([row[3] for row in rows], dtype=float)
        return which[keep], pos[keep], coefs[keep], lo, hi

    def matrix(self, cuts: list[Row]) -> tuple[csr_array, NDArray[np.float64], NDArray[np.float64]]:
        """The base rows and ``cuts`` over the level columns: ``matrix`` of their compacted rows.

        The same COO entries in the same order as
        :func:`~scheduling_opt.lease._highs.matrix` over ``[compact(r) for
        r in rows + cuts]``, so HiGHS receives the same matrix.
        """
        from scipy.sparse import coo_array

        which, cols, vals, lo, hi = self.base
        if cuts:
            extra = self._entries(cuts)
            which = np.concatenate([which, extra[0] + len(lo)])
            cols = np.concatenate([cols, extra[1]])
            vals = np.concatenate([vals, extra[2]])
            lo = np.concatenate([lo, extra[3]])
            hi = np.concatenate([hi, extra[4]])
        a = coo_array((vals, (which, cols)), shape=(len(lo), len(self.cols))).tocsr()
        return a, lo, hi

    def expand(self, x: NDArray[np.float64]) -> NDArray[np.float64]:
        out = np.zeros(self.full.lay.size)
        out[self.cols] = np.round(x)
        return out

    def evident(
        self, a: csr_array, lo: NDArray[np.float64], hi: NDArray[np.float64]
    ) -> NDArray[np.float64] | None:
        """Every job at its first level, when that choice is provably the one optimum; else None.

        No choice earns more than every job's best reward, so when giving
        every job its first level keeps every row (checked exactly: 0/1
        values, integral coefficients) it is optimal; and it is the only
        optimal choice when each job's first level pays strictly more than
        its other levels and than nothing, by more than 1e-6 of the total (far
        above HiGHS' relative gap, 1e-9): any other choice then earns less,
        so HiGHS, which this replaces, would return this choice as well. On
        a lightly loaded cluster (the whole first day of P_MIX2) every lease
        term is so: O(nnz) instead of a MILP.
        """
        c = self.c
        x = np.zeros(len(c))
        total = 0.0
        gap = np.inf
        for group in self.groups:
            best = float(c[group[0]])
            rest = max((float(c[k]) for k in group[1:]), default=0.0)
            gap = min(gap, best - max(rest, 0.0))
            x[group[0]] = 1.0
            total += best
        if not self.groups or not gap > 1e-6 * max(1.0, abs(total)):
            return None
        r = a @ x
        if not (np.all(lo <= r) and np.all(r <= hi)):
            return None
        return x

    def lagrangian(self) -> tuple[float, NDArray[np.float64]]:
        """(L, rc): the bound and reduced costs of the LP's duals (computed once)."""
        if self.duals is None:
            from scipy.optimize import linprog
            from scipy.sparse import vstack

            a, lo, hi = self.matrix([])
            up, dn = np.isfinite(hi), np.isfinite(lo)
            a_ub = vstack([a[up], -a[dn]]).tocsr()
            b_ub = np.concatenate([hi[up], -lo[dn]])
            with stdout_to_stderr():
                res = linprog(
                    -self.c,
                    A_ub=a_ub,
                    b_ub=b_ub,
                    bounds=np.column_stack([np.zeros(len(self.c)), self.ub]),
                    method="highs",
                )
            if res.status != 0:
                self.duals = (float("inf"), np.zeros(len(self.c)))
            else:
                y = np.maximum(-np.asarray(res.ineqlin.marginals, dtype=float), 0.0)
                rc = self.c - a_ub.T @ y
                bound = float(b_ub @ y + np.maximum(rc, 0.0) @ self.ub)
                self.duals = (bound, np.asarray(rc, dtype=float))
        return self.duals

    def solve(
        self, cuts: list[Row], floor: float | None, limit: float
    ) -> tuple[Status, NDArray[np.float64] | None, float | None]:
        """(status, x over the full layout, bound) of the levels under ``cuts``.

        ``floor``: the previous bound; the fixed model is tried first and is
        enough when its optimum reaches ``floor``, or (rewards multiples of
        ``step``) ``floor - step``, since no choice lies strictly between.
        Otherwise the model without fixing decides.
        """
        start = time.perf_counter()
        a, lo, hi = self.matrix(cuts)
        if not cuts and floor is None:
            evident = self.evident(a, lo, hi)
            if evident is not None:
                return Status.OPTIMAL, self.expand(evident), float(self.c @ evident)
        integral = np.ones(len(self.cols), dtype=np.int_)
        zeros = np.zeros(len(self.cols))
        if floor is not None and self.fixing and self.c.any():
            if self.step is not None:
                # Every choice's reward is a multiple of step: so is the best.
                floor = self.step * np.floor(floor / self.step + 1e-9)
            bound, rc = self.lagrangian()
            slack = bound - floor + 1e-6 * max(1.0, abs(bound))
            lower = np.where((rc > slack) & (self.ub > 0), self.ub, 0.0)
            upper = np.where(rc < -slack, 0.0, self.ub)
            free = np.flatnonzero(lower < upper)
            shift = a @ lower
            if free.size == 0:  # everything fixed (HiGHS needs a column): check the rows
                eps = 1e-9 * max(1.0, float(np.abs(shift).max(initial=0.0)))
                fits = bool(np.all(lo - eps <= shift) and np.all(shift <= hi + eps))
                if fits:
                    status, y, found = Status.OPTIMAL, zeros[free], 0.0
                else:
                    status, y, found = Status.INFEASIBLE, None, None
            else:
                status, y, found = highs(
                    self.c[free],
                    a[:, free],
                    lo - shift,
                    hi - shift,
                    integral[free],
                    zeros[free],
                    upper[free],
                    limit,
                    presolve=False,
                    silence=True,
                )
            tol = 1e-6 * max(1.0, abs(floor))
            if status is Status.OPTIMAL and y is not None and found is not None:
                x = lower.copy()
                x[free] = np.round(y)
                value = float(self.c @ x)
                reach = floor - (self.step or 0.0)
                if value >= reach - tol:
                    # Every choice worth >= floor is in the fixed model, so its
                    # optimum is the optimum; below floor, none lies in between.
                    fixed = float(self.c @ lower)
                    return status, self.expand(x), min(floor, max(value, found + fixed))
            elif status is Status.TIME_LIMIT:
                return status, None, floor
            self.fixing = False
            limit -= time.perf_counter() - start
            if limit <= 0:
                return Status.TIME_LIMIT, None, floor
        status, y, found = highs(
            self.c, a, lo, hi, integral, zeros, self.ub, limit, presolve=False, silence=True
        )
        return status, None if y is None else self.expand(y), found


def granularity(c: NDArray[np.float64]) -> float | None:
    """The gcd of the rewards when all are integers (every choice's reward is a multiple)."""
    rounded = np.round(c)
    if not np.allclose(c, rounded, rtol=0.0, atol=1e-9) or not rounded.any():
        return None
    step = int(np.gcd.reduce(np.abs(rounded[rounded != 0]).astype(np.int64)))
    return float(step) if step > 0 else None
