"""The time grid of the Lagrangian bounds and fluid schedules that suggest their prices.

A Lagrangian bound prices GPU area per unit time with a step function
``lam`` constant on the intervals ``[t0 + k dt, t0 + (k + 1) dt)`` of a
:class:`Grid`, 0 outside it. Any prices >= 0 give a valid bound (weak
duality, docs/bounds.md), so where the prices come from is a matter of
tightness, never of validity: they start from a *fluid schedule* of the
relaxation on the grid (each interval's capacity given to the jobs in a
priority order, each job at most its area rate) and are improved by
subgradient steps.

- :func:`fluid_srpt`: shortest remaining time first; the number of jobs
  the capacity holds back in each interval suggests the price of the
  mean-JCT bound (a job that waits through an interval and runs after it
  needs the price to fall by ``1 / delta_j`` between the two);
- :func:`fluid_edf`: earliest deadline first over the SLO jobs; the reward
  it earns is the target of the wDMR bound's step sizes.

Cost: O(K x alive log alive) for K intervals.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from scheduling_opt.sim.bounds.envelope import FloatArray, Relaxation

#: Intervals of the default grid (its step is the horizon over this).
INTERVALS = 256


@dataclass(frozen=True, slots=True)
class Grid:
    """``size`` intervals of length ``step`` from ``start``.

    Examples
    --------
    >>> g = Grid(0.0, 2.0, 3)
    >>> g.end, g.lengths.tolist(), g.index(np.array([0.0, 3.9, 7.0])).tolist()
    (6.0, [2.0, 2.0, 2.0], [0, 1, 3])
    """

    start: float
    step: float
    size: int

    @property
    def end(self) -> float:
        """Where the grid ends (prices are 0 from here on)."""
        return self.start + self.step * self.size

    @property
    def lengths(self) -> FloatArray:
        """Each interval's length."""
        return np.full(self.size, self.step)

    def index(self, t: FloatArray) -> np.ndarray:
        """The interval holding each time (0 before the start, ``size`` at or after the end)."""
        k = np.floor((t - self.start) / self.step).astype(np.int64)
        return np.clip(k, 0, self.size)


def grid_for(rel: Relaxation, intervals: int = INTERVALS) -> Grid:
    """A grid over ``rel``'s busy horizon: from the first release to a generous end.

    The end: 1.25 x the span to the latest of each job's earliest end and
    the last release plus all the area at full capacity (a fluid schedule
    of the relaxation ends before it).

    Examples
    --------
    >>> from scheduling_opt.sim.bounds.envelope import Envelope, relax
    >>> from scheduling_opt.sim.cluster import ClusterSpec
    >>> from scheduling_opt.sim.workload import SimJob, Workload
    >>> w = Workload.of([SimJob("0", 0.0, 1, 10.0)], "demo")
    >>> g = grid_for(relax(w, ClusterSpec.uniform(1, 1), Envelope()), intervals=10)
    >>> g.start, g.end
    (0.0, 12.5)
    """
    if rel.jobs == 0:
        return Grid(0.0, 1.0, 1)
    start = float(rel.release.min())
    latest = max(
        float((rel.release + rel.min_time).max()),
        float(rel.release.max()) + float(rel.area.sum()) / rel.capacity,
    )
    span = max(1.25 * (latest - start), 1e-9)
    return Grid(start, span / intervals, intervals)


@dataclass(frozen=True, slots=True)
class Fluid:
    """A fluid schedule on a grid: per interval the weight held back, per job its end."""

    held: FloatArray
    end: FloatArray


def _admit(order: np.ndarray, rel: Relaxation, grid: Grid) -> list[np.ndarray]:
    """The jobs of ``order`` released in each interval (by release), as arrays."""
    k = grid.index(rel.release[order])
    bounds = np.searchsorted(k, np.arange(grid.size + 1), side="left")
    return [order[bounds[i] : bounds[i + 1]] for i in range(grid.size)]


def _serve(
    rel: Relaxation,
    alive: np.ndarray,
    rem: FloatArray,
    end: FloatArray,
    lo: float,
    hi: float,
    cap: float,
) -> tuple[np.ndarray, np.ndarray]:
    """Give ``[lo, hi)``'s capacity ``cap`` to ``alive`` in order, each at most its rate.

    Updates the work left ``rem`` and, for the jobs that finish, ``end``:
    no later than ``hi`` and no earlier than their own run at full rate or
    all the work before them at full capacity. Returns the masks (over
    ``alive``) of the jobs given less than their rate and of those done.
    """
    want = np.minimum(rem[alive], rel.rate[alive] * (hi - np.maximum(rel.release[alive], lo)))
    before = np.cumsum(want) - want
    give = np.clip(cap - before, 0.0, want)
    had = rem[alive].copy()
    rem[alive] -= give
    short = give < want * (1.0 - 1e-12)
    done = rem[alive] <= 1e-9 * np.maximum(rel.area[alive], 1.0)
    first = np.maximum(rel.release[alive[done]], lo)
    soonest = np.maximum(
        had[done] / rel.rate[alive[done]], (before[done] + had[done]) / rel.capacity
    )
    end[alive[done]] = np.minimum(hi, first + soonest)
    return short, done


