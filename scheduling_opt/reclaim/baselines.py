"""The baselines of Aryl §7.3: smallest job count first (``scf``) and ``random``.

``scf`` returns the N_R on-loan servers running the fewest jobs (the static
0-1 knapsack view of §4), O(n log n); ``random`` draws N_R of them uniformly
without replacement, O(n).
"""

from __future__ import annotations

import time

from scheduling_opt.reclaim.bounds import fraction_bound
from scheduling_opt.reclaim.model import ReclaimDecision, ReclaimInput, solution_of
from scheduling_opt.solution import Seed, Solution, Status, as_rng, named, time_limit_of


@named("scf")
def scf(
    inp: ReclaimInput, *, seed: Seed = None, time_limit: float | None = None
) -> Solution[ReclaimDecision]:
    """Smallest job count first (§7.3 baseline): fewest running jobs, then file order.

    Parameters
    ----------
    inp : ReclaimInput
        The servers, jobs, placement and N_R.
    seed : int, numpy Generator or None
        Unused (deterministic); accepted for the calling convention.
    time_limit : float or None
        Unused (O(n log n) work); accepted for the calling convention.

    Returns
    -------
    Solution[ReclaimDecision]
        ``feasible``, with ``bound`` = :func:`~scheduling_opt.reclaim.fraction_bound`.

    Raises
    ------
    ValueError
        If ``time_limit`` is not a positive number of seconds.

    Examples
    --------
    >>> from scheduling_opt.model import Cluster, GpuType, Job, Placement, PlacementRow, Server
    >>> servers = tuple(Server(f"i{k}", "T4", 8, "inference", True) for k in (1, 2))
    >>> rows = (PlacementRow("a", "i1", 1), PlacementRow("b", "i1", 1), PlacementRow("c", "i2", 1))
    >>> jobs = tuple(Job(name, 1, 1, 60.0) for name in "abc")
    >>> inp = ReclaimInput(Cluster((GpuType("T4"),), servers), jobs, Placement(rows), 1)
    >>> scf(inp).decision.servers
    ('i2',)

    References
    ----------
    Aryl (Li et al., EuroSys '22), §7.3 (baselines) and §4 (the knapsack view).
    """
    start = time.perf_counter()
    time_limit_of(time_limit)
    order = sorted(range(inp.n_servers), key=lambda s: (len(inp.server_jobs[s]), s))
    chosen = order[: inp.n_reclaim]
    return solution_of(inp, chosen, Status.FEASIBLE, start, bound=float(fraction_bound(inp)))


@named("random")
def random_servers(
    inp: ReclaimInput, *, seed: Seed = None, time_limit: float | None = None
) -> Solution[ReclaimDecision]:
    """N_R on-loan servers drawn uniformly without replacement (§7.3 baseline).

    The ``random`` method (named ``random_servers`` so that it does not
    shadow the standard library's module in a caller's namespace).

    Parameters
    ----------
    inp : ReclaimInput
        The servers, jobs, placement and N_R.
    seed : int, numpy Generator or None
        The draw's randomness (None: seed 0); same seed, same servers.
    time_limit : float or None
        Unused (O(n) work); accepted for the calling convention.

    Returns
    -------
    Solution[ReclaimDecision]
        ``feasible``, servers in file order, ``bound`` =
        :func:`~scheduling_opt.reclaim.fraction_bound`.

    Raises
    ------
    TypeError, ValueError
        If ``seed`` is not an int >= 0, a Generator or None, or
        ``time_limit`` is not a positive number of seconds.

    Examples
    --------
    >>> from scheduling_opt.model import Cluster, GpuType, Placement, Server
    >>> servers = tuple(Server(f"i{k}", "T4", 8, "inference", True) for k in range(5))
    >>> inp = ReclaimInput(Cluster((GpuType("T4"),), servers), (), Placement(), 2)
    >>> random_servers(inp, seed=7).decision == random_servers(inp, seed=7).decision
    True

    References
    ----------
    Aryl (Li et al., EuroSys '22), §7.3.
    """
    start = time.perf_counter()
    rng = as_rng(seed)
    time_limit_of(time_limit)
    chosen = sorted(int(s) for s in rng.choice(inp.n_servers, inp.n_reclaim, replace=False))
    return solution_of(inp, chosen, Status.FEASIBLE, start, bound=float(fraction_bound(inp)))
