"""Placement benchmark: every method at every generated size up to 1,000 servers.

Run: ``python benchmarks/bench_placement.py [--seeds 5] [--time-limit 10] [--repeats 5]``
(``--sizes 6,8,16`` for a subset, ``--skip-slow`` to leave out exact-cpsat
and exact-pulp). Prints markdown tables, each headed by the date and the
machine's load average (before and after it):

1. per cluster size (6, 8, 16, 96, 120, 250, 443 and 1,000 8-GPU servers:
   the quick and standard suites' generator, an earlier random workload
   filling 40-70% of the GPUs, 10-40% consolidation-hostile jobs; 443
   servers carry 1,000 jobs, Aryl's scale, the others ask for about 90% of
   the free GPUs), every method over ``--seeds`` seeds: median wall and CPU
   time (a run under 1 s is repeated ``--repeats`` times, the median kept;
   a longer one runs once), mean and worst RW gap to the best proven
   optimum (any exact method's), the certified gap (to the method's own
   proven bound: the fractional-knapsack bound for heuristics, HiGHS' or
   CP-SAT's bound for the exact ones), the seeds it proved, and the
   methods that dominate it on (median wall time, mean gap) (``front``:
   none). Every answer goes through the checker;
2. ``local-search`` and ``exact`` per seed on 443 servers and 1,000 jobs
   (the issue 25 goal: <= 1 s at <= 0.5% certified gap, never dominated by
   ``exact``);
3. Algorithm 1's full enumeration there (no work limit): combinations,
   distinct states, completions, jobs examined and CPU time, beside the
   default work limit;
4. bfd on 443 servers and 1,000 jobs, median of repeats;
5. Proposition 1: round-up on random consolidation-friendly (and rounded
   hostile) demands within Eq. (6) on free 8-GPU nodes; failures counted.

Runs the package on ``sys.path`` (``PYTHONPATH=<old checkout>`` measures an
older version with the same tables; tables 3 needs issue 25's search).
"""

from __future__ import annotations

import argparse
import datetime
import math
import os
import statistics
import time
from collections.abc import Callable

import numpy as np
from timing import median_time

from scheduling_opt.bench.report import dominated
from scheduling_opt.model import Cluster, GpuType, Job, Server
from scheduling_opt.placement import (
    PlacementDecision,
    PlacementInput,
    bfd_assign,
    check,
    round_up_consolidation,
    rounded_demand,
)
from scheduling_opt.placement.io import PROBLEM, generate, read
from scheduling_opt.solution import Solution, Status

SIZES = ("6", "8", "16", "96", "120", "250", "443", "1000")
SLOW = ("exact-cpsat", "exact-pulp")
Sol = Solution[PlacementDecision]


def _load() -> str:
    return f"{os.getloadavg()[0]:.1f}"


def _stamp(what: str) -> None:
    now = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    print(f"\n{what}: {now}, load average {_load()}\n", flush=True)


def timed(
    method: str, inp: PlacementInput, seed: int, limit: float, repeats: int
) -> tuple[Sol, float, float]:
    """The answer, median wall and median CPU seconds; repeated only when a run is under 1 s."""
    walls, cpus = [], []
    sol = None
    run = PROBLEM.method(method).run
    for i in range(repeats):
        wall, cpu = time.perf_counter(), time.process_time()
        sol = run(inp, seed=seed, time_limit=limit)
        walls.append(time.perf_counter() - wall)
        cpus.append(time.process_time() - cpu)
        if i == 0 and walls[0] >= 1.0:
            break
    assert sol is not None
    return sol, statistics.median(walls), statistics.median(cpus)


def _gap(best: float, value: float) -> float:
    return 100 * (best - value) / best if best else 0.0


def bench_size(size: str, seeds: int, limit: float, repeats: int, slow: bool) -> None:
    """One table block per size; a run stopped without an answer counts as a 100% gap."""
    methods = [m.name for m in PROBLEM.methods if slow or m.name not in SLOW]
    keys = ("gap", "cert", "wall", "cpu", "proven")
    rows: dict[str, dict[str, list[float]]] = {m: {k: [] for k in keys} for m in methods}
    jobs, loads = [], [_load()]
    for seed in range(seeds):
        inp = read(generate(size, seed))
        jobs.append(inp.n_jobs)
        results: dict[str, Sol] = {}
        for m in methods:
            sol, wall, cpu = timed(m, inp, seed, limit, repeats)
            check(inp, sol)
            results[m] = sol
            rows[m]["wall"].append(wall)
            rows[m]["cpu"].append(cpu)
        proven = [r.objective for r in results.values() if r.status == Status.OPTIMAL]
        optimum = max((o for o in proven if o is not None), default=None)
        for m, r in results.items():
            rows[m]["proven"].append(float(r.status == Status.OPTIMAL))
            if r.objective is None or r.decision is None:
                rows[m]["gap"].append(100.0)
                continue
            if optimum is not None:
                rows[m]["gap"].append(_gap(optimum, r.objective))
            if r.gap is not None:
                rows[m]["cert"].append(100 * r.gap)
    loads.append(_load())
    points = {
        m: (statistics.median(d["wall"]), statistics.mean(d["gap"]))
        for m, d in rows.items()
        if d["gap"]
    }
    beaten = dominated(points)
    for m, d in rows.items():
        gap = f"{statistics.mean(d['gap']):.3f} | {max(d['gap']):.3f}" if d["gap"] else "- | -"
        cert = f"{statistics.mean(d['cert']):.3f}" if d["cert"] else "-"
        front = ", ".join(beaten.get(m, ())) or "front"
        print(
            f"| {size} | {statistics.mean(jobs):.0f} | {m} | "
            f"{1e3 * statistics.median(d['wall']):.1f} | {1e3 * statistics.median(d['cpu']):.1f} | "
            f"{gap} | {cert} | {int(sum(d['proven']))}/{seeds} | {front} | {'-'.join(loads)} |",
            flush=True,
        )


