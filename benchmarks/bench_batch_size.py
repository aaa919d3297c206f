"""ONES benchmark (``batch-size``): gap to exact vs generations, and generations per second.

Run: ``python benchmarks/bench_batch_size.py [--seeds 5] [--repeats 5]``.
Prints markdown tables:

1. the exact baseline per size (CP-SAT with the cross-node penalty; status,
   median seconds);
2. the gap of ``ones`` to exact, (F_ones - F_exact) / F_exact in %, after
   0..300 generations, median and max over the same seeds (instance seed =
   search seed), for G_0 random (the paper) and G_0 with the greedy schedule
   (the default), and the gap of ``greedy``; plus the certified gap of
   ``ones`` (to the relaxation bound it reports, no exact run needed);
3. the gap after 100 generations from a random G_0 for mutation rates
   theta = 0, 0.02, 0.05, 0.1 (median / max over the seeds);
4. generations per second at 8, 16 and 64 GPUs with population = GPUs
   (64 at 64 GPUs), median of ``--repeats`` timed runs of 100 generations;
5. the ``auto`` portfolio (the default) next to ``exact`` (8 CP-SAT
   workers), ``ones`` and ``greedy``: median time over the seeds (each the
   median of ``--repeats`` runs) and how many seeds ``auto`` proved.

Large mode (issue 16, where the search matters):
``python benchmarks/bench_batch_size.py --large [--sizes g128 g256 g512 g1024]
[--seeds 3] [--time-limit 1] [--ones-limit 1]`` prints per size whether
``exact`` proves within ``--time-limit`` seconds, its certified gap, and the
gap of ``greedy``, ``ones`` (stopped at ``--ones-limit``) and ``auto`` to the
best proven lower bound (exact's, never below the relaxation bound); median
/ max over the seeds.
"""

from __future__ import annotations

import argparse
import dataclasses
import statistics
import time

from scheduling_opt.batch_size import (
    BatchSizeInput,
    auto,
    exact,
    greedy,
    lower_bound,
    ones,
    ones_step,
)
from scheduling_opt.batch_size.io import generate, read
from scheduling_opt.errors import InstanceTooLargeError
from scheduling_opt.solution import DEFAULT_TIME_LIMIT, Status

SIZES = ("g8", "g16", "g64")
LARGE_SIZES = ("g128", "g256", "g512", "g1024")
GENERATIONS = (0, 10, 30, 100, 300)


def _cell(values: list[float], digits: int = 3) -> str:
    return f"{statistics.median(values):.{digits}f} / {max(values):.{digits}f}"


