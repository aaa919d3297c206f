"""ONES online evolutionary search over GPU -> job genomes (ONES §3.2.2, Fig. 5).

A population of K genomes ``genes[k, g]`` (job index or -1 for idle; local
batches are decoded: each job's best batch for its GPU count, split evenly)
evolves by refresh, uniform crossover, uniform mutation, reorder and a
best-fit repacking; the K best of parents and offspring survive, scored with Eq. (8) on progress
sampled once per generation (Algorithm 1). The step function is pure: the
previous population and the new job states go in, the best schedule and the
new population come out.

Per generation: O(K G log G + K J) numpy work for about 5K candidates, a few
vectorized fill rounds, and two O(J * servers) Python repacks.

Choices where the paper is vague (docs/evolution.md): refresh runs once per
step on the whole population (job states do not change within a step) and its
fill phase, the greedy by utilization gain of Figure 7, also repairs the
offspring of every generation; parents compete with offspring (elitism); the
returned schedule is the best under the mean progress ever seen in the step,
since sampled scores are noisy, and it stays in the returned population.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from scheduling_opt.solvers.ones_problem import (
    BatchSizeInput,
    OnesConfig,
    counts,
    local_batches,
    objective,
    objectives,
)
from scheduling_opt.solvers.ones_progress import remaining_work, sample_progress

#: Rows per generation repacked by best-fit decreasing (:func:`pack`).
PACKED_PER_GENERATION = 2

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


@dataclass(frozen=True, slots=True, eq=False)
class StepResult:
    """The best schedule of a step (genes, local batches, F) and the new population."""

    genes: IntArray
    local: IntArray
    objective: float
    population: Population
    generations: int


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


def repair(problem: BatchSizeInput, genes: IntArray) -> IntArray:
    """Enforce c_j <= cap_j (batch limit R_j, max workers): extra GPUs go idle."""
    if problem.n_jobs == 0:
        return np.full_like(genes, -1)
    caps = np.broadcast_to(problem.max_gpus, (genes.shape[0], problem.n_jobs))
    return cap_to(genes, np.asarray(caps))


def _scores(
    problem: BatchSizeInput,
    c: IntArray,
    spread: IntArray,
    elig: BoolArray,
    work: FloatArray,
    rng: np.random.Generator | None,
) -> FloatArray:
    """How much each (row, job) wants one more GPU; -inf when not eligible.

    Greedy: the drop of F (a waiting job's penalty, else minus its utilization
    increase). Random: uniform, plus 1 for waiting jobs (Figure 9 resumes Job 4).
    """
    if rng is not None:
        return np.where(elig, rng.random(c.shape) + (c == 0), -np.inf)
    j = np.arange(problem.n_jobs)
    width = problem.cost.shape[1]
    now = problem.cost[j, c, spread] * work
    after = problem.cost[j, np.minimum(c + 1, width - 1), np.where(c == 0, 0, spread)] * work
    gain = np.where(c == 0, problem.wait_penalty, now) - after
    return np.asarray(np.where(elig, gain, -np.inf), dtype=np.float64)


def fill(
    problem: BatchSizeInput,
    genes: IntArray,
    work: FloatArray,
    rng: np.random.Generator | None = None,
    banned: BoolArray | None = None,
    batched: bool = False,
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
    """
    out = np.array(genes, dtype=np.int64, copy=True)
    n = problem.n_jobs
    rows = np.flatnonzero((out < 0).any(axis=1))
    if n == 0 or not len(rows):
        return out
    nodes = problem.node_of
    onehot = np.eye(problem.n_nodes)[nodes]
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
    for _ in range(problem.n_gpus):
        elig = (c[active] < problem.max_gpus) & allowed[active]
        active = active[elig.any(axis=1) & (sub[active] < 0).any(axis=1)]
        if not len(active):
            break
        ca = c[active]
        elig = (ca < problem.max_gpus) & allowed[active]
        spread = (ca * s2[active] - s1[active] ** 2 > 0.5).astype(np.int64)
        score = _scores(problem, ca, spread, elig, work, rng)
        rowsub = sub[active]
        idle = rowsub < 0
        if batched:
            ranked = np.argsort(-score, axis=1, kind="stable")
            nth = np.cumsum(idle, axis=1) - 1
            take = idle & (nth < elig.sum(axis=1)[:, None])
            a, gpu = np.nonzero(take)
            pick = ranked[a, nth[a, gpu]]
            act = active[a]
        else:
            pick = np.argmax(score, axis=1)
            present = ((rowsub == pick[:, None]).astype(np.float64) @ onehot) > 0
            free = idle.astype(np.float64) @ onehot
            pref = idle * (1.0 + 2.0 * present[:, nodes] + free[:, nodes] / (problem.n_gpus + 1))
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
    problem: BatchSizeInput,
    genes: IntArray,
    count: int,
    rate: float,
    work: FloatArray,
    rng: np.random.Generator,
) -> IntArray:
    """Uniform mutation (Figure 9): in ``count`` random rows, preempt each worker w.p. rate.

    At least one worker per row. The freed GPUs go to random other jobs,
    waiting jobs first (Figure 9: two workers replaced by a waiting job);
    a GPU no other job can take is filled greedily.
    """
    k, n, g = genes.shape[0], problem.n_jobs, problem.n_gpus
    rows = genes[rng.integers(0, k, count)]
    if n == 0 or g == 0:
        return rows
    hit = rng.random((count, g)) < rate
    hit[np.arange(count), rng.integers(0, g, count)] = True
    hit &= rows >= 0
    banned = np.zeros((count, n + 1), bool)
    banned[np.broadcast_to(np.arange(count)[:, None], (count, g))[hit], rows[hit] + 1] = True
    freed = np.where(hit, -1, rows)
    mixed = fill(problem, freed, work, rng, banned=banned[:, 1:], batched=True)
    return fill(problem, mixed, work, batched=True)


