"""EDL's Table 3 claim under each starvation rule, on a prefix of P_MIX2 (issue 24).

Usage::

    python benchmarks/edl_starvation.py [--traces DIR] [--until MINUTES] [--density D]

Runs `tiresias`, `elastic-tiresias` and `edl-tiresias` exactly as
``scheduling-opt reproduce edl`` configures them at load factor D (default
2.5, the judged load: the trace on round(120 / D) servers of 8 GPUs), on the
P_MIX2 jobs submitted before ``--until`` minutes (default 2,880: two days),
under each starvation rule: the Tiresias knob k (back to G0 after waiting k
times the executed time; ``promote_knob``), the EDL step's fixed limit
(``starvation`` seconds) and none. Prints one Markdown row per run: mean,
median and p95 JCT (minutes), preemptions per job, utilization and CPU
seconds. It shows how much of the claim the starvation rule moves: the
claim compares policies that should differ in elasticity only.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from chronus_parity import excerpt  # noqa: E402

from scheduling_opt.reproduce.papers import PAPERS  # noqa: E402
from scheduling_opt.reproduce.workloads import PaperWorkload  # noqa: E402
from scheduling_opt.sim.sweep import RunConfig, run_config  # noqa: E402

#: (policy, label, parameters replacing the command's own); "none" is a limit
#: no run reaches (the step refuses an infinite one).
RULES: tuple[tuple[str, str, dict[str, Any]], ...] = (
    ("tiresias", "knob 8 (the command's)", {}),
    ("tiresias", "none", {"promote_knob": None}),
    ("elastic-tiresias", "knob 8 (the command's)", {}),
    ("elastic-tiresias", "fixed 3,600 s", {"promote_knob": None, "starvation": 3600.0}),
    ("elastic-tiresias", "none", {"promote_knob": None, "starvation": 1e12}),
    ("edl-tiresias", "knob 8 (the command's)", {}),
    ("edl-tiresias", "fixed 3,600 s", {"promote_knob": None, "starvation": 3600.0}),
    ("edl-tiresias", "none", {"promote_knob": None, "starvation": 1e12}),
)


def configs(traces: Path, density: float, path: Path) -> list[tuple[str, RunConfig]]:
    """The command's runs at ``density`` on ``path``, one per rule of :data:`RULES`."""
    made = PAPERS["edl"].configs(False, traces, (density,), judged={"P_MIX2": density})
    out = []
    for policy, label, change in RULES:
        base = next(c for c in made if c.policy == policy)
        assert isinstance(base.workload, PaperWorkload)
        params = {**dict(base.policy_params), **change}
        config = replace(
            base,
            workload=replace(base.workload, path=str(path)),
            policy_params=tuple(sorted(params.items())),
        )
        out.append((label, config))
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--traces", type=Path, default=ROOT.parent / "shared/traces/chronus-philly")
    parser.add_argument("--until", type=float, default=2880.0)
    parser.add_argument("--density", type=float, default=2.5)
    args = parser.parse_args()
    trace = args.traces / "trace_job_Philly_MIX2.csv"
    if not trace.is_file():
        print(f"edl_starvation: {trace} not found (give --traces DIR)", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory() as tmp:
        path = excerpt(trace, args.until, Path(tmp))
        print(f"P_MIX2 submitted before minute {args.until:g}, load factor {args.density:g}")
        print(
            "| policy | starvation rule | mean / median / p95 JCT (min) | preemptions / job "
            "| utilization | CPU s | load |"
        )
        print("|---|---|---|---|---|---|---|")
        for label, config in configs(args.traces, args.density, path):
            cpu = time.process_time()
            m = run_config(config).metrics
            cpu = time.process_time() - cpu
            print(
                f"| {config.policy} | {label} | {m['jct_mean']:,.1f} / {m['jct_median']:,.1f} / "
                f"{m['jct_p95']:,.1f} | {m['preemption_ratio']:.2f} | {m['utilization']:.2f} | "
                f"{cpu:.1f} | {os.getloadavg()[0]:.1f} |",
                flush=True,
            )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
