"""Chronus local search (Algorithm 1, §3.4.2): the default placement method.

Jobs are sorted by potential (the spread of their allocation reward RW over
their possible spans, Eq. 8); the top K, whose joint search space stays
under |S| (100,000, §5.3), are searched exhaustively, the others placed by
quasi-consolidation; the highest total RW wins.

Our precise readings:

- Jobs of at least two nodes' GPUs (16+ on 8-GPU nodes) are placed first by
  round-up consolidation (§3.4.2), in potential order (they all take whole
  servers, so the order keeps the construction valid and lets the most
  placement-sensitive choose first); those it cannot place join the rest.
- Ties: potential descending, then GPUs descending, then file order. The
  exhaustive search keeps the first best combination (spans tried
  ascending) and prunes a branch whose reward so far plus a bound on the
  rest (the best reward of every job still to place, and the free GPUs
  times the best reward per GPU) cannot beat the incumbent: the answer
  equals Algorithm 1's full enumeration. The search space A_i also holds
  the empty placement (the job waits): when the jobs do not all fit,
  leaving one out can let more reward in (measured: mean gap to exact on
  16 nodes 1.9% -> 0.3%).
- The search is bounded by work (|S| leaves) and also by the time limit:
  past it, the best combination found so far is returned (still
  ``feasible``; the message says so). Every search reaches a complete
  answer first (its first leaf), so an answer always exists.

- Then :func:`~scheduling_opt.placement.improve.improve` (not in the
  paper): ejection moves that consolidate a spread or waiting job by moving
  the new jobs in its way, each evaluated by its delta (O(jobs on the moved
  servers)); on the generated 96/120-server instances it closes most of
  Algorithm 1's gap to the optimum (docs/placement.md).

Complexity: at most |S| leaves of one quasi-consolidation pass each
(O(J S log S)), far fewer with pruning.
"""

from __future__ import annotations

import time
from collections.abc import Sequence

from scheduling_opt.errors import InvalidInstanceError
from scheduling_opt.jsonpath import plain
from scheduling_opt.placement.bounds import heuristic_solution
from scheduling_opt.placement.consolidation import consolidate_into, node_size_of
from scheduling_opt.placement.improve import improve
from scheduling_opt.placement.model import Assignment, PlacementDecision, PlacementInput
from scheduling_opt.placement.quasi import (
    _place_span,
    apply,
    potential_order,
    quasi_into,
    rooms_of,
)
from scheduling_opt.solution import Seed, Solution, time_limit_of


def search_prefix(inp: PlacementInput, order: Sequence[int], search_space: int) -> int:
    """Algorithm 1 line 2: the largest K with prod |A_i| over the top K <= |S|.

    |A_i| counts the spans and the empty placement.
    """
    size, k = 1, 0
    for j in order:
        size *= len(inp.spans(j)) + 1
        if size > search_space:
            break
        k += 1
    return k


class _OutOfTimeError(Exception):
    """Raised inside the search when the deadline passes (an incumbent exists)."""


class _Search:
    """Algorithm 1's exhaustive search over the top-K jobs' spans, with bounds."""

    def __init__(
        self, inp: PlacementInput, top: Sequence[int], rest: Sequence[int], deadline: float
    ) -> None:
        self.inp, self.top, self.rest = inp, list(top), list(rest)
        self.deadline = deadline
        tail = sum(inp.best_rw(j) for j in rest)
        self.bound = [0.0] * (len(top) + 1)
        self.bound[len(top)] = tail
        for i in reversed(range(len(top))):
            self.bound[i] = self.bound[i + 1] + inp.best_rw(top[i])
        # RW per GPU never exceeds this: the remaining free GPUs bound the rest too.
        self.per_gpu = max((inp.best_rw(j) / inp.gpus(j) for j in (*top, *rest)), default=0.0)
        self.best = -1.0
        self.best_assign: dict[int, Assignment] = {}
        self.leaves = 0
        self.stopped = False

    def run(self, free: list[int]) -> dict[int, Assignment]:
        try:
            self._visit(0, free, 0.0, {})
        except _OutOfTimeError:
            self.stopped = True
        return self.best_assign

    def _leaf(self, free: list[int], reward: float, chosen: dict[int, Assignment]) -> None:
        self.leaves += 1
        placed, tail = quasi_into(self.inp, self.rest, list(free))
        if reward + tail > self.best + 1e-9:
            self.best = reward + tail
            self.best_assign = chosen | placed

    def _visit(self, i: int, free: list[int], reward: float, chosen: dict[int, Assignment]) -> None:
        if self.leaves and time.perf_counter() > self.deadline:
            raise _OutOfTimeError
        bound = min(self.bound[i], self.per_gpu * sum(free))
        if reward + bound <= self.best + 1e-9:
            return
        if i == len(self.top):
            self._leaf(free, reward, chosen)
            return
        inp, j = self.inp, self.top[i]
        rooms = rooms_of(inp, j, free)
        for k in inp.spans(j):
            assign = _place_span(rooms, inp.job_workers[j], k)
            if assign is None:
                continue
            apply(inp, j, assign, free, 1)
            self._visit(i + 1, free, reward + inp.rw[j][k], chosen | {j: assign})
            apply(inp, j, assign, free, -1)
        # Leaving the job out (span 0) may let more reward in when not all fit.
        self._visit(i + 1, free, reward, chosen)


