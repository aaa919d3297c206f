"""The benchmark runner behind ``scheduling-opt bench``.

For each selected problem it builds the suite's instances (the problem's
seeded generator at each size of the suite, ``--seeds`` seeds each, plus the
curated instance files of that problem found in ``--instances``), runs every
method on each, verifies every answer with the problem's independent checker
and records objective, status, gap to the best proven optimum and wall time.

Gap: for a proven optimum ``opt`` and an objective ``obj``,
``gap = (obj - opt) / max(|opt|, 1)`` for a minimization problem and
``(opt - obj) / max(|opt|, 1)`` for a maximization problem (the denominator is
floored at one objective unit so that an optimum of 0, e.g. no preemption,
gives a finite gap). It is never negative unless a solver is wrong; such a row
is flagged. Without a proven optimum the gap is empty.

Outputs in ``--out``: ``results.csv`` and ``results.json`` (one row per
instance x method), ``report.md`` (a table per problem) and, when matplotlib is
installed, ``<problem>.png`` (gap and time vs size). Same suite and seeds give
the same instances and the same heuristic results; times of course vary.
"""

from __future__ import annotations

import argparse
import csv
import json
import math
import statistics
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, fields
from pathlib import Path
from typing import Any, NamedTuple

from scheduling_opt.errors import InstanceTooLargeError, InvalidInstanceError, SchedulingOptError
from scheduling_opt.instance import Instance, load
from scheduling_opt.result import SolveOptions, Status
from scheduling_opt.solvers.registry import Method, Problem, get_problem, problem_names

SUITES = ("quick", "standard", "paper")
DEFAULT_SEEDS = {"quick": 2, "standard": 5, "paper": 3}
DEFAULT_TIME_LIMIT = {"quick": 10.0, "standard": 60.0, "paper": 120.0}
GAP_TOLERANCE = 1e-7
#: The method whose time the speed-up column divides by (else the fastest exact one).
REFERENCE_METHOD = "exact"


@dataclass(frozen=True, slots=True)
class Task:
    """One instance to run every selected method on (generated or a file)."""

    problem: str
    size: str
    seed: int
    path: str | None = None

    def instance(self) -> Instance:
        if self.path is not None:
            return load(self.path)
        problem = get_problem(self.problem)
        assert problem.generate is not None
        return problem.generate(self.size, self.seed)


@dataclass(frozen=True, slots=True)
class Row:
    """One method on one instance."""

    problem: str
    size: str
    seed: int
    instance: str
    method: str
    exact: bool
    status: str
    objective: float | None
    optimum: float | None
    gap: float | None
    seconds: float | None
    verified: bool
    error: str
    note: str = ""


def add_bench_arguments(parser: argparse.ArgumentParser) -> None:
    """The ``bench`` subcommand's options."""
    parser.add_argument("--suite", choices=SUITES, default="quick")
    parser.add_argument("--problem", action="append", help="only this problem (repeatable)")
    parser.add_argument("--method", action="append", help="only this method (repeatable)")
    parser.add_argument(
        "--seeds", type=int, help="seeds per size (default: 2 quick, 5 standard, 3 paper)"
    )
    parser.add_argument("--time-limit", type=float, help="seconds per exact solve")
    parser.add_argument("--workers", type=int, default=1, help="parallel processes (default 1)")
    parser.add_argument(
        "--executor",
        choices=("local", "dask"),
        default="local",
        help="local processes, or a dask.distributed cluster (the 'dask' extra)",
    )
    parser.add_argument(
        "--scheduler", help="with --executor dask: the address of a running dask scheduler"
    )
    parser.add_argument("--out", type=Path, default=Path("bench-out"), help="output folder")
    parser.add_argument(
        "--instances",
        type=Path,
        default=Path("instances"),
        help="folder of curated instance files to include (default: ./instances if present)",
    )
    parser.add_argument("--no-plots", action="store_true", help="do not draw PNG plots")
    parser.add_argument("--quiet", action="store_true", help="no progress output")


# --------------------------------------------------------------------------- running


def _gap(problem: Problem, objective: float | None, optimum: float | None) -> float | None:
    if objective is None or optimum is None:
        return None
    diff = objective - optimum if problem.sense == "min" else optimum - objective
    return diff / max(abs(optimum), 1.0)


