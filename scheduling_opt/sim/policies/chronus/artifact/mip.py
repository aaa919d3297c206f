"""The Chronus artifact's selection MILP solved by python-mip's CBC, the solver build it ran.

The model is the one :mod:`~scheduling_opt.sim.policies.chronus.artifact.cbc`
states (a row per guaranteed job and reward step, X per row and term, S per
row, the window and "past the window" equalities with their flat-index
wrap, per-term capacity, one step per job, the adaptive term-0 objective).
Only term 0 is scored, so the later terms of a row are the solver's free
choice among optimal layouts, and the artifact's admission and its frozen
jobs read them: which CBC build lays them out decides what the simulator
does next. PuLP's bundled CBC 2.10.3 binary lays them out otherwise than
the CBC library python-mip 1.15 ships (the artifact's solver: its README
asks for ``mip==1.15.0``), and on the full P_MIX2 trace that choice alone
moves the wDMR from +18% to within 9% of the artifact's
(docs/reproduction.md, "Parity with the authors' simulator").

So this module builds the same model through python-mip's own API, in the
artifact's order (``solver.py``, ``MIPSolver.job_selection``: X row-major
then S; the objective's S terms then its X terms; per row its window
equality and, when the window is short, its outside equality; per term its
capacity; per job its one-step equality), because CBC's choice among equal
optima follows the order it is given. It is written from the model's
statement, not copied.

python-mip is an optional dependency (``pip install
'scheduling-opt[parity]'``, Python < 3.12, as mip 1.15 requires): the base
library never imports it. By default CBC runs to proven optimality (the run
is deterministic); ``artifact_stops=True`` applies the artifact's stops
(5 s, and 1 s without a better incumbent, as ``MIPSolver.job_selection``
calls CBC), which depend on the machine's speed and load.

Cost: R W + R binaries (R rows, W terms) built in Python through python-mip,
O(R W); then CBC.
"""

from __future__ import annotations

import importlib
from collections.abc import Sequence
from typing import Any

from scheduling_opt.sim.policies.chronus.artifact.cbc import (
    Row,
    Selection,
    answer,
    check_rows,
    job_groups,
    outside,
)

__all__ = ["MIP_VERSION", "mip_available", "require_mip", "select"]

#: The python-mip release the artifact's README pins (its CBC build is what matters).
MIP_VERSION = "1.15.0"


def _mip() -> Any:
    """python-mip, or an ImportError naming the extra that installs it."""
    try:
        return importlib.import_module("mip")
    except ImportError as exc:  # pragma: no cover - depends on the environment
        raise ImportError(
            "selection='artifact-mip' needs python-mip "
            f"{MIP_VERSION} (pip install 'scheduling-opt[parity]', Python < 3.12)"
        ) from exc


def require_mip() -> None:
    """Raise the ImportError naming the ``parity`` extra when python-mip is missing.

    Examples
    --------
    >>> require_mip() if mip_available() else None
    """
    _mip()


def mip_available() -> bool:
    """Whether python-mip can be imported here (the ``parity`` extra is installed).

    Examples
    --------
    >>> isinstance(mip_available(), bool)
    True
    """
    try:
        _mip()
    except ImportError:
        return False
    return True


def select(
    rows: Sequence[Row],
    free: Sequence[int],
    *,
    minimize_first: bool,
    max_nodes: int | None = None,
    artifact_stops: bool = False,
) -> Selection | None:
    """Solve the artifact's selection MILP with python-mip's CBC.

    Parameters
    ----------
    rows : sequence of Row
        The rows in the artifact's order (by job, each job's steps from 0).
    free : sequence of int
        GPUs per term left by the frozen jobs, from the current term; at
        least as long as the largest window.
    minimize_first : bool
        Subtract the first term's GPU use instead of adding it.
    max_nodes : int or None
        CBC's branch-and-bound node limit (deterministic); None: no limit.
    artifact_stops : bool
        Stop as the artifact does (5 s, or 1 s without a better incumbent):
        not deterministic.

    Returns
    -------
    Selection or None
        None when CBC finds no feasible selection; otherwise every row's
        job's step and held terms (from 0 = the current term) and whether
        CBC proved it optimal.

    Raises
    ------
    ValueError
        When a row or ``free`` is malformed (as
        :func:`~scheduling_opt.sim.policies.chronus.artifact.cbc.select`).
    ImportError
        When python-mip is not installed.

    Examples
    --------
    >>> rows = [Row("a", 2, 1, 2, 10.0, 0), Row("b", 2, 1, 1, 10.0, 0)]
    >>> sel = select(rows, [2, 2], minimize_first=False)  # doctest: +SKIP
    >>> sel.terms, sel.optimal  # doctest: +SKIP
    ({'a': (1,), 'b': (0,)}, True)
    """
    width = check_rows(rows, free)
    if max(free[:width]) <= 0:
        return None  # every row holds >= 1 term of >= 1 GPU: proven infeasible
    mip = _mip()
    n = len(rows)
    model = mip.Model(solver_name=mip.CBC)
    model.verbose = 0
    x = [model.add_var(var_type=mip.BINARY) for _ in range(n * width)]
    s = [model.add_var(var_type=mip.BINARY) for _ in range(n)]
    scale = 1.0 * max(free)
    sign = -1.0 if minimize_first else 1.0
    objective = [s[i] * r.value for i, r in enumerate(rows)]
    objective += [x[i * width] * (sign * r.gpus / scale) for i, r in enumerate(rows)]
    model.objective = mip.maximize(mip.xsum(objective))
    for i, r in enumerate(rows):
        inside = range(i * width, i * width + max(r.window, 0))
        model += mip.xsum(x[f] for f in inside) == s[i] * r.need
        if r.window < width:
            model += mip.xsum(x[f] for f in outside(i, r.window, width, n)) == 0
    for k in range(width):
        model += mip.xsum(x[i * width + k] * r.gpus for i, r in enumerate(rows)) <= free[k]
    for group in job_groups(rows):
        model += mip.xsum(s[i] for i in group) == 1
    if artifact_stops:
        status = model.optimize(max_seconds=5, max_seconds_same_incumbent=1)
    elif max_nodes is not None:
        status = model.optimize(max_nodes=max_nodes)
    else:
        status = model.optimize()
    if status not in (mip.OptimizationStatus.OPTIMAL, mip.OptimizationStatus.FEASIBLE):
        return None
    values = [v.x for v in x]
    if any(v is None for v in values):
        return None
    chosen = [(v.x or 0.0) >= 0.5 for v in s]
    held = [tuple(k for k in range(width) if values[i * width + k] >= 0.5) for i in range(n)]
    optimal = status == mip.OptimizationStatus.OPTIMAL
    return answer(rows, free, chosen, held, minimize_first, optimal=optimal)
