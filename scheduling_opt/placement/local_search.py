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
  ascending; rewards within 1e-9 are ties) and prunes a branch whose reward
  so far plus a bound on the rest (the best reward of every job still to
  place, and the free GPUs times the best reward per GPU) cannot beat the
  incumbent: the answer equals Algorithm 1's full enumeration. The search
  space A_i also holds the empty placement (the job waits): when the jobs
  do not all fit, leaving one out can let more reward in (measured: mean
  gap to exact on 16 nodes 1.9% -> 0.3%).
- The search works on server counts (:mod:`~scheduling_opt.placement.
  counts`): the servers per (GPU type, free GPUs), with the best-fit order
  of :func:`~scheduling_opt.placement.quasi.rooms_of`, so two combinations
  that leave the same counts are one node (the search skips a node it has
  explored with at least this reward, and completes each distinct leaf
  state once), and a completion costs O(cells) per placed job instead of
  O(S log S). On the 443-server, 1,000-job instances the 65,536
  combinations leave 1,200-3,900 distinct states. The chosen combination is
  then realized on servers.
- The search is bounded by work: |S| combinations, and ``work_limit`` jobs
  examined by the completions (``local-search``: :data:`SEARCH_WORK`); past
  it, or past the deadline (a safety net), the best combination so far is
  returned (still ``feasible``; the message says so). Every search reaches
  a complete answer first (its first leaf), so an answer always exists.

- Then :func:`~scheduling_opt.placement.improve.improve` (not in the
  paper): fill, swap-out and ejection moves, each evaluated by its delta;
  on the generated instances they close most of Algorithm 1's gap to the
  optimum, and all of it at 443 servers and 1,000 jobs (docs/placement.md).

