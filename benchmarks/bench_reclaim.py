"""Benchmark of Aryl server reclaiming: heuristics vs the exact optimum, and the MILP study.

Usage::

    python benchmarks/bench_reclaim.py                     # both tables, markdown
    python benchmarks/bench_reclaim.py --sizes 20 60 --seeds 3 --no-study
    python benchmarks/bench_reclaim.py --sizes 500 --skip exact-pulp --no-study

Methods table: for each size (on-loan 8-GPU servers, ~2x jobs, N_R = n/4)
and seed, every method of the ``reclaim`` problem runs ``--repeats`` times
(the median time is kept: the machine's 2 cores are shared), every answer
passes :func:`scheduling_opt.reclaim.check`, and the gap of a method on an
instance is ``(h - opt) / max(opt, 1)`` on the preempted-job count, ``opt``
from ``exact``; "certified gap" is the same with the method's own ``bound``
in place of ``opt`` (what a user knows without running ``exact``); "same
key" counts the instances where the method's (preempted, collateral) equals
``exact``'s (for the other exact methods: the cross-check; a proven answer
that differs is reported on stderr and fails the run). Per-instance table
(``--detail-sizes``): wall and CPU time of each run. Study table: the
two-stage MILP's steps switched on one at a time (see
:class:`scheduling_opt.reclaim.ModelConfig`), then the final model on each
backend.
"""

from __future__ import annotations

import argparse
import functools
import math
import os
import statistics
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from scheduling_opt.bench.report import dominated
from scheduling_opt.reclaim import (
    ModelConfig,
    ReclaimDecision,
    ReclaimInput,
    check,
    exact_two_stage,
    model_size,
)
from scheduling_opt.reclaim.io import PROBLEM, generate, read
from scheduling_opt.solution import DEFAULT_TIME_LIMIT, Solution, Status

STUDY: tuple[tuple[str, ModelConfig], ...] = (
    (
        "plain: all jobs, global M, weighted",
        ModelConfig(
            reduce=False,
            tight=False,
            lexicographic=False,
            merge=False,
            disaggregate=False,
            direct=False,
        ),
    ),
    (
        "+ drop unpreemptable jobs",
        ModelConfig(
            tight=False, lexicographic=False, merge=False, disaggregate=False, direct=False
        ),
    ),
    (
        "+ tight big-M",
        ModelConfig(lexicographic=False, merge=False, disaggregate=False, direct=False),
    ),
    ("+ two stages", ModelConfig(merge=False, disaggregate=False, direct=False)),
    ("+ merge identical servers", ModelConfig(disaggregate=False, direct=False)),
    ("+ per-class rows y_c <= size(c) p_j", ModelConfig(direct=False, lean=False)),
    ("+ direct collateral", ModelConfig(lean=False)),
    ("+ no implied knapsack rows (final, HiGHS)", ModelConfig()),
    ("final, weighted (one stage)", ModelConfig(lexicographic=False)),
    ("final on CP-SAT (8 workers)", ModelConfig(backend="cpsat")),
    ("final on CBC", ModelConfig(backend="cbc")),
)


def log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


@dataclass
class Row:
    preempted: list[int]
    collateral: list[int]
    gaps: list[float]
    tie_gaps: list[float]
    certified: list[float]
    times: list[float]
    cpu: list[float]
    proved: int = 0
    same: int = 0


Sol = Solution[ReclaimDecision]


def median_run(run: Callable[[], Sol], repeats: int) -> tuple[Sol, float]:
    """One result with its seconds the median wall time over ``repeats`` runs, and median CPU.

    CPU time (``time.process_time``) is what the run costs on a quiet
    machine; wall time grows with the load of the shared cores.
    """
    results, cpu = [], []
    for _ in range(repeats):
        start = time.process_time()
        results.append(run())
        cpu.append(time.process_time() - start)
    return results[0].with_(
        seconds=statistics.median(r.seconds for r in results)
    ), statistics.median(cpu)


def load() -> str:
    """The 1/5/15-minute load averages (2 shared cores: above 2 means queueing)."""
    return "load average " + ", ".join(f"{x:.2f}" for x in os.getloadavg())


def decision(sol: Sol) -> ReclaimDecision:
    assert sol.decision is not None
    return sol.decision


