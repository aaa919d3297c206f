"""MMKP benchmark: ``exact`` vs ``lagrange`` vs ``exact-pulp`` (and full HiGHS, CP-SAT) on Sia-like rounds.

Run: ``nice -n 5 python benchmarks/bench_mmkp.py [--scales 1,2,4,8,16,32] [--seeds 3]
[--cpsat-max-scale 8] [--random] [--quality 20]``.

For every scale s (Sia's default heterogeneous cluster times s, 25 s jobs,
19-29 configurations over 3 GPU types: :func:`scheduling_opt.mmkp.instances.sia_round`)
and seed, every method runs once with a 60 s limit:

- ``exact`` (the default: Lagrangian bound, reduced-cost fixing, HiGHS on
  the survivors), ``lagrange`` (relaxation, repair, MCKP-core bounds) and
  ``exact-pulp`` (the full model, PuLP/CBC, the solver family Sia uses);
- ``highs-full``: HiGHS on every candidate (items that gain and fit), no
  reduced-cost fixing, to show what the fixing buys;
- ``cpsat``: the same 0-1 model on CP-SAT (8 workers, values x 100: the
  rounds' values have 2 decimals), up to ``--cpsat-max-scale``.

The table gives per scale the median wall and CPU seconds of each method
(CPU includes child processes: CBC runs as one), ``lagrange``'s worst gap
to the proven optimum and worst certified gap (its bound), how many of its
answers were proven optimal, and every status that is not ``optimal``.
Every answer is checked by the independent checker and every exact
optimum compared with the others (same value to 1e-6). ``--random`` adds
the random classes (uncorrelated, correlated) at 50 groups; ``--quality N``
runs ``lagrange`` and ``exact`` on N seeds of sia1, sia2 and sia4 for the
tail of ``lagrange``'s gap.
"""

from __future__ import annotations

import argparse
import os
import statistics
import time
from collections.abc import Callable
from typing import Any

import numpy as np

from scheduling_opt import exact as backends
from scheduling_opt.mmkp import Mmkp, MmkpDecision, check, exact, exact_pulp, lagrange
from scheduling_opt.mmkp._highs import milp
from scheduling_opt.mmkp._relax import Relaxed
from scheduling_opt.mmkp.instances import random_mmkp, sia_round
from scheduling_opt.mmkp.model import decision_of
from scheduling_opt.solution import Solution, Status

LIMIT = 60.0
Solver = Callable[[Mmkp], Solution[MmkpDecision]]


def load() -> str:
    one, five, fifteen = os.getloadavg()
    return f"load average {one:.2f} {five:.2f} {fifteen:.2f} on {os.cpu_count()} CPUs"


def cpu() -> float:
    """CPU seconds of this process and its finished children (CBC)."""
    t = os.times()
    return t.user + t.system + t.children_user + t.children_system


def highs_full(inp: Mmkp) -> Solution[MmkpDecision]:
    """HiGHS on every candidate: the model ``exact`` solves, without the fixing."""
    start = time.perf_counter()
    rel = Relaxed.of(inp)
    keep = np.arange(len(rel.gain))
    status, picked, bound = milp(rel, keep, LIMIT, start)
    choice = rel.choice_of(picked) if picked is not None else [None] * inp.n_groups
    decision = decision_of(inp, choice)
    total = None if bound is None else bound + inp.base
    return Solution(status, decision.value, decision, total, time.perf_counter() - start)


def cpsat(inp: Mmkp) -> Solution[MmkpDecision]:
    """The 0-1 model on CP-SAT, values x 100 (the Sia-like rounds' values have 2 decimals)."""
    from ortools.sat.python import cp_model

    start = time.perf_counter()
    rel = Relaxed.of(inp)
    scaled = np.round(rel.gain * 100).astype(np.int64)
    if not np.allclose(scaled, rel.gain * 100, atol=1e-6):
        raise ValueError("cpsat here needs values with 2 decimals")
    model = cp_model.CpModel()
    x = [model.new_bool_var(f"x{i}") for i in range(len(scaled))]
    for r in range(inp.n_resources):
        nz = np.flatnonzero(rel.weight[:, r]).tolist()
        model.add(sum(int(rel.weight[i, r]) * x[i] for i in nz) <= int(inp.capacity[r]))
    for g in range(rel.n):
        lo = int(rel.starts[g])
        hi = int(rel.starts[g + 1]) if g + 1 < rel.n else len(x)
        model.add_at_most_one(x[lo:hi])
    model.maximize(sum(int(c) * v for c, v in zip(scaled.tolist(), x, strict=True)))
    out = backends.solve_cpsat(model, time_limit=LIMIT, started=start)
    picked = np.full(rel.n, -1, np.int64)
    if out.has_solution:
        on = [i for i, v in enumerate(x) if out.solver.value(v)]
        picked[rel.group[on]] = on
    decision = decision_of(inp, rel.choice_of(picked))
    bound = None if out.bound is None else out.bound / 100 + inp.base
    return Solution(out.status, decision.value, decision, bound, time.perf_counter() - start)


METHODS: dict[str, Solver] = {
    "exact": lambda p: exact(p, time_limit=LIMIT),
    "lagrange": lambda p: lagrange(p, time_limit=LIMIT),
    "exact-pulp": lambda p: exact_pulp(p, time_limit=LIMIT),
    "highs-full": highs_full,
    "cpsat": cpsat,
}


def run(name: str, inp: Mmkp) -> tuple[Solution[MmkpDecision], float, float]:
    """One run: the solution (checked), wall and CPU seconds."""
    c0, t0 = cpu(), time.perf_counter()
    sol = METHODS[name](inp)
    wall, used = time.perf_counter() - t0, cpu() - c0
    check(inp, sol)
    return sol, wall, used


