"""Exact lease selection: one MILP on HiGHS (scipy), CP-SAT or CBC, and an independent PuLP model.

The model (docs/lease.md). Binary s[i,p]: job i meets its level p; integer
y[i,b]: terms job i holds in block b. Blocks split the horizon [0, H):

- capacity: sum_i G_i y[i,b] <= M for every capacitated block;
- choice: sum_p s[i,p] <= 1 (= 1 with ``require_all``, Eq. 5);
- count: sum_b y[i,b] = RL_i sum_p s[i,p] (RL_i terms if selected, none if not);
- tight linking: y[i,b] <= min(len_b, RL_i) sum_{p: DL_p >= end_b} s[i,p]: a
  term is held only if the chosen deadline lies after it. With the count
  row this implies Eq. (4) (sum_{k < DL_p} x[i,k] >= RL_i s[i,p]) and its
  LP relaxation is much tighter than Eq. (4) linearized alone
  (``tight=False`` keeps Eq. (4)'s rows instead, for the study);
- symmetry: identical jobs (same G, RL, levels) get non-worsening levels in
  index order (a rejected job after every selected one);
- aggregation (optional; off by default, it made HiGHS slower): terms from
  the first breakpoint after which the jobs that can still hold terms need
  at most M GPUs together are never short of room;
  each interval between consecutive deadlines there becomes one block, an
  integer count without capacity row (exact, since any terms of such an
  interval do).

Objective (1): max sum V_p s[i,p] (zero for a feasibility check).
Chronus §3.3.4. NP-hard (it contains the knapsack problem).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Literal

import numpy as np
from numpy.typing import NDArray

from scheduling_opt.exact import solve_cpsat, solve_milp, solve_pulp
from scheduling_opt.result import Status
from scheduling_opt.solvers.lease_model import LeaseInput, Schedule, relevel

Backend = Literal["highs", "cpsat", "cbc"]
#: CP-SAT needs integer objective coefficients: rewards are scaled by this.
CPSAT_SCALE = 1000


@dataclass(frozen=True, slots=True)
class ModelConfig:
    """Formulation switches (the defaults are the final model) and the backend."""

    tight: bool = True
    symmetry: bool = True
    aggregate: bool = False  # exact, but measured slower on HiGHS (docs/lease.md)
    backend: Backend = "highs"
    feasibility: bool = False


@dataclass(frozen=True, slots=True)
class Blocks:
    """Consecutive term ranges [start, end); ``capped`` ones have a capacity row."""

    start: tuple[int, ...]
    end: tuple[int, ...]
    capped: tuple[bool, ...]


def make_blocks(inp: LeaseInput, aggregate: bool) -> Blocks:
    """One block per term, except the uncapacitated tail intervals when ``aggregate``."""
    horizon = inp.horizon
    dues = sorted({lv.due for job in inp.jobs for lv in job.levels})
    free_from = horizon
    if aggregate:
        prev = 0
        for due in dues:
            reach = sum(j.gpus for j in inp.jobs if j.last_due >= due)
            if reach <= inp.capacity:
                free_from = prev
                break
            prev = due
    start = list(range(free_from))
    end = [k + 1 for k in start]
    capped = [True] * free_from
    prev = free_from
    for due in dues:
        if due > prev:
            start.append(prev)
            end.append(due)
            capped.append(False)
            prev = due
    return Blocks(tuple(start), tuple(end), tuple(capped))


@dataclass
class _Layout:
    """Variable indices: s[i] per kept level, y[i] as (block, index) pairs."""

    s: list[list[int]] = field(default_factory=list)
    y: list[list[tuple[int, int]]] = field(default_factory=list)
    size: int = 0

    def new(self) -> int:
        self.size += 1
        return self.size - 1


def _layout(inp: LeaseInput, blocks: Blocks) -> _Layout:
    lay = _Layout()
    for job in inp.jobs:
        lay.s.append([lay.new() for _ in job.levels])
        lay.y.append([(b, lay.new()) for b, st in enumerate(blocks.start) if st < job.last_due])
    return lay


def identical_pairs(inp: LeaseInput) -> list[tuple[int, int]]:
    """Consecutive pairs of jobs with the same G, RL and levels (symmetric in the model)."""
    groups: dict[tuple[object, ...], list[int]] = {}
    for i, job in enumerate(inp.jobs):
        if job.levels:
            key = (job.gpus, job.terms, tuple((lv.due, lv.reward) for lv in job.levels))
            groups.setdefault(key, []).append(i)
    return [(g[t], g[t + 1]) for g in groups.values() for t in range(len(g) - 1)]


Row = tuple[list[int], list[float], float, float]


def _rows(inp: LeaseInput, blocks: Blocks, lay: _Layout, cfg: ModelConfig) -> list[Row]:
    """Every constraint as (columns, coefficients, lower, upper)."""
    inf = float("inf")
    rows: list[Row] = []
    for i, job in enumerate(inp.jobs):
        s, y = lay.s[i], lay.y[i]
        if not s:
            continue
        lo = 1.0 if inp.require_all else 0.0
        rows.append((s, [1.0] * len(s), lo, 1.0))
        count = ([v for _, v in y] + s, [1.0] * len(y) + [-float(job.terms)] * len(s))
        if cfg.tight:
            rows.append((*count, 0.0, 0.0))
            for b, v in y:
                cap = min(blocks.end[b] - blocks.start[b], job.terms)
                open_ = [s[p] for p, lv in enumerate(job.levels) if lv.due >= blocks.end[b]]
                rows.append(([v, *open_], [1.0] + [-float(cap)] * len(open_), -inf, 0.0))
        else:
            rows.append((*count, -inf, 0.0))
            for p, lv in enumerate(job.levels):
                before = [v for b, v in y if blocks.end[b] <= lv.due]
                rows.append(([*before, s[p]], [1.0] * len(before) + [-float(job.terms)], 0.0, inf))
    for b, capped in enumerate(blocks.capped):
        if capped:
            cols = [
                (v, float(inp.jobs[i].gpus))
                for i in range(len(inp.jobs))
                for c, v in lay.y[i]
                if c == b
            ]
            if cols:
                rows.append(([c for c, _ in cols], [g for _, g in cols], -inf, float(inp.capacity)))
    if cfg.symmetry:
        for a, b in identical_pairs(inp):
            # Rank of the level (rejected = 0): integral, so CP-SAT takes it as is.
            ranks = [float(len(lay.s[a]) - p) for p in range(len(lay.s[a]))]
            rows.append((lay.s[a] + lay.s[b], ranks + [-r for r in ranks], 0.0, inf))
    return rows


def _objective(inp: LeaseInput, lay: _Layout, cfg: ModelConfig) -> NDArray[np.float64]:
    c = np.zeros(lay.size)
    if not cfg.feasibility:
        for job, s in zip(inp.jobs, lay.s, strict=True):
            for lv, v in zip(job.levels, s, strict=True):
                c[v] = lv.reward
    return c


def _upper(inp: LeaseInput, blocks: Blocks, lay: _Layout) -> NDArray[np.float64]:
    ub = np.ones(lay.size)
    for job, y in zip(inp.jobs, lay.y, strict=True):
        for b, v in y:
            ub[v] = min(blocks.end[b] - blocks.start[b], job.terms)
    return ub


def schedule_from(
    inp: LeaseInput, blocks: Blocks, lay: _Layout, values: Sequence[float]
) -> Schedule:
    """Terms from a solution: a block's count becomes its first terms."""
    held: list[list[int]] = []
    for s, y in zip(lay.s, lay.y, strict=True):
        if not any(values[v] > 0.5 for v in s):
            held.append([])
            continue
        terms: list[int] = []
        for b, v in y:
            n = round(values[v])
            terms.extend(range(blocks.start[b], blocks.start[b] + n))
        held.append(terms)
    return relevel(inp, held)


