"""What each AntMan mechanism moves on Fig. 13's mix: one mechanism added at a time.

Usage::

    python benchmarks/antman_mechanisms.py [--full] [--density D] [--seeds N] [--only TEXT]

Runs ``antman`` exactly as ``scheduling-opt reproduce antman`` configures it
(``--quick``: 800 jobs at offered load 1.25 of 8 x 8 GPUs, 3 seeds;
``--full``: 2,000 jobs at ``--density``, default 1.0) under a ladder of
settings, from the model before the local coordinator (``compute=constant``:
the engine's fixed pair, one opportunistic job per GPU, no scaling costs, no
demotion) to the default with every mechanism on, one step at a time, plus
single changes from the default (a parameter swept where the paper gives no
number). Prints one Markdown row per setting, means over the seeds: average
JCT, tenant A's (guarantee) and tenant B's (opportunistic) JCT, makespan,
mean queueing, utilization, and the policy's counters (shared launches,
stacked starts, evictions, scaling stalls), with the CPU seconds of the
runs. The rows are the before/after table of docs/reproduction.md.
"""

from __future__ import annotations

import argparse
import sys
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from scheduling_opt.reproduce.papers import PAPERS  # noqa: E402
from scheduling_opt.sim.sweep import RunConfig, RunResult, run_config  # noqa: E402

_BEFORE: dict[str, Any] = {"compute": "constant", "overheads": False, "demote_after": None}
#: (label, parameters over the reproduction's own): the ladder, then single changes.
SETTINGS: tuple[tuple[str, dict[str, Any]], ...] = (
    ("before: fixed pair 0.57/0.966, one guest per GPU", _BEFORE),
    (
        "+ GpuOpManager (idle share), one guest",
        {"guests_per_gpu": 1, "overheads": False, "demote_after": None},
    ),
    ("+ up to 4 guests per GPU", {"overheads": False, "demote_after": None}),
    ("+ scaling costs (17 ms / 115 ms)", {"demote_after": None}),
    ("default (+ demotion after 33 min)", {}),
    ("default, 2 guests per GPU", {"guests_per_gpu": 2}),
    ("default, exact memory split", {"split": "exact"}),
    ("default, no residual on guarantee jobs", {"guarantee_slowdown": 0.0}),
    ("default, demotion after 10 min", {"demote_after": 10.0}),
    ("default, demotion after 60 min", {"demote_after": 60.0}),
    ("default, no demotion", {"demote_after": None}),
    ("default, static limits (UMem)", {"scaling": "static"}),
)
COUNTERS = ("shared_launches", "stacked_starts", "memory_evictions", "upgrades", "demotions")


def base_configs(full: bool, density: float | None, seeds: int | None) -> list[RunConfig]:
    """The reproduction's ``antman`` runs (one per seed)."""
    paper = PAPERS["antman"]
    dens = (density,) if density is not None else None
    made = paper.configs(quick=not full, densities=dens, seeds=seeds)
    return [c for c in made if c.name == "antman"]


def tenant_jct(result: RunResult, tenant: str) -> float:
    """Mean JCT of the jobs of ``tenant``."""
    out = result.output
    jcts = [e - j.submit for j, e in zip(out.jobs, out.end, strict=True) if j.tenant == tenant]
    return sum(jcts) / len(jcts) if jcts else float("nan")


def row(label: str, results: list[RunResult], cpu: float) -> str:
    """One Markdown row: the means over the seeds."""
    n = len(results)

    def mean(metric: str) -> float:
        return sum(r.metrics[metric] for r in results) / n

    a = sum(tenant_jct(r, "vc0") for r in results) / n
    b = sum(tenant_jct(r, "vc1") for r in results) / n
    counters = " | ".join(f"{sum(r.extra.get(k, 0.0) for r in results) / n:.0f}" for k in COUNTERS)
    seeds = " / ".join(f"{r.metrics['jct_mean']:.1f}" for r in results)
    return (
        f"| {label} | {mean('jct_mean'):.1f} ({seeds}) | {a:.1f} | {b:.1f} | "
        f"{mean('makespan'):,.0f} | {mean('queueing_mean'):.1f} | {mean('utilization'):.3f} | "
        f"{counters} | {cpu:.1f} |"
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--full", action="store_true", help="the full mix (2,000 jobs)")
    parser.add_argument("--density", type=float, help="offered load (quick: 1.25; full: 1.0)")
    parser.add_argument("--seeds", type=int, help="seeds (the reproduction's: 3)")
    parser.add_argument("--only", help="run the settings whose label contains this text")
    args = parser.parse_args()
    density = args.density if args.density is not None else (1.0 if args.full else None)
    bases = base_configs(args.full, density, args.seeds)
    print(
        "| setting | avg JCT (per seed) | tenant A JCT | tenant B JCT | makespan | queueing "
        "| utilization | " + " | ".join(COUNTERS) + " | CPU s |"
    )
    print("|---|---|---|---|---|---|---|" + "---|" * len(COUNTERS) + "---|")
    for label, change in SETTINGS:
        if args.only and args.only not in label:
            continue
        results = []
        t0 = time.process_time()
        for base in bases:
            params = {**dict(base.policy_params), **change}
            results.append(run_config(replace(base, policy_params=tuple(params.items()))))
        print(row(label, results, time.process_time() - t0), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
