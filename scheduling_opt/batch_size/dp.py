"""Exact dynamic programs for ``batch-size``: the integer knapsack relaxation and the server DP.

F = wait * J + idle * G + sum_j v_j(c_j, s_j) with v_j(c, s) = u_j(c, s) -
wait - idle * c for a running job (0 when it waits), s = 1 when its GPUs
span servers (ONES §3.2.1, Eq. 3 with the cross-node term of §2.2;
docs/batch-size.md). Two exact programs over the GPU counts c_j:

- :func:`knapsack_relaxation`: the *integer* multiple-choice knapsack with
  the placement relaxed (each job its cheaper spread flag for c, packed
  only if c fits a server; sum_j c_j <= G). Its optimum is a proven lower
  bound on F, at least as tight as the LP bound of
  :func:`~scheduling_opt.batch_size.bounds.lower_bound`; O(J cap G).
  When its own choice can be placed (:func:`place`: every job that took a
  packed cost on one server, best-fit decreasing) the placed schedule has
  F equal to the bound, hence is optimal.
- :func:`server_dp`: exact with the placement: over jobs, the state is the
  multiset of per-server GPUs taken by packed jobs (servers of one size are
  interchangeable, so sorted loads per size) and the total GPUs taken; a
  spread job only needs total room (it may use any free GPUs). Every
  schedule is a path of this DP with the same F, and every path is placed
  by putting packed jobs on servers with the recorded loads and spread
  jobs on the GPUs left, so its optimum is F* whenever a spread job never
  costs less than packed (then landing on one server does not raise F);
  the caller compares the placed F with the DP value before claiming
  anything. O(J S (G + 1) cap) for S = prod over server sizes z of
  C(n_z + z, z) multisets (15 at 2 servers of 4 GPUs, 70 at 4, 4,845 at 16):
  :func:`server_dp_work` estimates it before anything is built.
"""

from __future__ import annotations

import functools
import itertools
import math
import time
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from scheduling_opt.batch_size.model import BatchSizeInput

IntArray = NDArray[np.int64]
FloatArray = NDArray[np.float64]

#: Largest estimated element work (states x (G + 1) x options summed over
#: jobs, :func:`server_dp_work`) of :func:`server_dp` that ``auto`` runs
#: before CP-SAT. Measured 2026-11-26 on generated instances (CPU): 8-10 ns
#: per element above 1e6 (g24: 1.1e6, 10 ms; g32: 4.2-4.9e6, 36 ms, against
#: CP-SAT's 124-140 ms), 0.7 ms at g8; g64 would be 2.4e8 (about 2 s, CP-SAT
#: 0.26 s). The tables take at most 8 bytes x half this work (20 MB).
SERVER_DP_MAX_WORK = 5_000_000


@dataclass(frozen=True, slots=True)
class Relaxation:
    """The integer knapsack relaxation's optimum and one choice that reaches it.

    ``bound``: a proven lower bound on F. ``gpus[j]``: c_j of the choice
    (0: waiting); ``packed[j]``: the choice took job j's packed cost and it
    is strictly cheaper than spread, so the schedule must keep j on one
    server to reach the bound.
    """

    bound: float
    gpus: IntArray
    packed: NDArray[np.bool_]


def option_values(inp: BatchSizeInput) -> tuple[FloatArray, FloatArray]:
    """v_j(c, s) for s = packed and s = spread, shape (J, max cap + 1); inf where not allowed.

    Packed needs c <= the largest server; spread needs c >= 2 and more than
    one server (one GPU never spans). Column 0 (waiting) is 0.

    Examples
    --------
    >>> from scheduling_opt.batch_size.examples import tiny_input
    >>> v0, v1 = option_values(tiny_input())
    >>> v0.shape, bool(np.isinf(v1[:, 1]).all())
    ((2, 5), True)
    """
    width = inp.cost.shape[1]
    c = np.arange(width, dtype=np.float64)
    with np.errstate(invalid="ignore"):
        util = inp.cost * inp.work[:, None, None]
    base = -inp.wait - inp.idle * c
    v0 = np.where(np.isfinite(util[:, :, 0]), util[:, :, 0] + base, np.inf)
    v1 = np.where(np.isfinite(util[:, :, 1]), util[:, :, 1] + base, np.inf)
    v0[:, int(inp.node_sizes.max()) + 1 :] = np.inf
    v1[:, :2] = np.inf
    if inp.n_nodes == 1:
        v1[:] = np.inf
    v0[:, 0] = 0.0
    v1[:, 0] = 0.0
    return v0, v1


def _constant(inp: BatchSizeInput) -> float:
    return inp.wait * inp.n_jobs + inp.idle * inp.n_gpus


