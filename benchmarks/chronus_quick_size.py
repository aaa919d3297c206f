"""The cluster size of `reproduce chronus --quick`: where every §4.3 baseline misses >= 5%.

Usage::

    python benchmarks/chronus_quick_size.py [--density 0.5] [--threshold 0.05] [--step 2] [--start 60]

The rule (docs/reproduction.md, "Chronus: the quick run"): the bundled
excerpt (P_MIX2's first day, 5,217 jobs) at job density ``--density`` (the
``sample`` rule, seed 0: half the jobs, so the whole quick run stays under
two minutes of CPU), on the largest number of 8-GPU servers, scanned down
from ``--start`` in steps of ``--step``, at which every one of the six
baselines Chronus §4.3 compares with (EDF, YARN-CS, 3Sigma, GENIE,
Tiresias, Themis) misses the first deadline of at least ``--threshold`` of
the SLO jobs. At the paper's 120 servers the first day is a light load
(every baseline near 0% misses), where no scheduler can show a difference.
Only the baselines decide the size; Chronus is not run. Prints each size
scanned with the miss ratios (cheapest baseline first, stopping at the
first under the threshold) and the CPU time.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from scheduling_opt.reproduce.papers.chronus import CHRONUS_BASELINES  # noqa: E402
from scheduling_opt.reproduce.workloads import PaperWorkload  # noqa: E402
from scheduling_opt.sim.sweep import RunConfig, run_config  # noqa: E402

#: The baselines cheapest first: a size fails at the first one under the threshold.
ORDER = ("yarn-cs-slo", "genie", "edf", "tiresias", "themis", "3sigma")


def misses(servers: int, threshold: float, density: float) -> dict[str, float]:
    """Each baseline's deadline-miss ratio on the excerpt with ``servers`` x 8 GPUs.

    Stops at the first baseline under ``threshold`` (the size fails then).
    """
    out: dict[str, float] = {}
    for p in ORDER:
        spec = PaperWorkload("bundled", label="excerpt", density=density)
        config = RunConfig(p, spec, servers=servers)
        out[p] = run_config(config).metrics["deadline_miss_ratio"]
        if out[p] < threshold:
            break
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--density", type=float, default=0.5)
    parser.add_argument("--threshold", type=float, default=0.05)
    parser.add_argument("--step", type=int, default=2)
    parser.add_argument("--start", type=int, default=60)
    args = parser.parse_args()
    if sorted(ORDER) != sorted(CHRONUS_BASELINES):
        raise SystemExit("ORDER must list the six baselines of reproduce/papers/chronus.py")
    for servers in range(args.start, 0, -args.step):
        t0 = time.process_time()
        got = misses(servers, args.threshold, args.density)
        cells = " ".join(f"{p}={v:.3f}" for p, v in got.items())
        print(f"{servers:4d} servers: {cells}  ({time.process_time() - t0:.1f} s CPU)", flush=True)
        if len(got) == len(ORDER) and min(got.values()) >= args.threshold:
            print(f"rule: {servers} servers")
            return 0
    return 1


if __name__ == "__main__":
    raise SystemExit(main())
