"""Exact ``batch-size`` (the ``exact`` method): the knapsack DP or CP-SAT, whichever proves.

Separable case (one server, or no job pays for spanning servers): F is a sum
over jobs of a function of c_j alone plus a term linear in sum_j c_j, so the
optimum is a multiple-choice knapsack over GPU counts (group j: items c =
1..cap_j of weight c; choosing none = waiting), solved by the exact DP of
:func:`scheduling_opt.mckp.dp`; pseudo-polynomial, O(J cap G). With the
cross-node penalty: a CP-SAT model over (c_j, spread_j) choices and per-server
GPU counts, started from the greedy schedule (exponential worst case; the
64-GPU, 16-server benchmark instances are proved in about 1 s; a time limit
is reported as ``time_limit`` with CP-SAT's bound). Brute force over all
(J + 1)^G genomes checks both on tiny instances. ONES §3.2.1 (the objective).
"""

from __future__ import annotations

import itertools
import time
from typing import TYPE_CHECKING

import numpy as np
from numpy.typing import NDArray

from scheduling_opt.batch_size.bounds import lower_bound
from scheduling_opt.batch_size.cpsat_terms import COST_SCALE, ROUNDING_TOLERANCE, stop_message
from scheduling_opt.batch_size.dp import knapsack_relaxation, place
from scheduling_opt.batch_size.evaluate import counts, objective, solution_of
from scheduling_opt.batch_size.exact_patterns import exact_patterns, patterns_apply
from scheduling_opt.batch_size.model import BatchSizeInput, Schedule
from scheduling_opt.batch_size.operators import greedy_genes
from scheduling_opt.errors import InstanceTooLargeError
from scheduling_opt.mckp import as_mckp, dp
from scheduling_opt.solution import Seed, Solution, Status, as_rng, named, time_limit_of

if TYPE_CHECKING:
    from ortools.sat.python import cp_model

IntArray = NDArray[np.int64]

#: CP-SAT refuses models with more (choice + per-server) variables than this
#: (building them in Python alone would outlast any useful time limit).
MAX_CPSAT_VARIABLES = 200_000
#: CP-SAT workers of the ``exact`` method (the architecture note's default).
CPSAT_WORKERS = 8
#: Brute force refuses instances with more genomes than this.
BRUTE_FORCE_LIMIT = 2_000_000


def _genes_from_counts(inp: BatchSizeInput, per_node: dict[tuple[int, int], int]) -> IntArray:
    """A genome from GPU counts per (job, server), filling servers in GPU order."""
    genes = np.full(inp.n_gpus, -1, np.int64)
    starts = np.concatenate([[0], np.cumsum(inp.node_sizes)])
    used = np.zeros(inp.n_nodes, np.int64)
    for (j, node), count in sorted(per_node.items()):
        a = int(starts[node] + used[node])
        genes[a : a + count] = j
        used[node] += count
    return genes


def cpsat_variables(inp: BatchSizeInput) -> int:
    """Variables of :func:`exact_cpsat`'s model (choices + per-server counts), O(1).

    Examples
    --------
    >>> from scheduling_opt.batch_size.examples import tiny_input
    >>> cpsat_variables(tiny_input())
    20
    """
    return int(inp.max_gpus.sum()) * 2 + 2 * inp.n_jobs * inp.n_nodes


@named("exact-separable")
def exact_separable(
    inp: BatchSizeInput, *, seed: Seed = None, time_limit: float | None = None
) -> Solution[Schedule]:
    """Exact F when placement cannot matter, by the MCKP DP.

    Group j holds items c = 1..cap_j of weight c and value
    wait + idle * c - u_j(c); the DP's best choice is the best GPU count per
    job, and any placement of the counts has the same F (servers filled in order).

    Raises
    ------
    ValueError
        ``inp`` is not separable (``inp.separable`` is False).

    Examples
    --------
    >>> from scheduling_opt.batch_size.examples import tiny_input
    >>> inp = tiny_input()
    >>> exact_separable(inp)
    Traceback (most recent call last):
    ...
    ValueError: exact_separable needs a separable input (see BatchSizeInput.separable)

    References
    ----------
    ONES (Bian et al., SC 2021), §3.2.1; Aryl (EuroSys '22) Appendix D (the DP).
    """
    if not inp.separable:
        raise ValueError("exact_separable needs a separable input (see BatchSizeInput.separable)")
    start = time.perf_counter()
    groups = []
    for j in range(inp.n_jobs):
        c = np.arange(1, inp.max_gpus[j] + 1)
        util = inp.cost[j, c, 0] * inp.work[j]
        value = inp.wait + inp.idle * c - util
        groups.append([(int(w), float(v)) for w, v in zip(c, value, strict=True)])
    found = dp(as_mckp(groups, inp.n_gpus), seed=seed, time_limit=time_limit)
    genes = np.full(inp.n_gpus, -1, np.int64)
    if found.decision is not None:
        at = 0
        for j, item in enumerate(found.decision.choice):
            if item is not None:
                genes[at : at + item + 1] = j
                at += item + 1
    bound = None if found.status is Status.OPTIMAL else lower_bound(inp)
    return solution_of(inp, genes, found.status, start, bound=bound, message=found.message)


