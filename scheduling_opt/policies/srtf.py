"""Shortest-remaining-time-first selection of best-effort and unguaranteed SLO jobs.

Chronus §3.3.5: the Spot cluster (the GPUs the guaranteed SLO jobs leave)
runs best-effort and unguaranteed SLO jobs in order of shortest remaining
time; a job that does not fit in what is left is skipped and smaller,
later jobs may still start (backfilling; ``backfill=False`` stops at the
first job that does not fit). O(N log N).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from scheduling_opt.errors import InvalidInstanceError
from scheduling_opt.model import Job


@dataclass(frozen=True, slots=True)
class SrtfSelection:
    """Jobs to run this BE lease term, in SRTF order, and the GPUs they use."""

    selected: tuple[str, ...]
    waiting: tuple[str, ...]
    used_gpus: int


def srtf_select(jobs: Sequence[Job], gpus: int, *, backfill: bool = True) -> SrtfSelection:
    """Pick jobs by shortest remaining ``duration`` (ties: fewer GPUs, id) into ``gpus`` GPUs."""
    if gpus < 0:
        raise InvalidInstanceError("gpus", f"must be >= 0, got {gpus}")
    order = sorted(jobs, key=lambda j: (j.duration, j.max_gpus, j.id))
    selected: list[str] = []
    waiting: list[str] = []
    left = gpus
    blocked = False
    for job in order:
        if not blocked and job.max_gpus <= left:
            selected.append(job.id)
            left -= job.max_gpus
        else:
            waiting.append(job.id)
            blocked = blocked or not backfill
    return SrtfSelection(tuple(selected), tuple(waiting), gpus - left)
