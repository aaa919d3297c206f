"""The ONES genetic operators over GPU -> job genomes (ONES §3.2.2, Figures 7-10).

A genome ``genes[g]`` is the job index on GPU g (-1 idle); a population is
a (K, G) array. Operators: fill (Figure 7, greedy by utilization gain, and
its random variant for mutation), uniform crossover (Figure 8), uniform
mutation (Figure 9), reorder (Figure 10), best-fit repacking, trim and
selection; refresh of a previous population is
:mod:`~scheduling_opt.batch_size.refresh`, the search loop
:mod:`~scheduling_opt.batch_size.search`.

Every operator keeps every job within its cap, so every genome is a valid
schedule. Fill gives a GPU only to a job whose taking it lowers F, and
:func:`trim` frees GPUs whose release lowers F: with the default penalties
neither ever leaves a GPU idle that a job below its cap could use, and
with penalties set by the user (``BatchSizeInput.may_idle``) the search can
reach schedules that leave GPUs idle or jobs waiting on purpose. Costs:
fill O(G) rounds of O(K (G + J)) numpy work (batched: a few rounds), the
others O(K G log G) or O(J * servers) per genome.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from scheduling_opt.batch_size.evaluate import counts, objective, objectives
from scheduling_opt.batch_size.model import BatchSizeInput

IntArray = NDArray[np.int64]
FloatArray = NDArray[np.float64]
BoolArray = NDArray[np.bool_]


@dataclass(frozen=True, slots=True, eq=False)
class Population:
    """K schedules over the same GPUs: job index per GPU (-1 idle), local batches.

    ``job_ids`` names the job indices, so a population outlives the job list
    it was built for (:func:`refresh` maps it onto the next one).
    """

    job_ids: tuple[str, ...]
    genes: IntArray
    local: IntArray


# --------------------------------------------------------------------------- helpers


def cap_to(genes: IntArray, caps: IntArray) -> IntArray:
    """Idle every GPU of job j in row k beyond its first ``caps[k, j]`` GPUs."""
    k, g = genes.shape
    order = np.argsort(genes, axis=1, kind="stable")
    s = np.take_along_axis(genes, order, axis=1)
    pos = np.broadcast_to(np.arange(g), (k, g))
    new_run = np.ones((k, g), bool)
    new_run[:, 1:] = s[:, 1:] != s[:, :-1]
    start = np.maximum.accumulate(np.where(new_run, pos, 0), axis=1)
    cap = caps[np.arange(k)[:, None], np.maximum(s, 0)]
    drop_sorted = (s >= 0) & (pos - start >= cap)
    drop = np.zeros((k, g), bool)
    np.put_along_axis(drop, order, drop_sorted, axis=1)
    return np.where(drop, -1, genes)


def repair(inp: BatchSizeInput, genes: IntArray) -> IntArray:
    """Enforce c_j <= cap_j (batch limit R_j, max workers): extra GPUs go idle."""
    if inp.n_jobs == 0:
        return np.full_like(genes, -1)
    caps = np.broadcast_to(inp.max_gpus, (genes.shape[0], inp.n_jobs))
    return cap_to(genes, np.asarray(caps))


def _scores(
    inp: BatchSizeInput,
    c: IntArray,
    spread: IntArray,
    elig: BoolArray,
    work: FloatArray,
    rng: np.random.Generator | None,
) -> FloatArray:
    """How much each (row, job) wants one more GPU; -inf when not eligible.

    Greedy: the drop of F (a waiting job's penalty, else minus its utilization
    increase). Random: uniform, plus 1 for waiting jobs (Figure 9 resumes Job 4).
    When leaving a GPU idle can pay (``inp.may_idle``), a job is eligible only
    if taking the GPU lowers F (the drop plus the idle penalty is > 0), or if
    taking a few more GPUs would (:func:`_pays`: a job whose first GPU costs
    more than an idle one may still pay off on four).
    """
    if inp.may_idle:
        j = np.arange(inp.n_jobs)
        elig = elig & ((_gain(inp, c, spread, work) + inp.idle > 0) | _pays(inp, work)[j, c])
    if rng is not None:
        return np.where(elig, rng.random(c.shape) + (c == 0), -np.inf)
    return np.asarray(np.where(elig, _gain(inp, c, spread, work), -np.inf), dtype=np.float64)


def _pays(inp: BatchSizeInput, work: FloatArray) -> BoolArray:
    """``[j, c]``: whether growing job j from c GPUs to some c' <= cap_j lowers F.

    u_j(c) - u_j(c') + (c' - c) idle (+ wait when c = 0) > 0 for some c' > c,
    with the packed costs (placement ignored); a suffix maximum, O(J * cap).
    """
    u = inp.cost[:, :, 0] * work[:, None]
    c = np.arange(u.shape[1])
    with np.errstate(invalid="ignore"):
        later = np.where(np.isfinite(u), c * inp.idle - u, -np.inf)
    best = np.maximum.accumulate(later[:, ::-1], axis=1)[:, ::-1]
    after = np.concatenate([best[:, 1:], np.full((u.shape[0], 1), -np.inf)], axis=1)
    here = np.where(np.isfinite(u), u - c * inp.idle + inp.wait * (c == 0), -np.inf)
    return np.asarray(here + after > 0)


def _gain(inp: BatchSizeInput, c: IntArray, spread: IntArray, work: FloatArray) -> FloatArray:
    j = np.arange(inp.n_jobs)
    width = inp.cost.shape[1]
    with np.errstate(invalid="ignore"):
        now = inp.cost[j, c, spread] * work
        after = inp.cost[j, np.minimum(c + 1, width - 1), np.where(c == 0, 0, spread)] * work
        gain = np.where(c == 0, inp.wait, now) - after
    return np.asarray(gain, dtype=np.float64)


def fill(
    inp: BatchSizeInput,
    genes: IntArray,
    work: FloatArray,
    rng: np.random.Generator | None = None,
    banned: BoolArray | None = None,
    batched: bool = False,
    deadline: float | None = None,
) -> IntArray:
    """Give idle GPUs to jobs below their cap (refresh step 4, Figure 7).

    Greedy (``rng`` None): the job whose F drops most (a waiting job first,
    else the smallest utilization increase under ``work``). Random
    (mutation, Figure 9): a uniformly random eligible job not
    ``banned[k, j]``, waiting jobs first. Sequential (default): one GPU per
    row per round, an idle one on a server the job already uses, else on
    the server with most idle GPUs. ``batched``: per round the i-th idle GPU
    of a row goes to its i-th best job (each job one GPU per round): a few
    rounds instead of one per idle GPU, for the search's offspring.
    ``deadline`` (a ``time.perf_counter()`` value): stop filling once past
    it (every genome stays a valid schedule, with more idle GPUs).
    """
    out = np.array(genes, dtype=np.int64, copy=True)
    n = inp.n_jobs
    rows = np.flatnonzero((out < 0).any(axis=1))
    if n == 0 or not len(rows):
        return out
    nodes = inp.node_of
    n_nodes = inp.n_nodes
    sub = out[rows]
    r = len(rows)
    # Counts and the server-index sums behind the spread flag (see counts()),
    # kept up to date per assignment instead of recomputed every round.
    slot = (sub + 1 + (n + 1) * np.arange(r)[:, None]).ravel()
    node = np.broadcast_to(nodes, sub.shape).ravel().astype(np.float64)
    c = np.bincount(slot, minlength=r * (n + 1)).reshape(r, n + 1)[:, 1:].copy()
    s1 = np.bincount(slot, weights=node, minlength=r * (n + 1)).reshape(r, n + 1)[:, 1:].copy()
    s2 = np.bincount(slot, weights=node**2, minlength=r * (n + 1)).reshape(r, n + 1)[:, 1:].copy()
    allowed = np.ones((r, n), bool) if banned is None else ~banned[rows]
    active = np.arange(r)
    for _ in range(inp.n_gpus):
        if deadline is not None and time.perf_counter() > deadline:
            break
        elig = (c[active] < inp.max_gpus) & allowed[active]
        active = active[elig.any(axis=1) & (sub[active] < 0).any(axis=1)]
        if not len(active):
            break
        ca = c[active]
        elig = (ca < inp.max_gpus) & allowed[active]
        spread = (ca * s2[active] - s1[active] ** 2 > 0.5).astype(np.int64)
        score = _scores(inp, ca, spread, elig, work, rng)
        if inp.may_idle:
            # A row where no job gains from a GPU keeps its idle GPUs for good.
            keep = np.isfinite(score).any(axis=1)
            active, score = active[keep], score[keep]
            if not len(active):
                break
        rowsub = sub[active]
        idle = rowsub < 0
        if batched:
            ranked = np.argsort(-score, axis=1, kind="stable")
            nth = np.cumsum(idle, axis=1) - 1
            take = idle & (nth < np.isfinite(score).sum(axis=1)[:, None])
            a, gpu = np.nonzero(take)
            pick = ranked[a, nth[a, gpu]]
            act = active[a]
        else:
            pick = np.argmax(score, axis=1)
            # Per (row, server): does the job have a GPU there, how many are idle
            # (bincounts, not a (G x servers) one-hot matrix: 4096 GPUs on 1024 servers).
            at = (np.arange(len(active))[:, None] * n_nodes + nodes[None, :]).ravel()
            size = len(active) * n_nodes
            mine = (rowsub == pick[:, None]).ravel()
            present = (np.bincount(at, weights=mine, minlength=size) > 0).reshape(-1, n_nodes)
            free = np.bincount(at, weights=idle.ravel(), minlength=size).reshape(-1, n_nodes)
            pref = idle * (1.0 + 2.0 * present[:, nodes] + free[:, nodes] / (inp.n_gpus + 1))
            gpu = np.argmax(pref, axis=1)
            act = active
        sub[act, gpu] = pick
        where = nodes[gpu].astype(np.float64)
        np.add.at(c, (act, pick), 1)
        np.add.at(s1, (act, pick), where)
        np.add.at(s2, (act, pick), where**2)
    out[rows] = sub
    return out


# --------------------------------------------------------------------------- operators


def crossover(genes: IntArray, pairs: int, rng: np.random.Generator) -> IntArray:
    """Uniform crossover (Figure 8): per GPU, each parent's job goes to a random child.

    ``pairs`` random parent pairs give 2 * pairs children (not yet repaired).
    """
    k = genes.shape[0]
    a = genes[rng.integers(0, k, pairs)]
    b = genes[rng.integers(0, k, pairs)]
    mask = rng.random(a.shape) < 0.5
    return np.concatenate([np.where(mask, a, b), np.where(mask, b, a)])


def mutate(
    inp: BatchSizeInput,
    genes: IntArray,
    count: int,
    rate: float,
    work: FloatArray,
    rng: np.random.Generator,
    deadline: float | None = None,
) -> IntArray:
    """Uniform mutation (Figure 9): in ``count`` random rows, preempt each worker w.p. rate.

    At least one worker per row. The freed GPUs go to random other jobs,
    waiting jobs first (Figure 9: two workers replaced by a waiting job);
    a GPU no other job can take is filled greedily.
    """
    k, n, g = genes.shape[0], inp.n_jobs, inp.n_gpus
    rows = genes[rng.integers(0, k, count)]
    if n == 0 or g == 0:
        return rows
    hit = rng.random((count, g)) < rate
    hit[np.arange(count), rng.integers(0, g, count)] = True
    hit &= rows >= 0
    banned = np.zeros((count, n + 1), bool)
    banned[np.broadcast_to(np.arange(count)[:, None], (count, g))[hit], rows[hit] + 1] = True
    freed = np.where(hit, -1, rows)
    mixed = fill(inp, freed, work, rng, banned=banned[:, 1:], batched=True, deadline=deadline)
    return trim(inp, fill(inp, mixed, work, batched=True, deadline=deadline), deadline)


def reorder(inp: BatchSizeInput, genes: IntArray) -> IntArray:
    """Reorder (Figure 10): pack each job's GPUs contiguously, server by server.

    Jobs keep the order of their first GPU; GPUs are numbered server by
    server, so contiguous runs use as few servers as the order allows.
    """
    k, g = genes.shape
    n = inp.n_jobs
    first = np.full((k, n + 1), g, np.int64)
    rows = np.broadcast_to(np.arange(k)[:, None], (k, g))
    np.minimum.at(first, (rows, genes + 1), np.broadcast_to(np.arange(g), (k, g)))
    first[:, 0] = g + 1  # idle GPUs last
    key = first[rows, genes + 1]
    order = np.argsort(key, axis=1, kind="stable")
    return np.take_along_axis(genes, order, axis=1)


def pack(inp: BatchSizeInput, genes: IntArray) -> IntArray:
    """Best-fit decreasing repacking of one genome's GPU counts onto the servers.

    The largest job first, into the server with the least room that still
    holds all its GPUs; a job no server holds takes the emptiest servers
    first. A stronger reorder than Figure 10's for the cross-node penalty
    (the paper's reorder keeps the order of occurrence and can split a job
    that one server would hold); O(J log J + J servers) in Python, so the
    search applies it to a few rows per generation only.
    """
    c = np.bincount(genes[genes >= 0], minlength=inp.n_jobs).tolist()
    free = [int(v) for v in inp.node_sizes]
    placed: list[list[int]] = [[] for _ in free]
    for j in sorted((j for j in range(len(c)) if c[j]), key=lambda j: (-c[j], j)):
        need = c[j]
        fits = [n for n, room in enumerate(free) if room >= need]
        if fits:
            n = min(fits, key=lambda n: (free[n], n))
            placed[n] += [j] * need
            free[n] -= need
            continue
        for n in sorted(range(len(free)), key=lambda n: (-free[n], n)):
            take = min(need, free[n])
            placed[n] += [j] * take
            free[n] -= take
            need -= take
            if not need:
                break
    out = np.full(inp.n_gpus, -1, np.int64)
    at = 0
    for n, size in enumerate(inp.node_sizes):
        out[at : at + len(placed[n])] = placed[n]
        at += int(size)
    return out


def trim(inp: BatchSizeInput, genes: IntArray, deadline: float | None = None) -> IntArray:
    """Free GPUs whose release lowers F, the most-lowering first (the inverse of fill).

    A job j with c_j GPUs gives up one (its highest-numbered) when
    u_j(c_j - 1) - u_j(c_j) + idle_penalty (+ wait_penalty if it then
    waits) < 0, with the spread flag kept (dropped when one GPU is left).
    With the default penalties no release ever lowers F and the genomes come
    back unchanged (checked in O(1): ``inp.may_idle`` is False). Stops
    early past ``deadline`` (every genome stays valid).
    """
    out = np.array(genes, dtype=np.int64, copy=True)
    if not inp.may_idle or inp.n_jobs == 0:
        return out
    j = np.arange(inp.n_jobs)
    active = np.arange(out.shape[0])
    for _ in range(inp.n_gpus):
        if deadline is not None and time.perf_counter() > deadline:
            break
        c, spread = counts(inp, out[active])
        with np.errstate(invalid="ignore"):
            now = inp.cost[j, c, spread] * inp.work
            less = np.maximum(c - 1, 0)
            before = inp.cost[j, less, np.where(less <= 1, 0, spread)] * inp.work
            delta = before - now + inp.idle + inp.wait * (c == 1)
        delta = np.where(c > 0, delta, np.inf)
        pick = np.argmin(delta, axis=1)
        lowers = delta[np.arange(len(active)), pick] < 0
        active, pick = active[lowers], pick[lowers]
        if not len(active):
            break
        mine = out[active] == pick[:, None]
        last = inp.n_gpus - 1 - np.argmax(mine[:, ::-1], axis=1)
        out[active, last] = -1
    return out


def greedy_genes(inp: BatchSizeInput, deadline: float | None = None) -> IntArray:
    """The greedy schedule: fill from an empty cluster, trim, best of as-is, reorder, pack.

    O(G) fill rounds of O(G + J) numpy work plus one O(J * servers) repack;
    the fill stops early past ``deadline`` (a ``time.perf_counter()`` value).
    """
    empty = np.full((1, inp.n_gpus), -1, np.int64)
    filled = trim(inp, fill(inp, empty, inp.work, deadline=deadline), deadline)
    both = np.concatenate([filled, reorder(inp, filled), pack(inp, filled[0])[None, :]])
    return np.asarray(both[int(np.argmin(objective(inp, both)))], dtype=np.int64)


def initial_population(
    inp: BatchSizeInput,
    size: int,
    work: FloatArray,
    rng: np.random.Generator,
    greedy_start: bool = False,
    deadline: float | None = None,
) -> IntArray:
    """G_0: a random job on every GPU, repaired to the caps, idle GPUs filled.

    ``greedy_start``: the first member is the :func:`greedy_genes` schedule,
    built before the random members so that a time limit striking while they
    are filled (512-1,024 GPUs in 1 s) leaves the complete greedy schedule in
    G_0 rather than a half-filled one (greedy is deterministic: the random
    members and the untimed result do not change).
    """
    g = inp.n_gpus
    if inp.n_jobs == 0:
        return np.full((size, g), -1, np.int64)
    first = greedy_genes(inp, deadline) if greedy_start else None
    genes = rng.integers(0, inp.n_jobs, (size, g))
    genes = trim(inp, fill(inp, repair(inp, genes), work, deadline=deadline), deadline)
    if first is not None:
        genes[0] = first
    return genes


def select(
    inp: BatchSizeInput, candidates: IntArray, size: int, work: FloatArray
) -> tuple[IntArray, FloatArray]:
    """The ``size`` best candidates under ``work``, one per distinct mean F.

    Returns them with their F at the mean progress. Schedules with equal F
    are almost always the same GPU counts in another GPU order; keeping one
    of them keeps the population diverse (and is cheaper than comparing rows).
    """
    score, mean = objectives(inp, candidates, [work, inp.work])
    _, first = np.unique(np.round(mean, 9), return_index=True)
    order = first[np.argsort(score[first], kind="stable")]
    if len(order) < size:  # too few distinct schedules: repeat the best ones
        order = np.resize(order, size)
    chosen = order[:size]
    return candidates[chosen], mean[chosen]
