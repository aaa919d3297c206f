"""MCKP benchmark: dp vs HiGHS vs CBC vs CP-SAT vs greedy (medians, one run).

Run: ``python benchmarks/bench_mckp.py [--repeats 7] [--cpsat-limit 20]``.
Prints markdown tables: n = 1000 groups x 16 items, C = 4000 on Pisinger's
uncorrelated / weakly / strongly correlated classes and on Aryl-shaped
groups, with the greedy's gap to the optimum and its certified gap (to its
LP bound); then n = 2000, C = 10,000 time and tracemalloc peak of ``dp``.
"""

from __future__ import annotations

import argparse
import tracemalloc

from timing import median_time

from scheduling_opt import mckp
from scheduling_opt.mckp.io import KINDS, random_mckp


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--repeats", type=int, default=7)
    ap.add_argument("--milp-repeats", type=int, default=3)
    ap.add_argument("--cpsat-limit", type=float, default=20.0)
    args = ap.parse_args()
    print(
        "| class | dp ms | greedy ms (gap %, certified gap %) | HiGHS ms | CBC ms "
        "| CP-SAT ms (status) | dp speed-up vs fastest MILP | same optimum |"
    )
    print("|---|---|---|---|---|---|---|---|")
    for kind in KINDS:
        p = random_mckp(1000, 16, 4000, kind, seed=0)
        t_dp, dp = median_time(lambda p=p: mckp.dp(p), args.repeats)
        t_gr, gr = median_time(lambda p=p: mckp.greedy(p), args.repeats)
        t_hi, hi = median_time(lambda p=p: mckp.exact(p, time_limit=60), args.milp_repeats)
        t_cb, cb = median_time(lambda p=p: mckp.exact_pulp(p, time_limit=60), args.milp_repeats)
        t_cp, cp = median_time(lambda p=p: mckp.exact_cpsat(p, time_limit=args.cpsat_limit), 1)
        assert dp.objective is not None
        assert gr.objective is not None
        assert gr.gap is not None
        proven = [(t, r) for t, r in ((t_hi, hi), (t_cb, cb)) if r.status.value == "optimal"]
        fastest = min(t for t, _ in proven) if proven else float("nan")
        same = all(
            r.objective is not None
            and abs(r.objective - dp.objective) <= 1e-9 * (1 + abs(dp.objective))
            for _, r in proven
        )
        gap = 100 * (dp.objective - gr.objective) / dp.objective
        print(
            f"| {kind} | {1e3 * t_dp:.1f} | {1e3 * t_gr:.1f} ({gap:.3f}, {100 * gr.gap:.3f}) | "
            f"{1e3 * t_hi:.0f} | {1e3 * t_cb:.0f} | {1e3 * t_cp:.0f} ({cp.status.value}) | "
            f"{fastest / t_dp:.1f}x | {same} |"
        )
    print()
    print("| n x items, C | class | dp ms (median) | peak memory MB (tracemalloc) |")
    print("|---|---|---|---|")
    for kind in KINDS:
        p = random_mckp(2000, 16, 10_000, kind, seed=0)
        t_dp, _ = median_time(lambda p=p: mckp.dp(p), max(3, args.repeats // 2))
        tracemalloc.start()
        mckp.dp(p)
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
        print(f"| 2000 x 16, 10000 | {kind} | {1e3 * t_dp:.1f} | {peak / 2**20:.1f} |")


if __name__ == "__main__":
    main()
