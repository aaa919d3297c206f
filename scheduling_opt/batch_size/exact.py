"""Exact baselines of the ``batch-size`` problem (the objective of ones_problem).

Separable case (one server, or no job pays for spanning servers): F is a sum
over jobs of a function of c_j alone plus a term linear in sum_j c_j, so the
optimum is a multiple-choice knapsack over GPU counts (group j: items c =
1..cap_j of weight c; choosing none = waiting), solved by the exact DP of
:mod:`scheduling_opt.solvers.knapsack`; pseudo-polynomial, O(J cap G).
With the cross-node penalty: a CP-SAT model over (c_j, spread_j) choices and
per-server GPU counts, started from the greedy schedule (exponential worst
case; the 64-GPU, 16-server benchmark instances are proved in about 1 s; a
time limit is reported as ``time_limit``). Brute force over all (J + 1)^G
genomes checks both on tiny instances.
"""

from __future__ import annotations

import itertools
import time
from typing import TYPE_CHECKING

import numpy as np
from numpy.typing import NDArray

from scheduling_opt.errors import InstanceTooLargeError
from scheduling_opt.result import Status
from scheduling_opt.solvers.knapsack import solve_dp
from scheduling_opt.solvers.ones_problem import (
    BatchSizeInput,
    BatchSizeResult,
    counts,
    make_result,
    objective,
)
from scheduling_opt.solvers.ones_search import greedy

if TYPE_CHECKING:
    from ortools.sat.python import cp_model

IntArray = NDArray[np.int64]

#: Brute force refuses instances with more genomes than this.
BRUTE_FORCE_LIMIT = 2_000_000
#: CP-SAT needs integer costs: the largest |cost| becomes this many units.
COST_SCALE = 1e12
ROUNDING_TOLERANCE = 1e-8
"""Relative error the cost rounding may hide for CP-SAT's ``optimal`` to stand
(ten times below the benchmark's gap tolerance of 1e-7)."""


def _genes_from_counts(problem: BatchSizeInput, per_node: dict[tuple[int, int], int]) -> IntArray:
    """A genome from GPU counts per (job, server), filling servers in GPU order."""
    genes = np.full(problem.n_gpus, -1, np.int64)
    starts = np.concatenate([[0], np.cumsum(problem.node_sizes)])
    used = np.zeros(problem.n_nodes, np.int64)
    for (j, node), count in sorted(per_node.items()):
        a = int(starts[node] + used[node])
        genes[a : a + count] = j
        used[node] += count
    return genes


def solve_separable(problem: BatchSizeInput) -> BatchSizeResult:
    """Exact F when placement cannot matter, via the knapsack DP (raises otherwise)."""
    if not problem.separable:
        raise ValueError(
            "solve_separable needs a separable instance (see BatchSizeInput.separable)"
        )
    start = time.perf_counter()
    groups = []
    for j in range(problem.n_jobs):
        c = np.arange(1, problem.max_gpus[j] + 1)
        util = problem.cost[j, c, 0] * problem.work[j]
        value = problem.wait_penalty + problem.idle_penalty * c - util
        groups.append([(int(w), float(v)) for w, v in zip(c, value, strict=True)])
    solution = solve_dp(groups, problem.n_gpus)
    # Separable: any placement of the counts has the same F; fill servers in order.
    genes = np.full(problem.n_gpus, -1, np.int64)
    at = 0
    for j, item in enumerate(solution.choice):
        if item is not None:
            genes[at : at + item + 1] = j
            at += item + 1
    return make_result(problem, genes, Status.OPTIMAL, time.perf_counter() - start, "exact")


