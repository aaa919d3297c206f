"""Lower bounds on the mean JCT: each job's shortest run, pooled SRPT, and a Lagrangian.

The relaxation (docs/bounds.md, "The relaxation"): one pooled machine of
capacity Theta (GPU area per unit time); job j, released at r_j, needs
area p_j at a rate of at most delta_j. Every covered simulator schedule
maps to one of its schedules with the same or earlier completion times,
so the least mean of ``C_j - r_j`` over the counted jobs (weight 1) of
the relaxation is at most every covered run's ``jct_mean``. Three lower
bounds on that least mean:

- :func:`duration_bound` (``shortest run``): ``C_j >= r_j + p_j / delta_j``
  for every job; O(n).
- :func:`srpt_bound` (``pooled SRPT``): drop the rate caps; one machine of
  speed Theta, where preemptive shortest-remaining-processing-time is
  optimal for the sum of completion times with release dates (Schrage
  1968; the exchange argument in docs/bounds.md); the uncounted jobs are
  dropped first (fewer jobs: the sum over the counted ones cannot grow).
  O(n log n).
- :func:`lagrangian_bound` (``Lagrangian``): move the capacity constraint
  of each grid interval into the objective with a price ``lam_k >= 0``;
  ``L(lam) = sum_j w_j f_j(lam) - Theta sum_k lam_k |I_k|`` is a lower
  bound for *any* prices (weak duality), computed exactly per job in
  continuous time (:mod:`~scheduling_opt.sim.bounds.jct_price`). ``lam
  = 0`` gives the shortest-run bound. Prices start from a fluid SRPT
  schedule's held-back jobs, scaled by the best of a few factors, and
  follow Polyak subgradient steps; the best value seen is the bound, so
  stopping early (an iteration count, a time limit) keeps it valid.
  Cost per evaluation: O(n + K) for the jobs whose ``C = r + L`` is
  provably optimal, O(V log V) for the others (V intervals visited).
"""

from __future__ import annotations

import heapq
import time
from dataclasses import dataclass

import numpy as np

from scheduling_opt.sim.bounds.envelope import FloatArray, Relaxation
from scheduling_opt.sim.bounds.grid import Grid, fluid_srpt, grid_for
from scheduling_opt.sim.bounds.jct_price import best_end, selection

#: The factors tried on the fluid schedule's held-back weight per unit capacity.
SCALES = (0.5, 1.0, 1.5, 2.0, 3.0)
#: Subgradient steps after the scale search (the default budget).
STEPS = 30
#: Polyak's step factor (0 < mu < 2).
MU = 1.0
#: Steps without a better value after which Polyak's factor is halved.
PATIENCE = 3


def duration_bound(rel: Relaxation) -> float:
    """The mean over counted jobs of each job's shortest run, ``p_j / delta_j``.

    Examples
    --------
    >>> from scheduling_opt.sim.bounds.envelope import Envelope, relax
    >>> from scheduling_opt.sim.cluster import ClusterSpec
    >>> from scheduling_opt.sim.workload import SimJob, Workload
    >>> w = Workload.of([SimJob("0", 0.0, 1, 4.0), SimJob("1", 0.0, 1, 2.0)], "demo")
    >>> duration_bound(relax(w, ClusterSpec.uniform(1, 1), Envelope()))
    3.0
    """
    counted = float(rel.weight.sum())
    if counted == 0:
        return 0.0
    return float((rel.weight * rel.min_time).sum()) / counted


def srpt_bound(rel: Relaxation) -> float:
    """The mean JCT of preemptive SRPT on one machine of speed Theta, counted jobs only.

    Examples
    --------
    >>> from scheduling_opt.sim.bounds.envelope import Envelope, relax
    >>> from scheduling_opt.sim.cluster import ClusterSpec
    >>> from scheduling_opt.sim.workload import SimJob, Workload
    >>> w = Workload.of([SimJob("0", 0.0, 1, 4.0), SimJob("1", 0.0, 1, 2.0)], "demo")
    >>> srpt_bound(relax(w, ClusterSpec.uniform(1, 1), Envelope()))  # ends 2 and 6
    4.0
    """
    keep = rel.weight > 0
    release = rel.release[keep]
    area = rel.area[keep]
    n = int(release.size)
    if n == 0:
        return 0.0
    order = np.argsort(release, kind="stable")
    r = release[order].tolist()
    p = area[order].tolist()
    speed = rel.capacity
    queue: list[float] = []
    total = 0.0
    t = r[0]
    i = 0
    while i < n or queue:
        if not queue and t < r[i]:
            t = r[i]
        while i < n and r[i] <= t:
            heapq.heappush(queue, p[i])
            total -= r[i]
            i += 1
        left = heapq.heappop(queue)
        nxt = r[i] if i < n else float("inf")
        finish = t + left / speed
        if finish <= nxt:
            t = finish
            total += t
        else:
            heapq.heappush(queue, left - (nxt - t) * speed)
            t = nxt
    return total / n


