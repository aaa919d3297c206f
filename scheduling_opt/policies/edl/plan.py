"""Tiresias' plan: which jobs keep, lose or get GPUs in priority order, and where a start goes.

In priority order a job is in the plan while its GPUs fit the cluster's
budget: a running job keeps its placement, a running job that no longer
fits is preempted (a victim), and a waiting job whose P_j g GPUs fit is a
start candidate, whose GPUs leave the budget whether or not it can be
placed. :func:`budget_pass` is that pass; :class:`Gangs` places the
candidates, in order, on the GPUs the kept jobs leave, P_j whole workers
on at most ceil(P_j g / m) servers (EDL (TPDS '22) §5.1 footnote 4), no
job migrating; :func:`restore_idle` gives a victim back its GPUs when no
start took them (every elastic round: docs/elastic.md, rule 5). EDL §5
Algorithm 1 (its Tiresias part); Tiresias (NSDI '19).

Three callers run it: the step on its state
(:func:`~.elastic_tiresias.elastic_tiresias_step`), compaction's
next-plan check on a trial placement (:mod:`.replan`), and the
simulator's adapter on the index it keeps across calls. Each holds the
placed jobs its own way (a list, a trial's copy, range sums per queue), so
the pass reads them through a key list and a sum function, and the waiting
jobs as :class:`~.waiting.Stream` objects: a stream is dropped once its
P_j g exceeds the budget (which only falls), so a long queue costs only
the jobs that still fit.
"""

from __future__ import annotations

import bisect
import heapq
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Protocol, TypeVar

from scheduling_opt.policies.edl.waiting import Stream
from scheduling_opt.policies.locality import K, pick_servers

#: A victim, as its caller names it (a job id, an index).
T = TypeVar("T")
#: A server, as its caller names it (an id, a position).
S = TypeVar("S")
_S = TypeVar("_S", contravariant=True)


class FreeGpus(Protocol[_S]):
    """Free GPUs by server: a dict by server id, or a list by server position."""

    def __getitem__(self, server: _S, /) -> int: ...
    def __setitem__(self, server: _S, gpus: int, /) -> None: ...


def budget_pass(
    budget: int,
    keys: Sequence[int],
    held: Callable[[int, int], int],
    each: Callable[[int, int], Sequence[int]],
    streams: Sequence[Stream],
    victims: list[int],
    starts: list[int],
    placed: Callable[[int], bool] | None = None,
) -> int:
    """Tiresias' budget pass over the placed jobs and the waiting ones, in priority order.

    Parameters
    ----------
    budget : int
        The cluster's GPUs.
    keys : sequence of int
        Priority keys of the placed jobs, ascending.
    held : callable
        ``held(a, b)``: GPUs of the placed jobs at positions a..b-1 of ``keys``.
    each : callable
        ``each(a, b)``: the GPUs of each of those jobs (each >= 1), in order.
    streams : sequence of Stream
        The waiting jobs; a job's key is its stream's ``base`` plus its
        item, and no key is in ``keys`` unless ``placed`` says so.
    victims : list of int
        Filled with the positions (in ``keys``) of the placed jobs that do
        not fit, in priority order.
    starts : list of int
        Filled with the items of the waiting jobs that fit, in priority order.
    placed : callable, optional
        ``placed(item)``: the stream's job is placed after all (listed in
        ``keys``); skipped here. Default: none is.

    Returns
    -------
    int
        The budget left.

    Notes
    -----
    The streams' heads are merged by key; a stream whose P_j g exceeds the
    budget is dropped (the budget only falls). The placed jobs between two
    waiting jobs visited are kept in one step when they all fit, else one
    by one (every one a victim once the budget is 0: each holds a GPU).
    O(C log B + V) plus the ``held`` calls, for C waiting jobs visited, B
    streams and V placed jobs visited one by one.

    Examples
    --------
    >>> s = [Stream(0, "a", 4, [1, 3]), Stream(0, "b", 2, [4])]
    >>> keys, gpus = [0, 2], [3, 2]  # placed jobs at keys 0 and 2: 3 and 2 GPUs
    >>> victims, starts = [], []
    >>> budget_pass(8, keys, lambda a, b: sum(gpus[a:b]), lambda a, b: gpus[a:b], s, victims, starts)
    1
    >>> victims, starts  # 0 (3 GPUs) kept, 1 (4) starts, 2 (2) preempted, 3 (4) and 4 (2) do not fit
    ([1], [1])
    """
    heads = [
        (s.base + s.items[0], n) for n, s in enumerate(streams) if s.items and s.want <= budget
    ]
    heapq.heapify(heads)
    at = [0] * len(streams)
    pos = 0
    while heads:
        stream = streams[heads[0][1]]
        if stream.want > budget:
            heapq.heappop(heads)  # this P_j g no longer fits, nor will it
            continue
        end = bisect.bisect_left(keys, heads[0][0], pos)
        if end > pos:
            # The placed jobs before it (those before a stream dropped above
            # are taken here with them: the same keeps and victims).
            budget = _keep(pos, end, budget, held, each, victims)
            pos = end
            if stream.want > budget:
                heapq.heappop(heads)
                continue
        # take_head, inline (this loop runs at every simulator call).
        n = heads[0][1]
        items, i = stream.items, at[n]
        at[n] = i + 1
        if i + 1 < len(items):
            heapq.heapreplace(heads, (stream.base + items[i + 1], n))
        else:
            heapq.heappop(heads)
        item = items[i]
        if placed is None or not placed(item):
            budget -= stream.want
            starts.append(item)
    if pos < len(keys):
        budget = _keep(pos, len(keys), budget, held, each, victims)
    return budget


