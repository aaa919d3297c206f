"""What the exact baselines share: running HiGHS, CP-SAT and CBC honestly.

Three runners, one per backend, each returning an outcome with a
:class:`~scheduling_opt.solution.Status` that says only what the solver proved:

- :func:`solve_milp`: HiGHS through ``scipy.optimize.milp`` (ships with
  scipy). Never ``highspy``: it cannot share a process with ortools, both
  shipping their own libhighs. HiGHS sometimes writes debug lines straight to
  file descriptor 1; the run redirects fd 1 to stderr so a caller's stdout
  (and ``--json``) stays clean.
- :func:`solve_cpsat`: OR-Tools CP-SAT, always with ``num_workers`` set
  (default 8: with one worker CP-SAT failed to prove in 120 s what its
  portfolio proves in 0.3 s on this 2-core machine) and, by default,
  deterministic (``interleave_search``: same model and seed, same answer).
  ``FEASIBLE`` means stopped before a proof and maps to ``time_limit``.
- :func:`solve_pulp`: PuLP with its bundled CBC. Under a time limit PuLP's
  ``LpStatus`` says "Optimal" for a merely feasible answer; the runner reads
  ``sol_status`` instead.

ortools and pulp are imported inside the functions that need them so that
``import scheduling_opt`` stays fast.
"""

from __future__ import annotations

import contextlib
import os
import sys
import time
import warnings
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import NDArray

from scheduling_opt.errors import SolverError
from scheduling_opt.solution import Status

if TYPE_CHECKING:
    from ortools.sat.python import cp_model

#: Tasks CP-SAT's deterministic (interleaved) search runs between two
#: synchronizations. OR-Tools' default (3 x workers = 24) was up to 67x
#: slower than the racing portfolio on the batch-size, placement, mckp and
#: lease models (g64: 9 s vs 0.3 s of CPU); one task per batch was the fastest
#: setting measured (1, 2, 4, 8, 16, 24): 0.5-2x racing's CPU on most
#: models, up to 26x on a few (docs/benchmarks.md, "CP-SAT determinism").
INTERLEAVE_BATCH_SIZE = 1

#: Relative MIP gap under which HiGHS may call a solution optimal. HiGHS'
#: default (1e-4) would call a 0.01%-suboptimal answer "optimal" on real-valued
#: objectives; this keeps "optimal" honest up to floating-point tolerance.
MIP_REL_GAP = 1e-9


@contextlib.contextmanager
def stdout_to_stderr() -> Iterator[None]:
    """Send file descriptor 1 to stderr for the duration (native solver chatter)."""
    try:
        sys.stdout.flush()
        saved = os.dup(1)
    except (OSError, ValueError):  # no usable fd 1 (embedded interpreters)
        yield
        return
    try:
        os.dup2(2, 1)
        yield
    finally:
        with contextlib.suppress(OSError, ValueError):
            sys.stdout.flush()
        os.dup2(saved, 1)
        os.close(saved)


def _check_limit(time_limit: float) -> float:
    if not time_limit > 0:
        raise SolverError(f"time_limit must be > 0 seconds, got {time_limit!r}")
    return float(time_limit)


def _left(limit: float, started: float | None) -> float:
    """Seconds left of ``limit`` for a run whose method started at ``started``.

    A method's time limit covers building its model too (a PuLP
    model of 32,000 binaries takes seconds to build and write); 0 when
    nothing is left, and the runner then returns ``time_limit`` without
    starting the backend.
    """
    if started is None:
        return limit
    return max(limit - (time.perf_counter() - started), 0.0)


# --------------------------------------------------------------------------- HiGHS


@dataclass(frozen=True, slots=True)
class MilpOutcome:
    """A HiGHS run: status, the solution vector (None if none), objective, bound."""

    status: Status
    x: NDArray[np.float64] | None
    objective: float | None
    bound: float | None
    seconds: float


