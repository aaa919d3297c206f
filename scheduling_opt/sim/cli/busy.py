"""The busy cluster size of a workload: the largest at which every baseline misses deadlines.

On Chronus' 120 x 8 GPUs the bundled day of P_MIX2 is light (utilization
0.44, the six baselines' mean JCTs within 9%, srtf misses no deadline), so a
table of the baselines there teaches nothing. The rule that picks a
cluster where policies matter, stated once and used by ``scheduling-opt
simulate`` with no arguments (and reusable by any quick mode that wants a
contended cluster):

    Scan cluster sizes from :data:`SCAN_START` servers (Chronus' C120) down
    in steps of :data:`SCAN_STEP`; the busy size is the first at which every
    default baseline (:func:`~scheduling_opt.sim.registry.default_policies`) misses
    the first deadline of at least :data:`BUSY_MISS_RATIO` of the SLO jobs.

The rule names a load, not a result to reach: it says nothing of mean JCTs.
On the bundled day it gives :data:`BUNDLED_BUSY_SERVERS` (recorded, because
the scan costs 42 runs; ``tests/sim/test_busy.py`` runs it again). Cost of
:func:`busy_servers`: one run per baseline and size scanned.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from scheduling_opt.errors import InvalidInstanceError
from scheduling_opt.sim.registry import default_policies
from scheduling_opt.sim.sweep import RunConfig, RunResult, WorkloadSpec, run_config

__all__ = [
    "BUNDLED_BUSY_SERVERS",
    "BUSY_MISS_RATIO",
    "SCAN_START",
    "SCAN_STEP",
    "busy_servers",
    "is_busy",
]

#: Every baseline misses at least this share of the SLO jobs' first deadlines.
BUSY_MISS_RATIO = 0.05
#: Servers the scan starts from (Chronus' C120: 120 x 8 GPUs) and its step.
SCAN_START = 120
SCAN_STEP = 10
#: :func:`busy_servers` of the bundled excerpt at 8 GPUs per server (measured:
#: at 70 servers srtf misses 2.7%, at 60 every baseline misses 6.8% or more).
BUNDLED_BUSY_SERVERS = 60


def is_busy(results: Sequence[RunResult], miss_ratio: float = BUSY_MISS_RATIO) -> bool:
    """Whether every run misses at least ``miss_ratio`` of its SLO jobs' first deadlines.

    Parameters
    ----------
    results : sequence of RunResult
        The baselines' runs on one cluster.
    miss_ratio : float, optional
        The share each must miss.

    Returns
    -------
    bool
        False for no runs.

    Examples
    --------
    >>> is_busy([])
    False
    """
    return bool(results) and all(r.metrics["deadline_miss_ratio"] >= miss_ratio for r in results)


def busy_servers(
    workload: WorkloadSpec | None = None,
    *,
    gpus_per_server: int = 8,
    policies: Sequence[str] | None = None,
    start: int = SCAN_START,
    step: int = SCAN_STEP,
    miss_ratio: float = BUSY_MISS_RATIO,
    run: Callable[[RunConfig], RunResult] = run_config,
) -> int:
    """The busy size of ``workload`` by the rule of this module.

    Parameters
    ----------
    workload : WorkloadSpec, optional
        Default: the bundled excerpt.
    gpus_per_server : int, optional
        GPUs of each server.
    policies : sequence of str, optional
        The baselines that must all miss deadlines (default: simulate's).
    start, step : int, optional
        The scan: ``start``, ``start - step``, ... down to ``step``.
    miss_ratio : float, optional
        The share of SLO jobs each policy must miss.
    run : callable, optional
        Runs one configuration (:func:`~scheduling_opt.sim.sweep.run_config`;
        a caching sweep can be passed instead).

    Returns
    -------
    int
        Servers.

    Raises
    ------
    InvalidInstanceError
        No size of the scan is busy (a workload without SLO jobs, for one).

    Examples
    --------
    >>> from scheduling_opt.sim.synthetic import SyntheticSpec
    >>> small = WorkloadSpec("synthetic", synthetic=SyntheticSpec(jobs=200))
    >>> busy_servers(small, policies=("fifo",), start=4, step=1)
    4
    """
    spec = workload or WorkloadSpec("bundled")
    chosen = tuple(policies) if policies is not None else default_policies()
    for servers in range(start, 0, -step):
        runs = [
            run(
                RunConfig(policy=p, workload=spec, servers=servers, gpus_per_server=gpus_per_server)
            )
            for p in chosen
        ]
        if is_busy(runs, miss_ratio):
            return servers
    raise InvalidInstanceError(
        "workload",
        f"no cluster size from {start} down by {step} servers makes every policy of "
        f"{list(chosen)} miss {miss_ratio:.0%} of the deadlines",
    )