def _large(inp: PlacementInput, j: int) -> bool:
    return inp.gpus(j) >= 2 * node_size_of(inp, j)


def search_assign(
    inp: PlacementInput,
    search_space: int | None = None,
    *,
    large_first: bool = False,
    deadline: float = float("inf"),
) -> tuple[list[Assignment | None], bool]:
    """Algorithm 1 over every job: per job an assignment or None, and whether it stopped early.

    Parameters
    ----------
    inp : PlacementInput
        The jobs to place and the free GPUs.
    search_space : int, optional
        |S| (default ``inp.search_space``); 1 searches nothing
        (quasi-consolidation in potential order).
    large_first : bool
        §3.4.2's split: jobs of two nodes' GPUs or more first, by round-up
        consolidation (off in the ``local-search`` method, see docs).
    deadline : float
        A ``time.perf_counter()`` value past which the search returns its
        best combination so far (default: none).

    Returns
    -------
    list of (Assignment or None)
        Per job (input order) its ``(server index, workers)`` pairs or None.
    bool
        Whether the deadline stopped the search.

    Raises
    ------
    InvalidInstanceError
        If ``search_space`` is not an integer >= 1.

    Examples
    --------
    >>> from scheduling_opt.model import Cluster, GpuType, Job, Server
    >>> cluster = Cluster((GpuType("V100"),), (Server("n0", "V100", 8), Server("n1", "V100", 8)))
    >>> search_assign(PlacementInput(cluster, [Job("a", 6, 6, 60.0), Job("b", 4, 4, 60.0)]))
    ([((0, 6),), ((1, 4),)], False)

    References
    ----------
    Chronus §3.4.2 (Algorithm 1), §5.3 (|S|).
    """
    limit = inp.search_space if search_space is None else plain(search_space)
    if isinstance(limit, bool) or not isinstance(limit, int) or limit < 1:
        raise InvalidInstanceError("search_space", f"must be an integer >= 1, got {limit!r}")
    free = list(inp.free)
    placed: dict[int, Assignment] = {}
    if large_first:
        # Large jobs all take whole servers, so their order does not break
        # the buddy construction; the most placement-sensitive go first.
        large = potential_order(inp, [j for j in range(inp.n_jobs) if _large(inp, j)])
        placed = consolidate_into(inp, large, free, keep_order=True)
    order = potential_order(inp, [j for j in range(inp.n_jobs) if j not in placed])
    k = search_prefix(inp, order, limit)
    search = _Search(inp, order[:k], order[k:], deadline)
    placed |= search.run(free)
    return [placed.get(j) for j in range(inp.n_jobs)], search.stopped


def chronus_local_search(
    inp: PlacementInput,
    *,
    seed: Seed = None,
    time_limit: float | None = None,
    improve_moves: bool = True,
) -> Solution[PlacementDecision]:
    """Chronus Algorithm 1 with |S| = ``inp.search_space``, then ejection moves (``local-search``).

    Deterministic (``seed`` is unused). Bounded by work (at most |S|
    leaves, then at most :data:`~scheduling_opt.placement.improve.MAX_MOVES`
    kept moves of :func:`~scheduling_opt.placement.improve.improve`) and by
    ``time_limit``: a search still running at the limit returns its best
    combination so far, still ``feasible``, with a message.

    Parameters
    ----------
    inp : PlacementInput
        The jobs to place, the free GPUs and |S| (``search_space``).
    seed : int, numpy Generator or None
        Unused.
    time_limit : float, optional
        Seconds (default :data:`~scheduling_opt.solution.DEFAULT_TIME_LIMIT`).
    improve_moves : bool
        Run the ejection moves after Algorithm 1 (False: Algorithm 1 alone,
        the paper's method).

    Returns
    -------
    Solution[PlacementDecision]
        Status ``feasible``, the total reward and the cheap upper bound.

    Raises
    ------
    ValueError
        If ``time_limit`` is not a positive number.

    Examples
    --------
    >>> from scheduling_opt import load
    >>> from scheduling_opt.placement.io import read
    >>> sol = chronus_local_search(read(load("instances/placement-chronus-example.json")))
    >>> sol.status.value, round(sol.objective, 4), sol.bound >= sol.objective
    ('feasible', 7.5815, True)

    References
    ----------
    Chronus §3.4.2 (Algorithm 1, Eq. 8), §5.3 (|S| = 100,000).
    """
    start = time.perf_counter()
    deadline = start + time_limit_of(time_limit)
    assign, stopped = search_assign(inp, deadline=deadline)
    if improve_moves:
        assign = improve(inp, assign, deadline=deadline)
    message = "stopped at the time limit: best combination so far" if stopped else ""
    return heuristic_solution(inp, assign, start, message)
