"""ONES operators: every candidate is a valid schedule; refresh admits new jobs; the step is pure."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from scheduling_opt.batch_size import operators as ops
from scheduling_opt.batch_size.check import check
from scheduling_opt.batch_size.evaluate import counts, genes_of, objective, solution_of
from scheduling_opt.batch_size.model import BatchSizeInput
from scheduling_opt.batch_size.refresh import admit, refresh, scale_to_limits
from scheduling_opt.batch_size.search import Step, ones_step, population_of, probability_sampling
from scheduling_opt.solution import Solution, Status
from scheduling_opt.testing import batch_size_cases, seeded_batch_size_input

SETTINGS = settings(max_examples=40, deadline=None)


def assert_valid(problem: BatchSizeInput, genes: np.ndarray) -> None:
    """No GPU twice (one gene per GPU), known jobs, caps and batch limits (checker)."""
    genes = np.atleast_2d(genes)
    assert genes.shape[1] == problem.n_gpus
    assert np.all((genes >= -1) & (genes < problem.n_jobs))
    c, _ = counts(problem, genes)
    assert np.all(c <= problem.max_gpus)
    for row in genes:
        check(problem, solution_of(problem, row, Status.FEASIBLE, 0.0))


def population(problem: BatchSizeInput, seed: int, size: int = 6) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return ops.initial_population(problem, size, problem.work, rng)


@SETTINGS
@given(batch_size_cases(), st.integers(0, 1000))
def test_initial_population_and_fill_are_valid_and_leave_no_usable_gpu_idle(
    problem: BatchSizeInput, seed: int
) -> None:
    genes = population(problem, seed)
    assert_valid(problem, genes)
    c, _ = counts(problem, genes)
    # A GPU stays idle only when every job is at its cap.
    for row, cr in zip(genes, c, strict=True):
        if (row < 0).any():
            assert np.all(cr >= problem.max_gpus)


@SETTINGS
@given(batch_size_cases(), st.integers(0, 1000))
def test_crossover_then_repair_and_fill_is_valid(problem: BatchSizeInput, seed: int) -> None:
    rng = np.random.default_rng(seed)
    genes = population(problem, seed)
    kids = ops.crossover(genes, 5, rng)
    assert kids.shape == (10, problem.n_gpus)
    # Uniform crossover: each GPU of a child holds one parent's job there.
    assert np.all(np.isin(kids, genes) | (kids < 0))
    assert_valid(problem, ops.fill(problem, ops.repair(problem, kids), problem.work))


@SETTINGS
@given(batch_size_cases(), st.integers(0, 1000), st.floats(0.0, 1.0))
def test_mutation_is_valid(problem: BatchSizeInput, seed: int, rate: float) -> None:
    rng = np.random.default_rng(seed)
    mutants = ops.mutate(problem, population(problem, seed), 5, rate, problem.work, rng)
    assert mutants.shape == (5, problem.n_gpus)
    assert_valid(problem, mutants)


@SETTINGS
@given(batch_size_cases(), st.integers(0, 1000))
def test_reorder_keeps_counts_and_packs_jobs(problem: BatchSizeInput, seed: int) -> None:
    genes = population(problem, seed)
    packed = ops.reorder(problem, genes)
    assert_valid(problem, packed)
    assert np.array_equal(counts(problem, packed)[0], counts(problem, genes)[0])
    for row in packed:
        busy = row[row >= 0]
        # Contiguous runs: each job appears in one block, idle GPUs at the end.
        assert len(np.unique(busy)) == 1 + int(np.sum(busy[1:] != busy[:-1])) or not len(busy)
        assert np.all(row[len(busy) :] < 0)


def test_reorder_packs_the_paper_figure_10_example() -> None:
    problem = seeded_batch_size_input(0, nodes=(4, 4), jobs=3)
    genes = np.array([[0, 1, 2, 0, 1, -1, 0, 2]])
    assert np.array_equal(ops.reorder(problem, genes)[0], [0, 0, 0, 1, 1, 2, 2, -1])


@SETTINGS
@given(batch_size_cases(max_jobs=8), st.integers(0, 1000), st.integers(0, 5))
def test_refresh_gives_every_new_job_a_gpu(problem: BatchSizeInput, seed: int, gone: int) -> None:
    """ONES §3.2.2 refresh (3): N new jobs get GPUs while N <= GPUs, earliest first."""
    old_ids = problem.job_ids[: max(0, problem.n_jobs - 3)]
    # The old population knew some of today's jobs plus jobs that have finished.
    finished = tuple(f"done{i}" for i in range(gone))
    before = seeded_batch_size_input(
        seed,
        tuple(int(s) for s in problem.node_sizes),
        len(old_ids) + gone,
        names=old_ids + finished,
    )
    pop = population_of(before, population(before, seed))
    genes = refresh(problem, pop, problem.work)
    assert_valid(problem, genes)
    new = [j for j, name in enumerate(problem.job_ids) if name not in set(old_ids)]
    new.sort(key=lambda j: (problem.submit_time[j], j))
    must = new[: problem.n_gpus]
    c, _ = counts(problem, genes)
    assert np.all(c[:, must] >= 1)


def test_refresh_takes_gpus_from_the_longest_running_job() -> None:
    before = seeded_batch_size_input(3, nodes=(2,), jobs=2)
    genes = np.array([[0, 1], [1, 0]])
    pop = population_of(before, genes)
    now = seeded_batch_size_input(3, nodes=(2,), jobs=3)
    longest = int(np.argmax(now.processed_time[:2]))
    out = refresh(now, pop, now.work)
    for row in out:
        assert 2 in row
        assert longest not in row


def test_scale_to_limits_keeps_floor_r_c_over_b_gpus() -> None:
    problem = seeded_batch_size_input(5, nodes=(4, 4), jobs=2)
    genes = np.array([[0, 0, 0, 0, 1, 1, 1, -1]])
    r0, r1 = int(problem.limit[0]), int(problem.limit[1])
    batch = np.array([[4.0 * r0, r1 / 2]])  # job 0 is 4x over its limit, job 1 under it
    out = scale_to_limits(problem, genes, batch)
    c, _ = counts(problem, out)
    want0 = max(1, (r0 * 4) // (4 * r0))
    assert c[0, 0] == min(want0, int(problem.max_gpus[0]))
    assert c[0, 1] == min(3, int(problem.max_gpus[1]))


def test_admit_prefers_idle_gpus_and_never_robs_a_new_job() -> None:
    problem = seeded_batch_size_input(8, nodes=(4,), jobs=4)
    genes = np.array([[0, 0, -1, 1]])
    out = admit(problem, genes, [2, 3])
    assert out[0, 2] in (2, 3)
    c, _ = counts(problem, out)
    assert c[0, 2] == 1
    assert c[0, 3] == 1


def step_of(sol: Solution[Step]) -> Step:
    assert sol.decision is not None
    return sol.decision


def test_step_is_deterministic_and_pure() -> None:
    problem = seeded_batch_size_input(11, nodes=(4, 4), jobs=6)
    first_sol = ones_step(problem, None, seed=7, generations=20)
    second_sol = ones_step(problem, None, seed=7, generations=20)
    first, second = step_of(first_sol), step_of(second_sol)
    assert np.array_equal(genes_of(first.schedule), genes_of(second.schedule))
    assert np.array_equal(first.population.genes, second.population.genes)
    assert first_sol.objective == second_sol.objective
    assert first_sol.objective is not None
    saved = first.population.genes.copy()
    nxt_sol = ones_step(problem, first.population, seed=8, generations=10)
    nxt = step_of(nxt_sol)
    assert np.array_equal(first.population.genes, saved)  # input population untouched
    # Same job states: refresh changes nothing and the incumbent is in the population.
    assert float(objective(problem, saved).min()) == pytest.approx(first_sol.objective)
    assert nxt_sol.objective is not None
    assert nxt_sol.objective <= first_sol.objective + 1e-9
    assert_valid(problem, nxt.population.genes)


def test_online_step_admits_a_new_job_and_forgets_a_finished_one() -> None:
    first = seeded_batch_size_input(21, nodes=(4, 4), jobs=4)
    step = step_of(ones_step(first, None, seed=1, generations=10))
    names = ("j1", "j2", "j3", "new")
    second = seeded_batch_size_input(21, nodes=(4, 4), jobs=4, names=names)
    refreshed = refresh(second, step.population, second.work)
    assert np.all(counts(second, refreshed)[0][:, 3] >= 1)
    step2 = step_of(ones_step(second, step.population, seed=2, generations=10))
    assert step2.population.job_ids == names
    assert_valid(second, step2.population.genes)


def test_time_budget_and_algorithm_1() -> None:
    problem = seeded_batch_size_input(13, nodes=(4, 4), jobs=5)
    sol = ones_step(problem, None, seed=0, generations=10**9, time_limit=0.05)
    step = step_of(sol)
    assert step.generations >= 1
    assert "time limit" in sol.message
    assert sol.status is Status.FEASIBLE
    assert_valid(problem, genes_of(step.schedule))
    genes = step.population.genes
    picks = {probability_sampling(problem, genes, np.random.default_rng(s)) for s in range(20)}
    assert picks <= set(range(len(genes)))
    again = probability_sampling(problem, genes, np.random.default_rng(3))
    assert again == probability_sampling(problem, genes, np.random.default_rng(3))
