"""Whether chosen lease levels pack into integral terms: a dedicated search.

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

A state holds, per size, the released jobs' work left as runs (work, how
many), work descending: jobs of one size and work are interchangeable, so
every step (merging releases, the rows, the fewest picks, leaving jobs
out, running the chosen ones) costs O(distinct works) instead of O(jobs),
and a term where every released job fits has its one maximal vector
without enumeration (the former per-job search, kept in
tests/lease/_packing_reference.py, visits the same nodes in the same order:
tests/lease/test_lease_packing_counts.py).

Exhaustion proves a choice unpackable; a packing is returned as terms per
job (the caller verifies it independently). Exponential in the worst case:
the search stops at its time limit with ``unknown``.
"""

from __future__ import annotations

import bisect
import enum
import time
from collections.abc import Iterator, Sequence
from itertools import accumulate

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
        row = list(accumulate(accumulate(slope[: horizon - tau]), initial=0))
        out[tau] = row
    return out


#: One size's released jobs with work left: (work left, how many), work descending.
Runs = tuple[tuple[int, int], ...]


def _merge(a: Runs, b: Runs) -> Runs:
    """The runs of both multisets together (work descending, equal works summed)."""
    out: list[tuple[int, int]] = []
    i = j = 0
    while i < len(a) and j < len(b):
        if a[i][0] > b[j][0]:
            out.append(a[i])
            i += 1
        elif b[j][0] > a[i][0]:
            out.append(b[j])
            j += 1
        else:
            out.append((a[i][0], a[i][1] + b[j][1]))
            i += 1
            j += 1
    out.extend(a[i:])
    out.extend(b[j:])
    return tuple(out)


