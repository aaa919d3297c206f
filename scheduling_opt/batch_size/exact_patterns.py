"""Exact ``batch-size`` by CP-SAT on server patterns: no per-server variables, no symmetry.

F = wait * J + idle * G + sum_j v_j(c_j, s_j) (ONES §3.2.1, Eq. 3 with the
cross-node term of §2.2; :mod:`~scheduling_opt.batch_size.dp`). What the
placement decides is only which running jobs are *packed* (on one server);
a spread job may use any free GPUs. Packed jobs of sizes k fit the servers
iff each server can be given a partition of its size (a *pattern*: the
packed loads a server holds, padded with 1-GPU slots up to its size) so
that, for every k, the patterns hold at least as many k-slots as there are
packed jobs of size k: a server's packed jobs always form a sub-multiset
of some partition of its size. So the model is

- w[j, c, s] one-hot (at most one) over GPU count c and packed (s = 0, c
  fits a server) or spread (s = 1, c >= 2);
- y[z, p] = servers of size z given partition p (sum_p y[z, p] <= servers
  of size z);
- for every k: packed jobs of size k <= sum_{z, p} (k-slots of p) y[z, p];
- sum_j c_j <= G;

minimizing sum v_j(c, s) w[j, c, s]. Every schedule maps to a solution of
equal value, so the model's optimum is a lower bound on F; its solution is
placed (each packed job on a server whose pattern has its slot, spread
jobs on the GPUs left in GPU order), and when a spread job never costs less
than packed (:func:`patterns_apply`) the placed F is at most the model's
value, hence optimal when CP-SAT proves the model. The claim is checked:
``optimal`` only when the placed F meets the proven bound.

Against :func:`~scheduling_opt.batch_size.exact_cpsat`'s per-server model
(x[j, n], z[j, n]: O(J servers) variables, and every permutation of equal
servers is another solution), this one has O(J cap + sum_z p(z))
variables (p(4) = 5, p(8) = 22 partitions) and no server symmetry. On the
1,033 rounds of ``ones-exact`` on the full ONES workload (16 x 4 GPUs, up
to 24 jobs) one CP-SAT worker with ``linearization_level`` 2 proved every
round in at most 0.07 units of deterministic time (5.3 s of CPU in all),
where the per-server model stopped 58 rounds at its 1-s limit and did not
prove one of them in 20 units (27 s of CPU). One worker, without
``interleave_search``, is CP-SAT's sequential search: same model, seed and
work budget, same answer on every run; CP-SAT's interleaved portfolio spent
about 3 units (10-17 s of CPU) on the hardest of those rounds, since every
full subsolver runs chunks of 1 unit before its bound is shared.
Complexity: building O(J cap + sum_z p(z) z); CP-SAT exponential in the
worst case, stopped by ``work_limit`` (deterministic) or ``time_limit``.
"""

from __future__ import annotations

import functools
import time
from typing import TYPE_CHECKING

import numpy as np

from scheduling_opt.batch_size.bounds import lower_bound
from scheduling_opt.batch_size.cpsat_terms import COST_SCALE, ROUNDING_TOLERANCE, stop_message
from scheduling_opt.batch_size.dp import option_values
from scheduling_opt.batch_size.evaluate import counts, objective, solution_of
from scheduling_opt.batch_size.model import BatchSizeInput, IntArray, Schedule
from scheduling_opt.batch_size.operators import greedy_genes
from scheduling_opt.solution import Seed, Solution, Status, as_rng, time_limit_of

if TYPE_CHECKING:
    from ortools.sat.python import cp_model

#: Most patterns (partitions summed over the distinct server sizes) the model
#: takes: p(16) = 231, p(24) = 1,575; larger servers use the per-server model.
MAX_PATTERNS = 2_000
#: CP-SAT's ``linearization_level`` for this model: with one worker, level 1
#: (CP-SAT's default) left rounds unproven after 8-15 units that level 2
#: proves in at most 0.07 (the module docstring's runs).
LINEARIZATION_LEVEL = 2


@functools.lru_cache(maxsize=64)
def partitions(z: int) -> tuple[tuple[int, ...], ...]:
    """The partitions of ``z`` (parts in decreasing order), largest first part first.

    Examples
    --------
    >>> partitions(4)
    ((4,), (3, 1), (2, 2), (2, 1, 1), (1, 1, 1, 1))
    >>> [len(partitions(z)) for z in (1, 2, 3, 8, 16)]
    [1, 2, 3, 22, 231]
    """
    out: list[tuple[int, ...]] = []

    def rec(left: int, most: int, head: tuple[int, ...]) -> None:
        if left == 0:
            out.append(head)
            return
        for k in range(min(left, most), 0, -1):
            rec(left - k, k, (*head, k))

    rec(z, z, ())
    return tuple(out)


def pattern_count(inp: BatchSizeInput) -> int:
    """Patterns of the model: sum over distinct server sizes z of p(z), without enumerating.

    Examples
    --------
    >>> from scheduling_opt.batch_size.examples import tiny_input
    >>> pattern_count(tiny_input())  # servers of 2 GPUs: (2,), (1, 1)
    2
    """
    return sum(_partition_number(int(z)) for z in np.unique(inp.node_sizes))


