"""The ``greedy`` method: ONES' fill phase alone, from an empty cluster (Figure 7).

Each idle GPU goes to the job whose F drops most (a waiting job first, else
the smallest utilization increase), on a server the job already uses if
possible; GPUs whose release lowers F are freed again (only when the user's
penalties make idle GPUs pay); then the best of the schedule as is, reordered
(Figure 10) and repacked best-fit. ONES §3.2.2. O(G) fill rounds of
O(G + J) numpy work plus one O(J * servers) repack.
"""

from __future__ import annotations

import time

from scheduling_opt.batch_size.bounds import lower_bound
from scheduling_opt.batch_size.evaluate import solution_of
from scheduling_opt.batch_size.model import BatchSizeInput, Schedule
from scheduling_opt.batch_size.operators import greedy_genes
from scheduling_opt.solution import Seed, Solution, Status, named, time_limit_of


@named("greedy")
def greedy(
    inp: BatchSizeInput, *, seed: Seed = None, time_limit: float | None = None
) -> Solution[Schedule]:
    """Greedy fill by utilization gain, then the best of as-is, reorder and pack.

    Parameters
    ----------
    inp : BatchSizeInput
        The round.
    seed : int, numpy.random.Generator or None
        Unused (deterministic); accepted for the common convention.
    time_limit : float or None
        Seconds (None: the library default). The fill is bounded by O(G)
        rounds; if the limit strikes first it stops there (the schedule stays
        valid, with more idle GPUs) and the message says so.

    Returns
    -------
    Solution of Schedule
        ``feasible``, F, and the relaxation bound
        (:func:`~scheduling_opt.batch_size.bounds.lower_bound`).

    Examples
    --------
    >>> from scheduling_opt.batch_size.examples import tiny_input
    >>> sol = greedy(tiny_input())  # job b's one-GPU step looks costlier than a's: (3, 1)
    >>> sol.status.value, sol.decision.gpus, sol.bound <= sol.objective
    ('feasible', (3, 1), True)

    References
    ----------
    ONES (Bian et al., SC 2021), §3.2.2, Figures 7 and 10.
    """
    start = time.perf_counter()
    deadline = start + time_limit_of(time_limit)
    genes = greedy_genes(inp, deadline)
    late = time.perf_counter() > deadline
    message = "time limit: the fill stopped early" if late else ""
    sol = solution_of(inp, genes, Status.FEASIBLE, start, message=message)
    assert sol.objective is not None
    return sol.with_(bound=min(lower_bound(inp), sol.objective))