Complexity: at most |S| leaves of one completion each (O(J cells) on
counts, O(J S log S) on servers past :data:`~scheduling_opt.placement.
counts.MAX_CELLS`), far fewer with pruning and shared states.
"""

from __future__ import annotations

import time
from collections.abc import Sequence

from scheduling_opt.errors import InvalidInstanceError
from scheduling_opt.jsonpath import plain
from scheduling_opt.placement.bounds import heuristic_solution
from scheduling_opt.placement.consolidation import consolidate_into, node_size_of
from scheduling_opt.placement.counts import (
    counts_of,
    free_by_type,
    job_cells,
    pass_plan,
    pass_value,
    shape_of,
    take,
)
from scheduling_opt.placement.improve import improve
from scheduling_opt.placement.model import Assignment, PlacementDecision, PlacementInput
from scheduling_opt.placement.quasi import (
    _place_span,
    apply,
    potential_order,
    quasi_into,
    rooms_of,
)
from scheduling_opt.solution import Seed, Solution, named, time_limit_of

#: Jobs Algorithm 1's completions examine at most in ``local-search`` (and in
#: the exact methods' warm starts): the full enumeration on the generated
#: 443-server, 1,000-job instances examines 118,000-633,000 (0.3-1.5 s of
#: CPU); on 1,000 servers and fewer jobs it finishes far below this.
SEARCH_WORK = 100_000


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


def on_counts(inp: PlacementInput) -> bool:
    """Whether the search works on server counts: once servers outnumber the count cells."""
    shape = shape_of(inp)
    return shape is not None and shape.size < inp.n_servers


class _StopError(Exception):
    """Raised inside the search at its work limit or deadline (an incumbent exists)."""


#: Rewards closer than this are ties (the first combination found is kept).
_EPS = 1e-9


class _Search:
    """Algorithm 1's exhaustive search over the top-K jobs' spans, with bounds and memory.

    A node is (depth ``i``, the free GPUs left) with the reward of the top
    jobs placed so far. The search is Algorithm 1's depth-first
    enumeration (spans ascending, then the empty placement) with three
    exact savings: a branch is pruned when its reward plus a bound on the
    rest cannot beat the incumbent; a node already explored with at least
    this reward (another order of the same placements reached the same free
    GPUs) is skipped, since its leaves can only repeat worse or equal ones;
    and a leaf's completion (quasi-consolidation of the rest) is computed
    once per distinct free state. On counts (:mod:`~scheduling_opt.
    placement.counts`) a state is the servers per (type, free GPUs), so
    states that differ only by which identical server a job took are one;
    on clusters with fewer servers than count cells (or servers of very
    many GPUs) a state is the free GPUs per server.
    """

    def __init__(
        self,
        inp: PlacementInput,
        top: Sequence[int],
        rest: Sequence[int],
        free: Sequence[int],
        deadline: float,
        work_limit: float,
    ) -> None:
        self.inp, self.top, self.rest = inp, list(top), list(rest)
        self.deadline, self.work_limit = deadline, work_limit
        tail = sum(inp.best_rw(j) for j in rest)
        self.bound = [0.0] * (len(top) + 1)
        self.bound[len(top)] = tail
        for i in reversed(range(len(top))):
            self.bound[i] = self.bound[i + 1] + inp.best_rw(top[i])
        # RW per GPU never exceeds this: the remaining free GPUs bound the rest too.
        self.per_gpu = max((inp.best_rw(j) / inp.gpus(j) for j in (*top, *rest)), default=0.0)
        self.best = -1.0
        self.best_choice: tuple[int, ...] = ()
        self.leaves = 0
        self.work = 0
        self.stopped = False
        self.seen: list[dict[tuple[int, ...], float]] = [{} for _ in range(len(top) + 1)]
        # Completion of a leaf state: (value, exact) or (an upper bound, not exact).
        self.done: dict[tuple[int, ...], tuple[float, bool]] = {}
        self.shape = shape_of(inp) if on_counts(inp) else None
        if self.shape is not None:
            self.plan = pass_plan(inp, self.shape, rest)
            self.cells = [job_cells(inp, self.shape, j) for j in top]
            self.state = counts_of(inp, self.shape, free)
        else:
            self.state = list(free)

    def run(self) -> tuple[int, ...]:
        """The spans of the top jobs (0: left out) of the best combination found."""
        try:
            if self.shape is not None:
                self._visit_counts(0, self.state, free_by_type(self.shape, self.state), 0.0, ())
            else:
                self._visit_servers(0, self.state, 0.0, ())
        except _StopError:
            self.stopped = True
        return self.best_choice

    def _enter(self, i: int, key: tuple[int, ...], reward: float, total: int) -> bool:
        """Whether node ``(i, key)`` with ``reward`` may hold a better leaf."""
        if self.leaves and (self.work > self.work_limit or time.perf_counter() > self.deadline):
            raise _StopError
        self.work += 1
        seen = self.seen[i].get(key)
        if seen is not None and reward <= seen + _EPS:
            return False
        self.seen[i][key] = reward
        bound = min(self.bound[i], self.per_gpu * total)
        return reward + bound > self.best + _EPS

    def _leaf(self, key: tuple[int, ...], reward: float, choice: tuple[int, ...]) -> None:
        known = self.done.get(key)
        if known is not None and (known[1] or reward + known[0] <= self.best + _EPS):
            value: float | None = known[0]
        else:
            self.leaves += 1
            value = self._complete(key, self.best + _EPS - reward)
        if value is not None and reward + value > self.best + _EPS:
            self.best = reward + value
            self.best_choice = choice

    def _complete(self, key: tuple[int, ...], floor: float) -> float | None:
        """The rest's quasi-consolidation reward from state ``key`` (None: below ``floor``)."""
        if self.shape is None:
            _, value = quasi_into(self.inp, self.rest, list(key))
            self.work += len(self.rest)
            self.done[key] = (value, True)
            return value
        found, examined = pass_value(self.plan, list(key), floor=floor)
        self.work += examined
        self.done[key] = (floor, False) if found is None else (found, True)
        return found

    def _visit_counts(
        self, i: int, state: list[int], free: list[int], reward: float, choice: tuple[int, ...]
    ) -> None:
        key = tuple(state)
        if not self._enter(i, key, reward, sum(free)):
            return
        if i == len(self.top):
            self._leaf(key, reward, choice)
            return
        job, types = self.cells[i], self.shape.types if self.shape else 1
        for k in self.inp.spans(self.top[i]):
            child, child_free = list(state), list(free)
            if take(child, child_free, job, k, types):
                self._visit_counts(i + 1, child, child_free, reward + job.rw[k], (*choice, k))
        # Leaving the job out (span 0) may let more reward in when not all fit.
        self._visit_counts(i + 1, state, free, reward, (*choice, 0))

    def _visit_servers(
        self, i: int, free: list[int], reward: float, choice: tuple[int, ...]
    ) -> None:
        key = tuple(free)
        if not self._enter(i, key, reward, sum(free)):
            return
        if i == len(self.top):
            self._leaf(key, reward, choice)
            return
        inp, j = self.inp, self.top[i]
        rooms = rooms_of(inp, j, free)
        for k in inp.spans(j):
            assign = _place_span(rooms, inp.job_workers[j], k)
            if assign is None:
                continue
            child = list(free)
            apply(inp, j, assign, child, 1)
            self._visit_servers(i + 1, child, reward + inp.rw[j][k], (*choice, k))
        self._visit_servers(i + 1, free, reward, (*choice, 0))


