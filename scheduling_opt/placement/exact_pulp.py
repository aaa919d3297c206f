"""Exact placement written again in PuLP, solved by CBC (method ``exact-pulp``).

The same problem as :mod:`scheduling_opt.placement.exact_cpsat`, modelled
independently: one binary per job and span including the span 0
(unplaced, exactly one chosen), ``x[j,s]`` workers and ``y[j,s]`` use of a
server, the workers equal to the job's count unless span 0, the used
servers equal to the chosen span, GPUs per server within the free ones;
real (unscaled) rewards. NP-hard; O(J S) variables and constraints.

CBC exposes no dual bound through PuLP, so ``bound`` stays None. The empty
placement is always feasible: CBC stopped before any solution is
``time_limit`` with no decision, never ``infeasible``.
"""

from __future__ import annotations

import time
from typing import Any, Literal

from scheduling_opt import exact as backends
from scheduling_opt.errors import InvalidInstanceError
from scheduling_opt.placement.model import Assignment, PlacementDecision, PlacementInput, decide
from scheduling_opt.solution import Seed, Solution, Status, named, time_limit_of

Objective = Literal["rw", "nodes"]


def _rooms(inp: PlacementInput, j: int) -> list[tuple[int, int]]:
    """``(server, most workers of job j there)`` for servers with room."""
    n, gpw = inp.job_workers[j], inp.gpw[j]
    return [(s, min(n, inp.free[s] // gpw)) for s in inp.eligible[j] if inp.free[s] >= gpw]


@named("exact-pulp")
def exact_pulp(
    inp: PlacementInput,
    *,
    seed: Seed = None,
    time_limit: float | None = None,
    objective: Objective = "rw",
) -> Solution[PlacementDecision]:
    """The placement integer program in PuLP/CBC, span 0 as the unplaced choice (``exact-pulp``).

    Parameters
    ----------
    inp : PlacementInput
        The jobs to place and the free GPUs.
    seed : int, numpy Generator or None
        Unused (CBC runs deterministically).
    time_limit : float, optional
        Seconds for CBC (default :data:`~scheduling_opt.solution.DEFAULT_TIME_LIMIT`).
    objective : {"rw", "nodes"}
        ``rw``: total reward; ``nodes``: most GPUs placed, then fewest servers spanned.

    Returns
    -------
    Solution[PlacementDecision]
        ``optimal`` when CBC proves it, else ``time_limit`` with CBC's
        incumbent (or no decision); ``bound`` None (PuLP reports none).

    Raises
    ------
    InvalidInstanceError
        If ``objective`` is not ``rw`` or ``nodes``.
    ValueError
        If ``time_limit`` is not a positive number.

    Examples
    --------
    >>> from scheduling_opt.model import Cluster, GpuType, Job, Server
    >>> cluster = Cluster((GpuType("V100"),), (Server("n0", "V100", 8), Server("n1", "V100", 8)))
    >>> jobs = [Job("a", 6, 6, 60.0), Job("b", 4, 4, 60.0), Job("c", 6, 6, 60.0)]
    >>> sol = exact_pulp(PlacementInput(cluster, jobs), time_limit=10)
    >>> sol.status.value, round(sol.objective, 4)
    ('optimal', 14.6667)

    References
    ----------
    Chronus §3.4.2 (Eq. 7, the placement problem).
    """
    import pulp

    if objective not in ("rw", "nodes"):
        raise InvalidInstanceError("objective", f"must be 'rw' or 'nodes', got {objective!r}")
    start = time.perf_counter()
    limit = time_limit_of(time_limit)
    prob = pulp.LpProblem("placement", pulp.LpMaximize)
    x: dict[tuple[int, int], Any] = {}
    gain = []
    cap: dict[int, list[Any]] = {}
    big = 1 + sum(inp.job_workers)
    # PuLP then writes the model to a file that CBC reads back, which takes
    # about as long as building it: past half the limit nothing is started
    # (fuzz: 532,000 worker variables ran 36 s under a 5 s limit).
    deadline = start + limit / 2
    for j in range(inp.n_jobs):
        if time.perf_counter() > deadline:
            return Solution(
                Status.TIME_LIMIT,
                None,
                None,
                seconds=time.perf_counter() - start,
                message=f"time limit: half of it spent building the model ({j} of "
                f"{inp.n_jobs} jobs); CBC not started",
            )
        room = _rooms(inp, j)
        if sum(u for _, u in room) < inp.job_workers[j]:
            continue
        ks = [k for k in inp.spans(j) if k <= len(room)]
        if not ks:
            continue
        v = {k: pulp.LpVariable(f"v_{j}_{k}", cat="Binary") for k in (0, *ks)}
        prob += pulp.lpSum(v.values()) == 1
        ys = []
        for s, u in room:
            x[j, s] = pulp.LpVariable(f"x_{j}_{s}", 0, u, cat="Integer")
            y = pulp.LpVariable(f"y_{j}_{s}", cat="Binary")
            prob += x[j, s] - u * y <= 0
            prob += x[j, s] - y >= 0
            ys.append(y)
            cap.setdefault(s, []).append(inp.gpw[j] * x[j, s])
        prob += pulp.lpSum(x[j, s] for s, _ in room) == inp.job_workers[j] * (1 - v[0])
        prob += pulp.lpSum(ys) == pulp.lpSum(k * v[k] for k in ks)
        for k in ks:
            coef = inp.rw[j][k] if objective == "rw" else inp.gpus(j) * big - k
            gain.append(coef * v[k])
    for s, terms in cap.items():
        prob += pulp.lpSum(terms) <= inp.free[s]
    if not x:
        empty = decide(inp, [None] * inp.n_jobs)
        return Solution(Status.OPTIMAL, 0.0, empty, seconds=time.perf_counter() - start)
    prob += pulp.lpSum(gain)
    out = backends.solve_pulp(prob, time_limit=limit, started=start)
    status, message = out.status, ""
    decision: PlacementDecision | None = None
    if out.has_solution:
        decision = decide(inp, _read(x, inp.n_jobs))
    if status is Status.INFEASIBLE:
        # Every job may wait: the model always has a solution, so this is no proof.
        status, decision = Status.TIME_LIMIT, None
        message = "CBC stopped without a solution"
    return Solution(
        status,
        None if decision is None else decision.reward,
        decision,
        seconds=time.perf_counter() - start,
        message=message,
    )


def _read(x: dict[tuple[int, int], Any], n_jobs: int) -> list[Assignment | None]:
    per_job: dict[int, list[tuple[int, int]]] = {}
    for (j, s), var in x.items():
        w = round(var.varValue or 0.0)
        if w > 0:
            per_job.setdefault(j, []).append((s, w))
    return [tuple(sorted(per_job[j])) if j in per_job else None for j in range(n_jobs)]