def large(sizes: list[str], seeds: int, limit: float, ones_limit: float) -> None:
    """Exact within ``limit`` s at 128-1,024 GPUs, and the heuristics' gap to its bound."""
    print(
        "| size | GPUs / servers / jobs | exact proved | exact s | exact certified gap % "
        "| greedy ms | greedy gap % | ones s | ones generations | ones gap % "
        "| auto s | auto gap % |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    for size in sizes:
        rows: dict[str, list[float]] = {}
        proved, gens, note = 0, [], ""
        for seed in range(seeds):
            p = read(generate(size, seed))
            bound = lower_bound(p)
            try:
                e = exact(p, seed=seed, time_limit=limit)
            except InstanceTooLargeError:
                e, note = None, " (exact refused: model too large)"
            if e is not None:
                assert e.bound is not None
                assert e.objective is not None
                bound = max(bound, e.bound)
                proved += e.status is Status.OPTIMAL
                rows.setdefault("exact s", []).append(e.seconds)
                rows.setdefault("exact gap", []).append(100 * (e.objective - e.bound) / e.bound)
            g = greedy(p)
            o = ones(p, seed=seed, time_limit=ones_limit)
            a = auto(p, seed=seed, time_limit=ones_limit)
            assert o.decision is not None
            assert o.objective is not None
            assert g.objective is not None
            assert a.objective is not None
            done = o.message.split(":")[1].split(" of")[0] if o.message else "100"
            gens.append(float(done))
            rows.setdefault("greedy ms", []).append(1000 * g.seconds)
            rows.setdefault("greedy gap", []).append(100 * (g.objective - bound) / bound)
            rows.setdefault("ones s", []).append(o.seconds)
            rows.setdefault("ones gap", []).append(100 * (o.objective - bound) / bound)
            rows.setdefault("auto s", []).append(a.seconds)
            rows.setdefault("auto gap", []).append(100 * (a.objective - bound) / bound)
        p = read(generate(size, 0))
        ex = (
            f"{proved}/{seeds} | {_cell(rows['exact s'], 2)} | {_cell(rows['exact gap'])}"
            if "exact s" in rows
            else f"-{note} | - | -"
        )
        print(
            f"| {size} | {p.n_gpus} / {p.n_nodes} / {p.n_jobs} | {ex} | "
            f"{_cell(rows['greedy ms'], 1)} | {_cell(rows['greedy gap'])} | "
            f"{_cell(rows['ones s'], 2)} | {_cell(gens, 0)} | {_cell(rows['ones gap'])} | "
            f"{_cell(rows['auto s'], 2)} | {_cell(rows['auto gap'])} |",
            flush=True,
        )


def portfolio(
    problems: dict[tuple[str, int], BatchSizeInput],
    sizes: list[str],
    seeds: int,
    repeats: int,
    limit: float,
) -> None:
    """Median time of auto / exact / ones / greedy per size; seeds auto proved."""
    methods = {"auto": auto, "exact": exact, "ones": ones, "greedy": greedy}
    print(f"| size | {' | '.join(f'{m} ms' for m in methods)} | auto proved |")
    print("|---|" + "---|" * (len(methods) + 1))
    for size in sizes:
        times: dict[str, list[float]] = {m: [] for m in methods}
        proved = 0
        for seed in range(seeds):
            p = problems[size, seed]
            for name, fn in methods.items():
                runs = [fn(p, seed=seed, time_limit=limit) for _ in range(repeats)]
                times[name].append(statistics.median(r.seconds for r in runs))
                if name == "auto":
                    proved += runs[0].status is Status.OPTIMAL
        cells = " | ".join(f"{1000 * statistics.median(t):.1f}" for t in times.values())
        print(f"| {size} | {cells} | {proved}/{seeds} |", flush=True)


def gap(found: float | None, best: float) -> float:
    assert found is not None
    # round(...) + 0.0: CP-SAT's integer-scaled costs can leave "exact" 1e-7
    # above a heuristic; print that as 0.000, not -0.000.
    return round(100.0 * (found - best) / best, 3) + 0.0


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--seeds", type=int, default=5)
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--time-limit", type=float, default=DEFAULT_TIME_LIMIT)
    ap.add_argument("--sizes", nargs="*", default=None)
    ap.add_argument("--large", action="store_true", help="the 128-1,024-GPU table only")
    ap.add_argument("--ones-limit", type=float, default=1.0, help="--large: seconds for ones")
    args = ap.parse_args()
    if args.large:
        large(args.sizes or list(LARGE_SIZES), args.seeds, args.time_limit, args.ones_limit)
        return
    args.sizes = args.sizes or list(SIZES)

    problems: dict[tuple[str, int], BatchSizeInput] = {}
    best: dict[tuple[str, int], float] = {}
    print("| size | GPUs / servers / jobs | exact status (all seeds) | exact s (median) |")
    print("|---|---|---|---|")
    for size in args.sizes:
        statuses, times = [], []
        for seed in range(args.seeds):
            p = read(generate(size, seed))
            problems[size, seed] = p
            r = exact(p, seed=seed, time_limit=args.time_limit)
            times.append(r.seconds)
            statuses.append(r.status.value)
            assert r.objective is not None
            best[size, seed] = r.objective
        p = problems[size, 0]
        print(
            f"| {size} | {p.n_gpus} / {p.n_nodes} / {p.n_jobs} | "
            f"{', '.join(sorted(set(statuses)))} | {statistics.median(times):.2f} |"
        )
    print()
    head = " | ".join(f"{g} gen" for g in GENERATIONS)
    print(f"| size | G_0 | greedy | {head} | certified (100 gen) |")
    print("|---|---|---|" + "---|" * (len(GENERATIONS) + 1))
    for size in args.sizes:
        for start_greedy in (False, True):
            cells, greedy_gaps, certified = [], [], []
            for gens in GENERATIONS:
                gaps = []
                for seed in range(args.seeds):
                    p = problems[size, seed]
                    cfg = dataclasses.replace(p.config, greedy_start=start_greedy)
                    step = ones_step(p, None, seed=seed, generations=gens, config=cfg)
                    gaps.append(gap(step.objective, best[size, seed]))
                    if gens == 100:
                        assert step.gap is not None
                        certified.append(100.0 * step.gap)
                    if gens == 0:
                        greedy_gaps.append(gap(greedy(p).objective, best[size, seed]))
                cells.append(f"{statistics.median(gaps):.3f} / {max(gaps):.3f}")
            label = "greedy + random" if start_greedy else "random (paper)"
            gr = f"{statistics.median(greedy_gaps):.3f} / {max(greedy_gaps):.3f}"
            cert = f"{statistics.median(certified):.3f} / {max(certified):.3f}"
            print(f"| {size} | {label} | {gr} | {' | '.join(cells)} | {cert} |")
    print()
    thetas = (0.0, 0.02, 0.05, 0.1)
    print(f"| size | {' | '.join(f'theta = {r}' for r in thetas)} |")
    print("|---|" + "---|" * len(thetas))
    for size in args.sizes:
        cells = []
        for rate in thetas:
            gaps = []
            for seed in range(args.seeds):
                p = problems[size, seed]
                cfg = dataclasses.replace(p.config, mutation_rate=rate, greedy_start=False)
                step = ones_step(p, None, seed=seed, generations=100, config=cfg)
                gaps.append(gap(step.objective, best[size, seed]))
            cells.append(f"{statistics.median(gaps):.3f} / {max(gaps):.3f}")
        print(f"| {size} | {' | '.join(cells)} |")
    print()
    print("| size | population | generations/s (median) | min | max |")
    print("|---|---|---|---|---|")
    for size in args.sizes:
        p = problems[size, 0]
        cfg = dataclasses.replace(p.config, population=p.n_gpus)
        ones_step(p, None, seed=0, generations=5, config=cfg)  # warm-up
        rates = []
        for rep in range(args.repeats):
            start = time.perf_counter()
            sol = ones_step(p, None, seed=rep, generations=100, config=cfg)
            assert sol.decision is not None
            rates.append(sol.decision.generations / (time.perf_counter() - start))
        print(
            f"| {size} | {cfg.population} | {statistics.median(rates):.0f} | "
            f"{min(rates):.0f} | {max(rates):.0f} |"
        )
    print()
    portfolio(problems, args.sizes, args.seeds, args.repeats, args.time_limit)


if __name__ == "__main__":
    main()