def run_task(task: Task, methods: Sequence[str] | None, time_limit: float) -> list[Row]:
    """Run the selected methods on one instance; a failing method is a failed row."""
    problem = get_problem(task.problem)
    label = task.path if task.path is not None else f"{task.size}/seed{task.seed}"

    def row(o: _Outcome, optimum: float | None, gap: float | None, error: str) -> Row:
        return Row(
            task.problem, task.size, task.seed, label, o.method, o.exact, o.status,
            o.objective, optimum, gap, o.seconds, o.verified, error, o.note,
        )  # fmt: skip

    try:
        data = problem.parse(task.instance())
    except SchedulingOptError as e:
        failed = _Outcome("-", False, "error", None, None, False, f"instance: {e}")
        return [row(failed, None, None, failed.error)]
    options = SolveOptions(seed=task.seed, time_limit=time_limit)
    raw = [
        _run_method(problem, method, data, options)
        for method in problem.methods
        if not methods or method.name in methods
    ]
    optimum = _best_optimum(problem, raw)
    rows = []
    for o in raw:
        gap = _gap(problem, o.objective, optimum) if o.verified else None
        error = o.error
        if gap is not None and gap < -GAP_TOLERANCE:
            error = error or f"beats the proven optimum {optimum}"
        rows.append(row(o, optimum, gap, error))
    return rows


class _Outcome(NamedTuple):
    method: str
    exact: bool
    status: str
    objective: float | None
    seconds: float | None
    verified: bool
    error: str
    note: str = ""


def _run_method(problem: Problem, method: Method, data: Any, options: SolveOptions) -> _Outcome:
    try:
        result = method.run(data, options)
    except InstanceTooLargeError as e:
        return _Outcome(method.name, method.exact, "skipped", None, None, False, "", str(e))
    except Exception as e:  # a broken solver is a failed row, never a crashed run
        return _Outcome(
            method.name, method.exact, "error", None, None, False, f"{type(e).__name__}: {e}"
        )
    try:
        problem.check(data, result)
    except Exception as e:
        return _Outcome(
            method.name,
            method.exact,
            result.status.value,
            result.objective,
            result.seconds,
            False,
            f"check: {e}",
        )
    return _Outcome(
        method.name, method.exact, result.status.value, result.objective, result.seconds, True, ""
    )


def _best_optimum(problem: Problem, raw: Sequence[_Outcome]) -> float | None:
    """The objective proven optimal by an exact method whose answer verified."""
    proven = [
        o.objective
        for o in raw
        if o.exact and o.verified and o.status == Status.OPTIMAL.value and o.objective is not None
    ]
    if not proven:
        return None
    return min(proven) if problem.sense == "min" else max(proven)


def build_tasks(
    suite: str, problems: Sequence[str], seeds: int, instances_dir: Path | None
) -> list[Task]:
    """The suite's instances, in a fixed order (problem, size, seed, then files)."""
    curated = _curated(instances_dir)
    tasks: list[Task] = []
    for name in problems:
        problem = get_problem(name)
        if problem.generate is not None:
            for size in problem.sizes.get(suite, ()):
                tasks.extend(Task(name, size, seed) for seed in range(seeds))
        tasks.extend(
            Task(name, curated_size(name, path), 0, str(path))
            for path, owner in curated
            if owner == name
        )
    return tasks


def _curated(folder: Path | None) -> list[tuple[Path, object]]:
    """Each ``*.json`` file of ``folder`` (sorted) with its ``problem`` field."""
    if folder is None or not folder.is_dir():
        return []
    found: list[tuple[Path, object]] = []
    for path in sorted(folder.glob("*.json")):
        try:
            head = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError, RecursionError) as e:
            # Its problem is unknown, so it cannot be a row of any table: say so.
            print(f"bench: skipping {path}: not a readable JSON file ({e})", file=sys.stderr)
            continue
        found.append((path, head.get("problem") if isinstance(head, dict) else None))
    return found


def curated_size(problem: str, path: Path) -> str:
    """The report's size label of a curated file: ``file:`` + its name.

    One row per file: curated instances differ in scale (a paper's worked
    example next to a 96-server instance), so averaging them would hide both.
    """
    return "file:" + path.stem.removeprefix(f"{problem}-")


def run_tasks(
    tasks: Sequence[Task],
    methods: Sequence[str] | None,
    time_limit: float,
    workers: int = 1,
    progress: Callable[[int, int], None] | None = None,
    *,
    executor: str = "local",
    dask_client: Any = None,
) -> tuple[list[Row], bool]:
    """Run every task; return the rows (in task order) and whether Ctrl-C stopped it.

    ``executor="local"`` runs in this process (``workers == 1``) or in a
    process pool; ``"dask"`` submits the tasks to ``dask_client`` (a
    ``distributed.Client``), or to a local dask cluster of ``workers``
    processes when none is given. On Ctrl-C the finished tasks are kept.
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
    record: Callable[[int, list[Row]], None],
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
    record: Callable[[int, list[Row]], None],
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


# --------------------------------------------------------------------------- reporting


@dataclass(frozen=True, slots=True)
class Summary:
    """One method at one size: the report's table row."""

    problem: str
    size: str
    method: str
    runs: int
    failed: int
    mean_gap: float | None
    worst_gap: float | None
    median_seconds: float | None
    speedup: float | None


