"""Fuzz the CLI with hostile instance files and print a summary table (issue 17).

Usage::

    python benchmarks/fuzz.py --long 2000 [--seed 0] [--workers 2] [--keep DIR]

Draws N mutants of the curated and generated quick-suite instances with a
seeded numpy Generator (the same mutations as ``tests/fuzz``, which draws
them through hypothesis in CI), runs each through ``validate``, ``solve
--json --method M --time-limit 5`` and ``solve --verify --time-limit 2``
under a 2 GB address-space cap and a 20 s wall-time cap, and prints: mutants
and runs, exit codes per command, hangs, cap hits, tracebacks, bad stderr,
the worst wall time and the worst peak memory (``ru_maxrss`` of the child
and its waited-for children). Failing mutants are listed (and written to
``--keep DIR`` when given). Exit status 1 if any run misbehaved.
"""

from __future__ import annotations

import argparse
import collections
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.fuzz import mutate


def _one(index: int, seeds: list[mutate.Seed], base: int) -> tuple[int, mutate.Case, str, str]:
    draw = mutate.NumpyDraw(np.random.default_rng([base, index]))
    seed = draw.choice(seeds)
    text, what = mutate.mutant(seed, draw)
    method = draw.choice(seed.methods)
    return index, mutate.run_mutant(text, method, what, seed.name, parallel=False), method, text


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--long", type=int, default=300, metavar="N", help="mutants (300)")
    parser.add_argument("--seed", type=int, default=0, help="base seed (0)")
    parser.add_argument("--workers", type=int, default=2, help="mutants run at once (2)")
    parser.add_argument("--keep", type=Path, help="folder for the failing mutants")
    args = parser.parse_args(argv)

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
