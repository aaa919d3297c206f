"""ONES batch-size limit policies R_j: start, resume, scale-up, scale-down.

The limit R_j caps a job's global batch so that batch-size changes stay
gradual and training converges as with the original batch (linear
learning-rate scaling). ONES §3.3.2. Every function is O(1) and pure; the
scheduler calls them between scheduling rounds and passes the new R_j in
each job's ``batch.batch_limit``.

Reading of the paper: the scale-down rule R' = ceil(2R / ceil(sigma T + 1))
contains the scale-up's doubling (for sigma T = 0 it is exactly 2R), so
:func:`after_epoch` applies it as the one epoch-end rule of a running job;
:func:`scale_up` is its sigma = 0 special case. Limits never drop below 1
and never exceed ``cap`` (e.g. the epoch size).
"""

from __future__ import annotations

import math

from scheduling_opt.errors import InvalidInstanceError
from scheduling_opt.jsonpath import plain, read_int, read_number


def _clamp(value: int, cap: int | None) -> int:
    return max(1, value if cap is None else min(value, cap))


def _limits(limit: object, cap: object) -> tuple[int, int | None]:
    """R (>= 1) and the cap (None or >= 1) as plain ints: a limit of 0 or -1 is no limit."""
    return read_int(limit, "limit", 1), None if cap is None else read_int(cap, "cap", 1)


def start_limit(initial_batch: int, max_local_batch: int) -> int:
    """Start: until warm-up ends, the job's batch must fit one GPU.

    Examples
    --------
    >>> start_limit(512, 128)
    128

    References
    ----------
    ONES (Bian et al., SC 2021), §3.3.2 (Start).
    """
    return min(
        read_int(initial_batch, "initial_batch", 1), read_int(max_local_batch, "max_local_batch", 1)
    )


def resume_limit(limit: int, rejected: bool) -> int:
    """Resume: a waiting job keeps its limit, halved each time it is rejected.

    Examples
    --------
    >>> resume_limit(64, rejected=True), resume_limit(64, rejected=False)
    (32, 64)

    References
    ----------
    ONES (Bian et al., SC 2021), §3.3.2 (Resume).
    """
    limit, _ = _limits(limit, None)
    rejected = plain(rejected)  # type: ignore[assignment]  # a numpy bool counts
    if not isinstance(rejected, bool):
        raise InvalidInstanceError("rejected", f"must be true or false, got {rejected!r}")
    return max(1, limit // 2) if rejected else limit


def scale_up(limit: int, cap: int | None = None) -> int:
    """Scale-up: after an epoch a running job may double its limit, R' = 2R.

    Examples
    --------
    >>> scale_up(64), scale_up(64, cap=100)
    (128, 100)

    References
    ----------
    ONES (Bian et al., SC 2021), §3.3.2 (Scale-up).
    """
    limit, cap = _limits(limit, cap)
    return _clamp(2 * limit, cap)


def scale_down(limit: int, processed_time: float, sigma: float, cap: int | None = None) -> int:
    """Scale-down: R' = ceil(2R / ceil(sigma * T_processed + 1)) (anti convoy effect).

    ``sigma``: ONES suggests the average job arrival rate, so jobs running
    longer than the mean inter-arrival time 1/sigma stop growing and shrink.

    Raises
    ------
    InvalidInstanceError
        A negative or non-finite ``sigma`` or ``processed_time``.

    Examples
    --------
    >>> scale_down(64, 0.0, 0.01), scale_down(64, 50.0, 0.01), scale_down(64, 150.0, 0.01)
    (128, 64, 43)

    References
    ----------
    ONES (Bian et al., SC 2021), §3.3.2 (Scale-down).
    """
    limit, cap = _limits(limit, cap)
    sigma = read_number(sigma, "sigma", 0.0)
    processed_time = read_number(processed_time, "processed_time", 0.0)
    if not math.isfinite(sigma * processed_time):
        raise InvalidInstanceError("sigma", "sigma x processed_time must be finite")
    return _clamp(math.ceil(2 * limit / math.ceil(sigma * processed_time + 1)), cap)


def after_epoch(limit: int, processed_time: float, sigma: float, cap: int | None = None) -> int:
    """The epoch-end limit of a running job: scale-down's rule (2R when sigma T = 0).

    Examples
    --------
    >>> after_epoch(3, 1e6, 1.0)
    1

    References
    ----------
    ONES (Bian et al., SC 2021), §3.3.2.
    """
    return scale_down(limit, processed_time, sigma, cap)
