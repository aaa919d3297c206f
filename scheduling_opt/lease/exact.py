"""The proven-optimal lease selection: the tightened MILP on HiGHS (the ``exact`` method).

The model of :mod:`~scheduling_opt.lease.formulation` (tight linking and
symmetry rows over the paper's Eqs. (1)-(5)) solved by HiGHS through
``scipy.optimize.milp``; the fastest of HiGHS, CP-SAT and CBC in docs/lease.md's
study. Chronus §3.3.4. NP-hard; O(N (P + H)) variables and rows.

Two stages from :data:`TWO_STAGE_MIN_JOBS` jobs on (issue 16; smaller
instances, and ``two_stage=False``, solve the whole MILP at once, the old
model, kept as a cross-check):

1. *Levels*: :func:`~scheduling_opt.lease.formulation.build_levels`, the
   level binaries s under one energy row per term t (the work that must
   fall before t fits in M t GPU-terms): exactly the choices whose terms
   can be held *fractionally*, so a relaxation, whose proven optimum is an
   upper bound; ~450 binaries and ~290 rows at C120 instead of ~3,000
   columns (synth-p4-1: 32 s CPU for the whole MILP, 0.95 s for both stages).
2. *Packing*: the levels fixed, integral terms, decided first by a
   dedicated search (:func:`~scheduling_opt.lease.packing.pack`, whose
   "unpackable" is a proof), then HiGHS (:func:`_decide`). A packing
   reaching the stage-1 bound is a proven optimum. A choice that does not
   pack (often when jobs are large against M; 3 of 20 hard C120
   instances) is cut off with every choice containing it or tighter
   deadlines, and the levels are solved again (:class:`_Levels`: only the
   columns that reduced-cost fixing below the last bound leaves free), up
   to :data:`PACKING_ROUNDS` packings; a choice that holds an unpackable
   one up to relabelling (:func:`_dominates`: same GPUs and terms, the same
   or earlier deadlines) is cut without a packing. Then (or after a packing
   slower than :data:`PACKING_SECONDS`) the whole MILP runs on the time
   left, its bound capped by the levels stage's; a packing found below the
   bound stays the incumbent. Synth-p4-6 (17140) is proven in ~1.7 s of CPU
   (before the search: ~90 s, its unpackable choices taking HiGHS 1-9 s
   each to prove and 1-20 s to confirm without presolve; docs/lease.md).
"""

from __future__ import annotations

import contextlib
import os
import sys
import time
from collections.abc import Iterator
from typing import TYPE_CHECKING

import numpy as np
from numpy.typing import NDArray

from scheduling_opt.errors import SolverError
from scheduling_opt.exact import MIP_REL_GAP, stdout_to_stderr
from scheduling_opt.lease._schedule import Schedule, load_of, relevel
from scheduling_opt.lease.formulation import (
    ExactOutcome,
    Model,
    ModelConfig,
    Row,
    build,
    build_levels,
    run_exact,
)
from scheduling_opt.lease.greedy import Hint
from scheduling_opt.lease.model import LeaseDecision, LeaseInput
from scheduling_opt.lease.packing import Verdict, pack
from scheduling_opt.solution import Seed, Solution, Status, time_limit_of

if TYPE_CHECKING:
    from scipy.sparse import csr_array

__all__ = ["PACKING_ROUNDS", "PACKING_SECONDS", "TWO_STAGE_MIN_JOBS", "exact", "solve_highs"]