@functools.lru_cache(maxsize=256)
def _partition_number(z: int) -> int:
    """p(z) by the standard DP over the largest part, O(z^2)."""
    ways = [1] + [0] * z
    for part in range(1, z + 1):
        for total in range(part, z + 1):
            ways[total] += ways[total - part]
    return ways[z]


def patterns_apply(inp: BatchSizeInput) -> bool:
    """Whether the pattern model is exact and small here.

    It needs a spread option never cheaper than the packed one of the same
    count (else a "spread" job placed on one server would cost more than the
    model says) and at most :data:`MAX_PATTERNS` patterns. O(J cap).

    Examples
    --------
    >>> from scheduling_opt.batch_size.examples import tiny_input
    >>> patterns_apply(tiny_input())
    True
    """
    if pattern_count(inp) > MAX_PATTERNS:
        return False
    v0, v1 = option_values(inp)
    both = np.isfinite(v0) & np.isfinite(v1)
    both[:, 0] = False
    return bool(np.all(v1[both] >= v0[both]))


def exact_patterns(
    inp: BatchSizeInput,
    *,
    seed: Seed = None,
    time_limit: float | None = None,
    work_limit: float | None = None,
    start_genes: IntArray | None = None,
) -> Solution[Schedule]:
    """Exact F by CP-SAT on the pattern model (one worker: deterministic).

    Parameters
    ----------
    inp : BatchSizeInput
        The round; :func:`patterns_apply` must hold.
    seed : int, numpy.random.Generator or None
        CP-SAT's random seed.
    time_limit : float or None
        Seconds on the clock (None: the library default), building included.
    work_limit : float or None
        A budget in CP-SAT's deterministic time (``max_deterministic_time``):
        a stop by it does not depend on the machine's load.
    start_genes : numpy.ndarray or None
        The hint and fallback schedule (a genome, -1 idle); None: the greedy
        fill's.

    Returns
    -------
    Solution of Schedule
        ``optimal`` when CP-SAT proved the model, the cost rounding cannot
        hide a better schedule (``exact_cpsat``'s rule) and the placed F
        meets the bound; else ``time_limit`` (``message`` says whether the
        work budget or the clock stopped it) with the better of CP-SAT's
        incumbent and the start schedule, and the best proven bound.

    Raises
    ------
    ValueError
        :func:`patterns_apply` is False for ``inp``.

    Examples
    --------
    >>> from scheduling_opt.batch_size.examples import tiny_input
    >>> sol = exact_patterns(tiny_input(), work_limit=1.0)
    >>> sol.status.value, sol.decision.gpus
    ('optimal', (2, 2))

    References
    ----------
    ONES (Bian et al., SC 2021), §3.2.1 (Eq. 3) with the cross-node term of
    §2.2; the pattern (configuration) formulation of bin packing, Gilmore
    and Gomory (1961).
    """
    start = time.perf_counter()
    from scheduling_opt import exact as backends

    if not patterns_apply(inp):
        raise ValueError("exact_patterns needs patterns_apply(inp) (spread never cheaper)")
    limit = time_limit_of(time_limit)
    if start_genes is None:
        start_genes = greedy_genes(inp, start + limit)
    model, w, y, scale = _build(inp)
    _hint(inp, model, w, y, start_genes)
    if seed is None or isinstance(seed, int):
        cp_seed = int(seed or 0)
    else:
        cp_seed = int(as_rng(seed).integers(2**31))
    outcome = backends.solve_cpsat(
        model,
        time_limit=limit,
        seed=cp_seed,
        num_workers=1,
        started=start,
        work_limit=work_limit,
        linearization_level=LINEARIZATION_LEVEL,
    )
    if outcome.has_solution:
        chosen = {key: int(outcome.solver.value(v)) for key, v in w.items()}
        pats = {key: int(outcome.solver.value(v)) for key, v in y.items()}
        genes = _place(inp, [k for k, on in chosen.items() if on], pats)
    else:
        genes = start_genes
    f = float(objective(inp, genes[None, :])[0])
    status = outcome.status
    slack = inp.n_jobs / scale
    if status is Status.OPTIMAL and slack > ROUNDING_TOLERANCE * max(abs(f), 1.0):
        status = Status.FEASIBLE
    bound: float | None = lower_bound(inp)
    if outcome.bound is not None:
        constant = inp.wait * inp.n_jobs + inp.idle * inp.n_gpus
        proven = constant + (outcome.bound - 0.5 * inp.n_jobs) / scale
        bound = max(bound, proven) if bound is not None else proven
    if status is Status.OPTIMAL and bound is not None:
        if f - bound > ROUNDING_TOLERANCE * max(abs(bound), 1.0):
            status = Status.FEASIBLE  # the placement missed the model's value (not expected)
        else:
            bound = f
    message = ""
    if status is not Status.OPTIMAL:
        f_start = float(objective(inp, start_genes[None, :])[0])
        if f_start < f:
            genes, f = start_genes, f_start
        if outcome.status is Status.TIME_LIMIT:
            message = stop_message(outcome, work_limit)
    bound = None if bound is None else min(bound, f)
    return solution_of(inp, genes, status, start, bound=bound, message=message)


