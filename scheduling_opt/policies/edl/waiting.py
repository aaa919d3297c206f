"""The waiting jobs of one Elastic-Tiresias round, in priority order, in streams of like jobs.

Tiresias' budget pass visits the waiting jobs whose P_j g still fits the
budget, and compaction tries the waiting jobs in priority order; on a long
queue (P_MIX2 on 40-80 servers: thousands waiting) a pass over every job
per call was most of a run. Split into streams, each a sorted list of jobs
of one queue and one :func:`kind`, a pass merges the streams' heads and
drops a whole stream at once: the budget pass when its P_j g exceeds the
budget (which only falls, :func:`~.plan.budget_pass`), the compaction loop
while its class (:func:`job_class`) is known to fail
(:func:`~.elastic_tiresias.elastic_rules`). A job's priority key is
``base + item``, the same key as the round's ``prio`` (the step: the
position in the order; the simulator's adapter: ``(queue << 32) | index``).
A stream may list jobs that run in the round (the passes skip them).
"""

from __future__ import annotations

import heapq
from collections.abc import Callable, Container, Hashable, Mapping, Sequence
from dataclasses import dataclass

from scheduling_opt.policies.edl.model import EdlJob


def kind(j: EdlJob) -> tuple[object, ...]:
    """All that compaction reads of a waiting job besides its queue (jobs of one kind fare alike).

    Compaction's attempt on a waiting job j, up to its next-plan check,
    reads j's GPU type and GPUs per worker, min_j, P_j (so ceil(P_j g / m)
    and its trial's length) and S_j(k)/S_j(1) for k <= P_j, besides the
    round and max(1, queue): two jobs of one kind in one such queue class
    reach the check, or fail before it, alike on the same round. O(P_j).

    Examples
    --------
    >>> from scheduling_opt.model import Job
    >>> a = EdlJob(Job("a", 1, 4, 9.0), speedup=(1.0, 1.8, 2.4, 2.9), requested=2)
    >>> b = EdlJob(Job("b", 1, 4, 5.0), speedup=(1.0, 1.8, 2.5, 3.0), requested=2)
    >>> kind(a) == kind(b), kind(a)
    (True, (None, 1, 1, 2, (1.0, 1.8)))
    """
    job = j.job
    p = j.parallelism
    return (job.gpu_type, job.gpus_per_worker, job.min_workers, p, j.speedup[:p] or None)


def job_class(queue: int, kind_of: Hashable) -> Hashable:
    """Compaction's class of a waiting job: max(1, its queue) (its donors' lowest queue) and its kind.

    ``kind_of``: :func:`kind`, or a number standing for it.

    Examples
    --------
    >>> job_class(0, ("k",)) == job_class(1, ("k",)), job_class(2, ("k",))
    (True, (2, ('k',)))
    """
    return (max(1, queue), kind_of)


@dataclass(frozen=True, slots=True)
class Stream:
    """Waiting jobs of one queue and one kind: priority keys ``base + item``, ascending."""

    base: int
    #: (max(1, queue), kind): compaction's outcome before its check is the class's.
    cls: Hashable
    #: P_j g: the GPUs a job of the stream asks of Tiresias' budget.
    want: int
    items: Sequence[int]


@dataclass(frozen=True, slots=True)
class Waiting:
    """A round's waiting jobs as streams; ``job(item)`` is the job, ``count`` how many wait."""

    streams: list[Stream]
    job: Callable[[int], EdlJob]
    count: int

    @classmethod
    def of(
        cls, order: Sequence[EdlJob], queue: Mapping[str, int], placed: Container[str]
    ) -> Waiting:
        """The jobs of ``order`` not ``placed``, keyed by their position in it, by (queue, kind).

        O(J + sum of P_j) for J jobs.

        Examples
        --------
        >>> from scheduling_opt.model import Job
        >>> order = [EdlJob(Job(k, 1, 2, 9.0)) for k in "abc"]
        >>> w = Waiting.of(order, {"a": 0, "b": 0, "c": 1}, {"b"})
        >>> [(s.cls[0], s.want, s.items) for s in w.streams], w.count
        ([(1, 2, [0]), (1, 2, [2])], 2)
        """
        groups: dict[tuple[int, tuple[object, ...]], list[int]] = {}
        for i, j in enumerate(order):
            if j.job.id not in placed:
                groups.setdefault((queue[j.job.id], kind(j)), []).append(i)
        streams = [
            Stream(0, job_class(q, k), order[items[0]].requested_gpus, items)
            for (q, k), items in groups.items()
        ]
        return cls(streams, order.__getitem__, sum(len(s.items) for s in streams))


def take_head(heads: list[tuple[int, int]], streams: Sequence[Stream], at: list[int]) -> int:
    """Pop the first stream's next item (its index in the order) and re-key the heap.

    ``heads`` is a heap of ``(base + next item, stream)``, ``at[n]`` stream
    n's cursor; the stream leaves the heap when its last item is taken.
    O(log S) for S streams.

    Examples
    --------
    >>> streams = [Stream(0, "a", 1, (0, 5)), Stream(0, "b", 1, (3,))]
    >>> heads, at = [(0, 0), (3, 1)], [0, 0]
    >>> [take_head(heads, streams, at) for _ in range(3)], heads
    ([0, 3, 5], [])
    """
    n = heads[0][1]
    items = streams[n].items
    i = at[n]
    at[n] = i + 1
    if i + 1 < len(items):
        heapq.heapreplace(heads, (streams[n].base + items[i + 1], n))
    else:
        heapq.heappop(heads)
    return items[i]
