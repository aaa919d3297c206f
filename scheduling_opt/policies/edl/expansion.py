"""Elastic-Tiresias expansion: idle GPUs to the running jobs that gain most from one more worker.

When no job waits, each idle GPU goes, one worker at a time, to the
running elastic job whose throughput gains most from it (EDL (TPDS '22)
§5 Algorithm 1 lines 7-12, §6.3: never a scale-out that lowers
throughput), within EDL's locality rule (§5.1 footnote 4). O(J log J + W
log J) plus the server scans, for W workers added.
"""

from __future__ import annotations

import heapq
from collections.abc import Sequence

from scheduling_opt.policies.edl.model import EdlJob
from scheduling_opt.policies.edl.plan import server_limit
from scheduling_opt.policies.edl.round import Round

#: The servers a GPU type fits (cluster order, and as a set) and the largest one's GPUs (m).
_Fitting = tuple[list[str], frozenset[str], int]


def expand(r: Round, order: Sequence[EdlJob]) -> None:
    """Algorithm 1 lines 7-12: each free GPU to the running job gaining most.

    Gain: S(p+1)/S(p) - 1 > 0 (EDL §6.3: never a scale-out that lowers
    throughput). A worker needs its GPUs on one server, and the job may use
    a new server only within ceil((p+1) g / m) servers. Ties: priority order,
    then a server the job already uses, then cluster order.

    The jobs wait in a heap by their key (-gain, priority position); the
    top job with a server gets a worker and goes back with its next gain.
    A job without a server is dropped for the call: a worker added
    elsewhere only takes free GPUs and changes no other job's workers or
    servers, so it never finds one later. The first job popped that has a
    server is therefore the one a scan of every job would choose. A job's
    servers (those its GPU type fits, in cluster order) and m are computed
    once per call; only jobs with a server when the call starts get a key,
    and the loop stops when no GPU is idle.
    O(J log J + W log J) plus the server scans, for W workers added.
    """
    left = sum(r.free.values())
    if left <= 0:
        return  # no idle GPU: no job finds a server
    fitting: dict[str | None, _Fitting] = {}
    heap: list[tuple[float, int]] = []
    workers = r.count.get
    for i, j in enumerate(order):
        job = j.job
        p = workers(job.id, 0)
        if not p or p >= job.max_workers or not job.elastic:
            continue
        t = job.gpu_type
        if t not in fitting:
            servers = [s for s in r.cluster.servers if job.fits(s)]
            ids = [s.id for s in servers]
            fitting[t] = (ids, frozenset(ids), max((s.gpus for s in servers), default=0))
        # Without a server now, never in this call (above): not worth a key.
        if _expansion_server(r, j, p, fitting[t]) is None:
            continue
        key = _expansion_key(r, j)
        if key is not None:
            heap.append((key, i))
    heapq.heapify(heap)
    while heap and left > 0:
        _, i = heapq.heappop(heap)
        j = order[i]
        server = _expansion_server(r, j, r.workers(j.id), fitting[j.job.gpu_type])
        if server is None:
            continue
        r.add(j.id, server, 1)
        left -= j.job.gpus_per_worker
        key = _expansion_key(r, j)
        if key is not None:
            heapq.heappush(heap, (key, i))


def _expansion_key(r: Round, j: EdlJob) -> float | None:
    """-gain of one more worker of running elastic ``j``, None when it may not grow or gains <= 0."""
    p = r.workers(j.id)
    if not p or not j.job.elastic or p >= j.job.max_workers:
        return None
    gain = j.throughput(p + 1) / j.throughput(p) - 1
    return -gain if gain > 0 else None


def _expansion_server(r: Round, j: EdlJob, p: int, fitting: _Fitting) -> str | None:
    """The server a new worker of ``j`` goes to: one it uses, else a new one within the limit.

    Lowest cluster rank first in each group; None when no server has room.
    """
    d = j.job.gpus_per_worker
    on = r.alloc[j.id]
    servers, fits, m = fitting
    mine = [s for s in on if r.free[s] >= d and s in fits]
    if mine:
        return min(mine, key=r.rank.__getitem__)
    if len(on) + 1 > server_limit((p + 1) * d, m):
        return None
    for s in servers:
        if r.free[s] >= d and s not in on:
            return s
    return None
