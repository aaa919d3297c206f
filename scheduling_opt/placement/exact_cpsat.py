"""Exact placement by CP-SAT: maximize the total allocation reward RW (method ``exact-cpsat``).

Variables per job j and eligible server s with room: ``x[j,s]`` workers,
``y[j,s]`` whether j uses s; per job and span k: ``w[j,k]`` whether j spans
exactly k servers (at most one; none = unplaced). Constraints: all or none
of a job's workers placed, ``y`` links to ``x``, the span counts the used
servers, GPUs per server within what the current placement leaves free.
Objective: ``sum RW_j(k) w[j,k]`` (Chronus §3.4.2, Eq. 7). NP-hard (bin
packing); the model has O(J S) variables and constraints.

CP-SAT needs integer coefficients: rewards are scaled by :func:`rw_scale`
(10^9 unless the scaled sum would pass 2^50) and rounded. Each placed job's
coefficient is off by at most 0.5 (exactly: its largest rounding error over
its spans, 0 for integral rewards), so the true optimum lies within ``slack``
= the sum of those errors / scale above what CP-SAT proves, and the
returned placement's true reward up to ``slack`` below its scaled value: the
answer is ``optimal`` only when twice that slack is below
``ROUNDING_TOLERANCE`` relative, else ``feasible``; ``bound`` is CP-SAT's best bound / scale +
slack (never below the true optimum). The reported objective is the reward
of the returned placement, recomputed exactly. Local search's answer (under
half the time limit) is the hint and the fallback incumbent, so a
time-limited run is never worse than it.

``objective="nodes"``: the most GPUs placed first, then the fewest servers
spanned in total (integral weights; the solution still reports RW, and
``optimal`` then refers to that objective).
"""

from __future__ import annotations

import math
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np

from scheduling_opt import exact as backends
from scheduling_opt.errors import InvalidInstanceError
from scheduling_opt.placement.bounds import upper_bound
from scheduling_opt.placement.local_search import SEARCH_WORK, search_assign
from scheduling_opt.placement.model import (
    Assignment,
    PlacementDecision,
    PlacementInput,
    decide,
)
from scheduling_opt.solution import Seed, Solution, Status, named, time_limit_of

#: Seconds to build one worker variable ``x[j,s]`` (with its use indicator and
#: rows) and for CP-SAT to load it, measured on a loaded 2-core machine (17 +
#: 5 us at 532,000 variables) and rounded up: a model that cannot be built
#: and loaded within the time limit is not started.
SECONDS_PER_VARIABLE = 30e-6

#: Relative slack the rounding may hide while the answer is still called optimal
#: (the HiGHS runs of the library use a relative MIP gap of 1e-9).
ROUNDING_TOLERANCE = 1e-9

Objective = Literal["rw", "nodes"]


@dataclass(frozen=True, slots=True)
class _Shape:
    """Per job: (server, most workers there) pairs with room, and feasible spans."""

    room: tuple[tuple[tuple[int, int], ...], ...]
    spans: tuple[tuple[int, ...], ...]


