"""A job's mutable record inside the simulation.

Progress is integrated lazily: a running job stores the work ``done`` at
time ``since`` and its ``speed``; the work at any later instant is
``done + speed * (t - max(since, stall_until))``. Nothing is updated for
running jobs at events that do not concern them, which keeps an event O(1)
in the number of running jobs.

Only :class:`~scheduling_opt.sim.live.ClusterState` (the one owner of the
simulation's state) writes these records; policies see them through
:class:`~scheduling_opt.sim.protocol.JobView`.
"""

from __future__ import annotations

import math

from scheduling_opt.sim.cluster import Placement
from scheduling_opt.sim.protocol import RUNNING
from scheduling_opt.sim.workload import SimJob

FUTURE = 0


class JobState:
    """The simulation's record of one job (policies see it as a :class:`JobView`)."""

    __slots__ = (
        "done",
        "end",
        "factor",
        "finish",
        "first_start",
        "gpus",
        "held",
        "index",
        "job",
        "layer",
        "owed",
        "placement",
        "preemptions",
        "queued_since",
        "run_base",
        "service_base",
        "shared",
        "since",
        "slow",
        "speed",
        "stall_until",
        "status",
        "version",
    )

    def __init__(self, job: SimJob, index: int) -> None:
        self.job = job
        self.index = index
        self.status = FUTURE
        self.placement: Placement = ()
        self.held = 0
        self.gpus: tuple[tuple[int, int], ...] = ()  # (server, GPU index) while running
        self.layer = 0  # 0 exclusive, 1 opportunistic (sim/sharing.py)
        self.shared = False  # a GPU of it holds a job of the other layer
        self.slow = 1.0  # the interference factor while shared
        self.speed = 0.0
        self.factor = 1.0  # Decision.rate's speed factor, kept until set again
        self.done = 0.0
        self.owed = 0.0  # start overheads (EngineParams.start_overhead), work on top of the job's
        self.since = 0.0
        self.stall_until = 0.0
        self.end = math.inf
        self.version = 0
        self.preemptions = 0
        self.first_start = math.nan
        self.queued_since = job.submit
        self.service_base = 0.0
        self.run_base = 0.0
        self.finish = math.nan

    @property
    def opportunistic(self) -> bool:
        return self.layer == 1

    def attained(self, now: float) -> float:
        if self.status != RUNNING:
            return self.done
        start = self.since if self.since > self.stall_until else self.stall_until
        return self.done + self.speed * max(0.0, now - start)

    def remaining(self, now: float) -> float:
        return max(0.0, self.job.work + self.owed - self.attained(now))

    def service(self, now: float) -> float:
        if self.status != RUNNING:
            return self.service_base
        return self.service_base + self.held * (now - self.since)

    def executed(self, now: float) -> float:
        if self.status != RUNNING:
            return self.run_base
        return self.run_base + (now - self.since)

    def settle(self, now: float) -> None:
        """Fold the progress since ``since`` into the bases (before any change)."""
        self.done = self.attained(now)
        self.service_base += self.held * (now - self.since)
        self.run_base += now - self.since
        self.since = now
