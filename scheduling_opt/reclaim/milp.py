"""The reclaim MILP as matrices, its reductions, and the three backends that solve them.

Choose N_R on-loan servers (x_s binary) and flag preempted jobs (p_j binary)
so that a job losing more workers than its slack is flagged; minimize the
flags, then the collateral GPUs. Paper: Aryl §4 (the optimum of §7.3's
exhaustive search); NP-hard, so exponential in the worst case. Building the
matrices is O(P) for P placement rows.

The model (one row per job that some choice can preempt)::

    sum_s x_s = N_R
    sum_s w_js x_s - M_j p_j <= slack_j          M_j = loan_j - slack_j
    x_s <= p_j                                   if w_js > slack_j
    u_j <= sum_s w_js x_s,  u_j <= loan_j p_j    (u_j = lost workers if preempted)
    stage 1: min sum_j p_j = P*
    stage 2: min sum_j (gpus_j p_j - gpw_j u_j)   s.t. sum_j p_j <= P*

For a job without slack, u_j is exactly sum_s w_js x_s (any loss preempts
it), so it needs no u_j (``direct``).

Reductions (each switchable in :class:`ModelConfig` for the study in
benchmarks/bench_reclaim.py): drop jobs whose on-loan workers fit their
slack (no choice preempts them; ``reduce``); the tight big-M above instead
of a global one (``tight``); two stages instead of one weighted objective
(``lexicographic``); one integer variable per class of servers holding the
same workers of the same kept jobs (``merge``: such servers are
interchangeable, x_s becomes y_c in 0..|c|); the per-server rows
(``disaggregate``); the ``direct`` collateral; no knapsack row for a job
without slack, implied by its per-class rows (``lean``). ``backend``: HiGHS via scipy
(default, measured fastest), CP-SAT or CBC on the very same matrices.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

import numpy as np
from numpy.typing import NDArray

from scheduling_opt.exact import solve_cpsat, solve_milp, solve_pulp
from scheduling_opt.reclaim.model import ReclaimInput
from scheduling_opt.solution import Status

if TYPE_CHECKING:
    from scipy.sparse import csr_matrix

Backend = Literal["highs", "cpsat", "cbc"]


@dataclass(frozen=True, slots=True)
class ModelConfig:
    """Which model improvements to apply, and on which backend.

    Every switch on (the default) is the model of the ``exact`` method; the
    others exist for the study in ``benchmarks/bench_reclaim.py``.
    """

    reduce: bool = True
    tight: bool = True
    lexicographic: bool = True
    merge: bool = True
    disaggregate: bool = True
    direct: bool = True
    lean: bool = True
    backend: Backend = "highs"


@dataclass(frozen=True, slots=True)
class Rows:
    """A linear model: ``lo <= A x <= hi``, variable bounds, integrality, cost."""

    a: csr_matrix
    lo: NDArray[np.float64]
    hi: NDArray[np.float64]
    var_lo: NDArray[np.float64]
    var_hi: NDArray[np.float64]
    integral: NDArray[np.int_]
    cost: NDArray[np.float64]


@dataclass(frozen=True, slots=True)
class Reduced:
    """Kept jobs and server classes: ``classes[k]`` lists interchangeable servers."""

    jobs: list[int]
    classes: list[list[int]]
    columns: list[dict[int, int]]

    def unmerge(self, x: NDArray[np.float64]) -> list[int]:
        """Servers from class counts: the first y_k members of class k (file order)."""
        chosen: list[int] = []
        for c, members in enumerate(self.classes):
            chosen.extend(members[: round(float(x[c]))])
        return sorted(chosen)

    def count(self, x: NDArray[np.float64]) -> int:
        """The number of preempted-job flags set in ``x``."""
        k, m = len(self.classes), len(self.jobs)
        return round(float(x[k : k + m].sum()))


def reduce(inp: ReclaimInput, config: ModelConfig) -> Reduced:
    """The kept jobs and the server classes of the model ``config`` builds."""
    jobs = [j for j in range(inp.n_jobs) if inp.can_preempt(j) or not config.reduce]
    pos = {j: i for i, j in enumerate(jobs)}
    groups: dict[tuple[tuple[int, int], ...], list[int]] = {}
    classes: list[list[int]] = []
    columns: list[dict[int, int]] = []
    for s in range(inp.n_servers):
        col = tuple(sorted((pos[j], w) for j, w in inp.server_jobs[s] if j in pos))
        if config.merge and col in groups:
            groups[col].append(s)
            continue
        members = [s]
        groups[col] = members
        classes.append(members)
        columns.append(dict(col))
    return Reduced(jobs, classes, columns)


def model_size(inp: ReclaimInput, config: ModelConfig | None = None) -> tuple[int, int]:
    """(server classes, jobs kept) of the model ``config`` builds for ``inp``.

    Examples
    --------
    >>> from scheduling_opt.model import Cluster, GpuType, Server, Placement
    >>> servers = tuple(Server(f"i{k}", "T4", 8, "inference", True) for k in (1, 2))
    >>> inp = ReclaimInput(Cluster((GpuType("T4"),), servers), (), Placement(), 1)
    >>> model_size(inp)  # two empty servers are one class
    (1, 0)
    """
    red = reduce(inp, config or ModelConfig())
    return len(red.classes), len(red.jobs)


def build(inp: ReclaimInput, red: Reduced, config: ModelConfig, stage: int, best: int) -> Rows:
    """Variables: y_k (classes), p_j (kept jobs), then u_j when collateral counts.

    ``stage`` 1: count only; 2: collateral with count <= ``best``;
    0: one weighted objective (count * BIG + collateral).
    """
    k, m = len(red.classes), len(red.jobs)
    counted = stage != 1
    # A job without slack is preempted as soon as it loses a worker, so its
    # lost workers are exactly those of a preempted job: its collateral
    # gpus_j p_j - gpw_j lost_j is linear and needs no u_j (``direct``).
    needs_u = [
        i for i, j in enumerate(red.jobs) if counted and (inp.slack[j] > 0 or not config.direct)
    ]
    u_of = {i: k + m + n for n, i in enumerate(needs_u)}
    nv = k + m + len(needs_u)
    rows: list[int] = []
    cols: list[int] = []
    vals: list[float] = []
    lo: list[float] = []
    hi: list[float] = []

    def row(entries: list[tuple[int, float]], low: float, high: float) -> None:
        r = len(lo)
        for c, v in entries:
            rows.append(r)
            cols.append(c)
            vals.append(v)
        lo.append(low)
        hi.append(high)

    row([(c, 1.0) for c in range(k)], inp.n_reclaim, inp.n_reclaim)
    by_job: list[list[tuple[int, float]]] = [[] for _ in range(m)]
    for c, col in enumerate(red.columns):
        for i, workers in col.items():
            by_job[i].append((c, float(workers)))
    loose = float(sum(inp.loan_workers))
    cost = np.zeros(nv)
    for i, j in enumerate(red.jobs):
        big_m = max(inp.loan_workers[j] - inp.slack[j], 0) if config.tight else loose
        # Without slack every class holding j forces it, so the per-class
        # rows below imply the knapsack row (``lean`` drops it: 20% fewer rows).
        if not (config.lean and config.disaggregate and inp.slack[j] == 0):
            row([*by_job[i], (k + i, -float(big_m))], -np.inf, inp.slack[j])
        if config.disaggregate:
            # A class holding more of j's workers than its slack preempts j
            # on its own: y_c <= |class| p_j is the tight (LP-integral) form.
            for c, w in by_job[i]:
                if w > inp.slack[j]:
                    row([(c, 1.0), (k + i, -float(len(red.classes[c])))], -np.inf, 0.0)
        if stage != 2:
            cost[k + i] = 1.0 if stage == 1 else float(inp.big)
        if not counted:
            continue
        cost[k + i] += inp.gpus[j]
        if i in u_of:
            u = u_of[i]
            row([(u, 1.0)] + [(c, -w) for c, w in by_job[i]], -np.inf, 0.0)
            row([(u, 1.0), (k + i, -float(inp.loan_workers[j]))], -np.inf, 0.0)
            cost[u] = -inp.gpw[j]
        else:
            for c, w in by_job[i]:
                cost[c] -= inp.gpw[j] * w
    if stage == 2:
        row([(k + i, 1.0) for i in range(m)], -np.inf, best)
    var_hi = np.concatenate(
        [
            [float(len(c)) for c in red.classes],
            np.ones(m),
            [float(inp.loan_workers[red.jobs[i]]) for i in needs_u],
        ]
    )
    from scipy.sparse import csr_matrix

    a = csr_matrix((vals, (rows, cols)), shape=(len(lo), nv))
    return Rows(
        a, np.array(lo), np.array(hi), np.zeros(nv), var_hi, np.ones(nv, dtype=np.int_), cost
    )


@dataclass(frozen=True, slots=True)
class RowsOutcome:
    """One backend run: what it proved, its solution vector, its dual bound."""

    status: Status
    x: NDArray[np.float64] | None
    bound: float | None


def solve_rows(
    model: Rows, backend: Backend, time_limit: float, *, relax: bool = False
) -> RowsOutcome:
    """Solve ``model`` on ``backend``; ``relax`` drops integrality (HiGHS only)."""
    if backend == "highs":
        from scipy.optimize import LinearConstraint

        out = solve_milp(
            model.cost,
            constraints=[LinearConstraint(model.a, model.lo, model.hi)],
            integrality=np.zeros_like(model.integral) if relax else model.integral,
            bounds=(model.var_lo, model.var_hi),
            time_limit=time_limit,
        )
        # An LP (or a MILP proven optimal) is its own bound: HiGHS reports
        # no MIP dual bound for a pure LP.
        bound = out.objective if out.status is Status.OPTIMAL else out.bound
        return RowsOutcome(out.status, out.x, bound)
    if backend == "cpsat":
        return _solve_cpsat(model, time_limit)
    return _solve_cbc(model, time_limit)


def _row_entries(model: Rows, r: int) -> list[tuple[int, float]]:
    start, end = model.a.indptr[r], model.a.indptr[r + 1]
    return list(
        zip(model.a.indices[start:end].tolist(), model.a.data[start:end].tolist(), strict=True)
    )


def _solve_cpsat(model: Rows, time_limit: float) -> RowsOutcome:
    from ortools.sat.python import cp_model

    cp = cp_model.CpModel()
    xs = [cp.new_int_var(0, int(h), f"v{i}") for i, h in enumerate(model.var_hi)]
    for r in range(model.a.shape[0]):
        expr = sum(int(v) * xs[c] for c, v in _row_entries(model, r))
        if np.isfinite(model.lo[r]):
            cp.add(expr >= int(model.lo[r]))
        cp.add(expr <= int(model.hi[r]))
    cp.minimize(sum(int(v) * xs[i] for i, v in enumerate(model.cost) if v))
    out = solve_cpsat(cp, time_limit=time_limit)
    if not out.has_solution:
        return RowsOutcome(out.status, None, None)
    x = np.array([float(out.solver.value(v)) for v in xs])
    return RowsOutcome(out.status, x, out.bound)


def _solve_cbc(model: Rows, time_limit: float) -> RowsOutcome:
    import pulp

    prob = pulp.LpProblem("reclaim_rows", pulp.LpMinimize)
    xs = [pulp.LpVariable(f"v{i}", 0, int(h), cat="Integer") for i, h in enumerate(model.var_hi)]
    prob += pulp.lpSum(float(v) * xs[i] for i, v in enumerate(model.cost) if v)
    for r in range(model.a.shape[0]):
        expr = pulp.lpSum(v * xs[c] for c, v in _row_entries(model, r))
        if np.isfinite(model.lo[r]):
            prob += expr >= float(model.lo[r])
        prob += expr <= float(model.hi[r])
    out = solve_pulp(prob, time_limit=time_limit)
    if not out.has_solution:
        return RowsOutcome(out.status, None, None)
    # PuLP exposes no dual bound; an optimal run is its own.
    bound = out.objective if out.status is Status.OPTIMAL else None
    return RowsOutcome(out.status, np.array([float(x.value() or 0.0) for x in xs]), bound)
