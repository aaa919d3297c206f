"""Whether chosen lease levels pack into integral terms: a dedicated search (issue 16).

The problem. Jobs i with G_i GPUs, RL_i terms needed and a deadline DL_i
(terms numbered from 0); M GPUs per term. Does every job get RL_i distinct
terms in [0, DL_i), no term holding more than M GPUs? (Chronus §3.3.4 with
the levels fixed: the second stage of :func:`scheduling_opt.lease.exact`.)
NP-complete (it holds bin packing: one term, RL_i = DL_i = 1).

The search runs in *reversed* time, tau = H - 1 - t (H the latest deadline):
there every job is released at H - DL_i and all share the deadline H. Two
exchange arguments shrink the tree without losing a packing:

- *Maximal terms.* If a released job with work left fits into a term's
  leftover, move one of its later terms into it (the job cannot already run
  there): still a packing. So every term may hold a maximal set.
- *Most work first.* Of two released jobs of the same size, the one with
  more work left runs whenever the other does: if a runs at tau and b,
  with more work left, does not, b runs at some later term where a does not
  (b has more terms left after tau than a), and the two swap them. Jobs of
  one size are interchangeable up to their work left, so a term is a vector
  of counts per size (the k_g released jobs of size g with the most work
  left), not a set of jobs.

(Both hold at once: fix the terms in order, each first made maximal, then
sorted by swaps, which keep its load and so its maximality; earlier terms
never change.) Every node is pruned by the energy rows of what is left
(the work that must fall in the last k terms fits into M k, for every k:
exactly the fractional packings), and so is every count vector before its
child is entered: running a job leaves the child's rows as they are,
leaving out one of slack s adds its G to every row k >= s, so the rows
bound from below how many of each size run, and a vector is dropped as
soon as the jobs it leaves out overflow a row. Failed states (per size, the
multiset of work left) are remembered per term. Where every released job
fits at once there is a single maximal term and no branching: capacity
binds only near the end of reversed time (the first original terms).

Exhaustion proves a choice unpackable; a packing is returned as terms per
job (the caller verifies it independently). Exponential in the worst case:
the search stops at its time limit with ``unknown``.
"""

from __future__ import annotations

import enum
import time
from collections.abc import Iterator, Sequence

__all__ = ["MAX_SEARCH_HORIZON", "Verdict", "pack"]


class Verdict(enum.Enum):
    """What :func:`pack` established."""

    PACKED = "packed"
    UNPACKABLE = "unpackable"
    UNKNOWN = "unknown"


class _OutOfTimeError(Exception):
    pass


#: Nodes between two looks at the clock. One: a node costs O(N + H) and its
#: count vectors more, far above a clock read (~0.1 us); at 256, 500 terms
#: and 255 jobs of 40 sizes ran 0.26-0.31 s past a 0.05-0.5 s limit.
_CLOCK_EVERY = 1
#: Longest horizon (terms) the search takes on; beyond it ``pack`` answers
#: ``unknown`` at once (the caller falls back to HiGHS). The search recurses
#: once per term, so a horizon near Python's recursion limit (1,000) raised
#: RecursionError (LeaseInput accepts deadlines up to MAX_HORIZON = 10,000
#: terms without ``max_terms``), and the energy rows of :func:`_future_must`
#: take O(H^2) memory (~250 MB at H = 3,000). Chronus' horizon is 72 terms.
MAX_SEARCH_HORIZON = 512


def _future_must(
    horizon: int, releases: Sequence[Sequence[tuple[int, int]]], sizes: Sequence[int]
) -> list[list[int]]:
    """Per tau, the work due in the last k terms (k = 0..H - tau) of jobs released after tau.

    A job released at r (reversed time) with RL terms may use the H - r
    terms from r on; of the last k of them it must hold min(RL, k - slack)
    when k > slack = H - r - RL. Built once: O(H (N + H)).
    """
    out: list[list[int]] = [[] for _ in range(horizon + 1)]
    slope = [0] * (horizon + 2)
    for tau in range(horizon, -1, -1):
        # Jobs released after tau: those of releases[tau + 1 ..].
        if tau + 1 < horizon:
            for c, rl in releases[tau + 1]:
                slack = horizon - (tau + 1) - rl
                slope[slack] += sizes[c]
                slope[slack + rl] -= sizes[c]
        rate = must = 0
        row = [0]
        for k in range(horizon - tau):
            rate += slope[k]
            must += rate
            row.append(must)
        out[tau] = row
    return out


