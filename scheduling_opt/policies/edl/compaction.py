"""Elastic-Tiresias compaction: scale in lower-queue jobs to start a waiting one.

When more than N jobs wait, each waiting job gathers workers one at a time,
each where it costs the least normalized throughput (free GPUs first, then
donors' marginal losses), on the servers EDL's locality rule allows, and
starts with the worker count that maximizes its gain when that gain is
positive. EDL (TPDS '22) §5 Algorithm 1 lines 1-6, §5.1 footnote 4, §6.3
(r = 0.5). O(J + S + P L D) per waiting job (P its requested workers,
L <= ceil(P g / m) servers, D donors); the O(J + S) part (donors and the
workers obtainable per server) once per change of the round, since it
depends on the waiting job only through its queue, GPU type and worker size.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import cast

from scheduling_opt.policies.edl.model import EdlJob
from scheduling_opt.policies.edl.plan import server_limit
from scheduling_opt.policies.edl.round import Round
from scheduling_opt.policies.locality import pick_servers

#: Gains closer than this are ties.
TOLERANCE = 1e-9


def _donors(r: Round, j: EdlJob) -> list[EdlJob]:
    """Donors for waiting job j: running elastic jobs above their floor, lowest priority first.

    Algorithm 1 takes GPUs from queues i != 0 only; we read "lower queues" as
    j's own queue or a lower one (so a queue-0 job takes from queue 1 and
    below). Within j's queue a running job may be ahead of j in priority: the
    paper's compaction still shrinks it (never below its floor), and it is
    tried last among the donors.
    """
    return _donors_from(r, j, max(1, r.queue[j.job.id]))


def _donors_from(r: Round, j: EdlJob, lowest: int) -> list[EdlJob]:
    """:func:`_donors` with the lowest queue given."""
    me = j.job.id
    queue, jobs, count, floors = r.queue, r.jobs, r.count, r.floors
    # The cheap tests first (this runs over every running job per change of the round).
    found = [
        k
        for k in r.alloc
        if queue[k] >= lowest and count[k] > floors[k] and k != me and jobs[k].job.elastic
    ]
    return [jobs[k] for k in sorted(found, key=r.prio.__getitem__)]


def _cheapest_worker(
    r: Round, j: EdlJob, server: str, donors: list[EdlJob]
) -> tuple[float, list[str]] | None:
    """Lowest throughput loss that frees room for one more worker of j on ``server``.

    Free GPUs cost nothing; then donors there lose one worker at a time,
    smallest marginal loss S(p) - S(p-1) first (ties: priority order; greedy
    is optimal for concave speed-ups). Returns the loss and the donors
    scaled in, or None when the server cannot make room.
    """
    need = j.job.gpus_per_worker - r.free[server]
    if need <= 0:
        return 0.0, []
    counts = {d.id: r.workers(d.id) for d in donors}
    here = {d.id: r.alloc.get(d.id, {}).get(server, 0) for d in donors}
    loss, taken = 0.0, []
    while need > 0:
        best: tuple[float, int] | None = None
        for i, d in enumerate(donors):
            if here[d.id] and counts[d.id] > r.floor(d):
                cost = d.throughput(counts[d.id]) - d.throughput(counts[d.id] - 1)
                if best is None or (cost, i) < best:
                    best = (cost, i)
        if best is None:
            return None
        d = donors[best[1]]
        loss += best[0]
        counts[d.id] -= 1
        here[d.id] -= 1
        need -= d.job.gpus_per_worker
        taken.append(d.id)
    return loss, taken


_Offer = tuple[list[EdlJob], dict[str, int], list[int], int]


def _waiting_donors(r: Round, j: EdlJob, lowest: int) -> tuple[list[EdlJob], dict[str, int]]:
    """:func:`_donors` of a waiting ``j`` whose lowest donor queue is ``lowest``, and their GPUs.

    The second value is ``give``: the GPUs per server the donors can free
    (each down to its floor). A waiting j is no donor, so its donors are
    those of queue 1 and below with a queue of at least ``lowest``:
    filtering that list keeps its priority order, and ``give`` is the sum
    of the same list's per-queue sums over the queues >= ``lowest``. Both
    lists are kept in ``r.memo`` until the round changes, so each further
    queue class costs O(D + q S) instead of O(R + D log D) for R placed
    jobs, D donors, q queues and S servers.
    """
    memo = r.memo
    kept = memo.get(("donors",))
    if kept is None:
        base = _donors_from(r, j, 1)
        count, floors, alloc, queue = r.count, r.floors, r.alloc, r.queue
        by_queue: dict[int, dict[str, int]] = {}
        for x in base:
            k = x.job.id
            slack = count[k] - floors[k]
            g = x.job.gpus_per_worker
            give = by_queue.get(queue[k])
            if give is None:
                give = by_queue[queue[k]] = dict.fromkeys(r.free, 0)
            for server, n in alloc[k].items():
                give[server] += min(n, slack) * g
        kept = memo["donors",] = (base, by_queue)
    base, by_queue = cast(tuple[list[EdlJob], dict[int, dict[str, int]]], kept)
    if lowest > 1:
        queue = r.queue
        base = [x for x in base if queue[x.job.id] >= lowest]
    total = dict.fromkeys(r.free, 0)
    for q, give in by_queue.items():
        if q >= lowest:
            for server, n in give.items():
                total[server] += n
    return base, total


def _offer(r: Round, j: EdlJob) -> _Offer:
    """Waiting j's donors, workers obtainable per server (and those counts, largest first), m.

    They depend on j only through its queue (the donors' lowest queue),
    GPU type and GPUs per worker, and on the round, so they are kept in
    ``r.memo`` until the round changes (``Round.add``, ``keep``): a compaction round
    asks for them for every waiting job, and most start nothing. O(J + S)
    when computed, O(1) when kept.
    """
    d = j.job.gpus_per_worker
    lowest = max(1, r.queue[j.id])
    key = ("offer", lowest, j.job.gpu_type, d)
    kept = r.memo.get(key) if j.id not in r.alloc else None
    if kept is not None:
        return kept  # type: ignore[return-value]
    if j.id in r.alloc:
        donors = _donors(r, j)
        give = dict.fromkeys(r.free, 0)
        for x in donors:
            slack = r.count[x.id] - r.floors[x.id]
            for server, n in r.alloc[x.id].items():
                give[server] += min(n, slack) * x.job.gpus_per_worker
    else:
        donors, give = _waiting_donors(r, j, lowest)
    servers = r.cluster.servers
    # Any server fits a job of no GPU type (Job.fits), so no call per server.
    fits = list(servers) if j.job.gpu_type is None else [s for s in servers if j.job.fits(s)]
    obtainable = {s.id: (r.free[s.id] + give[s.id]) // d for s in fits}
    top = sorted(obtainable.values(), reverse=True)
    offer = (donors, obtainable, top, max((s.gpus for s in fits), default=0))
    if j.id not in r.alloc:
        r.memo[key] = offer
    return offer


def compact(r: Round, j: EdlJob, accept: Callable[[Round], bool] | None = None) -> int:
    """Algorithm 1 lines 2-4 for one waiting job: scale in lower-queue jobs to start it.

    Workers of j are gathered one at a time on the servers that footnote 4's
    locality rule allows (at most ceil(P_j g / m) machines: those with the
    most obtainable GPUs), each where it costs the least throughput; the
    worker count k in [min_j, P_j] that maximizes the gain
    S_j(k)/S_j(1) - (the donors' lost normalized throughput) is kept when
    that gain is positive. Returns the workers j starts with (0: it waits).
    With ``accept``, the round after the start is first built on a copy and
    kept only if ``accept`` approves it (the step's next-plan check).
    """
    donors, obtainable, top, m = _offer(r, j)
    limit = server_limit(j.requested_gpus, m)
    # The servers chosen below give at most the `limit` largest obtainable
    # counts: when even those fall short of min_j, j cannot start (most
    # waiting jobs of a compaction round end here).
    if sum(top[:limit]) < j.job.min_workers:
        return 0
    servers = pick_servers(obtainable, j.parallelism, limit, r.rank)
    if sum(obtainable[s] for s in servers) < j.job.min_workers:
        return 0
    trial = r.copy()  # a scratch copy, so that an unprofitable attempt leaves no trace
    steps: list[tuple[str, list[str]]] = []
    gains: list[float] = []
    loss = 0.0
    for _ in range(j.parallelism):
        options = []
        for s in servers:
            found = _cheapest_worker(trial, j, s, donors)
            if found is not None:
                options.append((found[0], trial.rank[s], s, found[1]))
        if not options:
            break
        cost, _, s, taken = min(options)
        for donor in taken:
            trial.add(donor, s, -1)
        trial.add(j.id, s, 1)
        steps.append((s, taken))
        loss += cost
        gains.append(j.throughput(len(steps)) - loss)
    feasible = [(g, k + 1) for k, g in enumerate(gains) if k + 1 >= j.job.min_workers]
    if not feasible:
        return 0
    gain = max(g for g, _ in feasible)
    if gain <= TOLERANCE:
        return 0
    # Ties go to fewer workers: moving GPUs for no gain only costs a rescale.
    k = min(k for g, k in feasible if g >= gain - TOLERANCE)
    if accept is not None:
        # The trial less its steps past k is the round after the start (its
        # counts and free GPUs exactly; an emptied entry put back may sit
        # elsewhere in a dict's order, which the check does not read), so
        # no second copy is made.
        _undo(trial, j, steps[k:])
        if not accept(trial):
            return 0
    _apply(r, j, steps[:k])
    return k


def _apply(r: Round, j: EdlJob, steps: list[tuple[str, list[str]]]) -> None:
    """Move the donors' workers of ``steps`` to j, one worker of j per step."""
    for s, taken in steps:
        for donor in taken:
            r.add(donor, s, -1)
        r.add(j.id, s, 1)


def _undo(r: Round, j: EdlJob, steps: list[tuple[str, list[str]]]) -> None:
    """Take back :func:`_apply`'s ``steps`` (last first): j's workers to the donors."""
    for s, taken in reversed(steps):
        r.add(j.id, s, -1)
        for donor in reversed(taken):
            r.add(donor, s, 1)