def study(
    label: str, cases: list[tuple[str, Mmkp]], names: list[str], columns: list[str]
) -> dict[str, Any]:
    """Every method of ``names`` on every case; one row of numbers (``-`` for the other columns)."""
    times: dict[str, list[tuple[float, float]]] = {n: [] for n in names}
    odd: list[str] = []
    gaps: list[float] = []
    certified: list[float] = []
    proven = 0
    for case, inp in cases:
        sols = {}
        for name in names:
            sol, wall, used = run(name, inp)
            sols[name] = sol
            times[name].append((wall, used))
            if sol.status is not Status.OPTIMAL and name != "lagrange":
                odd.append(f"{name} {case}: {sol.status}")
        optima = [
            s.objective for n, s in sols.items() if n != "lagrange" and s.status is Status.OPTIMAL
        ]
        assert all(o is not None for o in optima)
        best = max(float(o) for o in optima if o is not None) if optima else None
        for o in optima:
            assert best is not None
            assert o is not None
            assert abs(o - best) <= 1e-6 * (1 + abs(best)), (case, optima)
        lag = sols["lagrange"]
        assert lag.objective is not None
        assert lag.bound is not None
        if best is not None:
            assert lag.objective <= best + 1e-6 <= lag.bound + 2e-6, (case, lag, best)
            gaps.append((best - lag.objective) / max(abs(best), 1.0))
        certified.append(lag.gap or 0.0)
        proven += lag.status is Status.OPTIMAL
    cols = [label, str(len(cases)), str(len(cases[0][1].values))]
    for name in columns:
        if name not in names:
            cols.append("-")
            continue
        walls = [w for w, _ in times[name]]
        cpus = [c for _, c in times[name]]
        cols.append(f"{statistics.median(walls):.3f} / {statistics.median(cpus):.3f}")
    cols += [
        f"{100 * max(gaps):.3f}%" if gaps else "-",
        f"{100 * max(certified):.3f}%",
        f"{proven}/{len(cases)}",
        "; ".join(odd) or "-",
    ]
    print("| " + " | ".join(cols) + " |", flush=True)
    return {"label": label, "times": times, "odd": odd}


def quality(scales: list[int], seeds: int) -> None:
    """``lagrange`` against ``exact`` on many seeds: the tail of its gap, and its time."""
    print(
        "| round | seeds | lagrange gap to opt: max | mean | > 0.25% | proven | lagrange CPU s (median) | exact CPU s (median) |"
    )
    print("|---|---|---|---|---|---|---|---|")
    for scale in scales:
        gaps, proven, lag_cpu, ex_cpu = [], 0, [], []
        for seed in range(seeds):
            inp = sia_round(scale, seed)
            lag, _, c1 = run("lagrange", inp)
            best, _, c2 = run("exact", inp)
            assert best.status is Status.OPTIMAL
            assert lag.objective is not None
            assert best.objective is not None
            gaps.append(100 * (best.objective - lag.objective) / abs(best.objective))
            proven += lag.status is Status.OPTIMAL
            lag_cpu.append(c1)
            ex_cpu.append(c2)
        print(
            f"| sia{scale} | {seeds} | {max(gaps):.3f}% | {statistics.mean(gaps):.4f}% | "
            f"{sum(g > 0.25 for g in gaps)} | {proven}/{seeds} | "
            f"{statistics.median(lag_cpu):.3f} | {statistics.median(ex_cpu):.3f} |",
            flush=True,
        )


def header(names: list[str]) -> None:
    cols = ["round", "seeds", "items"]
    cols += [f"{n} wall / CPU s" for n in names]
    cols += [
        "lagrange gap to opt (max)",
        "lagrange certified gap (max)",
        "lagrange proven",
        "not optimal",
    ]
    print("| " + " | ".join(cols) + " |")
    print("|" + "---|" * len(cols))


def main() -> None:
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument("--scales", default="1,2,4,8,16,32", help="Sia scales, comma separated")
    ap.add_argument("--seeds", type=int, default=3)
    ap.add_argument("--cpsat-max-scale", type=int, default=8, help="largest scale CP-SAT runs on")
    ap.add_argument("--no-pulp", action="store_true", help="skip exact-pulp")
    ap.add_argument("--random", action="store_true", help="also the random classes (50 groups)")
    ap.add_argument(
        "--quality", type=int, default=0, help="seeds per scale for lagrange's gap tail (sia1-4)"
    )
    args = ap.parse_args()
    # Import and warm every backend once (scipy's milp, PuLP, CP-SAT) outside the timings.
    warm = sia_round(1, 99, jobs=3)
    for solve in METHODS.values():
        solve(warm)
    print(load())
    print()
    base = ["exact", "lagrange", "highs-full"] + ([] if args.no_pulp else ["exact-pulp"])
    header([*base, "cpsat"])
    for scale in [int(s) for s in args.scales.split(",")]:
        names = base + (["cpsat"] if scale <= args.cpsat_max_scale else [])
        cases = [(f"sia{scale}/{seed}", sia_round(scale, seed)) for seed in range(args.seeds)]
        study(f"sia{scale}", cases, names, [*base, "cpsat"])
    if args.quality:
        print()
        quality([1, 2, 4], args.quality)
    if args.random:
        print()
        header(base)
        for kind in ("uncorrelated", "correlated"):
            for r in (2, 3):
                cases = [
                    (f"{kind}/{seed}", random_mmkp(50, 8, r, kind, seed))
                    for seed in range(args.seeds)
                ]
                study(f"n50-r{r}-{kind}", cases, base, base)
    print()
    print(load())


if __name__ == "__main__":
    main()
