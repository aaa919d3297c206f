"""EDL's simulator policies timed and fingerprinted: CPU seconds of fresh runs, min and median.

Usage::

    python benchmarks/bench_edl.py [--set quick|full] [--traces DIR] [--only TEXT]
        [--repeat N] [--record FILE | --check FILE]

Runs ``elastic-tiresias`` and ``edl-tiresias`` (EDL (TPDS '22) §5.1, and
its plain-Tiresias ablation) ``--repeat`` times each (default 3), every run
in a fresh interpreter, and prints per case the engine's CPU seconds
(``time.process_time`` around the event loop, loading excluded) of every
run, their minimum and median, the policy calls and the run's fingerprint
(``sim_fingerprints.py``'s SHA-256 of every output, first 16 hex digits;
two in one row would be a nondeterministic run). ``--record`` writes
``case -> fingerprint`` (JSON), ``--check`` compares with a recorded file
and exits 1 on a difference.

Sets: ``quick`` is ``scheduling-opt reproduce edl --quick``'s runs (the
bundled excerpt on 120 / d servers, d = 1, 1.5, 2) of both policies, a few
seconds each; ``full`` is both policies on the full Chronus-Philly P_MIX2
trace (30,746 jobs, 120 x 8 GPUs, the policies' defaults: what
docs/simulation.md's EDL rows time) and both as ``reproduce edl``
runs them at the judged d = 2.5 (48 servers), and ``elastic-tiresias``
also at d = 1, minutes each: run it niced. ``--traces DIR``: the trace folder (default
``../shared/traces/chronus-philly`` beside the project). The machine is
shared, so quote the median and the minimum, with the load average
printed beside each case.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
from concurrent.futures import ProcessPoolExecutor
from dataclasses import replace
from multiprocessing import get_context
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from sim_fingerprints import fingerprint  # noqa: E402

from scheduling_opt.reproduce.papers import PAPERS  # noqa: E402
from scheduling_opt.sim.sweep import RunConfig, WorkloadSpec, run_config  # noqa: E402

DEFAULT_TRACES = ROOT.parent / "shared" / "traces" / "chronus-philly"
POLICIES = ("elastic-tiresias", "edl-tiresias")


def _density(config: RunConfig) -> float:
    d = getattr(config.workload, "density", 1.0)
    return float(d) if isinstance(d, (int, float)) else 1.0


def cases(which: str, traces: Path) -> dict[str, RunConfig]:
    """The named configurations of set ``which`` (``quick`` or ``full``)."""
    out: dict[str, RunConfig] = {}
    if which == "quick":
        for c in PAPERS["edl"].configs(quick=True):
            if c.policy == "elastic-tiresias":
                for p in POLICIES:
                    out[f"{p}/edl-quick-d{_density(c):g}"] = replace(c, policy=p)
        return out
    mix2 = WorkloadSpec("trace", str((traces / "trace_job_Philly_MIX2.csv").resolve()))
    for p in POLICIES:
        out[f"{p}/P_MIX2-120x8"] = RunConfig(p, mix2)
    for c in PAPERS["edl"].configs(quick=False, traces=traces, judged={"P_MIX2": 2.5}):
        if c.policy in POLICIES and _density(c) in (1.0, 2.5):
            out[f"{c.policy}/edl-full-d{_density(c):g}"] = c
    return out


def _measure(config: RunConfig) -> tuple[float, int, str]:
    out = run_config(config).output
    return out.cpu_seconds, out.calls, fingerprint(out)


def _fresh(config: RunConfig) -> tuple[float, int, str]:
    # One worker per run in a new interpreter: no warm caches between runs.
    with ProcessPoolExecutor(1, mp_context=get_context("spawn")) as pool:
        return pool.submit(_measure, config).result()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--set", choices=("quick", "full"), default="quick")
    parser.add_argument("--traces", type=Path, default=DEFAULT_TRACES)
    parser.add_argument("--only", help="run the cases whose name contains this text")
    parser.add_argument("--repeat", type=int, default=3)
    group = parser.add_mutually_exclusive_group()
    group.add_argument("--record", type=Path, help="write the fingerprints here (JSON)")
    group.add_argument("--check", type=Path, help="compare with a recorded file")
    args = parser.parse_args()

    chosen = cases(args.set, args.traces)
    if args.only:
        chosen = {k: v for k, v in chosen.items() if args.only in k}
    recorded = json.loads(args.check.read_text()) if args.check else {}
    bad = 0
    print("| case | CPU s per run | min | median | calls | load | fingerprint | check |")
    print("|---|---|---|---|---|---|---|---|", flush=True)
    for name, config in chosen.items():
        load = [os.getloadavg()[0]]
        runs = []
        for _ in range(args.repeat):
            runs.append(_fresh(config))
            load.append(os.getloadavg()[0])
        cpu = [r[0] for r in runs]
        prints = sorted({r[2] for r in runs})
        verdict = ""
        if args.check:
            want = recorded.get(name)
            verdict = "NEW" if want is None else ("same" if prints == [want] else "DIFFERENT")
            bad += verdict == "DIFFERENT"
        if args.record:
            old = json.loads(args.record.read_text()) if args.record.exists() else {}
            old[name] = prints[0]
            args.record.write_text(json.dumps(old, indent=1, sort_keys=True) + "\n")
        print(
            f"| {name} | {', '.join(f'{c:.1f}' for c in cpu)} | {min(cpu):.1f} | "
            f"{statistics.median(cpu):.1f} | {runs[0][1]:,} | {min(load):.1f}-{max(load):.1f} | "
            f"{' / '.join(p[:16] for p in prints)} | {verdict} |",
            flush=True,
        )
    if bad:
        print(f"{bad} case(s) differ", file=sys.stderr)
    return 1 if bad else 0


if __name__ == "__main__":
    raise SystemExit(main())