def _keep(
    pos: int,
    end: int,
    budget: int,
    held: Callable[[int, int], int],
    each: Callable[[int, int], Sequence[int]],
    victims: list[int],
) -> int:
    """Placed jobs pos..end-1 in order: kept while they fit the budget, else victims; the budget left.

    All kept in one step when their sum fits; once the budget is 0, every
    one left is a victim (each holds a GPU).
    """
    total = held(pos, end)
    if total <= budget:
        return budget - total
    for t, gpus in enumerate(each(pos, end), pos):
        if not budget:
            victims.extend(range(t, end))
            break
        if gpus <= budget:
            budget -= gpus
        else:
            victims.append(t)
    return budget


def server_limit(gpus: int, m: int) -> int:
    """Most servers ``gpus`` GPUs of a job may span: ceil(gpus / m) (EDL §5.1 footnote 4).

    m: GPUs of the largest server the job's GPU type fits (0: none fits,
    and the limit is 0), as :func:`~scheduling_opt.policies.locality.locality_limit`
    computes it by a scan; callers that keep m per GPU type ask here.

    Examples
    --------
    >>> server_limit(12, 8), server_limit(8, 8), server_limit(3, 0)
    (2, 1, 0)
    """
    return -(-gpus // m) if m else 0


def gang_on(
    usable: Mapping[K, int], workers: int, limit: int, rank: Mapping[K, int]
) -> dict[K, int] | None:
    """``workers`` on at most ``limit`` of the ``usable`` servers (free workers each), or None.

    :func:`~scheduling_opt.policies.locality.pick_servers` chooses the
    servers; they are filled in its order. O(S log S).

    Examples
    --------
    >>> gang_on({"a": 3, "b": 2, "c": 1}, 4, 2, {"a": 0, "b": 1, "c": 2})
    {'a': 3, 'c': 1}
    >>> gang_on({"a": 3, "b": 2}, 6, 2, {"a": 0, "b": 1}) is None
    True
    """
    servers = pick_servers(usable, workers, limit, rank)
    if sum(usable[s] for s in servers) < workers:
        return None
    out: dict[K, int] = {}
    left = workers
    for s in servers:
        n = min(usable[s], left)
        out[s] = n
        left -= n
    return out


class _Kind:
    """What :class:`Gangs` keeps for jobs of one GPU type and worker size.

    ``m``; ``usable``: the workers each server can take (None: to compute);
    ``big``: the largest of them (-1: to compute); ``top``: them sorted,
    largest first (None: to compute). All but ``m`` follow the free GPUs.
    """

    __slots__ = ("big", "m", "top", "usable")

    def __init__(self, m: int) -> None:
        self.m = m
        self.usable: list[int] | None = None
        self.big = -1
        self.top: list[int] | None = None


class Gangs:
    """Free GPUs per server and the gangs placed on them one after another.

    A gang is P_j workers of g GPUs on at most ceil(P_j g / m) servers, m
    the GPUs of the largest server the job's GPU type fits (EDL §5.1
    footnote 4), chosen by :func:`gang_on` (largest first, the server that
    completes it the smallest that does; ties: cluster order). Servers are
    positions 0..S-1 in cluster order, which is also the tie-break rank.

    Two exact shortcuts skip most of the server choice, which most
    candidates of a busy cluster fail: a gang of one server takes the
    server with the fewest usable workers that hold it (the lowest position
    among equals: what :func:`gang_on` chooses with ``limit`` 1), found by a
    scan in C; a gang of more cannot be placed when the ``limit`` largest
    usable counts fall short (the choice takes the largest first). Those
    counts are kept, per GPU type and worker size, until a gang is placed.

    Parameters
    ----------
    free : list of int
        GPUs free per server (placing a gang takes from it).
    sizes : sequence of int
        GPUs per server.
    types : sequence of str, optional
        GPU type per server (None: every job fits every server).
    rank : mapping of int to int, optional
        ``{s: s}`` over the positions, when the caller keeps one.

    Examples
    --------
    >>> g = Gangs([3, 4, 2], [4, 4, 4])
    >>> g.place(2), g.place(5), g.free  # one server (limit 1), then two
    ([(2, 2)], [(1, 4), (0, 1)], [2, 0, 0])
    >>> g.place(3) is None
    True
    """

    __slots__ = ("_kinds", "_rank", "_sizes", "_types", "free")

    def __init__(
        self,
        free: list[int],
        sizes: Sequence[int],
        types: Sequence[str] | None = None,
        rank: Mapping[int, int] | None = None,
    ) -> None:
        self.free = free
        self._sizes = sizes
        self._types = types
        self._rank = rank
        self._kinds: dict[tuple[str | None, int], _Kind] = {}

    def reset(self, free: list[int]) -> None:
        """Start again from ``free`` on the same servers (m is kept). O(kinds)."""
        self.free = free
        for kind in self._kinds.values():
            kind.usable, kind.big, kind.top = None, -1, None

    def largest(self, gpu_type: str | None) -> int:
        """m: GPUs of the largest server ``gpu_type`` fits (0: none). O(S)."""
        sizes, types = self._sizes, self._types
        if types is None or gpu_type is None:
            return max(sizes, default=0)
        return max((c for c, t in zip(sizes, types, strict=True) if t == gpu_type), default=0)

    def usable(self, gpu_type: str | None, gpus_per_worker: int) -> list[int]:
        """Whole workers each server can take now (0 where the type does not fit). O(S)."""
        free, types, d = self.free, self._types, gpus_per_worker
        if types is None or gpu_type is None:
            return free if d == 1 else [f // d for f in free]
        return [f // d if t == gpu_type else 0 for f, t in zip(free, types, strict=True)]

    def place(
        self, workers: int, gpus_per_worker: int = 1, gpu_type: str | None = None
    ) -> list[tuple[int, int]] | None:
        """Place a gang of ``workers`` workers: (server, workers) in the order chosen, or None.

        The servers' free GPUs are taken. O(1) for a gang the shortcuts
        refuse once the counts are kept; O(S) in C for a gang of one
        server; O(S log S) for one of more that passes the shortcut.
        """
        d = gpus_per_worker
        kind = self._kinds.get((gpu_type, d))
        if kind is None:
            kind = self._kinds[gpu_type, d] = _Kind(self.largest(gpu_type))
        limit = server_limit(workers * d, kind.m)
        where: list[tuple[int, int]]
        if limit == 1:
            big = kind.big
            if big < 0:
                big = kind.big = max(self._usable(kind, gpu_type, d), default=0)
            if big < workers:
                return None
            usable = self._usable(kind, gpu_type, d)
            # The smallest usable count that holds the gang, at its first server:
            # counts are at most m, so the scan stops within m steps.
            f = workers
            while f not in usable:
                f += 1
            where = [(usable.index(f), workers)]
        else:
            top = kind.top
            if top is None:
                top = kind.top = sorted(self._usable(kind, gpu_type, d), reverse=True)
            if sum(top[:limit]) < workers:
                return None
            rank = self._rank
            if rank is None:
                rank = self._rank = {s: s for s in range(len(self.free))}
            usable = self._usable(kind, gpu_type, d)
            chosen = gang_on({s: u for s, u in enumerate(usable) if u}, workers, limit, rank)
            if chosen is None:
                return None
            where = list(chosen.items())
        free = self.free
        for s, n in where:
            free[s] -= n * d
        self.reset(free)
        return where

    def _usable(self, kind: _Kind, gpu_type: str | None, d: int) -> list[int]:
        usable = kind.usable
        if usable is None:
            usable = kind.usable = self.usable(gpu_type, d)
        return usable


def restore_idle(
    free: FreeGpus[S], victims: Iterable[T], rows: Callable[[T], Sequence[tuple[S, int]]]
) -> list[T]:
    """Victims put back on their GPUs where no start took them; returns those still preempted.

    In order, a victim whose every server still has its GPUs free takes
    them back (``free`` loses them); the others stay preempted, returned in
    the same order. ``rows(victim)``: its (server, GPUs) pairs. Without it,
    compaction handed an idle victim's GPUs to a waiting job behind it, the
    next call's plan preempted that job for the same budget and compaction
    gave the GPUs back, at one instant without end (docs/elastic.md, rule
    5). O(rows of the victims).

    Examples
    --------
    >>> free = {"s0": 2, "s1": 0}
    >>> restore_idle(free, ["a", "b"], {"a": [("s0", 2)], "b": [("s1", 1)]}.__getitem__), free
    (['b'], {'s0': 0, 's1': 0})
    """
    still: list[T] = []
    for v in victims:
        where = rows(v)
        if len(where) == 1:  # most jobs: one server
            s, g = where[0]
            if free[s] >= g:
                free[s] -= g
            else:
                still.append(v)
        elif all(free[s] >= g for s, g in where):
            for s, g in where:
                free[s] -= g
        else:
            still.append(v)
    return still