def reorder(problem: BatchSizeInput, genes: IntArray) -> IntArray:
    """Reorder (Figure 10): pack each job's GPUs contiguously, server by server.

    Jobs keep the order of their first GPU; GPUs are numbered server by
    server, so contiguous runs use as few servers as the order allows.
    """
    k, g = genes.shape
    n = problem.n_jobs
    first = np.full((k, n + 1), g, np.int64)
    rows = np.broadcast_to(np.arange(k)[:, None], (k, g))
    np.minimum.at(first, (rows, genes + 1), np.broadcast_to(np.arange(g), (k, g)))
    first[:, 0] = g + 1  # idle GPUs last
    key = first[rows, genes + 1]
    order = np.argsort(key, axis=1, kind="stable")
    return np.take_along_axis(genes, order, axis=1)


def pack(problem: BatchSizeInput, genes: IntArray) -> IntArray:
    """Best-fit decreasing repacking of one genome's GPU counts onto the servers.

    The largest job first, into the server with the least room that still
    holds all its GPUs; a job no server holds takes the emptiest servers
    first. A stronger reorder than Figure 10's for the cross-node penalty
    (the paper's reorder keeps the order of occurrence and can split a job
    that one server would hold); O(J log J + J servers) in Python, so the
    search applies it to a few rows per generation only.
    """
    c = np.bincount(genes[genes >= 0], minlength=problem.n_jobs).tolist()
    free = [int(v) for v in problem.node_sizes]
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
    out = np.full(problem.n_gpus, -1, np.int64)
    at = 0
    for n, size in enumerate(problem.node_sizes):
        out[at : at + len(placed[n])] = placed[n]
        at += int(size)
    return out


def initial_population(
    problem: BatchSizeInput,
    size: int,
    work: FloatArray,
    rng: np.random.Generator,
    greedy_start: bool = False,
) -> IntArray:
    """G_0: a random job on every GPU, repaired to the caps, idle GPUs filled.

    ``greedy_start``: the first member is the :func:`greedy` schedule.
    """
    g = problem.n_gpus
    if problem.n_jobs == 0:
        return np.full((size, g), -1, np.int64)
    genes = fill(problem, repair(problem, rng.integers(0, problem.n_jobs, (size, g))), work)
    if greedy_start:
        genes[0] = greedy(problem)
    return genes


