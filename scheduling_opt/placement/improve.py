"""Improvement moves after Chronus Algorithm 1: fill, swap out and eject (not in the paper).

Algorithm 1 fixes the low-potential jobs by one quasi-consolidation pass, so
a job can end up spread (or waiting) only because others took the servers it
needed. Three moves raise the total reward RW (Chronus Eq. 7), each kept
only when RW grows:

- **fill**: waiting jobs, in potential order, on the GPUs left free, by
  quasi-consolidation (each on its smallest span, never below k*);
- **swap out**: a spread job leaves, and waiting jobs take its servers, each
  on its consolidated span k* (in potential order). A spread job of G GPUs
  earns ``RW < G``; waiting jobs consolidated on the same GPUs earn one per
  GPU, so when many jobs wait (demand far above the free GPUs) this trades
  every spread job for consolidated ones;
- **eject**: a spread or waiting job ``t`` takes a span ``k`` below its own
  on the ``k`` eligible servers with the most room once the other new jobs
  on them are moved away; it evicts from each just enough of them (the
  smallest job that frees the room, else the largest first), the evicted
  jobs are placed again by quasi-consolidation on what is left, then each
  job spread at the start of the sweep that now fits on fewer servers is
  re-placed (what the evicted jobs left may consolidate it).

Delta evaluation: the placement is kept as per-job dicts, per-server sets of
the new jobs, the free GPUs and the servers sorted by (free GPUs, type,
index) (the best-fit order of :func:`~scheduling_opt.placement.quasi.
rooms_of`, kept sorted by bisection), so a move's gain is the reward of the
jobs it touched, O(jobs on the moved servers) plus one O(S) best fit per job
it places, and a rejected move is undone at the same cost. Waiting jobs sit
in classes of identical jobs (workers, GPUs per worker, type, reward table)
in potential order, so a swap tries each class once.

Work bound (deterministic, not the clock): at most ``moves`` kept moves, at
most :data:`MAX_CANDIDATES` server sets per ejection, :data:`MAX_REPAIRS`
re-placed spread jobs per ejection, and ``work_limit`` best fits in all;
the deadline is only a safety net. Same input, same answer.
"""

from __future__ import annotations

import time
from bisect import bisect_left, insort
from collections.abc import Sequence

from scheduling_opt.placement.model import Assignment, PlacementInput
from scheduling_opt.placement.quasi import _place_span, _smallest_span, potential_order

#: Kept moves at most (each is a strict gain, so this only bounds the time).
MAX_MOVES = 1000
#: Server sets tried per job and span in an ejection (the roomiest servers first).
MAX_CANDIDATES = 24
#: Spread jobs re-placed at most after one ejection (most reward lost first).
MAX_REPAIRS = 16
#: Clusters of more servers keep them sorted by free GPUs between moves.
SORT_KEPT_FROM = 64
#: Best fits (O(S) each) at most in one call: about 0.3 s on 443 servers.
IMPROVE_WORK = 20_000
_EPS = 1e-9


