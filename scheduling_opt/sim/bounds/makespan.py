"""A lower bound on the makespan and an upper bound on the utilization.

Makespan (``summarize``: the last end on the trace's clock). In the
pooled relaxation (docs/bounds.md) every job ends at or after
``r_j + p_j / delta_j``. And by any time u at most
``D(u) = sum_j min(p_j, delta_j (u - r_j)^+)`` of the area can be done
(each job at most its rate since its release), so the rest, at least
``P - D(u)`` of the total area P, runs after u on capacity Theta:

    C_max >= max( max_j r_j + p_j / delta_j,  max_u u + (P - D(u)) / Theta ).

``u + (P - D(u)) / Theta`` is piecewise linear in u with breakpoints at
the releases and at the earliest ends; :func:`makespan_bound` evaluates it
at all of them (the first release gives ``r_0 + P / Theta``). O(n log n).

Utilization (``summarize``: busy GPU time over available GPU time from the
first submission to the last end, ``B / capacity_area``). The capacity
integral is at least the GPUs available at the start times ``C_max -
r_0`` (no registered policy takes a spec server below its size), so a run
whose busy GPU time B is at most the workload's GPU time at speed 1
(``sum_j g_j w_j``) has utilization at most
``sum_j g_j w_j / (available x (makespan bound - r_0))`` (capped at 1).
A run that holds GPUs while slowed (spread placements, interference,
restarts, start overheads, sublinear elastic sizes) can count more busy
time than that: the bound covers it only when its busy time is within
the workload's (:func:`covers_utilization`, checked per run).
"""

from __future__ import annotations

import numpy as np

from scheduling_opt.sim.bounds.envelope import Relaxation


def makespan_bound(rel: Relaxation) -> float:
    """The makespan lower bound of the module docstring.

    Examples
    --------
    >>> from scheduling_opt.sim.bounds.envelope import Envelope, relax
    >>> from scheduling_opt.sim.cluster import ClusterSpec
    >>> from scheduling_opt.sim.workload import SimJob, Workload
    >>> w = Workload.of([SimJob("0", 0.0, 2, 4.0), SimJob("1", 1.0, 2, 4.0)], "demo")
    >>> makespan_bound(relax(w, ClusterSpec.uniform(1, 2), Envelope()))  # 16 GPU units on 2
    8.0
    >>> w = Workload.of([SimJob("0", 0.0, 1, 4.0), SimJob("1", 3.0, 2, 4.0)], "demo")
    >>> makespan_bound(relax(w, ClusterSpec.uniform(1, 2), Envelope()))  # 3 + (12 - 3) / 2
    7.5
    """
    if rel.jobs == 0:
        return 0.0
    ends = rel.release + rel.min_time
    best = float(ends.max())
    times = np.concatenate([rel.release, ends])
    slopes = np.concatenate([rel.rate, -rel.rate])
    order = np.argsort(times, kind="stable")
    times, slopes = times[order], slopes[order]
    # D at each breakpoint: the rate in force between breakpoints is the sum of slopes so far.
    rate = np.cumsum(slopes)
    done = np.concatenate([[0.0], np.cumsum(rate[:-1] * np.diff(times))])
    total = float(rel.area.sum())
    tail = times + (total - np.minimum(done, total)) / rel.capacity
    return max(best, float(tail.max()))


def utilization_bound(rel: Relaxation, makespan: float) -> float:
    """``min(1, sum g_j w_j / (available x (makespan - r_0)))``: 1 when that span is 0.

    Examples
    --------
    >>> from scheduling_opt.sim.bounds.envelope import Envelope, relax
    >>> from scheduling_opt.sim.cluster import ClusterSpec
    >>> from scheduling_opt.sim.workload import SimJob, Workload
    >>> w = Workload.of([SimJob("0", 0.0, 1, 4.0), SimJob("1", 3.0, 2, 4.0)], "demo")
    >>> rel = relax(w, ClusterSpec.uniform(1, 2), Envelope())
    >>> utilization_bound(rel, makespan_bound(rel))  # 12 GPU units over 2 GPUs x 7.5
    0.8
    """
    if rel.jobs == 0:
        return 0.0
    span = makespan - float(rel.release.min())
    if span <= 0 or rel.available <= 0:
        return 1.0
    return min(1.0, rel.nominal / (rel.available * span))


def covers_utilization(busy_area: float, nominal: float) -> bool:
    """Whether a run's busy GPU time is within the workload's GPU time at speed 1 (+1e-9).

    Examples
    --------
    >>> covers_utilization(24.0, 24.0), covers_utilization(25.0, 24.0)
    (True, False)
    """
    return busy_area <= nominal * (1.0 + 1e-9)
