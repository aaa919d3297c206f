"""Chronus quasi-consolidation: each job on as few servers as it can (§3.4.2).

A job's placement solutions (the set A_i) are its spans k = k*..min(n,
eligible servers): its reward RW depends on the span only. Span k is
realized on the current free GPUs by the k eligible servers with the fewest
free GPUs whose rooms still add up to the job (a k-server best fit), one
worker each, then filling the smallest first (fragments get used up, the
leftover stays on the roomiest server). "Fewest" orders the servers by
(room in workers, free GPUs, GPU type, index) (:func:`rooms_of`): among
servers of equal room the one with fewer free GPUs is the better fit, and
servers of one type and free count are interchangeable, which lets local
search work on their counts (:mod:`~scheduling_opt.placement.counts`).
(Ordering equal rooms by index alone would differ only for jobs of several
GPUs per worker or on clusters of several GPU types.)
Quasi-consolidation places jobs in potential order (Eq. 8: the spread of RW
over the spans; ties: GPUs descending, then file order) on their smallest
feasible span, never below k*; a job that does not fit stays unplaced. This
is the Fig. 8(b) baseline and the completion of every leaf of local search.

Complexity: O(J S log S) per pass for J jobs and S servers.
"""

from __future__ import annotations

import time
from collections.abc import Sequence

from scheduling_opt.errors import InvalidInstanceError
from scheduling_opt.jsonpath import plain
from scheduling_opt.placement.bounds import heuristic_solution
from scheduling_opt.placement.model import Assignment, PlacementDecision, PlacementInput
from scheduling_opt.solution import Seed, Solution, named


