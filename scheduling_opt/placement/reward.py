"""The allocation reward RW of Chronus §3.4.2, Eq. (7), and the consolidated span.

A job of G GPUs on k servers earns ``RW(k) = G * speed(k) / speed(k*)``,
k* its consolidated span: the fewest servers that can hold it. A table is
O(spans) to build.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from scheduling_opt.errors import InvalidInstanceError
from scheduling_opt.jsonpath import plain
from scheduling_opt.scaling import SpeedModel


def _positive_int(value: object, name: str) -> int:
    value = plain(value)  # a numpy integer counts as an int
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise InvalidInstanceError(name, f"must be an integer >= 1, got {value!r}")
    return value


def consolidated_span(workers: int, gpw: int, caps: Sequence[int]) -> int:
    """The fewest servers of capacities ``caps`` that hold ``workers`` workers.

    Parameters
    ----------
    workers : int
        Workers of the job (>= 1).
    gpw : int
        GPUs per worker (>= 1).
    caps : sequence of int
        GPUs of each server the job may use (at least one, each >= 1).

    Returns
    -------
    int
        ``ceil(workers / max(cap // gpw))``, or ``workers + 1`` when no
        server can hold a single worker (the job has no consolidated span).

    Raises
    ------
    InvalidInstanceError
        If an argument is out of range (the error names it).

    Examples
    --------
    >>> consolidated_span(12, 1, [8, 8, 8])
    2
    >>> consolidated_span(2, 4, [2, 2])
    3

    References
    ----------
    Chronus §3.4.2 (consolidated placement, Eq. 7).
    """
    workers = _positive_int(workers, "workers")
    gpw = _positive_int(gpw, "gpw")
    if isinstance(caps, np.ndarray):
        caps = caps.tolist()  # a float array stays refused below: capacities are counts
    if isinstance(caps, (str, bytes)) or not isinstance(caps, Sequence) or not caps:
        raise InvalidInstanceError("caps", f"must list at least one server capacity, got {caps!r}")
    return span_of(workers, gpw, [_positive_int(c, f"caps[{i}]") for i, c in enumerate(caps)])


def span_of(workers: int, gpw: int, caps: Sequence[int]) -> int:
    """:func:`consolidated_span` unchecked; empty ``caps`` (no eligible server) give ``workers + 1``."""
    per_server = max((c // gpw for c in caps), default=0)
    return math.ceil(workers / per_server) if per_server else workers + 1


def reward_table(
    speed: SpeedModel,
    model: str | None,
    workers: int,
    gpw: int,
    k_star: int,
    max_span: int | None = None,
) -> tuple[float, ...]:
    """Eq. (7) for spans 0..``max_span``: ``G * speed(k) / speed(k*)``, 0 below k*.

    Parameters
    ----------
    speed : SpeedModel
        The placement-sensitivity model.
    model : str or None
        The job's model name in ``speed`` (None: its default).
    workers, gpw : int
        Workers and GPUs per worker (G = ``workers * gpw``).
    k_star : int
        The consolidated span (``workers + 1``: none).
    max_span : int, optional
        The widest span to tabulate (default ``workers``).

    Returns
    -------
    tuple of float
        ``table[k]`` is the reward on k servers (``table[0] = 0``: unplaced).

    Examples
    --------
    >>> from scheduling_opt.scaling import Log2Model, Log2Times
    >>> table = reward_table(Log2Model(Log2Times(1.0, 2.0)), None, 16, 1, 2, 4)
    >>> [round(r, 3) for r in table]  # 16 * t_2 / t_k with t_k = 1 + log2(k)
    [0.0, 0.0, 16.0, 12.379, 10.667]

    References
    ----------
    Chronus §3.4.2, Eq. (7).
    """
    workers = _positive_int(workers, "workers")
    gpw = _positive_int(gpw, "gpw")
    k_star = _positive_int(k_star, "k_star")
    last = workers if max_span is None else _positive_int(max_span, "max_span")
    gpus = workers * gpw
    if k_star > last:
        return (0.0,) * (last + 1)
    ref = speed.speed(model, gpus, k_star)
    return tuple(
        gpus * speed.speed(model, gpus, k) / ref if k >= k_star else 0.0 for k in range(last + 1)
    )
