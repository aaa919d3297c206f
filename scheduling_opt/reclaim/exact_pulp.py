"""``exact-pulp``: the reclaim problem written again, independently, in PuLP (CBC).

Binary x_s per on-loan server, p_j per job on an on-loan server, and
z_js = p_j x_s linearized; one weighted objective BIG * preempted +
collateral (Aryl §4). It shares no model code with ``exact`` so that the two
cross-check each other; no reductions, so it is slower (NP-hard: exponential
in the worst case).
"""

from __future__ import annotations

import time

from scheduling_opt.exact import solve_pulp
from scheduling_opt.reclaim.aryl import aryl_order
from scheduling_opt.reclaim.model import ReclaimDecision, ReclaimInput, solution_of
from scheduling_opt.solution import Seed, Solution, Status, named, time_limit_of


@named("exact-pulp")
def exact_pulp(
    inp: ReclaimInput, *, seed: Seed = None, time_limit: float | None = None
) -> Solution[ReclaimDecision]:
    """The same problem as an independent PuLP model solved by CBC.

    One weighted objective BIG * sum p_j + collateral, where a preempted
    job's collateral is gpus_j - gpw_j * sum_s w_js z_js. No reductions:
    every job on an on-loan server gets a row, with M_j = its on-loan
    workers. Under a time limit the answer is the better of CBC's incumbent
    and aryl's, with no bound (PuLP exposes no dual bound).

    Parameters
    ----------
    inp : ReclaimInput
        The servers, jobs, placement and N_R.
    seed : int, numpy Generator or None
        Unused; accepted for the calling convention.
    time_limit : float or None
        Seconds for CBC (None: the library default).

    Returns
    -------
    Solution[ReclaimDecision]
        ``optimal`` (bound = objective) or ``time_limit`` (bound None);
        ``key`` = (preempted, collateral GPUs).

    Raises
    ------
    ValueError
        If ``time_limit`` is not a positive number of seconds.
    SolverError
        If CBC fails.

    Examples
    --------
    >>> from scheduling_opt.model import Cluster, GpuType, Job, Placement, PlacementRow, Server
    >>> servers = tuple(Server(f"i{k}", "T4", 8, "inference", True) for k in (1, 2, 3))
    >>> rows = [PlacementRow("a", "i1", 1), PlacementRow("a", "i2", 1)]
    >>> rows += [PlacementRow("b", "i2", 1), PlacementRow("b", "i3", 2)]
    >>> jobs = (Job("a", 2, 2, 60.0), Job("b", 3, 3, 60.0, gpus_per_worker=2))
    >>> inp = ReclaimInput(Cluster((GpuType("T4"),), servers), jobs, Placement(tuple(rows)), 1)
    >>> sol = exact_pulp(inp)
    >>> sol.status.value, sol.decision.servers, sol.key
    ('optimal', ('i1',), (1.0, 1.0))

    References
    ----------
    Aryl (Li et al., EuroSys '22), §4.
    """
    import pulp

    start = time.perf_counter()
    limit = time_limit_of(time_limit)
    if inp.n_reclaim == 0:
        return solution_of(inp, [], Status.OPTIMAL, start)
    prob = pulp.LpProblem("reclaim", pulp.LpMinimize)
    x = [pulp.LpVariable(f"x{s}", cat="Binary") for s in range(inp.n_servers)]
    p = [pulp.LpVariable(f"p{j}", cat="Binary") for j in range(inp.n_jobs)]
    z = {
        (j, s): pulp.LpVariable(f"z{j}_{s}", 0, 1)
        for j in range(inp.n_jobs)
        for s, _ in inp.job_servers[j]
    }
    terms = []
    for j in range(inp.n_jobs):
        terms.append(inp.big * p[j] + inp.gpus[j] * p[j])
        for s, w in inp.job_servers[j]:
            terms.append(-inp.gpw[j] * w * z[j, s])
            prob += z[j, s] <= p[j]
            prob += z[j, s] <= x[s]
        lost = pulp.lpSum(w * x[s] for s, w in inp.job_servers[j])
        prob += lost - inp.slack[j] <= inp.loan_workers[j] * p[j]
    prob += pulp.lpSum(terms)
    prob += pulp.lpSum(x) == inp.n_reclaim
    out = solve_pulp(prob, time_limit=limit, started=start)
    found = None
    if out.has_solution:
        found = [s for s in range(inp.n_servers) if (x[s].value() or 0.0) > 0.5]
    if out.status is Status.OPTIMAL and found is not None:
        return solution_of(inp, found, Status.OPTIMAL, start)
    chosen = aryl_order(inp)
    if found is not None and inp.cost(found) <= inp.cost(chosen):
        chosen = found
    return solution_of(inp, chosen, Status.TIME_LIMIT, start, message="time limit reached")
