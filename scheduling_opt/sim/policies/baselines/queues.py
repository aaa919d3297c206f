"""Pending queues by GPU count, and the backfilling walk over them.

A queue orders its jobs by a key (a tuple ending with the job index, so keys
are unique and ties fall to submit time, then id). Jobs are kept in one
sorted list per GPU count: all jobs of one size fit or do not fit together,
so the walk "every job that fits starts, in key order" only needs the head of
each size class: the next job to start is the first head, in key order, that
fits. A call then costs O(starts x sizes) instead of O(queue length), which
is what lets the backfilling baselines keep up with a queue of thousands.
"""

from __future__ import annotations

import bisect
from collections.abc import Iterator

from scheduling_opt.sim.cluster import FreeMap, Placement

Key = tuple[float | int, ...]


class ClassQueue:
    """Sorted pending jobs, one list per GPU count.

    Examples
    --------
    >>> q = ClassQueue()
    >>> q.add((5.0, 0), 8); q.add((2.0, 1), 1); q.add((3.0, 2), 1)
    >>> [k for k, _ in q.heads()]
    [(2.0, 1), (5.0, 0)]
    >>> backfill(q, FreeMap([4]))
    [(1, ((0, 1),)), (2, ((0, 1),))]
    """

    __slots__ = ("count", "lists")

    def __init__(self) -> None:
        self.lists: dict[int, list[Key]] = {}
        self.count = 0

    def __len__(self) -> int:
        return self.count

    def add(self, key: Key, gpus: int) -> None:
        """Insert ``key`` in size class ``gpus``."""
        lst = self.lists.get(gpus)
        if lst is None:
            lst = self.lists[gpus] = []
        bisect.insort(lst, key)
        self.count += 1

    def remove(self, key: Key, gpus: int) -> None:
        """Remove ``key`` (present) from size class ``gpus``."""
        lst = self.lists[gpus]
        del lst[bisect.bisect_left(lst, key)]
        self.count -= 1

    def pop_head(self, gpus: int) -> Key:
        """Remove and return the first key of size class ``gpus``."""
        self.count -= 1
        return self.lists[gpus].pop(0)

    def heads(self) -> list[tuple[Key, int]]:
        """``(first key, size)`` of each non-empty class, in key order."""
        return sorted((lst[0], g) for g, lst in self.lists.items() if lst)

    def __iter__(self) -> Iterator[tuple[Key, int]]:
        """All ``(key, size)`` in key order (O(n log n); for tests and reports)."""
        return iter(sorted((k, g) for g, lst in self.lists.items() for k in lst))


def backfill(queue: ClassQueue, plan: FreeMap) -> list[tuple[int, Placement]]:
    """Start, in key order, every queued job that fits ``plan`` (updated in place).

    Returns ``(job index, placement)`` of the jobs started, removed from
    ``queue``. A job that does not fit is passed over, and so is every later
    job of its size (free GPUs only shrink during the walk).
    """
    starts: list[tuple[int, Placement]] = []
    heads = queue.heads()
    while heads and plan.total_free > 0:
        for i, (key, g) in enumerate(heads):  # noqa: B007 (used after the loop)
            placement = plan.place(g)
            if placement is not None:
                break
        else:
            break
        plan.take(placement)
        queue.pop_head(g)
        starts.append((int(key[-1]), placement))
        # Heads before i did not fit and never will this call (free GPUs
        # only shrink): drop them; the started class shows its next head.
        heads = heads[i + 1 :]
        lst = queue.lists[g]
        if lst:
            bisect.insort(heads, (lst[0], g))
    return starts


def strict(queue: ClassQueue, plan: FreeMap) -> list[tuple[int, Placement]]:
    """Start jobs in key order while they fit; stop at the first that does not (FIFO)."""
    starts: list[tuple[int, Placement]] = []
    while queue.count:
        key, g = queue.heads()[0]
        placement = plan.place(g)
        if placement is None:
            break
        plan.take(placement)
        queue.pop_head(g)
        starts.append((int(key[-1]), placement))
    return starts