def _advance(runs: Runs, k: int) -> Runs:
    """The runs after the ``k`` jobs of most work left run one term (done ones dropped)."""
    if k == 0:
        return runs
    if k == sum(n for _, n in runs):
        return tuple((w - 1, n) for w, n in runs if w > 1)
    ran: list[tuple[int, int]] = []
    rest: Runs = ()
    for r, (w, n) in enumerate(runs):
        if n >= k:
            if w > 1:
                ran.append((w - 1, k))
            rest = ((w, n - k), *runs[r + 1 :]) if n > k else runs[r + 1 :]
            break
        if w > 1:
            ran.append((w - 1, n))
        k -= n
    return _merge(tuple(ran), rest)


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
    # Per term (reversed time) and size, the released jobs' work as runs.
    arrivals: list[list[Runs]] = []
    for tau in range(horizon):
        counts: list[dict[int, int]] = [{} for _ in range(n_cls)]
        for c, rl in releases[tau]:
            counts[c][rl] = counts[c].get(rl, 0) + 1
        arrivals.append([tuple(sorted(m.items(), reverse=True)) for m in counts])
    failed: list[set[tuple[Runs, ...]]] = [set() for _ in range(horizon + 1)]
    choice: list[tuple[int, ...]] = [()] * horizon
    nodes = 0
    budget = -1 if node_limit is None else node_limit + 1

    def children(
        state: tuple[Runs, ...], left: int, cap: list[int], avail: list[int]
    ) -> Iterator[tuple[int, ...]]:
        """Maximal count vectors whose child passes its energy rows, largest sizes first.

        Of a released job of slack s = left - work, running in this term
        changes nothing in the child's rows (k <= left - 1); leaving it out
        adds its G to every row k >= s. So the jobs left out with slack <= k
        must fit into ``cap[k]`` = M k - (work due in the last k terms now).
        Per size the jobs are taken most work first, so the ones left out
        are a suffix of the runs (slack ascending).
        """
        lowest = list(accumulate(reversed(cap), min))[::-1]  # lowest[s] = min(cap[s:])
        lows: list[int] = []
        for c in range(n_cls):
            g = sizes[c]
            # Fewest picks for which this size alone fits into every row: the
            # jobs of zero slack run now, and of a run of slack s ending at
            # position b at most lowest[s] // g may be left out.
            zero = need = end = 0
            for w, n in state[c]:
                end += n
                if w == left:
                    zero = end
                else:
                    need = max(need, end - lowest[left - w] // g)
            lows.append(max(zero, need))
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
            g, runs, count = sizes[c], state[c], avail[c]
            top = min(count, room // g)
            mine = extra
            ends: list[int] = []
            at = 0  # the run holding the job left out last (positions descend)
            for k in range(top, lows[c] - 1, -1):
                if k < count:
                    if mine is extra:
                        # Leave out the jobs at positions k.. at once.
                        mine = extra[:]
                        added = [0] * (left + 1)
                        end = 0
                        for w, n in runs:
                            end += n
                            ends.append(end)
                            if end > k:
                                added[left - w] += g * (end - max(end - n, k))
                        at = len(runs) - 1
                        acc = 0
                        for kk in range(left):
                            acc += added[kk]
                            mine[kk] += acc
                    else:
                        # One more left out: the job at position k.
                        while ends[at] - runs[at][1] > k:
                            at -= 1
                        for kk in range(left - runs[at][0], left):
                            mine[kk] += g
                    if any(e > cp for e, cp in zip(mine, cap, strict=True)):
                        break  # fewer picks leave out more: worse still
                ks[c] = k
                yield from rec(c + 1, room - k * g, g if k < count else smallest_open, mine)
            ks[c] = 0

        yield from rec(0, capacity, capacity + 1, [0] * left)

    def dfs(tau: int, rems: tuple[Runs, ...]) -> bool:
        nonlocal nodes
        nodes += 1
        if nodes == budget or (
            nodes % _CLOCK_EVERY == 0 and time.perf_counter() - start > time_limit
        ):
            raise _OutOfTimeError
        if tau == horizon:
            return all(not r for r in rems)
        state = tuple(_merge(r, a) if a else r for r, a in zip(rems, arrivals[tau], strict=True))
        if state in failed[tau]:
            return False
        left = horizon - tau
        if any(r and r[0][0] > left for r in state):
            failed[tau].add(state)
            return False
        # Energy rows: work due in the last k terms, k = 0..left.
        slope = [0] * (left + 1)
        avail: list[int] = []  # released jobs with work left, per size
        used = 0  # their GPUs
        for g, r in zip(sizes, state, strict=True):
            count = 0
            for w, n in r:
                slope[left - w] += g * n
                count += n
            avail.append(count)
            used += g * count
        fut = future[tau]
        # must[k]: released jobs' work due in the last k terms (slope summed twice).
        must = list(accumulate(accumulate(slope[:left]), initial=0))
        cap = [capacity * k - must[k] - fut[k] for k in range(left)]
        if min(cap) < 0 or must[left] + fut[left] > capacity * left:
            failed[tau].add(state)
            return False
        if used <= capacity:
            # Every released job fits: the one maximal vector runs them all
            # (what ``children`` yields first, and then nothing maximal).
            choice[tau] = tuple(avail)
            if dfs(tau + 1, tuple(tuple((w - 1, n) for w, n in r if w > 1) for r in state)):
                return True
            failed[tau].add(state)
            return False
        for ks in children(state, left, cap, avail):
            nxt = tuple(_advance(r, k) for r, k in zip(state, ks, strict=True))
            choice[tau] = ks
            if dfs(tau + 1, nxt):
                return True
        failed[tau].add(state)
        return False

    try:
        found = dfs(0, tuple(() for _ in range(n_cls)))
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
    """Terms per job from the count vectors: per size, the k with most work left (lowest index on ties).

    Per size the released jobs with work left sit in buckets by work left,
    each bucket in index order, so a term takes the first k of the buckets
    from the most work down: O(H S W + N log N) for W distinct works
    (the former sort of every released job per size and term,
    tests/lease/_packing_reference.py, gives the same terms).
    """
    cls_of = {g: c for c, g in enumerate(sizes)}
    terms: list[list[int]] = [[] for _ in jobs]
    by_release: list[list[int]] = [[] for _ in range(horizon)]
    for i, (_, rl, dl) in enumerate(jobs):
        if rl > 0:
            by_release[horizon - dl].append(i)
    buckets: list[dict[int, list[int]]] = [{} for _ in sizes]
    counts = [0] * len(sizes)  # released jobs with work left, per size
    for tau in range(horizon):
        for i in by_release[tau]:
            g, rl, _ = jobs[i]
            bisect.insort(buckets[cls_of[g]].setdefault(rl, []), i)
            counts[cls_of[g]] += 1
        term = horizon - 1 - tau
        for c, k in enumerate(choice[tau]):
            if k == 0:
                continue
            bucket = buckets[c]
            if k >= counts[c]:  # every one runs: each bucket moves down by one
                for members in bucket.values():
                    for i in members:
                        terms[i].append(term)
                buckets[c] = {w - 1: m for w, m in bucket.items() if w > 1}
                counts[c] -= len(bucket.get(1, ()))
                continue
            ran: list[tuple[int, list[int]]] = []
            for w in sorted(bucket, reverse=True):
                members = bucket[w]
                if len(members) <= k:
                    del bucket[w]
                    ran.append((w, members))
                    k -= len(members)
                else:
                    ran.append((w, members[:k]))
                    bucket[w] = members[k:]
                    k = 0
                if k == 0:
                    break
            for w, members in reversed(ran):  # least work first: w - 1 is settled
                for i in members:
                    terms[i].append(term)
                if w > 1:
                    stay = bucket.get(w - 1)
                    bucket[w - 1] = sorted(stay + members) if stay else members
                else:
                    counts[c] -= len(members)
    return [sorted(t) for t in terms]
