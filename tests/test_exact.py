"""The exact-backend runners report what they proved, and nothing more.

Each runner must say ``optimal`` on a model it solves and ``time_limit`` (not
``optimal``) on a model it cannot prove within a tiny limit. The hard model
is a market-split instance (Cornuéjols and Dawande 1998): m equality rows
with random coefficients in [0, 99] over 10(m - 1) binaries; minimizing the
total slack is notoriously hard for branch and bound, so no solver proves it
in a fraction of a second.
"""

from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import pytest
from scipy.optimize import LinearConstraint

from scheduling_opt.errors import SolverError
from scheduling_opt.exact import solve_cpsat, solve_milp, solve_pulp
from scheduling_opt.solution import Status

M, N = 6, 50
_rng = np.random.default_rng(1)
A = _rng.integers(0, 100, size=(M, N))
B = A.sum(axis=1) // 2


def _market_split_milp(time_limit: float) -> tuple[Status, float | None]:
    # x (N binaries), s+ (M), s- (M): A x + s+ - s- = b, minimize sum s.
    c = np.concatenate([np.zeros(N), np.ones(2 * M)])
    a = np.hstack([A, np.eye(M), -np.eye(M)])
    integrality = np.concatenate([np.ones(N), np.zeros(2 * M)]).astype(int)
    ub = np.concatenate([np.ones(N), np.full(2 * M, np.inf)])
    from scipy.optimize import Bounds

    out = solve_milp(
        c,
        constraints=[LinearConstraint(a, B, B)],
        integrality=integrality,
        bounds=Bounds(0, ub),
        time_limit=time_limit,
    )
    return out.status, out.objective


def test_milp_optimal_on_small_knapsack() -> None:
    # max 5a + 4b + 3c, 2a + 3b + c <= 5, binaries: brute force says a + c = 8 ... or a + b = 9.
    values = np.array([5.0, 4.0, 3.0])
    weights = np.array([[2.0, 3.0, 1.0]])
    best = max(
        sum(v for v, on in zip(values, bits, strict=False) if on)
        for bits in np.ndindex(2, 2, 2)
        if sum(w for w, on in zip(weights[0], bits, strict=False) if on) <= 5
    )
    out = solve_milp(
        values,
        constraints=[LinearConstraint(weights, -np.inf, 5)],
        integrality=np.ones(3, dtype=int),
        bounds=(0, 1),
        time_limit=10,
        maximize=True,
    )
    assert out.status == Status.OPTIMAL
    assert out.objective == pytest.approx(best)


def test_milp_infeasible() -> None:
    out = solve_milp(
        np.ones(1),
        constraints=[LinearConstraint(np.ones((1, 1)), 2, 3)],
        integrality=np.ones(1, dtype=int),
        bounds=(0, 1),
        time_limit=10,
    )
    assert out.status == Status.INFEASIBLE
    assert out.x is None


def test_milp_time_limit_is_honest() -> None:
    status, _objective = _market_split_milp(0.2)
    assert status == Status.TIME_LIMIT


def test_milp_node_limit_stops_with_the_incumbent() -> None:
    """A strongly correlated knapsack (40 items, values = weights + 10, half the weight).

    Unbounded, HiGHS proves 1,411. With one node it stops before the proof:
    HiGHS' status 16 ("Solution limit reached"), which scipy 1.17 reports as
    "not recognized", must read as time_limit with the incumbent, not an error.
    """
    rng = np.random.default_rng(3)
    w = rng.integers(20, 100, 40).astype(float)
    row = LinearConstraint(w.reshape(1, -1), 0, w.sum() / 2 + 0.5)
    kwargs = {"integrality": np.ones(40), "bounds": (0, 1), "time_limit": 30.0, "maximize": True}
    full = solve_milp(w + 10, constraints=[row], **kwargs)  # type: ignore[arg-type]
    cut = solve_milp(w + 10, constraints=[row], node_limit=1, **kwargs)  # type: ignore[arg-type]
    assert full.status == Status.OPTIMAL
    assert full.objective == pytest.approx(1411.0)
    assert cut.status == Status.TIME_LIMIT
    assert cut.x is not None
    assert cut.objective is not None
    assert cut.objective <= full.objective + 1e-6


def _market_split_cpsat() -> object:
    from ortools.sat.python import cp_model

    model = cp_model.CpModel()
    x = [model.new_bool_var(f"x{j}") for j in range(N)]
    slack = []
    for i in range(M):
        sp = model.new_int_var(0, int(A[i].sum()), f"sp{i}")
        sm = model.new_int_var(0, int(A[i].sum()), f"sm{i}")
        model.add(sum(int(A[i, j]) * x[j] for j in range(N)) + sp - sm == int(B[i]))
        slack += [sp, sm]
    model.minimize(sum(slack))
    return model


