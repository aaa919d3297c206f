"""``auto`` (the default): the proven optimum when the frontier DP is cheap, else ``aryl-dp``.

Runs the frontier DP of :mod:`scheduling_opt.reclaim.frontier` (Aryl §4's
lexicographic objective) with a small budget proportional to the number of
on-loan servers; on placements with locality it finishes, and the answer
is proven optimal (26-36 ms of CPU at 500 on-loan servers). When the
frontier is too wide for the budget, the DP stops early and ``aryl-dp``
answers instead, so the call costs at most the budget's work (about
0.2 ms per server) plus ``aryl-dp``'s.
"""

from __future__ import annotations

import time

from scheduling_opt.reclaim.aryl_dp import aryl_dp
from scheduling_opt.reclaim.frontier import frontier_dp
from scheduling_opt.reclaim.model import ReclaimDecision, ReclaimInput, solution_of
from scheduling_opt.solution import Seed, Solution, Status, named, time_limit_of

#: The DP's budgets per on-loan server: frontier states (the generator's
#: instances use 1.6-18 per server from 8 to 1,000 servers) and (state, r)
#: cells (170-680 per server at 500 and 1,000 servers; one has 3,500).
AUTO_STATES_PER_SERVER = 25
AUTO_CELLS_PER_SERVER = 5_000


@named("auto")
def auto(
    inp: ReclaimInput, *, seed: Seed = None, time_limit: float | None = None
) -> Solution[ReclaimDecision]:
    """The frontier DP's proven optimum when it fits its budget, else ``aryl-dp``.

    Parameters
    ----------
    inp : ReclaimInput
        The servers, jobs, placement and N_R.
    seed : int, numpy Generator or None
        Unused (deterministic); accepted for the calling convention.
    time_limit : float or None
        Seconds in all (None: the library default); the DP stops at it and
        ``aryl-dp`` gets what is left.

    Returns
    -------
    Solution[ReclaimDecision]
        ``optimal`` (bound = the count) from the DP, or ``aryl-dp``'s
        ``feasible`` answer with its bound and a message saying why.

    Raises
    ------
    ValueError
        If ``time_limit`` is not a positive number of seconds.

    Examples
    --------
    >>> from scheduling_opt.model import Cluster, GpuType, Job, Placement, PlacementRow, Server
    >>> servers = tuple(Server(f"i{k}", "T4", 8, "inference", True) for k in (1, 2, 3))
    >>> rows = [PlacementRow("a", "i1", 1), PlacementRow("a", "i2", 1)]
    >>> rows += [PlacementRow("b", "i3", 1)]
    >>> jobs = (Job("a", 2, 2, 60.0), Job("b", 1, 1, 60.0))
    >>> inp = ReclaimInput(Cluster((GpuType("T4"),), servers), jobs, Placement(tuple(rows)), 2)
    >>> sol = auto(inp)
    >>> sol.status.value, sol.decision.servers, sol.key
    ('optimal', ('i1', 'i2'), (1.0, 0.0))

    References
    ----------
    Aryl (Li et al., EuroSys '22), §4; measured times in docs/reclaim.md.
    """
    start = time.perf_counter()
    limit = time_limit_of(time_limit)
    n = max(inp.n_servers, 1)
    found = frontier_dp(
        inp,
        max_states=AUTO_STATES_PER_SERVER * n,
        max_cells=AUTO_CELLS_PER_SERVER * n,
        deadline=start + limit,
    )
    if found is not None:
        count = float(len(inp.decide(found.chosen).preempted_jobs))
        return solution_of(inp, found.chosen, Status.OPTIMAL, start, bound=count)
    left = max(limit - (time.perf_counter() - start), 1e-3)
    fallback = aryl_dp(inp, time_limit=left)
    message = "frontier DP over its budget: aryl-dp's answer"
    if fallback.message:
        message += f"; {fallback.message}"
    return fallback.with_(seconds=time.perf_counter() - start, message=message)