def solve_milp(
    c: NDArray[np.float64],
    *,
    constraints: Sequence[Any] = (),
    integrality: NDArray[np.int_] | None = None,
    bounds: Any = None,
    time_limit: float,
    maximize: bool = False,
    mip_rel_gap: float = MIP_REL_GAP,
    started: float | None = None,
    presolve: bool = True,
    node_limit: int | None = None,
) -> MilpOutcome:
    """Minimize (or maximize) ``c @ x`` with ``scipy.optimize.milp`` (HiGHS).

    ``constraints`` are ``scipy.optimize.LinearConstraint`` objects. The
    objective returned is in the caller's sense (maximized value when
    ``maximize``). ``started``: the ``time.perf_counter()`` at which the
    calling method started; HiGHS then gets what is left of ``time_limit``
    (``time_limit`` status without a solution when nothing is).
    ``presolve``: HiGHS' presolve, which does not look at its clock in every
    phase (its probing once took 0.8 s on a 264-binary knapsack).
    ``node_limit``: stop after that many branch-and-bound nodes (status
    ``time_limit`` with the incumbent, if any): a budget that, unlike the
    clock, does not depend on the machine's load.
    """
    from scipy.optimize import milp

    limit = _left(_check_limit(time_limit), started)
    if limit <= 0:
        return MilpOutcome(Status.TIME_LIMIT, None, None, None, 0.0)
    cost = -np.asarray(c, dtype=float) if maximize else np.asarray(c, dtype=float)
    options: dict[str, Any] = {
        "time_limit": limit,
        "disp": False,
        "mip_rel_gap": mip_rel_gap,
        "presolve": presolve,
    }
    if node_limit is not None:
        options["node_limit"] = node_limit
    start = time.perf_counter()
    with stdout_to_stderr():
        res = milp(
            cost,
            constraints=list(constraints),
            integrality=integrality,
            bounds=bounds,
            options=options,
        )
    seconds = time.perf_counter() - start
    sign = -1.0 if maximize else 1.0
    x = None if res.x is None else np.asarray(res.x, dtype=float)
    objective = None if res.fun is None or x is None else sign * float(res.fun)
    raw_bound = getattr(res, "mip_dual_bound", None)
    bound = None if raw_bound is None or not np.isfinite(raw_bound) else sign * float(raw_bound)
    if res.status == 0:
        status = Status.OPTIMAL
    elif res.status == 1 or (node_limit is not None and _node_limited(res)):
        status = Status.TIME_LIMIT
    elif res.status == 2:
        status, x, objective = Status.INFEASIBLE, None, None
    else:
        raise SolverError(f"HiGHS failed: {res.message}")
    return MilpOutcome(status, x, objective, bound, seconds)


def _node_limited(res: Any) -> bool:
    """Whether HiGHS stopped at ``node_limit``: scipy 1.17 reports HiGHS' status 16
    ("Solution limit reached", its node limit) as status 4, "not recognized"."""
    return res.status == 4 and "Status 16" in str(getattr(res, "message", ""))


# --------------------------------------------------------------------------- CP-SAT


@dataclass(frozen=True, slots=True)
class CpSatOutcome:
    """A CP-SAT run. ``solver`` reads variable values when a solution exists."""

    status: Status
    solver: Any
    objective: float | None
    bound: float | None
    seconds: float
    has_solution: bool
    #: CP-SAT's deterministic time spent (its ``deterministic_time``): compared
    #: with ``work_limit``, it tells a stop by the work budget from one by the clock.
    work: float = 0.0