def knapsack_relaxation(inp: BatchSizeInput, deadline: float = math.inf) -> Relaxation | None:
    """The integer MCKP over GPU counts with the placement relaxed, solved exactly.

    Parameters
    ----------
    inp : BatchSizeInput
        The round.
    deadline : float
        ``time.perf_counter()`` value after which it gives up (None returned).

    Returns
    -------
    Relaxation or None
        The proven bound and an optimal choice of the relaxation (ties: fewer
        GPUs for earlier jobs); None if the deadline passed.

    Examples
    --------
    >>> from scheduling_opt.batch_size.examples import tiny_input
    >>> from scheduling_opt.batch_size.bounds import lower_bound
    >>> inp = tiny_input()
    >>> r = knapsack_relaxation(inp)
    >>> r.gpus.tolist(), bool(r.bound >= lower_bound(inp) - 1e-9)
    ([2, 2], True)

    Notes
    -----
    Placement relaxed: each job's v_j(c) = min over the spread flags it may
    use. D[g] = the least sum of v over the jobs so far with exactly g GPUs;
    per job one (cap + 1) x (G + 1) table of shifted copies. O(J cap G)
    time, O(J G) memory for the choices. Pisinger and Toth's DP for the
    MCKP; ONES (Bian et al., SC 2021), §3.2.1.
    """
    v0, v1 = option_values(inp)
    best = np.minimum(v0, v1)
    g = inp.n_gpus
    d = np.full(g + 1, np.inf)
    d[0] = 0.0
    cols = np.arange(g + 1)
    choices: list[IntArray] = []
    for j in range(inp.n_jobs):
        if time.perf_counter() > deadline:
            return None
        cap = int(inp.max_gpus[j])
        shift = cols[None, :] - np.arange(cap + 1)[:, None]
        table = np.where(shift >= 0, d[np.maximum(shift, 0)] + best[j, : cap + 1, None], np.inf)
        # argmin takes the first minimum: fewer GPUs on ties (deterministic).
        pick = np.argmin(table, axis=0)
        d = table[pick, cols]
        choices.append(pick.astype(np.int64))
    used = int(np.argmin(d))
    value = float(d[used])
    gpus = np.zeros(inp.n_jobs, np.int64)
    for j in range(inp.n_jobs - 1, -1, -1):
        gpus[j] = choices[j][used]
        used -= int(gpus[j])
    rows = np.arange(inp.n_jobs)
    packed = (gpus > 0) & (v0[rows, gpus] < v1[rows, gpus])
    return Relaxation(_constant(inp) + value, gpus, packed)


def place(inp: BatchSizeInput, gpus: IntArray, packed: NDArray[np.bool_]) -> IntArray | None:
    """A genome running c_j GPUs per job with every ``packed`` job on one server, or None.

    Packed jobs go best-fit decreasing (largest first, onto the fullest
    server that holds them; a success proves the placement exists, a
    failure proves nothing); the other running jobs then take the GPUs left
    in GPU order. O(J log J + J servers + G).

    Examples
    --------
    >>> from scheduling_opt.batch_size.examples import tiny_input
    >>> inp = tiny_input()  # two servers of 2 GPUs
    >>> place(inp, np.array([2, 2]), np.array([True, True])).tolist()
    [0, 0, 1, 1]
    >>> place(inp, np.array([3, 1]), np.array([True, False])) is None
    True
    """
    if int(gpus.sum()) > inp.n_gpus:
        return None
    sizes = inp.node_sizes
    room = sizes.astype(np.int64).copy()
    starts = np.concatenate([[0], np.cumsum(sizes)[:-1]])
    genes = np.full(inp.n_gpus, -1, np.int64)
    order = sorted(np.flatnonzero(packed).tolist(), key=lambda j: (-int(gpus[j]), j))
    for j in order:
        c = int(gpus[j])
        fits = np.flatnonzero(room >= c)
        if not len(fits):
            return None
        n = int(fits[np.argmin(room[fits])])  # fullest server that holds it (first on ties)
        at = int(starts[n] + sizes[n] - room[n])
        genes[at : at + c] = j
        room[n] -= c
    free = np.flatnonzero(genes < 0)
    at = 0
    for j in np.flatnonzero((gpus > 0) & ~packed).tolist():
        c = int(gpus[j])
        genes[free[at : at + c]] = j
        at += c
    return genes


def _groups(inp: BatchSizeInput) -> tuple[tuple[int, int], ...]:
    """(server size, how many servers) per distinct size, sizes ascending."""
    sizes, many = np.unique(inp.node_sizes, return_counts=True)
    return tuple((int(z), int(k)) for z, k in zip(sizes, many, strict=True))


