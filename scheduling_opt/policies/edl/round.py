"""The mutable scratch copy of one Elastic-Tiresias round: who runs where, what is free.

The Tiresias plan fills it and the elastic rules (compaction, expansion)
change it in place, seeing each other's changes within the round. The step
(:func:`~.elastic_tiresias.elastic_tiresias_step`) builds one per call from
its state; the simulator's adapter builds one from the index it keeps
across calls, only in a call where an elastic rule runs. Jobs and servers
are named by their ids. O(S) to build, O(1) per worker moved; a copy
(:meth:`Round.copy`, one per compaction attempt) starts with an empty
``memo``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from scheduling_opt.model import Cluster
from scheduling_opt.policies.edl.model import EdlJob, TiresiasParams


@dataclass(slots=True)
class Round:
    """One round's placement as it is being decided.

    Attributes
    ----------
    cluster : Cluster
        The servers.
    params : TiresiasParams
        The policy's knobs.
    alloc : dict
        Job id -> server id -> workers, of every job placed so far.
    free : dict
        Server id -> GPUs no placed job holds.
    queue : dict
        Job id -> its queue (0 = G0), of every unfinished job.
    rank : dict
        Server id -> its position in the cluster (the tie-break).
    jobs : Mapping
        Job id -> :class:`~.model.EdlJob`, every unfinished job.
    floors : Mapping
        Job id -> the fewest workers compaction may leave it (empty until
        compaction needs them: :func:`~.elastic_tiresias.elastic_rules`).
    prio : Mapping
        Job id -> a key that sorts as Tiresias' priority order.
    count : dict
        Job id -> workers placed (kept by :meth:`add` and :meth:`keep`).
    held : Mapping
        Job id -> workers it ran with when the round began (absent: waiting).

    Examples
    --------
    >>> from scheduling_opt.model import Cluster, GpuType, Job, Server
    >>> c = Cluster((GpuType("V100"),), (Server("s0", "V100", 4),))
    >>> a = EdlJob(Job("a", 1, 4, 60.0))
    >>> r = Round(c, TiresiasParams(), {}, {"s0": 4}, {"a": 0}, {"s0": 0}, {"a": a}, {}, {"a": 0})
    >>> r.add("a", "s0", 3)
    >>> r.free, r.workers("a"), r.alloc
    ({'s0': 1}, 3, {'a': {'s0': 3}})
    """

    cluster: Cluster
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
    # (a compaction round copies itself per attempt), and builds no set of
    # every job: both rounds start owning nothing.
    owned: set[str] = field(default_factory=set)

    def copy(self) -> Round:
        """A copy to try changes on (compaction's trial): its own dicts, no ``memo``. O(J + S)."""
        self.owned = set()
        return Round(
            self.cluster,
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
        """Workers placed for ``job_id`` (0: none). O(1)."""
        return self.count.get(job_id, 0)

    def add(self, job_id: str, server: str, n: int) -> None:
        """``n`` more workers of ``job_id`` on ``server`` (n < 0: fewer); the job is ``touched``. O(1)."""
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
