"""Where the benchmark's tasks run: this process, local processes, or a dask cluster.

Every executor runs :func:`~scheduling_opt.bench.runner.run_task` on each task
and hands its rows to one ``record`` callback as tasks finish (in any order);
:func:`run_tasks` puts them back in task order and keeps the finished ones on
Ctrl-C. :func:`progress_bar` is the progress display on stderr.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable, Sequence
from typing import Any

from scheduling_opt.bench.runner import Row, Task, run_task
from scheduling_opt.errors import InvalidInstanceError

Record = Callable[[int, list[Row]], None]
Progress = Callable[[int, int], None]
EXECUTORS = ("local", "dask")


def run_tasks(
    tasks: Sequence[Task],
    methods: Sequence[str] | None,
    time_limit: float,
    workers: int = 1,
    progress: Progress | None = None,
    *,
    executor: str = "local",
    dask_client: Any = None,
) -> tuple[list[Row], bool]:
    """Run every task; return the rows (in task order) and whether Ctrl-C stopped it.

    Parameters
    ----------
    tasks : sequence of Task
        The instances, in report order.
    methods : sequence of str or None
        Method names to run (None: every method of each problem).
    time_limit : float
        Seconds per method run.
    workers : int
        ``executor="local"``: 1 runs in this process, more in a process pool;
        ``"dask"`` with no client: the size of a local dask cluster.
    progress : callable, optional
        Called with (finished tasks, all tasks) after each task.
    executor : {"local", "dask"}
        Where the tasks run.
    dask_client : distributed.Client, optional
        An existing dask client (``"dask"`` only).

    Returns
    -------
    rows : list of Row
        One row per (task, method), in task order (finished tasks only).
    interrupted : bool
        Whether Ctrl-C stopped the run.
    """
    done: dict[int, list[Row]] = {}

    def record(i: int, rows: list[Row]) -> None:
        done[i] = rows
        if progress:
            progress(len(done), len(tasks))

    try:
        if executor == "dask":
            _run_dask(tasks, methods, time_limit, workers, dask_client, record)
        elif workers <= 1:
            for i, task in enumerate(tasks):
                record(i, run_task(task, methods, time_limit))
        else:
            _run_pool(tasks, methods, time_limit, workers, record)
        interrupted = False
    except KeyboardInterrupt:
        interrupted = True
    return [row for i in sorted(done) for row in done[i]], interrupted


def _run_pool(
    tasks: Sequence[Task],
    methods: Sequence[str] | None,
    time_limit: float,
    workers: int,
    record: Record,
) -> None:
    from concurrent.futures import ProcessPoolExecutor, as_completed

    pool = ProcessPoolExecutor(max_workers=workers)
    try:
        futures = {pool.submit(run_task, t, methods, time_limit): i for i, t in enumerate(tasks)}
        for future in as_completed(futures):
            record(futures[future], future.result())
    finally:
        # On Ctrl-C, drop what has not started instead of waiting for it.
        pool.shutdown(wait=True, cancel_futures=True)


def _run_dask(
    tasks: Sequence[Task],
    methods: Sequence[str] | None,
    time_limit: float,
    workers: int,
    client: Any,
    record: Record,
) -> None:
    try:
        from distributed import Client, LocalCluster, as_completed
    except ImportError:
        raise InvalidInstanceError(
            "--executor", "dask needs the 'dask' extra: pip install 'scheduling-opt[dask]'"
        ) from None
    owned = client is None
    if owned:
        cluster = LocalCluster(
            n_workers=workers, threads_per_worker=1, processes=True, dashboard_address=None
        )
        client = Client(cluster)
    try:
        futures = [
            client.submit(
                run_task,
                t,
                methods,
                time_limit,
                pure=False,
                key=f"bench-{i}-{t.problem}-{t.size}-{t.seed}",
            )
            for i, t in enumerate(tasks)
        ]
        index = {f.key: i for i, f in enumerate(futures)}
        for future in as_completed(futures):
            record(index[future.key], future.result())
    finally:
        if owned:
            client.close()
            cluster.close()


def progress_bar(quiet: bool) -> Progress | None:
    """A progress display on stderr: tqdm's bar when installed, a plain one otherwise.

    Returns None when ``quiet``.
    """
    if quiet:
        return None
    try:
        from tqdm import tqdm
    except ImportError:
        tqdm = None
    bar: Any = None
    start = time.perf_counter()

    def show(done: int, total: int) -> None:
        nonlocal bar
        if tqdm is not None:
            if bar is None:
                bar = tqdm(total=total, unit="instance", file=sys.stderr, leave=True)
            bar.update(done - bar.n)
            if done == total:
                bar.close()
            return
        width = 30
        filled = width * done // max(total, 1)
        line = "#" * filled + "." * (width - filled)
        elapsed = time.perf_counter() - start
        sys.stderr.write(f"\r[{line}] {done}/{total} instances, {elapsed:.0f}s")
        if done == total:
            sys.stderr.write("\n")
        sys.stderr.flush()

    return show
