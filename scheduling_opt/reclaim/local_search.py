"""Swap local search and simulated annealing over returned-server sets.

Both move one returned server out and one kept server in (a 1-1 swap keeps
|R| = N_R) and score moves by the exact change of ``preempted * BIG +
collateral`` (Aryl §4's objective, lexicographic). A swap pass is
O(n d^2) (n on-loan servers, d the largest number of jobs per server's
neighbourhood); an annealing proposal is O(d).
"""

from __future__ import annotations

import math
import time
from collections.abc import Mapping, Sequence

import numpy as np

from scheduling_opt.jsonpath import read_int
from scheduling_opt.reclaim.model import ReclaimInput

#: Annealing proposals per on-loan server in one run (100: 2.1% mean gap at
#: 500 servers, 150: 1.6%, 200: 1.2%, for 150, 220 and 310 ms; seeds 0-7).
ANNEAL_STEPS = 150
#: Annealing proposals per aryl-plus call at least (split into restarts).
ANNEAL_BUDGET = 30_000
#: Proposals drawn (and time checked) at once: numpy draws in bulk.
_BLOCK = 4096


def _ls_delta(inp: ReclaimInput, lost: list[int], change: Mapping[int, int]) -> int:
    return sum(inp.job_cost(j, lost[j] + d) - inp.job_cost(j, lost[j]) for j, d in change.items())


def _move_change(inp: ReclaimInput, out: int, into: int) -> dict[int, int]:
    change: dict[int, int] = {}
    for j, w in inp.server_jobs[out]:
        change[j] = change.get(j, 0) - w
    for j, w in inp.server_jobs[into]:
        change[j] = change.get(j, 0) + w
    return change


def _best_swap(inp: ReclaimInput, chosen: set[int], lost: list[int]) -> tuple[int, int, int]:
    """The best (delta, returned server to keep, kept server to return) swap.

    Swaps of servers sharing no job split into two independent deltas, so
    the best of those needs only each side's delta; swaps of neighbours are
    evaluated exactly.
    """
    n = inp.n_servers
    single = [
        _ls_delta(inp, lost, {j: (-w if s in chosen else w) for j, w in inp.server_jobs[s]})
        for s in range(n)
    ]
    outside = sorted((s for s in range(n) if s not in chosen), key=lambda s: (single[s], s))
    best = (0, -1, -1)
    for r in sorted(chosen):
        near = inp.neighbours[r]
        for a in outside:
            if a not in near:
                best = min(best, (single[r] + single[a], r, a))
                break
        for a in near:
            if a not in chosen:
                best = min(best, (_ls_delta(inp, lost, _move_change(inp, r, a)), r, a))
    return best


def swap_search(inp: ReclaimInput, start: Sequence[int], max_moves: int | None = None) -> list[int]:
    """Best-improvement 1-1 swap local search from ``start``; never worse, sorted.

    ``start``: N_R distinct server indices; ``max_moves``: swaps at most
    (default 4 x servers). Bad arguments raise ``InvalidInstanceError``.
    """
    first = inp.chosen_indices(start, "start")
    chosen = set(first)
    lost = inp.lost_workers(first)
    limit = 4 * inp.n_servers if max_moves is None else read_int(max_moves, "max_moves", 0)
    for _ in range(limit):
        delta, r, a = _best_swap(inp, chosen, lost)
        if delta >= 0:
            break
        for j, d in _move_change(inp, r, a).items():
            lost[j] += d
        chosen.remove(r)
        chosen.add(a)
    return sorted(chosen)


