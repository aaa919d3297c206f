"""Timing shared by the benchmark scripts (run as ``python benchmarks/bench_x.py``)."""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")


def median_time(fn: Callable[[], T], repeats: int) -> tuple[float, T]:
    """Median wall time of ``repeats`` calls (>= 1) of ``fn``, and its last result."""
    if repeats < 1:
        raise ValueError(f"repeats must be >= 1, got {repeats}")
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times), out
