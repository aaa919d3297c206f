"""Tightness and speed of the offline bounds (issue 42): tiny traces, the bundled day, full traces.

Usage::

    python benchmarks/bench_bounds.py [--tiny N] [--sets tiny day full] [--traces DIR]
        [--cache DIR] [--markdown OUT] [--json OUT]

- ``tiny``: N random tiny traces (1 to 4 rigid jobs, integer times, 1 or 2
  servers of 1 to 4 GPUs; seeds 0..N-1), each bound against the exact
  optimum of slot schedules (tests/sim/bounds/exact.py: a time-indexed
  MILP that a brute force and an engine replay confirm): the median and
  worst ratio optimum / bound (bound / optimum for the utilization's upper
  bound), and for the wDMR the gap in points, since its optimum is often 0.
- ``day``: the bundled day on its busy size, 60 x 8 GPUs; ``full``: the full
  P_MIX2, P_SLO and P_MIX1 traces on 120 x 8 GPUs. Each: every bound with
  its CPU seconds, then each policy (fifo sjf edf srtf tiresias yarn-cs
  themis chronus, one run at a time, cached in ``--cache``) against it.

CPU times are ``time.process_time`` of this process; the machine's load
average is printed beside them (2 shared cores).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from scheduling_opt.sim import (  # noqa: E402
    ClusterSpec,
    RunConfig,
    SimJob,
    Workload,
    WorkloadSpec,
    run_sweep,
    simulate,
    summarize,
)
from scheduling_opt.sim.bounds import Bounds, envelope_of, offline_bounds  # noqa: E402
from scheduling_opt.sim.workload import bundled, load_trace  # noqa: E402
from tests.sim.bounds import exact  # noqa: E402

DEFAULT_TRACES = ROOT.parent / "shared" / "traces" / "chronus-philly"
TRACES = {
    "P_MIX2": "trace_job_Philly_MIX2.csv",
    "P_SLO": "trace_job_Philly_SLO.csv",
    "P_MIX1": "trace_job_Philly_MIX1.csv",
}
POLICIES = ("fifo", "sjf", "edf", "srtf", "tiresias", "yarn-cs", "themis", "chronus")
SHAPES = ((1, 1), (1, 2), (1, 4), (2, 2), (2, 4))


def load() -> str:
    """The 1-minute load average."""
    return f"{os.getloadavg()[0]:.1f}"


def tiny_trace(seed: int) -> tuple[Workload, ClusterSpec]:
    """A random tiny trace, as the property tests draw them (numpy, seeded)."""
    rng = np.random.default_rng(seed)
    servers, per = SHAPES[int(rng.integers(len(SHAPES)))]
    jobs = []
    for i in range(int(rng.integers(1, 5))):
        submit = float(rng.integers(0, 4))
        work = float(rng.integers(1, 4))
        gpus = int(rng.integers(1, servers * per + 1))
        kind = ("best", "strict", "soft")[int(rng.integers(3))]
        d = submit + work + float(rng.integers(-1, 4))
        steps: tuple[tuple[float, float], ...] = ()
        if kind == "strict":
            steps = ((d, 100.0),)
        elif kind == "soft":
            steps = ((d, 100.0), (d + 1, 80.0), (d + 2, 50.0), (d + 4, 20.0))
        jobs.append(SimJob(str(i), submit, gpus, work, deadlines=steps, job_type=kind))
    return Workload.of(jobs, f"tiny-{seed}"), ClusterSpec.uniform(servers, per)


def tiny(n: int) -> dict[str, Any]:
    """Each bound against the slot-schedule optimum on ``n`` tiny traces."""
    ratios: dict[str, list[float]] = {"jct": [], "makespan": [], "utilization": []}
    wdmr_gaps: list[float] = []
    wdmr_exact = 0
    wdmr_positive = 0
    for seed in range(n):
        w, c = tiny_trace(seed)
        b = offline_bounds(w, c, envelope_of([("srtf", {})]))
        jobs, gpus = list(w.jobs), c.total_gpus
        jct = exact.milp(jobs, gpus, "jct")[0]
        makespan, slots = exact.milp(jobs, gpus, "makespan")
        wdmr = exact.milp(jobs, gpus, "wdmr")[0]
        util = summarize(simulate(w, c, exact.Replay(slots)))["utilization"]
        ratios["jct"].append(jct / b.jct_mean_lower.value)
        ratios["makespan"].append(makespan / b.makespan_lower.value)
        ratios["utilization"].append(b.utilization_upper.value / util)
        if any(j.deadlines for j in jobs):
            wdmr_gaps.append(wdmr - b.wdmr_lower.value)
            wdmr_exact += abs(wdmr - b.wdmr_lower.value) < 1e-6
            wdmr_positive += wdmr > 1e-9
    out: dict[str, Any] = {"traces": n}
    for key, values in ratios.items():
        out[key] = {
            "median": statistics.median(values),
            "worst": max(values),
            "exact": sum(1 for v in values if v < 1 + 1e-6),
        }
    out["wdmr"] = {
        "traces": len(wdmr_gaps),
        "optimum_positive": wdmr_positive,
        "exact": wdmr_exact,
        "median_gap": statistics.median(wdmr_gaps) if wdmr_gaps else 0.0,
        "worst_gap": max(wdmr_gaps) if wdmr_gaps else 0.0,
    }
    return out


def timed_bounds(w: Workload, c: ClusterSpec) -> tuple[Bounds, float]:
    env = envelope_of([(p, {}) for p in POLICIES])
    start = time.process_time()
    b = offline_bounds(w, c, env)
    return b, time.process_time() - start


def against(
    label: str, w: Workload, spec: WorkloadSpec, servers: int, cache: Path
) -> dict[str, Any]:
    """The bounds of one workload and every policy's ratio to them."""
    c = ClusterSpec.uniform(servers, 8)
    before = load()
    b, cpu = timed_bounds(w, c)
    print(f"{label}: bounds in {cpu:.1f} s of CPU (load {before} -> {load()})", flush=True)
    runs = {}
    for p in POLICIES:
        started = time.perf_counter()
        (r,) = run_sweep([RunConfig(p, spec, servers=servers)], cache_dir=cache)
        m = r.metrics
        runs[p] = {
            "jct_mean": m["jct_mean"],
            "makespan": m["makespan"],
            "utilization": m["utilization"],
            "wdmr": m["wdmr"],
            "busy_within_work": r.output.busy_area <= b.nominal * (1 + 1e-9),
            "wall_seconds": time.perf_counter() - started,
        }
        print(f"  {p}: {m['jct_mean']:.1f} min mean JCT", flush=True)
    return {
        "workload": label,
        "servers": servers,
        "jobs": b.jobs,
        "bounds": {
            "jct_mean_lower": b.jct_mean_lower.as_dict(),
            "makespan_lower": b.makespan_lower.as_dict(),
            "utilization_upper": b.utilization_upper.as_dict(),
            "wdmr_lower": b.wdmr_lower.as_dict(),
        },
        "cpu_seconds": cpu,
        "cpu_by_bound": dict(b.seconds),
        "load": before,
        "runs": runs,
    }


