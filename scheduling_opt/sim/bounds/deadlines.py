"""A lower bound on the wDMR: an upper bound on the SLO jobs' reward, by Lagrangian relaxation.

wDMR (``summarize``, :func:`scheduling_opt.metrics.wdmr`) is the mean over
the counted SLO jobs of ``(100 - RW_j) / 99``, with ``RW_j`` the reward of
the first deadline step the job's end meets, clamped to [1, 100] (1 when
it meets none). An upper bound U on the sum of rewards gives
``wDMR >= (100 N - U) / (99 N)``.

The relaxation (docs/bounds.md): the pooled machine of capacity Theta,
the counted SLO jobs only (best-effort and uncounted jobs can wait: they
do not enter the wDMR), and each job either *meets* a step l, processing
its whole area p_j inside ``[r_j, d_jl]`` at a rate of at most delta_j
and earning ``v_jl``, or meets none, earning 1 and taking no capacity
(its processing dropped). A covered run's job that ends at C with its
first met step l is the first case for l (its processing fits ``[r_j,
C]``), otherwise the second: the relaxation's best reward is at least
every covered run's.

Pricing each grid interval's capacity with ``lam_k >= 0`` gives, for any
prices (weak duality),

    U(lam) = Theta sum_k lam_k |I_k| + sum_j max(1, max_l v_jl - delta_j cheapest(lam, [r_j, d_jl], L_j)),

with ``L_j = p_j / delta_j`` and ``cheapest`` the least integral of lam
over a subset of the window of measure L_j (a step whose window is
shorter than L_j is out of reach). Each window is computed exactly in
continuous time (partial intervals at both ends, time after the grid
free). :func:`wdmr_bound` starts at ``lam = 0`` (each job's best
reachable step: the reachability bound) and takes Polyak subgradient
steps towards the reward of a fluid EDF schedule; the least U seen is the
bound. Cost per evaluation: O(W log W) for W grid cells in the windows,
vectorized by window width.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np

from scheduling_opt.metrics import RW_MAX, RW_MIN
from scheduling_opt.sim.bounds.envelope import FloatArray, Relaxation
from scheduling_opt.sim.bounds.grid import Grid, fluid_edf, grid_for

#: Subgradient steps (the default budget).
STEPS = 40
#: Polyak's step factor (0 < mu < 2).
MU = 1.0


class _Windows:
    """Every (job, step) window of the counted SLO jobs, bucketed by width in grid cells."""

    def __init__(self, rel: Relaxation, grid: Grid) -> None:
        job: list[int] = []
        deadline: list[float] = []
        value: list[float] = []
        need = rel.min_time
        for i, steps in enumerate(rel.steps):
            if not steps or rel.weight[i] <= 0:
                continue
            for d, v in steps:
                if d - rel.release[i] >= need[i]:
                    job.append(i)
                    deadline.append(d)
                    value.append(v)
        self.size = rel.jobs
        self.slo = np.array(
            [i for i, s in enumerate(rel.steps) if s and rel.weight[i] > 0], dtype=np.int64
        )
        self.job = np.array(job, dtype=np.int64)
        self.value = np.array(value, dtype=np.float64)
        self.rate = rel.rate[self.job]
        a = rel.release[self.job]
        b = np.array(deadline, dtype=np.float64)
        free = np.maximum(0.0, b - np.maximum(a, grid.end))
        self.left = need[self.job] - free  # the time to find on the grid
        b_in = np.minimum(b, grid.end)
        k0 = grid.index(a)
        k1 = np.minimum(
            grid.index(np.maximum(b_in - 1e-12 * np.maximum(np.abs(b_in), 1.0), a)), grid.size - 1
        )
        width = np.maximum(k1 - k0 + 1, 1)
        self.buckets: list[tuple[np.ndarray, np.ndarray, FloatArray]] = []
        level = np.ceil(np.log2(width)).astype(np.int64)
        on_grid = self.left > 0
        for lv in np.unique(level[on_grid]):
            rows = np.flatnonzero(on_grid & (level == lv))
            cols = 1 << int(lv)
            idx = k0[rows, None] + np.arange(cols)[None, :]
            lo = np.maximum(grid.start + idx * grid.step, a[rows, None])
            hi = np.minimum(grid.start + (idx + 1) * grid.step, b_in[rows, None])
            length = np.where(idx <= k1[rows, None], np.maximum(hi - lo, 0.0), 0.0)
            self.buckets.append((rows, np.minimum(idx, grid.size - 1), length))


@dataclass(frozen=True, slots=True)
class Reward:
    """Evaluated prices: the reward bound U (a sum) and its subgradient (capacity minus use)."""

    value: float
    gradient: FloatArray


def evaluate(wins: _Windows, lam: FloatArray, capacity: float, grid: Grid) -> Reward:
    """``U(lam)`` and a subgradient of it."""
    n = wins.job.size
    cost = np.zeros(n)
    takes: list[tuple[np.ndarray, np.ndarray, FloatArray]] = []
    for rows, idx, length in wins.buckets:
        price = np.where(length > 0, lam[idx], np.inf)
        order = np.argsort(price, axis=1, kind="stable")
        sorted_len = np.take_along_axis(length, order, axis=1)
        before = np.cumsum(sorted_len, axis=1) - sorted_len
        take = np.clip(wins.left[rows, None] - before, 0.0, sorted_len)
        sorted_price = np.take_along_axis(price, order, axis=1)
        cost[rows] = (np.where(take > 0, sorted_price, 0.0) * take).sum(axis=1)
        takes.append((rows, np.take_along_axis(idx, order, axis=1), take))
    gain = wins.value - wins.rate * cost
    # each job's best step: the largest gain among its windows, at least RW_MIN (meet none)
    best = np.full(wins.size, RW_MIN)
    np.maximum.at(best, wins.job, gain)
    chosen = np.zeros(n, dtype=bool)
    if n:
        top = best[wins.job]
        hit = (gain >= top) & (gain > RW_MIN)
        # one window per job: the first of the ties
        first = np.full(best.size, n)
        np.minimum.at(first, wins.job[hit], np.flatnonzero(hit))
        chosen[first[first < n]] = True
    total = float(best[wins.slo].sum()) if wins.slo.size else 0.0
    usage = np.zeros(grid.size)
    for rows, idx, take in takes:
        pick = chosen[rows]
        if pick.any():
            np.add.at(usage, idx[pick].ravel(), (take[pick] * wins.rate[rows[pick], None]).ravel())
    value = total + capacity * grid.step * float(lam.sum())
    return Reward(value, capacity * grid.step - usage)


@dataclass(frozen=True, slots=True)
class WdmrResult:
    """The wDMR bound, the reachability bound (prices 0), evaluations and seconds."""

    value: float
    reachability: float
    evaluations: int
    seconds: float


def _as_wdmr(reward: float, jobs: int) -> float:
    if jobs == 0:
        return 0.0
    span = RW_MAX - RW_MIN
    return max(0.0, (RW_MAX * jobs - reward) / (span * jobs))


def wdmr_bound(
    rel: Relaxation,
    *,
    grid: Grid | None = None,
    steps: int = STEPS,
    time_limit: float | None = None,
) -> WdmrResult:
    """The wDMR lower bound: the least ``U(lam)`` over the prices tried, as a wDMR.

    Parameters
    ----------
    rel : Relaxation
        The workload's relaxation (its deadline steps, rewards clamped).
    grid : Grid, optional
        The prices' grid (default :func:`~scheduling_opt.sim.bounds.grid.grid_for`).
    steps : int
        Subgradient steps (a deterministic budget).
    time_limit : float, optional
        Seconds after which no new evaluation starts (the value stays a bound).

    Returns
    -------
    WdmrResult

    Examples
    --------
    Two strict jobs of 2 minutes on one GPU, both due at 2: one must miss.

    >>> from scheduling_opt.sim.bounds.envelope import Envelope, relax
    >>> from scheduling_opt.sim.cluster import ClusterSpec
    >>> from scheduling_opt.sim.workload import SimJob, Workload
    >>> jobs = [SimJob(str(i), 0.0, 1, 2.0, deadlines=((2.0, 100.0),), job_type="strict")
    ...         for i in range(2)]
    >>> res = wdmr_bound(relax(Workload.of(jobs, "demo"), ClusterSpec.uniform(1, 1), Envelope()))
    >>> res.reachability, 0.0 < res.value <= 0.5
    (0.0, True)
    """
    started = time.perf_counter()
    slo = sum(1 for i, s in enumerate(rel.steps) if s and rel.weight[i] > 0)
    if slo == 0:
        return WdmrResult(0.0, 0.0, 0, 0.0)
    grid = grid or grid_for(rel)
    wins = _Windows(rel, grid)
    if wins.job.size == 0:  # no step within reach of any job
        return WdmrResult(1.0, 1.0, 0, time.perf_counter() - started)
    target = fluid_edf(rel, grid)
    lam = np.zeros(grid.size)
    got = evaluate(wins, lam, rel.capacity, grid)
    reach = got.value
    best = got.value
    evaluations = 1
    for _ in range(steps):
        if time_limit is not None and time.perf_counter() - started > time_limit:
            break
        norm = float(got.gradient @ got.gradient)
        if norm <= 0.0 or got.value <= target:
            break
        lam = np.maximum(0.0, lam - MU * (got.value - target) / norm * got.gradient)
        got = evaluate(wins, lam, rel.capacity, grid)
        evaluations += 1
        best = min(best, got.value)
    return WdmrResult(
        _as_wdmr(best, slo), _as_wdmr(reach, slo), evaluations, time.perf_counter() - started
    )