def pack(
    jobs: Sequence[tuple[int, int, int]],
    capacity: int,
    time_limit: float,
    node_limit: int | None = None,
) -> tuple[list[list[int]] | None, Verdict]:
    """Integral terms for jobs (G_i, RL_i, DL_i) within ``capacity`` GPUs per term.

    Problem: the packing stage of lease selection (Chronus §3.3.4, levels
    fixed; the module docstring). Complexity: exponential in the worst case
    (NP-complete); every node costs O(N + H) for its energy rows.

    Parameters
    ----------
    jobs : Sequence[tuple[int, int, int]]
        Per job: GPUs G_i >= 1, terms needed RL_i >= 0, deadline DL_i (its
        terms lie in [0, DL_i)).
    capacity : int
        M, the GPUs of every term.
    time_limit : float
        Seconds (wall clock) before the search gives up with ``unknown``.
    node_limit : int or None
        Nodes (terms entered) before it gives up with ``unknown``: a budget
        that, unlike the clock, gives the same answer on any machine.

    Returns
    -------
    tuple[list[list[int]] | None, Verdict]
        The sorted terms of each job and ``packed``; None and ``unpackable``
        (proven by exhausting the reduced tree) or ``unknown`` (time out, or
        a horizon above :data:`MAX_SEARCH_HORIZON` terms).

    Examples
    --------
    >>> pack([(2, 1, 2), (2, 1, 2), (2, 1, 2)], 3, 1.0)
    (None, <Verdict.UNPACKABLE: 'unpackable'>)
    >>> pack([(2, 1, 2), (1, 2, 2), (2, 1, 2)], 3, 1.0)
    ([[1], [0, 1], [0]], <Verdict.PACKED: 'packed'>)
    """
    start = time.perf_counter()
    work = [(g, rl, dl) for g, rl, dl in jobs if rl > 0]
    if any(rl > dl or g > capacity for g, rl, dl in work):
        return None, Verdict.UNPACKABLE
    if not work:
        return [[] for _ in jobs], Verdict.PACKED
    horizon = max(dl for _, _, dl in work)
    if horizon > MAX_SEARCH_HORIZON:
        return None, Verdict.UNKNOWN
    sizes = sorted({g for g, _, _ in work}, reverse=True)
    cls_of = {g: c for c, g in enumerate(sizes)}
    n_cls = len(sizes)
    # Releases in reversed time: tau = horizon - DL.
    releases: list[list[tuple[int, int]]] = [[] for _ in range(horizon)]
    for g, rl, dl in work:
        releases[horizon - dl].append((cls_of[g], rl))
    future = _future_must(horizon, releases, sizes)
    failed: list[set[tuple[tuple[int, ...], ...]]] = [set() for _ in range(horizon + 1)]
    choice: list[tuple[int, ...]] = [()] * horizon
    nodes = 0
    budget = -1 if node_limit is None else node_limit + 1

    def children(
        state: tuple[tuple[int, ...], ...], left: int, cap: list[int]
    ) -> Iterator[tuple[int, ...]]:
        """Maximal count vectors whose child passes its energy rows, largest sizes first.

        Of a released job of slack s = left - work, running in this term
        changes nothing in the child's rows (k <= left - 1); leaving it out
        adds its G to every row k >= s. So the jobs left out with slack <= k
        must fit into ``cap[k]`` = M k - (work due in the last k terms now).
        """
        avail = [len(r) for r in state]
        slacks = [[left - w for w in r] for r in state]  # ascending
        lows: list[int] = []
        for c in range(n_cls):
            g = sizes[c]
            k = 0
            while k < avail[c] and slacks[c][k] == 0:
                k += 1  # zero slack: runs now
            # Fewest picks for which this size alone fits into every row.
            while k < avail[c]:
                bad = False
                for out_count, s in enumerate(slacks[c][k:], start=1):
                    # Rows k' >= s hold at least out_count jobs of this size left out.
                    if g * out_count > min(cap[s:left]):
                        bad = True
                        break
                if not bad:
                    break
                k += 1
            lows.append(k)
        full_after = [0] * (n_cls + 1)
        for c in range(n_cls - 1, -1, -1):
            full_after[c] = full_after[c + 1] + sizes[c] * avail[c]
        if sum(g * lo for g, lo in zip(sizes, lows, strict=True)) > capacity:
            return
        ks = [0] * n_cls

        def rec(
            c: int, room: int, smallest_open: int, extra: list[int]
        ) -> Iterator[tuple[int, ...]]:
            # smallest_open: the smallest size left out so far (must not fit at the end);
            # extra[k]: GPUs of jobs left out so far with slack <= k.
            if time.perf_counter() - start > time_limit:
                raise _OutOfTimeError  # many sizes: vectors may take long between nodes
            if room - full_after[c] >= smallest_open:
                return  # even taking everything left, an open size still fits
            if c == n_cls:
                yield tuple(ks)
                return
            g = sizes[c]
            top = min(avail[c], room // g)
            for k in range(top, lows[c] - 1, -1):
                mine = extra
                if k < avail[c]:
                    mine = extra[:]
                    for s in slacks[c][k:]:
                        for kk in range(s, left):
                            mine[kk] += g
                    if any(e > cp for e, cp in zip(mine, cap, strict=True)):
                        break  # fewer picks leave out more: worse still
                ks[c] = k
                yield from rec(c + 1, room - k * g, g if k < avail[c] else smallest_open, mine)
            ks[c] = 0

        yield from rec(0, capacity, capacity + 1, [0] * left)

    def dfs(tau: int, rems: list[tuple[int, ...]]) -> bool:
        nonlocal nodes
        nodes += 1
        if nodes == budget or (
            nodes % _CLOCK_EVERY == 0 and time.perf_counter() - start > time_limit
        ):
            raise _OutOfTimeError
        if tau == horizon:
            return all(not r for r in rems)
        merged = [list(r) for r in rems]
        for c, rl in releases[tau]:
            merged[c].append(rl)
        state = tuple(tuple(sorted(r, reverse=True)) for r in merged)
        if state in failed[tau]:
            return False
        left = horizon - tau
        if any(r and r[0] > left for r in state):
            failed[tau].add(state)
            return False
        # Energy rows: work due in the last k terms, k = 0..left.
        slope = [0] * (left + 1)
        for g, r in zip(sizes, state, strict=True):
            for w in r:
                slope[left - w] += g
        fut = future[tau]
        cap = [0] * left
        rate = must = 0
        for k in range(left):
            must += rate  # released jobs' work due in the last k terms
            cap[k] = capacity * k - must - fut[k]
            if cap[k] < 0:
                failed[tau].add(state)
                return False
            rate += slope[k]
        if must + rate + fut[left] > capacity * left:
            failed[tau].add(state)
            return False
        for ks in children(state, left, cap):
            nxt = []
            for r, k in zip(state, ks, strict=True):
                head = [w - 1 for w in r[:k] if w > 1]
                nxt.append(tuple(sorted(head + list(r[k:]), reverse=True)))
            choice[tau] = ks
            if dfs(tau + 1, nxt):
                return True
        failed[tau].add(state)
        return False

    try:
        found = dfs(0, [() for _ in range(n_cls)])
    except (_OutOfTimeError, RecursionError):
        # RecursionError: a caller already deep in the stack; proves nothing either way.
        return None, Verdict.UNKNOWN

    if not found:
        return None, Verdict.UNPACKABLE
    return _replay(jobs, horizon, sizes, choice), Verdict.PACKED


def _replay(
    jobs: Sequence[tuple[int, int, int]],
    horizon: int,
    sizes: Sequence[int],
    choice: Sequence[tuple[int, ...]],
) -> list[list[int]]:
    """Terms per job from the count vectors: per size, the k with most work left (lowest index on ties)."""
    cls_of = {g: c for c, g in enumerate(sizes)}
    left = [rl for _, rl, _ in jobs]
    terms: list[list[int]] = [[] for _ in jobs]
    # Jobs per size once (a scan of all jobs per size and term cost O(H S N)).
    of_cls: list[list[int]] = [[] for _ in sizes]
    for i, (g, rl, _) in enumerate(jobs):
        if rl > 0:
            of_cls[cls_of[g]].append(i)
    # Per size, the released jobs with work left (released at tau = horizon - DL),
    # kept in index order: the same set the scan of every job of the size found.
    by_release: list[list[int]] = [[] for _ in range(horizon)]
    for members in of_cls:
        for i in members:
            by_release[horizon - jobs[i][2]].append(i)
    ready_of: list[list[int]] = [[] for _ in sizes]
    for tau in range(horizon):
        for i in by_release[tau]:
            ready_of[cls_of[jobs[i][0]]].append(i)
        for c, k in enumerate(choice[tau]):
            if k == 0:
                continue
            ready = sorted(ready_of[c], key=lambda i: (-left[i], i))
            for i in ready[:k]:
                left[i] -= 1
                terms[i].append(horizon - 1 - tau)
            if any(left[i] == 0 for i in ready[:k]):
                ready_of[c] = [i for i in ready_of[c] if left[i] > 0]
    return [sorted(t) for t in terms]
