"""The greedy reclaimers' shared state and their lazy-deletion heap loop.

Algorithm 1 of Aryl (Appendix B) and the tie-aware greedies of ``aryl-plus``
pick N_R servers one at a time by a key; a key changes only when a job on
the server loses workers, so each pick recomputes its neighbours' keys
only: O((P d + N_R) log n) for P placement rows, span d, n servers.
"""

from __future__ import annotations

import heapq
import math
from collections.abc import Callable

from scheduling_opt.reclaim.model import ReclaimInput


class Greedy:
    """Returned servers and lost workers while a greedy picks.

    ``share[j]`` is job ``j``'s server fraction 1/|S_j| (Algorithm 1, line 7;
    S_j = the job's on-loan servers) scaled by the lcm of all spans, so that
    costs are exact integers and ties are real ties (floats would split
    1/3 + 1/3 + 1/3 from 1).
    """

    def __init__(self, inp: ReclaimInput) -> None:
        self.inp = inp
        spans = {len(inc) for inc in inp.job_servers}
        scale = math.lcm(*spans) if spans else 1
        self.share = [scale // len(inc) for inc in inp.job_servers]
        self.cost = [sum(self.share[j] for j, _ in inc) for inc in inp.server_jobs]
        self.lost = [0] * inp.n_jobs
        self.alive = [True] * inp.n_jobs
        self.returned = [False] * inp.n_servers
        self.order: list[int] = []
        # Plain attribute and tuple lookups: these run once per heap update.
        self.slack = inp.slack
        self.server_jobs = inp.server_jobs
        self.job_server_ids = tuple(tuple(t for t, _ in inc) for inc in inp.job_servers)

    def frees(self, s: int) -> bool:
        """Whether returning ``s`` now preempts nobody."""
        lost, alive, slack = self.lost, self.alive, self.slack
        return all(not alive[j] or lost[j] + w <= slack[j] for j, w in self.server_jobs[s])

    def delta(self, s: int) -> int:
        """Exact change of ``preempted * big + collateral`` if ``s`` is returned now.

        Per job: 0 if it stays within its slack, ``-gpw * w`` if it was
        already preempted (more of its GPUs leave with the server), else the
        whole preemption ``big + gpus - gpw * lost`` (``ReclaimInput.job_cost``).
        """
        inp, lost, slack = self.inp, self.lost, self.slack
        total = 0
        for j, w in self.server_jobs[s]:
            before = lost[j]
            after = before + w
            if after <= slack[j]:
                continue
            if before > slack[j]:
                total -= inp.gpw[j] * w
            else:
                total += inp.big + inp.gpus[j] - inp.gpw[j] * after
        return total

    def drop(self, s: int) -> int:
        """Cost removed from other servers by the preemptions returning ``s`` causes."""
        inp, lost = self.inp, self.lost
        total = 0
        for j, w in inp.server_jobs[s]:
            if self.alive[j] and lost[j] + w > inp.slack[j]:
                total += self.share[j] * sum(
                    1 for t, _ in inp.job_servers[j] if not self.returned[t] and t != s
                )
        return total

    def take(self, s: int) -> set[int]:
        """Return ``s``; preempted jobs leave every server's cost (Algorithm 1, UpdateCost).

        Returns the servers whose greedy key may have changed.
        """
        lost, alive, slack, cost, returned = (
            self.lost,
            self.alive,
            self.slack,
            self.cost,
            self.returned,
        )
        returned[s] = True
        self.order.append(s)
        touched: set[int] = set()
        for j, w in self.server_jobs[s]:
            lost[j] += w
            if not alive[j]:
                continue
            servers = self.job_server_ids[j]
            touched.update(servers)
            if lost[j] > slack[j]:
                alive[j] = False
                share = self.share[j]
                for t in servers:
                    cost[t] -= share
        touched.discard(s)
        return {t for t in touched if not returned[t]}


KeyFn = Callable[[Greedy, int], tuple[int, ...]]


def run_greedy(inp: ReclaimInput, key: KeyFn) -> list[int]:
    """Pick N_R servers by smallest ``key``, in pick order.

    Stale heap entries (a key recomputed since the push) are skipped on pop.
    """
    state = Greedy(inp)
    current = [key(state, s) for s in range(inp.n_servers)]
    heap = [(k, s) for s, k in enumerate(current)]
    heapq.heapify(heap)
    while len(state.order) < inp.n_reclaim:
        k, s = heapq.heappop(heap)
        if state.returned[s] or k != current[s]:
            continue
        for t in state.take(s):
            current[t] = key(state, t)
            heapq.heappush(heap, (current[t], t))
    return state.order