def fluid_srpt(rel: Relaxation, grid: Grid) -> Fluid:
    """Capped shortest-remaining-time-first on the grid (each job at most its area rate).

    ``held[k]``: the weight of the jobs given less than their rate in
    interval k; ``end[j]``: an estimate of job j's end inside the interval
    in which it finishes (its run at full rate, or the work ahead of it at
    full capacity, whichever is later; the grid's end plus the rest at
    full rate for a job unfinished there).

    Examples
    --------
    >>> from scheduling_opt.sim.bounds.envelope import Envelope, relax
    >>> from scheduling_opt.sim.cluster import ClusterSpec
    >>> from scheduling_opt.sim.workload import SimJob, Workload
    >>> w = Workload.of([SimJob("0", 0.0, 1, 4.0), SimJob("1", 0.0, 1, 2.0)], "demo")
    >>> rel = relax(w, ClusterSpec.uniform(1, 1), Envelope())
    >>> f = fluid_srpt(rel, Grid(0.0, 1.0, 8))
    >>> f.end.tolist(), f.held.tolist()[:3]
    ([6.0, 2.0], [1.0, 1.0, 0.0])
    >>> fluid_srpt(rel, Grid(0.0, 4.0, 2)).end.tolist()
    [6.0, 2.0]
    """
    order = np.argsort(rel.release, kind="stable")
    arrivals = _admit(order, rel, grid)
    rem = rel.area.astype(np.float64).copy()
    end = np.full(rel.jobs, np.nan)
    held = np.zeros(grid.size)
    alive = np.zeros(0, dtype=np.int64)
    cap = rel.capacity * grid.step
    for k in range(grid.size):
        if arrivals[k].size:
            alive = np.concatenate([alive, arrivals[k]])
        if alive.size == 0:
            continue
        lo = grid.start + k * grid.step
        hi = lo + grid.step
        alive = alive[np.argsort(rem[alive] / rel.rate[alive], kind="stable")]
        short, done = _serve(rel, alive, rem, end, lo, hi, cap)
        held[k] = float(rel.weight[alive[short]].sum())
        alive = alive[~done]
    if alive.size:
        end[alive] = grid.end + rem[alive] / rel.rate[alive]
    return Fluid(held, end)


def fluid_edf(rel: Relaxation, grid: Grid) -> float:
    """The reward an earliest-deadline-first fluid schedule of the counted SLO jobs earns.

    Each interval's capacity goes to the released, unfinished SLO jobs in
    order of their first deadline, each at most its area rate (a job's end
    inside an interval estimated as :func:`fluid_srpt` does). Best-effort
    and uncounted jobs take no capacity (the wDMR bound's relaxation).

    Examples
    --------
    >>> from scheduling_opt.sim.bounds.envelope import Envelope, relax
    >>> from scheduling_opt.sim.cluster import ClusterSpec
    >>> from scheduling_opt.sim.workload import SimJob, Workload
    >>> jobs = [SimJob(str(i), 0.0, 1, 2.0, deadlines=((2.0, 100.0),), job_type="strict")
    ...         for i in range(2)]
    >>> rel = relax(Workload.of(jobs, "demo"), ClusterSpec.uniform(1, 1), Envelope())
    >>> fluid_edf(rel, Grid(0.0, 1.0, 8))  # one meets its deadline, the other earns 1
    101.0
    """
    slo = np.array([i for i, s in enumerate(rel.steps) if s and rel.weight[i] > 0], dtype=np.int64)
    if slo.size == 0:
        return 0.0
    first = np.array([rel.steps[i][0][0] for i in slo])
    order = slo[np.argsort(first, kind="stable")]
    order = order[np.argsort(rel.release[order], kind="stable")]
    arrivals = _admit(order, rel, grid)
    rem = rel.area.astype(np.float64).copy()
    end = np.full(rel.jobs, math.inf)
    deadline = np.full(rel.jobs, math.inf)
    deadline[slo] = [rel.steps[i][0][0] for i in slo]
    alive = np.zeros(0, dtype=np.int64)
    cap = rel.capacity * grid.step
    for k in range(grid.size):
        if arrivals[k].size:
            alive = np.concatenate([alive, arrivals[k]])
        if alive.size == 0:
            continue
        lo = grid.start + k * grid.step
        hi = lo + grid.step
        alive = alive[np.argsort(deadline[alive], kind="stable")]
        _, done = _serve(rel, alive, rem, end, lo, hi, cap)
        alive = alive[~done]
    total = 0.0
    for i in slo:
        reward = 1.0
        for t, v in rel.steps[i]:
            if end[i] <= t:
                reward = v
                break
        total += reward
    return total
