"""Best-improvement 1-1 swap search with numpy delta evaluation (for ``aryl-dp``).

A swap returns one kept server and keeps one returned server (|R| = N_R
stays). Every server's single move delta is one vectorised pass over the P
placement rows of preemptable jobs; a swap of two servers sharing no job is
the sum of their single deltas, and the swaps of servers sharing jobs get an
exact correction from the precomputed (server, server, job) triples, O(T)
per pass, T = sum over jobs of span * (span - 1). Aryl §4's objective,
lexicographic, as ``preempted * big + collateral``.
"""

from __future__ import annotations

import time
from collections.abc import Sequence

import numpy as np
from numpy.typing import NDArray

from scheduling_opt.reclaim.model import ReclaimInput

IntArray = NDArray[np.int64]


class DeltaSwap:
    """The incidence arrays of ``inp`` once, then any number of swap searches.

    Parameters
    ----------
    inp : ReclaimInput
        The reclaim problem; building costs O(P + T).

    Examples
    --------
    >>> from scheduling_opt.model import Cluster, GpuType, Job, Placement, PlacementRow, Server
    >>> servers = tuple(Server(f"i{k}", "T4", 8, "inference", True) for k in (1, 2, 3))
    >>> rows = (PlacementRow("a", "i1", 1), PlacementRow("a", "i2", 1), PlacementRow("b", "i3", 1))
    >>> jobs = (Job("a", 2, 2, 1.0), Job("b", 1, 1, 1.0))
    >>> inp = ReclaimInput(Cluster((GpuType("T4"),), servers), jobs, Placement(rows), 2)
    >>> DeltaSwap(inp).search([0, 2], max_moves=5)  # i3 -> i2 closes job a alone
    ([0, 1], True)

    References
    ----------
    Aryl (Li et al., EuroSys '22), §4 (the objective).
    """

    def __init__(self, inp: ReclaimInput) -> None:
        self.inp = inp
        srv: list[int] = []
        job: list[int] = []
        wrk: list[int] = []
        for j in range(inp.n_jobs):
            if inp.can_preempt(j):
                for s, w in inp.job_servers[j]:
                    srv.append(s)
                    job.append(j)
                    wrk.append(w)
        n = inp.n_servers
        self.n = n
        self.srv = np.array(srv, dtype=np.int64)
        self.job = np.array(job, dtype=np.int64)
        self.wrk = np.array(wrk, dtype=np.int64)
        self.slack = np.array(inp.slack, dtype=np.int64)
        self.fixed = np.array([inp.big + g for g in inp.gpus], dtype=np.int64)
        self.gpw = np.array(inp.gpw, dtype=np.int64)
        # Every ordered pair of rows of the same job (rows are grouped by
        # job): row i pairs with the span rows of its job, itself excluded.
        first = np.flatnonzero(np.r_[True, self.job[1:] != self.job[:-1]])
        span = np.diff(np.r_[first, len(self.job)])
        group = np.repeat(np.arange(len(first)), span)
        count = span[group]
        left = np.repeat(np.arange(len(self.job)), count)
        offset = np.arange(int(count.sum())) - np.repeat(np.cumsum(count) - count, count)
        right = first[group[left]] + offset
        keep = left != right
        left, right = left[keep], right[keep]
        self.ps, self.pt = self.srv[left], self.srv[right]
        self.pj = self.job[left]
        self.pws, self.pwt = self.wrk[left], self.wrk[right]
        pairs, self.pair_of = np.unique(self.ps * n + self.pt, return_inverse=True)
        self.pr, self.pa = pairs // n, pairs % n
        self.adjacent = set(pairs.tolist())

    def _cost(self, jobs: IntArray, lost: IntArray) -> IntArray:
        cost: IntArray = np.where(
            lost > self.slack[jobs], self.fixed[jobs] - self.gpw[jobs] * lost, 0
        )
        return cost

    def _best(self, inside: NDArray[np.bool_], lost: IntArray) -> tuple[int, int, int]:
        """(delta, returned server to keep, kept server to return) of the best swap."""
        sign: IntArray = np.where(inside[self.srv], -1, 1).astype(np.int64)
        base = lost[self.job]
        row = self._cost(self.job, base + sign * self.wrk) - self._cost(self.job, base)
        single = np.bincount(self.srv, weights=row, minlength=self.n).astype(np.int64)
        best = (0, -1, -1)
        act = inside[self.ps] & ~inside[self.pt]
        if act.any():
            j, ws, wt = self.pj[act], self.pws[act], self.pwt[act]
            now = lost[j]
            corr = (
                self._cost(j, now - ws + wt)
                - self._cost(j, now - ws)
                - self._cost(j, now + wt)
                + self._cost(j, now)
            )
            pair_corr = np.bincount(self.pair_of[act], weights=corr, minlength=len(self.pr))
            ok = inside[self.pr] & ~inside[self.pa]
            total = np.where(ok, single[self.pr] + single[self.pa] + pair_corr, 0)
            k = int(np.argmin(total))
            if total[k] < 0:
                best = (int(total[k]), int(self.pr[k]), int(self.pa[k]))
        # Non-neighbour swaps: each side's own delta; scan both sides cheapest first.
        ins = np.flatnonzero(inside)
        outs = np.flatnonzero(~inside)
        ins = ins[np.argsort(single[ins], kind="stable")].tolist()
        outs = outs[np.argsort(single[outs], kind="stable")].tolist()
        if not ins or not outs:
            return best
        floor = int(single[outs[0]])
        n, adjacent = self.n, self.adjacent
        for r in ins:
            sr = int(single[r])
            if sr + floor >= best[0]:
                break
            for a in outs:
                d = sr + int(single[a])
                if d >= best[0]:
                    break
                if r * n + a not in adjacent:
                    best = (d, r, a)
                    break
        return best

    def search(
        self, start: Sequence[int], *, max_moves: int, deadline: float = float("inf")
    ) -> tuple[list[int], bool]:
        """Best-improvement swaps from ``start`` (at most ``max_moves``); never worse, sorted.

        Returns the servers and whether the search ended before ``deadline``.
        """
        inside = np.zeros(self.n, dtype=bool)
        inside[list(start)] = True
        lost = np.array(self.inp.lost_workers(start), dtype=np.int64)
        server_jobs = self.inp.server_jobs
        for _ in range(max_moves):
            if time.perf_counter() > deadline:
                return np.flatnonzero(inside).tolist(), False
            delta, r, a = self._best(inside, lost)
            if delta >= 0:
                break
            for j, w in server_jobs[r]:
                lost[j] -= w
            for j, w in server_jobs[a]:
                lost[j] += w
            inside[r] = False
            inside[a] = True
        return np.flatnonzero(inside).tolist(), True