class _Swapper:
    """A returned set with O(1) random picks on both sides and exact swap deltas."""

    def __init__(self, inp: ReclaimInput, chosen: Sequence[int]) -> None:
        self.inp = inp
        self.lost = inp.lost_workers(chosen)
        picked = set(chosen)
        self.side = [s in picked for s in range(inp.n_servers)]
        self.members: tuple[list[int], list[int]] = (
            [s for s in range(inp.n_servers) if not self.side[s]],
            sorted(chosen),
        )
        self.pos = [0] * inp.n_servers
        for group in self.members:
            for i, s in enumerate(group):
                self.pos[s] = i
        self.key = sum(inp.job_cost(j, x) for j, x in enumerate(self.lost))

    def delta(self, out: int, into: int) -> int:
        # The annealing hot loop: job_cost inlined over local names.
        inp, lost = self.inp, self.lost
        slack, gpus, gpw, big = inp.slack, inp.gpus, inp.gpw, inp.big
        change = {j: -w for j, w in inp.server_jobs[out]}
        for j, w in inp.server_jobs[into]:
            change[j] = change.get(j, 0) + w
        total = 0
        for j, d in change.items():
            before, after = lost[j], lost[j] + d
            if before > slack[j]:
                total -= big + gpus[j] - gpw[j] * before
            if after > slack[j]:
                total += big + gpus[j] - gpw[j] * after
        return total

    def _move(self, s: int, to: bool) -> None:
        group, other = self.members[self.side[s]], self.members[to]
        last = group.pop()
        if last != s:
            group[self.pos[s]] = last
            self.pos[last] = self.pos[s]
        self.pos[s] = len(other)
        other.append(s)
        self.side[s] = to

    def swap(self, out: int, into: int, delta: int) -> None:
        for j, d in _move_change(self.inp, out, into).items():
            self.lost[j] += d
        self._move(out, False)
        self._move(into, True)
        self.key += delta


def anneal(
    inp: ReclaimInput,
    start: Sequence[int],
    rng: np.random.Generator,
    *,
    steps: int | None = None,
    deadline: float = math.inf,
    t_hi: float = 0.5,
    t_lo: float = 0.05,
) -> tuple[list[int], bool]:
    """Simulated annealing over 1-1 swaps: the best set visited, and whether it finished.

    Greedy and swap search stop at plateaus: shifting a whole run of
    returned servers means a chain of swaps that each keep the count and
    cost some collateral. The temperature is in preempted jobs (BIG), from
    0.5 down to 0.05 (tuned on seeds 0-4 and checked on 10-17 at 60-500
    servers), so equal-count moves pass freely and +1 moves rarely late.
    ``steps`` defaults to ``ANNEAL_STEPS`` proposals per on-loan server.
    Half of the proposals return a neighbour of a returned server (runs
    grow), the other half a uniform outside server. Uniforms are drawn from
    ``rng`` in blocks (six per proposal); the run stops early, unfinished,
    when ``time.perf_counter()`` passes ``deadline`` (checked per block).
    """
    state = _Swapper(inp, start)
    best_key, best = state.key, sorted(start)
    total = ANNEAL_STEPS * inp.n_servers if steps is None else steps
    outside, inside = state.members
    n_out, n_in = len(outside), len(inside)  # swaps keep both sizes
    if not n_out or not n_in:
        return best, True
    near_of = [sorted(near) for near in inp.neighbours]
    side = state.side
    for first in range(0, total, _BLOCK):
        if time.perf_counter() > deadline:
            return best, False
        block = rng.random((min(_BLOCK, total - first), 6)).tolist()
        for step, (u_out, u_into, u_coin, u_from, u_near, u_accept) in enumerate(block, first):
            temp = inp.big * t_hi * (t_lo / t_hi) ** (step / total)
            out = inside[int(u_out * n_in)]
            into = outside[int(u_into * n_out)]
            if u_coin < 0.5:
                near = [t for t in near_of[inside[int(u_from * n_in)]] if not side[t]]
                if near:
                    into = near[int(u_near * len(near))]
            delta = state.delta(out, into)
            if delta <= 0 or u_accept < math.exp(-delta / temp):
                state.swap(out, into, delta)
                if state.key < best_key:
                    best_key, best = state.key, sorted(inside)
    return best, True
