"""``aryl``: Algorithm 1 of Aryl (Appendix B) with the free-server phase of §5.3.

Return N_R on-loan servers, cheapest first, where a server's preemption cost
is the sum of the server fractions 1/|S_j| of the jobs still running on it;
the jobs a return preempts leave every server's cost. A lazy-deletion heap
makes it O((P d + N_R) log n) (P placement rows on n on-loan servers, d the
largest job span); N_R = 1 is an exhaustive O(P) check (line 19).
"""

from __future__ import annotations

import time

from scheduling_opt.reclaim._greedy import Greedy, run_greedy
from scheduling_opt.reclaim.bounds import fraction_bound
from scheduling_opt.reclaim.model import ReclaimDecision, ReclaimInput, solution_of
from scheduling_opt.solution import Seed, Solution, Status, named, time_limit_of


def _best_single(inp: ReclaimInput) -> list[int]:
    """N_R = 1: every server tried (Algorithm 1 line 19); ties to the first listed."""
    costs = [sum(inp.job_cost(j, w) for j, w in inp.server_jobs[s]) for s in range(inp.n_servers)]
    return [min(range(inp.n_servers), key=costs.__getitem__)]


def _aryl_key(state: Greedy, s: int) -> tuple[int, ...]:
    # Free servers first (Aryl releases the flexible-worker group before
    # anything else, §5.3), then Algorithm 1's cost, then file order.
    return (0 if state.frees(s) else 1, state.cost[s], s)


def aryl_order(inp: ReclaimInput) -> list[int]:
    """Server indices Algorithm 1 returns, in the order it picks them."""
    if inp.n_reclaim == 0:
        return []
    if inp.n_reclaim == 1:
        return _best_single(inp)
    return run_greedy(inp, _aryl_key)


@named("aryl")
def aryl(
    inp: ReclaimInput, *, seed: Seed = None, time_limit: float | None = None
) -> Solution[ReclaimDecision]:
    """Aryl's Algorithm 1 (Appendix B) with the free-server phase of §5.3.

    N_R = 1: the best single server by exhaustive check. Otherwise servers
    whose return preempts nobody go first; then the smallest preemption cost
    (sum of 1/|S_j| over the jobs still running on it, S_j = the job's
    on-loan servers); preempted jobs leave every server's cost. Ties: the
    server listed first among the on-loan servers.

    Parameters
    ----------
    inp : ReclaimInput
        The servers, jobs, placement and N_R.
    seed : int, numpy Generator or None
        Unused (deterministic); accepted for the common calling convention.
    time_limit : float or None
        Unused (O((P d + N_R) log n) work); accepted for the convention.

    Returns
    -------
    Solution[ReclaimDecision]
        ``feasible``; ``objective`` = preempted jobs, ``key`` = (preempted,
        collateral GPUs), ``bound`` = :func:`~scheduling_opt.reclaim.fraction_bound`.

    Raises
    ------
    ValueError
        If ``time_limit`` is not a positive number of seconds.

    Examples
    --------
    >>> from scheduling_opt.model import Cluster, GpuType, Job, Placement, PlacementRow, Server
    >>> servers = tuple(Server(f"i{k}", "T4", 8, "inference", True) for k in (1, 2))
    >>> cluster = Cluster((GpuType("T4"),), servers)
    >>> jobs = (Job("a", 2, 2, 60.0), Job("b", 1, 4, 60.0))
    >>> rows = (PlacementRow("a", "i1", 2), PlacementRow("b", "i1", 1), PlacementRow("b", "i2", 3))
    >>> sol = aryl(ReclaimInput(cluster, jobs, Placement(rows), 1))
    >>> sol.decision.servers, sol.objective, sol.key, sol.decision.scaled_in
    (('i2',), 0.0, (0.0, 0.0), (('b', 3),))

    References
    ----------
    Aryl (Li et al., EuroSys '22), §4, §5.3 and Appendix B, Algorithm 1.
    """
    start = time.perf_counter()
    time_limit_of(time_limit)
    chosen = aryl_order(inp)
    return solution_of(inp, chosen, Status.FEASIBLE, start, bound=float(fraction_bound(inp)))