def markdown(tiny_out: dict[str, Any] | None, traces: Sequence[dict[str, Any]]) -> str:
    lines: list[str] = []
    if tiny_out is not None:
        n = tiny_out["traces"]
        lines += [
            f"Tiny traces ({n}): optimum / bound (utilization: bound / optimum)",
            "",
            "| bound | median | worst | exact |",
            "|---|---|---|---|",
        ]
        for key in ("jct", "makespan", "utilization"):
            t = tiny_out[key]
            lines.append(f"| {key} | {t['median']:.3f} | {t['worst']:.3f} | {t['exact']} of {n} |")
        wd = tiny_out["wdmr"]
        lines.append(
            f"| wdmr (gap in points, {wd['traces']} traces with SLO jobs, "
            f"{wd['optimum_positive']} with a positive optimum) | {wd['median_gap']:.3f} "
            f"| {wd['worst_gap']:.3f} | {wd['exact']} of {wd['traces']} |"
        )
        lines.append("")
    for t in traces:
        b = t["bounds"]
        lines += [
            f"{t['workload']} on {t['servers']} x 8 GPUs ({t['jobs']} jobs): bounds in "
            f"{t['cpu_seconds']:.1f} s of CPU (load {t['load']}): mean JCT >= "
            f"{b['jct_mean_lower']['value']:.1f} ({b['jct_mean_lower']['method']}), makespan >= "
            f"{b['makespan_lower']['value']:.0f}, utilization <= "
            f"{b['utilization_upper']['value']:.3f}, wDMR >= {b['wdmr_lower']['value']:.4f} "
            f"({b['wdmr_lower']['method']})",
            "",
            "| policy | mean JCT | x bound | makespan | x bound | utilization | of bound "
            "| wDMR | above bound |",
            "|---|---|---|---|---|---|---|---|---|",
        ]
        for p, m in t["runs"].items():
            util = m["utilization"] / b["utilization_upper"]["value"]
            lines.append(
                f"| {p} | {m['jct_mean']:.1f} | {m['jct_mean'] / b['jct_mean_lower']['value']:.2f}x "
                f"| {m['makespan']:.0f} | {m['makespan'] / b['makespan_lower']['value']:.2f}x "
                f"| {m['utilization']:.3f} | {util:.2f}{'' if m['busy_within_work'] else ' *'} "
                f"| {m['wdmr']:.4f} | {m['wdmr'] - b['wdmr_lower']['value']:+.4f} |"
            )
        lines.append("")
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--tiny", type=int, default=200, help="tiny traces (200)")
    parser.add_argument("--sets", nargs="+", default=["tiny", "day", "full"])
    parser.add_argument("--traces", type=Path, default=DEFAULT_TRACES)
    parser.add_argument("--cache", type=Path, default=Path("bench-out/bounds-cache"))
    parser.add_argument("--only", nargs="+", default=list(TRACES), help="full traces to run")
    parser.add_argument("--markdown", type=Path)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args(argv)
    tiny_out = tiny(args.tiny) if "tiny" in args.sets else None
    traces = []
    if "day" in args.sets:
        traces.append(against("bundled day", bundled(), WorkloadSpec("bundled"), 60, args.cache))
    if "full" in args.sets:
        for name in args.only:
            path = args.traces / TRACES[name]
            w = load_trace(path)
            spec = WorkloadSpec("trace", str(path.resolve()))
            traces.append(against(name, w, spec, 120, args.cache))
    text = markdown(tiny_out, traces)
    print(text)
    if args.markdown:
        args.markdown.write_text(text + "\n", encoding="utf-8")
    if args.json:
        record = {"tiny": tiny_out, "traces": traces}
        args.json.write_text(json.dumps(record, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
