"""Lower bounds on the fewest preempted jobs of a reclaim problem.

Two bounds on the preempted-job count (the primary objective; Aryl §4):
:func:`fraction_bound`, combinatorial, O(P + n log n) for P placement rows
on n on-loan servers, cheap enough for every heuristic to report; and
:func:`lower_bound`, the LP relaxation of the exact model's first stage
(one HiGHS LP solve, usually tighter), offered separately because it costs
more than ``aryl`` itself.
"""

from __future__ import annotations

import math

from scheduling_opt.reclaim.model import ReclaimInput
from scheduling_opt.solution import time_limit_of


def fraction_bound(inp: ReclaimInput) -> int:
    """The N_R smallest forced-preemption fractions, summed and rounded up.

    A server s *forces* job j when it holds more of j's workers than j's
    slack: returning s alone preempts j. Let k_j be the number of servers
    forcing j and c(s) = sum of 1/k_j over the jobs s forces. For any
    returned set R, every job forced by a server of R is preempted and is
    counted at most k_j times in sum_{s in R} c(s) with weight 1/k_j, so
    preempted(R) >= sum_{s in R} c(s) >= the sum of the N_R smallest c(s):
    Algorithm 1's server fraction, restricted to forced jobs, made a proof.
    Exact integer arithmetic (fractions scaled by the lcm of the k_j).

    Parameters
    ----------
    inp : ReclaimInput
        The reclaim problem.

    Returns
    -------
    int
        A lower bound on the preempted-job count of every choice of N_R servers.

    Raises
    ------
    InvalidInstanceError
        Never for a built input (kept for the numpydoc convention).

    Examples
    --------
    >>> from scheduling_opt.model import Cluster, GpuType, Job, Placement, PlacementRow, Server
    >>> servers = tuple(Server(f"i{k}", "T4", 8, "inference", True) for k in (1, 2, 3))
    >>> rows = [PlacementRow("a", "i1", 1), PlacementRow("a", "i2", 1)]
    >>> rows += [PlacementRow("b", "i2", 1), PlacementRow("b", "i3", 1)]
    >>> jobs = (Job("a", 2, 2, 60.0), Job("b", 2, 2, 60.0))
    >>> inp = ReclaimInput(Cluster((GpuType("T4"),), servers), jobs, Placement(tuple(rows)), 2)
    >>> fraction_bound(inp)  # c = (1/2, 1, 1/2): 1/2 + 1/2 -> 1; every pair preempts 2
    1

    References
    ----------
    Aryl (Li et al., EuroSys '22), §4 and Algorithm 1 (the server fraction 1/|S_j|).
    """
    if inp.n_reclaim == 0:
        return 0
    forcing = [[s for s, w in inc if w > inp.slack[j]] for j, inc in enumerate(inp.job_servers)]
    spans = {len(f) for f in forcing if f}
    scale = math.lcm(*spans) if spans else 1
    charge = [0] * inp.n_servers
    for servers in forcing:
        for s in servers:
            charge[s] += scale // len(servers)
    total = sum(sorted(charge)[: inp.n_reclaim])
    return -(-total // scale)


def lower_bound(inp: ReclaimInput, *, time_limit: float | None = None) -> float:
    """The LP relaxation bound of the exact model's first stage (fewest preempted jobs).

    Solves the first-stage model of :mod:`scheduling_opt.reclaim.exact`
    (merged server classes, tight big-M, per-class rows y_c <= |c| p_j) with
    integrality dropped, rounds its optimum up (the count is an integer) and
    returns the better of it and :func:`fraction_bound`. Measured cost: about
    5 ms at 60 on-loan servers and 40 ms at 500 (HiGHS LP; 2 shared cores);
    see docs/reclaim.md for its tightness.

    Parameters
    ----------
    inp : ReclaimInput
        The reclaim problem.
    time_limit : float or None
        Seconds for the LP (None: the library default); if it runs out,
        :func:`fraction_bound` alone is returned.

    Returns
    -------
    float
        A lower bound on the preempted-job count (an integer value).

    Raises
    ------
    ValueError
        If ``time_limit`` is not a positive number of seconds.

    Examples
    --------
    >>> from scheduling_opt.model import Cluster, GpuType, Job, Placement, PlacementRow, Server
    >>> servers = tuple(Server(f"i{k}", "T4", 8, "inference", True) for k in (1, 2, 3))
    >>> rows = [PlacementRow("a", "i1", 1), PlacementRow("a", "i2", 1)]
    >>> rows += [PlacementRow("b", "i2", 1), PlacementRow("b", "i3", 1)]
    >>> jobs = (Job("a", 2, 2, 60.0), Job("b", 2, 2, 60.0))
    >>> inp = ReclaimInput(Cluster((GpuType("T4"),), servers), jobs, Placement(tuple(rows)), 2)
    >>> lower_bound(inp)  # LP optimum 4/3 (y = 2/3 each) -> 2, the optimum
    2.0

    References
    ----------
    Aryl (Li et al., EuroSys '22), §4; the model is documented in docs/reclaim.md.
    """
    from scheduling_opt.reclaim.milp import ModelConfig, build, reduce, solve_rows
    from scheduling_opt.solution import Status

    limit = time_limit_of(time_limit)
    cheap = fraction_bound(inp)
    config = ModelConfig()
    red = reduce(inp, config)
    if inp.n_reclaim == 0 or not red.jobs:
        return float(cheap)
    out = solve_rows(build(inp, red, config, 1, 0), "highs", limit, relax=True)
    if out.status is not Status.OPTIMAL or out.bound is None:
        return float(cheap)
    return float(max(cheap, math.ceil(out.bound - 1e-6)))