@dataclass(frozen=True, slots=True)
class Prices:
    """Evaluated prices: the Lagrangian's value (a sum, not a mean) and its supergradient."""

    value: float
    gradient: FloatArray


class _Jobs:
    """The counted jobs as arrays, with the vectorized parts of an evaluation."""

    def __init__(self, rel: Relaxation, grid: Grid) -> None:
        keep = rel.weight > 0
        self.release = rel.release[keep]
        self.need = rel.min_time[keep]
        self.weight = rel.weight[keep]
        self.rate = rel.rate[keep]
        self.c = self.rate / self.weight
        self.finish = self.release + self.need
        self.k_start = grid.index(self.release)
        # the interval of the last instant of [r, r + L) (the time used at once)
        last = np.maximum(self.finish - 1e-12 * np.maximum(np.abs(self.finish), 1.0), self.release)
        self.k_last = np.minimum(grid.index(last), grid.size - 1)
        self.k_next = grid.index(self.finish)
        self.grid = grid
        self.capacity = rel.capacity


def _integral(lam: FloatArray, grid: Grid, t: FloatArray) -> FloatArray:
    """The integral of the prices from the grid's start to each time in ``t``."""
    cum = np.concatenate([[0.0], np.cumsum(lam * grid.step)])
    k = grid.index(t)
    inside = np.minimum(k, grid.size - 1)
    part = np.clip(t - (grid.start + inside * grid.step), 0.0, grid.step)
    out: FloatArray = np.where(k >= grid.size, cum[-1], cum[inside] + lam[inside] * part)
    return out


def _range_max(lam: FloatArray, lo: np.ndarray, hi: np.ndarray) -> FloatArray:
    """``max(lam[lo..hi])`` per pair (a sparse table: O(K log K) to build, O(1) a query)."""
    levels = [lam]
    width = 1
    while 2 * width <= lam.size:
        prev = levels[-1]
        levels.append(np.maximum(prev[:-width], prev[width:]))
        width *= 2
    span = hi - lo + 1
    level = np.floor(np.log2(np.maximum(span, 1))).astype(np.int64)
    out = np.empty(lo.size)
    for j in np.unique(level):
        m = level == j
        table = levels[int(j)]
        out[m] = np.maximum(table[lo[m]], table[hi[m] - (1 << int(j)) + 1])
    return out


def _coverage(grid: Grid, a: FloatArray, b: FloatArray, rate: FloatArray) -> FloatArray:
    """Per interval, the sum over jobs of ``rate_j x |[a_j, b_j] ∩ I_k|`` (O(n + K))."""

    def below(x: FloatArray) -> FloatArray:
        k = grid.index(x)
        full = np.bincount(k, weights=rate, minlength=grid.size + 1)
        inside = k < grid.size
        part = np.bincount(
            k[inside],
            weights=rate[inside] * (x[inside] - (grid.start + k[inside] * grid.step)),
            minlength=grid.size + 1,
        )
        after = np.concatenate([np.cumsum(full[::-1])[::-1][1:], [0.0]])
        return (after * grid.step + part)[: grid.size]

    return below(b) - below(a)