@named("exact-cpsat")
def exact_cpsat(
    inp: BatchSizeInput,
    *,
    seed: Seed = None,
    time_limit: float | None = None,
    workers: int = CPSAT_WORKERS,
    work_limit: float | None = None,
    start_genes: IntArray | None = None,
) -> Solution[Schedule]:
    """Exact F with the cross-node penalty by CP-SAT (time limit and bound honest).

    Variables: w[j, c, s] one-hot (at most one) over GPU count c and spread s
    (s = 0 only if c fits the largest server), x[j, n] GPUs of job j on
    server n, z[j, n] = [x > 0]; a packed job (s = 0) uses one server; a
    job whose spread cost is below its packed cost for some c (a custom
    throughput model) must put GPUs on two servers to take a spread option.
    Costs are scaled to integers (``COST_SCALE`` over the largest |cost|);
    the reported F is recomputed in floating point from the schedule, and
    ``optimal`` is reported only when the rounding cannot hide a better
    schedule by more than ``ROUNDING_TOLERANCE`` (relative), else
    ``feasible``. The bound is CP-SAT's, less the rounding slack, and never
    below :func:`~scheduling_opt.batch_size.bounds.lower_bound`. Model size
    O(J * cap * 2 + J * servers). ``workers``: CP-SAT's worker count (8 by
    default, in CP-SAT's deterministic interleaved search: same seed, same
    schedule). ``work_limit``: a budget in CP-SAT's deterministic time
    (:func:`scheduling_opt.exact.solve_cpsat`), independent of the load;
    stopped by it the run reports ``time_limit`` like a wall-clock stop.
    ``start_genes``: the hint and fallback schedule (a genome, -1 = idle);
    None: the greedy fill's, computed here (``auto`` passes the one it has).

    Examples
    --------
    >>> from scheduling_opt.batch_size.examples import tiny_input
    >>> sol = exact_cpsat(tiny_input(), time_limit=10)
    >>> sol.status.value, sol.decision.gpus
    ('optimal', (2, 2))

    References
    ----------
    ONES (Bian et al., SC 2021), §3.2.1 (Eq. 3) with the cross-node term of §2.2.
    """
    start = time.perf_counter()  # before the imports: loading OR-Tools takes ~0.7 s once
    from ortools.sat.python import cp_model

    from scheduling_opt import exact as backends

    limit = time_limit_of(time_limit)
    size = cpsat_variables(inp)
    if size > MAX_CPSAT_VARIABLES:
        raise InstanceTooLargeError(
            "jobs",
            f"the CP-SAT model would have {size} variables; exact handles at most "
            f"{MAX_CPSAT_VARIABLES} (fewer jobs or servers, or a separable instance)",
        )
    # The greedy schedule first: the incumbent when time runs out while building.
    if start_genes is None:
        start_genes = greedy_genes(inp, start + limit)
    m = cp_model.CpModel()
    sizes = [int(s) for s in inp.node_sizes]
    biggest = max(sizes)
    options: dict[tuple[int, int, int], float] = {}
    per_job: list[list[tuple[int, int, int]]] = []
    for j in range(inp.n_jobs):
        mine = []
        for c in range(1, int(inp.max_gpus[j]) + 1):
            for s in (0, 1) if inp.n_nodes > 1 else (0,):
                if s == 0 and c > biggest:
                    continue
                util = float(inp.cost[j, c, s] * inp.work[j])
                options[j, c, s] = util - inp.idle * c - inp.wait
                mine.append((j, c, s))
        per_job.append(mine)
    scale = COST_SCALE / max([abs(v) for v in options.values()] + [1e-12])
    w = {key: m.new_bool_var(f"w{key}") for key in options}
    x: dict[tuple[int, int], cp_model.IntVar] = {}
    for j, mine in enumerate(per_job):
        if time.perf_counter() - start > limit:
            return _out_of_time(inp, start_genes, start)
        m.add(sum(w[k] for k in mine) <= 1)
        gpus = sum(k[1] * w[k] for k in mine)
        z = []
        for n, size in enumerate(sizes):
            x[j, n] = m.new_int_var(0, min(size, int(inp.max_gpus[j])), f"x{j},{n}")
            zn = m.new_bool_var(f"z{j},{n}")
            m.add(x[j, n] <= size * zn)
            z.append(zn)
        m.add(sum(x[j, n] for n in range(len(sizes))) == gpus)
        packed = sum(w[k] for k in mine if k[2] == 0)
        m.add(sum(z) <= 1 + (len(sizes) - 1) * (1 - packed))
        if any(k[2] == 1 and options[k] < options.get((j, k[1], 0), -np.inf) for k in mine):
            # Spread is cheaper than packed for some count of this job (a
            # custom throughput model): the spread cost must then be earned by
            # GPUs on two servers at least, or CP-SAT would "spread" on one
            # server and prove a value no schedule has. Only then: the models
            # of every other input stay as they were (same proofs, same answers).
            spread = sum(w[k] for k in mine if k[2] == 1)
            for n in range(len(sizes)):
                m.add(x[j, n] >= z[n])
            m.add(sum(z) >= 2 * spread)
    for n, size in enumerate(sizes):
        m.add(sum(x[j, n] for j in range(inp.n_jobs)) <= size)
    m.minimize(sum(round(v * scale) * w[k] for k, v in options.items()))
    _hint(inp, m, w, x, start_genes)
    # An int seed goes to CP-SAT as is (as before the one-shape refactor).
    if seed is None or isinstance(seed, int):
        cp_seed = int(seed or 0)
    else:
        cp_seed = int(as_rng(seed).integers(2**31))
    # Model building counts against the limit (CP-SAT gets what is left).
    left = limit - (time.perf_counter() - start)
    if left <= 0:
        return _out_of_time(inp, start_genes, start)
    outcome = backends.solve_cpsat(
        m, time_limit=left, seed=cp_seed, num_workers=workers, work_limit=work_limit
    )
    if not outcome.has_solution:
        # Stopped before any solution: report the hint (greedy), honestly labeled.
        genes = start_genes
    else:
        on = {key: int(outcome.solver.value(v)) for key, v in x.items()}
        genes = _genes_from_counts(inp, {k: v for k, v in on.items() if v})
    f = float(objective(inp, genes[None, :])[0])
    # CP-SAT proved the model with costs rounded to integers. Each of at most
    # J chosen options is off by <= 0.5 / scale, so the true optimum lies
    # within J / scale of this answer: call it optimal only when that is
    # below ROUNDING_TOLERANCE (relative).
    slack = inp.n_jobs / scale
    status = outcome.status
    if status is Status.OPTIMAL and slack > ROUNDING_TOLERANCE * max(abs(f), 1.0):
        status = Status.FEASIBLE
    if status is not Status.OPTIMAL:
        # Stopped early, CP-SAT may hold a worse incumbent than its hint (seen
        # at 96 GPUs in 1 s: 15x the greedy F): never answer worse than greedy.
        f_start = float(objective(inp, start_genes[None, :])[0])
        if f_start < f:
            genes, f = start_genes, f_start
    bound: float | None = lower_bound(inp)
    if outcome.bound is not None:
        constant = inp.wait * inp.n_jobs + inp.idle * inp.n_gpus
        proven = constant + (outcome.bound - 0.5 * inp.n_jobs) / scale
        bound = max(bound, proven) if bound is not None else proven
    if status is Status.OPTIMAL:
        bound = f
    bound = None if bound is None else min(bound, f)
    message = stop_message(outcome, work_limit) if outcome.status is Status.TIME_LIMIT else ""
    return solution_of(inp, genes, status, start, bound=bound, message=message)


