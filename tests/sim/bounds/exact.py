"""Exact offline optima of tiny traces, written apart from the bounds they check.

A *slot schedule* runs each rigid job on its ``g_j`` GPUs in whole unit
slots ``[t, t + 1)`` from its (integer) submit time, ``w_j`` slots in all
(preemption between slots is free), with at most G GPUs busy per slot.
Every slot schedule is one the simulator produces (:class:`Replay` runs it
through the engine; a job may span both servers, so any set of jobs whose
GPUs sum to at most G fits), so a valid bound can never beat its best
value. Two independent solvers of the best slot schedule:

- :func:`milp`: a time-indexed MILP (scipy's HiGHS, directly);
- :func:`brute_force`: dynamic programming over (slot, work left per job),
  trying every subset of the released unfinished jobs in each slot.

Objectives: ``"jct"`` (mean of C_j - r_j), ``"makespan"`` (max C_j),
``"wdmr"`` (mean over SLO jobs of (100 - reward) / 99, rewards decreasing
in the steps as in the traces).
"""

from __future__ import annotations

import functools
import itertools
import math
from collections.abc import Sequence

import numpy as np
from scipy.optimize import Bounds, LinearConstraint
from scipy.optimize import milp as scipy_milp

from scheduling_opt.sim import Decision, SimJob, View


def horizon(jobs: Sequence[SimJob]) -> int:
    """Slots enough for some optimal slot schedule: the last submit plus all the work."""
    return int(max(j.submit for j in jobs) + sum(j.work for j in jobs))


def _reward(job: SimJob, end: float) -> float:
    for t, v in job.deadlines:
        if end <= t:
            return min(max(v, 1.0), 100.0)
    return 1.0


def _wdmr(rewards: Sequence[float]) -> float:
    return sum((100.0 - r) / 99.0 for r in rewards) / len(rewards) if rewards else 0.0


def milp(jobs: Sequence[SimJob], gpus: int, objective: str) -> tuple[float, list[set[int]]]:
    """The best slot schedule's value and its slots (``slots[t]``: the jobs run in slot t)."""
    slots_n = horizon(jobs)
    n = len(jobs)
    var: dict[tuple[int, int], int] = {}
    for j, job in enumerate(jobs):
        for t in range(int(job.submit), slots_n):
            var[(j, t)] = len(var)
    nx = len(var)
    extra = n if objective in ("jct", "wdmr") else 1  # C_j, or C_max, or y_jl below
    steps = [(j, step) for j, job in enumerate(jobs) for step in range(len(job.deadlines))]
    if objective == "wdmr":
        extra = len(steps)
    nv = nx + extra
    rows: list[np.ndarray] = []
    lo: list[float] = []
    hi: list[float] = []

    def row(coef: dict[int, float], low: float, high: float) -> None:
        a = np.zeros(nv)
        for k, v in coef.items():
            a[k] += v
        rows.append(a)
        lo.append(low)
        hi.append(high)

    for j, job in enumerate(jobs):
        row({var[(j, t)]: 1.0 for t in range(int(job.submit), slots_n)}, job.work, job.work)
    for t in range(slots_n):
        row({var[(j, t)]: float(jobs[j].gpus) for j in range(n) if (j, t) in var}, 0.0, gpus)
    c = np.zeros(nv)
    integrality = np.zeros(nv)
    integrality[:nx] = 1
    if objective == "jct":
        for j, job in enumerate(jobs):
            c[nx + j] = 1.0 / n
            for t in range(int(job.submit), slots_n):
                row({nx + j: 1.0, var[(j, t)]: -(t + 1.0)}, 0.0, math.inf)
    elif objective == "makespan":
        c[nx] = 1.0
        for (_, t), k in var.items():
            row({nx: 1.0, k: -(t + 1.0)}, 0.0, math.inf)
    else:
        slo = [j for j, job in enumerate(jobs) if job.deadlines]
        integrality[nx:] = 1
        for k, (j, step) in enumerate(steps):
            reward = min(max(jobs[j].deadlines[step][1], 1.0), 100.0)
            c[nx + k] = -(reward - 1.0)  # maximize sum of (reward - 1) over met steps
            d = jobs[j].deadlines[step][0]
            for t in range(int(jobs[j].submit), slots_n):
                if t + 1 > d:  # a slot ending after d: the step is missed if it runs
                    row({var[(j, t)]: 1.0, nx + k: 1.0}, -math.inf, 1.0)
        for j in slo:
            row({nx + k: 1.0 for k, (jj, _) in enumerate(steps) if jj == j}, 0.0, 1.0)
    a = np.array(rows)
    bounds = Bounds(np.zeros(nv), np.concatenate([np.ones(nx), np.full(extra, np.inf)]))
    res = scipy_milp(
        c, constraints=LinearConstraint(a, lo, hi), integrality=integrality, bounds=bounds
    )
    assert res.status == 0, res.message
    x = np.round(res.x[:nx]).astype(int)
    slots: list[set[int]] = [set() for _ in range(slots_n)]
    for (j, t), k in var.items():
        if x[k]:
            slots[t].add(j)
    value = value_of(jobs, slots, objective)
    return value, slots


