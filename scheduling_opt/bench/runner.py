"""Tasks and rows: run every selected method on one instance and verify each answer.

A :class:`Task` names one instance (a problem's seeded generator at one size
and seed, or a curated file); :func:`run_task` parses it once, runs every
selected method through the registry (``Method.run(inp, seed=, time_limit=)``),
verifies each :class:`~scheduling_opt.solution.Solution` with the problem's
independent checker, and compares it with the best optimum an exact method
proved on the same instance. Complexity: the cost of the methods themselves.

Gap (see docs/benchmarks.md): for a proven optimum ``opt`` and an objective
``obj``, ``gap = (obj - opt) / max(|opt|, 1)`` for a minimization problem and
``(opt - obj) / max(|opt|, 1)`` for a maximization problem. Lexicographic
objectives (reclaim: preempted jobs, then collateral GPUs) compare the whole
``Solution.key``: a row whose objective ties with the optimum's but whose
key is worse has gap 0 and a positive tie-break gap, and is not at the
optimum.
"""

from __future__ import annotations

import functools
import json
import math
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from scheduling_opt.bench.gaps import (
    GAP_TOLERANCE,
    Sense,
    better_key,
    objective_gap,
    tie_gap,
    wrong_side,
)
from scheduling_opt.errors import InstanceTooLargeError, SchedulingOptError
from scheduling_opt.io.instance import Instance, load
from scheduling_opt.registry import Method, Problem, get_problem
from scheduling_opt.solution import DEFAULT_TIME_LIMIT, Solution, Status

SUITES = ("quick", "standard", "paper")
DEFAULT_SEEDS = {"quick": 2, "standard": 5, "paper": 3}
#: Seconds per exact solve in each suite (``--time-limit`` overrides it).
SUITE_TIME_LIMITS = {"quick": 10.0, "standard": DEFAULT_TIME_LIMIT, "paper": 120.0}


@dataclass(frozen=True, slots=True)
class Task:
    """One instance to run every selected method on (generated or a file)."""

    problem: str
    size: str
    seed: int
    path: str | None = None

    def instance(self) -> Instance:
        """The instance: the file, or the problem's generator at (size, seed)."""
        if self.path is not None:
            return load(self.path)
        problem = get_problem(self.problem)
        if problem.generate is None:
            raise SchedulingOptError(f"problem {self.problem!r} has no generator")
        return problem.generate(self.size, self.seed)

    @property
    def label(self) -> str:
        """The report's ``instance`` column: the file, or ``size/seed<n>``."""
        return self.path if self.path is not None else f"{self.size}/seed{self.seed}"


@dataclass(frozen=True, slots=True)
class Row:
    """One method on one instance: a line of ``results.csv``.

    ``gap`` compares with the best proven optimum (key-aware for
    lexicographic objectives); ``bound`` and ``certified_gap`` are the
    method's own proven bound and the gap it certifies by itself
    (``Solution.gap``), with no exact method run; ``key`` is the full
    objective when it is lexicographic (empty otherwise).
    """

    problem: str
    size: str
    seed: int
    instance: str
    method: str
    exact: bool
    status: str
    objective: float | None
    optimum: float | None
    gap: float | None
    seconds: float | None
    verified: bool
    error: str
    note: str = ""
    bound: float | None = None
    certified_gap: float | None = None
    key: tuple[float, ...] = ()
    tie_gap: float | None = None
    at_optimum: bool | None = None


@dataclass(frozen=True, slots=True)
class Outcome:
    """What one method did on one instance, before it is compared with the optimum."""

    method: str
    exact: bool
    status: str
    objective: float | None = None
    key: tuple[float, ...] = ()
    bound: float | None = None
    certified_gap: float | None = None
    seconds: float | None = None
    verified: bool = False
    error: str = ""
    note: str = ""


# --------------------------------------------------------------------------- running


def run_method(
    problem: Problem[Any, Any],
    method: Method[Any, Any],
    inp: Any,
    *,
    seed: int,
    time_limit: float,
) -> Outcome:
    """Run one method and verify its answer; a failure is an outcome, never a crash.

    Parameters
    ----------
    problem : Problem
        The problem (its checker verifies the answer).
    method : Method
        One of its methods.
    inp : object
        The problem's typed input.
    seed : int
        The run's seed.
    time_limit : float
        Seconds for the run.

    Returns
    -------
    Outcome
        ``skipped`` when the method refused the instance
        (:class:`~scheduling_opt.errors.InstanceTooLargeError`), ``error``
        when it raised; otherwise its status, objective, key, bound,
        certified gap and time, ``verified`` when the checker accepted it and
        its bound is on the right side of its own objective; a run stopped by
        its time limit notes the limit and the solver's word
        (``Solution.message``), the reason the report prints.
    """
    try:
        solution: Solution[Any] = method.run(inp, seed=seed, time_limit=time_limit)
    except InstanceTooLargeError as e:
        return Outcome(method.name, method.exact, "skipped", note=str(e))
    except Exception as e:  # a broken solver is a failed row, never a crashed run
        return Outcome(method.name, method.exact, "error", error=f"{type(e).__name__}: {e}")
    error = ""
    try:
        problem.check(inp, solution)
    except Exception as e:
        error = f"check: {e}"
    if not error:
        error = _bound_error(problem.sense, solution)
    note = ""
    if solution.status is Status.TIME_LIMIT:
        note = f"stopped at the {time_limit:g} s limit" + (
            f": {solution.message}" if solution.message else ""
        )
    return Outcome(
        method.name,
        method.exact,
        solution.status.value,
        finite_or_none(solution.objective),
        tuple(float(k) for k in solution.key) if len(solution.key) > 1 else (),
        finite_or_none(solution.bound),
        solution.gap,
        solution.seconds,
        verified=not error,
        error=error,
        note=note,
    )


