"""Ejection moves after Chronus Algorithm 1: consolidate a spread job by moving others away.

Algorithm 1 fixes the low-potential jobs by one quasi-consolidation pass, so
a job can end up spread (or waiting) only because smaller jobs took the
servers it needed. A move here takes one such job ``t`` and a span ``k``
below its current one: it picks the ``k`` eligible servers with the most
room once the other new jobs on them are moved away, evicts from each just
enough of those jobs (the smallest that frees the room, else the largest
first), places ``t``, places the evicted jobs again by quasi-consolidation
on what is left, then re-places each job spread at the start of the sweep
that now fits on fewer servers (what the evicted jobs left may consolidate
it). The move is kept when the total reward RW (Chronus Eq. 7) grows.

Delta evaluation: a move touches ``t``, its ``k`` servers and the jobs on
them, and its gain is ``RW_t(k) - RW_t(old) + sum(RW_e(new) - RW_e(old))``
over the evicted and re-placed jobs; the placement is kept as per-server
sets of the new jobs on it, so a move costs O(jobs on the moved servers)
plus one k-server best fit (O(S log S)) per evicted or spread job, never a
pass over the instance. Rejected moves are undone at the same cost.

Work bound: at most ``moves`` (200) kept moves, each followed by a new
sweep over the spread or waiting jobs, at most 24 server sets per job and
span; and the deadline. Deterministic: same input, same answer.
"""

from __future__ import annotations

import time
from collections.abc import Sequence

from scheduling_opt.placement.model import Assignment, PlacementInput
from scheduling_opt.placement.quasi import _place_span, _smallest_span, rooms_of

#: Kept moves at most (each is a strict gain, so this only bounds the time).
MAX_MOVES = 200
#: Server sets tried per job and span (the roomiest servers first).
MAX_CANDIDATES = 24
_EPS = 1e-9


class _State:
    """The placement as per-job dicts, per-server job sets and free GPUs."""

    def __init__(self, inp: PlacementInput, assign: Sequence[Assignment | None]) -> None:
        self.inp = inp
        self.free = list(inp.free)
        self.at: list[dict[int, int]] = [dict(a or ()) for a in assign]
        self.on: list[set[int]] = [set() for _ in range(inp.n_servers)]
        # Jobs placed on more servers than k*, most reward lost first (per sweep).
        self.spread: list[int] = []
        for j, a in enumerate(self.at):
            self._take(j, a)

    def _take(self, j: int, a: dict[int, int]) -> None:
        gpw = self.inp.gpw[j]
        for s, w in a.items():
            self.free[s] -= w * gpw
            self.on[s].add(j)
        self.at[j] = a

    def _drop(self, j: int) -> dict[int, int]:
        a, gpw = self.at[j], self.inp.gpw[j]
        for s, w in a.items():
            self.free[s] += w * gpw
            self.on[s].discard(j)
        self.at[j] = {}
        return a

    def reward(self, j: int) -> float:
        return self.inp.rw[j][len(self.at[j])] if self.at[j] else 0.0

    def _requeue(self, j: int) -> None:
        """Place job ``j`` again by quasi-consolidation (or leave it waiting)."""
        inp = self.inp
        rooms = rooms_of(inp, j, self.free)
        k = _smallest_span(rooms, inp.job_workers[j])
        if k:
            a = _place_span(rooms, inp.job_workers[j], max(k, inp.k_star[j]))
            if a is not None:
                self._take(j, dict(a))

    def rooms(self, t: int) -> dict[int, int]:
        """Workers of ``t`` each eligible server holds if every new job on it left."""
        inp = self.inp
        return {
            s: (self.free[s] + sum(self.at[e][s] * inp.gpw[e] for e in self.on[s])) // inp.gpw[t]
            for s in inp.eligible[t]
        }

    def candidates(self, t: int, k: int, room: dict[int, int]) -> list[list[int]]:
        """Server sets for ``t`` on ``k`` servers: each server with the ``k - 1`` roomiest others."""
        n = self.inp.job_workers[t]
        ranked = sorted((s for s in room if room[s] > 0), key=lambda s: (-room[s], s))
        out = []
        for s in ranked[:MAX_CANDIDATES]:
            chosen = [s, *[r for r in ranked if r != s][: k - 1]]
            if len(chosen) == k and sum(room[r] for r in chosen) >= n:
                out.append(chosen)
        return out

    def try_move(self, t: int, chosen: list[int], room: dict[int, int]) -> bool:
        """Put job ``t`` on ``chosen``, evicting and re-placing others; keep it if RW grows."""
        inp = self.inp
        gpw, n, k = inp.gpw[t], inp.job_workers[t], len(chosen)
        old_t = self.at[t]
        before = self.reward(t)
        self._drop(t)
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
        for e in sorted(evicted, key=lambda e: (-inp.gpus(e), e)):
            self._requeue(e)
        gain = self.reward(t) - before + sum(self.reward(e) for e in evicted) - lost
        # What the evicted jobs left free may consolidate other spread jobs.
        moved = self._repair(t, evicted) if evicted else {}
        gain += sum(self.reward(j) - inp.rw[j][len(a)] for j, a in moved.items())
        if gain > _EPS:
            return True
        for j, a in moved.items():
            self._drop(j)
            self._take(j, a)
        for e in evicted:
            self._drop(e)
        self._drop(t)
        for e, a in evicted.items():
            self._take(e, a)
        self._take(t, old_t)
        return False

    def _repair(self, t: int, evicted: dict[int, dict[int, int]]) -> dict[int, dict[int, int]]:
        """Re-place spread jobs (not ``t`` nor ``evicted``) that now fit on fewer servers."""
        inp = self.inp
        moved: dict[int, dict[int, int]] = {}
        for j in self.spread:
            if j == t or j in evicted or len(self.at[j]) <= inp.k_star[j]:
                continue
            old = self._drop(j)
            self._requeue(j)
            if self.reward(j) > inp.rw[j][len(old)] + _EPS:
                moved[j] = old
            else:
                self._drop(j)
                self._take(j, old)
        return moved