def value_of(jobs: Sequence[SimJob], slots: Sequence[set[int]], objective: str) -> float:
    """The objective of a slot schedule, recomputed from its slots."""
    ends = [0.0] * len(jobs)
    for t, s in enumerate(slots):
        for j in s:
            ends[j] = t + 1.0
    if objective == "jct":
        return sum(e - j.submit for e, j in zip(ends, jobs, strict=True)) / len(jobs)
    if objective == "makespan":
        return max(ends)
    return _wdmr([_reward(j, e) for j, e in zip(jobs, ends, strict=True) if j.deadlines])


def brute_force(jobs: Sequence[SimJob], gpus: int, objective: str) -> float:
    """The best slot schedule's value by dynamic programming over every subset per slot."""
    slots_n = horizon(jobs)
    n = len(jobs)
    work = tuple(int(j.work) for j in jobs)
    slo = [j for j in jobs if j.deadlines]

    def cost(j: int, end: int) -> float:
        if objective == "jct":
            return end - jobs[j].submit
        if objective == "makespan":
            return float(end)
        return (100.0 - _reward(jobs[j], end)) / 99.0 if jobs[j].deadlines else 0.0

    @functools.cache
    def best(t: int, left: tuple[int, ...]) -> float:
        if not any(left):
            return 0.0
        if t >= slots_n:
            return math.inf
        ready = [j for j in range(n) if left[j] > 0 and jobs[j].submit <= t]
        out = math.inf
        for k in range(len(ready) + 1):
            for chosen in itertools.combinations(ready, k):
                if sum(jobs[j].gpus for j in chosen) > gpus:
                    continue
                nxt = list(left)
                here = 0.0 if objective != "makespan" else -math.inf
                for j in chosen:
                    nxt[j] -= 1
                    if nxt[j] == 0:
                        c = cost(j, t + 1)
                        here = max(here, c) if objective == "makespan" else here + c
                rest = best(t + 1, tuple(nxt))
                total = max(here, rest) if objective == "makespan" else here + rest
                out = min(out, total)
        return out

    value = best(0, work)
    if objective == "jct":
        return value / n
    if objective == "wdmr":
        return value / len(slo) if slo else 0.0
    return value


class Replay:
    """A policy that runs a slot schedule: at each integer time, exactly that slot's jobs."""

    name = "replay"

    def __init__(self, slots: Sequence[set[int]]) -> None:
        self.slots = list(slots)

    def decide(self, view: View) -> Decision:
        t = round(view.now)
        want = self.slots[t] if abs(view.now - t) < 1e-9 and t < len(self.slots) else None
        wake = float(t + 1) if t + 1 < len(self.slots) else None
        if want is None:
            return Decision(wake_at=wake if wake is not None and wake > view.now else None)
        preempt = tuple(i for i in view.running if i not in want)
        free = list(view.free)
        for i in preempt:
            for s, g in view.running[i].placement:
                free[s] += g
        starts = []
        for i in sorted(want):
            if i not in view.pending:
                continue
            need = view.pending[i].job.gpus
            place = []
            for s in range(len(free)):
                take = min(free[s], need)
                if take:
                    place.append((s, take))
                    free[s] -= take
                    need -= take
            assert need == 0, "the slot's jobs do not fit"
            starts.append((i, tuple(place)))
        return Decision(starts=tuple(starts), preempt=preempt, wake_at=wake)