def methods_table(
    sizes: Sequence[int],
    seeds: int,
    repeats: int,
    limit: float,
    skip: Sequence[str] = (),
    detail: Sequence[int] = (),
) -> tuple[str, str]:
    """The methods table, and the per-instance times at the ``detail`` sizes."""
    names = [m.name for m in PROBLEM.methods if m.name not in skip]
    out = [
        "| servers | method | mean preempted | mean gap to exact | max gap | mean certified gap "
        "| mean collateral GPUs | median time | max time | median CPU | proved optimal "
        "| same key as exact | dominated by |",
        "|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|",
    ]
    per = [
        "| servers | seed | optimum (count, collateral) | "
        + " | ".join(f"{m} wall / CPU" for m in names)
        + " |",
        "|---:|---:|---|" + "---:|" * len(names),
    ]
    for n in sizes:
        rows = {m: Row([], [], [], [], [], [], []) for m in names}
        for seed in range(seeds):
            inp = read(generate(str(n), seed))
            results, cpus = {}, {}
            for m in names:
                method = PROBLEM.method(m)
                reps = 1 if method.exact and n >= 150 else repeats
                solve = functools.partial(method.run, inp, seed=seed, time_limit=limit)
                results[m], cpus[m] = median_run(solve, reps)
                check(inp, results[m])
            opt = len(decision(results["exact"]).preempted_jobs)
            opt_collateral = decision(results["exact"]).collateral_gpus
            for m, r in results.items():
                if r.status is Status.OPTIMAL and r.key != results["exact"].key:
                    raise AssertionError(
                        f"n={n} seed={seed}: {m} proves {r.key}, exact {results['exact'].key}"
                    )
            if n in detail:
                per.append(
                    f"| {n} | {seed} | ({opt}, {opt_collateral}) | "
                    + " | ".join(
                        f"{fmt_time(results[m].seconds)} / {fmt_time(cpus[m])}" for m in names
                    )
                    + " |"
                )
            for m, r in results.items():
                row = rows[m]
                count = len(decision(r).preempted_jobs)
                row.preempted.append(count)
                row.collateral.append(decision(r).collateral_gpus)
                row.gaps.append((count - opt) / max(opt, 1))
                tie = (decision(r).collateral_gpus - opt_collateral) / max(opt_collateral, 1)
                row.tie_gaps.append(tie if count == opt else 0.0)
                row.certified.append(math.nan if r.gap is None else r.gap)
                row.times.append(r.seconds)
                row.cpu.append(cpus[m])
                row.proved += r.status is Status.OPTIMAL
                row.same += r.key == results["exact"].key
            log(
                f"  n={n} seed={seed}: "
                + ", ".join(f"{m}={len(decision(r).preempted_jobs)}" for m, r in results.items())
            )
        marks = dominated(
            {
                m: (
                    statistics.median(rows[m].times),
                    (statistics.mean(rows[m].gaps), statistics.mean(rows[m].tie_gaps)),
                )
                for m in names
            }
        )
        for m in names:
            row = rows[m]
            default = " (default)" if m == PROBLEM.default else ""
            out.append(
                f"| {n} | {m}{default} | {statistics.mean(row.preempted):.1f} | "
                f"{100 * statistics.mean(row.gaps):.2f}% | {100 * max(row.gaps):.1f}% | "
                f"{fmt_certified(row.certified)} | {statistics.mean(row.collateral):.1f} | "
                f"{fmt_time(statistics.median(row.times))} | {fmt_time(max(row.times))} | "
                f"{fmt_time(statistics.median(row.cpu))} | {row.proved}/{seeds} | "
                f"{row.same}/{seeds} | {', '.join(marks[m]) or 'Pareto front'} |"
            )
    return "\n".join(out), "\n".join(per)


def fmt_certified(gaps: list[float]) -> str:
    """Mean certified gap over the runs that have a bound (``n/a`` if none has)."""
    known = [g for g in gaps if not math.isnan(g)]
    if not known:
        return "n/a"
    text = f"{100 * statistics.mean(known):.1f}%"
    return text if len(known) == len(gaps) else f"{text} ({len(known)}/{len(gaps)} bounded)"


def fmt_time(seconds: float) -> str:
    return f"{seconds * 1000:.2f} ms" if seconds < 1 else f"{seconds:.2f} s"


def study_table(sizes: Sequence[int], seeds: int, limit: float) -> str:
    out = [
        "| servers | model | median time | max time | proved optimal | vars (classes + jobs kept) |",
        "|---:|---|---:|---:|---:|---:|",
    ]
    for n in sizes:
        inputs: list[ReclaimInput] = [read(generate(str(n), seed)) for seed in range(seeds)]
        for name, config in STUDY:
            times, proved, size = [], 0, ""
            for inp in inputs:
                start = time.perf_counter()
                result = exact_two_stage(inp, time_limit=limit, config=config)
                times.append(time.perf_counter() - start)
                proved += result.status is Status.OPTIMAL
                check(inp, result)
                classes, kept = model_size(inp, config)
                size = f"{classes} + {kept}"
            log(f"  study n={n} {name}: {[round(t, 2) for t in times]}")
            out.append(
                f"| {n} | {name} | {fmt_time(statistics.median(times))} | {fmt_time(max(times))} | "
                f"{proved}/{seeds} | {size} |"
            )
    return "\n".join(out)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[8, 12, 20, 60, 150, 500])
    parser.add_argument("--seeds", type=int, default=5)
    parser.add_argument("--repeats", type=int, default=5, help="runs per heuristic (median time)")
    parser.add_argument("--time-limit", type=float, default=DEFAULT_TIME_LIMIT)
    parser.add_argument("--study-sizes", type=int, nargs="+", default=[150, 500])
    parser.add_argument("--study-seeds", type=int, default=3)
    parser.add_argument("--no-study", action="store_true")
    parser.add_argument("--no-methods", action="store_true")
    parser.add_argument("--skip", nargs="*", default=[], help="methods not to run (not exact)")
    parser.add_argument("--detail-sizes", type=int, nargs="*", default=[500])
    args = parser.parse_args(argv)
    if "exact" in args.skip:
        parser.error("exact gives the optimum every gap is measured against: it cannot be skipped")
    print(f"Machine: {os.cpu_count()} cores, {load()} at the start.\n")
    if not args.no_methods:
        log("methods ...")
        print("## Methods\n")
        table, per = methods_table(
            args.sizes, args.seeds, args.repeats, args.time_limit, args.skip, args.detail_sizes
        )
        print(table)
        if any(n in args.detail_sizes for n in args.sizes):
            print("\n## Per instance\n")
            print(per)
        print(flush=True)
    if not args.no_study:
        log("exact-model study ...")
        print("## Exact model study\n")
        print(study_table(args.study_sizes, args.study_seeds, args.time_limit))
    print(f"\n{load()} at the end.")
    return 0


if __name__ == "__main__":
    sys.exit(main())
