"""A progress counter on stderr for long runs: tqdm's bar when installed, a plain line otherwise."""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from typing import Any


def progress_bar(quiet: bool, unit: str = "run") -> Callable[[int, int], None] | None:
    """``show(done, total)`` on stderr when it is a terminal (None when ``quiet`` or not one).

    A counter redrawn with ``\\r`` is noise in a log or a pipe, and would put
    more lines before a one-line error (tqdm's bar too), so none is drawn there.

    Examples
    --------
    >>> progress_bar(quiet=True) is None
    True
    """
    if quiet or not sys.stderr.isatty():
        return None
    try:
        from tqdm import tqdm
    except ImportError:
        start = time.perf_counter()

        def plain(done: int, total: int) -> None:
            end = "\n" if done == total else "\r"
            print(
                f"{unit}s {done}/{total} {time.perf_counter() - start:.1f}s",
                end=end,
                file=sys.stderr,
            )

        return plain
    bar: Any = None

    def show(done: int, total: int) -> None:
        nonlocal bar
        if bar is None:
            bar = tqdm(total=total, unit=unit, file=sys.stderr, leave=False)
        bar.update(done - bar.n)
        if done == total:
            bar.close()
            bar = None  # the next run gets a fresh bar

    return show