def server_dp_states(inp: BatchSizeInput) -> int:
    """Multisets of per-server packed loads: prod over sizes z of C(n_z + z, z). O(sizes).

    Examples
    --------
    >>> from scheduling_opt.batch_size.examples import tiny_input
    >>> server_dp_states(tiny_input())  # 2 servers of 2 GPUs: loads {0,1,2}, C(4, 2)
    6
    """
    return math.prod(math.comb(k + z, z) for z, k in _groups(inp))


def server_dp_work(inp: BatchSizeInput) -> int:
    """Estimated element work of :func:`server_dp`: states x (G + 1) x sum_j options. O(J).

    Examples
    --------
    >>> from scheduling_opt.batch_size.examples import tiny_input
    >>> server_dp_work(tiny_input())
    300
    """
    biggest = int(inp.node_sizes.max())
    options = sum(min(int(c), biggest) + max(int(c) - 1, 0) + 1 for c in inp.max_gpus)
    return server_dp_states(inp) * (inp.n_gpus + 1) * options


@dataclass(frozen=True)
class _Shape:
    """The server DP's states and packed transitions for one cluster shape (cached)."""

    states: tuple[tuple[int, ...], ...]
    groups: tuple[tuple[int, int], ...]
    # moves[c]: (src, dst, server-position in src) rows, dst ascending, plus reduceat starts.
    moves: dict[int, tuple[IntArray, IntArray, IntArray, IntArray]]


@functools.lru_cache(maxsize=16)
def _shape(groups: tuple[tuple[int, int], ...]) -> _Shape:
    """Enumerate the load multisets (sorted descending per size group) and the moves."""
    per_group = [
        [
            tuple(sorted(t, reverse=True))
            for t in itertools.combinations_with_replacement(range(z + 1), k)
        ]
        for z, k in groups
    ]
    states = tuple(tuple(itertools.chain.from_iterable(p)) for p in itertools.product(*per_group))
    index = {s: i for i, s in enumerate(states)}
    size_of = [z for z, k in groups for _ in range(k)]
    bounds = list(itertools.accumulate([0] + [k for _, k in groups]))
    biggest = max(z for z, _ in groups)
    moves: dict[int, tuple[IntArray, IntArray, IntArray, IntArray]] = {}
    for c in range(1, biggest + 1):
        rows: list[tuple[int, int, int]] = []
        for i, s in enumerate(states):
            for gi in range(len(groups)):
                seen: set[int] = set()
                for p in range(bounds[gi], bounds[gi + 1]):
                    if s[p] in seen or s[p] + c > size_of[p]:
                        continue
                    seen.add(s[p])
                    part = list(s[bounds[gi] : bounds[gi + 1]])
                    part[p - bounds[gi]] += c
                    new = s[: bounds[gi]] + tuple(sorted(part, reverse=True)) + s[bounds[gi + 1] :]
                    rows.append((index[new], i, p))
        rows.sort()
        if not rows:
            continue
        arr = np.array(rows, np.int64)
        dst, src, pos = arr[:, 0], arr[:, 1], arr[:, 2]
        starts = np.flatnonzero(np.r_[True, dst[1:] != dst[:-1]])
        moves[c] = (src, dst, pos, starts)
    return _Shape(states, groups, moves)


