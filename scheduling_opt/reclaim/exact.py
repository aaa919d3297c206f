"""``exact``: the proven reclaim optimum by the frontier DP, the two-stage MILP as fallback.

The lexicographic optimum (fewest preempted jobs, then fewest collateral
GPUs; Aryl §4, the optimum §7.3 finds by exhaustive search) by dynamic
programming along a server order inside each component of the server-job
graph (:mod:`scheduling_opt.reclaim.frontier`): polynomial when the
frontier of jobs crossing a cut is narrow, as on placements with locality
(26-36 ms of CPU at 500 on-loan servers and 1,000 jobs, where the MILP
takes 0.6-0.75 s). When the frontier is too wide for the DP's cell budget,
the two-stage MILP (:mod:`scheduling_opt.reclaim.two_stage`) gets the rest
of the time. NP-hard: exponential in the worst case either way.
"""

from __future__ import annotations

import time

from scheduling_opt.errors import SolverError
from scheduling_opt.reclaim.frontier import MAX_CELLS, MAX_STATES, frontier_dp
from scheduling_opt.reclaim.model import ReclaimDecision, ReclaimInput, solution_of
from scheduling_opt.reclaim.two_stage import ExactOutcome, answer, solve_two_stage
from scheduling_opt.solution import Seed, Solution, Status, named, time_limit_of


@named("exact")
def exact(
    inp: ReclaimInput,
    *,
    seed: Seed = None,
    time_limit: float | None = None,
    max_states: int = MAX_STATES,
    max_cells: int = MAX_CELLS,
) -> Solution[ReclaimDecision]:
    """Proven-optimal servers: the frontier DP, or the two-stage MILP when it is too wide.

    ``status`` is ``optimal`` when the DP finished (its cost is re-checked
    against :meth:`ReclaimInput.cost`) or the MILP proved both stages;
    otherwise ``time_limit`` with the best incumbent known (the MILP's or
    ``aryl-dp``'s component DP) and a proven lower bound on the count.

    Parameters
    ----------
    inp : ReclaimInput
        The servers, jobs, placement and N_R.
    seed : int, numpy Generator or None
        Unused (deterministic); accepted for the calling convention.
    time_limit : float or None
        Seconds in all (None: the library default).
    max_states, max_cells : int
        The DP's budgets of frontier states (its work: the default is at
        most about 0.5 s of CPU) and of (state, r) cells (its memory: at
        most about 50 MB); past either the MILP runs instead (0: always).

    Returns
    -------
    Solution[ReclaimDecision]
        ``objective`` = preempted jobs, ``key`` = (preempted, collateral GPUs),
        ``bound`` = proven lower bound on the preempted jobs.

    Raises
    ------
    ValueError
        If ``time_limit`` is not a positive number of seconds.
    SolverError
        If a backend fails, or the DP's cost disagrees with the input's (a bug).

    Examples
    --------
    >>> from scheduling_opt.model import Cluster, GpuType, Job, Placement, PlacementRow, Server
    >>> servers = tuple(Server(f"i{k}", "T4", 8, "inference", True) for k in (1, 2, 3))
    >>> rows = [PlacementRow("a", "i1", 1), PlacementRow("a", "i2", 1)]
    >>> rows += [PlacementRow("b", "i2", 1), PlacementRow("b", "i3", 2)]
    >>> jobs = (Job("a", 2, 2, 60.0), Job("b", 3, 3, 60.0, gpus_per_worker=2))
    >>> inp = ReclaimInput(Cluster((GpuType("T4"),), servers), jobs, Placement(tuple(rows)), 1)
    >>> sol = exact(inp)  # i1 leaves a's 1 GPU on i2, i3 leaves b's 2 GPUs
    >>> sol.status.value, sol.decision.servers, sol.key, sol.bound
    ('optimal', ('i1',), (1.0, 1.0), 1.0)
    >>> exact(inp, max_states=0).key  # the MILP fallback agrees
    (1.0, 1.0)

    References
    ----------
    Aryl (Li et al., EuroSys '22), §4 and §7.3; the DP, the MILP and their
    measured times are in docs/reclaim.md.
    """
    start = time.perf_counter()
    limit = time_limit_of(time_limit)
    found = frontier_dp(inp, max_states=max_states, max_cells=max_cells, deadline=start + limit)
    if found is not None:
        if inp.cost(found.chosen) != found.cost:
            raise SolverError(
                f"frontier DP cost {found.cost} differs from the input's {inp.cost(found.chosen)}"
            )
        count = float(len(inp.decide(found.chosen).preempted_jobs))
        return solution_of(inp, found.chosen, Status.OPTIMAL, start, bound=count)
    left = limit - (time.perf_counter() - start)
    if left <= 0:
        timed_out = ExactOutcome(Status.TIME_LIMIT, None, None, "time limit reached in the DP")
        return answer(inp, timed_out, start)
    out = solve_two_stage(inp, time_limit=left)
    return answer(inp, out, start)
