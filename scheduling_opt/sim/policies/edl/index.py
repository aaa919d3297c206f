"""The simulator's index of Elastic-Tiresias' queues, kept across calls instead of rebuilt per call.

The full P_MIX2 trace makes tens of thousands to over a million policy
calls over hundreds to thousands of unfinished jobs, so building the
step's state (O(J) objects) at every call dominated a run. The adapter
(:mod:`.elastic_tiresias`) keeps this index instead and updates it only
for the jobs that changed: per queue, every job's index in a sorted list
(the priority order is the lists' concatenation: lower queue first, then
arrival), the running jobs with their workers summed over index ranges
(:class:`RangeSums`), and the waiting jobs by :func:`~scheduling_opt.policies.edl.waiting.kind`
as :class:`~scheduling_opt.policies.edl.waiting.Stream` objects over the
live lists. :meth:`QueueIndex.plan` runs Tiresias' budget pass
(:func:`~scheduling_opt.policies.edl.plan.budget_pass`) over it queue by
queue; :meth:`QueueIndex.streams` gives the elastic rules the waiting jobs.
The index holds no rule of its own. A job's priority key is ``(queue <<
32) | index`` (job indices are below 2^32: ``limits.MAX_JOBS`` is 10^6).
"""

from __future__ import annotations

import bisect
from collections.abc import Mapping

from scheduling_opt.policies.edl import EdlJob
from scheduling_opt.policies.edl.plan import budget_pass
from scheduling_opt.policies.edl.waiting import Stream, job_class, kind


class RangeSums:
    """Integers by index, summed over a range of indices (a Fenwick tree).

    ``add(i, delta)`` and ``below(i)`` (the sum over indices < i) in
    O(log N) for N the largest index seen; the tree doubles when an index
    outgrows it (O(N) then, O(log N) times per run).

    Examples
    --------
    >>> s = RangeSums()
    >>> s.add(3, 2); s.add(5000, 7); s.add(3, 1)
    >>> s.below(3), s.below(4), s.below(5001)
    (0, 3, 10)
    """

    def __init__(self) -> None:
        self.tree = [0] * 1024
        self.values = [0] * 1024

    def add(self, i: int, delta: int) -> None:
        """Add ``delta`` at index ``i`` (>= 0)."""
        tree = self.tree
        n = len(tree)
        if i >= n:
            self._grow(i)
            tree = self.tree
            n = len(tree)
        self.values[i] += delta
        i += 1
        while i <= n:
            tree[i - 1] += delta
            i += i & -i

    def below(self, i: int) -> int:
        """The sum over the indices below ``i``."""
        tree = self.tree
        i = min(i, len(tree))
        total = 0
        while i > 0:
            total += tree[i - 1]
            i &= i - 1
        return total

    def _grow(self, i: int) -> None:
        n = len(self.tree)
        while n <= i:
            n *= 2
        values = self.values + [0] * (n - len(self.values))
        tree = values.copy()  # the linear build: each node passes its sum to its parent
        for k in range(1, n + 1):
            parent = k + (k & -k)
            if parent <= n:
                tree[parent - 1] += tree[k - 1]
        self.values, self.tree = values, tree