def _bound_error(sense: Sense, solution: Solution[Any]) -> str:
    """A bound on the wrong side of the method's own objective is a false claim."""
    obj, bound = solution.objective, solution.bound
    if obj is None or bound is None or not wrong_side(sense, bound, obj):
        return ""
    return f"bound {bound} is on the wrong side of the objective {obj}"


def best_optimum(sense: Sense, outcomes: Sequence[Outcome]) -> Outcome | None:
    """The best answer an exact method proved optimal and the checker accepted.

    Parameters
    ----------
    sense : {"min", "max"}
        The problem's sense.
    outcomes : sequence of Outcome
        Every method's outcome on one instance.

    Returns
    -------
    Outcome or None
        The verified ``optimal`` outcome of an exact method with the best
        key (None when no exact method proved optimality).

    Examples
    --------
    >>> a = Outcome("exact", True, "optimal", 3.0, (3.0, 5.0), verified=True)
    >>> b = Outcome("exact-pulp", True, "optimal", 3.0, (3.0, 4.0), verified=True)
    >>> best_optimum("min", [a, b]).method
    'exact-pulp'
    >>> best_optimum("min", [Outcome("aryl", False, "feasible", 3.0, verified=True)]) is None
    True
    """
    best: Outcome | None = None
    for o in outcomes:
        if not (o.exact and o.verified and o.status == Status.OPTIMAL.value):
            continue
        if o.objective is None:
            continue
        if best is None or better_key(sense, _full_key(o), _full_key(best)):
            best = o
    return best


def _full_key(o: Outcome) -> tuple[float, ...]:
    if o.key:
        return o.key
    return () if o.objective is None else (o.objective,)


def compare(task: Task, sense: Sense, outcomes: Sequence[Outcome]) -> list[Row]:
    """Rows of one instance: each outcome against the best proven optimum.

    Parameters
    ----------
    task : Task
        The instance the outcomes ran on.
    sense : {"min", "max"}
        The problem's sense.
    outcomes : sequence of Outcome
        One per method, in method order.

    Returns
    -------
    list of Row
        One per outcome, with the optimum, the gap, the tie-break gap
        (:func:`~scheduling_opt.bench.gaps.tie_gap`), whether it is at the optimum, and an error when a
        row beats the proven optimum (its whole key) or states a bound on the
        wrong side of it.

    Examples
    --------
    >>> rows = compare(
    ...     Task("reclaim", "20", 0),
    ...     "min",
    ...     [
    ...         Outcome("exact", True, "optimal", 3.0, (3.0, 4.0), verified=True),
    ...         Outcome("aryl", False, "feasible", 3.0, (3.0, 6.0), verified=True),
    ...     ],
    ... )
    >>> [(r.method, r.optimum, r.gap, r.tie_gap, r.at_optimum) for r in rows]
    [('exact', 3.0, 0.0, 0.0, True), ('aryl', 3.0, 0.0, 0.5, False)]
    """
    best = best_optimum(sense, outcomes)
    optimum = None if best is None else best.objective
    best_key = () if best is None else _full_key(best)
    rows = []
    for o in outcomes:
        gap = tie = at_optimum = None
        error, note = o.error, o.note
        if o.verified and best is not None:
            gap = objective_gap(sense, o.objective, optimum)
            tie = tie_gap(sense, o.objective, o.key, optimum, best.key)
            if gap is not None:
                at_optimum = abs(gap) <= GAP_TOLERANCE and (tie is None or tie <= GAP_TOLERANCE)
                beats = gap < -GAP_TOLERANCE or (tie is not None and tie < -GAP_TOLERANCE)
                if beats:
                    error = error or f"beats the proven optimum {best_key}"
        if (
            not error
            and optimum is not None
            and o.bound is not None
            and wrong_side(sense, o.bound, optimum)
        ):
            error = f"bound {o.bound} is on the wrong side of the proven optimum {optimum}"
        if at_optimum is False and o.status == Status.OPTIMAL.value and not error:
            note = note or f"claims optimal but {best_key} is proven better"
        row = Row(
            task.problem, task.size, task.seed, task.label, o.method, o.exact, o.status,
            o.objective, optimum, gap, o.seconds, o.verified, error, note,
            o.bound, o.certified_gap, o.key, tie, at_optimum,
        )  # fmt: skip
        rows.append(row)
    return rows