def evaluate(jobs: _Jobs, lam: FloatArray, *, gradient: bool) -> Prices:
    """``L(lam)`` and, when asked, its supergradient (area used minus capacity, per interval)."""
    grid = jobs.grid
    lam_end = np.concatenate([lam, [0.0]])
    later = np.minimum.accumulate(lam[::-1])[::-1]
    later_min = np.concatenate([later, [np.inf]])
    cost0 = _integral(lam, grid, jobs.finish) - _integral(lam, grid, jobs.release)
    top = _range_max(lam, jobs.k_start, np.maximum(jobs.k_last, jobs.k_start))
    after = later_min[jobs.k_next]
    f0 = jobs.need + jobs.c * cost0
    # C = r + L is optimal when no later time is cheap enough to pay for waiting
    # and the free time after the grid is too far to help.
    quick = (jobs.c * (top - np.where(np.isinf(after), 0.0, after)) <= 1.0) & (
        jobs.release + f0 <= grid.end
    )
    quick |= cost0 <= 0.0
    values = np.where(quick, f0, 0.0)
    slow = np.flatnonzero(~quick)
    usage = np.zeros(grid.size)
    if gradient:
        q = np.flatnonzero(quick)
        usage += _coverage(grid, jobs.release[q], jobs.finish[q], jobs.rate[q])
    lam_list = lam_end.tolist()
    later_list = later_min.tolist()
    extra = [0.0] * grid.size
    release, need, c, rate = (
        jobs.release.tolist(),
        jobs.need.tolist(),
        jobs.c.tolist(),
        jobs.rate.tolist(),
    )
    for j in slow.tolist():
        v, end = best_end(release[j], need[j], c[j], lam_list, later_list, grid)
        values[j] = v
        if gradient:
            selection(release[j], end, need[j], lam_list, grid, extra, rate[j])
    usage += np.array(extra)
    total = float((jobs.weight * values).sum()) - jobs.capacity * grid.step * float(lam.sum())
    return Prices(total, usage - jobs.capacity * grid.step if gradient else np.zeros(0))


@dataclass(frozen=True, slots=True)
class LagrangeResult:
    """The best Lagrangian value found (a mean), the evaluations made and the seconds taken."""

    value: float
    evaluations: int
    seconds: float


def lagrangian_bound(
    rel: Relaxation,
    *,
    grid: Grid | None = None,
    steps: int = STEPS,
    time_limit: float | None = None,
) -> LagrangeResult:
    """The mean-JCT Lagrangian bound: the best ``L(lam) / counted jobs`` over the prices tried.

    Parameters
    ----------
    rel : Relaxation
        The workload's relaxation.
    grid : Grid, optional
        The prices' grid (default :func:`~scheduling_opt.sim.bounds.grid.grid_for`).
    steps : int
        Subgradient steps after the scale search (a deterministic budget).
    time_limit : float, optional
        Seconds after which no new evaluation starts (the value stays a
        bound; the result then depends on the machine's speed).

    Returns
    -------
    LagrangeResult

    Examples
    --------
    Two one-GPU jobs of 4 and 2 on one GPU, both at 0: the optimum is 4
    (ends 2 and 6), the shortest runs give 3.

    >>> from scheduling_opt.sim.bounds.envelope import Envelope, relax
    >>> from scheduling_opt.sim.cluster import ClusterSpec
    >>> from scheduling_opt.sim.workload import SimJob, Workload
    >>> w = Workload.of([SimJob("0", 0.0, 1, 4.0), SimJob("1", 0.0, 1, 2.0)], "demo")
    >>> res = lagrangian_bound(relax(w, ClusterSpec.uniform(1, 1), Envelope()))
    >>> 3.0 < res.value <= 4.0
    True
    """
    started = time.perf_counter()
    counted = float(rel.weight.sum())
    if counted == 0:
        return LagrangeResult(0.0, 0, 0.0)
    grid = grid or grid_for(rel)
    jobs = _Jobs(rel, grid)
    fluid = fluid_srpt(rel, grid)
    target = float(np.nansum(rel.weight * (fluid.end - rel.release)))
    base = fluid.held / rel.capacity
    evaluations = 0

    def out_of_time() -> bool:
        return time_limit is not None and time.perf_counter() - started > time_limit

    best = evaluate(jobs, np.zeros(grid.size), gradient=False).value
    evaluations += 1
    lam = np.zeros(grid.size)
    for scale in SCALES:
        if out_of_time():
            break
        trial = evaluate(jobs, scale * base, gradient=False)
        evaluations += 1
        if trial.value > best:
            best, lam = trial.value, scale * base
    mu = MU
    stale = 0
    for _ in range(steps):
        if out_of_time():
            break
        got = evaluate(jobs, lam, gradient=True)
        evaluations += 1
        if got.value > best:
            best, stale = got.value, 0
        else:
            stale += 1
            if stale >= PATIENCE:
                mu, stale = mu / 2.0, 0
        norm = float(got.gradient @ got.gradient)
        if norm <= 0.0 or target <= got.value:
            break
        lam = np.maximum(0.0, lam + mu * (target - got.value) / norm * got.gradient)
    return LagrangeResult(best / counted, evaluations, time.perf_counter() - started)
