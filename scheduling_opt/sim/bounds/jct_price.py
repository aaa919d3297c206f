"""One job's best answer to a price of GPU area: the inner problem of the mean-JCT Lagrangian.

Given prices ``lam`` (GPU area per unit time, a step function on a
:class:`~scheduling_opt.sim.bounds.grid.Grid`, 0 outside it), job j of
release ``r``, shortest run ``L = p_j / delta_j`` and price weight ``c =
delta_j / weight_j`` solves, exactly and in continuous time,

    f_j(lam) = min over C >= r + L of  (C - r) + c x cheapest(lam, [r, C], L),

where ``cheapest`` is the least integral of ``lam`` over a subset of
``[r, C]`` of measure ``L`` (the job runs at its full area rate
``delta_j`` on the cheapest time before it ends: at a fixed end, a rate
below the cap never costs less). For a fixed C the cheapest subset is a
fractional knapsack; as C grows through an interval of price ``q`` the
derivative of the objective is ``1 - c (top - q)`` with ``top`` the most
expensive time still used, which only falls, so the objective is convex
inside each interval and its minimum there is where ``top`` reaches
``q + 1/c`` or at the interval's end. :func:`best_end` sweeps the
intervals once with a max-heap of the time in use, in which any time
cheaper than the dearest in use replaces it (the cheapest time of ``[r,
C]``, whether or not the objective falls there: a later end needs it),
evaluates the objective at every breakpoint, and stops when no later time
can pay (``c (top - min later price) <= 1``, with the grid's end counted:
time after it costs nothing) or when ``C - r`` alone exceeds the best
value found. Cost: O(V log V) for the V intervals it visits.

The vectorized paths of :mod:`scheduling_opt.sim.bounds.jct` handle the
jobs for which ``C = r + L`` is provably optimal; this module the others.
"""

from __future__ import annotations

import heapq

from scheduling_opt.sim.bounds.grid import Grid


def best_end(
    r: float,
    need: float,
    c: float,
    lam: list[float],
    later_min: list[float],
    grid: Grid,
) -> tuple[float, float]:
    """``(f_j, C_j)``: the job's least value and an end that reaches it.

    ``lam``: the prices as a list; ``later_min[k]``: the least price of
    intervals ``k..K-1`` (``later_min[K]`` = inf). Times after the grid cost
    nothing.

    Examples
    --------
    A job of 2 units released at 0, prices 5 for [0, 2) and 0 after: waiting
    costs 2 units of time, running at once 2 x c x 5.

    >>> g = Grid(0.0, 1.0, 4)
    >>> best_end(0.0, 2.0, 1.0, [5.0, 5.0, 0.0, 0.0], [0.0, 0.0, 0.0, 0.0, float("inf")], g)
    (4.0, 4.0)
    >>> best_end(0.0, 2.0, 0.1, [5.0, 5.0, 0.0, 0.0], [0.0, 0.0, 0.0, 0.0, float("inf")], g)
    (3.0, 2.0)
    """
    size, start, step = grid.size, grid.start, grid.step
    end_of_grid = grid.end
    pop, push, replace = heapq.heappop, heapq.heappush, heapq.heapreplace
    k = int((r - start) // step) if r > start else 0
    t = r
    left = need
    cost = 0.0
    used: list[tuple[float, float]] = []  # (-price, length): a max-heap by price
    while left > 0.0 and k < size:
        hi = start + (k + 1) * step
        seg = hi - t if hi - t < left else left
        if seg > 0.0:
            q = lam[k]
            used.append((-q, seg))
            cost += q * seg
            left -= seg
            t += seg
        if left > 0.0 or t >= hi:
            k += 1
    if left > 0.0:
        t += left  # the rest after the grid, free
    best = t - r + c * cost
    best_c = t
    heapq.heapify(used)
    while used:
        top = -used[0][0]
        if k < size:
            if c * (top - later_min[k]) <= 1.0 and r + best <= end_of_grid:
                break
            if t - r >= best:
                break
            q = lam[k]
            room = start + (k + 1) * step - t
        else:
            if c * top <= 1.0:
                break
            q = 0.0
            room = float("inf")
        taken = 0.0
        # Time cheaper than the dearest in use always replaces it, whether or not
        # the objective falls now: [r, C]'s cheapest time must stay in use, or a
        # later end would be priced without it (and f overestimated).
        while room > 0.0 and used:
            neg, length = used[0]
            top = -neg
            if top <= q or (k >= size and c * top <= 1.0):
                break
            if length > room:
                take = room
                replace(used, (neg, length - take))
            else:
                take = length
                pop(used)
            cost -= (top - q) * take
            room -= take
            taken += take
            t += take
            value = t - r + c * cost
            if value < best:
                best, best_c = value, t
        if taken > 0.0:
            # time of price q is never replaced inside its own interval
            push(used, (-q, taken))
        if k >= size:
            break
        t = start + (k + 1) * step
        k += 1
    return best, best_c


def selection(
    r: float, end: float, need: float, lam: list[float], grid: Grid, out: list[float], scale: float
) -> None:
    """Add ``scale x`` the cheapest ``need`` of time in ``[r, end]`` to ``out`` per grid interval.

    Ties go to the earlier interval; time after the grid (free) is taken
    first and not added. Pure Python: the windows are short and numpy's
    per-call cost dominated.

    Examples
    --------
    >>> out = [0.0] * 4
    >>> selection(0.0, 4.0, 2.0, [5.0, 1.0, 3.0, 1.0], Grid(0.0, 1.0, 4), out, 2.0)
    >>> out
    [0.0, 2.0, 0.0, 2.0]
    """
    start, step, size = grid.start, grid.step, grid.size
    end_of_grid = start + step * size
    after = end - (r if r > end_of_grid else end_of_grid)
    left = need - after if after > 0.0 else need
    if left <= 0.0:
        return
    k0 = int((r - start) // step)
    if k0 < 0:
        k0 = 0
    k1 = int((end - start) // step)
    if k1 > size - 1:
        k1 = size - 1
    pieces = []
    for k in range(k0, k1 + 1):
        lo = start + k * step
        hi = lo + step
        length = (end if end < hi else hi) - (r if r > lo else lo)
        if length > 0.0:
            pieces.append((lam[k], k, length))
    pieces.sort()
    for _, k, length in pieces:
        take = length if length < left else left
        out[k] += scale * take
        left -= take
        if left <= 0.0:
            break