def values_of(inp: LeaseInput, blocks: Blocks, lay: _Layout, schedule: Schedule) -> list[float]:
    """A schedule as a solution vector of this model (for hints and starts)."""
    values = [0.0] * lay.size
    for i, pos in enumerate(schedule.levels):
        if pos is None:
            continue
        values[lay.s[i][pos]] = 1.0
        for b, v in lay.y[i]:
            values[v] = float(
                sum(1 for k in schedule.terms[i] if blocks.start[b] <= k < blocks.end[b])
            )
    return values


@dataclass(frozen=True, slots=True)
class ExactOutcome:
    """What a backend proved, and its schedule (None: no solution found)."""

    status: Status
    schedule: Schedule | None
    bound: float | None = None


def solve(
    inp: LeaseInput,
    *,
    time_limit: float,
    config: ModelConfig = ModelConfig(),
    hint: Schedule | None = None,
    seed: int = 0,
) -> ExactOutcome:
    """Build the model and solve it on ``config.backend``.

    ``hint`` (a feasible schedule of this input) becomes a CP-SAT hint or a
    CBC start; HiGHS through scipy takes no start (the caller keeps the hint
    as its fallback incumbent).
    """
    blocks = make_blocks(inp, config.aggregate)
    lay = _layout(inp, blocks)
    if lay.size == 0:
        return ExactOutcome(Status.OPTIMAL, Schedule.empty(len(inp.jobs)), 0.0)
    rows = _rows(inp, blocks, lay, config)
    c = _objective(inp, lay, config)
    ub = _upper(inp, blocks, lay)
    if config.backend == "highs":
        return _highs(inp, blocks, lay, rows, c, ub, time_limit)
    start = None if hint is None else values_of(inp, blocks, lay, hint)
    if config.backend == "cpsat":
        return _cpsat(inp, blocks, lay, rows, c, ub, time_limit, start, seed)
    return _cbc(inp, blocks, lay, rows, c, ub, time_limit, start)


