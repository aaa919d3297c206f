"""``aryl-plus`` (ours): Algorithm 1 with real tie-breaking, swap search and annealing.

Three greedy starts (Aryl's Algorithm 1 and two tie-aware variants), each
improved by an exact-delta 1-1 swap search, then seeded simulated annealing
over swaps (Aryl §4's objective, lexicographic). Never worse than ``aryl``.
Complexity: O(n d^2) per swap pass, O(d) per annealing proposal, with
max(150 n, 30,000) proposals (n on-loan servers).
"""

from __future__ import annotations

import time

from scheduling_opt.reclaim._greedy import Greedy, run_greedy
from scheduling_opt.reclaim.aryl import aryl_order
from scheduling_opt.reclaim.bounds import lower_bound
from scheduling_opt.reclaim.local_search import ANNEAL_BUDGET, ANNEAL_STEPS, anneal, swap_search
from scheduling_opt.reclaim.model import ReclaimDecision, ReclaimInput, solution_of
from scheduling_opt.solution import Seed, Solution, Status, as_rng, named, time_limit_of


def _plus_key(state: Greedy, s: int) -> tuple[int, ...]:
    # Algorithm 1's amortised cost stays the primary key; its ties are broken
    # by the true objective change of the pick, then by how much cost the
    # pick removes from the other servers (a preempted job makes its other
    # servers cheaper: prefer picks that open the most such free returns).
    return (state.cost[s], state.delta(s), -state.drop(s), s)


def _delta_key(state: Greedy, s: int) -> tuple[int, ...]:
    # Myopic variant: the true objective change first, amortised cost second.
    return (state.delta(s), state.cost[s], -state.drop(s), s)


@named("aryl-plus")
def aryl_plus(
    inp: ReclaimInput, *, seed: Seed = None, time_limit: float | None = None
) -> Solution[ReclaimDecision]:
    """Ours: Algorithm 1 with real tie-breaking, swap local search, annealing.

    Three starts: Algorithm 1's answer; the same greedy with ties on the
    amortised cost broken by the true objective change, then by the cost
    drop the pick causes on other servers; and a greedy on the true change
    first. Each is improved by best-improvement 1-1 swaps under the
    lexicographic objective and the best kept (ties: aryl's); then seeded
    simulated annealing over swaps
    (:func:`~scheduling_opt.reclaim.local_search.anneal`) and a last swap
    search. Every phase only replaces the incumbent by a strictly better
    set, and the first incumbent is aryl's answer: never worse than ``aryl``.

    Parameters
    ----------
    inp : ReclaimInput
        The servers, jobs, placement and N_R.
    seed : int, numpy Generator or None
        The annealing's randomness (None: seed 0); same seed, same answer.
    time_limit : float or None
        Annealing stops at this wall time (None: the library default) and
        the best set so far is returned; the work budget ends it long
        before on the benchmark sizes (0.3 s at 500 servers).

    Returns
    -------
    Solution[ReclaimDecision]
        ``feasible``; ``objective`` = preempted jobs, ``key`` = (preempted,
        collateral GPUs), ``bound`` = :func:`~scheduling_opt.reclaim.lower_bound`
        (the LP relaxation: a tenth of the run's time).

    Raises
    ------
    TypeError, ValueError
        If ``seed`` is not an int >= 0, a Generator or None, or
        ``time_limit`` is not a positive number of seconds.

    Examples
    --------
    >>> from scheduling_opt.model import Cluster, GpuType, Job, Placement, PlacementRow, Server
    >>> servers = tuple(Server(f"i{k}", "T4", 8, "inference", True) for k in (1, 2, 3))
    >>> rows = [PlacementRow("a", "i1", 1), PlacementRow("a", "i2", 1)]
    >>> rows += [PlacementRow("b", "i3", 1)]
    >>> jobs = (Job("a", 2, 2, 60.0), Job("b", 1, 1, 60.0))
    >>> inp = ReclaimInput(Cluster((GpuType("T4"),), servers), jobs, Placement(tuple(rows)), 2)
    >>> sol = aryl_plus(inp, seed=1)
    >>> sorted(sol.decision.servers), sol.key, sol.bound
    (['i1', 'i2'], (1.0, 0.0), 1.0)

    References
    ----------
    Aryl (Li et al., EuroSys '22), §4 and Appendix B (the starting point);
    the improvements and their measured gaps are in docs/reclaim.md.
    """
    start = time.perf_counter()
    rng = as_rng(seed)
    limit = time_limit_of(time_limit)
    deadline = start + limit
    # The LP bound costs about a tenth of the search (35 ms of 330 at 500
    # servers) and is far tighter than the fraction bound.
    bound = lower_bound(inp, time_limit=limit)
    if inp.n_reclaim in (0, 1) or inp.n_reclaim == inp.n_servers:
        return solution_of(inp, aryl_order(inp), Status.FEASIBLE, start, bound=bound)
    starts = [aryl_order(inp), run_greedy(inp, _plus_key), run_greedy(inp, _delta_key)]
    improved = [swap_search(inp, s) for s in starts]
    # min() keeps the first of equal costs: aryl's own answer wins ties.
    best = min(improved, key=inp.cost)
    best_cost = inp.cost(best)
    # A fixed budget of proposals: small instances get several independent
    # runs (restarts beat one longer run there), large ones one run.
    runs = max(1, -(-ANNEAL_BUDGET // (ANNEAL_STEPS * inp.n_servers)))
    finished = True
    for _ in range(runs):
        annealed, finished = anneal(inp, best, rng, deadline=deadline)
        annealed = swap_search(inp, annealed)
        cost = inp.cost(annealed)
        if cost < best_cost:
            best, best_cost = annealed, cost
        if not finished:
            break
    message = "" if finished else "time limit reached: annealing stopped early"
    return solution_of(inp, best, Status.FEASIBLE, start, bound=bound, message=message)