class _State:
    """The placement: per-job dicts, per-server job sets, free GPUs, best-fit order, waiting pool."""

    def __init__(
        self,
        inp: PlacementInput,
        assign: Sequence[Assignment | None],
        work_limit: float,
        deadline: float,
    ) -> None:
        self.inp = inp
        self.work, self.work_limit, self.deadline = 0, work_limit, deadline
        self.free = list(inp.free)
        self.at: list[dict[int, int]] = [{} for _ in range(inp.n_jobs)]
        self.on: list[set[int]] = [set() for _ in range(inp.n_servers)]
        kind = inp.server_type
        # Servers by (free GPUs, type, index), kept sorted on large clusters only:
        # on small ones sorting when asked is cheaper than keeping the order.
        self.keep_order = inp.n_servers > SORT_KEPT_FROM
        self.order = sorted((self.free[s], kind[s], s) for s in range(inp.n_servers))
        # Classes of identical jobs (workers, GPUs per worker, type, reward table).
        keys: dict[tuple[object, ...], int] = {}
        self.cls = [
            keys.setdefault((inp.job_workers[j], inp.gpw[j], inp.job_type[j], inp.rw[j]), len(keys))
            for j in range(inp.n_jobs)
        ]
        # The waiting jobs of each class in potential order, built when first needed.
        self.pool: list[list[int]] | None = None
        self.by_rank: list[int] = []
        self.rank: dict[int, int] = {}
        self.class_order: list[int] = []
        self.class_gpus: dict[int, int] = {}
        for j, a in enumerate(assign):
            if a:
                self._take(j, dict(a))
        # Jobs placed on more servers than k*, most reward lost first (per sweep).
        self.spread: list[int] = []

    # -- bookkeeping -------------------------------------------------------------

    def _move(self, s: int, delta: int) -> None:
        old = self.free[s]
        self.free[s] = old + delta
        if self.keep_order:
            kind = self.inp.server_type[s]
            del self.order[bisect_left(self.order, (old, kind, s))]
            insort(self.order, (old + delta, kind, s))

    def _sorted(self, j: int) -> list[tuple[int, int, int]]:
        """``(free, type, server)`` of job ``j``'s servers with room for a worker, ascending."""
        inp = self.inp
        gpw, gtype, kind, free = inp.gpw[j], inp.job_type[j], inp.server_type, self.free
        if not self.keep_order:
            return sorted((free[s], kind[s], s) for s in inp.eligible[j] if free[s] >= gpw)
        order = self.order[bisect_left(self.order, (gpw, -1, -1)) :]
        return order if gtype < 0 else [x for x in order if x[1] == gtype]

    def _take(self, j: int, a: dict[int, int]) -> None:
        if not a:
            return
        gpw = self.inp.gpw[j]
        for s, w in a.items():
            self._move(s, -w * gpw)
            self.on[s].add(j)
        self.at[j] = a
        if self.pool is not None:
            pool = self.pool[self.cls[j]]
            del pool[bisect_left(pool, self.rank[j])]

    def _drop(self, j: int) -> dict[int, int]:
        a, gpw = self.at[j], self.inp.gpw[j]
        if not a:
            return a
        for s, w in a.items():
            self._move(s, w * gpw)
            self.on[s].discard(j)
        self.at[j] = {}
        if self.pool is not None:
            insort(self.pool[self.cls[j]], self.rank[j])
        return a

    def waiting(self) -> list[list[int]]:
        """The waiting pool: per class (in potential order of its first job) the waiting ranks."""
        if self.pool is None:
            inp = self.inp
            self.by_rank = potential_order(inp, range(inp.n_jobs))
            self.rank = {j: r for r, j in enumerate(self.by_rank)}
            firsts: dict[int, int] = {}
            for j in self.by_rank:
                firsts.setdefault(self.cls[j], j)
            self.class_order = list(firsts)
            self.class_gpus = {c: inp.gpus(j) for c, j in firsts.items()}
            self.pool = [[] for _ in firsts]
            for r, j in enumerate(self.by_rank):
                if not self.at[j]:
                    self.pool[self.cls[j]].append(r)
        return self.pool

    def reward(self, j: int) -> float:
        return self.inp.rw[j][len(self.at[j])] if self.at[j] else 0.0

    def _spend(self, units: int = 1) -> None:
        self.work += units

    def out(self) -> bool:
        """Whether the work limit (or the deadline, a safety net) is reached: checked between moves."""
        return self.work > self.work_limit or time.perf_counter() > self.deadline

    def rooms_of(self, j: int, among: Sequence[int] | None = None) -> list[tuple[int, int]]:
        """``(room, server)`` of job ``j``'s servers with room, in best-fit order (all or ``among``)."""
        inp = self.inp
        gpw, gtype = inp.gpw[j], inp.job_type[j]
        if among is not None:
            kind = inp.server_type
            picked = sorted(
                (self.free[s], kind[s], s)
                for s in among
                if self.free[s] >= gpw and (gtype < 0 or kind[s] == gtype)
            )
            return [(f // gpw, s) for f, _, s in picked]
        return [(f // gpw, s) for f, _, s in self._sorted(j)]

    def _requeue(self, j: int) -> None:
        """Place job ``j`` again by quasi-consolidation (or leave it waiting)."""
        inp = self.inp
        self._spend()
        rooms = self.rooms_of(j)
        k = _smallest_span(rooms, inp.job_workers[j])
        if k:
            a = _place_span(rooms, inp.job_workers[j], max(k, inp.k_star[j]))
            if a is not None:
                self._take(j, dict(a))

    # -- fill and swap out -------------------------------------------------------

    def fill(self, among: Sequence[int] | None, consolidated: bool) -> list[int]:
        """Place waiting jobs, class by class in potential order, on ``among`` (None: anywhere).

        ``consolidated``: only on the consolidated span k* (else the
        smallest span, never below k*). Returns the jobs placed.
        """
        inp = self.inp
        servers = range(inp.n_servers) if among is None else among
        room = sum(self.free[s] for s in servers)
        placed: list[int] = []
        pools = self.waiting()
        for c in self.class_order:
            pool = pools[c]
            while pool and self.class_gpus[c] <= room:
                j = self.by_rank[pool[0]]
                self._spend()
                rooms = self.rooms_of(j, among)
                n = inp.job_workers[j]
                k = inp.k_star[j]
                if not consolidated:
                    least = _smallest_span(rooms, n)
                    k = max(least, k) if least else 0
                a = _place_span(rooms, n, k) if k else None
                if a is None:
                    break
                self._take(j, dict(a))
                placed.append(j)
                room -= inp.gpus(j)
        return placed

    def swap_out(self, t: int) -> bool:
        """Drop spread job ``t``; waiting jobs take its servers consolidated; keep if RW grows."""
        before = self.reward(t)
        old = self._drop(t)
        placed = self.fill(sorted(old), consolidated=True)
        if sum(self.reward(e) for e in placed) - before > _EPS:
            return True
        for e in placed:
            self._drop(e)
        self._take(t, old)
        return False

    # -- eject -------------------------------------------------------------------

    def rooms(self, t: int) -> dict[int, int]:
        """Workers of ``t`` each eligible server holds if every new job on it left."""
        inp = self.inp
        return {
            s: (self.free[s] + sum(self.at[e][s] * inp.gpw[e] for e in self.on[s])) // inp.gpw[t]
            for s in inp.eligible[t]
        }

    def candidates(self, t: int, k: int, room: dict[int, int]) -> list[list[int]]:
        """Server sets for ``t`` on ``k`` servers: each server with the ``k - 1`` roomiest others.

        Servers by room if the other new jobs left, then by free GPUs now
        (the least to evict), then index; a server alike to one already
        tried (the same room, free GPUs and jobs of the same classes, shares
        and spans on it) is skipped, so the tries are not spent on copies.
        """
        inp, free, cls = self.inp, self.free, self.cls
        n = inp.job_workers[t]
        ranked = sorted((s for s in room if room[s] > 0), key=lambda s: (-room[s], -free[s], s))
        out: list[list[int]] = []
        seen: set[tuple[object, ...]] = set()
        for s in ranked:
            if len(out) == MAX_CANDIDATES:
                break
            jobs = sorted((cls[e], self.at[e][s], len(self.at[e])) for e in self.on[s])
            alike = (room[s], free[s], *jobs)
            if alike in seen:
                continue
            seen.add(alike)
            chosen = [s, *[r for r in ranked[:k] if r != s][: k - 1]]
            if len(chosen) == k and sum(room[r] for r in chosen) >= n:
                out.append(chosen)
        return out

    def try_move(self, t: int, chosen: list[int], room: dict[int, int]) -> bool:
        """Put job ``t`` on ``chosen``, evicting and re-placing others; keep it if RW grows."""
        inp = self.inp
        self._spend()
        gpw, n, k = inp.gpw[t], inp.job_workers[t], len(chosen)
        before = self.reward(t)
        old_t = self._drop(t)
        # Workers per chosen server: one each, the rest where free room is largest first.
        share = dict.fromkeys(chosen, 1)
        left = n - k
        for s in sorted(chosen, key=lambda s: (-(self.free[s] // gpw), s)):
            extra = min(left, room[s] - 1)
            share[s] += extra
            left -= extra
        evicted: dict[int, dict[int, int]] = {}
        for s in chosen:
            need = share[s] * gpw - self.free[s]
            if need <= 0:
                continue
            jobs = sorted(self.on[s], key=lambda e: (self.at[e][s] * inp.gpw[e], e))
            one = next((e for e in jobs if self.at[e][s] * inp.gpw[e] >= need), None)
            for e in [one] if one is not None else list(reversed(jobs)):
                if need <= 0:
                    break
                need -= self.at[e][s] * inp.gpw[e]
                evicted[e] = self._drop(e)
        lost = sum(inp.rw[e][len(a)] for e, a in evicted.items())
        self._take(t, share)
        base = self.reward(t) - before - lost
        # The evicted jobs go back first; if one larger than t lost reward, the spread
        # jobs take the freed room first instead (one evicted job of 16 GPUs, spread
        # again, can make room for two spread jobs of 8 to consolidate).
        for repair_first in (False, True):
            moved = self._settle(t, evicted, repair_first)
            gain = base + sum(self.reward(e) for e in evicted)
            gain += sum(self.reward(j) - inp.rw[j][len(a)] for j, a in moved.items())
            if gain > _EPS:
                return True
            worse = any(
                inp.gpus(e) > inp.gpus(t) and self.reward(e) < inp.rw[e][len(a)] - _EPS
                for e, a in evicted.items()
            )
            for e in evicted:
                self._drop(e)
            for j in moved:
                self._drop(j)
            for j, a in moved.items():
                self._take(j, a)
            if not worse:
                break
        self._drop(t)
        for e, a in evicted.items():
            self._take(e, a)
        self._take(t, old_t)
        return False

    def _settle(
        self, t: int, evicted: dict[int, dict[int, int]], repair_first: bool
    ) -> dict[int, dict[int, int]]:
        """Place the evicted jobs again and re-place spread jobs, in either order."""
        inp = self.inp
        moved = self._repair(t, evicted) if repair_first and evicted else {}
        for e in sorted(evicted, key=lambda e: (-inp.gpus(e), e)):
            self._requeue(e)
        if not repair_first and evicted:
            moved = self._repair(t, evicted)
        return moved

    def _repair(self, t: int, evicted: dict[int, dict[int, int]]) -> dict[int, dict[int, int]]:
        """Re-place spread jobs (not ``t`` nor ``evicted``) that now fit on fewer servers."""
        inp = self.inp
        moved: dict[int, dict[int, int]] = {}
        tried = 0
        for j in self.spread:
            if j == t or j in evicted or len(self.at[j]) <= inp.k_star[j]:
                continue
            if tried == MAX_REPAIRS:
                break
            tried += 1
            self._spend()
            # Its best fit as if it left, computed before moving anything.
            rooms = self._rooms_without(j)
            n = inp.job_workers[j]
            k = max(_smallest_span(rooms, n), inp.k_star[j])
            if inp.rw[j][k] <= inp.rw[j][len(self.at[j])] + _EPS:
                continue
            a = _place_span(rooms, n, k)
            if a is None:
                continue
            moved[j] = self._drop(j)
            self._take(j, dict(a))
        return moved

    def _rooms_without(self, j: int) -> list[tuple[int, int]]:
        """:meth:`rooms_of` job ``j`` as if its own workers had left, O(S)."""
        inp = self.inp
        gpw, kind, mine = inp.gpw[j], inp.server_type, self.at[j]
        keys = [x for x in self._sorted(j) if x[2] not in mine]
        for s, w in mine.items():
            insort(keys, (self.free[s] + w * gpw, kind[s], s))
        return [(f // gpw, s) for f, _, s in keys if f >= gpw]

    def eject_sweep(self) -> bool:
        """One ejection sweep: the first kept move, most reward lost first (False: none)."""
        inp = self.inp
        todo = [j for j in range(inp.n_jobs) if inp.best_rw(j) - self.reward(j) > _EPS]
        todo.sort(key=lambda j: (self.reward(j) - inp.best_rw(j), j))
        self.spread = [j for j in todo if len(self.at[j]) > inp.k_star[j]]
        free_of = [0] * max(inp.n_types, 1)
        for s, f in enumerate(self.free):
            free_of[inp.server_type[s]] += f
        total = sum(free_of)
        for t in todo:
            if not self.at[t]:
                # A waiting job can only gain by evicting spread jobs or using free GPUs:
                # skip it when its type has neither.
                have = total if inp.job_type[t] < 0 else free_of[inp.job_type[t]]
                if have < inp.gpus(t) and not self.spread:
                    continue
            cur = len(self.at[t]) or inp.max_span(t) + 1
            for k in inp.spans(t):
                if k >= cur or inp.rw[t][k] <= self.reward(t) + _EPS:
                    continue
                room = self.rooms(t)
                for chosen in self.candidates(t, k, room):
                    if self.out():
                        return False
                    if self.try_move(t, chosen, room):
                        return True
        return False


def improve(
    inp: PlacementInput,
    assign: Sequence[Assignment | None],
    *,
    moves: int = MAX_MOVES,
    deadline: float = float("inf"),
    work_limit: float = IMPROVE_WORK,
) -> list[Assignment | None]:
    """Fill, swap-out and ejection moves on a placement until none gains reward.

    Each round fills free GPUs with waiting jobs, swaps out every spread job
    for waiting ones where that gains (most reward lost first), then makes
    ejection sweeps (each keeps its first gaining move) while they gain;
    rounds repeat while something gained.

    Parameters
    ----------
    inp : PlacementInput
        The jobs to place and the free GPUs.
    assign : sequence of (Assignment or None)
        A feasible placement (e.g. Algorithm 1's).
    moves : int
        Kept moves at most.
    deadline : float
        A ``time.perf_counter()`` value past which no further move is tried
        (a safety net: the work limit decides).
    work_limit : float
        Best fits (O(S) each) at most, counted over all moves.

    Returns
    -------
    list of (Assignment or None)
        A feasible placement whose total reward is at least ``assign``'s.

    Examples
    --------
    >>> from scheduling_opt.model import Cluster, GpuType, Job, Server
    >>> cluster = Cluster((GpuType("V100"),), (Server("n0", "V100", 8), Server("n1", "V100", 8)))
    >>> inp = PlacementInput(cluster, [Job("a", 4, 4, 60.0), Job("b", 8, 8, 60.0)])
    >>> improve(inp, [((0, 4),), ((0, 4), (1, 4))])  # b spread: it takes n1 whole
    [((0, 4),), ((1, 8),)]

    References
    ----------
    Chronus §3.4.2 (Eq. 7, Algorithm 1); ejection chains: F. Glover,
    "Ejection chains, reference structures and alternating path methods for
    traveling salesman problems", Discrete Applied Mathematics 65 (1996).
    """
    state = _State(inp, assign, work_limit, deadline)
    kept = 0
    while kept < moves and not state.out():
        gained = False
        # Fill and swap out need waiting jobs; without any, only ejections can gain.
        wait = any(not a for a in state.at)
        if wait and state.fill(None, consolidated=False):
            kept += 1
            gained = True
        spread = [j for j in range(inp.n_jobs) if len(state.at[j]) > inp.k_star[j]] if wait else []
        spread.sort(key=lambda j: (state.reward(j) - inp.best_rw(j), j))
        for t in spread:
            if kept >= moves or state.out():
                break
            if len(state.at[t]) > inp.k_star[t] and state.swap_out(t):
                kept += 1
                gained = True
        while kept < moves and not state.out() and state.eject_sweep():
            kept += 1
            gained = True
        if not gained:
            break
    return [tuple(sorted(a.items())) if a else None for a in state.at]
