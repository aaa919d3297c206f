"""AntMan memory split: the greedy's gap to the exact MCKP split, and times.

Run: ``python benchmarks/bench_memory_split.py [--seeds 10] [--repeats 5]``.
For each size, ``--seeds`` generated GPUs (``memory_split.io.random_input``);
per instance the median of ``--repeats`` timed runs of each method; the table
shows the median over instances of those times, the greedy's gap to the
optimum (mean, max, and how often it is optimal) and the time of the LP
bound (``upper_bound``). ``exact-highs`` (HiGHS) and ``exact-pulp`` (CBC) run
on sizes up to ``--milp-max`` jobs only and must agree with ``exact``.

The EDL and AntMan round times moved to ``benchmarks/bench_policies.py``.
"""

from __future__ import annotations

import argparse
import statistics
from functools import partial

from timing import median_time

from scheduling_opt import memory_split as ms
from scheduling_opt.memory_split.io import random_input

SIZES = (
    (2, 0.25),
    (4, 0.25),
    (8, 0.25),
    (16, 0.25),
    (32, 0.25),
    (64, 0.25),
    (128, 0.25),
    (32, 0.05),
)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--seeds", type=int, default=10)
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--milp-max", type=int, default=32)
    args = ap.parse_args()
    print(
        "| jobs | chunk GB | spare chunks (median) | greedy ms | LP bound ms | exact ms "
        "| HiGHS ms | CBC ms | greedy gap % mean | gap % max | greedy optimal |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for n, chunk in SIZES:
        t_g: list[float] = []
        t_b: list[float] = []
        t_e: list[float] = []
        t_m: list[float] = []
        t_p: list[float] = []
        gaps: list[float] = []
        spare: list[int] = []
        for seed in range(args.seeds):
            p = random_input(n, seed, chunk)
            spare.append(p.capacity)
            tg, greedy = median_time(partial(ms.greedy, p), args.repeats)
            tb, _ = median_time(partial(ms.upper_bound, p), args.repeats)
            te, exact = median_time(partial(ms.exact, p), args.repeats)
            ms.check(p, greedy)
            ms.check(p, exact)
            assert greedy.objective is not None
            assert exact.objective is not None
            if n <= args.milp_max:
                for fn, times in ((ms.exact_highs, t_m), (ms.exact_pulp, t_p)):
                    tm, milp = median_time(partial(fn, p), max(1, args.repeats // 2))
                    ms.check(p, milp)
                    assert milp.objective is not None
                    assert abs(milp.objective - exact.objective) <= 1e-6 * (1 + exact.objective)
                    times.append(tm)
            gaps.append(100 * (exact.objective - greedy.objective) / exact.objective)
            t_g.append(tg)
            t_b.append(tb)
            t_e.append(te)
        highs = f"{1e3 * statistics.median(t_m):.1f}" if t_m else "-"
        cbc = f"{1e3 * statistics.median(t_p):.1f}" if t_p else "-"
        optimal = sum(1 for g in gaps if g <= 1e-7)
        print(
            f"| {n} | {chunk} | {statistics.median(spare):.0f} | "
            f"{1e3 * statistics.median(t_g):.2f} | {1e3 * statistics.median(t_b):.2f} | "
            f"{1e3 * statistics.median(t_e):.2f} | {highs} | {cbc} | "
            f"{statistics.fmean(gaps):.2f} | {max(gaps):.2f} | {optimal}/{len(gaps)} |"
        )


if __name__ == "__main__":
    main()