def bench_443(seeds: int, limit: float, repeats: int) -> None:
    """local-search and exact per seed on 443 servers and 1,000 jobs."""
    for seed in range(seeds):
        inp = read(generate("443", seed))
        for m in ("local-search", "exact"):
            load = _load()
            sol, wall, cpu = timed(m, inp, seed, limit, repeats)
            check(inp, sol)
            gap = "-" if sol.gap is None else f"{100 * sol.gap:.3f}"
            note = sol.message or "-"
            print(
                f"| {seed} | {m} | {sol.status.value} | {wall:.3f} | {cpu:.3f} | "
                f"{sol.objective:.2f} | {sol.bound:.2f} | {gap} | {note} | {load} |",
                flush=True,
            )


def bench_enumeration(seeds: int) -> None:
    """Algorithm 1 without a work limit on 443 servers and 1,000 jobs: what the limit saves."""
    from scheduling_opt.placement import local_search, quasi

    for seed in range(seeds):
        inp = read(generate("443", seed))
        stats: dict[str, float] = {}
        run = local_search._Search.run

        def spy(
            self: local_search._Search,
            run: Callable[..., tuple[int, ...]] = run,
            stats: dict[str, float] = stats,
        ) -> tuple[int, ...]:
            out = run(self)
            stats.update(leaves=self.leaves, work=self.work, states=len(self.seen[-1]))
            return out

        local_search._Search.run = spy  # type: ignore[method-assign]
        try:
            load = _load()
            cpu = time.process_time()
            wall = time.perf_counter()
            local_search.search_assign(inp)
            wall = time.perf_counter() - wall
            cpu = time.process_time() - cpu
        finally:
            local_search._Search.run = run  # type: ignore[method-assign]
        order = quasi.potential_order(inp, range(inp.n_jobs))
        k = local_search.search_prefix(inp, order, inp.search_space)
        combos = math.prod(len(inp.spans(j)) + 1 for j in order[:k])
        print(
            f"| {seed} | {k} | {combos} | {stats['states']:.0f} | {stats['leaves']:.0f} | "
            f"{stats['work']:.0f} | {cpu:.2f} | {wall:.2f} | {load} |",
            flush=True,
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
    ap.add_argument("--time-limit", type=float, default=10.0, help="seconds per solve")
    ap.add_argument("--repeats", type=int, default=5, help="runs of a method under 1 s")
    ap.add_argument("--sizes", default=",".join(SIZES), help="comma-separated server counts")
    ap.add_argument("--skip-slow", action="store_true", help="leave out exact-cpsat, exact-pulp")
    ap.add_argument("--tables", default="12345", help="which tables to print (1-5)")
    args = ap.parse_args()
    if "1" in args.tables:
        _stamp("Table 1")
        print("| servers | jobs | method | median wall ms | median CPU ms | mean gap % | "
              "worst gap % | mean certified gap % | proven | dominated by | load |")  # fmt: skip
        print("|---|---|---|---|---|---|---|---|---|---|---|")
        for size in args.sizes.split(","):
            bench_size(size, args.seeds, args.time_limit, args.repeats, slow=not args.skip_slow)
    if "2" in args.tables:
        _stamp("Table 2")
        print("| seed | method | status | median wall s | median CPU s | RW | bound | "
              "certified gap % | message | load |")  # fmt: skip
        print("|---|---|---|---|---|---|---|---|---|---|")
        bench_443(args.seeds, args.time_limit, min(args.repeats, 3))
    if "3" in args.tables:
        _stamp("Table 3")
        print("| seed | K | combinations | distinct leaf states | completions | jobs examined | "
              "CPU s | wall s | load |")  # fmt: skip
        print("|---|---|---|---|---|---|---|---|---|")
        bench_enumeration(args.seeds)
    if "4" in args.tables:
        _stamp("Table 4")
        print("| servers | jobs | placed | bfd median ms | bfd min ms |")
        print("|---|---|---|---|---|")
        bench_bfd(31)
    if "5" in args.tables:
        _stamp("Table 5")
        print("| demands | instances | jobs | instances with a job not consolidated |")
        print("|---|---|---|---|")
        bench_proposition_1(500)


if __name__ == "__main__":
    main()
