"""Placement benchmark: bfd / round-up / quasi / local-search vs the exact models.

Run: ``python benchmarks/bench_placement.py [--seeds 5] [--time-limit 10] [--fast]``.
Prints markdown tables:

1. per cluster size (6, 8, 16, 96, 120 8-GPU servers, the quick and
   standard suites' generator: an earlier random workload filling 40-70%,
   10-40% consolidation-hostile jobs): each method's median time, mean and
   worst RW gap to the best proven optimum (any exact method's), the
   certified gap (to the method's own proven bound: the fractional-knapsack
   bound for heuristics, HiGHS' or CP-SAT's bound for the exact ones), the
   seeds it proved, servers spanned, unplaced jobs, and the methods that
   dominate it on (median time, mean gap) (``front``: none);
2. local search and ``exact`` on 1,000 jobs and 443 servers (Aryl's cluster);
   bfd there, median of repeats,
   and local search on 500 jobs and 443 servers stopped by its time limit;
3. Proposition 1: round-up on random consolidation-friendly (and rounded
   hostile) demands within Eq. (6) on free 8-GPU nodes; failures counted.
"""

from __future__ import annotations

import argparse
import math
import statistics

import numpy as np
from timing import median_time

from scheduling_opt.bench.report import dominated
from scheduling_opt.model import Cluster, GpuType, Job, Server
from scheduling_opt.placement import (
    PlacementDecision,
    PlacementInput,
    bfd_assign,
    check,
    chronus_local_search,
    quasi_consolidation,
    round_up_consolidation,
    rounded_demand,
)
from scheduling_opt.placement.io import PROBLEM, generate, generate_placement, read
from scheduling_opt.solution import Solution, Status

HEURISTICS = ("bfd", "round-up", "quasi", "local-search")
SIZES = ("6", "8", "16", "96", "120")


def _gap(best: float, value: float) -> float:
    return 100 * (best - value) / best if best else 0.0


def _mean(values: list[float]) -> str:
    return f"{statistics.mean(values):.2f}" if values else "-"


def _mean1(values: list[float]) -> str:
    return f"{statistics.mean(values):.1f}" if values else "-"


def bench_size(size: str, seeds: int, limit: float, slow: bool) -> None:
    """One table block per size; ``slow`` adds exact-cpsat (and exact-pulp up to 16 servers).

    A run stopped without an answer counts as a 100% gap.
    """
    # CBC finds no answer within 10 s on 96 servers or more: not run there.
    pulp = ("exact-pulp",) if int(size) <= 16 else ()
    methods = (*HEURISTICS, "exact") + (("exact-cpsat", *pulp) if slow else ())
    rows: dict[str, dict[str, list[float]]] = {
        m: {"gap": [], "cert": [], "span": [], "unplaced": [], "ms": [], "proven": []}
        for m in methods
    }
    for seed in range(seeds):
        inp = read(generate(size, seed))
        results: dict[str, Solution[PlacementDecision]] = {}
        for m in methods:
            sol = PROBLEM.method(m).run(inp, seed=seed, time_limit=limit)
            check(inp, sol)
            results[m] = sol
        proven = [r.objective for r in results.values() if r.status == Status.OPTIMAL]
        optimum = max((o for o in proven if o is not None), default=None)
        for m, r in results.items():
            if r.objective is None or r.decision is None:  # stopped without an answer
                rows[m]["gap"].append(100.0)
                rows[m]["ms"].append(1e3 * r.seconds)
                rows[m]["proven"].append(0.0)
                continue
            if optimum is not None:
                rows[m]["gap"].append(_gap(optimum, r.objective))
            if r.gap is not None:
                rows[m]["cert"].append(100 * r.gap)
            rows[m]["span"].append(r.decision.nodes_spanned)
            rows[m]["unplaced"].append(len(r.decision.unplaced))
            rows[m]["ms"].append(1e3 * r.seconds)
            rows[m]["proven"].append(float(r.status == Status.OPTIMAL))
    points = {
        m: (statistics.median(d["ms"]), statistics.mean(d["gap"]))
        for m, d in rows.items()
        if d["gap"]
    }
    beaten = dominated(points)
    for m, d in rows.items():
        gap = f"{statistics.mean(d['gap']):.3f} | {max(d['gap']):.3f}" if d["gap"] else "- | -"
        front = ", ".join(beaten.get(m, ())) or "front"
        print(
            f"| {size} | {m} | {statistics.median(d['ms']):.1f} | {gap} | {_mean(d['cert'])} | "
            f"{int(sum(d['proven']))}/{seeds} | {_mean1(d['span'])} | "
            f"{_mean1(d['unplaced'])} | {front} |",
            flush=True,
        )