def rooms_of(inp: PlacementInput, j: int, free: Sequence[int]) -> list[tuple[int, int]]:
    """``(workers that fit, server)`` of job ``j``'s servers with room, in best-fit order.

    The order is (room, free GPUs, GPU type, server index): among equal
    rooms the server with the fewest free GPUs first (best fit on GPUs, not
    only on workers), then by type and index, so servers of one type and
    free count are interchangeable (:mod:`~scheduling_opt.placement.counts`).
    """
    gpw, kind = inp.gpw[j], inp.server_type
    order = sorted((free[s] // gpw, free[s], kind[s], s) for s in inp.eligible[j] if free[s] >= gpw)
    return [(room, s) for room, _, _, s in order]


def _check_rooms(rooms: Sequence[tuple[int, int]]) -> None:
    last = 0
    for i, pair in enumerate(rooms):
        if not isinstance(pair, tuple) or len(pair) != 2:
            raise InvalidInstanceError(f"rooms[{i}]", f"must be a (room, server) pair: {pair!r}")
        room = plain(pair[0])
        if isinstance(room, bool) or not isinstance(room, int) or room < 1:
            raise InvalidInstanceError(f"rooms[{i}]", f"room must be an integer >= 1: {room!r}")
        if room < last:
            raise InvalidInstanceError(f"rooms[{i}]", "rooms must be in ascending order")
        last = room


def _check_count(value: object, name: str) -> int:
    value = plain(value)  # a numpy integer counts as an int
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise InvalidInstanceError(name, f"must be an integer >= 1, got {value!r}")
    return value


def _smallest_span(rooms: Sequence[tuple[int, int]], n: int) -> int:
    total = 0
    for k, (room, _) in enumerate(reversed(rooms), start=1):
        total += room
        if total >= n:
            return k
    return 0


def smallest_span(rooms: Sequence[tuple[int, int]], n: int) -> int:
    """The fewest of these servers that hold ``n`` workers (0: they cannot).

    Parameters
    ----------
    rooms : sequence of (int, int)
        ``(workers that fit, server)`` pairs in ascending room order, rooms >= 1.
    n : int
        Workers to place (>= 1).

    Returns
    -------
    int
        The smallest k such that the k roomiest servers hold ``n`` (0: none).

    Raises
    ------
    InvalidInstanceError
        If ``rooms`` is not ascending pairs of positive rooms, or ``n`` < 1.

    Examples
    --------
    >>> smallest_span([(1, 10), (2, 11), (3, 12), (8, 13)], 10)
    2

    References
    ----------
    Chronus §3.4.2 (quasi-consolidation).
    """
    _check_rooms(rooms)
    n = _check_count(n, "n")
    return _smallest_span(rooms, n)


def _place_span(rooms: Sequence[tuple[int, int]], n: int, k: int) -> Assignment | None:
    if k > n or k > len(rooms):
        return None
    window = sum(r for r, _ in rooms[:k])
    i = 0
    while window < n:
        if i + k >= len(rooms):
            return None
        window += rooms[i + k][0] - rooms[i][0]
        i += 1
    extra = n - k
    out = []
    for room, s in rooms[i : i + k]:
        w = 1 + min(extra, room - 1)
        extra -= w - 1
        out.append((s, w))
    return tuple(sorted(out))


def place_span(rooms: Sequence[tuple[int, int]], n: int, k: int) -> Assignment | None:
    """``n`` workers on exactly ``k`` servers: the k-server best fit.

    Parameters
    ----------
    rooms : sequence of (int, int)
        ``(workers that fit, server)`` pairs in ascending room order, rooms >= 1.
    n : int
        Workers to place (>= 1).
    k : int
        Servers to span (>= 1).

    Returns
    -------
    tuple of (int, int) or None
        ``((server, workers), ...)`` by server, or None when no k of these
        servers hold ``n`` workers with at least one each.

    Raises
    ------
    InvalidInstanceError
        If ``rooms`` is not ascending pairs of positive rooms, ``n`` < 1 or ``k`` < 1.

    Examples
    --------
    >>> rooms = [(1, 10), (2, 11), (3, 12), (8, 13)]
    >>> place_span(rooms, 4, 2)
    ((11, 2), (12, 2))
    >>> place_span(rooms, 20, 2) is None
    True

    References
    ----------
    Chronus §3.4.2 (placement solutions A_i).
    """
    _check_rooms(rooms)
    n = _check_count(n, "n")
    k = _check_count(k, "k")
    return _place_span(rooms, n, k)


def potential(inp: PlacementInput, j: int) -> float:
    """Eq. (8): the best minus the worst reward over job ``j``'s spans (0: none).

    Parameters
    ----------
    inp : PlacementInput
        The input.
    j : int
        A job index (into ``inp.job_ids``).

    Returns
    -------
    float
        ``max_k RW_j(k) - min_k RW_j(k)`` over the spans ``k*..max_span``.

    Examples
    --------
    >>> from scheduling_opt.model import Cluster, GpuType, Job, Server
    >>> cluster = Cluster((GpuType("V100"),), (Server("n0", "V100", 8), Server("n1", "V100", 8)))
    >>> potential(PlacementInput(cluster, [Job("a", 4, 4, 60.0)]), 0)  # 4 - 4 / 1.5
    1.3333333333333335

    References
    ----------
    Chronus §3.4.2, Eq. (8).
    """
    j = inp.job_index(j)
    values = [inp.rw[j][k] for k in inp.spans(j)]
    return max(values) - min(values) if values else 0.0


def potential_order(inp: PlacementInput, jobs: Sequence[int]) -> list[int]:
    """Algorithm 1 line 1: potential descending, then GPUs descending, then file order."""
    pot = {j: potential(inp, j) for j in jobs}
    return sorted(jobs, key=lambda j: (-pot[j], -inp.gpus(j), j))


def apply(inp: PlacementInput, j: int, assign: Assignment, free: list[int], sign: int) -> None:
    """Take (``sign`` 1) or give back (-1) the GPUs of ``assign`` in ``free``."""
    for s, w in assign:
        free[s] -= sign * w * inp.gpw[j]


def quasi_into(
    inp: PlacementInput, jobs: Sequence[int], free: list[int]
) -> tuple[dict[int, Assignment], float]:
    """Quasi-consolidation of ``jobs`` in order on ``free`` (updated in place).

    Each job on its consolidated span if it can, else on as few servers as
    possible; returns the assignments and their total reward.
    """
    placed: dict[int, Assignment] = {}
    reward = 0.0
    for j in jobs:
        rooms = rooms_of(inp, j, free)
        k = _smallest_span(rooms, inp.job_workers[j])
        if not k:
            continue
        k = max(k, inp.k_star[j])
        assign = _place_span(rooms, inp.job_workers[j], k)
        if assign is None:
            continue
        apply(inp, j, assign, free, 1)
        placed[j] = assign
        reward += inp.rw[j][k]
    return placed, reward


def quasi_assign(inp: PlacementInput) -> list[Assignment | None]:
    """Quasi-consolidation of every job in potential order: per job an assignment or None.

    Parameters
    ----------
    inp : PlacementInput
        The jobs to place and the free GPUs.

    Returns
    -------
    list of (Assignment or None)
        Per job (input order) its ``(server index, workers)`` pairs, None if
        it does not fit.

    Examples
    --------
    >>> from scheduling_opt.model import Cluster, GpuType, Job, Server
    >>> cluster = Cluster((GpuType("V100"),), (Server("n0", "V100", 8), Server("n1", "V100", 8)))
    >>> quasi_assign(PlacementInput(cluster, [Job("a", 6, 6, 60.0), Job("b", 4, 4, 60.0)]))
    [((0, 6),), ((1, 4),)]

    References
    ----------
    Chronus §3.4.2, Fig. 8(b).
    """
    placed, _ = quasi_into(inp, potential_order(inp, range(inp.n_jobs)), list(inp.free))
    return [placed.get(j) for j in range(inp.n_jobs)]


@named("quasi")
def quasi_consolidation(
    inp: PlacementInput, *, seed: Seed = None, time_limit: float | None = None
) -> Solution[PlacementDecision]:
    """Quasi-consolidation: fewest servers, potential order (method ``quasi``).

    Deterministic, one pass of O(J S log S): ``seed`` and ``time_limit``
    are accepted for the common calling convention only.

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
        Status ``feasible``, the total reward and the cheap upper bound.

    Examples
    --------
    >>> from scheduling_opt.model import Cluster, GpuType, Job, Server
    >>> cluster = Cluster((GpuType("V100"),), (Server("n0", "V100", 8), Server("n1", "V100", 8)))
    >>> sol = quasi_consolidation(PlacementInput(cluster, [Job("a", 4, 4, 60.0)]))
    >>> sol.objective, sol.decision.nodes_spanned
    (4.0, 1)

    References
    ----------
    Chronus §3.4.2 and Fig. 8(b) (quasi-consolidation baseline).
    """
    start = time.perf_counter()
    return heuristic_solution(inp, quasi_assign(inp), start)
