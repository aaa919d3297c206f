"""Fuzz the CLI with hostile instance files (issue 17) or traces and options (issue 27).

Usage::

    python benchmarks/fuzz.py --long 2000 [--seed 0] [--workers 2] [--keep DIR]
    python benchmarks/fuzz.py --sim --long 2000 [--seed 0] [--workers 2] [--keep DIR]

Draws N mutants of the curated and generated quick-suite instances with a
seeded numpy Generator (the same mutations as ``tests/fuzz``, which draws
them through hypothesis in CI), runs each through ``validate``, ``solve
--json --method M --time-limit 5`` and ``solve --verify --time-limit 2``
under a 2 GB address-space cap and a 20 s wall-time cap, and prints: mutants
and runs, exit codes per command, hangs, cap hits, tracebacks, bad stderr,
the worst wall time and the worst peak memory (``ru_maxrss`` of the child
and its waited-for children). Failing mutants are listed (and written to
``--keep DIR`` when given). Exit status 1 if any run misbehaved.

``--sim`` fuzzes ``simulate`` instead: N mutated windows of the bundled
excerpt with hostile options (``tests/fuzz/sim_mutate.py``, the same draws
as the CI test), one process each under the same caps, judged by the same
verdicts plus the simulator's (a clean stderr and finite table cells on
exit 0). Each run is forked from a process that imported the CLI once
(:mod:`tests.fuzz.preloaded`: 0.02 s of CPU for a refusal instead of the
1.2 s a fresh interpreter spends importing); the summary gives the runs'
CPU time (as each reports it; a killed run, what it had used) and the load
average before and after.
"""

from __future__ import annotations

import argparse
import collections
import os
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.fuzz import mutate, sim_mutate


def _one(index: int, seeds: list[mutate.Seed], base: int) -> tuple[int, mutate.Case, str, str]:
    draw = mutate.NumpyDraw(np.random.default_rng([base, index]))
    seed = draw.choice(seeds)
    text, what = mutate.mutant(seed, draw)
    method = draw.choice(seed.methods)
    return index, mutate.run_mutant(text, method, what, seed.name, parallel=False), method, text


def _one_sim(
    index: int, seed: tuple[list[str], list[list[str]]], base: int
) -> tuple[sim_mutate.SimCase, bytes]:
    draw = mutate.NumpyDraw(np.random.default_rng([base, index]))
    trace, what = sim_mutate.mutant(draw, seed)
    return sim_mutate.run_sim_mutant(trace, None, draw, what), trace


def _load() -> str:
    return " ".join(f"{x:.1f}" for x in os.getloadavg())


