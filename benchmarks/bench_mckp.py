"""MCKP benchmark (issue 25): ``core`` vs ``dp`` vs a plain numpy DP vs HiGHS, and ``greedy``.

Run: ``nice -n 5 python benchmarks/bench_mckp.py [--repeats 7] [--part goals|grid|hard]
[--quick] [--before PATH]``.

Markdown tables, each with the machine's load average beside it (with
``--before PATH`` first a before/after table: the default method and
``greedy`` of the checkout at PATH, run in a subprocess, against ``core`` and
``greedy`` here, on the goal instances):

1. the issue's goals: 2,000 strongly correlated groups (v = w + 10, w in
   1..10, 10 items per group, C = 10^4), ``generate("n5000-c50000-strong")``
   and ``generate("n5000")``, seeds 0-2: ``core`` (the default), ``greedy``,
   ``dp`` and the plain numpy DPs;
2. every generator class (uncorrelated, weak, strong, aryl) at n = 200 to
   5,000 groups (16 items each) and C = 4n, 10^4, 10^5: ``core``, ``dp``,
   the plain numpy DP and HiGHS (method ``exact``, 60 s limit);
3. instances built so that the LP bound cannot close (strongly correlated,
   weights 3 * U{1..10 or 1..300} except one group of weight-1 items, C = 2
   mod 3: no choice fills C), where ``core`` runs its DP over most groups or
   hands over to ``dp``.

Every time is the median of ``--repeats`` runs (the plain DPs and HiGHS:
fewer, see ``--slow-repeats``), wall clock and CPU (``time.process_time``).
"plain numpy DP" is the textbook capacity DP written here, with no
reduction: one row of C + 1 values, per item an add, a compare and two
masked copies, and an int8 table of the chosen item per group and capacity
for the decision; "value only" drops the table (2 passes per item, no
decision), the least any capacity DP can cost. Every exact answer is checked
against ``core``'s (same optimum to 1e-9).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from functools import partial
from typing import Any

import numpy as np

from scheduling_opt import mckp
from scheduling_opt.mckp.io import KINDS, generate, random_mckp
from scheduling_opt.registry import get_problem

PROBLEM = get_problem("mckp")


def numpy_dp_value(p: mckp.Mckp) -> float:
    """The optimum by the plainest capacity DP (value only, no decision)."""
    cap = p.capacity
    f = np.zeros(cap + 1)
    for g in range(p.n_groups):
        w, v = p.group(g)
        new = f.copy()
        for wi, vi in zip(w.tolist(), v.tolist(), strict=True):
            if wi <= cap:
                np.maximum(new[wi:], f[: cap + 1 - wi] + vi, out=new[wi:])
        f = new
    return float(f[cap])


def numpy_dp(p: mckp.Mckp) -> tuple[float, list[int | None]]:
    """The textbook capacity DP with an int8 table of choices: (optimum, choice)."""
    cap, n = p.capacity, p.n_groups
    if int(p.sizes().max(initial=0)) > 126:
        raise ValueError("the int8 table holds up to 126 items per group")
    f = np.zeros(cap + 1)
    table = np.zeros((n, cap + 1), np.int8)  # 0: nothing, i + 1: item i
    for g in range(n):
        w, v = p.group(g)
        new, row = f.copy(), table[g]
        for i, (wi, vi) in enumerate(zip(w.tolist(), v.tolist(), strict=True)):
            if wi > cap:
                continue
            cand = f[: cap + 1 - wi] + vi
            better = cand > new[wi:]
            np.copyto(new[wi:], cand, where=better)
            np.copyto(row[wi:], i + 1, where=better)
        f = new
    choice: list[int | None] = [None] * n
    c = cap
    for g in range(n - 1, -1, -1):
        i = int(table[g, c]) - 1
        if i >= 0:
            choice[g] = i
            c -= int(p.group(g)[0][i])
    return float(f[cap]), choice


def timed(fn: Callable[[], Any], repeats: int) -> tuple[float, float, Any]:
    """Median wall and CPU seconds of ``repeats`` calls, and the last result."""
    walls, cpus = [], []
    out = None
    for _ in range(repeats):
        w0, c0 = time.perf_counter(), time.process_time()
        out = fn()
        cpus.append(time.process_time() - c0)
        walls.append(time.perf_counter() - w0)
    return statistics.median(walls), statistics.median(cpus), out


def load() -> str:
    one, five, fifteen = os.getloadavg()
    return f"{one:.2f}, {five:.2f}, {fifteen:.2f}"


def ms(t: tuple[float, float, Any]) -> str:
    """``wall / cpu`` in ms."""
    return f"{1e3 * t[0]:.1f} / {1e3 * t[1]:.1f}"


def objective(result: Any) -> float:
    if isinstance(result, tuple):
        return float(result[0])
    if isinstance(result, float):
        return result
    assert result.objective is not None
    return float(result.objective)


def agree(expected: float, *results: Any) -> bool:
    return all(abs(objective(r) - expected) <= 1e-9 * (1 + abs(expected)) for r in results)


def strong_2000(seed: int) -> mckp.Mckp:
    """The issue's instance: 2,000 groups of 10 items, w in 1..10, v = w + 10, C = 10^4."""
    rng = np.random.default_rng(seed)
    w = rng.integers(1, 11, (2000, 10))
    return mckp.Mckp(
        10_000, w.reshape(-1), (w + 10.0).reshape(-1).astype(np.float64), np.arange(2001) * 10
    )


