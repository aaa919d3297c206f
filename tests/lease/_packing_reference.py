"""The packing search as it was before issue 25's speed-ups: the references.

``replay``: the former ``_replay`` (tests/lease/test_lease_packing_replay.py
proves that the faster version gives every job the same terms). ``pack``:
the former search over per-job work lists (tests/lease/test_lease_packing_counts.py
proves that the search over counts per work value visits the same nodes and
gives the same answer).
"""

from __future__ import annotations

import time
from collections.abc import Iterator, Sequence

from scheduling_opt.lease.packing import (
    _CLOCK_EVERY,
    MAX_SEARCH_HORIZON,
    Verdict,
    _future_must,
    _OutOfTimeError,
    _replay,
)


def replay(
    jobs: Sequence[tuple[int, int, int]],
    horizon: int,
    sizes: Sequence[int],
    choice: Sequence[tuple[int, ...]],
) -> list[list[int]]:
    cls_of = {g: c for c, g in enumerate(sizes)}
    left = [rl for _, rl, _ in jobs]
    terms: list[list[int]] = [[] for _ in jobs]
    of_cls: list[list[int]] = [[] for _ in sizes]
    for i, (g, rl, _) in enumerate(jobs):
        if rl > 0:
            of_cls[cls_of[g]].append(i)
    for tau in range(horizon):
        for c, k in enumerate(choice[tau]):
            ready = [i for i in of_cls[c] if left[i] > 0 and horizon - jobs[i][2] <= tau]
            ready.sort(key=lambda i: (-left[i], i))
            for i in ready[:k]:
                left[i] -= 1
                terms[i].append(horizon - 1 - tau)
    return [sorted(t) for t in terms]


def pack(
    jobs: Sequence[tuple[int, int, int]],
    capacity: int,
    time_limit: float,
    node_limit: int | None = None,
) -> tuple[list[list[int]] | None, Verdict]:
    """The former search: per size, a sorted tuple of every job's work left."""
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