def main_sim(args: argparse.Namespace) -> int:
    """The ``--sim`` mode: mutated traces and options through ``simulate``."""
    seed = sim_mutate.seed_lines()
    codes: collections.Counter[int | str] = collections.Counter()
    complaints: collections.Counter[str] = collections.Counter()
    failures: list[tuple[str, list[str], bytes]] = []
    worst_time: tuple[float, str] = (0.0, "")
    worst_mem: tuple[int, str] = (0, "")
    cpu_runs = 0.0
    load_before = _load()
    start = time.perf_counter()
    with ThreadPoolExecutor(args.workers) as pool:
        for done, (case, trace) in enumerate(
            pool.map(lambda i: _one_sim(i, seed, args.seed), range(args.long)), 1
        ):
            run = case.run
            assert run is not None
            codes["hang" if run.timed_out else run.returncode] += 1
            cpu_runs += run.cpu_seconds
            label = sim_mutate.describe(case)
            worst_time = max(worst_time, (run.seconds, label))
            worst_mem = max(worst_mem, (run.maxrss_kb, label))
            for c in sim_mutate.sim_complaints(run):
                complaints[c.split(":")[0].split(" after")[0].split(" (")[0]] += 1
            found = case.complaints()
            if found:
                found.append(f"{run.cpu_seconds:.1f} s of CPU")
                failures.append((label, found, trace))
                print(f"  FAIL {label[:200]}: {' | '.join(found)[:300]}", file=sys.stderr)
            if done % 100 == 0:
                print(
                    f"  {done} mutants, {len(failures)} failing, "
                    f"{time.perf_counter() - start:.0f} s, load {_load()}",
                    file=sys.stderr,
                )
    elapsed = time.perf_counter() - start
    cpu = cpu_runs

    print("| mutants | failing | wall time | CPU time (runs) | load before | load after |")
    print("|---|---|---|---|---|---|")
    print(
        f"| {args.long} | {len(failures)} | {elapsed:.0f} s | {cpu:.0f} s | "
        f"{load_before} | {_load()} |"
    )
    print()
    print("| exit 0 | exit 1 | exit 2 | other | hang |")
    print("|---|---|---|---|---|")
    other = sum(n for c, n in codes.items() if c not in (0, 1, 2, "hang"))
    print(f"| {codes[0]} | {codes[1]} | {codes[2]} | {other} | {codes['hang']} |")
    print()
    print(f"hangs (> {mutate.TIME_CAP:g} s): {codes['hang']}")
    print(f"complaints: {dict(complaints) or 'none'}")
    print(f"worst time: {worst_time[0]:.2f} s ({worst_time[1][:160]})")
    print(f"worst memory: {worst_mem[0] / 1024:.0f} MB ({worst_mem[1][:160]})")
    for label, found, _ in failures[:20]:
        print(f"FAIL {label[:200]}: {' | '.join(found)[:400]}")
    if args.keep is not None and failures:
        args.keep.mkdir(parents=True, exist_ok=True)
        for i, (label, found, trace) in enumerate(failures):
            (args.keep / f"mutant-{i}.csv").write_bytes(trace)
            (args.keep / f"mutant-{i}.txt").write_text(f"{label}\n{found}\n")
    return 1 if failures else 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--long", type=int, default=300, metavar="N", help="mutants (300)")
    parser.add_argument("--seed", type=int, default=0, help="base seed (0)")
    parser.add_argument("--workers", type=int, default=2, help="mutants run at once (2)")
    parser.add_argument("--keep", type=Path, help="folder for the failing mutants")
    parser.add_argument("--sim", action="store_true", help="fuzz simulate (traces, options)")
    args = parser.parse_args(argv)
    if args.sim:
        return main_sim(args)

    seeds = mutate.seeds()
    codes: dict[str, collections.Counter[int | str]] = collections.defaultdict(collections.Counter)
    complaints: collections.Counter[str] = collections.Counter()
    failures: list[tuple[str, str, list[str], str]] = []
    worst_time: tuple[float, str] = (0.0, "")
    worst_mem: tuple[int, str] = (0, "")
    runs = 0
    start = time.perf_counter()
    with ThreadPoolExecutor(args.workers) as pool:
        for done, (_, case, method, text) in enumerate(
            pool.map(lambda i: _one(i, seeds, args.seed), range(args.long)), 1
        ):
            for run in case.runs:
                runs += 1
                command = run.args[0] + (" --verify" if "--verify" in run.args else "")
                codes[command]["hang" if run.timed_out else run.returncode] += 1
                label = f"{case.what} [{' '.join(run.args[:1] + run.args[2:])}]"
                worst_time = max(worst_time, (run.seconds, label))
                worst_mem = max(worst_mem, (run.maxrss_kb, label))
                for c in mutate.complaints(run):
                    complaints[c.split(":")[0].split(" after")[0]] += 1
            found = case.complaints()
            if found:
                failures.append((case.what, method, found, text))
            if done % 100 == 0:
                print(
                    f"  {done} mutants, {len(failures)} failing, "
                    f"{time.perf_counter() - start:.0f} s",
                    file=sys.stderr,
                )
    elapsed = time.perf_counter() - start

    print("| mutants | runs | failing mutants | wall time |")
    print("|---|---|---|---|")
    print(f"| {args.long} | {runs} | {len(failures)} | {elapsed:.0f} s |")
    print()
    print("| command | " + " | ".join(f"exit {c}" for c in ("0", "1", "2", "other", "hang")) + " |")
    print("|---|---|---|---|---|---|")
    for command, counter in sorted(codes.items()):
        other = sum(n for c, n in counter.items() if c not in (0, 1, 2, "hang"))
        cells = [counter.get(0, 0), counter.get(1, 0), counter.get(2, 0), other, counter["hang"]]
        print(f"| {command} | " + " | ".join(str(c) for c in cells) + " |")
    print()
    print(f"hangs (> {mutate.TIME_CAP:g} s): {sum(c['hang'] for c in codes.values())}")
    print(f"complaints: {dict(complaints) or 'none'}")
    print(f"worst time: {worst_time[0]:.2f} s ({worst_time[1][:160]})")
    print(f"worst memory: {worst_mem[0] / 1024:.0f} MB ({worst_mem[1][:160]})")
    for what, method, found, _ in failures[:20]:
        print(f"FAIL {what} (method {method}): {' | '.join(found)[:400]}")
    if args.keep is not None and failures:
        args.keep.mkdir(parents=True, exist_ok=True)
        for i, (what, method, _, text) in enumerate(failures):
            (args.keep / f"mutant-{i}.json").write_text(
                text, encoding="utf-8", errors="surrogatepass"
            )
            (args.keep / f"mutant-{i}.txt").write_text(f"{what}\nmethod {method}\n")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
