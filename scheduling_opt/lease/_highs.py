"""HiGHS for the lease models: one runner, presolve off for proofs, stdout kept clean.

:func:`solve_model` solves a :class:`~scheduling_opt.lease.formulation.Model`
(or its relaxation) through ``scipy.optimize.milp`` and maps the status as
:func:`scheduling_opt.exact.solve_milp` does; :func:`highs` is the same over
a matrix in hand (the levels stage fixes columns first). HiGHS prints a debug
line to file descriptor 1 on some of these models: :func:`silenced` sends it
to the null device. Used by :mod:`~scheduling_opt.lease.exact` and its two
stages (Chronus §3.3.4). Cost: HiGHS' own (NP-hard for the MILP).
"""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING

import numpy as np
from numpy.typing import NDArray

from scheduling_opt.errors import SolverError
from scheduling_opt.exact import MIP_REL_GAP, stdout_to_stderr
from scheduling_opt.lease.formulation import Model, Row
from scheduling_opt.solution import Status

if TYPE_CHECKING:
    from scipy.sparse import csr_array


def solve_model(
    model: Model,
    time_limit: float,
    integral: NDArray[np.int_],
    lower: NDArray[np.float64] | None = None,
    *,
    presolve: bool = False,
) -> tuple[Status, NDArray[np.float64] | None, float | None]:
    """HiGHS through scipy: (status, x, bound in the maximization sense).

    ``integral`` marks the integer columns (all zero: an LP, whose optimum is
    the bound); ``lower`` overrides the lower bounds (0) to fix columns.
    Presolve stays off for every proof: :func:`scheduling_opt.exact.solve_milp`
    keeps HiGHS' presolve on, and on this model (scipy 1.17.1's HiGHS)
    presolve once cut off the optimum: on ``generate("c1-j8", 424)`` it
    proved 500 "optimal" while CBC, CP-SAT and HiGHS without presolve all
    find 520. Without presolve HiGHS agreed with the independent model on
    every instance tried (docs/lease.md). Only the packing stage turns it on:
    its answer is verified independently (:func:`packs`) and a wrong
    "infeasible" merely sends the solve to the whole MILP. The statuses are
    mapped as ``solve_milp`` maps them.
    """
    a, lo, hi = matrix(model.rows, model.lay.size)
    low = np.zeros(model.lay.size) if lower is None else lower
    return highs(
        model.c,
        a,
        lo,
        hi,
        integral,
        low,
        model.ub,
        time_limit,
        presolve=presolve,
        silence=lower is not None,
    )


def matrix(
    rows: Sequence[Row], size: int
) -> tuple[csr_array, NDArray[np.float64], NDArray[np.float64]]:
    """The rows as a sparse matrix (``size`` columns) and their bounds."""
    from scipy.sparse import coo_array

    r_idx = [r for r, (cols, _, _, _) in enumerate(rows) for _ in cols]
    c_idx = [col for cols, _, _, _ in rows for col in cols]
    vals = [v for _, coefs, _, _ in rows for v in coefs]
    a = coo_array((vals, (r_idx, c_idx)), shape=(len(rows), size)).tocsr()
    lo = np.array([row[2] for row in rows], dtype=float)
    hi = np.array([row[3] for row in rows], dtype=float)
    return a, lo, hi


def highs(
    c: NDArray[np.float64],
    a: csr_array,
    lo: NDArray[np.float64],
    hi: NDArray[np.float64],
    integral: NDArray[np.int_],
    lower: NDArray[np.float64],
    upper: NDArray[np.float64],
    time_limit: float,
    *,
    presolve: bool,
    silence: bool,
) -> tuple[Status, NDArray[np.float64] | None, float | None]:
    """Maximize c x over lo <= a x <= hi, lower <= x <= upper on HiGHS (see :func:`solve_model`)."""
    from scipy.optimize import Bounds, LinearConstraint, milp

    options = {
        "time_limit": time_limit,
        "disp": False,
        "presolve": presolve,
        "mip_rel_gap": MIP_REL_GAP,
    }
    relax = not integral.any()
    with silenced() if silence else stdout_to_stderr():
        res = milp(
            -c,
            constraints=[LinearConstraint(a, lo, hi)] if a.shape[0] else [],
            integrality=integral,
            bounds=Bounds(lower, upper),
            options=options,
        )
    if res.status == 2:
        return Status.INFEASIBLE, None, None
    if res.status not in (0, 1):
        raise SolverError(f"HiGHS failed: {res.message}")
    status = Status.OPTIMAL if res.status == 0 else Status.TIME_LIMIT
    x = None if res.x is None else np.asarray(res.x, dtype=float)
    raw = res.fun if relax else getattr(res, "mip_dual_bound", None)
    bound = None if raw is None or not np.isfinite(raw) else -float(raw)
    return status, x, bound


@contextlib.contextmanager
def silenced() -> Iterator[None]:
    """File descriptor 1 to the null device for the duration.

    HiGHS (scipy 1.17.1) prints a debug line to stdout
    (``HighsMipSolverData::transformNewIntegerFeasibleSolution``) on models
    with fixed columns and presolve off: the packing runs and the levels
    re-solves (after cuts), which print nothing else of use.
    """
    try:
        sys.stdout.flush()
        saved = os.dup(1)
    except (OSError, ValueError):  # no usable fd 1 (embedded interpreters)
        yield
        return
    null = os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(null, 1)
        yield
    finally:
        os.dup2(saved, 1)
        os.close(saved)
        os.close(null)