def _out_of_time(inp: BatchSizeInput, genes: IntArray, start: float) -> Solution[Schedule]:
    """The greedy schedule, labeled ``time_limit``, when the limit struck while building."""
    f = float(objective(inp, genes[None, :])[0])
    return solution_of(
        inp,
        genes,
        Status.TIME_LIMIT,
        start,
        bound=min(lower_bound(inp), f),
        message="time limit: reached while building the CP-SAT model (greedy schedule)",
    )


def _hint(
    inp: BatchSizeInput,
    m: cp_model.CpModel,
    w: dict[tuple[int, int, int], cp_model.IntVar],
    x: dict[tuple[int, int], cp_model.IntVar],
    genes: IntArray,
) -> None:
    """Start CP-SAT from a feasible schedule (the greedy one): a first incumbent."""
    c, spread = counts(inp, genes[None, :])
    for (j, cc, s), var in w.items():
        m.add_hint(var, int(c[0, j] == cc and spread[0, j] == s))
    busy = genes >= 0
    on = np.zeros((inp.n_jobs, inp.n_nodes), np.int64)
    np.add.at(on, (genes[busy], inp.node_of[busy]), 1)
    for (j, n), var in x.items():
        m.add_hint(var, int(on[j, n]))


@named("exact")
def exact(
    inp: BatchSizeInput,
    *,
    seed: Seed = None,
    time_limit: float | None = None,
    work_limit: float | None = None,
) -> Solution[Schedule]:
    """Proven-optimal schedule: the knapsack DP when separable, else a certificate or CP-SAT.

    In order: a separable input runs the knapsack DP
    (:func:`exact_separable`); else the integer knapsack relaxation's
    choice, placed (:func:`~scheduling_opt.batch_size.dp.knapsack_relaxation`,
    O(J cap G)), is returned as ``optimal`` when it meets its own bound (it
    did in 1,001 of the 1,033 rounds of ``ones-exact`` on the full ONES
    workload); else CP-SAT on the pattern model
    (:func:`~scheduling_opt.batch_size.exact_patterns.exact_patterns`, one
    worker) when it applies, else on the per-server model
    (:func:`exact_cpsat`).

    Parameters
    ----------
    inp : BatchSizeInput
        The round.
    seed : int, numpy.random.Generator or None
        CP-SAT's random seed (the DPs are deterministic).
    time_limit : float or None
        Seconds (None: the library default); CP-SAT stopped by it reports
        ``time_limit`` with its incumbent (at worst the greedy schedule) and bound.
    work_limit : float or None
        A budget in CP-SAT's deterministic time (``max_deterministic_time``)
        beside ``time_limit``: a run that stops at it stops at the same point
        on any load (``time_limit`` status, ``message`` naming the budget),
        so with a ``time_limit`` that does not strike, the same input and
        seed give the same schedule.

    Returns
    -------
    Solution of Schedule
        ``optimal`` with ``bound == objective``, or ``time_limit``/``feasible``
        with a proven lower bound.

    Examples
    --------
    >>> from scheduling_opt.batch_size.examples import tiny_input
    >>> sol = exact(tiny_input())
    >>> sol.status.value, sol.decision.gpus, sol.gap
    ('optimal', (2, 2), 0.0)

    References
    ----------
    ONES (Bian et al., SC 2021), §3.2.1.
    """
    start = time.perf_counter()
    limit = time_limit_of(time_limit)
    if inp.separable:
        found = exact_separable(inp, seed=seed, time_limit=time_limit)
        if found.status is Status.OPTIMAL:
            return found
        remaining = limit - (time.perf_counter() - start)
        if remaining <= 0:
            return found
        time_limit = remaining
    elif inp.n_jobs:
        relaxed = knapsack_relaxation(inp, start + limit)
        genes = None if relaxed is None else place(inp, relaxed.gpus, relaxed.packed)
        if relaxed is not None and genes is not None:
            f = float(objective(inp, genes[None, :])[0])
            if f - relaxed.bound <= ROUNDING_TOLERANCE * max(abs(relaxed.bound), 1.0):
                sol = solution_of(
                    inp, genes, Status.OPTIMAL, start, message="exact: knapsack relaxation placed"
                )
                return sol.with_(bound=sol.objective)
        time_limit = max(limit - (time.perf_counter() - start), 1e-3)
    if patterns_apply(inp):
        sol = exact_patterns(inp, seed=seed, time_limit=time_limit, work_limit=work_limit)
    else:
        sol = exact_cpsat(inp, seed=seed, time_limit=time_limit, work_limit=work_limit)
    return sol.with_(seconds=time.perf_counter() - start)


