"""Measure what the simulator's limits protect (issue 27): cost per server, per GPU, per job.

Usage::

    python benchmarks/bench_sim_limits.py [--repeat 3]

Prints markdown tables (docs/simulation.md, "Limits"): set-up CPU time and
peak traced memory (``tracemalloc``, one separate run) of a one-job run on clusters of
1,000-100,000 servers of 8 GPUs and of 100-976 servers of 1,024 GPUs, the memory of a run and of
its kept result per job (the bundled excerpt under fifo), and the CPU time
of loading the bundled excerpt. Each figure is the minimum over
``--repeat`` runs (CPU time with ``time.process_time``); the load average
is printed before and after.
"""

from __future__ import annotations

import argparse
import gc
import os
import sys
import time
import tracemalloc
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from scheduling_opt.sim import (
    ClusterSpec,
    RunConfig,
    SimJob,
    Workload,
    bundled,
    make_policy,
    run_config,
    simulate,
)


def _measure(fn: Callable[[], Any], repeat: int) -> tuple[float, float, Any]:
    """(min CPU seconds over ``repeat`` plain runs, peak MB of one traced run, its result).

    CPU time is measured without ``tracemalloc``, which slows allocation-heavy
    code several-fold.
    """
    best = float("inf")
    for _ in range(repeat):
        gc.collect()
        t = time.process_time()
        fn()
        best = min(best, time.process_time() - t)
    gc.collect()
    tracemalloc.start()
    out = fn()
    peak = tracemalloc.get_traced_memory()[1] / 1e6
    tracemalloc.stop()
    return best, peak, out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args(argv)
    print(f"load average before: {' '.join(f'{x:.1f}' for x in os.getloadavg())}")
    one = Workload.of([SimJob("0", 0.0, 1, 10.0)], "one")

    print("\n| servers x GPUs | policy | CPU s (set-up + run) | peak MB | bytes per server |")
    print("|---|---|---|---|---|")
    for servers, gpus in ((1_000, 8), (10_000, 8), (100_000, 8), (100, 1_024), (976, 1_024)):
        for name in ("fifo", "tiresias"):

            def run(s: int = servers, g: int = gpus, n: str = name) -> object:
                c = ClusterSpec.uniform(s, g)
                return simulate(one, c, make_policy(n, one, c))

            cpu, peak, _ = _measure(run, args.repeat)
            print(
                f"| {servers:,} x {gpus:,} | {name} | {cpu:.3f} | {peak:.1f} | "
                f"{peak * 1e6 / servers:,.0f} |"
            )

    print("\n| bundled excerpt under fifo | CPU s | peak MB | per job |")
    print("|---|---|---|---|")
    cpu, peak, w = _measure(bundled, args.repeat)
    n = len(w.jobs)
    print(f"| load (5,217 jobs) | {cpu:.3f} | {peak:.1f} | {peak * 1e6 / n:,.0f} bytes |")
    cpu, peak, result = _measure(lambda: run_config(RunConfig("fifo")), args.repeat)
    print(f"| load + run | {cpu:.3f} | {peak:.1f} | {peak * 1e6 / n:,.0f} bytes |")
    gc.collect()
    tracemalloc.start()
    kept = run_config(RunConfig("fifo"))
    gc.collect()
    size = tracemalloc.get_traced_memory()[0] / 1e6
    tracemalloc.stop()
    print(f"| kept result | - | {size:.1f} | {size * 1e6 / n:,.0f} bytes |")
    del kept, result
    print(f"\nload average after: {' '.join(f'{x:.1f}' for x in os.getloadavg())}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