def _options(inp: BatchSizeInput) -> dict[tuple[int, int, int], float]:
    """v_j(c, s) of every allowed (job, count, spread flag)."""
    v0, v1 = option_values(inp)
    out: dict[tuple[int, int, int], float] = {}
    for j in range(inp.n_jobs):
        for c in range(1, int(inp.max_gpus[j]) + 1):
            for s, v in ((0, v0[j, c]), (1, v1[j, c])):
                if np.isfinite(v):
                    out[j, c, s] = float(v)
    return out


def _build(
    inp: BatchSizeInput,
) -> tuple[
    cp_model.CpModel,
    dict[tuple[int, int, int], cp_model.IntVar],
    dict[tuple[int, int], cp_model.IntVar],
    float,
]:
    """The model, its option and pattern variables, and the cost scale."""
    from ortools.sat.python import cp_model

    options = _options(inp)
    scale = COST_SCALE / max([abs(v) for v in options.values()] + [1e-12])
    m = cp_model.CpModel()
    w = {key: m.new_bool_var(f"w{key}") for key in options}
    per_job: dict[int, list[cp_model.IntVar]] = {}
    for key, var in w.items():
        per_job.setdefault(key[0], []).append(var)
    for vars_ in per_job.values():
        m.add_at_most_one(vars_)
    m.add(sum(key[1] * var for key, var in w.items()) <= inp.n_gpus)
    y: dict[tuple[int, int], cp_model.IntVar] = {}
    slots: dict[int, list[cp_model.LinearExprT]] = {}
    for z in np.unique(inp.node_sizes).tolist():
        servers = int((inp.node_sizes == z).sum())
        here = []
        for p, parts in enumerate(partitions(int(z))):
            y[int(z), p] = var = m.new_int_var(0, servers, f"y{z},{p}")
            here.append(var)
            for k in set(parts):
                slots.setdefault(k, []).append(parts.count(k) * var)
        m.add(sum(here) <= servers)
    for k in sorted({key[1] for key in options if key[2] == 0}):
        m.add(sum(var for key, var in w.items() if key[1] == k and key[2] == 0) <= sum(slots[k]))
    m.minimize(sum(round(v * scale) * w[key] for key, v in options.items()))
    return m, w, y, scale


def _hint(
    inp: BatchSizeInput,
    m: cp_model.CpModel,
    w: dict[tuple[int, int, int], cp_model.IntVar],
    y: dict[tuple[int, int], cp_model.IntVar],
    genes: IntArray,
) -> None:
    """Start CP-SAT from a schedule: its options and each server's packed loads as a pattern."""
    c, spread = counts(inp, genes[None, :])
    for (j, cc, s), var in w.items():
        m.add_hint(var, int(c[0, j] == cc and spread[0, j] == s))
    packed = {j for j in range(inp.n_jobs) if c[0, j] > 0 and spread[0, j] == 0}
    used = dict.fromkeys(y, 0)
    for n in range(inp.n_nodes):
        on = genes[inp.node_of == n]
        loads = sorted(
            (int((on == j).sum()) for j in set(on.tolist()) if j in packed), reverse=True
        )
        size = int(inp.node_sizes[n])
        parts = tuple(loads) + (1,) * (size - sum(loads))
        used[size, partitions(size).index(parts)] += 1
    for key, var in y.items():
        m.add_hint(var, used[key])


def _place(
    inp: BatchSizeInput, chosen: list[tuple[int, int, int]], pats: dict[tuple[int, int], int]
) -> IntArray:
    """A genome of the model's solution: packed jobs in their patterns' slots, spread on the rest.

    Servers of each size take the chosen patterns in input order; each
    packed job of size k (in job order) takes the next free k-slot, on the
    server's next free GPUs; spread jobs then take the idle GPUs in GPU order.
    """
    starts = np.concatenate([[0], np.cumsum(inp.node_sizes)[:-1]])
    free_slots: dict[int, list[int]] = {}
    for z in np.unique(inp.node_sizes).tolist():
        servers = np.flatnonzero(inp.node_sizes == z).tolist()
        at = 0
        for p, parts in enumerate(partitions(int(z))):
            for _ in range(pats[int(z), p]):
                for k in parts:
                    free_slots.setdefault(k, []).append(servers[at])
                at += 1
    genes = np.full(inp.n_gpus, -1, np.int64)
    load = np.zeros(inp.n_nodes, np.int64)
    for j, c, s in sorted(chosen):
        if s == 0:
            n = free_slots[c].pop(0)
            a = int(starts[n] + load[n])
            genes[a : a + c] = j
            load[n] += c
    idle = np.flatnonzero(genes < 0)
    at = 0
    for j, c, s in sorted(chosen):
        if s == 1:
            genes[idle[at : at + c]] = j
            at += c
    return genes