class QueueIndex:
    """Every unfinished job by queue, running or waiting, as the plan and the rules read them.

    Parameters
    ----------
    levels : int
        Number of queues (thresholds + 1).

    Examples
    --------
    >>> from scheduling_opt.model import Job
    >>> ix = QueueIndex(2)
    >>> for i in range(3):
    ...     ix.admit(i, EdlJob(Job(str(i), 1, 4, 9.0), requested=2))
    >>> ix.requeue(0, 1, 2); ix.requeue(1, 0, 0); ix.requeue(2, 1, 0)
    >>> start, preempted = [], []
    >>> ix.plan(4, start, preempted), start, preempted  # 1 (G0) starts, 0 keeps, 2 does not fit
    (0, [1], [])
    >>> ix.prio["2"] == (1 << 32) | 2
    True
    """

    def __init__(self, levels: int) -> None:
        # Per unfinished job, by index: its id, kind (numbered in order of
        # appearance) and queue (-1: not listed yet).
        self.ids: dict[int, str] = {}
        self.kind: dict[int, int] = {}
        self.level: dict[int, int] = {}
        self.kinds: dict[tuple[object, ...], int] = {}
        self.kind_want: list[int] = []  # a kind's P_j g
        # Job indices of each queue, ascending: the priority order is their concatenation.
        self.lists: list[list[int]] = [[] for _ in range(levels)]
        # The same split: the running jobs, and the waiting jobs by kind.
        self.runs: list[list[int]] = [[] for _ in range(levels)]
        self.waits: list[dict[int, list[int]]] = [{} for _ in range(levels)]
        # Workers of each queue's running jobs, in all and by index range, and
        # each running job's as listed there.
        self.run_total = [0] * levels
        self.sums = [RangeSums() for _ in range(levels)]
        self.listed: dict[int, int] = {}
        # Each job's queue and priority key by id, as the step's round reads them.
        self.queue: dict[str, int] = {}
        self.prio: dict[str, int] = {}
        # The waiting lists as streams: per queue for the plan (keys: indices),
        # per (queue, kind) for the rules (keys: priority keys). A stream reads
        # its list itself (never replaced, changed only between calls).
        self.plan_streams: list[list[Stream]] = [[] for _ in range(levels)]
        self.rule_streams: dict[tuple[int, int], Stream] = {}

    def __len__(self) -> int:
        return len(self.level)

    def admit(self, i: int, job: EdlJob) -> None:
        """A new job (index ``i``); :meth:`requeue` lists it."""
        k = self.kinds.setdefault(kind(job), len(self.kinds))
        if k == len(self.kind_want):
            self.kind_want.append(job.requested_gpus)
        self.ids[i] = job.id
        self.kind[i] = k
        self.level[i] = -1

    def forget(self, i: int) -> bool:
        """A job finished: unlisted. False when it was not known."""
        level = self.level.pop(i, None)
        if level is None:
            return False
        if level >= 0:
            self._unlist(i, level)
            self._unsplit(i, level)
        key = self.ids.pop(i)
        del self.kind[i]
        self.queue.pop(key, None)
        self.prio.pop(key, None)
        return True

    def _unlist(self, i: int, level: int) -> None:
        lst = self.lists[level]
        del lst[bisect.bisect_left(lst, i)]

    def _unsplit(self, i: int, level: int) -> None:
        n = self.listed.pop(i, None)
        if n is not None:
            self.run_total[level] -= n
            self.sums[level].add(i, -n)
            lst = self.runs[level]
        else:
            lst = self.waits[level][self.kind[i]]
        del lst[bisect.bisect_left(lst, i)]

    def requeue(self, i: int, q: int, workers: int) -> None:
        """Job ``i`` is in queue ``q`` and runs ``workers`` workers (0: waits). O(log N + N) in C."""
        old = self.level[i]
        if old == q and (i in self.listed) == bool(workers):
            if workers:  # a resize in place: the queue's total follows
                delta = workers - self.listed[i]
                self.run_total[q] += delta
                self.sums[q].add(i, delta)
                self.listed[i] = workers
            return
        if old >= 0:
            self._unsplit(i, old)
        if workers:
            self.listed[i] = workers
            self.run_total[q] += workers
            self.sums[q].add(i, workers)
            bisect.insort(self.runs[q], i)
        else:
            k = self.kind[i]
            lst = self.waits[q].get(k)
            if lst is None:
                lst = self.waits[q][k] = []
                want = self.kind_want[k]
                self.plan_streams[q].append(Stream(0, job_class(q, k), want, lst))
                self.rule_streams[q, k] = Stream(q << 32, job_class(q, k), want, lst)
            bisect.insort(lst, i)
        if old != q:
            if old >= 0:
                self._unlist(i, old)
            bisect.insort(self.lists[q], i)
            self.level[i] = q
            key = self.ids[i]
            self.queue[key] = q
            self.prio[key] = (q << 32) | i

    def plan(self, budget: int, start: list[int], preempted: list[int]) -> int:
        """Tiresias' budget pass over every queue in turn; returns the budget left.

        ``start``: filled with the waiting jobs that fit, ``preempted`` with
        the running ones that do not, in priority order. A queue's keys are
        job indices (each queue's keys all precede the next queue's), and
        the workers of its running jobs between two positions are a
        difference of range sums. O(levels) plus the passes.
        """
        for q in range(len(self.runs)):
            budget = self._plan_queue(q, budget, start, preempted)
        return budget

    def _plan_queue(self, q: int, budget: int, start: list[int], preempted: list[int]) -> int:
        runs, below, listed = self.runs[q], self.sums[q].below, self.listed
        n, total = len(runs), self.run_total[q]

        def held(a: int, b: int) -> int:
            # below(runs[t]) sums the queue's running jobs before position t.
            return (total if b == n else below(runs[b])) - (below(runs[a]) if a else 0)

        victims: list[int] = []
        budget = budget_pass(
            budget,
            runs,
            held,
            lambda a, b: [listed[i] for i in runs[a:b]],
            self.plan_streams[q],
            victims,
            start,
        )
        preempted.extend(runs[t] for t in victims)
        return budget

    def streams(self, victims: list[int]) -> list[Stream]:
        """The waiting jobs as the rules read them: the kept streams, and one per ``victims`` job."""
        out = [s for s in self.rule_streams.values() if s.items]
        level, kinds, want = self.level, self.kind, self.kind_want
        for i in victims:
            q, k = level[i], kinds[i]
            out.append(Stream(q << 32, job_class(q, k), want[k], (i,)))
        return out

    def order(self, jobs: Mapping[int, EdlJob]) -> list[EdlJob]:
        """The priority order (lower queue first, then arrival). O(J)."""
        return [jobs[i] for lst in self.lists for i in lst]
