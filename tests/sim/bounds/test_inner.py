"""The Lagrangians' inner problems against brute force (a value too high would break the bound).

The mean-JCT Lagrangian needs, per job, the least ``(C - r) + c x
cheapest(lam, [r, C], L)`` over every end C; a value above that least one
could make the bound exceed the optimum. The brute force here tries a fine
grid of ends, each with the cheapest time found by sorting the pieces of
``[r, C]``: every value it finds is reached by some end, so the sweep's
value must be at most the least of them (and within the grid's resolution
of it). The wDMR's window costs are checked the same way.
"""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from scheduling_opt.sim import ClusterSpec, SimJob, Workload
from scheduling_opt.sim.bounds import envelope_of, relax
from scheduling_opt.sim.bounds.deadlines import _Windows, evaluate
from scheduling_opt.sim.bounds.grid import Grid
from scheduling_opt.sim.bounds.jct_price import best_end


def cheapest(lam: list[float], grid: Grid, a: float, b: float, need: float) -> float:
    """The least integral of the prices over a measure-``need`` subset of ``[a, b]``."""
    pieces = []
    for k in range(grid.size):
        lo, hi = grid.start + k * grid.step, grid.start + (k + 1) * grid.step
        length = min(hi, b) - max(lo, a)
        if length > 0:
            pieces.append((lam[k], length))
    free = max(0.0, b - max(a, grid.end))
    if free > 0:
        pieces.append((0.0, free))
    cost, left = 0.0, need
    for price, length in sorted(pieces):
        take = min(length, left)
        cost += price * take
        left -= take
    assert left <= 1e-9, "window shorter than the need"
    return cost


@settings(max_examples=80, deadline=None)
@given(
    st.lists(st.integers(0, 6), min_size=1, max_size=8),
    st.floats(0.0, 3.0),
    st.floats(0.1, 4.0),
    st.sampled_from((0.1, 0.5, 1.0, 3.0)),
)
def test_the_sweep_finds_the_least_value_over_every_end(
    prices: list[int], r: float, need: float, c: float
) -> None:
    grid = Grid(0.0, 1.0, len(prices))
    lam = [float(p) for p in prices]
    later = [min(lam[k:]) for k in range(len(lam))] + [float("inf")]
    value, end = best_end(r, need, c, [*lam, 0.0], later, grid)
    # the end it reports reaches its value
    assert abs(value - (end - r + c * cheapest(lam, grid, r, end, need))) < 1e-9
    step = 1e-2
    horizon = r + need + grid.end + 1.0 + need  # past it only free time, no gain
    ends = np.arange(r + need, horizon, step)
    brute = min(e - r + c * cheapest(lam, grid, r, float(e), need) for e in ends)
    slope = 1.0 + c * max(lam)
    assert value <= brute + 1e-9
    assert value >= brute - slope * step - 1e-9


@settings(max_examples=40, deadline=None)
@given(
    st.lists(st.integers(0, 6), min_size=2, max_size=6),
    st.lists(
        st.tuples(st.integers(0, 4), st.integers(1, 3), st.integers(0, 4)), min_size=1, max_size=4
    ),
)
def test_the_window_costs_are_the_cheapest_time(
    prices: list[int], shapes: list[tuple[int, int, int]]
) -> None:
    jobs = [
        SimJob(str(i), float(s), 1, float(w), deadlines=((float(s + w + x), 100.0),))
        for i, (s, w, x) in enumerate(shapes)
    ]
    rel = relax(Workload.of(jobs, "w"), ClusterSpec.uniform(1, 1), envelope_of([("srtf", {})]))
    grid = Grid(float(rel.release.min()), 1.0, len(prices))
    lam = np.array(prices, dtype=float)
    wins = _Windows(rel, grid)
    got = evaluate(wins, lam, rel.capacity, grid).value
    expect = rel.capacity * float(lam.sum())
    for i, job in enumerate(rel.steps):
        (d, v), a, need = job[0], rel.release[i], rel.min_time[i]
        expect += max(1.0, v - rel.rate[i] * cheapest(list(lam), grid, a, d, need))
    assert abs(got - expect) < 1e-9
