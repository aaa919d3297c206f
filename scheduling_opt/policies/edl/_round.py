"""The mutable scratch copy of one Elastic-Tiresias round.

Shared by the step (Tiresias plan, expansion) and compaction, which must see
each other's changes within the round; never escapes
:func:`~.elastic_tiresias.elastic_tiresias_step`. O(S) to build, O(1) per
worker moved. A copy starts with an empty ``memo``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from scheduling_opt.policies.edl.model import EdlJob, EdlState, TiresiasParams


@dataclass(slots=True)
class Round:
    """Mutable scratch copy of one round (never escapes the step)."""

    state: EdlState
    params: TiresiasParams
    alloc: dict[str, dict[str, int]]
    free: dict[str, int]
    queue: dict[str, int]
    rank: dict[str, int]
    jobs: Mapping[str, EdlJob]
    floors: Mapping[str, int]
    prio: Mapping[str, int]  # sorts as the position in Tiresias' priority order
    count: dict[str, int] = field(default_factory=dict)  # workers per job, kept by add()
    # Workers per job in ``state.placement`` (absent: waiting), counted once per round.
    held: Mapping[str, int] = field(default_factory=dict)
    # Jobs add() changed (a job placed by keep() and never touched keeps its rows).
    touched: set[str] = field(default_factory=set)
    # What compaction computed on this round as it is (donors, obtainable
    # GPUs); every add() and keep() empties it.
    memo: dict[tuple[object, ...], object] = field(default_factory=dict)
    # Jobs whose ``alloc`` entry this round alone holds (it made or copied the
    # entry since its last copy): any other entry may be another round's too
    # (a copy, or the caller's placement), so it is copied before this round
    # changes it. A copy then costs O(jobs) in C, not a dict per running job
    # (a compaction round copies itself per attempt), and no set of every
    # job: both rounds start owning nothing (issue 25, fourth pass; the
    # former ``shared`` set, all jobs but these, was built twice per copy).
    owned: set[str] = field(default_factory=set)

    def copy(self) -> Round:
        self.owned = set()
        return Round(
            self.state,
            self.params,
            dict(self.alloc),
            dict(self.free),
            self.queue,
            self.rank,
            self.jobs,
            self.floors,
            self.prio,
            dict(self.count),
            self.held,
            set(self.touched),
        )

    def workers(self, job_id: str) -> int:
        return self.count.get(job_id, 0)

    def add(self, job_id: str, server: str, n: int) -> None:
        if self.memo:
            self.memo.clear()
        self.touched.add(job_id)
        self.count[job_id] = self.count.get(job_id, 0) + n
        servers = self.alloc.get(job_id)
        if servers is None:
            servers = self.alloc[job_id] = {}
            self.owned.add(job_id)
        elif job_id not in self.owned:
            servers = self.alloc[job_id] = dict(servers)
            self.owned.add(job_id)
        servers[server] = servers.get(server, 0) + n
        if servers[server] == 0:
            del servers[server]
        if not servers:
            del self.alloc[job_id]
        self.free[server] -= n * self.jobs[job_id].job.gpus_per_worker

    def keep(self, job_id: str, servers: Mapping[str, int], workers: int) -> None:
        """Place an absent job on ``servers`` (counts > 0 summing to ``workers``) in one step.

        What ``add`` once per server does, less the bookkeeping: a kept job is
        not ``touched``.
        """
        if self.memo:
            self.memo.clear()
        self.alloc[job_id] = dict(servers)
        self.owned.add(job_id)
        self.count[job_id] = workers
        g = self.jobs[job_id].job.gpus_per_worker
        free = self.free
        for server, n in servers.items():
            free[server] -= n * g

    def floor(self, j: EdlJob) -> int:
        """Fewest workers compaction may leave a job with (its minimum and the QoS r)."""
        return self.floors[j.id]