def no_fill(n: int, cap: int, top: int, seed: int) -> mckp.Mckp:
    """Strongly correlated, weights 3 * U{1..top}, one group of weight-1 items: C = 2 mod 3 unfillable."""
    rng = np.random.default_rng(seed)
    w = 3 * rng.integers(1, top + 1, (n, 10))
    w[0, :] = 1
    return mckp.Mckp(
        cap, w.reshape(-1), (w + 10.0).reshape(-1).astype(np.float64), np.arange(n + 1) * 10
    )


def goal_cases() -> list[tuple[str, Callable[[int], mckp.Mckp]]]:
    """Issue 25's goal instances by name, each a function of the seed (BEFORE repeats them:
    it runs in another checkout's interpreter and cannot import this file)."""
    return [
        ("2000 strong, C 10^4", strong_2000),
        ("n5000-c50000-strong", lambda s: PROBLEM.parse(generate("n5000-c50000-strong", s))),
        ("n5000", lambda s: PROBLEM.parse(generate("n5000", s))),
    ]


BEFORE = """
import json, sys, time, statistics
import numpy as np
from scheduling_opt import mckp
from scheduling_opt.mckp.io import generate
from scheduling_opt.registry import get_problem
P = get_problem("mckp")
repeats = int(sys.argv[1])
def strong_2000(seed):
    rng = np.random.default_rng(seed)
    w = rng.integers(1, 11, (2000, 10))
    return mckp.Mckp(10_000, w.reshape(-1), (w + 10.0).reshape(-1).astype(np.float64), np.arange(2001) * 10)
out = {}
for name, make in (
    ("2000 strong, C 10^4", strong_2000),
    ("n5000-c50000-strong", lambda s: P.parse(generate("n5000-c50000-strong", s))),
    ("n5000", lambda s: P.parse(generate("n5000", s))),
):
    for seed in range(3):
        p = make(seed)
        for method in (P.default, "greedy"):
            fn = next(m for m in P.methods if m.name == method).fn
            walls, cpus = [], []
            for _ in range(repeats):
                w0, c0 = time.perf_counter(), time.process_time()
                fn(p)
                cpus.append(time.process_time() - c0)
                walls.append(time.perf_counter() - w0)
            out[f"{name}|{seed}|{method}"] = (statistics.median(walls), statistics.median(cpus))
print(json.dumps({"default": P.default, "times": out}))
"""


def before_times(path: str, repeats: int) -> dict[str, Any]:
    """The default method's and greedy's times on the goal instances, by the code at ``path``."""
    env = {**os.environ, "PYTHONPATH": path, "PYTHONDONTWRITEBYTECODE": "1"}
    run = subprocess.run(
        [sys.executable, "-c", BEFORE, str(repeats)],
        env=env,
        cwd=path,
        capture_output=True,
        text=True,
        check=True,
    )
    data: dict[str, Any] = json.loads(run.stdout.strip().splitlines()[-1])
    return data


def before_after(path: str, repeats: int) -> None:
    """Before (the code at ``path``: its default and greedy) and after (``core``, greedy)."""
    print(f"load average before (1, 5, 15 min): {load()}\n")
    old = before_times(path, repeats)
    print(
        f"| instance | seed | before: {old['default']} ms (wall / CPU) | before: greedy ms "
        "| after: core ms | after: greedy ms |"
    )
    print("|---|---|---|---|---|---|")
    for name, make in goal_cases():
        for seed in range(3):
            p = make(seed)
            core = timed(partial(mckp.core, p), repeats)
            greedy = timed(partial(mckp.greedy, p), repeats)
            t_old = old["times"][f"{name}|{seed}|{old['default']}"]
            t_greedy = old["times"][f"{name}|{seed}|greedy"]
            print(
                f"| {name} | {seed} | {ms((*t_old, None))} | {ms((*t_greedy, None))} "
                f"| {ms(core)} | {ms(greedy)} |",
                flush=True,
            )
    print(f"\nload average after: {load()}\n")


