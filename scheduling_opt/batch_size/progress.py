"""ONES progress prediction: a job's training progress rho ~ Beta(alpha, beta).

alpha = processed samples / epoch size (epochs done) and beta = max(A x + b, 1)
(epochs to go) for a job with feature vector x; A and b are fitted by maximum
likelihood on logged points of completed jobs, whose true progress at each
log point is known. ONES §3.2.1, Eq. (6)-(8) and Algorithm 1.

Both alpha and beta are clipped to >= 1 as the paper says, which keeps the
Beta unimodal. The remaining workload follows Eq. (7) written in epochs:
Y = ||D|| alpha (1/rho - 1); it equals Y_processed (1/rho - 1) whenever alpha
is not clipped, and stays positive for a job still in its first epoch (Eq. (7)
read literally gives a new job no remaining work at all). At the mean progress
alpha / (alpha + beta) it is ||D|| beta: beta epochs to go.

The training set is bounded: :func:`add_points` keeps a uniform sample of all
points ever offered (reservoir sampling), so fitting cost stays fixed and old
jobs do not dominate. Fitting: O(points * features) per likelihood
evaluation, BFGS with the analytic gradient (scipy's L-BFGS-B, which the
fit used before, spent 0.27 s of CPU per fit on a shared 2-core machine
against BFGS' 0.02 s on the same optimum: its tiny LAPACK calls woke
OpenBLAS' threads, which spin; the ONES simulator refits at every job
completion).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike, NDArray

from scheduling_opt.errors import InvalidInstanceError
from scheduling_opt.jsonpath import read_int, read_number

FloatArray = NDArray[np.float64]

#: Progress values are kept inside (EPS, 1 - EPS): log-likelihoods of 0 or 1 are infinite.
EPS = 1e-6


def alpha_of(processed: ArrayLike, epoch_size: ArrayLike) -> FloatArray:
    """Eq. (6): alpha = Y_processed / ||D|| (epochs done), clipped to >= 1.

    Parameters
    ----------
    processed : array_like
        Samples processed so far per job.
    epoch_size : array_like
        Samples per epoch ||D|| per job (> 0).

    Returns
    -------
    numpy.ndarray
        alpha per job.

    Examples
    --------
    >>> alpha_of([500, 3000], [1000, 1000]).tolist()
    [1.0, 3.0]

    References
    ----------
    ONES (Bian et al., SC 2021), §3.2.1, Eq. (6).
    """
    p = np.asarray(processed, dtype=np.float64)
    d = np.asarray(epoch_size, dtype=np.float64)
    return np.asarray(np.maximum(p / d, 1.0), dtype=np.float64)


@dataclass(frozen=True, slots=True, eq=False)
class ProgressModel:
    """beta(x) = max(A x + b, 1): predicted epochs to go from job features (Eq. 6).

    Examples
    --------
    >>> import numpy as np
    >>> ProgressModel(np.array([0.5, -2.0]), 6.0).beta([[10.0, 0.5]]).tolist()
    [10.0]

    References
    ----------
    ONES (Bian et al., SC 2021), §3.2.1, Eq. (6).
    """

    weights: FloatArray
    bias: float

    def beta(self, features: ArrayLike) -> FloatArray:
        x = np.atleast_2d(np.asarray(features, dtype=np.float64))
        if x.shape[1] != len(self.weights):
            raise InvalidInstanceError(
                "features", f"need {len(self.weights)} features, got {x.shape[1]}"
            )
        return np.asarray(np.maximum(x @ self.weights + self.bias, 1.0), dtype=np.float64)


def remaining_work(epoch_size: ArrayLike, alpha: ArrayLike, rho: ArrayLike) -> FloatArray:
    """Eq. (7) in epochs: Y = ||D|| alpha (1/rho - 1) samples still to process.

    ``rho`` is clipped into (EPS, 1 - EPS).

    Examples
    --------
    >>> remaining_work([1000], [3.0], [0.25]).tolist()
    [9000.0]

    References
    ----------
    ONES (Bian et al., SC 2021), §3.2.1, Eq. (7).
    """
    r = np.clip(np.asarray(rho, dtype=np.float64), EPS, 1.0 - EPS)
    return np.asarray(
        np.asarray(epoch_size, dtype=np.float64) * np.asarray(alpha) * (1.0 / r - 1.0),
        dtype=np.float64,
    )


def mean_remaining_work(epoch_size: ArrayLike, beta: ArrayLike) -> FloatArray:
    """Y at the mean progress alpha / (alpha + beta): ||D|| beta.

    Examples
    --------
    >>> mean_remaining_work([1000], [7.0]).tolist()
    [7000.0]

    References
    ----------
    ONES (Bian et al., SC 2021), §3.2.1, Eq. (7)-(8).
    """
    return np.asarray(
        np.asarray(epoch_size, dtype=np.float64) * np.asarray(beta, dtype=np.float64),
        dtype=np.float64,
    )


def sample_progress(alpha: FloatArray, beta: FloatArray, rng: np.random.Generator) -> FloatArray:
    """Algorithm 1, line 2: one rho per job from Be(alpha_j, beta_j).

    Examples
    --------
    >>> import numpy as np
    >>> rho = sample_progress(np.full(3, 4.0), np.full(3, 6.0), np.random.default_rng(0))
    >>> bool(((rho > 0) & (rho < 1)).all())
    True

    References
    ----------
    ONES (Bian et al., SC 2021), §3.2.1, Algorithm 1.
    """
    return np.asarray(rng.beta(alpha, beta), dtype=np.float64)


# --------------------------------------------------------------------------- training set


@dataclass(frozen=True, slots=True, eq=False)
class History:
    """A bounded, uniformly sampled set of (features, alpha, rho) log points.

    ``seen`` counts every point ever offered (reservoir sampling needs it).
    """

    capacity: int
    features: FloatArray
    alpha: FloatArray
    rho: FloatArray
    seen: int = 0

    @classmethod
    def empty(cls, capacity: int, n_features: int) -> History:
        if capacity < 1:
            raise InvalidInstanceError("capacity", f"must be >= 1, got {capacity}")
        return cls(capacity, np.zeros((0, n_features)), np.zeros(0), np.zeros(0), 0)

    def __len__(self) -> int:
        return len(self.rho)


def job_points(
    features: ArrayLike, processed: ArrayLike, epoch_size: int, total: float
) -> tuple[FloatArray, FloatArray, FloatArray]:
    """Training points of one completed job: its log rows and true progress.

    ``processed[i]`` samples were done at log row i with ``features[i]``; the
    job converged after ``total`` samples, so the progress there was
    processed / total.

    Returns
    -------
    tuple of numpy.ndarray
        Features, alpha and rho per log row.

    Raises
    ------
    InvalidInstanceError
        ``total <= 0``, ``epoch_size < 1``, a row count mismatch, or a NaN,
        infinite or negative value.

    Examples
    --------
    >>> x, alpha, rho = job_points([[1.0], [2.0]], [100, 300], 100, 400.0)
    >>> rho.tolist(), alpha.tolist()
    ([0.25, 0.75], [1.0, 3.0])

    References
    ----------
    ONES (Bian et al., SC 2021), §3.2.1.
    """
    x = np.atleast_2d(np.asarray(features, dtype=np.float64))
    p = np.asarray(processed, dtype=np.float64).reshape(-1)
    epoch_size = read_int(epoch_size, "epoch_size", 1)
    total = read_number(total, "total")
    if total <= 0 or len(p) != len(x):
        raise InvalidInstanceError("points", "need total > 0 and one feature row per log point")
    if not (np.all(np.isfinite(x)) and np.all(np.isfinite(p)) and np.all(p >= 0)):
        # A NaN row would silently poison every later fit of the progress model.
        raise InvalidInstanceError("points", "features must be finite, processed finite and >= 0")
    return x, alpha_of(p, epoch_size), np.clip(p / total, EPS, 1.0 - EPS)


def add_points(
    history: History,
    features: ArrayLike,
    alpha: ArrayLike,
    rho: ArrayLike,
    rng: np.random.Generator,
) -> History:
    """A new history with the points offered by reservoir sampling (Algorithm R).

    Every point ever offered is kept with the same probability
    capacity / seen, so the set stays a uniform sample of the whole log.
    Pure: ``history`` is not modified.

    Parameters
    ----------
    history : History
        The current training set.
    features, alpha, rho : array_like
        The new points (one feature row each).
    rng : numpy.random.Generator
        The randomness of the reservoir.

    Returns
    -------
    History
        The new training set.

    Examples
    --------
    >>> import numpy as np
    >>> h = add_points(History.empty(2, 1), [[1.0], [2.0], [3.0]], [1, 1, 1],
    ...                [0.5, 0.5, 0.5], np.random.default_rng(0))
    >>> len(h), h.seen
    (2, 3)

    References
    ----------
    ONES (Bian et al., SC 2021), §3.2.1 (the predictor's training data).
    """
    x = np.atleast_2d(np.asarray(features, dtype=np.float64))
    a = np.asarray(alpha, dtype=np.float64).reshape(-1)
    r = np.asarray(rho, dtype=np.float64).reshape(-1)
    fx, fa, fr = history.features.copy(), history.alpha.copy(), history.rho.copy()
    rows_x, rows_a, rows_r = list(fx), list(fa), list(fr)
    seen = history.seen
    for i in range(len(r)):
        seen += 1
        if len(rows_r) < history.capacity:
            rows_x.append(x[i])
            rows_a.append(a[i])
            rows_r.append(r[i])
            continue
        slot = int(rng.integers(0, seen))
        if slot < history.capacity:
            rows_x[slot], rows_a[slot], rows_r[slot] = x[i], a[i], r[i]
    width = history.features.shape[1] if history.features.ndim == 2 else x.shape[1]
    return History(
        history.capacity,
        np.array(rows_x, dtype=np.float64).reshape(-1, width),
        np.array(rows_a, dtype=np.float64),
        np.array(rows_r, dtype=np.float64),
        seen,
    )


# --------------------------------------------------------------------------- fitting


def _neg_log_likelihood(
    theta: FloatArray, x: FloatArray, alpha: FloatArray, rho: FloatArray
) -> tuple[float, FloatArray]:
    from scipy.special import betaln, digamma

    linear = x @ theta[:-1] + theta[-1]
    beta = np.maximum(linear, 1.0)
    ll = (alpha - 1) * np.log(rho) + (beta - 1) * np.log1p(-rho) - betaln(alpha, beta)
    dbeta = np.log1p(-rho) - digamma(beta) + digamma(alpha + beta)
    # The clip max(., 1) has zero slope below 1: those points pull nothing.
    dlin = np.where(linear > 1.0, dbeta, 0.0)
    grad = -np.concatenate([x.T @ dlin, [dlin.sum()]])
    return float(-ll.sum()), np.asarray(grad, dtype=np.float64)


def fit_progress(history: History) -> ProgressModel:
    """Maximum-likelihood A, b of beta = max(A x + b, 1) on the history.

    Starts from the least-squares fit of A x + b to the moment estimate
    alpha (1 - rho) / rho (the beta whose mean progress is rho), which lies
    in the right basin, then maximizes the Beta log-likelihood with BFGS.

    Parameters
    ----------
    history : History
        At least (features + 1) points.

    Returns
    -------
    ProgressModel
        The fitted A and b.

    Raises
    ------
    InvalidInstanceError
        Too few points.

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(1)
    >>> x = rng.uniform(0, 10, (2000, 1))
    >>> alpha = rng.uniform(1, 20, 2000)
    >>> h = add_points(History.empty(2000, 1), x, alpha, rng.beta(alpha, 2 * x[:, 0] + 3), rng)
    >>> m = fit_progress(h)
    >>> bool(abs(m.weights[0] - 2) < 0.3 and abs(m.bias - 3) < 1.0)
    True

    References
    ----------
    ONES (Bian et al., SC 2021), §3.2.1, Eq. (6)-(8).
    """
    from scipy.optimize import minimize

    x, a, r = history.features, history.alpha, history.rho
    if len(r) < x.shape[1] + 1:
        raise InvalidInstanceError("history", f"need >= {x.shape[1] + 1} points, got {len(r)}")
    r = np.clip(r, EPS, 1.0 - EPS)
    design = np.column_stack([x, np.ones(len(r))])
    target = np.maximum(a * (1.0 - r) / r, 1.0)
    start, *_ = np.linalg.lstsq(design, target, rcond=None)
    if np.all(design @ start <= 1.0):  # every point clipped: no gradient; start above it
        start = np.zeros(design.shape[1])
        start[-1] = float(np.median(target)) + 1.0
    # No bounds: BFGS (L-BFGS-B's threaded LAPACK calls cost 10x the CPU here).
    fit = minimize(_neg_log_likelihood, start, args=(x, a, r), jac=True, method="BFGS")
    theta = fit.x if np.isfinite(fit.fun) else start
    return ProgressModel(np.asarray(theta[:-1], dtype=np.float64), float(theta[-1]))
