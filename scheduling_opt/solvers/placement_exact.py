"""Exact placement: maximize the total allocation reward RW (or, separately,
minimize the servers spanned) by an integer program.

Variables per job j and eligible server s with room: ``x[j,s]`` workers,
``y[j,s]`` whether j uses s; per job and span k: ``w[j,k]`` whether j spans
exactly k servers (at most one; none = unplaced). Constraints: all or none of
a job's workers placed, ``y`` links to ``x``, the span counts the used
servers, GPUs per server within what the current placement leaves free.
Objective: ``sum RW_j(k) w[j,k]`` (Chronus Eq. 7). NP-hard (bin packing);
the model has O(J S) variables and constraints.

- ``exact`` (CP-SAT, 8 workers): rewards are scaled by 10^6 and rounded, so
  "optimal" holds up to ``J * 5e-7`` RW; the reported objective is the
  reward of the returned placement, recomputed exactly. Local search's
  answer is the hint, so a time-limited run is never worse than it.
- ``exact-pulp`` (CBC): the same problem written independently, with one
  span variable per job including the span 0 (unplaced) and real rewards.
- ``objective="nodes"``: the most GPUs placed first, then the fewest servers
  spanned in total (a separate objective; the result still reports RW).
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

from scheduling_opt import exact as backends
from scheduling_opt.errors import InvalidInstanceError
from scheduling_opt.result import Status
from scheduling_opt.solvers.placement_chronus import local_search, spans
from scheduling_opt.solvers.placement_core import (
    Assignment,
    PlacementInput,
    PlacementResult,
    make_result,
)

#: CP-SAT needs integer objective coefficients: RW is scaled by this.
RW_SCALE = 1_000_000

Objective = Literal["rw", "nodes"]


@dataclass(frozen=True, slots=True)
class _Shape:
    """Per job: (server, most workers there) pairs with room, and feasible spans."""

    room: tuple[tuple[tuple[int, int], ...], ...]
    spans: tuple[tuple[int, ...], ...]


def _shape(inp: PlacementInput) -> _Shape:
    rooms, job_spans = [], []
    for j in range(inp.n_jobs):
        n, gpw = inp.workers[j], inp.gpw[j]
        room = tuple((s, min(n, inp.free[s] // gpw)) for s in inp.eligible[j])
        room = tuple((s, u) for s, u in room if u > 0)
        rooms.append(room)
        fits = sum(u for _, u in room) >= n
        job_spans.append(tuple(k for k in spans(inp, j) if k <= len(room)) if fits else ())
    return _Shape(tuple(rooms), tuple(job_spans))


def _check_objective(objective: str) -> None:
    if objective not in ("rw", "nodes"):
        raise InvalidInstanceError("objective", f"must be 'rw' or 'nodes', got {objective!r}")


def _weights(inp: PlacementInput, shape: _Shape, objective: Objective) -> list[dict[int, int]]:
    """Integer objective coefficient of every (job, span)."""
    if objective == "rw":
        return [{k: round(inp.rw[j][k] * RW_SCALE) for k in ks} for j, ks in enumerate(shape.spans)]
    big = 1 + sum(inp.workers)
    return [{k: inp.gpus(j) * big - k for k in ks} for j, ks in enumerate(shape.spans)]


def _read(values: Mapping[tuple[int, int], float], n_jobs: int) -> list[Assignment | None]:
    per_job: dict[int, list[tuple[int, int]]] = {}
    for (j, s), v in values.items():
        w = round(v)
        if w > 0:
            per_job.setdefault(j, []).append((s, w))
    return [tuple(sorted(per_job[j])) if j in per_job else None for j in range(n_jobs)]


def exact_cpsat(
    inp: PlacementInput,
    *,
    time_limit: float = 60.0,
    objective: Objective = "rw",
    seed: int = 0,
    hint: bool = True,
) -> PlacementResult:
    """Solve the placement integer program with CP-SAT (method ``exact``)."""
    from ortools.sat.python import cp_model

    _check_objective(objective)
    start = time.perf_counter()
    shape = _shape(inp)
    model = cp_model.CpModel()
    x: dict[tuple[int, int], Any] = {}
    load: dict[int, list[Any]] = {}
    score: list[Any] = []
    weights = _weights(inp, shape, objective)
    for j, room in enumerate(shape.room):
        if not shape.spans[j]:
            continue
        n = inp.workers[j]
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
        model.add(sum(x[j, s] for s, _ in room) == n * sum(w.values()))
        model.add(sum(used) == sum(k * v for k, v in w.items()))
        score.extend(weights[j][k] * v for k, v in w.items())
    for s, terms in load.items():
        model.add(sum(terms) <= inp.free[s])
    model.maximize(sum(score))
    if hint and objective == "rw":
        for j, a in enumerate(local_search(inp)):
            placed = dict(a or ())
            for s, _ in shape.room[j] if shape.spans[j] else ():
                model.add_hint(x[j, s], placed.get(s, 0))
    out = backends.solve_cpsat(model, time_limit=time_limit, seed=seed)
    if out.has_solution:
        assign = _read({key: out.solver.value(v) for key, v in x.items()}, inp.n_jobs)
    else:
        assign = [None] * inp.n_jobs
    status = out.status if x else Status.OPTIMAL
    return make_result(inp, assign, status, time.perf_counter() - start, "exact")


def exact_pulp(
    inp: PlacementInput, *, time_limit: float = 60.0, objective: Objective = "rw"
) -> PlacementResult:
    """The same problem in PuLP/CBC, with span 0 as the unplaced choice (``exact-pulp``)."""
    import pulp

    _check_objective(objective)
    start = time.perf_counter()
    shape = _shape(inp)
    prob = pulp.LpProblem("placement", pulp.LpMaximize)
    x: dict[tuple[int, int], Any] = {}
    gain = []
    cap: dict[int, list[Any]] = {}
    big = 1 + sum(inp.workers)
    for j, room in enumerate(shape.room):
        if not shape.spans[j]:
            continue
        v = {k: pulp.LpVariable(f"v_{j}_{k}", cat="Binary") for k in (0, *shape.spans[j])}
        prob += pulp.lpSum(v.values()) == 1
        ys = []
        for s, u in room:
            x[j, s] = pulp.LpVariable(f"x_{j}_{s}", 0, u, cat="Integer")
            y = pulp.LpVariable(f"y_{j}_{s}", cat="Binary")
            prob += x[j, s] - u * y <= 0
            prob += x[j, s] - y >= 0
            ys.append(y)
            cap.setdefault(s, []).append(inp.gpw[j] * x[j, s])
        prob += pulp.lpSum(x[j, s] for s, _ in room) == inp.workers[j] * (1 - v[0])
        prob += pulp.lpSum(ys) == pulp.lpSum(k * v[k] for k in shape.spans[j])
        for k in shape.spans[j]:
            coef = inp.rw[j][k] if objective == "rw" else inp.gpus(j) * big - k
            gain.append(coef * v[k])
    for s, terms in cap.items():
        prob += pulp.lpSum(terms) <= inp.free[s]
    if not x:
        return make_result(inp, [None] * inp.n_jobs, Status.OPTIMAL, 0.0, "exact-pulp")
    prob += pulp.lpSum(gain)
    out = backends.solve_pulp(prob, time_limit=time_limit)
    if out.has_solution:
        assign = _read({key: var.varValue or 0.0 for key, var in x.items()}, inp.n_jobs)
    else:
        assign = [None] * inp.n_jobs
    return make_result(inp, assign, out.status, time.perf_counter() - start, "exact-pulp")