#: Jobs (that can meet a deadline) from which ``exact`` solves in two stages.
#: 20 until the packing search; since, wall ms median of 8 seeds
#: (docs/lease.md), two stages with the search against the whole MILP: j6
#: 18 vs 9, c1-j10 35 vs 111, c2-j12 39 vs 97. Where the levels never pack
#: (2 of 8 at c1-j10 and c2-j12) two stages cost about 2x the whole MILP.
TWO_STAGE_MIN_JOBS = 10
#: Packings tried (each unpackable choice cut off) before the whole MILP runs;
#: choices cut by :func:`_dominates` need no packing and do not count (at most
#: ``5 * PACKING_ROUNDS`` levels solves in all).
PACKING_ROUNDS = 10
#: Seconds a packing may take (or a quarter of the time left, if more) before
#: the whole MILP takes over: proving a choice unpackable took 1-12 s on
#: synth-p4-6 (generate_lease(120, 200, 6, pressure=4)).
PACKING_SECONDS = 2.0
#: Whether a packing is first decided by :func:`scheduling_opt.lease.packing.pack`
#: (a search whose "unpackable" is a proof) before HiGHS: on synth-p4-6's
#: unpackable choices 0.006-0.10 s against HiGHS' 0.8-8.7 s (docs/lease.md).
PACKING_SEARCH = True
#: Jobs (that can meet a deadline) from which packings go to the search
#: first: below, HiGHS decides them in milliseconds too, and the HiGHS path
#: (presolve's verdicts, their confirmation; tests/lease/test_lease_dominance.py)
#: stays the one exercised on small instances.
SEARCH_MIN_JOBS = TWO_STAGE_MIN_JOBS
#: Nodes of the first, budgeted search on a packing (:func:`_decide`): on
#: the 33 choices of the 20 hard C120 instances it decided all but two
#: packable ones (8,000-45,000 nodes) within 1,707 nodes.
SEARCH_NODES = 3000
#: Seconds HiGHS (presolve on) may then look for a packing.
HIGHS_PACKING_SECONDS = 2.0


