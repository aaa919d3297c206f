"""The MCKP on OR-Tools CP-SAT (method ``exact-cpsat``), values scaled to integers.

CP-SAT needs integer coefficients: values are multiplied by the smallest power
of ten that makes them integral (:func:`value_scale`); when none up to 10^6
does, they are rounded and the answer is no longer proven optimal. Same model
as :mod:`scheduling_opt.mckp.exact` (Aryl §5.2); exponential in the worst case.
"""

from __future__ import annotations

import time

import numpy as np

from scheduling_opt import exact as backends
from scheduling_opt.errors import InvalidInstanceError
from scheduling_opt.mckp._backend import empty, from_backend
from scheduling_opt.mckp.model import FloatArray, Mckp, MckpDecision
from scheduling_opt.solution import Seed, Solution, Status, named, time_limit_of


def value_scale(values: FloatArray) -> tuple[int, bool]:
    """The power of ten that makes every value integral, and whether it is exact.

    When no power up to 10^6 makes all values integral (or the scaled sum
    would overflow 2^53), values are rounded at 10^6 and the answer can no
    longer be proven optimal.

    Parameters
    ----------
    values : numpy array of float

    Returns
    -------
    (int, bool)
        The scale and whether scaling loses nothing.

    Raises
    ------
    InvalidInstanceError
        A NaN or infinite value (no scale makes it an integer).

    Examples
    --------
    >>> import numpy as np
    >>> value_scale(np.array([1.5, 2.25]))
    (100, True)
    >>> value_scale(np.array([1 / 3]))
    (1000000, False)

    References
    ----------
    OR-Tools CP-SAT documentation (integer coefficients only).
    """
    values = np.asarray(values, dtype=float)
    if not np.all(np.isfinite(values)):
        raise InvalidInstanceError("values", "must be finite numbers")
    bound = float(np.abs(values).sum()) if len(values) else 0.0
    for digits in range(7):
        scale = 10**digits
        if bound * scale >= 2**53:
            break
        scaled = values * scale
        if np.all(scaled == np.round(scaled)):
            return scale, True
    return min(10**6, max(1, int(2**52 / max(bound, 1.0)))), False


@named("exact-cpsat")
def exact_cpsat(
    inp: Mckp, *, seed: Seed = None, time_limit: float | None = None
) -> Solution[MckpDecision]:
    """Exact model on CP-SAT (method ``exact-cpsat``).

    When scaling is lossy the status is ``feasible`` even if CP-SAT proves the
    scaled model optimal, and the bound is widened by the worst rounding
    (half a scaled unit per group, at most one item each).

    Parameters
    ----------
    inp : Mckp
    seed : int, numpy Generator or None
        Unused (CP-SAT runs with its fixed seed 0).
    time_limit : float, optional
        Seconds for CP-SAT (default :data:`~scheduling_opt.solution.DEFAULT_TIME_LIMIT`).

    Returns
    -------
    Solution[MckpDecision]
        With CP-SAT's best bound (unscaled) as ``bound``.

    Raises
    ------
    SolverError
        If the model is invalid.

    Examples
    --------
    >>> from scheduling_opt.mckp import Mckp
    >>> sol = exact_cpsat(Mckp.from_groups([[(3, 5.0)], [(2, 4.5)]], 5), time_limit=10)
    >>> sol.status.value, sol.objective, sol.decision.choice
    ('optimal', 9.5, (0, 0))

    References
    ----------
    Aryl (EuroSys '22) §5.2; OR-Tools CP-SAT.
    """
    from ortools.sat.python import cp_model

    start = time.perf_counter()
    limit = time_limit_of(time_limit)
    if len(inp.weights) == 0:
        return empty(inp, start)
    scale, exact_scale = value_scale(inp.values)
    model = cp_model.CpModel()
    w = inp.weights.tolist()
    coef = np.round(inp.values * scale).astype(np.int64).tolist()
    x = [model.new_bool_var(f"x{i}") for i in range(len(w))]
    model.add(sum(w[i] * x[i] for i in range(len(w))) <= inp.capacity)
    for g in range(inp.n_groups):
        a, b = int(inp.offsets[g]), int(inp.offsets[g + 1])
        if b > a:
            model.add_at_most_one(x[a:b])
    model.maximize(sum(coef[i] * x[i] for i in range(len(w))))
    out = backends.solve_cpsat(model, time_limit=limit, started=start)
    values = [float(out.solver.value(var)) for var in x] if out.has_solution else None
    status = out.status
    bound = None if out.bound is None else out.bound / scale
    message = ""
    if not exact_scale:
        if bound is not None:
            bound += 0.5 * inp.n_groups / scale
        if status is Status.OPTIMAL:
            status = Status.FEASIBLE
            message = f"values rounded at scale {scale}: optimal for the rounded model only"
    return from_backend(inp, status, values, bound, start, message)