def brute_force(inp: BatchSizeInput, chunk: int = 65536) -> Solution[Schedule]:
    """Every genome in (J + 1)^G (tests); refuses more than :data:`BRUTE_FORCE_LIMIT`.

    Raises
    ------
    InstanceTooLargeError
        More than :data:`BRUTE_FORCE_LIMIT` genomes.

    Examples
    --------
    >>> from scheduling_opt.batch_size.examples import tiny_input
    >>> brute_force(tiny_input()).decision.gpus
    (2, 2)
    """
    total = (inp.n_jobs + 1) ** inp.n_gpus
    if total > BRUTE_FORCE_LIMIT:
        raise InstanceTooLargeError(
            "cluster", f"brute force over {total} genomes exceeds {BRUTE_FORCE_LIMIT}"
        )
    start = time.perf_counter()
    best, best_f = np.full(inp.n_gpus, -1, np.int64), np.inf
    it = itertools.product(range(-1, inp.n_jobs), repeat=inp.n_gpus)
    while True:
        block = np.array(list(itertools.islice(it, chunk)), np.int64)
        if not len(block):
            break
        block = block.reshape(-1, inp.n_gpus)
        ok = np.ones(len(block), bool)
        for j in range(inp.n_jobs):
            ok &= (block == j).sum(axis=1) <= inp.max_gpus[j]
        if not ok.any():
            continue
        f = objective(inp, block[ok])
        i = int(np.argmin(f))
        if f[i] < best_f:
            best, best_f = block[ok][i], float(f[i])
    return solution_of(inp, best, Status.OPTIMAL, start)
