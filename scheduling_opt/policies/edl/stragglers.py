"""EDL straggler detection: workers persistently slower than their peers.

A worker is a straggler when its mini-batch took longer than ``factor``
times the median of its mini-batch in each of the last ``window``
mini-batches (EDL defaults: 1.2 and 10); the job then removes the
stragglers with one ``scale_in()``, never below its minimum. EDL (TPDS '22)
§5.2. O(window * workers).
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Mapping, Sequence

from scheduling_opt.errors import InvalidInstanceError
from scheduling_opt.model import Job
from scheduling_opt.policies._numbers import as_int, as_number, expect

#: EDL §5.2: slower than 1.2 x the median ...
DEFAULT_FACTOR = 1.2
#: ... in each of the last 10 mini-batches.
DEFAULT_WINDOW = 10


def find_stragglers(
    history: Sequence[Mapping[str, float]],
    factor: float = DEFAULT_FACTOR,
    window: int = DEFAULT_WINDOW,
) -> tuple[str, ...]:
    """Workers slower than ``factor`` x the median in each of the last ``window`` mini-batches.

    Parameters
    ----------
    history : sequence of mapping of str to float
        Per mini-batch (oldest first), each worker's time in seconds (finite,
        >= 0). A worker missing from one of the last ``window`` mini-batches
        is not judged.
    factor : float, default 1.2
        Strictly "longer than" ``factor`` x the median (> 0).
    window : int, default 10
        Consecutive mini-batches (an integer >= 1).

    Returns
    -------
    tuple of str
        The stragglers, slowest first (mean ratio to the median), ties by name;
        empty while the history is shorter than ``window``.

    Raises
    ------
    InvalidInstanceError
        ``window`` not an integer >= 1, ``factor`` not > 0, or a time that is
        not finite and >= 0 (named by its place in ``history``).

    Examples
    --------
    >>> batch = {"w0": 1.0, "w1": 1.0, "w2": 1.3}
    >>> find_stragglers([batch] * 10)
    ('w2',)
    >>> find_stragglers([batch] * 9)
    ()

    References
    ----------
    EDL (TPDS '22) §5.2.
    """
    n = as_int(window, "window", 1)
    f = as_number(factor, "factor")
    if isinstance(history, (str, bytes)) or not isinstance(history, Sequence):
        raise InvalidInstanceError(
            "history", f"must be a sequence of mappings, got {type(history).__name__}"
        )
    if not f > 0:
        raise InvalidInstanceError("factor", f"must be > 0, got {factor!r}")
    if len(history) < n:
        return ()
    recent = history[-n:]
    ratios: dict[str, list[float]] = {}
    for i, batch in enumerate(recent):
        expect(batch, Mapping, f"history[{len(history) - n + i}]")
        times = {}
        for worker, t in batch.items():
            where = f"history[{len(history) - n + i}][{worker!r}]"
            try:
                x = as_number(t, where)
            except InvalidInstanceError:
                x = math.nan
            if not (math.isfinite(x) and x >= 0):
                raise InvalidInstanceError(
                    where, f"a mini-batch time must be finite and >= 0, got {t!r}"
                )
            times[worker] = x
        median = statistics.median(times.values()) if times else 0.0
        for worker, x in times.items():
            # With a zero median only a worker that took time at all is slower.
            ratio = x / median if median > 0 else (math.inf if x > 0 else 0.0)
            ratios.setdefault(worker, []).append(ratio)
    slow = [
        (statistics.fmean(rs), w)
        for w, rs in ratios.items()
        if len(rs) == n and all(x > f for x in rs)
    ]
    return tuple(w for _, w in sorted(slow, key=lambda x: (-x[0], x[1])))


def straggler_scale_in(
    job: Job,
    workers: int,
    history: Sequence[Mapping[str, float]],
    factor: float = DEFAULT_FACTOR,
    window: int = DEFAULT_WINDOW,
) -> tuple[str, ...]:
    """The stragglers to remove with one ``scale_in()``, never below ``min_workers``.

    Parameters
    ----------
    job : Job
        The job (an inelastic one keeps all its workers).
    workers : int
        Its current worker count (an integer in min..max workers).
    history, factor, window
        As :func:`find_stragglers`.

    Returns
    -------
    tuple of str
        At most ``workers - job.min_workers`` stragglers, slowest first.

    Raises
    ------
    InvalidInstanceError
        ``workers`` outside the job's min..max, or as :func:`find_stragglers`.

    Examples
    --------
    >>> from scheduling_opt.model import Job
    >>> batch = {"w0": 1.0, "w1": 1.6, "w2": 1.0, "w3": 2.0}
    >>> straggler_scale_in(Job("j", 3, 4, 60.0), 4, [batch] * 10)
    ('w3',)

    References
    ----------
    EDL (TPDS '22) §5.2.
    """
    if not isinstance(job, Job):
        raise InvalidInstanceError("job", f"must be a Job, got {type(job).__name__}")
    n = as_int(workers, "workers")
    if not job.min_workers <= n <= job.max_workers:
        raise InvalidInstanceError(
            "workers", f"must be in {job.min_workers}..{job.max_workers}, got {n}"
        )
    return find_stragglers(history, factor, window)[: n - job.min_workers]
