"""Heterogeneous training in Aryl's scheduler: one job on training and on-loan GPUs at once.

Aryl §2.1 describes heterogeneous training (a job on V100 and T4 together,
workers with different batch sizes) as experimental; §6: "When this
feature is turned on, Aryl's job scheduler places them lastly on the
remaining resources. The actual scheduling logic for these jobs remains
the same, except that if they are elastic, their base demands are placed on
training servers, and flexible demands on inference servers whenever
possible." Appendix A measures it: tuning the batch sizes online gets 73%
of the theoretical throughput on average (Table 10: 7,297 to 14,383
against 8,261 to 15,342 samples/s for ResNet-50, the theoretical being the
sum of the GPUs' compute, a T4 a quarter of a V100), and §7.1 runs it at
"at most 70% of the ideal results": the Advanced scenario (10% of the jobs
may, at 70%) and the Ideal one (every job, at 100%).

In the simulator a job is heterogeneous when its placement spans servers of
more than one GPU type. The engine's speed model runs a synchronous gang
at its slowest GPU (``sim/speed.py``); a heterogeneous job balances its
batch sizes instead, so it runs at ``efficiency`` times the sum of its
GPUs' compute. The policy sets that through the engine's speed factor
(``Decision.rate``): ``efficiency x mean compute / slowest compute``
(:func:`mixed_factor`), 1 when the job is on one type, so the engine's
speed is ``efficiency x`` the mean compute of its GPUs (times its elastic
size and spread factors, as for any job). With the default normalized
on-loan GPUs (2 V100-equivalents per 8-T4 server) the factor is
``efficiency`` itself. Cost: O(servers of the placement).
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Sequence

from scheduling_opt.sim.cluster import Placement
from scheduling_opt.sim.workload import SimJob

#: Appendix A / §7.1: heterogeneous training reaches at most 70% of the ideal.
ADVANCED_EFFICIENCY = 0.7
#: §7.1's Advanced scenario: 10% of the jobs may train heterogeneously.
ADVANCED_SHARE = 0.1


def hetero_capable(job: SimJob, share: float) -> bool:
    """Whether ``job`` may train on heterogeneous GPUs: ``share`` of the jobs, by a hash of the id.

    The hash is salted apart from :func:`~.jobs.any_gpu_type`'s, so the two
    shares are drawn independently.

    Examples
    --------
    >>> hetero_capable(SimJob("1", 0.0, 1, 5.0), 1.0), hetero_capable(SimJob("1", 0.0, 1, 5.0), 0.0)
    (True, False)
    """
    if share >= 1.0:
        return True
    if share <= 0.0:
        return False
    h = int.from_bytes(hashlib.sha256(f"aryl-hetero:{job.id}".encode()).digest()[:8], "big")
    return h / 2**64 < share


def mixed_factor(
    placement: Placement,
    gpu_type: Sequence[str],
    compute: Sequence[float],
    efficiency: float,
) -> float:
    """The engine speed factor of a job on ``placement`` (1 unless it spans GPU types).

    Examples
    --------
    >>> types, compute = ["V100", "V100", "T4"], [1.0, 1.0, 0.25]
    >>> mixed_factor(((0, 8),), types, compute, 0.7)
    1.0
    >>> # 12 V100 + 4 T4 (Table 10): ideal 13 V100s of 16 GPUs; the engine's 0.25 x this
    >>> round(mixed_factor(((0, 8), (1, 4), (2, 4)), types, compute, 0.7) * 0.25, 6)
    0.56875
    """
    if len({gpu_type[s] for s, _ in placement}) < 2:
        return 1.0
    n = sum(g for _, g in placement)
    mean = sum(g * compute[s] for s, g in placement) / n
    slowest = min(compute[s] for s, _ in placement)
    return efficiency * mean / slowest


def mixed_worker(gpus: int, elastic: bool, per_server: Sequence[int]) -> int:
    """GPUs per worker of a job placed across pools: 1 for an elastic job, else gcd(g, K...).

    An inelastic job's workers must fit the servers of both pools (8 and 2
    GPUs by default), so they are gcd(g, 8, 2) GPUs.

    Examples
    --------
    >>> mixed_worker(4, False, (8, 2)), mixed_worker(3, False, (8, 2)), mixed_worker(4, True, (8, 2))
    (2, 1, 1)
    """
    if elastic:
        return 1
    return math.gcd(gpus, *per_server)