def test_cpsat_optimal_and_time_limit() -> None:
    from ortools.sat.python import cp_model

    small = cp_model.CpModel()
    a = small.new_int_var(0, 10, "a")
    b = small.new_int_var(0, 10, "b")
    small.add(a + 2 * b <= 14)
    small.add(3 * a - b >= 0)
    small.maximize(3 * a + 4 * b)
    out = solve_cpsat(small, time_limit=10, num_workers=2)
    # Enumerate the 121 points: the optimum of 3a + 4b.
    best = max(
        3 * i + 4 * j for i in range(11) for j in range(11) if i + 2 * j <= 14 and 3 * i - j >= 0
    )
    assert out.status == Status.OPTIMAL
    assert out.objective == best

    hard = _market_split_cpsat()
    out = solve_cpsat(hard, time_limit=0.2)  # type: ignore[arg-type]
    assert out.status == Status.TIME_LIMIT


def test_cpsat_infeasible_and_bad_arguments() -> None:
    from ortools.sat.python import cp_model

    model = cp_model.CpModel()
    a = model.new_int_var(0, 3, "a")
    model.add(a >= 5)
    assert solve_cpsat(model, time_limit=5).status == Status.INFEASIBLE
    with pytest.raises(SolverError):
        solve_cpsat(model, time_limit=0)
    with pytest.raises(SolverError):
        solve_cpsat(model, time_limit=1, num_workers=0)
    with pytest.raises(SolverError):
        solve_cpsat(model, time_limit=1, work_limit=0)


def test_cpsat_work_limit_stops_the_search_whatever_the_clock() -> None:
    # The market-split model is not proven in 0.2 s (above); a budget of
    # 1e-3 units of CP-SAT's deterministic time stops it long before its 60 s.
    out = solve_cpsat(_market_split_cpsat(), time_limit=60, work_limit=1e-3)  # type: ignore[arg-type]
    assert out.status == Status.TIME_LIMIT
    assert out.seconds < 30


def test_cpsat_is_deterministic_by_default() -> None:
    # Interleaved search: the same stopping point and incumbent on every run
    # of an unprovable model under a work budget (racing, deterministic=False:
    # 3 different incumbents, 21-35, in 5 runs; interleaved: 43 every time).
    runs = [
        solve_cpsat(_market_split_cpsat(), time_limit=60, work_limit=0.05, seed=7)  # type: ignore[arg-type]
        for _ in range(3)
    ]
    assert len({(r.status, r.objective, r.bound) for r in runs}) == 1


def _market_split_pulp() -> object:
    import pulp

    prob = pulp.LpProblem("market_split", pulp.LpMinimize)
    x = [pulp.LpVariable(f"x{j}", cat="Binary") for j in range(N)]
    sp = [pulp.LpVariable(f"sp{i}", lowBound=0) for i in range(M)]
    sm = [pulp.LpVariable(f"sm{i}", lowBound=0) for i in range(M)]
    prob += pulp.lpSum(sp) + pulp.lpSum(sm)
    for i in range(M):
        prob += pulp.lpSum(int(A[i, j]) * x[j] for j in range(N)) + sp[i] - sm[i] == int(B[i])
    return prob


def test_pulp_optimal_and_time_limit() -> None:
    import pulp

    prob = pulp.LpProblem("k", pulp.LpMaximize)
    x = [pulp.LpVariable(f"x{i}", cat="Binary") for i in range(3)]
    prob += 5 * x[0] + 4 * x[1] + 3 * x[2]
    prob += 2 * x[0] + 3 * x[1] + x[2] <= 5
    out = solve_pulp(prob, time_limit=10)
    assert out.status == Status.OPTIMAL
    assert out.objective == pytest.approx(9.0)

    out = solve_pulp(_market_split_pulp(), time_limit=0.5)
    # PuLP's LpStatus says "Optimal" here; the runner must not.
    assert out.status == Status.TIME_LIMIT


def test_pulp_infeasible() -> None:
    import pulp

    prob = pulp.LpProblem("inf", pulp.LpMinimize)
    x = pulp.LpVariable("x", 0, 1, cat="Integer")
    prob += x
    prob += x >= 2
    assert solve_pulp(prob, time_limit=5).status == Status.INFEASIBLE


def test_pulp_integer_infeasible_with_a_feasible_lp_relaxation() -> None:
    # 2x + 2y = 3 has fractional solutions but no integer one: CBC proves it
    # in branch and bound, which PuLP reports as sol_status NoSolutionFound.
    import pulp

    prob = pulp.LpProblem("int_inf", pulp.LpMaximize)
    x = pulp.LpVariable("x", 0, 5, cat="Integer")
    y = pulp.LpVariable("y", 0, 5, cat="Integer")
    prob += x + y
    prob += 2 * x + 2 * y == 3
    out = solve_pulp(prob, time_limit=10)
    assert out.status == Status.INFEASIBLE
    assert not out.has_solution
    assert out.objective is None


def test_solver_chatter_never_reaches_stdout() -> None:
    # A child process runs a MILP and prints a marker; its stdout must hold the marker only.
    code = (
        "import numpy as np\n"
        "from scipy.optimize import LinearConstraint\n"
        "from scheduling_opt.exact import solve_milp\n"
        "rng = np.random.default_rng(3)\n"
        "a = rng.integers(1, 50, size=(3, 40)).astype(float)\n"
        "solve_milp(rng.random(40), constraints=[LinearConstraint(a, 100, 300)], integrality=np.ones(40, dtype=int), bounds=(0, 3), time_limit=2, maximize=True)\n"
        "print('MARKER')\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        timeout=120,
        env=dict(os.environ),
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout == "MARKER\n"
