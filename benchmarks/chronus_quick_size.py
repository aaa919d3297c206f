"""The cluster size of `reproduce chronus --quick`: where every §4.3 baseline misses >= 5%.

Usage::

    python benchmarks/chronus_quick_size.py [--threshold 0.05] [--step 4] [--start 120]

The rule (docs/reproduction.md, "Chronus: the quick run"): the bundled
excerpt (P_MIX2's first day, 5,217 jobs) on the largest number of 8-GPU
servers, scanned down from ``--start`` in steps of ``--step``, at which
every one of the six baselines Chronus §4.3 compares with (EDF, YARN-CS,
3Sigma, GENIE, Tiresias, Themis) misses the first deadline of at least
``--threshold`` of the SLO jobs. At the paper's 120 servers the first day
is a light load (every baseline near 0% misses), where no scheduler can
show a difference. Only the baselines decide the size; Chronus is not run.
Prints each size scanned with the six miss ratios and the CPU time.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from scheduling_opt.reproduce.papers import CHRONUS_BASELINES  # noqa: E402
from scheduling_opt.sim.sweep import RunConfig, run_config  # noqa: E402


def misses(servers: int) -> dict[str, float]:
    """Each baseline's deadline-miss ratio on the excerpt with ``servers`` x 8 GPUs."""
    return {
        p: run_config(RunConfig(p, servers=servers)).metrics["deadline_miss_ratio"]
        for p in CHRONUS_BASELINES
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--threshold", type=float, default=0.05)
    parser.add_argument("--step", type=int, default=4)
    parser.add_argument("--start", type=int, default=120)
    args = parser.parse_args()
    for servers in range(args.start, 0, -args.step):
        t0 = time.process_time()
        got = misses(servers)
        cells = " ".join(f"{p}={v:.3f}" for p, v in got.items())
        print(f"{servers:4d} servers: {cells}  ({time.process_time() - t0:.1f} s CPU)", flush=True)
        if min(got.values()) >= args.threshold:
            print(f"rule: {servers} servers")
            return 0
    return 1


if __name__ == "__main__":
    raise SystemExit(main())