def _highs(
    inp: LeaseInput,
    blocks: Blocks,
    lay: _Layout,
    rows: list[Row],
    c: NDArray[np.float64],
    ub: NDArray[np.float64],
    time_limit: float,
) -> ExactOutcome:
    from scipy.optimize import Bounds, LinearConstraint
    from scipy.sparse import coo_array

    r_idx = [r for r, (cols, _, _, _) in enumerate(rows) for _ in cols]
    c_idx = [col for cols, _, _, _ in rows for col in cols]
    vals = [v for _, coefs, _, _ in rows for v in coefs]
    a = coo_array((vals, (r_idx, c_idx)), shape=(len(rows), lay.size)).tocsr()
    lo = np.array([row[2] for row in rows])
    hi = np.array([row[3] for row in rows])
    out = solve_milp(
        c,
        constraints=[LinearConstraint(a, lo, hi)] if rows else [],
        integrality=np.ones(lay.size, dtype=np.int_),
        bounds=Bounds(np.zeros(lay.size), ub),
        time_limit=time_limit,
        maximize=True,
    )
    schedule = None if out.x is None else schedule_from(inp, blocks, lay, list(out.x))
    return ExactOutcome(out.status, schedule, out.bound)


def _cpsat(
    inp: LeaseInput,
    blocks: Blocks,
    lay: _Layout,
    rows: list[Row],
    c: NDArray[np.float64],
    ub: NDArray[np.float64],
    time_limit: float,
    start: list[float] | None,
    seed: int,
) -> ExactOutcome:
    from ortools.sat.python import cp_model

    model = cp_model.CpModel()
    xs = [model.new_int_var(0, int(u), f"v{v}") for v, u in enumerate(ub)]
    for cols, coefs, lo, hi in rows:
        expr = sum(round(k) * xs[v] for v, k in zip(cols, coefs, strict=True))
        if lo > -np.inf:
            model.add(expr >= round(lo))
        if hi < np.inf:
            model.add(expr <= round(hi))
    scaled = [round(w * CPSAT_SCALE) for w in c]
    model.maximize(sum(w * xs[v] for v, w in enumerate(scaled) if w))
    if start is not None:
        for var, value in zip(xs, start, strict=True):
            model.add_hint(var, round(value))
    out = solve_cpsat(model, time_limit=time_limit, seed=seed)
    schedule = None
    if out.has_solution:
        values = [float(out.solver.value(x)) for x in xs]
        schedule = schedule_from(inp, blocks, lay, values)
    bound = None if out.bound is None else out.bound / CPSAT_SCALE
    return ExactOutcome(out.status, schedule, bound)