def solve_cpsat(
    model: cp_model.CpModel,
    *,
    time_limit: float,
    num_workers: int = 8,
    seed: int = 0,
    started: float | None = None,
    deterministic: bool = True,
    work_limit: float | None = None,
    linearization_level: int | None = None,
) -> CpSatOutcome:
    """Solve a CP-SAT model with a time limit and an explicit worker count.

    ``OPTIMAL`` -> optimal; ``FEASIBLE`` (stopped with an incumbent) and
    ``UNKNOWN`` (stopped without one) -> time_limit; ``INFEASIBLE`` ->
    infeasible; ``MODEL_INVALID`` raises :class:`SolverError`.
    ``started``: as for :func:`solve_milp` (the model's building counts).

    ``deterministic`` (the default): with more than one worker, CP-SAT's
    ``interleave_search`` runs the portfolio's subsolvers in deterministic
    batches of :data:`INTERLEAVE_BATCH_SIZE` tasks and synchronizes them
    between batches, so the same model and seed give the same solution on
    every run, whatever the thread timing, unless the time limit stops the
    search (the racing portfolio returned different optima of one
    model on runs with one seed). One worker is deterministic by itself and
    is left as is. False races the workers (OR-Tools' default): up to a few
    times faster on some models, any optimum.

    ``work_limit``: CP-SAT's ``max_deterministic_time`` (its own count of
    work, 1.4-3.3 CPU seconds per unit on the batch-size models here), a budget
    that, unlike ``time_limit``, stops a deterministic search at the same
    point however loaded the machine is. Stopped by it: ``time_limit``.
    ``CpSatOutcome.work`` is the deterministic time spent: a run stopped
    before a proof with ``work`` below ``work_limit`` was stopped by the clock.

    ``linearization_level``: CP-SAT's ``linearization_level`` (None: its
    default, 1); 2 adds the linear relaxation of every constraint, which
    one worker needs to prove the batch-size pattern model quickly
    (:mod:`scheduling_opt.batch_size.exact_patterns`).
    """
    from ortools.sat.python import cp_model

    limit = _left(_check_limit(time_limit), started)
    if num_workers < 1:
        raise SolverError(f"num_workers must be >= 1, got {num_workers}")
    solver = cp_model.CpSolver()
    if limit <= 0:
        return CpSatOutcome(Status.TIME_LIMIT, solver, None, None, 0.0, False)
    solver.parameters.max_time_in_seconds = limit
    solver.parameters.num_workers = num_workers
    solver.parameters.random_seed = seed
    if work_limit is not None:
        solver.parameters.max_deterministic_time = _check_limit(work_limit)
    if linearization_level is not None:
        solver.parameters.linearization_level = linearization_level
    if deterministic and num_workers > 1:
        solver.parameters.interleave_search = True
        solver.parameters.interleave_batch_size = INTERLEAVE_BATCH_SIZE
    solver.parameters.log_search_progress = False
    start = time.perf_counter()
    with stdout_to_stderr():
        code = solver.solve(model)
    seconds = time.perf_counter() - start
    if code == cp_model.MODEL_INVALID:
        raise SolverError(f"CP-SAT model invalid: {model.validate()}")
    has_objective = model.has_objective()
    if code == cp_model.OPTIMAL:
        status = Status.OPTIMAL
    elif code == cp_model.INFEASIBLE:
        status = Status.INFEASIBLE
    else:
        status = Status.TIME_LIMIT
    has_solution = code in (cp_model.OPTIMAL, cp_model.FEASIBLE)
    objective = float(solver.objective_value) if has_solution and has_objective else None
    bound = float(solver.best_objective_bound) if has_objective and has_solution else None
    work = float(solver.deterministic_time)
    return CpSatOutcome(status, solver, objective, bound, seconds, has_solution, work)


# --------------------------------------------------------------------------- PuLP / CBC


class _NoTimeLeftError(Exception):
    """The time limit ran out while PuLP wrote the model (caught by :func:`solve_pulp`)."""


def _after_writing(problem: Any, cmd: Any, deadline: float) -> None:
    """Give CBC what is left of the limit once PuLP has written the model.

    PuLP writes the model to an MPS file before it reads ``cmd.timeLimit``
    for CBC's command line; on 32,000 binaries the writing alone takes
    seconds on a loaded machine, outside CBC's clock. Shadowing this
    problem's ``writeMPS`` (removed after the solve) moves CBC's limit to the
    deadline. A CBC stopped by that limit still ends at least ``limit``
    after ``solve_pulp`` started, so the infeasibility rule stays sound.
    """
    write = problem.writeMPS

    def write_then_set_limit(*args: Any, **kwargs: Any) -> Any:
        out = write(*args, **kwargs)
        left = deadline - time.perf_counter()
        if left <= 0:
            # No time left for CBC (which spends a while reading the file
            # before its clock can stop it): do not start it.
            with contextlib.suppress(OSError, IndexError, TypeError):
                os.remove(args[0])
            raise _NoTimeLeftError
        cmd.timeLimit = max(left, 0.01)
        return out

    problem.writeMPS = write_then_set_limit