def _shape_of(inp: PlacementInput) -> _Shape:
    """The servers with room and the feasible spans of every job (spans empty: no fit)."""
    rooms, job_spans = [], []
    for j in range(inp.n_jobs):
        n, gpw = inp.job_workers[j], inp.gpw[j]
        room = tuple((s, min(n, inp.free[s] // gpw)) for s in inp.eligible[j])
        room = tuple((s, u) for s, u in room if u > 0)
        rooms.append(room)
        fits = sum(u for _, u in room) >= n
        job_spans.append(tuple(k for k in inp.spans(j) if k <= len(room)) if fits else ())
    return _Shape(tuple(rooms), tuple(job_spans))


def _rounding_slack(inp: PlacementInput, shape: _Shape, scale: int) -> float:
    """What rounding the scaled rewards can hide: per job its largest rounding error.

    At most 0.5 / scale per job with a span; 0 when the rewards are integral
    at this scale (1-GPU jobs on 1-node spans), so such instances are proven
    ``optimal`` however many jobs they hold (with 0.5 / scale per job, three
    jobs of reward 1 used to be only ``feasible``). O(J x spans).
    """
    total = 0.0
    for j, ks in enumerate(shape.spans):
        errors = [abs(inp.rw[j][k] * scale - round(inp.rw[j][k] * scale)) for k in ks]
        total += max(errors, default=0.0)
    return total / scale


def _check_objective(objective: str) -> None:
    """Refuse an objective other than ``rw`` and ``nodes`` (the error names it)."""
    if objective not in ("rw", "nodes"):
        raise InvalidInstanceError("objective", f"must be 'rw' or 'nodes', got {objective!r}")


def rw_scale(inp: PlacementInput) -> int:
    """The power of ten (<= 10^9) that keeps the scaled rewards' sum below 2^50."""
    total = sum(inp.best_rw(j) for j in range(inp.n_jobs))
    scale = 10**9
    while scale > 1 and total * scale >= 2**50:
        scale //= 10
    return scale


def _weights(
    inp: PlacementInput, shape: _Shape, objective: Objective, scale: int
) -> list[dict[int, int]]:
    if objective == "rw":
        return [{k: round(inp.rw[j][k] * scale) for k in ks} for j, ks in enumerate(shape.spans)]
    big = 1 + sum(inp.job_workers)
    return [{k: inp.gpus(j) * big - k for k in ks} for j, ks in enumerate(shape.spans)]


def _read_counts(values: Mapping[tuple[int, int], float], n_jobs: int) -> list[Assignment | None]:
    """Solver values ``{(job, server): workers}`` -> per job an assignment or None."""
    per_job: dict[int, list[tuple[int, int]]] = {}
    for (j, s), v in values.items():
        w = round(v)
        if w > 0:
            per_job.setdefault(j, []).append((s, w))
    return [tuple(sorted(per_job[j])) if j in per_job else None for j in range(n_jobs)]


def _int_seed(seed: Seed) -> int:
    if isinstance(seed, np.random.Generator):
        return int(seed.integers(2**31 - 1))
    if seed is None:
        return 0
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
        raise ValueError(f"seed must be an int >= 0, a numpy Generator or None, got {seed!r}")
    return int(seed) % (2**31 - 1)


def _model(
    inp: PlacementInput, shape: _Shape, weights: list[dict[int, int]], deadline: float = math.inf
) -> tuple[Any, Any] | None:
    """The CP-SAT model and its ``x`` variables; None once ``deadline`` passes mid-build."""
    from ortools.sat.python import cp_model

    model = cp_model.CpModel()
    x: dict[tuple[int, int], Any] = {}
    load: dict[int, list[Any]] = {}
    score: list[Any] = []
    for j, room in enumerate(shape.room):
        if not shape.spans[j]:
            continue
        if time.perf_counter() > deadline:
            return None
        w = {k: model.new_bool_var(f"w{j}_{k}") for k in shape.spans[j]}
        model.add(sum(w.values()) <= 1)
        used = []
        for s, u in room:
            xs, ys = model.new_int_var(0, u, f"x{j}_{s}"), model.new_bool_var(f"y{j}_{s}")
            model.add(xs <= u * ys)
            model.add(xs >= ys)
            x[j, s] = xs
            used.append(ys)
            load.setdefault(s, []).append(inp.gpw[j] * xs)
        model.add(sum(x[j, s] for s, _ in room) == inp.job_workers[j] * sum(w.values()))
        model.add(sum(used) == sum(k * v for k, v in w.items()))
        score.extend(weights[j][k] * v for k, v in w.items())
    for s, terms in load.items():
        model.add(sum(terms) <= inp.free[s])
    model.maximize(sum(score))
    return model, x


@named("exact-cpsat")
def exact_cpsat(
    inp: PlacementInput,
    *,
    seed: Seed = None,
    time_limit: float | None = None,
    objective: Objective = "rw",
    hint: bool = True,
) -> Solution[PlacementDecision]:
    """Solve the placement integer program with CP-SAT (method ``exact-cpsat``).

    Parameters
    ----------
    inp : PlacementInput
        The jobs to place and the free GPUs.
    seed : int, numpy Generator or None
        CP-SAT's random seed (None: 0).
    time_limit : float, optional
        Seconds for the whole call (default
        :data:`~scheduling_opt.solution.DEFAULT_TIME_LIMIT`); the hint gets
        at most half of it.
    objective : {"rw", "nodes"}
        ``rw``: total reward (the problem's objective); ``nodes``: most GPUs
        placed, then fewest servers spanned.
    hint : bool
        Start CP-SAT from local search's answer (``rw`` only).

    Returns
    -------
    Solution[PlacementDecision]
        ``optimal`` when proven (see the module docstring for the rounding
        rule), else ``feasible``/``time_limit`` with ``bound`` = CP-SAT's
        best bound plus the rounding slack (at most the cheap upper bound).

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
    >>> sol = exact_cpsat(PlacementInput(cluster, jobs), time_limit=10)
    >>> sol.status.value, round(sol.objective, 4), sol.gap
    ('optimal', 14.6667, 0.0)

    References
    ----------
    Chronus §3.4.2 (Eq. 7, the placement problem).
    """
    _check_objective(objective)
    start = time.perf_counter()
    limit = time_limit_of(time_limit)
    shape = _shape_of(inp)
    if not any(shape.spans):
        empty = decide(inp, [None] * inp.n_jobs)
        return Solution(Status.OPTIMAL, 0.0, empty, seconds=time.perf_counter() - start)
    scale = rw_scale(inp) if objective == "rw" else 1
    start_assign: list[Assignment | None] | None = None
    if hint and objective == "rw":
        start_assign, _ = search_assign(inp, deadline=start + limit / 2, work_limit=SEARCH_WORK)
    size = sum(len(room) for room, ks in zip(shape.room, shape.spans, strict=True) if ks)
    cost = size * SECONDS_PER_VARIABLE
    built = None
    if cost < limit - (time.perf_counter() - start):
        built = _model(inp, shape, _weights(inp, shape, objective, scale), start + limit)
    if built is None:
        # Found by the fuzz: 10,160 jobs on 96 servers took 9 s to build and 2.4 s
        # for CP-SAT to load under a 5 s limit. Answer with the hint instead.
        nothing = backends.CpSatOutcome(Status.TIME_LIMIT, None, None, None, 0.0, False)
        sol = _solution(inp, shape, objective, scale, {}, nothing, start_assign, start)
        note = f"a CP-SAT model of {size} worker variables (about {cost:.1f} s to build and load)"
        return sol.with_(message=f"time limit: {note} not solved; {sol.message or 'no answer'}")
    model, x = built
    for j, a in enumerate(start_assign or ()):
        placed = dict(a or ())
        for s, _ in shape.room[j] if shape.spans[j] else ():
            model.add_hint(x[j, s], placed.get(s, 0))
    left = max(limit - (time.perf_counter() - start), 0.01)
    out = backends.solve_cpsat(model, time_limit=left, seed=_int_seed(seed))
    return _solution(inp, shape, objective, scale, x, out, start_assign, start)


def _solution(
    inp: PlacementInput,
    shape: _Shape,
    objective: Objective,
    scale: int,
    x: Mapping[tuple[int, int], Any],
    out: backends.CpSatOutcome,
    start_assign: list[Assignment | None] | None,
    start: float,
) -> Solution[PlacementDecision]:
    status, message = out.status, ""
    decision: PlacementDecision | None = None
    if out.has_solution:
        values = {key: out.solver.value(var) for key, var in x.items()}
        decision = decide(inp, _read_counts(values, inp.n_jobs))
    if status is not Status.OPTIMAL and start_assign is not None:
        fallback = decide(inp, start_assign)
        if decision is None or fallback.reward > decision.reward:
            decision, message = fallback, "the local-search hint is the best answer found"
    if status is Status.INFEASIBLE:
        # The empty placement is always feasible: an infeasible claim is a solver fault.
        status, message = Status.TIME_LIMIT, "CP-SAT reported infeasible; no answer kept"
        decision = None
    bound: float | None = None
    if objective == "rw":
        slack = _rounding_slack(inp, shape, scale)
        cheap = upper_bound(inp)
        bound = cheap if out.bound is None else min(out.bound / scale + slack, cheap)
        reward = decision.reward if decision is not None else 0.0
        # The returned placement may lose up to ``slack`` to rounding and the
        # true optimum gain up to ``slack``: what a proof hides is 2 x slack.
        if status is Status.OPTIMAL and 2 * slack > ROUNDING_TOLERANCE * max(abs(reward), 1.0):
            status = Status.FEASIBLE
            message = f"rounding at scale {scale} may hide up to {slack:.3g} reward"
        if status is Status.OPTIMAL:
            bound = None
    return Solution(
        status,
        None if decision is None else decision.reward,
        decision,
        bound=bound,
        seconds=time.perf_counter() - start,
        message=message,
    )
