"""``scheduling-opt bench``: its options and the command (parse, run, write, print).

Exit status: 0 when every row verified, 1 when a row failed, 130 when
interrupted (the finished rows are written), 2 for bad options (raised as
:class:`~scheduling_opt.errors.InvalidInstanceError`, printed by the CLI).
"""

from __future__ import annotations

import argparse
import math
import sys
from pathlib import Path

from scheduling_opt.bench.executors import EXECUTORS, progress_bar, run_tasks
from scheduling_opt.bench.report import problem_section, write_outputs
from scheduling_opt.bench.runner import (
    DEFAULT_SEEDS,
    SUITE_TIME_LIMITS,
    SUITES,
    Row,
    build_tasks,
)
from scheduling_opt.errors import InvalidInstanceError
from scheduling_opt.registry import get_problem, problem_names
from scheduling_opt.suggest import did_you_mean


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
        choices=EXECUTORS,
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


def _check_methods(problems: list[str], methods: list[str] | None) -> list[str] | None:
    """The ``--method`` names, old names mapped to their new ones (with a warning)."""
    if not methods:
        return methods
    renamed = {old: new for p in problems for old, new in get_problem(p).renamed.items()}
    for old in dict.fromkeys(m for m in methods if m in renamed):
        print(
            f"scheduling-opt: warning: method {old!r} is deprecated and will be removed in "
            f"the next release; use {renamed[old]!r}",
            file=sys.stderr,
        )
    methods = [renamed.get(m, m) for m in methods]
    known = {m.name for p in problems for m in get_problem(p).methods}
    unknown = [m for m in methods if m not in known]
    if unknown:
        hint = did_you_mean(unknown[0], sorted(known))
        raise InvalidInstanceError(
            "--method",
            f"unknown method(s) {unknown}{hint} (known: {', '.join(sorted(known))})",
        )
    return methods


def _print_status_counts(rows: list[Row]) -> None:
    """One line: how many runs were skipped, stopped at their limit, or failed."""
    skipped = sum(1 for r in rows if r.status == "skipped")
    limited = sum(1 for r in rows if r.status == "time_limit")
    failed = sum(1 for r in rows if r.error)
    if skipped or limited or failed:
        print(
            f"{skipped} skipped (beyond the method's size limit), {limited} stopped at "
            f"the time limit, {failed} failed: the reasons are under each table"
        )


def run_bench_command(args: argparse.Namespace) -> int:
    """``scheduling-opt bench``: run, print the tables, write the files."""
    problems = args.problem or list(problem_names())
    for name in problems:
        get_problem(name)  # unknown names fail here, before any work
    args.method = _check_methods(problems, args.method)
    seeds = DEFAULT_SEEDS[args.suite] if args.seeds is None else args.seeds
    if seeds < 1 or args.workers < 1:
        raise InvalidInstanceError("--seeds/--workers", "must be >= 1")
    limit = SUITE_TIME_LIMITS[args.suite] if args.time_limit is None else args.time_limit
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
        progress_bar(args.quiet),
        executor=args.executor,
        dask_client=client,
    )
    summaries = write_outputs(
        rows, args.out, suite=args.suite, interrupted=interrupted, plots=not args.no_plots
    )
    for problem in dict.fromkeys(r.problem for r in rows):
        print(f"\n{problem}\n{problem_section(rows, summaries, problem)}")
    print(f"\n{len(rows)} runs on {len(tasks)} instances; results in {args.out}/")
    _print_status_counts(rows)
    failed = [r for r in rows if r.error]
    if failed:
        print(f"{len(failed)} failed rows (see {args.out}/report.md)", file=sys.stderr)
    if interrupted:
        print("interrupted: partial results written", file=sys.stderr)
        return 130
    return 1 if failed else 0
