"""Chronus round-up consolidation of the jobs to place (§3.4.1, method ``round-up``).

Every job's GPU demand is rounded up (:func:`~scheduling_opt.placement.round_up`)
against its node size, the largest server it may use; the rounded demands
are placed by Proposition 1's construction in decreasing order: multi-node
jobs on whole free servers (file order), the others by best fit on the GPUs
not yet reserved. On free power-of-two nodes this is the buddy construction
of the proof, and every free count stays a multiple of the current demand.
Rounded-up GPUs stay reserved during the construction (what Eq. 6 charges)
but are free in the result. A job the construction cannot place stays
unplaced (Chronus keeps it pending). Local search places its large jobs
(two nodes' GPUs or more) the same way first (:func:`consolidate_into`).

Complexity: O(J (log J + S)) for J jobs and S servers.
"""

from __future__ import annotations

import time
from collections.abc import Sequence

from scheduling_opt.placement.bounds import heuristic_solution
from scheduling_opt.placement.model import Assignment, PlacementDecision, PlacementInput
from scheduling_opt.placement.rounding import best_fit, round_up, whole_servers
from scheduling_opt.solution import Seed, Solution, named


def node_size_of(inp: PlacementInput, j: int) -> int:
    """The node size job ``j`` is rounded against: its largest eligible server."""
    eligible = inp.eligible[j]
    if len(eligible) == len(inp.cap):
        # Eligible servers are distinct server indices: here every server.
        return max(inp.cap, default=1)
    return max((inp.cap[s] for s in eligible), default=1)


def _fill(servers: Sequence[int], n: int, per_server: int) -> Assignment:
    out = []
    for s in servers:
        w = min(n, per_server)
        if w:
            out.append((s, w))
        n -= w
    return tuple(out)


def consolidate_into(
    inp: PlacementInput, jobs: Sequence[int], free: list[int], *, keep_order: bool = False
) -> dict[int, Assignment]:
    """Round-up consolidation of ``jobs`` on ``free`` (updated in place).

    Jobs go in decreasing rounded size (the buddy order), or in the given
    order with ``keep_order``. Returns ``{job: assignment}`` for the jobs
    placed on their consolidated span.
    """
    avail = list(free)
    placed: dict[int, Assignment] = {}
    rounded = {j: round_up(inp.gpus(j), node_size_of(inp, j)) for j in jobs}
    order = list(jobs) if keep_order else sorted(jobs, key=lambda j: (-rounded[j], j))
    for j in order:
        size, gpw, n = node_size_of(inp, j), inp.gpw[j], inp.job_workers[j]
        if inp.k_star[j] > inp.max_span(j):
            continue
        if rounded[j] > size:
            full = [s for s in inp.eligible[j] if inp.cap[s] == size]
            picked = whole_servers(avail, inp.cap, full, inp.k_star[j])
            if not picked:
                continue
            assign = _fill(picked, n, size // gpw)
            for s in picked:
                avail[s] = 0
        else:
            s = best_fit(avail, inp.eligible[j], rounded[j])
            if s < 0:
                continue
            assign = ((s, n),)
            avail[s] -= rounded[j]
        for s, w in assign:
            free[s] -= w * gpw
        placed[j] = assign
    return placed


def consolidate(inp: PlacementInput) -> list[Assignment | None]:
    """Every job by round-up consolidation: per job an assignment or None (unplaced).

    Parameters
    ----------
    inp : PlacementInput
        The jobs to place and the free GPUs.

    Returns
    -------
    list of (Assignment or None)
        Per job (input order) its ``(server index, workers)`` pairs on its
        consolidated span, None if the construction cannot place it.

    Examples
    --------
    >>> from scheduling_opt.model import Cluster, GpuType, Job, Server
    >>> cluster = Cluster((GpuType("V100"),), (Server("n0", "V100", 8), Server("n1", "V100", 8)))
    >>> consolidate(PlacementInput(cluster, [Job("a", 12, 12, 60.0)]))
    [((0, 8), (1, 4))]

    References
    ----------
    Chronus §3.4.1 (RoundUp, Proposition 1).
    """
    placed = consolidate_into(inp, range(inp.n_jobs), list(inp.free))
    return [placed.get(j) for j in range(inp.n_jobs)]


@named("round-up")
def round_up_consolidation(
    inp: PlacementInput, *, seed: Seed = None, time_limit: float | None = None
) -> Solution[PlacementDecision]:
    """RoundUp + Proposition 1 consolidation of every job (method ``round-up``).

    Deterministic, one pass of O(J (log J + S)): ``seed`` and
    ``time_limit`` are accepted for the common calling convention only.

    Parameters
    ----------
    inp : PlacementInput
        The jobs to place and the free GPUs.
    seed : int, numpy Generator or None
        Unused.
    time_limit : float, optional
        Unused.

    Returns
    -------
    Solution[PlacementDecision]
        Status ``feasible``; every placed job on its consolidated span; the
        cheap upper bound.

    Examples
    --------
    >>> from scheduling_opt.model import Cluster, GpuType, Job, Server
    >>> cluster = Cluster((GpuType("V100"),), (Server("n0", "V100", 8), Server("n1", "V100", 8)))
    >>> jobs = [Job("a", 5, 5, 60.0), Job("b", 3, 3, 60.0), Job("c", 6, 6, 60.0)]
    >>> # Rounded: a 8, b 4, c 8; the two 8s take whole nodes first, b waits.
    >>> sol = round_up_consolidation(PlacementInput(cluster, jobs))
    >>> sol.decision.rows, sol.decision.unplaced
    ((('a', 'n0', 5), ('c', 'n1', 6)), ('b',))

    References
    ----------
    Chronus §3.4.1 (RoundUp, Proposition 1).
    """
    start = time.perf_counter()
    return heuristic_solution(inp, consolidate(inp), start)
