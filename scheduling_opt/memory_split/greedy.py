"""AntMan's trial-and-error memory split (method ``greedy``).

Every job starts at its minimum; one chunk at a time goes to the job whose
normalized speed gains most, until memory runs out or no chunk helps
(AntMan §3.3, "Local coordinator"). O(C log n) with a heap for C spare
chunks and n jobs, plus O(n K) to tabulate the curves.
"""

from __future__ import annotations

import heapq
import time

from scheduling_opt.errors import InstanceTooLargeError
from scheduling_opt.memory_split._solution import infeasible, solution_of
from scheduling_opt.memory_split.model import MemorySplitDecision, MemorySplitInput
from scheduling_opt.solution import Seed, Solution, Status, named

#: Most chunk counts the greedy tabulates over all jobs (Python floats: ~24 MB
#: per million).
TABLE_LIMIT = 5_000_000


@named("greedy")
def greedy(
    inp: MemorySplitInput, *, seed: Seed = None, time_limit: float | None = None
) -> Solution[MemorySplitDecision]:
    """AntMan's trial-and-error: each chunk to the job whose speed gains most.

    A trial gives one more chunk to each job in turn and measures the gain;
    the best trial is kept (ties: earlier job). It stops when memory runs out
    or no trial improves the aggregate, so a job whose speed only rises near
    full memory (ResNet) can be starved: that is the gap to ``exact``.

    Parameters
    ----------
    inp : MemorySplitInput
    seed : int, numpy Generator or None
        Unused.
    time_limit : float, optional
        Unused (bounded by the chunk count).

    Returns
    -------
    Solution[MemorySplitDecision]
        ``feasible`` (no bound: the cheapest one, the MCKP's LP, costs more
        than the greedy; see :func:`~scheduling_opt.memory_split.upper_bound`),
        or ``infeasible`` when the minimums do not fit.

    Raises
    ------
    InstanceTooLargeError
        Speed tables of more than :data:`TABLE_LIMIT` entries in all (each job's
        table stops at the spare chunks).

    Examples
    --------
    >>> from scheduling_opt.memory_split import MemorySplitInput, OpportunisticJob, PRESETS
    >>> jobs = (
    ...     OpportunisticJob("vgg", 10.0, PRESETS["vgg"]),
    ...     OpportunisticJob("resnet", 10.0, PRESETS["resnet"]),
    ... )
    >>> sol = greedy(MemorySplitInput(32.0, jobs, guarantee_gb=21.0, chunk_gb=1.0))
    >>> dict(sol.decision.chunks), round(sol.objective, 4)
    ({'vgg': 5, 'resnet': 6}, 1.175)

    References
    ----------
    AntMan (OSDI '20) §3.3 and Figure 10.
    """
    start = time.perf_counter()
    if not inp.minimums_fit():
        return infeasible(start)
    bounds = inp.bounds()
    chunks = [lo for lo, _ in bounds]
    left = inp.capacity - sum(chunks)
    # A job never gets more than the spare chunks: its table stops there.
    size = sum(min(hi - lo, left) + 1 for lo, hi in bounds)
    if size > TABLE_LIMIT:
        raise InstanceTooLargeError(
            "jobs",
            f"{len(bounds)} jobs need speed tables of {size:.3g} chunk counts in all, "
            f"above the greedy's limit {TABLE_LIMIT:.0e} (use a larger chunk_gb)",
        )
    tables = [inp.speed_table(j)[: left + 1].tolist() for j in inp.jobs]
    heap: list[tuple[float, int]] = []

    def push(i: int) -> None:
        k = chunks[i] - bounds[i][0]
        if k + 1 < len(tables[i]):
            heapq.heappush(heap, (tables[i][k] - tables[i][k + 1], i))

    for i in range(len(chunks)):
        push(i)
    while left > 0 and heap:
        neg_gain, i = heapq.heappop(heap)
        if -neg_gain <= 0:
            break
        chunks[i] += 1
        left -= 1
        push(i)
    return solution_of(inp, chunks, Status.FEASIBLE, start)
