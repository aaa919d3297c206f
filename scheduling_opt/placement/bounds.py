"""A cheap proven upper bound on the total allocation reward, and heuristic answers.

Any placement puts a set of whole jobs on the free GPUs, each job earning at
most its best reward; so the fractional knapsack over (GPUs, best reward)
with the total free GPUs as capacity bounds the optimum (Dantzig's bound of
the knapsack relaxation; Chronus §3.4.2 for the reward). O(J log J).
"""

from __future__ import annotations

import math
import time
from collections.abc import Sequence

from scheduling_opt.placement.model import Assignment, PlacementDecision, PlacementInput, decide
from scheduling_opt.solution import Solution, Status


def upper_bound(inp: PlacementInput) -> float:
    """A proven upper bound on the best total reward RW, in O(J log J).

    Parameters
    ----------
    inp : PlacementInput
        The placement input.

    Returns
    -------
    float
        The fractional knapsack value: jobs by best reward per GPU, filling
        the GPUs free on the training-usable servers.

    Examples
    --------
    >>> from scheduling_opt.model import Cluster, GpuType, Job, Server
    >>> cluster = Cluster((GpuType("V100"),), (Server("n0", "V100", 8),))
    >>> jobs = [Job("a", 8, 8, 60.0), Job("b", 4, 4, 60.0)]
    >>> upper_bound(PlacementInput(cluster, jobs))
    8.0

    References
    ----------
    Chronus §3.4.2 (Eq. 7); G. B. Dantzig, "Discrete-variable extremum
    problems", Operations Research 5 (1957).
    """
    items = [(inp.best_rw(j), inp.gpus(j)) for j in range(inp.n_jobs)]
    items = [(value, gpus) for value, gpus in items if value > 0]
    items.sort(key=lambda item: -item[0] / item[1])
    room = sum(inp.free)
    parts: list[float] = []
    for value, gpus in items:
        if gpus <= room:
            parts.append(value)
            room -= gpus
        else:
            parts.append(value * room / gpus)
            break
    return math.fsum(parts)


def heuristic_solution(
    inp: PlacementInput, assign: Sequence[Assignment | None], start: float, message: str = ""
) -> Solution[PlacementDecision]:
    """A ``feasible`` answer with its reward and :func:`upper_bound` (``start``: perf_counter)."""
    decision = decide(inp, assign)
    return Solution(
        Status.FEASIBLE,
        decision.reward,
        decision,
        bound=upper_bound(inp),
        seconds=time.perf_counter() - start,
        message=message,
    )