def improve(
    inp: PlacementInput,
    assign: Sequence[Assignment | None],
    *,
    moves: int = MAX_MOVES,
    deadline: float = float("inf"),
) -> list[Assignment | None]:
    """Ejection moves on a placement until none gains reward: per job an assignment or None.

    Parameters
    ----------
    inp : PlacementInput
        The jobs to place and the free GPUs.
    assign : sequence of (Assignment or None)
        A feasible placement (e.g. Algorithm 1's).
    moves : int
        Kept moves at most.
    deadline : float
        A ``time.perf_counter()`` value past which no further move is tried.

    Returns
    -------
    list of (Assignment or None)
        A feasible placement whose total reward is at least ``assign``'s.

    Examples
    --------
    >>> from scheduling_opt.model import Cluster, GpuType, Job, Server
    >>> cluster = Cluster((GpuType("V100"),), (Server("n0", "V100", 8), Server("n1", "V100", 8)))
    >>> inp = PlacementInput(cluster, [Job("a", 4, 4, 60.0), Job("b", 8, 8, 60.0)])
    >>> improve(inp, [((0, 4),), ((0, 4), (1, 4))])  # b spread: move a to n1
    [((1, 4),), ((0, 8),)]

    References
    ----------
    Chronus §3.4.2 (Eq. 7, Algorithm 1); ejection chains: F. Glover,
    "Ejection chains, reference structures and alternating path methods for
    traveling salesman problems", Discrete Applied Mathematics 65 (1996).
    """
    state = _State(inp, assign)
    for _ in range(moves):
        if time.perf_counter() > deadline:
            break
        todo = [j for j in range(inp.n_jobs) if inp.best_rw(j) - state.reward(j) > _EPS]
        todo.sort(key=lambda j: (state.reward(j) - inp.best_rw(j), j))
        state.spread = [j for j in todo if len(state.at[j]) > inp.k_star[j]]
        moved = False
        for t in todo:
            cur = len(state.at[t]) or inp.max_span(t) + 1
            for k in inp.spans(t):
                if k >= cur or inp.rw[t][k] <= state.reward(t) + _EPS:
                    continue
                room = state.rooms(t)
                moved = any(state.try_move(t, c, room) for c in state.candidates(t, k, room))
                if moved:
                    break
            if moved or time.perf_counter() > deadline:
                break
        if not moved:
            break
    return [tuple(sorted(a.items())) if a else None for a in state.at]