def goals(repeats: int, slow: int) -> None:
    print(f"load average before (1, 5, 15 min): {load()}\n")
    print(
        "| instance | seed | core ms (wall / CPU) | greedy ms | dp ms | plain numpy DP ms "
        "| value-only numpy DP ms | greedy at optimum | same optimum |"
    )
    print("|---|---|---|---|---|---|---|---|---|")
    for name, make in goal_cases():
        for seed in range(3):
            p = make(seed)
            core = timed(partial(mckp.core, p), repeats)
            greedy = timed(partial(mckp.greedy, p), repeats)
            dp = timed(partial(mckp.dp, p), slow)
            plain = timed(partial(numpy_dp, p), slow)
            value = timed(partial(numpy_dp_value, p), slow)
            best = objective(core[2])
            PROBLEM.check(p, core[2])
            assert core[2].status.value == "optimal"
            print(
                f"| {name} | {seed} | {ms(core)} | {ms(greedy)} | {ms(dp)} | {ms(plain)} "
                f"| {ms(value)} | {agree(best, greedy[2])} "
                f"| {agree(best, dp[2], plain[2], value[2])} |",
                flush=True,
            )
    print(f"\nload average after: {load()}\n")


def grid(sizes: list[int], caps: list[str], repeats: int, slow: int, highs: bool) -> None:
    print(f"load average before (1, 5, 15 min): {load()}\n")
    print(
        "| n | C | class | core ms (wall / CPU) | dp ms | plain numpy DP ms | HiGHS ms "
        "| core / plain (CPU) | same optimum |"
    )
    print("|---|---|---|---|---|---|---|---|---|")
    worst = 0.0
    for n in sizes:
        for c in caps:
            cap = 4 * n if c == "4n" else int(float(c))
            for kind in KINDS:
                p = random_mckp(n, 16, cap, kind, seed=0)
                core = timed(partial(mckp.core, p), repeats)
                dp = timed(partial(mckp.dp, p), slow)
                plain = timed(partial(numpy_dp, p), slow)
                others = [dp[2], plain[2]]
                cell = "-"
                if highs:
                    hi = timed(partial(mckp.exact, p, time_limit=60), 1)
                    cell = f"{ms(hi)} ({hi[2].status.value})"
                    if hi[2].status.value == "optimal":
                        others.append(hi[2])
                PROBLEM.check(p, core[2])
                assert core[2].status.value == "optimal"
                ratio = core[1] / plain[1]
                worst = max(worst, ratio)
                print(
                    f"| {n} | {cap} | {kind} | {ms(core)} | {ms(dp)} | {ms(plain)} | {cell} "
                    f"| {ratio:.3f} | {agree(objective(core[2]), *others)} |",
                    flush=True,
                )
    print(f"\nworst core / plain numpy DP CPU ratio: {worst:.3f}")
    print(f"load average after: {load()}\n")


def hard(repeats: int, slow: int) -> None:
    print(f"load average before (1, 5, 15 min): {load()}\n")
    print(
        "| n | C | weights | core ms (wall / CPU) | dp ms | plain numpy DP ms "
        "| value-only numpy DP ms | same optimum |"
    )
    print("|---|---|---|---|---|---|---|---|")
    for n, cap, top in (
        (2000, 10_001, 10),
        (5000, 50_003, 10),
        (1000, 50_003, 300),
        (200, 100_001, 300),
    ):
        p = no_fill(n, cap, top, 1)
        core = timed(partial(mckp.core, p), repeats)
        dp = timed(partial(mckp.dp, p), slow)
        plain = timed(partial(numpy_dp, p), slow)
        value = timed(partial(numpy_dp_value, p), slow)
        PROBLEM.check(p, core[2])
        print(
            f"| {n} | {cap} | 3 * U{{1..{top}}} | {ms(core)} | {ms(dp)} | {ms(plain)} "
            f"| {ms(value)} | {agree(objective(core[2]), dp[2], plain[2], value[2])} |",
            flush=True,
        )
    print(f"\nload average after: {load()}\n")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=7, help="runs of core and greedy")
    ap.add_argument("--slow-repeats", type=int, default=3, help="runs of dp and the plain DPs")
    ap.add_argument("--quick", action="store_true", help="n <= 1000, C <= 10^4, no HiGHS")
    ap.add_argument("--part", choices=("goals", "grid", "hard", "all", "none"), default="all")
    ap.add_argument(
        "--before",
        metavar="PATH",
        help="also time the default and greedy of the checkout at PATH (e.g. main)",
    )
    args = ap.parse_args()
    print(
        f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, python {sys.version.split()[0]}\n"
    )
    if args.before:
        before_after(args.before, args.repeats)
    if args.part in ("goals", "all"):
        goals(args.repeats, args.slow_repeats)
    if args.part in ("grid", "all"):
        sizes = [200, 1000] if args.quick else [200, 1000, 2000, 5000]
        caps = ["4n", "1e4"] if args.quick else ["4n", "1e4", "1e5"]
        grid(sizes, caps, args.repeats, args.slow_repeats, highs=not args.quick)
    if args.part in ("hard", "all"):
        hard(args.repeats, args.slow_repeats)


if __name__ == "__main__":
    main()
