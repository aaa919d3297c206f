"""Shape tests on the bundled excerpt: each states in its name the paper's claim it checks.

The excerpt's first jobs (submit order) on a cluster small enough to queue
them, so each test runs in seconds; the whole excerpt runs in
``scheduling-opt reproduce PAPER --quick`` (docs/reproduction.md).
"""

from __future__ import annotations

import pytest

from scheduling_opt.reproduce.workloads import ElasticRule
from scheduling_opt.sim import (
    ClusterSpec,
    SpeedModel,
    Workload,
    bundled,
    bundled_table,
    make_policy,
    simulate,
    summarize,
)


def _metrics(
    workload: Workload, servers: int, policy: str, params: dict[str, object] | None = None
) -> dict[str, float]:
    c = ClusterSpec.uniform(servers, 8)
    speed = SpeedModel(bundled_table(), 8)
    return summarize(simulate(workload, c, make_policy(policy, workload, c, params), speed=speed))


#: Chronus' scheduling algorithms alone, without its Profiler and Spot cluster.
#: With them the order does not hold on this excerpt (400 jobs submitted in
#: the trace's first hour, on 20 servers): chronus-greedy's wDMR is 0.402
#: (0.348 with the Profiler sized at the hourly bound alone) against EDF's
#: 0.288: the burst (400 jobs in 51 minutes) grows the Profiling cluster to
#: 15 of the 20 servers at its peak, and each growth preempts main jobs
#: (docs/reproduction.md, "Chronus as a system").
ALGORITHMS_ALONE: dict[str, object] = {"profiler": False, "be_lease": None}


@pytest.mark.slow
def test_excerpt_chronus_wdmr_below_edf_below_fifo() -> None:
    # Chronus Fig. 9's order on P_MIX2's first 400 jobs over 20 x 8 GPUs (the algorithms).
    w = Workload.of(bundled().jobs[:400], "excerpt-400")
    wdmr = {p: _metrics(w, 20, p)["wdmr"] for p in ("edf", "fifo")}
    wdmr["chronus-greedy"] = _metrics(w, 20, "chronus-greedy", ALGORITHMS_ALONE)["wdmr"]
    assert wdmr["chronus-greedy"] < wdmr["edf"] < wdmr["fifo"]


def test_excerpt_elastic_tiresias_lowers_mean_median_and_p95_jct_of_tiresias() -> None:
    # EDL Table 3's direction on the first 120 jobs, all elastic, over 10 x 8 GPUs.
    rule = ElasticRule()
    w = Workload.of([rule.apply(j) for j in bundled().jobs[:120]], "excerpt-120")
    plain = _metrics(w, 10, "edl-tiresias")
    elastic = _metrics(w, 10, "elastic-tiresias")
    for key in ("jct_mean", "jct_median", "jct_p95"):
        assert elastic[key] < plain[key], key
    assert elastic["utilization"] > plain["utilization"]