def _realize(
    inp: PlacementInput,
    top: Sequence[int],
    rest: Sequence[int],
    choice: Sequence[int],
    free: list[int],
) -> dict[int, Assignment]:
    """The combination ``choice`` (spans of ``top``, 0: out) and the rest's quasi pass, on servers."""
    placed: dict[int, Assignment] = {}
    for j, k in zip(top, choice, strict=False):
        if not k:
            continue
        assign = _place_span(rooms_of(inp, j, free), inp.job_workers[j], k)
        if assign is None:  # unreachable: the search placed it on the same free GPUs
            raise AssertionError(f"span {k} of job {inp.job_ids[j]!r} no longer fits")
        apply(inp, j, assign, free, 1)
        placed[j] = assign
    done, _ = quasi_into(inp, rest, free)
    return placed | done


def _large(inp: PlacementInput, j: int) -> bool:
    return inp.gpus(j) >= 2 * node_size_of(inp, j)


def search_assign(
    inp: PlacementInput,
    search_space: int | None = None,
    *,
    large_first: bool = False,
    deadline: float = float("inf"),
    work_limit: float = float("inf"),
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
    work_limit : float
        Jobs the completions may examine (plus one per node of the search)
        before the search returns its best combination so far (default:
        none); unlike the deadline, the same on any machine.

    Returns
    -------
    list of (Assignment or None)
        Per job (input order) its ``(server index, workers)`` pairs or None.
    bool
        Whether the deadline or the work limit stopped the search.

    Raises
    ------
    InvalidInstanceError
        If ``search_space`` is not an integer >= 1 or ``work_limit`` is not
        a positive number.

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
    work = plain(work_limit)
    if isinstance(work, bool) or not isinstance(work, (int, float)) or not work > 0:
        raise InvalidInstanceError("work_limit", f"must be a positive number, got {work_limit!r}")
    free = list(inp.free)
    placed: dict[int, Assignment] = {}
    if large_first:
        # Large jobs all take whole servers, so their order does not break
        # the buddy construction; the most placement-sensitive go first.
        large = potential_order(inp, [j for j in range(inp.n_jobs) if _large(inp, j)])
        placed = consolidate_into(inp, large, free, keep_order=True)
    order = potential_order(inp, [j for j in range(inp.n_jobs) if j not in placed])
    k = search_prefix(inp, order, limit)
    top, rest = order[:k], order[k:]
    search = _Search(inp, top, rest, free, deadline, float(work))
    choice = search.run()
    placed |= _realize(inp, top, rest, choice, free)
    return [placed.get(j) for j in range(inp.n_jobs)], search.stopped


@named("local-search")
def chronus_local_search(
    inp: PlacementInput,
    *,
    seed: Seed = None,
    time_limit: float | None = None,
    improve_moves: bool = True,
    work_limit: float = SEARCH_WORK,
) -> Solution[PlacementDecision]:
    """Chronus Algorithm 1 with |S| = ``inp.search_space``, then improvement moves (``local-search``).

    Deterministic (``seed`` is unused). Bounded by work: Algorithm 1 visits
    at most |S| combinations and examines at most ``work_limit`` jobs in
    its completions (past it, the best combination so far, with a message
    saying so), then :func:`~scheduling_opt.placement.improve.improve`
    keeps at most :data:`~scheduling_opt.placement.improve.MAX_MOVES`
    moves within :data:`~scheduling_opt.placement.improve.IMPROVE_WORK`
    best fits. ``time_limit`` is a safety net over both (a search still
    running then returns its best combination so far, still ``feasible``).

    Parameters
    ----------
    inp : PlacementInput
        The jobs to place, the free GPUs and |S| (``search_space``).
    seed : int, numpy Generator or None
        Unused.
    time_limit : float, optional
        Seconds (default :data:`~scheduling_opt.solution.DEFAULT_TIME_LIMIT`).
    improve_moves : bool
        Run the improvement moves after Algorithm 1 (False: Algorithm 1
        alone, the paper's method).
    work_limit : float
        Jobs Algorithm 1's completions may examine (default
        :data:`SEARCH_WORK`; ``inf``: the full enumeration).

    Returns
    -------
    Solution[PlacementDecision]
        Status ``feasible``, the total reward and the cheap upper bound.

    Raises
    ------
    ValueError
        If ``time_limit`` or ``work_limit`` is not a positive number.

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
    assign, stopped = search_assign(inp, deadline=deadline, work_limit=work_limit)
    message = ""
    if stopped:
        message = (
            "Algorithm 1 stopped at the time limit: best combination so far"
            if time.perf_counter() > deadline
            else "Algorithm 1 stopped at its work limit: best combination so far"
        )
    if improve_moves:
        assign = improve(inp, assign, deadline=deadline)
    return heuristic_solution(inp, assign, start, message)