def _milp(
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
    its answer is verified independently (:func:`_packs`) and a wrong
    "infeasible" merely sends the solve to the whole MILP. The statuses are
    mapped as ``solve_milp`` maps them.
    """
    a, lo, hi = _matrix(model.rows, model.lay.size)
    low = np.zeros(model.lay.size) if lower is None else lower
    return _highs(
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


def _matrix(
    rows: list[Row], size: int
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


def _highs(
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
    """Maximize c x over lo <= a x <= hi, lower <= x <= upper on HiGHS (see :func:`_milp`)."""
    from scipy.optimize import Bounds, LinearConstraint, milp

    options = {
        "time_limit": time_limit,
        "disp": False,
        "presolve": presolve,
        "mip_rel_gap": MIP_REL_GAP,
    }
    relax = not integral.any()
    with _silenced() if silence else stdout_to_stderr():
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
def _silenced() -> Iterator[None]:
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


def _packs(inp: LeaseInput, schedule: Schedule) -> bool:
    """Whether ``schedule`` is a valid packing: RL_i distinct terms before the level, <= M."""
    for job, pos, held in zip(inp.lease_jobs, schedule.levels, schedule.terms, strict=True):
        if pos is None:
            continue
        if len(set(held)) != job.terms or min(held) < 0 or max(held) >= job.levels[pos].due:
            return False
    return bool((load_of(inp, schedule.terms) <= inp.capacity).all())


def _pack(
    inp: LeaseInput, model: Model, x: NDArray[np.float64], limit: float, *, presolve: bool
) -> tuple[Schedule | None, Status]:
    """Integral terms for the levels of ``x``: (verified schedule or None, HiGHS' status).

    With ``presolve`` (fast) an "infeasible" is only a lead: the caller
    confirms it without presolve (``presolve=False``) before it may lower a
    bound, because the scipy 1.17.1 HiGHS presolve once cut off an optimum.
    A schedule is re-verified by :func:`_packs` either way.
    """
    fixed = np.zeros(model.lay.size)
    upper = model.ub.copy()
    for s in model.lay.s:
        for v in s:
            fixed[v] = upper[v] = round(float(x[v]))
    packing = Model(model.blocks, model.lay, model.rows, model.c, upper)
    ones = np.ones(model.lay.size, dtype=np.int_)
    status, y, _ = _milp(packing, limit, ones, fixed, presolve=presolve)
    if status is Status.OPTIMAL and y is not None:
        schedule = model.schedule(inp, list(y))
        if _packs(inp, schedule):
            return schedule, status
        return None, Status.TIME_LIMIT  # not verified: proves nothing
    return None, status


def _search(
    inp: LeaseInput, model: Model, x: NDArray[np.float64], limit: float, nodes: int | None
) -> tuple[Schedule | None, Status]:
    """The levels of ``x`` packed by :func:`~scheduling_opt.lease.packing.pack`.

    (verified schedule, OPTIMAL), (None, INFEASIBLE) when the search proved
    that no packing exists (exhaustively: no confirmation needed), or
    (None, TIME_LIMIT) when it ran out of ``limit``.
    """
    chosen: list[int] = []
    jobs: list[tuple[int, int, int]] = []
    for i, (job, s) in enumerate(zip(inp.lease_jobs, model.lay.s, strict=True)):
        for p, v in enumerate(s):
            if x[v] > 0.5:
                chosen.append(i)
                jobs.append((job.gpus, job.terms, job.levels[p].due))
    terms, verdict = pack(jobs, inp.capacity, limit, nodes)
    if verdict is Verdict.UNPACKABLE:
        return None, Status.INFEASIBLE
    if terms is None:
        return None, Status.TIME_LIMIT
    held: list[list[int]] = [[] for _ in inp.lease_jobs]
    for i, t in zip(chosen, terms, strict=True):
        held[i] = t
    schedule = relevel(inp, held)
    if _packs(inp, schedule) and all(schedule.levels[i] is not None for i in chosen):
        return schedule, Status.OPTIMAL
    return None, Status.TIME_LIMIT  # not verified: proves nothing


def _decide(
    inp: LeaseInput, model: Model, x: NDArray[np.float64], limit: float
) -> tuple[Schedule | None, Status, bool]:
    """Whether the levels of ``x`` pack: (verified schedule or None, status, proven).

    The search (:mod:`~scheduling_opt.lease.packing`) for
    :data:`SEARCH_NODES` nodes first: it proves most unpackable choices in
    that budget (synth-p4-6: 70-891 nodes, 0.006-0.10 s, against HiGHS'
    0.8-8.7 s) but wanders on some packable ones (synth-p4-1: 45,000 nodes,
    1.7 s), which HiGHS with presolve packs at once. Then HiGHS, for at most
    :data:`HIGHS_PACKING_SECONDS`; then the search for the time left, to
    turn a presolved "infeasible" into a proof. ``proven``: no packing
    exists (the search exhausted its tree); an INFEASIBLE status without it
    is presolve's word only.
    """
    start = time.perf_counter()
    if not PACKING_SEARCH or sum(1 for j in inp.lease_jobs if j.levels) < SEARCH_MIN_JOBS:
        schedule, status = _pack(inp, model, x, limit, presolve=True)
        return schedule, status, False
    schedule, status = _search(inp, model, x, limit, SEARCH_NODES)
    if status is not Status.TIME_LIMIT:
        return schedule, status, status is Status.INFEASIBLE
    left = limit - (time.perf_counter() - start)
    if left <= 0:
        return None, Status.TIME_LIMIT, False
    schedule, status = _pack(inp, model, x, min(left, HIGHS_PACKING_SECONDS), presolve=True)
    if schedule is not None:
        return schedule, status, False
    left = limit - (time.perf_counter() - start)
    if left <= 0:
        return None, status, False
    found, verdict = _search(inp, model, x, left, None)
    if verdict is Status.TIME_LIMIT:
        return None, status, False
    return found, verdict, verdict is Status.INFEASIBLE


def _no_good(model: Model, x: NDArray[np.float64]) -> Row:
    """Cut off the chosen levels and every choice that contains them or tighter ones.

    If the chosen (job, level) pairs cannot be packed, neither can any choice
    giving each of those jobs the same or an earlier deadline (its windows
    are shorter) plus other jobs: sum_{(i,p) chosen} sum_{p' <= p} s[i,p'] <= n - 1.
    """
    cols: list[int] = []
    chosen = 0
    for s in model.lay.s:
        for p, v in enumerate(s):
            if x[v] > 0.5:
                cols.extend(s[: p + 1])
                chosen += 1
    return (cols, [1.0] * len(cols), -float("inf"), float(chosen - 1))


Shape = dict[tuple[int, int], list[int]]


def _shape(inp: LeaseInput, model: Model, x: NDArray[np.float64]) -> Shape:
    """The chosen levels as a packing sees them: (G_i, RL_i) -> sorted deadlines.

    Whether levels pack depends on the jobs' GPUs, terms and deadlines only,
    not on which jobs they are or what they earn.
    """
    shape: Shape = {}
    for job, s in zip(inp.lease_jobs, model.lay.s, strict=True):
        for p, v in enumerate(s):
            if x[v] > 0.5:
                shape.setdefault((job.gpus, job.terms), []).append(job.levels[p].due)
    for dues in shape.values():
        dues.sort()
    return shape


def _dominates(shape: Shape, unpackable: Shape) -> bool:
    """Whether ``shape`` holds an unpackable choice: no packing is needed to reject it.

    True when every (G, RL) class of ``unpackable`` maps one to one onto jobs
    of ``shape`` of the same class with the same or earlier deadlines (the
    k-th earliest deadline of the class no later than ``unpackable``'s k-th):
    a packing of ``shape`` would give those jobs' terms to ``unpackable``'s
    (each within its deadline, no term fuller), so none exists. O(N log N).
    """
    for cls, dues in unpackable.items():
        mine = shape.get(cls, [])
        if len(mine) < len(dues) or any(a > b for a, b in zip(mine, dues, strict=False)):
            return False
    return True


class _Levels:
    """The levels stage on its level columns only, with reduced-cost fixing (issue 16).

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
        ub = relaxed.ub
        # Rows only over level columns; the term columns (fixed at 0) drop out.
        self.rows = [self.compact(row) for row in relaxed.rows]
        self.c = relaxed.c[self.cols]
        self.ub = ub[self.cols]
        self.step = _granularity(self.c)
        self.duals: tuple[float, NDArray[np.float64]] | None = None
        # Off after the first fixed solve that falls short of its floor: then
        # the optimum drops by more than one reward step per cut (jobs large
        # against M), and every later round would pay for two solves.
        self.fixing = True

    def compact(self, row: Row) -> Row:
        """A row over full-layout columns as one over the level columns (others are 0)."""
        cols, coefs, lo, hi = row
        out_cols: list[int] = []
        out_coefs: list[float] = []
        for col, coef in zip(cols, coefs, strict=True):
            if col in self.index:
                out_cols.append(self.index[col])
                out_coefs.append(coef)
            elif self.full.ub[col] != 0.0:
                raise SolverError("a levels row holds a free term column")
        return (out_cols, out_coefs, lo, hi)

    def expand(self, x: NDArray[np.float64]) -> NDArray[np.float64]:
        out = np.zeros(self.full.lay.size)
        out[self.cols] = np.round(x)
        return out

    def lagrangian(self) -> tuple[float, NDArray[np.float64]]:
        """(L, rc): the bound and reduced costs of the LP's duals (computed once)."""
        if self.duals is None:
            from scipy.optimize import linprog
            from scipy.sparse import vstack

            a, lo, hi = _matrix(self.rows, len(self.cols))
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
        rows = self.rows + [self.compact(cut) for cut in cuts]
        a, lo, hi = _matrix(rows, len(self.cols))
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
                status, y, found = _highs(
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
        status, y, found = _highs(
            self.c, a, lo, hi, integral, zeros, self.ub, limit, presolve=False, silence=True
        )
        return status, None if y is None else self.expand(y), found


def _granularity(c: NDArray[np.float64]) -> float | None:
    """The gcd of the rewards when all are integers (every choice's reward is a multiple)."""
    rounded = np.round(c)
    if not np.allclose(c, rounded, rtol=0.0, atol=1e-9) or not rounded.any():
        return None
    step = int(np.gcd.reduce(np.abs(rounded[rounded != 0]).astype(np.int64)))
    return float(step) if step > 0 else None


def _two_stage(inp: LeaseInput, model: Model, config: ModelConfig, limit: float) -> ExactOutcome:
    """Levels under the energy rows (a relaxation: the bound), then their integral packing.

    A choice of levels that does not pack is cut off (:func:`_no_good`) and
    the levels solved again, at most :data:`PACKING_ROUNDS` times. The first
    round's bound needs no cut; a packing that reaches it is proven at once.
    A later round's bound holds only if its cuts removed unpackable choices,
    so the presolved "infeasible" verdicts behind them are confirmed without
    presolve before such a bound is used.
    """
    start = time.perf_counter()

    def left() -> float:
        return limit - (time.perf_counter() - start)

    stage = _Levels(build_levels(inp, config))
    cuts: list[Row] = []
    unconfirmed: list[NDArray[np.float64]] = []  # choices behind cuts, presolve's word only
    unpackable: list[Shape] = []  # of every choice proven (or presolve-said) not to pack
    first: float | None = None
    bound: float | None = None
    packings = rounds = 0
    best: Schedule | None = None  # a packing below the bound, kept if nothing better is proven
    # Cuts without a packing are cheap but not free (a levels solve each): capped too.
    while packings < PACKING_ROUNDS and rounds < 5 * PACKING_ROUNDS:
        rounds += 1
        if left() <= 0:
            break
        status, x, found = stage.solve(cuts, bound, left())
        if status is Status.INFEASIBLE:
            if cuts and not _confirm(inp, model, unconfirmed, left()):
                break
            message = "no choice of levels packs" if cuts else ""
            return ExactOutcome(Status.INFEASIBLE, None, None, message)
        if status is not Status.OPTIMAL or x is None:
            if unconfirmed or found is None:
                return ExactOutcome(status, best, first)
            return ExactOutcome(status, best, found)
        bound = found
        first = found if first is None else first
        shape = _shape(inp, model, x)
        if any(_dominates(shape, u) for u in unpackable):
            # Unpackable as surely as the choice it holds (whose verdict, if
            # presolve's only, is still in ``unconfirmed``): cut without packing.
            cuts.append(_no_good(model, x))
            continue
        packings += 1
        # A packing that is slow to decide hands over to the whole MILP early.
        share = min(left(), max(PACKING_SECONDS, 0.25 * left()))
        schedule, verdict, proof = _decide(inp, model, x, share)
        if schedule is not None:
            reward = schedule.reward(inp)
            proven = first if unconfirmed else bound
            if proven is not None and reward < proven - 1e-6 * max(1.0, abs(proven)):
                best = _better(inp, best, schedule)
                if not _confirm(inp, model, unconfirmed, left()):
                    break
                unconfirmed.clear()
                proven = bound
            if proven is None or reward >= proven - 1e-6 * max(1.0, abs(proven)):
                message = f"levels packed after {len(cuts)} cut(s)" if cuts else ""
                return ExactOutcome(Status.OPTIMAL, schedule, proven, message)
            break
        if verdict is not Status.INFEASIBLE:
            break
        cuts.append(_no_good(model, x))
        if not proof:
            unconfirmed.append(x)
        unpackable.append(shape)
    if unconfirmed:
        bound = first
    if left() <= 0:
        message = "levels found; packing timed out" if bound is not None else ""
        return ExactOutcome(Status.TIME_LIMIT, best, bound, message)
    whole = _one_stage(inp, model, left())
    capped = (
        bound if whole.bound is None else whole.bound if bound is None else min(whole.bound, bound)
    )
    message = "levels did not pack: whole MILP"
    if whole.status is Status.OPTIMAL or best is None:
        return ExactOutcome(whole.status, whole.schedule, capped, message)
    best = _better(inp, best, whole.schedule)
    # A packing exists, so an "infeasible" from the whole MILP proves nothing.
    status = Status.TIME_LIMIT if whole.status is Status.INFEASIBLE else whole.status
    return ExactOutcome(status, best, capped, message)


def _better(inp: LeaseInput, a: Schedule | None, b: Schedule | None) -> Schedule | None:
    """The one of higher reward (``a`` on a tie; None counts as nothing)."""
    if a is None or (b is not None and b.reward(inp) > a.reward(inp)):
        return b
    return a


def _confirm(
    inp: LeaseInput, model: Model, choices: list[NDArray[np.float64]], limit: float
) -> bool:
    """Whether HiGHS without presolve proves every choice unpackable within ``limit``."""
    start = time.perf_counter()
    for x in choices:
        left = limit - (time.perf_counter() - start)
        if left <= 0 or _pack(inp, model, x, left, presolve=False)[1] is not Status.INFEASIBLE:
            return False
    return True


def _one_stage(inp: LeaseInput, model: Model, limit: float) -> ExactOutcome:
    """The whole MILP at once (every column integral)."""
    status, x, bound = _milp(model, limit, np.ones(model.lay.size, dtype=np.int_))
    schedule = None if x is None else model.schedule(inp, list(x))
    return ExactOutcome(status, schedule, bound)


def solve_highs(
    inp: LeaseInput,
    config: ModelConfig,
    time_limit: float,
    *,
    relax: bool = False,
    two_stage: bool = False,
) -> ExactOutcome:
    """Build the model and solve it on HiGHS; the bound is HiGHS' MIP dual bound.

    ``relax``: solve the LP relaxation instead (its optimum is the bound;
    the fractional solution gives no schedule). ``two_stage``: levels first,
    then their packing (the module docstring).
    """
    model = build(inp, config)
    if model.lay.size == 0:
        return ExactOutcome(Status.OPTIMAL, Schedule.empty(len(inp.jobs)), 0.0)
    if relax:
        status, _, bound = _milp(model, time_limit, np.zeros(model.lay.size, dtype=np.int_))
        return ExactOutcome(status, None, bound if status is Status.OPTIMAL else None)
    if two_stage:
        return _two_stage(inp, model, config, time_limit)
    return _one_stage(inp, model, time_limit)


def exact(
    inp: LeaseInput,
    *,
    seed: Seed = None,
    time_limit: float | None = None,
    hint: Hint | None = None,
    config: ModelConfig | None = None,
    two_stage: bool | None = None,
) -> Solution[LeaseDecision]:
    """The reward-maximal selection, proven on HiGHS (``time_limit``: best incumbent and bound).

    Parameters
    ----------
    inp : LeaseInput
        The jobs, M and T_l.
    seed : int, numpy Generator or None
        Unused (HiGHS runs deterministically); accepted for the common convention.
    time_limit : float or None
        Seconds for HiGHS (None: the library default).
    hint : Mapping[str, Sequence[int]] or None
        A warm start (job id -> terms), repaired into a feasible schedule;
        scipy's HiGHS takes no start, so it is the fallback incumbent on a
        time limit.
    config : ModelConfig or None
        Formulation switches (docs/lease.md's study); None: the final model.
    two_stage : bool or None
        True: levels first (terms fractional), then their integral packing
        (the module docstring); False: the whole MILP at once (the old
        model, a cross-check); None: two stages from
        :data:`TWO_STAGE_MIN_JOBS` jobs that can meet a deadline on.

    Returns
    -------
    Solution[LeaseDecision]
        ``optimal``; ``time_limit`` with the best of HiGHS' incumbent, the
        hint and the greedy, and HiGHS' dual bound (an upper bound on the
        reward); ``infeasible`` (only under ``require_all``) when proven.

    Raises
    ------
    ValueError
        When ``time_limit`` is not a positive number.

    Examples
    --------
    >>> from scheduling_opt.model import Job, RewardStep
    >>> jobs = [Job("a", 8, 8, 2400.0, deadlines=(RewardStep(4800.0, 100),)),
    ...         Job("b", 4, 4, 1200.0, deadlines=(RewardStep(1200.0, 100),)),
    ...         Job("c", 4, 4, 3600.0, deadlines=(RewardStep(3600.0, 90),))]
    >>> sol = exact(LeaseInput(jobs, capacity=8, lease_length=1200.0))
    >>> sol.status.value, sol.objective, sol.bound, sol.decision.run_now
    ('optimal', 200.0, 200.0, ('b',))

    References
    ----------
    Chronus (SoCC '21) §3.3.4, Eqs. (1)-(6).
    """
    cfg = config or ModelConfig()
    limit = time_limit_of(time_limit)
    if two_stage is None:
        two_stage = sum(1 for j in inp.lease_jobs if j.levels) >= TWO_STAGE_MIN_JOBS
    return run_exact(
        inp,
        lambda _warm: solve_highs(inp, cfg, limit, two_stage=two_stage),
        hint,
        feasibility=cfg.feasibility,
    )