def _cbc(
    inp: LeaseInput,
    blocks: Blocks,
    lay: _Layout,
    rows: list[Row],
    c: NDArray[np.float64],
    ub: NDArray[np.float64],
    time_limit: float,
    start: list[float] | None,
) -> ExactOutcome:
    import pulp

    prob = pulp.LpProblem("lease", pulp.LpMaximize)
    xs = [pulp.LpVariable(f"v{v}", 0, int(u), cat="Integer") for v, u in enumerate(ub)]
    prob += pulp.lpSum(w * xs[v] for v, w in enumerate(c) if w)
    for cols, coefs, lo, hi in rows:
        expr = pulp.lpSum(k * xs[v] for v, k in zip(cols, coefs, strict=True))
        if lo == hi:
            prob += expr == lo
            continue
        if lo > -np.inf:
            prob += expr >= lo
        if hi < np.inf:
            prob += expr <= hi
    if start is not None:
        for var, value in zip(xs, start, strict=True):
            var.setInitialValue(round(value))
    out = solve_pulp(prob, time_limit=time_limit, warm_start=start is not None)
    schedule = None
    if out.has_solution:
        values = [float(x.value() or 0.0) for x in xs]
        schedule = schedule_from(inp, blocks, lay, values)
    return ExactOutcome(out.status, schedule)


def solve_pulp_model(
    inp: LeaseInput, *, time_limit: float, hint: Schedule | None = None
) -> ExactOutcome:
    """The problem written again, independently, as the paper states it (PuLP/CBC).

    Binaries x[i,k] for every term k < H and s[i,p]; Eq. (3) with G_i;
    Eq. (4) linearized as sum_{k < DL_p} x[i,k] >= RL_i s[i,p]; at most RL_i
    terms, none unless selected; Eq. (5) as <= 1 (= 1 with ``require_all``).
    """
    import pulp

    horizon = inp.horizon
    prob = pulp.LpProblem("lease_paper", pulp.LpMaximize)
    x = {
        (i, k): pulp.LpVariable(f"x_{i}_{k}", cat="Binary")
        for i, job in enumerate(inp.jobs)
        if job.levels
        for k in range(horizon)
    }
    s = {
        (i, p): pulp.LpVariable(f"s_{i}_{p}", cat="Binary")
        for i, job in enumerate(inp.jobs)
        for p in range(len(job.levels))
    }
    prob += pulp.lpSum(inp.jobs[i].levels[p].reward * v for (i, p), v in s.items())
    for k in range(horizon):
        prob += (
            pulp.lpSum(inp.jobs[i].gpus * x[i, k] for i, job in enumerate(inp.jobs) if job.levels)
            <= inp.capacity
        )
    for i, job in enumerate(inp.jobs):
        if not job.levels:
            continue
        chosen = pulp.lpSum(s[i, p] for p in range(len(job.levels)))
        prob += (chosen == 1) if inp.require_all else (chosen <= 1)
        prob += pulp.lpSum(x[i, k] for k in range(horizon)) <= job.terms * chosen
        for p, lv in enumerate(job.levels):
            prob += pulp.lpSum(x[i, k] for k in range(lv.due)) >= job.terms * s[i, p]
    if hint is not None:
        for (i, k), var in x.items():
            var.setInitialValue(1 if k in hint.terms[i] else 0)
        for (i, p), var in s.items():
            var.setInitialValue(1 if hint.levels[i] == p else 0)
    out = solve_pulp(prob, time_limit=time_limit, warm_start=hint is not None)
    if not out.has_solution:
        return ExactOutcome(out.status, None)
    held = [
        [k for k in range(horizon) if (i, k) in x and (x[i, k].value() or 0) > 0.5]
        for i in range(len(inp.jobs))
    ]
    # A job holding RL_i terms without s set still meets its deadline; relevel
    # reads the level from the terms, so only selected jobs keep theirs.
    for i, job in enumerate(inp.jobs):
        if not any((s[i, p].value() or 0) > 0.5 for p in range(len(job.levels))):
            held[i] = []
    return ExactOutcome(out.status, relevel(inp, held))


def model_size(inp: LeaseInput, config: ModelConfig = ModelConfig()) -> tuple[int, int]:
    """(variables, rows) of the model under ``config``."""
    blocks = make_blocks(inp, config.aggregate)
    lay = _layout(inp, blocks)
    return lay.size, len(_rows(inp, blocks, lay, config))