@functools.cache
def warm_up() -> None:
    """Load the solver libraries once per process, before any method is timed.

    The first CP-SAT solve in a process pays 0.2-0.4 s of OR-Tools import and
    start-up (and scipy's HiGHS a smaller share); without this, whichever
    method runs first on a bench worker carries that cost in its time.

    Examples
    --------
    >>> warm_up()  # a second call does nothing
    """
    from ortools.sat.python import cp_model
    from scipy.optimize import milp  # noqa: F401

    model = cp_model.CpModel()
    x = model.new_bool_var("x")
    model.maximize(x)
    solver = cp_model.CpSolver()
    solver.parameters.num_workers = 1
    solver.solve(model)


def run_task(task: Task, methods: Sequence[str] | None, time_limit: float) -> list[Row]:
    """Run the selected methods on one instance; return one row per method.

    Parameters
    ----------
    task : Task
        The instance.
    methods : sequence of str or None
        Method names to run (None: every method of the problem, in registry
        order); names the problem does not have are skipped.
    time_limit : float
        Seconds per method run.

    Returns
    -------
    list of Row
        One row per method run (a single ``error`` row when the instance
        itself is invalid).

    Examples
    --------
    >>> rows = run_task(Task("mckp", "n20", 0), ["dp", "greedy"], time_limit=10)
    >>> [(r.method, r.status, r.verified, r.gap) for r in rows]
    [('dp', 'optimal', True, 0.0), ('greedy', 'feasible', True, 0.0)]
    >>> rows[1].bound >= rows[1].optimum  # the greedy's own LP bound (a maximization)
    True
    """
    warm_up()
    problem = get_problem(task.problem)
    try:
        inp = problem.parse(task.instance())
    except SchedulingOptError as e:
        failed = Outcome("-", False, "error", error=f"instance: {e}")
        return compare(task, problem.sense, [failed])
    outcomes = [
        run_method(problem, method, inp, seed=task.seed, time_limit=time_limit)
        for method in problem.methods
        if not methods or method.name in methods
    ]
    return compare(task, problem.sense, outcomes)


# --------------------------------------------------------------------------- tasks


def build_tasks(
    suite: str, problems: Sequence[str], seeds: int, instances_dir: Path | None
) -> list[Task]:
    """The suite's instances, in a fixed order (problem, size, seed, then files).

    Parameters
    ----------
    suite : {"quick", "standard", "paper"}
        Which sizes of each problem's generator to use.
    problems : sequence of str
        Problem names.
    seeds : int
        Seeds ``0 .. seeds - 1`` per size.
    instances_dir : Path or None
        A folder of curated files: each ``*.json`` file joins the tasks of
        the problem it names (None or a missing folder: none).

    Returns
    -------
    list of Task
        The tasks.

    Raises
    ------
    UnknownProblemError
        For an unknown problem name.

    Examples
    --------
    >>> [t.label for t in build_tasks("quick", ["mckp"], seeds=1, instances_dir=None)]
    ['n20/seed0', 'n50-strong/seed0', 'n30-aryl/seed0']
    """
    curated = _curated(instances_dir)
    tasks: list[Task] = []
    for name in problems:
        problem = get_problem(name)
        if problem.generate is not None:
            for size in problem.sizes.get(suite, ()):
                tasks.extend(Task(name, size, seed) for seed in range(seeds))
        tasks.extend(
            Task(name, curated_size(name, path), 0, str(path))
            for path, owner in curated
            if owner == name
        )
    return tasks


def _curated(folder: Path | None) -> list[tuple[Path, object]]:
    """Each ``*.json`` file of ``folder`` (sorted) with its ``problem`` field."""
    if folder is None or not folder.is_dir():
        return []
    found: list[tuple[Path, object]] = []
    for path in sorted(folder.glob("*.json")):
        try:
            head = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError, RecursionError) as e:
            # Its problem is unknown, so it cannot be a row of any table: say so.
            print(f"bench: skipping {path}: not a readable JSON file ({e})", file=sys.stderr)
            continue
        found.append((path, head.get("problem") if isinstance(head, dict) else None))
    return found


def curated_size(problem: str, path: Path) -> str:
    """The report's size label of a curated file: ``file:`` + its name.

    One row per file: curated instances differ in scale (a paper's worked
    example next to a 96-server instance), so averaging them would hide both.

    Examples
    --------
    >>> curated_size("reclaim", Path("instances/reclaim-n500.json"))
    'file:n500'
    """
    return "file:" + path.stem.removeprefix(f"{problem}-")


def finite_or_none(value: float | None) -> float | None:
    """``value`` if it is a finite number, else None (JSON has no NaN)."""
    return value if value is not None and math.isfinite(value) else None
