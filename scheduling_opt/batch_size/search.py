"""ONES online evolutionary search: the ``ones`` method and the online step (ONES §3.2.2).

A population of K genomes evolves by uniform crossover, uniform mutation,
reorder and a best-fit repacking (:mod:`~scheduling_opt.batch_size.operators`);
the K best of parents and offspring survive, scored with Eq. (8) on progress
sampled once per generation (Algorithm 1). :func:`ones_step` is pure: the
previous population and the new job states go in, the best schedule and the
new population come out (a :class:`~scheduling_opt.solution.Solution` whose
decision is a :class:`Step`). Per generation: O(K G log G + K J) numpy work
for about 5K candidates, a few vectorized fill rounds, and two
O(J * servers) Python repacks.

Choices where the paper is vague (docs/batch-size.md): refresh runs once per
step on the whole population and its fill phase also repairs the offspring of
every generation; parents compete with offspring (elitism); the returned
schedule is the best under the mean progress ever seen in the step, since
sampled scores are noisy, and it stays in the returned population.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from scheduling_opt.batch_size.bounds import lower_bound
from scheduling_opt.batch_size.evaluate import local_batches, objective, schedule_of
from scheduling_opt.batch_size.model import BatchSizeInput, OnesConfig, Schedule
from scheduling_opt.batch_size.operators import (
    Population,
    crossover,
    fill,
    initial_population,
    mutate,
    pack,
    reorder,
    repair,
    select,
    trim,
)
from scheduling_opt.batch_size.progress import remaining_work, sample_progress
from scheduling_opt.batch_size.refresh import refresh
from scheduling_opt.errors import InstanceTooLargeError
from scheduling_opt.solution import Seed, Solution, Status, as_rng, named, time_limit_of

#: Rows per generation repacked by best-fit decreasing (:func:`~.operators.pack`).
PACKED_PER_GENERATION = 2
#: Largest population x GPUs the search accepts (the candidate pool is ~5x it).
MAX_SEARCH_CELLS = 1 << 19

IntArray = NDArray[np.int64]
FloatArray = NDArray[np.float64]


@dataclass(frozen=True, slots=True, eq=False)
class Step:
    """The outcome of one online step: the schedule to deploy and the state to carry.

    ``population``: pass it to the next :func:`ones_step` (its refresh maps
    it onto the next round's jobs). ``generations``: how many ran.
    """

    schedule: Schedule
    population: Population
    generations: int


def _work(inp: BatchSizeInput, rng: np.random.Generator, sample: bool) -> FloatArray:
    if not sample or inp.n_jobs == 0:
        return inp.work
    rho = sample_progress(inp.alpha, inp.beta, rng)
    return remaining_work(inp.epoch_size, inp.alpha, rho)


def probability_sampling(inp: BatchSizeInput, candidates: IntArray, seed: Seed = None) -> int:
    """Algorithm 1: sample rho_j for every job once, return the best candidate's row.

    Every candidate is scored with the same samples (Eq. 8, plus the
    waiting and idle penalties of the objective).

    Parameters
    ----------
    inp : BatchSizeInput
        The round.
    candidates : numpy.ndarray
        Shape (K, G) genomes, e.g. ``step.population.genes``.
    seed : int, numpy.random.Generator or None
        The randomness of the progress samples.

    Returns
    -------
    int
        The row of the chosen candidate.

    Examples
    --------
    >>> from scheduling_opt.batch_size.examples import tiny_input
    >>> probability_sampling(tiny_input(), np.array([[0, 0, 1, 1], [0, -1, -1, -1]]), seed=3)
    0

    References
    ----------
    ONES (Bian et al., SC 2021), §3.2.1, Algorithm 1.
    """
    work = _work(inp, as_rng(seed), sample=True)
    return int(np.argmin(objective(inp, candidates, work)))


def population_of(inp: BatchSizeInput, genes: IntArray) -> Population:
    """A :class:`~.operators.Population` of genomes (local batches decoded)."""
    return Population(inp.job_ids, genes, local_batches(inp, genes))


def ones_step(
    inp: BatchSizeInput,
    population: Population | None = None,
    *,
    seed: Seed = None,
    time_limit: float | None = None,
    generations: int | None = None,
    config: OnesConfig | None = None,
) -> Solution[Step]:
    """One online scheduling step: refresh, evolve, return the best and the population.

    Parameters
    ----------
    inp : BatchSizeInput
        This round's cluster, jobs and job states.
    population : Population or None
        The previous step's ``decision.population`` (None: start from G_0,
        random schedules plus the greedy one when ``config.greedy_start``).
    seed : int, numpy.random.Generator or None
        Same inputs and seed, same answer.
    time_limit : float or None
        Seconds (None: the library default); the search stops at the first
        generation boundary past it and returns the best schedule so far.
    generations : int or None
        The work budget (None: ``config.generations``); it alone decides the
        answer unless the time limit strikes first.
    config : OnesConfig or None
        Search settings (None: ``inp.config``).

    Returns
    -------
    Solution of Step
        ``feasible``, F of the best schedule (under the mean progress), the
        cheap relaxation bound (:func:`~scheduling_opt.batch_size.bounds.lower_bound`),
        and the new population; the message says when the time limit stopped it.

    Raises
    ------
    InstanceTooLargeError
        population x GPUs above :data:`MAX_SEARCH_CELLS`.
    ValueError
        A population built for another cluster.

    Examples
    --------
    >>> from scheduling_opt.batch_size.examples import tiny_input
    >>> sol = ones_step(tiny_input(), seed=0, generations=20)
    >>> sol.status.value, sol.decision.schedule.gpus
    ('feasible', (2, 2))
    >>> nxt = ones_step(tiny_input(), sol.decision.population, seed=1, generations=5)
    >>> nxt.objective <= sol.objective
    True

    References
    ----------
    ONES (Bian et al., SC 2021), §3.2.2 (Figure 5, Algorithm 1).
    """
    start = time.perf_counter()
    deadline = start + time_limit_of(time_limit)
    cfg = config or inp.config
    if cfg.population * inp.n_gpus > MAX_SEARCH_CELLS:
        raise InstanceTooLargeError(
            "params.population",
            f"population {cfg.population} x {inp.n_gpus} GPUs exceeds {MAX_SEARCH_CELLS} cells",
        )
    rng = as_rng(seed)
    budget = cfg.generations if generations is None else generations
    if population is None:
        genes = initial_population(
            inp, cfg.population, inp.work, rng, cfg.greedy_start, deadline=deadline
        )
    else:
        if population.genes.shape[1] != inp.n_gpus:
            raise ValueError("the population was built for another cluster")
        genes = refresh(inp, population, inp.work, deadline=deadline)
    size = genes.shape[0]
    mean = objective(inp, genes)
    best_i = int(np.argmin(mean))
    best, best_f = genes[best_i].copy(), float(mean[best_i])
    done = 0

    def late() -> bool:
        return time.perf_counter() > deadline

    # Checked between the operators too: a generation cut short is dropped
    # whole, so the time limit is kept within one operator's time.
    while done < budget and not late():
        work = _work(inp, rng, cfg.sample_progress)
        kids = crossover(genes, size, rng)
        kids = fill(inp, repair(inp, kids), work, batched=True, deadline=deadline)
        kids = trim(inp, kids, deadline)
        if late():
            break
        mutants = mutate(inp, genes, size, cfg.mutation_rate, work, rng, deadline)
        if late():
            break
        packed = reorder(inp, mutants)
        repacked = [pack(inp, row) for row in genes[rng.integers(0, size, PACKED_PER_GENERATION)]]
        pool = np.concatenate([genes, kids, mutants, packed, *(r[None, :] for r in repacked)])
        if late():
            break
        genes, mean = select(inp, pool, size, work)
        i = int(np.argmin(mean))
        if mean[i] < best_f:
            best, best_f = genes[i].copy(), float(mean[i])
        done += 1
    if best_f < float(mean.min()):
        # Elitism across steps: the next step's refresh starts from the incumbent.
        genes = genes.copy()
        genes[int(np.argmax(mean))] = best
    message = "" if done >= budget else f"time limit: {done} of {budget} generations"
    step = Step(schedule_of(inp, best), population_of(inp, genes), done)
    return Solution(
        status=Status.FEASIBLE,
        objective=best_f,
        decision=step,
        bound=min(lower_bound(inp), best_f),
        seconds=time.perf_counter() - start,
        message=message,
    )


@named("ones")
def ones(
    inp: BatchSizeInput, *, seed: Seed = None, time_limit: float | None = None
) -> Solution[Schedule]:
    """ONES online evolutionary search from G_0 (seeded; the ``ones`` method).

    One :func:`ones_step` with no previous population and the input's
    search settings; bounded by ``config.generations`` and by the time limit.

    Parameters
    ----------
    inp : BatchSizeInput
        The round.
    seed : int, numpy.random.Generator or None
        Same seed, same answer.
    time_limit : float or None
        Seconds (None: the library default).

    Returns
    -------
    Solution of Schedule
        ``feasible``, F, the relaxation bound, the schedule.

    Raises
    ------
    InstanceTooLargeError
        population x GPUs above :data:`MAX_SEARCH_CELLS`.

    Examples
    --------
    >>> from scheduling_opt.batch_size.examples import tiny_input
    >>> sol = ones(tiny_input(), seed=0)
    >>> sol.status.value, sol.decision.gpus, sol.bound <= sol.objective
    ('feasible', (2, 2), True)

    References
    ----------
    ONES (Bian et al., SC 2021), §3.2.2.
    """
    return ones_step(inp, None, seed=seed, time_limit=time_limit).map(lambda s: s.schedule)