def summarize(rows: Sequence[Row]) -> list[Summary]:
    """Aggregate rows per (problem, size, method), in first-seen order."""
    groups: dict[tuple[str, str, str], list[Row]] = {}
    for row in rows:
        groups.setdefault((row.problem, row.size, row.method), []).append(row)
    exact_median: dict[tuple[str, str], float] = {}
    reference_set: set[tuple[str, str]] = set()
    for (problem, size, method), group in groups.items():
        times = [r.seconds for r in group if r.exact and r.seconds is not None]
        if times:
            key = (problem, size)
            exact_time = statistics.median(times)
            if method == REFERENCE_METHOD:
                exact_median[key] = exact_time
                reference_set.add(key)
            elif key not in reference_set:
                exact_median[key] = min(exact_time, exact_median.get(key, math.inf))
    out = []
    for (problem, size, method), group in groups.items():
        gaps = [r.gap for r in group if r.gap is not None]
        times = [r.seconds for r in group if r.seconds is not None]
        median = statistics.median(times) if times else None
        ref = exact_median.get((problem, size))
        speedup = ref / median if ref is not None and median else None
        out.append(
            Summary(
                problem,
                size,
                method,
                len(group),
                sum(1 for r in group if r.error),
                statistics.fmean(gaps) if gaps else None,
                max(gaps) if gaps else None,
                median,
                speedup,
            )
        )
    return out


def _fmt(value: float | None, kind: str) -> str:
    if value is None:
        return "-"
    if kind == "pct":
        return f"{100 * value:.2f}"
    if kind == "time":
        return f"{1000 * value:.2f}"
    return f"{value:.1f}x"


def format_table(summaries: Sequence[Summary], problem: str) -> str:
    """A Markdown table of one problem's summaries."""
    head = "| size | method | runs | failed | mean gap % | worst gap % | median ms | speed-up vs exact |"
    lines = [head, "|" + "---|" * 8]
    for s in summaries:
        if s.problem != problem:
            continue
        lines.append(
            f"| {s.size} | {s.method} | {s.runs} | {s.failed} | {_fmt(s.mean_gap, 'pct')} | "
            f"{_fmt(s.worst_gap, 'pct')} | {_fmt(s.median_seconds, 'time')} | {_fmt(s.speedup, 'x')} |"
        )
    return "\n".join(lines)


def write_outputs(
    rows: Sequence[Row], out: Path, *, suite: str, interrupted: bool, plots: bool
) -> list[Summary]:
    """Write results.csv, results.json, report.md (and plots); return the summaries."""
    out.mkdir(parents=True, exist_ok=True)
    names = [f.name for f in fields(Row)]
    with (out / "results.csv").open("w", newline="", encoding="utf-8") as fh:
        writer = csv.DictWriter(fh, fieldnames=names)
        writer.writeheader()
        for row in rows:
            writer.writerow({k: ("" if v is None else v) for k, v in asdict(row).items()})
    payload = {"suite": suite, "interrupted": interrupted, "rows": [asdict(r) for r in rows]}
    (out / "results.json").write_text(
        json.dumps(payload, indent=1, allow_nan=False), encoding="utf-8"
    )
    summaries = summarize(rows)
    problems = list(dict.fromkeys(r.problem for r in rows))
    parts = [
        f"# Benchmark report: suite `{suite}`"
        + (" (interrupted: partial results)" if interrupted else ""),
        "",
    ]
    parts.append(
        "Gap: relative to the best proven optimum, denominator floored at 1; "
        "times in milliseconds (median); speed-up = the `exact` method's median time "
        "(else the fastest exact method's) / this method's median time.\n"
    )
    for problem in problems:
        parts += [f"## {problem}", "", format_table(summaries, problem), ""]
    failures = [r for r in rows if r.error]
    if failures:
        parts += ["## Failed rows", ""]
        parts += [f"- {r.problem} {r.instance} {r.method}: {r.error}" for r in failures]
        parts.append("")
    skipped = [r for r in rows if r.status == "skipped"]
    if skipped:
        parts += ["## Skipped runs (instance beyond the method's size limit)", ""]
        parts += [f"- {r.problem} {r.instance} {r.method}: {r.note}" for r in skipped]
        parts.append("")
    (out / "report.md").write_text("\n".join(parts), encoding="utf-8")
    if plots:
        _plot(summaries, problems, out)
    return summaries


