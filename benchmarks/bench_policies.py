"""Online policies: the time of one EDL Elastic-Tiresias round and one AntMan round.

Run: ``python benchmarks/bench_policies.py [--repeats 5]``. On warmed-up
clusters of 8-GPU servers (EDL: 3 rounds of 300 s first; AntMan: 2 rounds),
the median of ``--repeats`` calls of each step; every answer passes its
checker. The policies have no per-round optimum, so there is no gap column.
"""

from __future__ import annotations

import argparse
from functools import partial

import numpy as np
from timing import median_time

from scheduling_opt.model import Cluster, GpuType, Job, Server
from scheduling_opt.policies import antman, edl

SIZES = ((4, 32), (16, 128), (64, 512))


def edl_state(servers: int, jobs: int, seed: int) -> edl.EdlState:
    """Random min/max/requested workers, concave speed-ups, after 3 rounds of 300 s."""
    rng = np.random.default_rng(seed)
    cluster = Cluster((GpuType("V100"),), tuple(Server(f"s{i}", "V100", 8) for i in range(servers)))
    plain, service, speedup, requested = [], {}, {}, {}
    for i in range(jobs):
        lo = int(rng.integers(1, 3))
        hi = int(rng.integers(lo, 9))
        inc = np.sort(rng.uniform(0.3, 1.0, hi - 1))[::-1]
        job = Job(f"j{i}", lo, hi, 100.0)
        plain.append(job)
        speedup[job.id] = np.concatenate([[1.0], 1.0 + np.cumsum(inc)])
        service[job.id] = float(rng.choice([0, 600, 20_000]))
        requested[job.id] = int(rng.integers(lo, hi + 1))
    state = edl.EdlState.from_jobs(
        cluster, plain, service=service, speedup=speedup, requested=requested
    )
    for _ in range(3):
        decision = edl.elastic_tiresias_step(state).decision
        assert decision is not None
        state = edl.advance(state, decision, 300.0)
    return state


def antman_state(servers: int, jobs: int, seed: int) -> antman.AntManState:
    """1-8-GPU jobs of both classes, two tenants (quotas 1/2 and 1/4), after 2 rounds."""
    rng = np.random.default_rng(seed)
    cluster = Cluster((GpuType("V100"),), tuple(Server(f"s{i}", "V100", 8) for i in range(servers)))
    out = []
    for i in range(jobs):
        g = int(rng.choice([1, 1, 2, 4, 8]))
        cls = str(rng.choice(["guarantee", "opportunistic"]))
        tenant = str(rng.choice(["A", "B"]))
        out.append(Job(f"a{i}", g, g, 100.0, 1, float(i), None, (), cls, tenant))  # type: ignore[arg-type]
    util = {g: float(rng.choice([0.0, 0.3, 0.9])) for g in antman.all_gpus(cluster)}
    total = 8 * servers
    state = antman.AntManState(
        cluster, {"A": total // 2, "B": total // 4}, tuple(out), utilization=util
    )
    for _ in range(2):
        decision = antman.antman_step(state).decision
        assert decision is not None
        state = antman.apply(state, decision)
    return state


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--repeats", type=int, default=5)
    args = ap.parse_args()
    print(
        "| servers (GPUs) | jobs | EDL waiting | EDL mode | EDL step ms "
        "| AntMan pending | AntMan step ms |"
    )
    print("|---|---|---|---|---|---|---|")
    for servers, jobs in SIZES:
        e = edl_state(servers, jobs, 0)
        t_e, sol_e = median_time(partial(edl.elastic_tiresias_step, e), args.repeats)
        edl.check(e, sol_e)
        a = antman_state(servers, jobs, 1)
        t_a, sol_a = median_time(partial(antman.antman_step, a), args.repeats)
        antman.check(a, sol_a)
        assert sol_e.decision is not None
        print(
            f"| {servers} ({8 * servers}) | {jobs} | {len(e.pending())} | {sol_e.decision.mode} "
            f"| {1e3 * t_e:.1f} | {len(a.pending())} | {1e3 * t_a:.1f} |"
        )


if __name__ == "__main__":
    main()
