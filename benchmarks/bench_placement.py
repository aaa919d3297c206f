"""Placement benchmark: bfd / round-up / quasi / local-search vs exact (CP-SAT).

Run: ``python benchmarks/bench_placement.py [--seeds 10] [--time-limit 60]``.
Prints markdown tables:

1. per cluster size (16, 96, 120 8-GPU servers, an earlier random workload
   filling 40-70%, 10-40% consolidation-hostile jobs): each method's total
   RW gap to ``exact`` on the seeds where exact proved optimality, the gap
   to the best answer found on every seed, servers spanned, unplaced jobs,
   median time;
2. bfd on 1,000 jobs and 443 servers (Aryl's cluster), median of repeats;
3. Proposition 1: round-up on random consolidation-friendly (and rounded
   hostile) demands within Eq. (6) on free 8-GPU nodes; failures counted.
"""

from __future__ import annotations

import argparse
import math
import random
import statistics
import time

from scheduling_opt.instance import Instance
from scheduling_opt.model import Cluster, GpuType, Job, Placement, Server
from scheduling_opt.result import SolveOptions, Status
from scheduling_opt.solvers import placement as pl
from scheduling_opt.solvers.placement_bfd import bfd_assign

HEURISTICS = ("bfd", "round-up", "quasi", "local-search")


def _gap(best: float, value: float) -> float:
    return 100 * (best - value) / best if best else 0.0


def bench_size(size: str, seeds: int, limit: float, with_pulp: bool) -> None:
    methods = (*HEURISTICS, "exact") + (("exact-pulp",) if with_pulp else ())
    rows: dict[str, dict[str, list[float]]] = {
        m: {"gap": [], "known": [], "span": [], "unplaced": [], "ms": []} for m in methods
    }
    proven = 0
    for seed in range(seeds):
        inp = pl.parse(pl.generate(size, seed))
        results = {}
        for m in methods:
            r = pl.PROBLEM.method(m).run(inp, SolveOptions(seed=seed, time_limit=limit))
            assert isinstance(r, pl.PlacementResult)
            pl.check_placement(inp, r)
            results[m] = r
        exact = results["exact"]
        assert exact.objective is not None
        best = max(r.objective or 0.0 for r in results.values())
        optimal = exact.status == Status.OPTIMAL
        proven += optimal
        for m, r in results.items():
            assert r.objective is not None
            if optimal:
                rows[m]["gap"].append(_gap(exact.objective, r.objective))
            rows[m]["known"].append(_gap(best, r.objective))
            rows[m]["span"].append(r.nodes_spanned)
            rows[m]["unplaced"].append(len(r.unplaced))
            rows[m]["ms"].append(1e3 * r.seconds)
    for m, d in rows.items():
        gap = f"{statistics.mean(d['gap']):.2f} | {max(d['gap']):.2f}" if d["gap"] else "- | -"
        print(
            f"| {size} | {m} | {proven}/{seeds} | {gap} | {statistics.mean(d['known']):.2f} | "
            f"{statistics.mean(d['span']):.1f} | {statistics.mean(d['unplaced']):.1f} | "
            f"{statistics.median(d['ms']):.1f} |",
            flush=True,
        )


def bench_bfd(repeats: int) -> None:
    inp = pl.parse(pl.generate("443", 0))
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        assign = bfd_assign(inp)
        times.append(time.perf_counter() - start)
    placed = sum(1 for a in assign if a)
    print(
        f"| {inp.n_servers} | {inp.n_jobs} | {placed} | {1e3 * statistics.median(times):.2f} | "
        f"{1e3 * min(times):.2f} |"
    )


def _friendly_case(rng: random.Random, hostile: bool) -> tuple[int, list[int]]:
    m = rng.randint(1, 64)
    choices = [1, 2, 4, 8, 16, 24] + ([3, 5, 6, 7, 12] if hostile else [])
    demands: list[int] = []
    for _ in range(rng.randint(1, 80)):
        g = rng.choice(choices)
        if pl.rounded_demand([*demands, g]) <= 8 * m:
            demands.append(g)
    return m, demands


def bench_proposition_1(trials: int) -> None:
    rng = random.Random(0)
    for hostile in (False, True):
        failures = jobs = 0
        for _ in range(trials):
            m, demands = _friendly_case(rng, hostile)
            cluster = Cluster(
                (GpuType("V100"),), tuple(Server(f"n{i}", "V100", 8) for i in range(m))
            )
            todo = tuple(Job(f"j{i}", g, g, 60.0) for i, g in enumerate(demands))
            result = pl.round_up_consolidation(cluster, Placement(), todo)
            pl.check_placement(pl.build_input(Instance("placement", cluster, todo)), result)
            jobs += len(todo)
            failures += bool(result.unplaced) or any(
                len(result.servers_of(j.id)) != math.ceil(j.max_gpus / 8) for j in todo
            )
        kind = "friendly + rounded hostile" if hostile else "friendly"
        print(f"| {kind} | {trials} | {jobs} | {failures} |")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--seeds", type=int, default=10, help="seeds for 16 servers (3 for larger)")
    ap.add_argument("--time-limit", type=float, default=60.0)
    ap.add_argument("--repeats", type=int, default=31)
    args = ap.parse_args()
    print("| servers | method | exact optimal | mean gap % | worst gap % | "
          "mean gap to best known % | servers spanned | unplaced | median ms |")  # fmt: skip
    print("|---|---|---|---|---|---|---|---|---|")
    bench_size("16", args.seeds, args.time_limit, with_pulp=True)
    for size in ("96", "120"):
        bench_size(size, max(1, args.seeds // 3), args.time_limit, with_pulp=False)
    print()
    print("| servers | jobs | placed | bfd median ms | bfd min ms |")
    print("|---|---|---|---|---|")
    bench_bfd(args.repeats)
    print()
    print("| demands | instances | jobs | instances with a job not consolidated |")
    print("|---|---|---|---|")
    bench_proposition_1(500)


if __name__ == "__main__":
    main()