def _plot(summaries: Sequence[Summary], problems: Sequence[str], out: Path) -> None:
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return
    for problem in problems:
        rows = [s for s in summaries if s.problem == problem and not s.size.startswith("file:")]
        if not rows:
            continue
        sizes = list(dict.fromkeys(s.size for s in rows))
        fig, (ax_gap, ax_time) = plt.subplots(1, 2, figsize=(11, 4))
        for method in dict.fromkeys(s.method for s in rows):
            mine = {s.size: s for s in rows if s.method == method}
            xs = [i for i, size in enumerate(sizes) if size in mine]
            gaps = [100 * (mine[sizes[i]].mean_gap or 0.0) for i in xs]
            times = [max(mine[sizes[i]].median_seconds or 0.0, 1e-6) for i in xs]
            ax_gap.plot(xs, gaps, marker="o", label=method)
            ax_time.plot(xs, times, marker="o", label=method)
        for ax in (ax_gap, ax_time):
            ax.set_xticks(range(len(sizes)), sizes, rotation=30, ha="right")
            ax.set_xlabel("size")
        ax_gap.set_ylabel("mean gap to optimum (%)")
        ax_time.set_ylabel("median time (s)")
        ax_time.set_yscale("log")
        ax_gap.legend(fontsize="small")
        fig.suptitle(problem)
        fig.tight_layout()
        fig.savefig(out / f"{problem}.png", dpi=100)
        plt.close(fig)


# --------------------------------------------------------------------------- command


def _progress_printer(quiet: bool) -> Callable[[int, int], None] | None:
    """A progress bar on stderr: tqdm's when installed, a plain one otherwise."""
    if quiet:
        return None
    try:
        from tqdm import tqdm
    except ImportError:
        return _plain_progress()
    bar: Any = None

    def show_tqdm(done: int, total: int) -> None:
        nonlocal bar
        if bar is None:
            bar = tqdm(total=total, unit="instance", file=sys.stderr, leave=True)
        bar.update(done - bar.n)
        if done == total:
            bar.close()

    return show_tqdm


def _plain_progress() -> Callable[[int, int], None]:
    start = time.perf_counter()

    def show(done: int, total: int) -> None:
        width = 30
        filled = width * done // max(total, 1)
        elapsed = time.perf_counter() - start
        bar = "#" * filled + "." * (width - filled)
        sys.stderr.write(f"\r[{bar}] {done}/{total} instances, {elapsed:.0f}s")
        if done == total:
            sys.stderr.write("\n")
        sys.stderr.flush()

    return show


def run_bench_command(args: argparse.Namespace) -> int:
    """``scheduling-opt bench``: run, print the tables, write the files."""
    problems = args.problem or list(problem_names())
    for name in problems:
        get_problem(name)  # unknown names fail here, before any work
    if args.method:
        known = {m.name for p in problems for m in get_problem(p).methods}
        unknown = [m for m in args.method if m not in known]
        if unknown:
            raise InvalidInstanceError(
                "--method", f"unknown method(s) {unknown} (known: {', '.join(sorted(known))})"
            )
    seeds = DEFAULT_SEEDS[args.suite] if args.seeds is None else args.seeds
    if seeds < 1 or args.workers < 1:
        raise InvalidInstanceError("--seeds/--workers", "must be >= 1")
    limit = DEFAULT_TIME_LIMIT[args.suite] if args.time_limit is None else args.time_limit
    if not (math.isfinite(limit) and limit > 0):
        raise InvalidInstanceError("--time-limit", f"must be > 0, got {limit}")
    # The default folder may be absent (run outside a checkout); a named one may not.
    explicit = args.instances is not None and args.instances != Path("instances")
    if explicit and not args.instances.is_dir():
        raise InvalidInstanceError("--instances", f"not a folder: {str(args.instances)!r}")
    if args.out.exists() and not args.out.is_dir():
        raise InvalidInstanceError("--out", f"exists and is not a folder: {str(args.out)!r}")
    tasks = build_tasks(args.suite, problems, seeds, args.instances)
    client = None
    if args.scheduler:
        if args.executor != "dask":
            raise InvalidInstanceError("--scheduler", "goes with --executor dask")
        from distributed import Client

        client = Client(args.scheduler)
    rows, interrupted = run_tasks(
        tasks,
        args.method,
        limit,
        args.workers,
        _progress_printer(args.quiet),
        executor=args.executor,
        dask_client=client,
    )
    summaries = write_outputs(
        rows, args.out, suite=args.suite, interrupted=interrupted, plots=not args.no_plots
    )
    for problem in dict.fromkeys(r.problem for r in rows):
        print(f"\n{problem}\n{format_table(summaries, problem)}")
    print(f"\n{len(rows)} runs on {len(tasks)} instances; results in {args.out}/")
    failed = [r for r in rows if r.error]
    if failed:
        print(f"{len(failed)} failed rows (see {args.out}/report.md)", file=sys.stderr)
    if interrupted:
        print("interrupted: partial results written", file=sys.stderr)
        return 130
    return 1 if failed else 0