def scale_to_limits(problem: BatchSizeInput, genes: IntArray, batch: FloatArray) -> IntArray:
    """Refresh (2): a job whose batch ``batch[k, j]`` exceeds R_j keeps floor(R c / B) GPUs.

    At least one GPU (R >= 1 fits one GPU); never more than the job's cap.
    """
    c, _ = counts(problem, genes)
    limit = problem.limit[None, :].astype(np.float64)
    shrunk = np.maximum(1, np.floor(limit * c / np.maximum(batch, 1)))
    target = np.where(batch > limit, shrunk, c).astype(np.int64)
    return cap_to(genes, np.minimum(target, problem.max_gpus))


def admit(problem: BatchSizeInput, genes: IntArray, new: list[int]) -> IntArray:
    """Refresh (3): each job of ``new`` gets one GPU in every row.

    An idle GPU if any (the lowest index), else the tail GPU of the running
    job with the largest processed time (§3.2.2: take GPUs from the jobs with
    the largest T_processed); jobs of ``new`` are never donors. Needs
    ``len(new) <= GPUs``.
    """
    out = np.array(genes, dtype=np.int64, copy=True)
    n = problem.n_jobs
    if not new:
        return out
    if len(new) > problem.n_gpus:
        raise ValueError(f"cannot admit {len(new)} jobs on {problem.n_gpus} GPUs")
    is_new = np.zeros(n + 1, bool)
    is_new[np.asarray(new) + 1] = True
    order = np.argsort(-problem.processed_time, kind="stable")
    rank = np.empty(n + 1, np.int64)
    rank[order + 1] = np.arange(n)
    rank[0] = -1  # idle GPUs first
    for row in out:
        for j in new:
            if (row == j).any():
                continue
            key = np.where(is_new[row + 1], n + 1, rank[row + 1])
            best = np.flatnonzero(key == key.min())
            row[best[0] if key.min() < 0 else best[-1]] = j
    return out


def refresh(problem: BatchSizeInput, population: Population, work: FloatArray) -> IntArray:
    """Refresh (§3.2.2) a previous population onto the new job states.

    (1) GPUs of finished jobs (absent from ``problem``) go idle;
    (2) :func:`scale_to_limits` with each job's last global batch;
    (3) :func:`admit` the new jobs (absent from the population), earliest
    submitted first, at most one per GPU; (4) idle GPUs are filled greedily
    by utilization gain (Figure 7).
    """
    old = {name: i for i, name in enumerate(problem.job_ids)}
    remap = np.array([old.get(name, -1) for name in population.job_ids] + [-1], np.int64)
    genes = remap[np.where(population.genes >= 0, population.genes, len(remap) - 1)]
    k, n = genes.shape[0], problem.n_jobs
    if n == 0:
        return np.full_like(genes, -1)
    slot = (genes + 1 + (n + 1) * np.arange(k)[:, None]).ravel()
    prev = np.bincount(slot, weights=population.local.ravel(), minlength=k * (n + 1))
    batch = np.asarray(prev, dtype=np.float64).reshape(k, n + 1)[:, 1:]
    genes = scale_to_limits(problem, genes, batch)
    known = set(population.job_ids)
    new = sorted(
        (j for j, name in enumerate(problem.job_ids) if name not in known),
        key=lambda j: (problem.submit_time[j], j),
    )[: problem.n_gpus]
    return fill(problem, admit(problem, genes, new), work)


def select(
    problem: BatchSizeInput, candidates: IntArray, size: int, work: FloatArray
) -> tuple[IntArray, FloatArray]:
    """The ``size`` best candidates under ``work``, one per distinct mean F.

    Returns them with their F at the mean progress. Schedules with equal F
    are almost always the same GPU counts in another GPU order; keeping one
    of them keeps the population diverse (and is cheaper than comparing rows).
    """
    score, mean = objectives(problem, candidates, [work, problem.work])
    _, first = np.unique(np.round(mean, 9), return_index=True)
    order = first[np.argsort(score[first], kind="stable")]
    if len(order) < size:  # too few distinct schedules: repeat the best ones
        order = np.resize(order, size)
    chosen = order[:size]
    return candidates[chosen], mean[chosen]