@dataclass(frozen=True, slots=True)
class PulpOutcome:
    """A PuLP/CBC run; variable values are read from the problem's variables."""

    status: Status
    objective: float | None
    seconds: float
    has_solution: bool


def solve_pulp(
    problem: Any, *, time_limit: float, warm_start: bool = False, started: float | None = None
) -> PulpOutcome:
    """Solve a ``pulp.LpProblem`` with the bundled CBC under a time limit.

    Maps ``problem.sol_status``: ``LpSolutionOptimal`` -> optimal,
    ``LpSolutionIntegerFeasible`` / ``LpSolutionNoSolutionFound`` ->
    time_limit, ``LpSolutionInfeasible`` -> infeasible. ``problem.status``
    alone is not trusted: it says "Optimal" for a time-limited feasible
    answer. When CBC proves that the LP relaxation is feasible but no integer
    point is, PuLP reports ``sol_status`` NoSolutionFound with ``status``
    Infeasible ("Integer infeasible").

    An infeasibility claim is read as a proof only if CBC finished before its
    time limit: CBC 2.10 interrupted by the limit inside its preprocessing
    writes "Pre-processing says infeasible" and "Integer infeasible" for
    problems that have solutions (mckp n2000-c10000 at 0.5 s).
    CBC counts wall time from its own start, later than this function's, and
    is given at most what is left of its share of the limit once the model
    is written; so a run that ends here before that share is used up cannot
    have been stopped by the limit. A longer one reports ``time_limit`` with
    no incumbent instead.

    ``started``: as for :func:`solve_milp`. PuLP writes the model to an MPS
    file and CBC reads it back outside CBC's clock, so a large model may end
    later than its limit by that much (benchmarks/time_limit_overshoot.py).
    """
    import pulp

    limit = _left(_check_limit(time_limit), started)
    if limit <= 0:
        return PulpOutcome(Status.TIME_LIMIT, None, 0.0, False)
    start = time.perf_counter()
    with stdout_to_stderr(), warnings.catch_warnings():
        # PuLP 3 deprecates its bundled-CBC class in favour of a separately
        # installed CBC; the bundled one is what a plain `pip install` has.
        warnings.simplefilter("ignore", DeprecationWarning)
        cmd = pulp.PULP_CBC_CMD(msg=False, timeLimit=limit, warmStart=warm_start, gapRel=0.0)
        # Reading CBC's solution back costs about 5 us per variable after CBC stops.
        cbc_limit = limit - min(0.25 * limit, 5e-6 * len(problem.variables()))
        _after_writing(problem, cmd, start + cbc_limit)
        try:
            problem.solve(cmd)
        except _NoTimeLeftError:
            return PulpOutcome(Status.TIME_LIMIT, None, time.perf_counter() - start, False)
        except pulp.PulpSolverError as e:
            raise SolverError(f"CBC failed: {e}") from e
        finally:
            vars(problem).pop("writeMPS", None)
    seconds = time.perf_counter() - start
    sol = problem.sol_status
    if sol == pulp.LpSolutionOptimal:
        status = Status.OPTIMAL
    elif sol == pulp.LpSolutionNoSolutionFound and problem.status == pulp.LpStatusInfeasible:
        status = Status.INFEASIBLE
    elif sol in (pulp.LpSolutionIntegerFeasible, pulp.LpSolutionNoSolutionFound):
        status = Status.TIME_LIMIT
    elif sol == pulp.LpSolutionInfeasible:
        status = Status.INFEASIBLE
    else:
        raise SolverError(f"CBC returned an unexpected solution status {sol!r}")
    if status is Status.INFEASIBLE and seconds >= cbc_limit:
        status = Status.TIME_LIMIT  # the limit may have cut CBC's proof short
    has_solution = sol in (pulp.LpSolutionOptimal, pulp.LpSolutionIntegerFeasible)
    value = pulp.value(problem.objective) if has_solution else None
    objective = None if value is None else float(value)
    return PulpOutcome(status, objective, seconds, has_solution)
