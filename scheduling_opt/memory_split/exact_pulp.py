"""The memory split written again, independently, as a PuLP/CBC MILP (method ``exact-pulp``).

Modelled from the problem statement (AntMan §3.3), not from the MCKP of
:mod:`scheduling_opt.memory_split.exact`: an integer chunk count x_j per job
within [min_j, max_j], one capacity row sum_j x_j <= C, and each job's
piecewise-linear slowdown curve modelled directly with convex-combination
weights over its breakpoints and one binary per curve segment (SOS2 by
binaries). The memory fraction a job runs at may not exceed
x_j * chunk / peak; speeds never decrease along a curve, so the optimum
takes the whole grant. Size O(n * points); exponential in the worst case.
CBC through PuLP exposes no dual bound.
"""

from __future__ import annotations

import time
from typing import Any

from scheduling_opt import exact as backends
from scheduling_opt.memory_split._solution import solution_of
from scheduling_opt.memory_split.model import (
    MemorySplitDecision,
    MemorySplitInput,
    OpportunisticJob,
)
from scheduling_opt.solution import Seed, Solution, Status, named, time_limit_of


def _speed_of(
    pulp: Any, model: Any, inp: MemorySplitInput, j: int, job: OpportunisticJob, x: Any
) -> Any:
    """Add job ``j``'s curve to ``model``; return its speed as a linear expression."""
    fractions = [f for f, _ in job.curve]
    speeds = [s for _, s in job.curve]
    m = len(job.curve) - 1
    if m == 0:  # one point at fraction 1: the job runs only at its peak, at that speed
        return speeds[0]
    lam = [pulp.LpVariable(f"l_{j}_{i}", lowBound=0, upBound=1) for i in range(m + 1)]
    seg = [pulp.LpVariable(f"z_{j}_{i}", cat="Binary") for i in range(m)]
    model += pulp.lpSum(lam) == 1, f"convex_{j}"
    model += pulp.lpSum(seg) == 1, f"segment_{j}"
    # Only the two ends of the chosen segment may carry weight.
    for i in range(m + 1):
        near = [seg[k] for k in (i - 1, i) if 0 <= k < m]
        model += lam[i] <= pulp.lpSum(near), f"adjacent_{j}_{i}"
    # The fraction run at is at most what x_j chunks hold. The minimum chunk
    # count is rounded up with a 1e-9 forgiveness, so at x_j = min it may hold
    # a hair less than the curve's first fraction; slack restores it.
    per_chunk = inp.chunk_gb / job.peak_gb
    slack = max(0.0, fractions[0] - inp.min_chunks(job) * per_chunk)
    fraction = pulp.lpSum(f * lam[i] for i, f in enumerate(fractions))
    model += fraction <= per_chunk * x + slack, f"grant_{j}"
    return pulp.lpSum(s * lam[i] for i, s in enumerate(speeds))


@named("exact-pulp")
def exact_pulp(
    inp: MemorySplitInput, *, seed: Seed = None, time_limit: float | None = None
) -> Solution[MemorySplitDecision]:
    """The split as an independent MILP on PuLP/CBC (method ``exact-pulp``).

    Parameters
    ----------
    inp : MemorySplitInput
    seed : int, numpy Generator or None
        Unused.
    time_limit : float, optional
        Seconds for CBC (default :data:`~scheduling_opt.solution.DEFAULT_TIME_LIMIT`).

    Returns
    -------
    Solution[MemorySplitDecision]
        ``optimal``; ``infeasible`` when CBC proves the minimums do not fit;
        ``time_limit`` with the incumbent (if any). The objective is
        recomputed from the chunk counts, never read from CBC.

    Raises
    ------
    SolverError
        If CBC fails.

    Examples
    --------
    >>> from scheduling_opt.memory_split import MemorySplitInput, OpportunisticJob, PRESETS
    >>> jobs = (
    ...     OpportunisticJob("vgg", 10.0, PRESETS["vgg"]),
    ...     OpportunisticJob("resnet", 10.0, PRESETS["resnet"]),
    ... )
    >>> sol = exact_pulp(MemorySplitInput(32.0, jobs, guarantee_gb=21.0, chunk_gb=1.0))
    >>> sol.status.value, dict(sol.decision.chunks), round(sol.objective, 4)
    ('optimal', {'vgg': 1, 'resnet': 10}, 1.35)

    References
    ----------
    AntMan (OSDI '20) §3.3, Figure 10.
    """
    import pulp

    start = time.perf_counter()
    limit = time_limit_of(time_limit)
    if not inp.jobs:
        return solution_of(inp, [], Status.OPTIMAL, start)
    model = pulp.LpProblem("memory_split", pulp.LpMaximize)
    xs = [
        pulp.LpVariable(
            f"x_{j}", lowBound=inp.min_chunks(job), upBound=inp.max_chunks(job), cat="Integer"
        )
        for j, job in enumerate(inp.jobs)
    ]
    speeds = [_speed_of(pulp, model, inp, j, job, xs[j]) for j, job in enumerate(inp.jobs)]
    model += pulp.lpSum(speeds)
    model += pulp.lpSum(xs) <= inp.capacity, "memory"
    out = backends.solve_pulp(model, time_limit=limit, started=start)
    chunks = [round(x.varValue or 0.0) for x in xs] if out.has_solution else None
    return solution_of(inp, chunks, out.status, start)
