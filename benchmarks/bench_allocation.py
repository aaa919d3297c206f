"""Allocation benchmark: two-phase vs fifo / afs / max-elastic vs exact enumeration.

Run: ``python benchmarks/bench_allocation.py [--seeds 20]``. Prints markdown
tables: the average-JCT gap of every method to the exact optimum (mean and
worst over seeds, small generated instances) with the mean certified gap to
the cheap lower bound, then times on large instances.
"""

from __future__ import annotations

import argparse
import statistics

from scheduling_opt.allocation import check
from scheduling_opt.allocation.io import PROBLEM

METHODS = ("two-phase", "fifo", "afs", "max-elastic")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--seeds", type=int, default=20)
    args = ap.parse_args()
    problem = PROBLEM
    assert problem.generate is not None
    print("| size | method | mean gap % | worst gap % | optimal in | certified gap % | median ms |")
    print("|---|---|---|---|---|---|---|")
    for size in ("n4", "n5", "n6"):
        gaps: dict[str, list[float]] = {m: [] for m in (*METHODS, "exact")}
        certified: dict[str, list[float]] = {m: [] for m in gaps}
        times: dict[str, list[float]] = {m: [] for m in gaps}
        for seed in range(args.seeds):
            inp = problem.parse(problem.generate(size, seed))
            best = problem.method("exact").run(inp, time_limit=60)
            assert best.objective is not None
            for name in gaps:
                r = best if name == "exact" else problem.method(name).run(inp)
                check(inp, r)
                assert r.objective is not None
                assert r.gap is not None
                gaps[name].append(100 * (r.objective - best.objective) / best.objective)
                certified[name].append(100 * r.gap)
                times[name].append(r.seconds)
        for name, g in gaps.items():
            hits = sum(x <= 1e-7 for x in g)
            print(
                f"| {size} | {name} | {statistics.mean(g):.2f} | {max(g):.2f} | "
                f"{hits}/{len(g)} | {statistics.mean(certified[name]):.1f} | "
                f"{1e3 * statistics.median(times[name]):.2f} |"
            )
    print()
    print("| size | method | mean avg-JCT relative to two-phase % | median ms |")
    print("|---|---|---|---|")
    for size in ("n200", "n1000"):
        rel: dict[str, list[float]] = {m: [] for m in METHODS}
        times = {m: [] for m in METHODS}
        for seed in range(max(3, args.seeds // 4)):
            inp = problem.parse(problem.generate(size, seed))
            base = problem.method("two-phase").run(inp).objective
            assert base is not None
            for name in METHODS:
                r = problem.method(name).run(inp)
                assert r.objective is not None
                rel[name].append(100 * (r.objective - base) / base)
                times[name].append(r.seconds)
        for name in METHODS:
            print(
                f"| {size} | {name} | {statistics.mean(rel[name]):+.2f} | "
                f"{1e3 * statistics.median(times[name]):.1f} |"
            )


if __name__ == "__main__":
    main()