def bench_exact_443(limit: float) -> None:
    inp = read(generate("443", 0))
    for m in ("local-search", "exact"):
        sol = PROBLEM.method(m).run(inp, time_limit=limit)
        check(inp, sol)
        gap = "-" if sol.gap is None else f"{100 * sol.gap:.2f}"
        print(
            f"| {inp.n_servers} | {inp.n_jobs} | {m} | {sol.status.value} | {sol.seconds:.2f} | "
            f"{sol.objective:.1f} | {gap} |"
        )


def bench_bfd(repeats: int) -> None:
    inp = read(generate("443", 0))
    # The minimum shows the cost on an idle core (the machine is shared).
    runs = [median_time(lambda: bfd_assign(inp), 1) for _ in range(repeats)]
    assign = runs[-1][1]
    times = [t for t, _ in runs]
    placed = sum(1 for a in assign if a)
    print(
        f"| {inp.n_servers} | {inp.n_jobs} | {placed} | {1e3 * statistics.median(times):.2f} | "
        f"{1e3 * min(times):.2f} |"
    )


def bench_local_search_limit(limit: float) -> None:
    inp = read(generate_placement(443, 0, n_jobs=500))
    sol = chronus_local_search(inp, time_limit=limit)
    quasi = quasi_consolidation(inp)
    assert sol.objective is not None
    assert quasi.objective is not None
    stopped = "yes" if sol.message else "no"
    print(
        f"| {inp.n_servers} | {inp.n_jobs} | {limit:g} | {sol.seconds:.2f} | {stopped} | "
        f"{sol.objective:.1f} | {quasi.objective:.1f} | {100 * (sol.gap or 0.0):.2f} |"
    )


def _friendly_case(rng: np.random.Generator, hostile: bool) -> tuple[int, list[int]]:
    m = int(rng.integers(1, 65))
    choices = [1, 2, 4, 8, 16, 24] + ([3, 5, 6, 7, 12] if hostile else [])
    demands: list[int] = []
    for _ in range(int(rng.integers(1, 81))):
        g = int(rng.choice(choices))
        if rounded_demand([*demands, g]) <= 8 * m:
            demands.append(g)
    return m, demands


def bench_proposition_1(trials: int) -> None:
    rng = np.random.default_rng(0)
    for hostile in (False, True):
        failures = jobs = 0
        for _ in range(trials):
            m, demands = _friendly_case(rng, hostile)
            cluster = Cluster(
                (GpuType("V100"),), tuple(Server(f"n{i}", "V100", 8) for i in range(m))
            )
            todo = tuple(Job(f"j{i}", g, g, 60.0) for i, g in enumerate(demands))
            inp = PlacementInput(cluster, todo)
            result = round_up_consolidation(inp)
            check(inp, result)
            assert result.decision is not None
            jobs += len(todo)
            failures += bool(result.decision.unplaced) or any(
                len(result.decision.servers_of(j.id)) != math.ceil(j.max_gpus / 8) for j in todo
            )
        kind = "friendly + rounded hostile" if hostile else "friendly"
        print(f"| {kind} | {trials} | {jobs} | {failures} |")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--seeds", type=int, default=5, help="seeds per size")
    ap.add_argument("--time-limit", type=float, default=10.0, help="seconds per exact solve")
    ap.add_argument("--fast", action="store_true", help="skip exact-cpsat and exact-pulp")
    ap.add_argument("--repeats", type=int, default=31)
    ap.add_argument("--search-limit", type=float, default=5.0, help="local search, 443 servers")
    args = ap.parse_args()
    print("| servers | method | median ms | mean gap % | worst gap % | mean certified gap % | "
          "proven | servers spanned | unplaced | dominated by |")  # fmt: skip
    print("|---|---|---|---|---|---|---|---|---|---|")
    for size in SIZES:
        bench_size(size, args.seeds, args.time_limit, slow=not args.fast)
    print()
    print("| servers | jobs | method | status | s | RW | certified gap % |")
    print("|---|---|---|---|---|---|---|")
    bench_exact_443(args.time_limit)
    print()
    print("| servers | jobs | placed | bfd median ms | bfd min ms |")
    print("|---|---|---|---|---|")
    bench_bfd(args.repeats)
    print()
    print("| servers | jobs | time limit s | local search s | stopped | RW | quasi RW | "
          "certified gap % |")  # fmt: skip
    print("|---|---|---|---|---|---|---|---|")
    bench_local_search_limit(args.search_limit)
    print()
    print("| demands | instances | jobs | instances with a job not consolidated |")
    print("|---|---|---|---|")
    bench_proposition_1(500)


if __name__ == "__main__":
    main()
