"""Whether a choice of deadline levels packs into whole lease terms, and the cuts when not.

The second stage of :func:`scheduling_opt.lease.exact`: the levels
stage (:mod:`~scheduling_opt.lease._levels`) chose a deadline level per job
with terms held fractionally; here :func:`decide` asks whether those levels
can be held in whole terms, first with the combinatorial search of
:mod:`~scheduling_opt.lease.packing` (its "unpackable" is a proof), then with
HiGHS (presolve on, fast; its "infeasible" is only a lead that
:func:`confirm` checks without presolve). A choice that does not pack is cut
off by :func:`no_good` (with every choice holding it or tighter deadlines),
and :func:`dominates` recognises a later choice that holds an unpackable one
up to relabelling, so it is cut without a packing. Chronus §3.3.4.
Cost: a packing is NP-hard (the search and HiGHS are exponential in the
worst case, bounded by their node and time budgets); :func:`dominates` is
O(N log N).
"""

from __future__ import annotations

import time
from collections.abc import Callable

import numpy as np
from numpy.typing import NDArray

from scheduling_opt.lease._highs import solve_model
from scheduling_opt.lease._schedule import Schedule, load_of, relevel
from scheduling_opt.lease.formulation import Model, Row
from scheduling_opt.lease.model import LeaseInput
from scheduling_opt.lease.packing import Verdict, pack
from scheduling_opt.solution import Status

#: Whether a packing is first decided by :func:`scheduling_opt.lease.packing.pack`
#: (a search whose "unpackable" is a proof) before HiGHS: on synth-p4-6's
#: unpackable choices 0.006-0.10 s against HiGHS' 0.8-8.7 s (docs/lease.md).
PACKING_SEARCH = True
#: Jobs (that can meet a deadline) from which packings go to the search
#: first (the same as :data:`scheduling_opt.lease.exact.TWO_STAGE_MIN_JOBS`):
#: below, HiGHS decides them in milliseconds too, and the HiGHS path
#: (presolve's verdicts, their confirmation; tests/lease/test_lease_dominance.py)
#: stays the one exercised on small instances.
SEARCH_MIN_JOBS = 10
#: Nodes of the first, budgeted search on a packing (:func:`decide`): on
#: the 33 choices of the 20 hard C120 instances it decided all but two
#: packable ones (8,000-45,000 nodes) within 1,707 nodes.
SEARCH_NODES = 3000
#: Seconds HiGHS (presolve on) may then look for a packing.
HIGHS_PACKING_SECONDS = 2.0


def packs(inp: LeaseInput, schedule: Schedule) -> bool:
    """Whether ``schedule`` is a valid packing: RL_i distinct terms before the level, <= M."""
    for job, pos, held in zip(inp.lease_jobs, schedule.levels, schedule.terms, strict=True):
        if pos is None:
            continue
        if len(set(held)) != job.terms or min(held) < 0 or max(held) >= job.levels[pos].due:
            return False
    return bool((load_of(inp, schedule.terms) <= inp.capacity).all())


def pack_highs(
    inp: LeaseInput, model: Model, x: NDArray[np.float64], limit: float, *, presolve: bool
) -> tuple[Schedule | None, Status]:
    """Integral terms for the levels of ``x``: (verified schedule or None, HiGHS' status).

    With ``presolve`` (fast) an "infeasible" is only a lead: the caller
    confirms it without presolve (``presolve=False``) before it may lower a
    bound, because the scipy 1.17.1 HiGHS presolve once cut off an optimum.
    A schedule is re-verified by :func:`packs` either way.
    """
    fixed = np.zeros(model.lay.size)
    upper = model.ub.copy()
    for s in model.lay.s:
        for v in s:
            fixed[v] = upper[v] = round(float(x[v]))
    packing = Model(model.blocks, model.lay, model.rows, model.c, upper)
    ones = np.ones(model.lay.size, dtype=np.int_)
    status, y, _ = solve_model(packing, limit, ones, fixed, presolve=presolve)
    if status is Status.OPTIMAL and y is not None:
        schedule = model.schedule(inp, list(y))
        if packs(inp, schedule):
            return schedule, status
        return None, Status.TIME_LIMIT  # not verified: proves nothing
    return None, status


def pack_search(
    inp: LeaseInput, model: Model, x: NDArray[np.float64], limit: float, nodes: int | None
) -> tuple[Schedule | None, Status]:
    """The levels of ``x`` packed by :func:`~scheduling_opt.lease.packing.pack`.

    (verified schedule, OPTIMAL), (None, INFEASIBLE) when the search proved
    that no packing exists (exhaustively: no confirmation needed), or
    (None, TIME_LIMIT) when it ran out of ``limit``.
    """
    chosen: list[int] = []
    jobs: list[tuple[int, int, int]] = []
    for i, (job, s) in enumerate(zip(inp.lease_jobs, model.lay.s, strict=True)):
        for p, v in enumerate(s):
            if x[v] > 0.5:
                chosen.append(i)
                jobs.append((job.gpus, job.terms, job.levels[p].due))
    terms, verdict = pack(jobs, inp.capacity, limit, nodes)
    if verdict is Verdict.UNPACKABLE:
        return None, Status.INFEASIBLE
    if terms is None:
        return None, Status.TIME_LIMIT
    held: list[list[int]] = [[] for _ in inp.lease_jobs]
    for i, t in zip(chosen, terms, strict=True):
        held[i] = t
    schedule = relevel(inp, held)
    if packs(inp, schedule) and all(schedule.levels[i] is not None for i in chosen):
        return schedule, Status.OPTIMAL
    return None, Status.TIME_LIMIT  # not verified: proves nothing


