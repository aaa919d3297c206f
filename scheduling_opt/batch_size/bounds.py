"""A cheap lower bound on the ``batch-size`` optimum: the MCKP linear relaxation.

F = wait * J + idle * G - sum_j v_j(c_j) with v_j(c) = wait + idle * c - u_j(c)
for a running job (0 when it waits) and sum_j c_j <= G: a multiple-choice
knapsack over GPU counts. Taking each job's cheaper spread flag for u_j(c)
(the placement relaxed) and the LP relaxation of that knapsack (each job's
upper concave hull of (c, v_j(c)), increments taken by decreasing slope, the
last one fractionally) gives an upper bound on the value, hence a lower bound
on F. Dyer-Zemel / Sinha-Zoltners (1979); ONES §3.2.1 for the objective.
O(sum_j cap_j + n log n) for n hull segments.
"""

from __future__ import annotations

import itertools

import numpy as np

from scheduling_opt.batch_size.model import BatchSizeInput


def _hull_segments(values: list[float]) -> list[tuple[int, float]]:
    """(weight, value) increments of the upper concave hull from (0, 0), positive slopes only."""
    hull: list[tuple[int, float]] = [(0, 0.0)]
    for c, v in enumerate(values, start=1):
        while len(hull) >= 2:
            (w1, v1), (w2, v2) = hull[-2], hull[-1]
            # Drop the middle point when it lies on or below the chord.
            if (v2 - v1) * (c - w1) <= (v - v1) * (w2 - w1):
                hull.pop()
            else:
                break
        hull.append((c, v))
    out = []
    for (w1, v1), (w2, v2) in itertools.pairwise(hull):
        if v2 - v1 <= 0:
            break
        out.append((w2 - w1, v2 - v1))
    return out


def lower_bound(inp: BatchSizeInput) -> float:
    """A proven lower bound on the optimal F (placement and integrality relaxed).

    Parameters
    ----------
    inp : BatchSizeInput
        The round.

    Returns
    -------
    float
        A value no schedule of ``inp`` goes below.

    Examples
    --------
    >>> from scheduling_opt.batch_size.examples import tiny_input
    >>> from scheduling_opt.batch_size.exact import exact
    >>> inp = tiny_input()
    >>> bool(lower_bound(inp) <= exact(inp).objective)
    True

    References
    ----------
    Sinha and Zoltners, "The multiple-choice knapsack problem", Oper. Res. 27
    (1979) (the LP relaxation); ONES (Bian et al., SC 2021), §3.2.1.
    """
    segments: list[tuple[float, int, float]] = []
    for j in range(inp.n_jobs):
        cap = int(inp.max_gpus[j])
        util = inp.cost[j, 1 : cap + 1].min(axis=1) * inp.work[j]
        values = (inp.wait + inp.idle * np.arange(1, cap + 1) - util).tolist()
        segments += [(dv / dw, dw, dv) for dw, dv in _hull_segments(values)]
    segments.sort(key=lambda s: -s[0])
    room, gained = inp.n_gpus, 0.0
    for slope, dw, dv in segments:
        if room <= 0:
            break
        take = min(dw, room)
        gained += dv if take == dw else slope * take
        room -= take
    return inp.wait * inp.n_jobs + inp.idle * inp.n_gpus - gained
