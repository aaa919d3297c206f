"""ONES progress predictor, bounded history, batch-size limits and throughput model."""

from __future__ import annotations

import math

import numpy as np
import pytest

from scheduling_opt.batch_size import limits
from scheduling_opt.batch_size import progress as pr
from scheduling_opt.batch_size.throughput import (
    AnalyticThroughput,
    batch_table,
    fit_analytic,
    split_batch,
)
from scheduling_opt.errors import InvalidInstanceError


def synthetic(a: np.ndarray, b: float, n: int, seed: int) -> pr.History:
    rng = np.random.default_rng(seed)
    x = rng.uniform(0, 10, (n, len(a)))
    beta = x @ a + b
    assert beta.min() > 1  # inside the unclipped region: A, b are identifiable
    alpha = rng.uniform(1, 20, n)
    rho = rng.beta(alpha, beta)
    return pr.add_points(pr.History.empty(n, len(a)), x, alpha, rho, rng)


def test_predictor_recovers_known_a_and_b_from_beta_data() -> None:
    a, b = np.array([0.6, -0.3, 1.2]), 4.0
    model = pr.fit_progress(synthetic(a, b, 4000, seed=1))
    assert np.allclose(model.weights, a, atol=0.08)
    assert model.bias == pytest.approx(b, abs=0.5)


def test_beta_is_clipped_at_one_and_checks_the_feature_count() -> None:
    model = pr.ProgressModel(np.array([-1.0]), 0.5)
    assert np.all(model.beta([[0.0], [3.0]]) == 1.0)
    with pytest.raises(InvalidInstanceError):
        model.beta([[1.0, 2.0]])


def test_alpha_and_remaining_work_follow_eq_6_and_7() -> None:
    alpha = pr.alpha_of([500, 3000], [1000, 1000])
    assert alpha.tolist() == [1.0, 3.0]  # clipped to 1 inside the first epoch
    # Y = ||D|| alpha (1/rho - 1) = Y_processed (1/rho - 1) once alpha >= 1.
    assert pr.remaining_work([1000], [3.0], [0.25])[0] == pytest.approx(3000 * 3)
    assert pr.mean_remaining_work([1000], [7.0])[0] == 7000
    rng = np.random.default_rng(0)
    rho = pr.sample_progress(np.full(20000, 4.0), np.full(20000, 6.0), rng)
    assert rho.mean() == pytest.approx(0.4, abs=0.01)


def test_history_is_bounded_and_a_uniform_sample() -> None:
    rng = np.random.default_rng(3)
    h = pr.History.empty(100, 1)
    for start in range(0, 5000, 500):
        ids = np.arange(start, start + 500, dtype=np.float64)
        h = pr.add_points(h, ids[:, None], np.ones(500), np.full(500, 0.5), rng)
    assert len(h) == 100
    assert h.seen == 5000
    # Uniform over the whole log: the kept ids average about the middle.
    assert 1800 < h.features[:, 0].mean() < 3200
    empty = pr.History.empty(5, 1)
    assert len(pr.add_points(empty, [[1.0]], [1.0], [0.5], rng)) == 1
    assert len(empty) == 0  # pure: the old history is unchanged


def test_job_points_use_the_final_sample_count_as_truth() -> None:
    x, alpha, rho = pr.job_points([[1.0], [2.0]], [100, 300], 100, 400.0)
    assert rho.tolist() == [0.25, 0.75]
    assert alpha.tolist() == [1.0, 3.0]
    assert x.shape == (2, 1)


def test_limit_policies() -> None:
    assert limits.start_limit(512, 128) == 128
    assert limits.resume_limit(64, rejected=True) == 32
    assert limits.resume_limit(1, rejected=True) == 1
    assert limits.resume_limit(64, rejected=False) == 64
    assert limits.scale_up(64) == 128
    assert limits.scale_up(64, cap=100) == 100
    assert limits.scale_down(64, 0.0, 0.01) == 128  # sigma T = 0: the scale-up
    assert limits.scale_down(64, 50.0, 0.01) == 64  # ceil(1.5) = 2: hold
    assert limits.scale_down(64, 150.0, 0.01) == math.ceil(128 / 3)
    assert limits.after_epoch(3, 1e6, 1.0) == 1
    with pytest.raises(InvalidInstanceError):
        limits.scale_down(8, -1.0, 0.1)


def test_fit_analytic_recovers_the_coefficients() -> None:
    true = AnalyticThroughput(0.03, 0.002, 0.02, 0.1)
    rng = np.random.default_rng(5)
    c = rng.integers(1, 17, 200).astype(float)
    local = rng.integers(8, 129, 200).astype(float)
    batch = c * local
    spread = (c > 4).astype(float)
    x = true.throughput(batch, local, c, spread) * rng.normal(1, 0.001, 200)
    fit = fit_analytic(batch, local, c, spread, x)
    for name in ("overhead", "per_sample", "comm", "cross_node"):
        assert getattr(fit, name) == pytest.approx(getattr(true, name), rel=0.05)
    with pytest.raises(InvalidInstanceError):
        fit_analytic([], [], [], [], [])


def test_batch_table_picks_the_best_batch_within_the_limit() -> None:
    model = AnalyticThroughput(0.05, 0.002, 0.03, 0.1)
    table = batch_table(model, limit=100, max_local=32, max_gpus=8)
    for c in range(1, 9):
        for s in (0, 1):
            best = table.batch[c, s]
            assert c <= best <= min(100, 32 * c)
            # Brute force over every batch with an even split.
            cands = np.arange(c, min(100, 32 * c) + 1, dtype=float)
            rates = model.throughput(
                cands, np.ceil(cands / c), np.full_like(cands, c), np.full_like(cands, s)
            )
            assert table.rate[c, s] == pytest.approx(rates.max())
    assert split_batch(10, 4) == [3, 3, 2, 2]
    with pytest.raises(InvalidInstanceError):
        batch_table(model, limit=4, max_local=8, max_gpus=5)


class TableThroughput:
    """A user model: measured samples/s per GPU count, no batch dependence beyond B."""

    def throughput(
        self, batch: np.ndarray, local: np.ndarray, gpus: np.ndarray, spread: np.ndarray
    ) -> np.ndarray:
        per_gpu = np.array([0.0, 100.0, 90.0, 80.0, 70.0])[np.minimum(gpus.astype(int), 4)]
        return np.asarray(per_gpu * gpus * (1.0 - 0.2 * spread) * batch / (batch + 8.0))


def test_a_user_throughput_model_plugs_in() -> None:
    from scheduling_opt.batch_size import BatchSizeInput, JobState, brute_force, check, exact
    from scheduling_opt.model import BatchInfo, Job
    from scheduling_opt.solution import Status
    from scheduling_opt.testing import cluster_of

    jobs = [
        Job("a", 1, 4, 3600.0, batch=BatchInfo(1000, 64, 32, 5000)),
        Job("b", 1, 4, 3600.0, batch=BatchInfo(1000, 64, 32, 2000)),
    ]
    states = {"a": JobState(3.0, TableThroughput()), "b": JobState(9.0, TableThroughput())}
    problem = BatchSizeInput(cluster_of((2, 2)), jobs, states)
    found = exact(problem, time_limit=10)
    assert found.status is Status.OPTIMAL
    check(problem, found)
    assert found.objective == pytest.approx(brute_force(problem).objective, rel=1e-6)
