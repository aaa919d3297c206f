"""What every placement method shares: the parsed input, the reward, the result.

A placement input lists the servers training may use (with the GPUs the
current placement leaves free) and the jobs to place (workers, GPUs per
worker, eligible servers, and the allocation reward of every span). Methods
return, per job, ``((server index, workers), ...)`` or None (unplaced);
:func:`make_result` turns that into a :class:`PlacementResult`.

Allocation reward (Chronus §3.4.2, Eq. 7): a job of G GPUs spread over k
servers earns ``RW(k) = G * speed(k) / speed(k*)``, k* its consolidated span
(the fewest servers that can hold it: ``ceil(n / max workers per server)``,
``ceil(G / 8)`` on 8-GPU nodes). An unplaced job earns 0. Building the input
is O(jobs * servers).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from scheduling_opt.instance import Instance
from scheduling_opt.result import Status
from scheduling_opt.scaling import SpeedModel

#: Chronus §5.3: the joint search space of the exhaustively searched jobs.
DEFAULT_SEARCH_SPACE = 100_000

Assignment = tuple[tuple[int, int], ...]
"""One job's placement: ``((server index, workers), ...)``, servers ascending."""


@dataclass(frozen=True, slots=True)
class PlacementInput:
    """A parsed placement instance as flat tuples the methods index.

    Servers (index ``s``) are the training-usable servers in file order;
    ``free[s]`` = GPUs the current placement leaves free, ``loan[s]`` = an
    inference server on loan, ``busy[s]`` = holds workers already. Jobs
    (index ``j``) are the jobs without placement rows, in file order:
    ``workers[j]`` workers of ``gpw[j]`` GPUs, ``base[j]`` of them the base
    demand (``min_workers``; all of them for an inelastic job),
    ``job_type[j]`` the index of its GPU type (-1: any; ``server_type[s]``
    indexes the same list of ``n_types`` types), ``eligible[j]`` the servers
    of the job's GPU type, ``k_star[j]`` its
    consolidated span (``workers + 1`` if no server can hold a worker) and
    ``rw[j][k]`` its reward on k servers (``rw[j][0] = 0``, unplaced),
    computed from ``speed`` and the job's model name ``models[j]``.
    ``search_space`` is local search's |S|.
    """

    instance: Instance
    server_ids: tuple[str, ...]
    cap: tuple[int, ...]
    free: tuple[int, ...]
    loan: tuple[bool, ...]
    busy: tuple[bool, ...]
    server_type: tuple[int, ...]
    n_types: int
    job_ids: tuple[str, ...]
    workers: tuple[int, ...]
    gpw: tuple[int, ...]
    base: tuple[int, ...]
    elastic: tuple[bool, ...]
    job_type: tuple[int, ...]
    eligible: tuple[tuple[int, ...], ...]
    k_star: tuple[int, ...]
    rw: tuple[tuple[float, ...], ...]
    speed: SpeedModel
    models: tuple[str | None, ...]
    search_space: int = DEFAULT_SEARCH_SPACE

    @property
    def n_servers(self) -> int:
        return len(self.server_ids)

    @property
    def n_jobs(self) -> int:
        return len(self.job_ids)

    def gpus(self, j: int) -> int:
        return self.workers[j] * self.gpw[j]

    def max_span(self, j: int) -> int:
        """The most servers job ``j`` can span: one worker each."""
        return min(self.workers[j], len(self.eligible[j]))

    def best_rw(self, j: int) -> float:
        """The largest reward job ``j`` can earn on any span."""
        return max(self.rw[j])


def reward_table(
    speed: SpeedModel, model: str | None, workers: int, gpw: int, k_star: int
) -> tuple[float, ...]:
    """Eq. (7) for spans 0..workers: ``G * speed(k) / speed(k*)``, 0 below k*."""
    gpus = workers * gpw
    if k_star > workers:
        return (0.0,) * (workers + 1)
    ref = speed.speed(model, gpus, k_star)
    return tuple(
        gpus * speed.speed(model, gpus, k) / ref if k >= k_star else 0.0 for k in range(workers + 1)
    )


def consolidated_span(workers: int, gpw: int, caps: Sequence[int]) -> int:
    """The fewest servers of capacities ``caps`` that hold ``workers`` workers."""
    per_server = max((c // gpw for c in caps), default=0)
    return math.ceil(workers / per_server) if per_server else workers + 1


# --------------------------------------------------------------------------- result


@dataclass(frozen=True, slots=True)
class PlacementResult:
    """Where each placed job's workers go, the unplaced jobs and the total RW.

    ``objective`` is the total allocation reward (Eq. 7 summed over placed
    jobs); ``nodes_spanned`` the servers summed over placed jobs.
    """

    status: Status
    objective: float | None
    seconds: float
    rows: tuple[tuple[str, str, int], ...]
    unplaced: tuple[str, ...]
    nodes_spanned: int
    method: str = ""

    def decision(self) -> dict[str, Any]:
        return {
            "placement": [{"job": j, "server": s, "workers": w} for j, s, w in self.rows],
            "unplaced": list(self.unplaced),
            "objective": 0.0 if self.objective is None else self.objective,
            "nodes_spanned": self.nodes_spanned,
        }

    def servers_of(self, job_id: str) -> dict[str, int]:
        """``{server: workers}`` of one placed job (empty if unplaced)."""
        return {s: w for j, s, w in self.rows if j == job_id}


def total_rw(inp: PlacementInput, assign: Sequence[Assignment | None]) -> float:
    """Chronus Eq. (7): the sum of the placed jobs' allocation rewards RW(span), O(J)."""
    return math.fsum(inp.rw[j][len(a)] for j, a in enumerate(assign) if a)


def make_result(
    inp: PlacementInput,
    assign: Sequence[Assignment | None],
    status: Status,
    seconds: float,
    method: str,
) -> PlacementResult:
    """The result of placing job ``j`` as ``assign[j]`` (None or empty: unplaced)."""
    rows = tuple(
        (inp.job_ids[j], inp.server_ids[s], w)
        for j, a in enumerate(assign)
        if a
        for s, w in sorted(a)
    )
    unplaced = tuple(inp.job_ids[j] for j, a in enumerate(assign) if not a)
    spanned = sum(len(a) for a in assign if a)
    return PlacementResult(status, total_rw(inp, assign), seconds, rows, unplaced, spanned, method)


def by_job(
    mapping: Mapping[int, Sequence[tuple[int, int]]], n_jobs: int
) -> list[Assignment | None]:
    """``{job: [(server, workers)]}`` -> the per-job list :func:`make_result` takes."""
    return [tuple(sorted(mapping[j])) if mapping.get(j) else None for j in range(n_jobs)]