def solve_cpsat(problem: BatchSizeInput, time_limit: float, seed: int = 0) -> BatchSizeResult:
    """Exact F with the cross-node penalty by CP-SAT (``time_limit`` honest).

    Variables: w[j, c, s] one-hot (at most one) over GPU count c and spread s
    (s = 0 only if c fits the largest server), x[j, n] GPUs of job j on
    server n, z[j, n] = [x > 0]; a packed job (s = 0) uses one server.
    Costs are scaled to integers (``COST_SCALE`` over the largest |cost|);
    the reported F is recomputed in floating point from the schedule, and
    ``optimal`` is reported only when the rounding cannot hide a better
    schedule by more than ``ROUNDING_TOLERANCE`` (relative), else
    ``feasible``. Model size O(J * cap * 2 + J * servers).
    """
    from ortools.sat.python import cp_model

    from scheduling_opt import exact as backends

    start = time.perf_counter()
    m = cp_model.CpModel()
    sizes = [int(s) for s in problem.node_sizes]
    biggest = max(sizes)
    options: dict[tuple[int, int, int], float] = {}
    for j in range(problem.n_jobs):
        for c in range(1, int(problem.max_gpus[j]) + 1):
            for s in (0, 1) if problem.n_nodes > 1 else (0,):
                if s == 0 and c > biggest:
                    continue
                util = float(problem.cost[j, c, s] * problem.work[j])
                options[j, c, s] = util - problem.idle_penalty * c - problem.wait_penalty
    scale = COST_SCALE / max([abs(v) for v in options.values()] + [1e-12])
    w = {key: m.new_bool_var(f"w{key}") for key in options}
    x: dict[tuple[int, int], cp_model.IntVar] = {}
    for j in range(problem.n_jobs):
        mine = [key for key in options if key[0] == j]
        m.add(sum(w[k] for k in mine) <= 1)
        gpus = sum(k[1] * w[k] for k in mine)
        z = []
        for n, size in enumerate(sizes):
            x[j, n] = m.new_int_var(0, min(size, int(problem.max_gpus[j])), f"x{j},{n}")
            zn = m.new_bool_var(f"z{j},{n}")
            m.add(x[j, n] <= size * zn)
            z.append(zn)
        m.add(sum(x[j, n] for n in range(len(sizes))) == gpus)
        packed = sum(w[k] for k in mine if k[2] == 0)
        m.add(sum(z) <= 1 + (len(sizes) - 1) * (1 - packed))
    for n, size in enumerate(sizes):
        m.add(sum(x[j, n] for j in range(problem.n_jobs)) <= size)
    m.minimize(sum(round(v * scale) * w[k] for k, v in options.items()))
    start_genes = greedy(problem)
    _hint(problem, m, w, x, start_genes)
    outcome = backends.solve_cpsat(m, time_limit=time_limit, seed=seed)
    if not outcome.has_solution:
        # Stopped before any solution: report the hint (greedy), honestly labeled.
        genes = start_genes
    else:
        counts = {key: int(outcome.solver.value(v)) for key, v in x.items()}
        genes = _genes_from_counts(problem, {k: v for k, v in counts.items() if v})
    status = outcome.status
    result = make_result(problem, genes, status, time.perf_counter() - start, "exact")
    # CP-SAT proved the model with costs rounded to integers. Each of at most
    # J chosen options is off by <= 0.5 / scale, so the true optimum lies
    # within J / scale of this answer: call it optimal only when that is
    # below ROUNDING_TOLERANCE (relative).
    slack = problem.n_jobs / scale
    objective = result.objective if result.objective is not None else 0.0
    if status == Status.OPTIMAL and slack > ROUNDING_TOLERANCE * max(abs(objective), 1.0):
        result = make_result(problem, genes, Status.FEASIBLE, result.seconds, "exact")
    return result


def _hint(
    problem: BatchSizeInput,
    m: cp_model.CpModel,
    w: dict[tuple[int, int, int], cp_model.IntVar],
    x: dict[tuple[int, int], cp_model.IntVar],
    genes: IntArray,
) -> None:
    """Start CP-SAT from a feasible schedule (the greedy one): a first incumbent."""
    c, spread = counts(problem, genes[None, :])
    for (j, cc, s), var in w.items():
        m.add_hint(var, int(c[0, j] == cc and spread[0, j] == s))
    for (j, n), var in x.items():
        on = np.count_nonzero((genes == j) & (problem.node_of == n))
        m.add_hint(var, int(on))


def solve_exact(problem: BatchSizeInput, time_limit: float, seed: int = 0) -> BatchSizeResult:
    """The knapsack DP when separable, else CP-SAT."""
    if problem.separable:
        return solve_separable(problem)
    return solve_cpsat(problem, time_limit, seed)


def solve_brute_force(problem: BatchSizeInput, chunk: int = 65536) -> BatchSizeResult:
    """Every genome in (J + 1)^G; refuses more than :data:`BRUTE_FORCE_LIMIT`."""
    total = (problem.n_jobs + 1) ** problem.n_gpus
    if total > BRUTE_FORCE_LIMIT:
        raise InstanceTooLargeError(
            "cluster", f"brute force over {total} genomes exceeds {BRUTE_FORCE_LIMIT}"
        )
    start = time.perf_counter()
    best, best_f = np.full(problem.n_gpus, -1, np.int64), np.inf
    values = range(-1, problem.n_jobs)
    it = itertools.product(values, repeat=problem.n_gpus)
    while True:
        block = np.array(list(itertools.islice(it, chunk)), np.int64)
        if not len(block):
            break
        block = block.reshape(-1, problem.n_gpus)
        ok = np.ones(len(block), bool)
        for j in range(problem.n_jobs):
            ok &= (block == j).sum(axis=1) <= problem.max_gpus[j]
        if not ok.any():
            continue
        f = objective(problem, block[ok])
        i = int(np.argmin(f))
        if f[i] < best_f:
            best, best_f = block[ok][i], float(f[i])
    return make_result(problem, best, Status.OPTIMAL, time.perf_counter() - start, "brute-force")
