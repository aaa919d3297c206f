"""ONES' progress regression in the loop: Eq. (6) fitted online on the epochs of completed jobs.

ONES predicts a job's training progress rho ~ Be(alpha, beta) with
alpha = Y_processed / ||D|| (epochs done) and beta = max(A x + b, 1)
(epochs to go) from the job's features x, and refits A and b by maximum
likelihood each time a job completes, on a bounded, uniformly sampled
set of points from the completed jobs' training logs (§3.2.1). Here a
job logs a point at each epoch end k (its workers upload their progress
then, §3.1): features x_k = (k, ||D|| / 10^4, L_initial) (the features of
footnote 1 a simulated job has, :mod:`scheduling_opt.sim.ones_workload`;
the processed samples as epochs done, k = Y_processed / ||D||), and once
the job has converged after Y samples its true progress there is
rho_k = k ||D|| / Y. The library does the rest: the points by
:func:`~scheduling_opt.batch_size.job_points`, the reservoir by
:func:`~scheduling_opt.batch_size.add_points`, the fit by
:func:`~scheduling_opt.batch_size.fit_progress`.

Choices where the paper is silent: the history keeps ``capacity`` points
(ONES: "a limited size"; swept in docs/reproduction.md); the model is
fitted once :data:`MIN_JOBS` jobs have completed (one per coefficient:
fewer leave the task features' coefficients undetermined), and until then
a job's beta is the caller's prior; a job that converges inside its first
epoch logs no point. Cost: O(epochs) to add a job's points, a fit is
BFGS over at most ``capacity`` points x 4 coefficients (about 20 ms of CPU).
"""

from __future__ import annotations

import math
import time

import numpy as np

from scheduling_opt.batch_size import History, ProgressModel, add_points, fit_progress, job_points
from scheduling_opt.sim.ones_workload import JobModel

#: Features per point: epochs done, epoch size in 10^4 samples, initial loss.
N_FEATURES = 3
#: Completed jobs before the first fit: one per coefficient (A's three and b).
MIN_JOBS = N_FEATURES + 1
#: An epoch end counts when the samples reach it within this share of an epoch
#: (a wake-up computed for the epoch end lands a rounding error short of it).
EPOCH_TOLERANCE = 1e-9


def epochs_done(samples: float, epoch_size: int) -> int:
    """Whole epochs in ``samples`` (an end reached within :data:`EPOCH_TOLERANCE` counts).

    Examples
    --------
    >>> epochs_done(2999.9999999999995, 1000), epochs_done(2999.0, 1000)
    (3, 2)
    """
    return math.floor(samples / epoch_size + EPOCH_TOLERANCE)


def features(model: JobModel, samples: float) -> list[float]:
    """The regression's features of a job that has processed ``samples``: (epochs done, ||D||/10^4, L_initial).

    Examples
    --------
    >>> from scheduling_opt.sim.ones_workload import job_model
    >>> from scheduling_opt.sim.workload import SimJob
    >>> m = job_model(SimJob("0", 0.0, 1, 1.0, model="bert/mrpc/3600"))
    >>> [round(v, 4) for v in features(m, 7200.0)]
    [2.0, 0.36, 0.6931]
    """
    return [samples / model.epoch_size, model.epoch_size / 1e4, model.initial_loss]


class OnlineProgress:
    """The progress model of one run: the completed jobs' epoch points and the fitted A, b.

    Parameters
    ----------
    capacity : int
        Points kept (a uniform sample of every point offered).
    seed : int
        Seed of the reservoir's sampling.

    Examples
    --------
    >>> from scheduling_opt.sim.ones_workload import job_model
    >>> from scheduling_opt.sim.workload import SimJob
    >>> p = OnlineProgress(1000, seed=0)
    >>> jobs = ["resnet18/cifar10/20000", "bert/mrpc/3600", "vgg16/imagenet/12000",
    ...         "bert/sst2/10000"]
    >>> for i, name in enumerate(jobs):
    ...     p.add_job(job_model(SimJob(str(i), 0.0, 1, 1.0, model=name)), (10 + i) * 20_000.0)
    >>> p.refit(), p.jobs, len(p.history)  # 10 + 61 + 20 + 26 epoch ends
    (True, 4, 117)
    >>> vgg = job_model(SimJob("4", 0.0, 1, 1.0, model=jobs[2]))  # 20 epochs, 5 done: 15 to go
    >>> 10.0 < p.beta(vgg, 5 * 12_000.0) < 16.0
    True
    """

    def __init__(self, capacity: int, seed: int) -> None:
        self.history = History.empty(capacity, N_FEATURES)
        self.rng = np.random.default_rng([seed, 1])
        self.model: ProgressModel | None = None
        self.jobs = 0
        self.fits = 0
        self.seconds = 0.0
        self._stale = False

    def add_job(self, model: JobModel, samples: float) -> None:
        """Log the epoch ends of a job that converged after ``samples`` samples.

        Points k = 1 .. its whole epochs, features :func:`features` at
        k ||D|| samples, rho_k = k ||D|| / ``samples``.
        """
        self.jobs += 1
        epochs = epochs_done(samples, model.epoch_size)
        if epochs < 1 or not samples > 0:
            return
        processed = np.arange(1, epochs + 1, dtype=np.float64) * model.epoch_size
        rows = [features(model, float(p)) for p in processed]
        x, alpha, rho = job_points(rows, processed, model.epoch_size, samples)
        self.history = add_points(self.history, x, alpha, rho, self.rng)
        self._stale = True

    def refit(self) -> bool:
        """Fit A, b again if jobs completed since the last fit and enough have; whether it did."""
        if not self._stale or self.jobs < MIN_JOBS or len(self.history) < N_FEATURES + 1:
            return False
        started = time.perf_counter()
        self.model = fit_progress(self.history)
        self.seconds += time.perf_counter() - started
        self.fits += 1
        self._stale = False
        return True

    def beta(self, model: JobModel, samples: float) -> float | None:
        """Predicted epochs to go, max(A x + b, 1), of a job at ``samples`` (None before a fit)."""
        if self.model is None:
            return None
        return float(self.model.beta([features(model, samples)])[0])
