"""Chronus' local search |S| against the cost of ``chronus`` on the full P_MIX2: CPU seconds and wDMR.

Usage::

    python benchmarks/bench_search_space.py [--traces DIR] [--sizes 1000,10000,100000]
        [--start-overhead T] [--markdown OUT]

Chronus §3.4.2 searches the placements of the top-K best-effort jobs by
potential while the product of their option counts stays within |S|
(the paper: 100,000). Each size runs ``chronus`` (the policy's defaults but
``search_space``) on the full Chronus-Philly P_MIX2 trace (30,746 jobs,
120 x 8 GPUs) once, in a fresh process: the engine's CPU seconds, the CPU
seconds including the trace's loading, the wDMR, the best-effort mean JCT,
the policy calls, the local searches its 0.5-s safety net stopped
(``placement_stopped``: 0 means the run was bounded by |S| alone, so it
does not depend on the machine's speed) and the run's fingerprint (two sizes with one fingerprint
made the same decisions). The machine's 1-minute load average is printed
beside each row: the 2 cores are shared, so CPU times are the run's and
wall times the load's. The goal (issue 39) is at most 60 s of CPU.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from multiprocessing import get_context
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from sim_fingerprints import fingerprint  # noqa: E402

from scheduling_opt.sim.sweep import RunConfig, WorkloadSpec  # noqa: E402

DEFAULT_TRACES = ROOT.parent / "shared" / "traces" / "chronus-philly"
DEFAULT_SIZES = (1_000, 10_000, 100_000)

HEADER = (
    "| |S| | CPU s (engine) | CPU s (with loading) | wall s | wDMR | best-effort mean JCT | "
    "calls | searches stopped | load avg | fingerprint |\n|---|---|---|---|---|---|---|---|---|---|"
)


def _measure(config: RunConfig) -> dict[str, Any]:
    """One run in this (fresh) process."""
    from scheduling_opt.sim.sweep import run_config

    cpu0 = time.process_time()
    result = run_config(config)
    out = result.output
    return {
        "cpu": out.cpu_seconds,
        "wall": out.wall_seconds,
        "cpu_total": time.process_time() - cpu0,
        "wdmr": result.metrics["wdmr"],
        "be_jct": result.metrics.get("best_effort_jct_mean", float("nan")),
        "calls": out.calls,
        "stopped": int(result.extra.get("placement_stopped", 0)),
        "fingerprint": fingerprint(out)[:16],
    }


def measure(config: RunConfig) -> dict[str, Any]:
    """``config`` run once in a fresh interpreter (no warm caches), with the load around it."""
    before = os.getloadavg()[0]
    with ProcessPoolExecutor(1, mp_context=get_context("spawn")) as pool:
        r: dict[str, Any] = pool.submit(_measure, config).result()
    r["load"] = (before, os.getloadavg()[0])
    return r


def row(size: int, r: dict[str, Any]) -> str:
    """One markdown row."""
    lo, hi = r["load"]
    return (
        f"| {size:,} | {r['cpu']:.1f} | {r['cpu_total']:.1f} | {r['wall']:.1f} | "
        f"{r['wdmr']:.4f} | {r['be_jct']:.1f} | {r['calls']:,} | {r['stopped']} | {lo:.1f}-{hi:.1f} | "
        f"{r['fingerprint']} |"
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--traces", type=Path, default=DEFAULT_TRACES)
    parser.add_argument("--sizes", default=",".join(str(s) for s in DEFAULT_SIZES))
    parser.add_argument("--start-overhead", type=float, default=0.0)
    parser.add_argument("--markdown", type=Path, help="also write the table here")
    args = parser.parse_args()

    trace = WorkloadSpec("trace", str((args.traces / "trace_job_Philly_MIX2.csv").resolve()))
    stamp = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    lines = [
        f"bench_search_space.py, {stamp}, chronus on P_MIX2 (120 x 8 GPUs), "
        f"start overhead {args.start_overhead:g}",
        "",
        HEADER,
    ]
    print("\n".join(lines), flush=True)
    for size in (int(s) for s in args.sizes.split(",")):
        config = RunConfig(
            "chronus",
            trace,
            policy_params=(("search_space", size),),
            start_overhead=args.start_overhead,
        )
        lines.append(row(size, measure(config)))
        print(lines[-1], flush=True)
        if args.markdown:
            args.markdown.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