def decide(
    inp: LeaseInput,
    model: Model,
    x: NDArray[np.float64],
    limit: float,
    whole: Callable[[], Model] | None = None,
) -> tuple[Schedule | None, Status, bool]:
    """Whether the levels of ``x`` pack: (verified schedule or None, status, proven).

    The search (:mod:`~scheduling_opt.lease.packing`) for
    :data:`SEARCH_NODES` nodes first: it proves most unpackable choices in
    that budget (synth-p4-6: 70-891 nodes, 0.006-0.10 s, against HiGHS'
    0.8-8.7 s) but wanders on some packable ones (synth-p4-1: 45,000 nodes,
    1.7 s), which HiGHS with presolve packs at once. Then HiGHS, for at most
    :data:`HIGHS_PACKING_SECONDS`; then the search for the time left, to
    turn a presolved "infeasible" into a proof. ``proven``: no packing
    exists (the search exhausted its tree); an INFEASIBLE status without it
    is presolve's word only. ``model`` gives the layout (the search reads no
    rows); ``whole`` builds the model with rows for HiGHS when it is needed
    (None: ``model`` is that model).
    """
    start = time.perf_counter()

    def full() -> Model:
        return model if whole is None else whole()

    if not PACKING_SEARCH or sum(1 for j in inp.lease_jobs if j.levels) < SEARCH_MIN_JOBS:
        schedule, status = pack_highs(inp, full(), x, limit, presolve=True)
        return schedule, status, False
    schedule, status = pack_search(inp, model, x, limit, SEARCH_NODES)
    if status is not Status.TIME_LIMIT:
        return schedule, status, status is Status.INFEASIBLE
    left = limit - (time.perf_counter() - start)
    if left <= 0:
        return None, Status.TIME_LIMIT, False
    schedule, status = pack_highs(inp, full(), x, min(left, HIGHS_PACKING_SECONDS), presolve=True)
    if schedule is not None:
        return schedule, status, False
    left = limit - (time.perf_counter() - start)
    if left <= 0:
        return None, status, False
    found, verdict = pack_search(inp, model, x, left, None)
    if verdict is Status.TIME_LIMIT:
        return None, status, False
    return found, verdict, verdict is Status.INFEASIBLE


def confirm(
    inp: LeaseInput,
    model: Model | Callable[[], Model],
    choices: list[NDArray[np.float64]],
    limit: float,
) -> bool:
    """Whether HiGHS without presolve proves every choice unpackable within ``limit``.

    ``model``: the whole model, or a function building it (on first need).
    """
    start = time.perf_counter()
    for x in choices:
        left = limit - (time.perf_counter() - start)
        whole = model if isinstance(model, Model) else model()
        if left <= 0 or pack_highs(inp, whole, x, left, presolve=False)[1] is not Status.INFEASIBLE:
            return False
    return True


def no_good(model: Model, x: NDArray[np.float64]) -> Row:
    """Cut off the chosen levels and every choice that contains them or tighter ones.

    If the chosen (job, level) pairs cannot be packed, neither can any choice
    giving each of those jobs the same or an earlier deadline (its windows
    are shorter) plus other jobs: sum_{(i,p) chosen} sum_{p' <= p} s[i,p'] <= n - 1.
    """
    cols: list[int] = []
    chosen = 0
    for s in model.lay.s:
        for p, v in enumerate(s):
            if x[v] > 0.5:
                cols.extend(s[: p + 1])
                chosen += 1
    return (cols, [1.0] * len(cols), -float("inf"), float(chosen - 1))


Shape = dict[tuple[int, int], list[int]]


def shape_of(inp: LeaseInput, model: Model, x: NDArray[np.float64]) -> Shape:
    """The chosen levels as a packing sees them: (G_i, RL_i) -> sorted deadlines.

    Whether levels pack depends on the jobs' GPUs, terms and deadlines only,
    not on which jobs they are or what they earn.
    """
    shape: Shape = {}
    for job, s in zip(inp.lease_jobs, model.lay.s, strict=True):
        for p, v in enumerate(s):
            if x[v] > 0.5:
                shape.setdefault((job.gpus, job.terms), []).append(job.levels[p].due)
    for dues in shape.values():
        dues.sort()
    return shape


def dominates(shape: Shape, unpackable: Shape) -> bool:
    """Whether ``shape`` holds an unpackable choice: no packing is needed to reject it.

    True when every (G, RL) class of ``unpackable`` maps one to one onto jobs
    of ``shape`` of the same class with the same or earlier deadlines (the
    k-th earliest deadline of the class no later than ``unpackable``'s k-th):
    a packing of ``shape`` would give those jobs' terms to ``unpackable``'s
    (each within its deadline, no term fuller), so none exists. O(N log N).
    """
    for cls, dues in unpackable.items():
        mine = shape.get(cls, [])
        if len(mine) < len(dues) or any(a > b for a, b in zip(mine, dues, strict=False)):
            return False
    return True
