"""AntMan memory split: the greedy's gap to the exact MCKP split, and times.

Run: ``python benchmarks/bench_memory_split.py [--seeds 10] [--repeats 5] [--steps]``.
For each size, ``--seeds`` generated GPUs (``memory_split.random_input``);
per instance the median of ``--repeats`` timed runs of each method; the table
shows the median over instances of those times and the greedy's gap to the
optimum (mean, max, and how often it is optimal). ``exact-milp`` (HiGHS) runs
on sizes up to ``--milp-max`` jobs only.

``--steps`` also times one round of the two online policies the split serves
(``elastic.step``, ``sharing.step``) on warmed-up clusters of 8-GPU servers.
"""

from __future__ import annotations

import argparse
import statistics
from functools import partial

import numpy as np
from timing import median_time

from scheduling_opt.model import Cluster, GpuType, Job, Placement, Server
from scheduling_opt.solvers import elastic as el
from scheduling_opt.solvers import memory_split as ms
from scheduling_opt.solvers import sharing as sh

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


def elastic_state(servers: int, jobs: int, seed: int) -> el.ElasticState:
    """Random min/max/requested workers, concave speed-ups, after 3 rounds of 300 s."""
    rng = np.random.default_rng(seed)
    cluster = Cluster((GpuType("V100"),), tuple(Server(f"s{i}", "V100", 8) for i in range(servers)))
    out = []
    for i in range(jobs):
        lo = int(rng.integers(1, 3))
        hi = int(rng.integers(lo, 9))
        inc = np.sort(rng.uniform(0.3, 1.0, hi - 1))[::-1]
        speedup = tuple(np.concatenate([[1.0], 1.0 + np.cumsum(inc)]).tolist())
        service = float(rng.choice([0, 600, 20_000]))
        requested = int(rng.integers(lo, hi + 1))
        out.append(el.ElasticJob(Job(f"j{i}", lo, hi, 100.0), service, 0.0, speedup, requested))
    state = el.ElasticState(cluster, tuple(out), Placement())
    for _ in range(3):
        state = el.advance(state, el.step(state), 300.0)
    return state


def sharing_state(servers: int, jobs: int, seed: int) -> sh.SharingState:
    """1-8-GPU jobs of both classes, two tenants (quotas 1/2 and 1/4), after 2 rounds."""
    rng = np.random.default_rng(seed)
    cluster = Cluster((GpuType("V100"),), tuple(Server(f"s{i}", "V100", 8) for i in range(servers)))
    out = []
    for i in range(jobs):
        g = int(rng.choice([1, 1, 2, 4, 8]))
        cls = str(rng.choice(["guarantee", "opportunistic"]))
        tenant = str(rng.choice(["A", "B"]))
        out.append(Job(f"a{i}", g, g, 100.0, 1, float(i), None, (), cls, tenant))  # type: ignore[arg-type]
    util = {g: float(rng.choice([0.0, 0.3, 0.9])) for g in sh.all_gpus(cluster)}
    total = 8 * servers
    state = sh.SharingState(
        cluster, {"A": total // 2, "B": total // 4}, tuple(out), utilization=util
    )
    for _ in range(2):
        state = sh.apply(state, sh.step(state))
    return state


def steps(repeats: int) -> None:
    print()
    print(
        "| servers (GPUs) | jobs | EDL waiting | EDL mode | EDL step ms | AntMan pending | AntMan step ms |"
    )
    print("|---|---|---|---|---|---|---|")
    for servers, jobs in ((4, 32), (16, 128), (64, 512)):
        e = elastic_state(servers, jobs, 0)
        t_e, d = median_time(partial(el.step, e), repeats)
        el.check_step(e, d)
        a = sharing_state(servers, jobs, 1)
        t_a, da = median_time(partial(sh.step, a), repeats)
        sh.check_step(a, da)
        print(
            f"| {servers} ({8 * servers}) | {jobs} | {len(e.pending())} | {d.mode} | {1e3 * t_e:.1f} "
            f"| {len(a.pending())} | {1e3 * t_a:.1f} |"
        )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--seeds", type=int, default=10)
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--milp-max", type=int, default=32)
    ap.add_argument("--steps", action="store_true", help="also time the EDL and AntMan steps")
    args = ap.parse_args()
    print(
        "| jobs | chunk GB | spare chunks (median) | greedy ms | exact ms | HiGHS ms "
        "| greedy gap % mean | gap % max | greedy optimal |"
    )
    print("|---|---|---|---|---|---|---|---|---|")
    for n, chunk in SIZES:
        t_g, t_e, t_m, gaps, spare = [], [], [], [], []
        for seed in range(args.seeds):
            p = ms.random_input(n, seed, chunk)
            spare.append(p.capacity)
            tg, greedy = median_time(partial(ms.solve_greedy, p), args.repeats)
            te, exact = median_time(partial(ms.solve_exact, p), args.repeats)
            ms.check_split(p, greedy)
            ms.check_split(p, exact)
            if n <= args.milp_max:
                tm, milp = median_time(partial(ms.solve_milp, p), max(1, args.repeats // 2))
                ms.check_split(p, milp)
                assert milp.objective is not None
                assert exact.objective is not None
                assert abs(milp.objective - exact.objective) <= 1e-6 * (1 + exact.objective)
                t_m.append(tm)
            assert greedy.objective is not None
            assert exact.objective is not None
            gaps.append(100 * (exact.objective - greedy.objective) / exact.objective)
            t_g.append(tg)
            t_e.append(te)
        highs = f"{1e3 * statistics.median(t_m):.1f}" if t_m else "-"
        optimal = sum(1 for g in gaps if g <= 1e-7)
        print(
            f"| {n} | {chunk} | {statistics.median(spare):.0f} | {1e3 * statistics.median(t_g):.2f} "
            f"| {1e3 * statistics.median(t_e):.2f} | {highs} | {statistics.fmean(gaps):.2f} "
            f"| {max(gaps):.2f} | {optimal}/{len(gaps)} |"
        )
    if args.steps:
        steps(args.repeats)


if __name__ == "__main__":
    main()