# --------------------------------------------------------------------------- the step


def _work(problem: BatchSizeInput, rng: np.random.Generator, sample: bool) -> FloatArray:
    if not sample or problem.n_jobs == 0:
        return problem.work
    rho = sample_progress(problem.alpha, problem.beta, rng)
    return remaining_work(problem.epoch_size, problem.alpha, rho)


def probability_sampling(
    problem: BatchSizeInput, candidates: IntArray, rng: np.random.Generator
) -> int:
    """Algorithm 1: sample rho_j for every job once, return the best candidate's row.

    Every candidate is scored with the same samples (Eq. 8, plus the
    waiting and idle penalties of the objective).
    """
    work = _work(problem, rng, sample=True)
    return int(np.argmin(objective(problem, candidates, work)))


def population_of(problem: BatchSizeInput, genes: IntArray) -> Population:
    local = np.stack([local_batches(problem, row) for row in genes]) if len(genes) else genes
    return Population(problem.job_ids, genes, np.asarray(local, np.int64))


def ones_step(
    problem: BatchSizeInput,
    population: Population | None = None,
    *,
    seed: int | np.random.Generator = 0,
    generations: int | None = None,
    seconds: float | None = None,
    config: OnesConfig | None = None,
) -> StepResult:
    """One online scheduling step: refresh, evolve, return the best and the population.

    ``population`` None starts from G_0. The budget is ``generations``
    (default ``config.generations``) and, when given, ``seconds`` of wall
    time (whichever ends first; a time budget makes the answer depend on
    the machine's speed). Same inputs and seed, same answer.
    """
    cfg = config or problem.config
    rng = np.random.default_rng(seed)
    budget = cfg.generations if generations is None else generations
    if population is None:
        genes = initial_population(problem, cfg.population, problem.work, rng, cfg.greedy_start)
    else:
        if population.genes.shape[1] != problem.n_gpus:
            raise ValueError("the population was built for another cluster")
        genes = refresh(problem, population, problem.work)
    size = genes.shape[0]
    mean = objective(problem, genes)
    best_i = int(np.argmin(mean))
    best, best_f = genes[best_i].copy(), float(mean[best_i])
    start = time.perf_counter()
    done = 0
    while done < budget and (seconds is None or time.perf_counter() - start < seconds):
        work = _work(problem, rng, cfg.sample_progress)
        kids = crossover(genes, size, rng)
        kids = fill(problem, repair(problem, kids), work, batched=True)
        mutants = mutate(problem, genes, size, cfg.mutation_rate, work, rng)
        packed = reorder(problem, mutants)
        repacked = [
            pack(problem, row) for row in genes[rng.integers(0, size, PACKED_PER_GENERATION)]
        ]
        pool = np.concatenate([genes, kids, mutants, packed, *(r[None, :] for r in repacked)])
        genes, mean = select(problem, pool, size, work)
        i = int(np.argmin(mean))
        if mean[i] < best_f:
            best, best_f = genes[i].copy(), float(mean[i])
        done += 1
    if best_f < float(mean.min()):
        # Elitism across steps: the next step's refresh starts from the incumbent.
        genes = genes.copy()
        genes[int(np.argmax(mean))] = best
    return StepResult(
        best, local_batches(problem, best), best_f, population_of(problem, genes), done
    )


def greedy(problem: BatchSizeInput) -> IntArray:
    """The fill phase alone from an empty cluster, then the best of as-is, reorder, pack."""
    empty = np.full((1, problem.n_gpus), -1, np.int64)
    filled = fill(problem, empty, problem.work)
    both = np.concatenate([filled, reorder(problem, filled), pack(problem, filled[0])[None, :]])
    return np.asarray(both[int(np.argmin(objective(problem, both)))], dtype=np.int64)