def server_dp(inp: BatchSizeInput, deadline: float = math.inf) -> tuple[float, IntArray] | None:
    """The exact optimum over (c_j, packed or spread) with per-server packing, and a genome.

    Parameters
    ----------
    inp : BatchSizeInput
        The round (any server sizes; the state count grows fast with the
        number of servers: check :func:`server_dp_work` first).
    deadline : float
        ``time.perf_counter()`` value after which it gives up (None returned).

    Returns
    -------
    (float, numpy.ndarray) or None
        A proven lower bound on F (the DP's optimum: equal to the optimum
        when spread never costs less than packed) and the genome of an
        optimal path, placed; None if the deadline passed.

    Examples
    --------
    >>> from scheduling_opt.batch_size.examples import tiny_input
    >>> from scheduling_opt.batch_size.evaluate import objective
    >>> inp = tiny_input()
    >>> bound, genes = server_dp(inp)
    >>> genes.tolist(), bool(abs(objective(inp, genes[None, :])[0] - bound) < 1e-6 * bound)
    ([0, 0, 1, 1], True)

    Notes
    -----
    V[m, t]: least sum of v over the jobs so far whose packed jobs load the
    servers as multiset m and whose jobs take t GPUs in all (t <= G). A job
    waits (V unchanged), runs c spread GPUs (t + c), or c packed GPUs on a
    server of load l (m with l -> l + c, t + c). The minimum over m and t
    plus wait J + idle G bounds F from below because every schedule is such
    a path with the same v. Backtracking recomputes each step's candidates
    from the stored tables (exact float equality: the same additions).
    O(J S (G + 1) cap) time and O(J S (G + 1)) memory.
    """
    v0, v1 = option_values(inp)
    shape = _shape(_groups(inp))
    n_states, g = len(shape.states), inp.n_gpus
    value = np.full((n_states, g + 1), np.inf)
    value[0, 0] = 0.0  # state 0: every server empty (all-zero loads are enumerated first)
    tables = [value]
    for j in range(inp.n_jobs):
        if time.perf_counter() > deadline:
            return None
        cap = int(inp.max_gpus[j])
        new = value.copy()
        for c in range(2, cap + 1):
            if math.isfinite(v1[j, c]):
                np.minimum(new[:, c:], value[:, : g + 1 - c] + v1[j, c], out=new[:, c:])
        for c, (src, dst, _, starts) in shape.moves.items():
            if c > cap or not math.isfinite(v0[j, c]):
                continue
            cand = value[src, : g + 1 - c] + v0[j, c]
            best = np.minimum.reduceat(cand, starts, axis=0)
            targets = dst[starts]
            new[targets, c:] = np.minimum(new[targets, c:], best)
        value = new
        tables.append(value)
    flat = int(np.argmin(value))
    m, t = divmod(flat, g + 1)
    lb = float(value[m, t])
    if not math.isfinite(lb):
        return None
    # Backtrack: per job (last first) an option that reproduces the value.
    steps: list[tuple[int, int, int]] = []  # (c, packed server position or -1 spread/wait, job)
    for j in range(inp.n_jobs - 1, -1, -1):
        before, target = tables[j], tables[j + 1][m, t]
        step = _step_back(inp, j, before, target, m, t, v0, v1, shape)
        c, pos, m = step
        t -= c
        steps.append((c, pos, j))
    steps.reverse()
    return _constant(inp) + lb, _realize(inp, shape, steps)


def _step_back(
    inp: BatchSizeInput,
    j: int,
    before: FloatArray,
    target: float,
    m: int,
    t: int,
    v0: FloatArray,
    v1: FloatArray,
    shape: _Shape,
) -> tuple[int, int, int]:
    """(c, server position of the packed move or -1, previous state) reproducing ``target``."""
    if before[m, t] == target:
        return 0, -1, m
    for c in range(2, min(int(inp.max_gpus[j]), t) + 1):
        if before[m, t - c] + v1[j, c] == target:
            return c, -1, m
    for c, (src, dst, pos, _) in shape.moves.items():
        if c > min(int(inp.max_gpus[j]), t):
            continue
        for k in np.flatnonzero(dst == m).tolist():
            if before[src[k], t - c] + v0[j, c] == target:
                return c, int(pos[k]), int(src[k])
    raise AssertionError("server_dp: no option reproduces the DP value")  # pragma: no cover


def _realize(inp: BatchSizeInput, shape: _Shape, steps: list[tuple[int, int, int]]) -> IntArray:
    """Place a DP path: packed jobs on servers whose load matches the state, spread on the rest."""
    groups = shape.groups
    # Servers of the input per size group, in input order.
    servers = {z: np.flatnonzero(inp.node_sizes == z).tolist() for z, _ in groups}
    size_of = [z for z, k in groups for _ in range(k)]
    load = np.zeros(inp.n_nodes, np.int64)
    starts = np.concatenate([[0], np.cumsum(inp.node_sizes)[:-1]])
    genes = np.full(inp.n_gpus, -1, np.int64)
    state = list(shape.states[0])
    bounds = list(itertools.accumulate([0] + [k for _, k in groups]))
    spread: list[tuple[int, int]] = []
    for c, pos, j in steps:
        if c == 0:
            continue
        if pos < 0:
            spread.append((j, c))
            continue
        # The move put c GPUs on a server of this size whose packed load was state[pos].
        z, before = size_of[pos], state[pos]
        n = next(s for s in servers[z] if load[s] == before)
        at = int(starts[n] + load[n])
        genes[at : at + c] = j
        load[n] += c
        gi = next(i for i in range(len(groups)) if bounds[i] <= pos < bounds[i + 1])
        part = state[bounds[gi] : bounds[gi + 1]]
        part[pos - bounds[gi]] += c
        state[bounds[gi] : bounds[gi + 1]] = sorted(part, reverse=True)
    free = np.flatnonzero(genes < 0)
    at = 0
    for j, c in spread:
        genes[free[at : at + c]] = j
        at += c
    return genes
