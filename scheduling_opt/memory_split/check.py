"""The independent memory-split checker: chunk ranges, capacity, objective, infeasibility.

Speeds are recomputed from each job's curve at the granted fraction, and an
``infeasible`` claim is accepted only when the minimums truly do not fit
(AntMan §3.3). O(n * curve points).
"""

from __future__ import annotations

import math

import numpy as np

from scheduling_opt.errors import VerificationError
from scheduling_opt.memory_split.model import TOLERANCE, MemorySplitDecision, MemorySplitInput
from scheduling_opt.solution import Solution, Status


def _minimum(inp: MemorySplitInput, peak_gb: float, fraction: float) -> int:
    return math.ceil(fraction * peak_gb / inp.chunk_gb - 1e-9)


def check(inp: MemorySplitInput, solution: Solution[MemorySplitDecision]) -> None:
    """Verify a split independently; raise :class:`VerificationError` if it fails.

    Parameters
    ----------
    inp : MemorySplitInput
    solution : Solution[MemorySplitDecision]

    Returns
    -------
    None
        Returns only when the solution holds.

    Raises
    ------
    VerificationError
        An ``infeasible`` claim while the minimums fit (or a missing decision
        under any other status than ``time_limit``), a job outside [min,
        peak] chunks, more chunks than the spare memory holds, memory or
        speeds misreported, a non-finite objective or one that does not match,
        an upper bound below the objective (or NaN), or an ``optimal`` claim
        below the split that gives all spare chunks to one job.

    Examples
    --------
    >>> from scheduling_opt.memory_split import MemorySplitInput, OpportunisticJob, PRESETS, greedy
    >>> inp = MemorySplitInput(8.0, (OpportunisticJob("sr", 4.0, PRESETS["sr"]),), 6.0, 1.0)
    >>> check(inp, greedy(inp))

    References
    ----------
    AntMan (OSDI '20) §3.3.
    """
    capacity = math.floor((inp.memory_gb - inp.guarantee_gb) / inp.chunk_gb + 1e-9)
    need = sum(_minimum(inp, j.peak_gb, j.curve[0][0]) for j in inp.jobs)
    decision = solution.decision
    if solution.status is Status.INFEASIBLE:
        if need <= capacity:
            raise VerificationError(
                f"reported infeasible, but the minimums ({need} chunks) fit in {capacity}"
            )
        if decision is not None:
            raise VerificationError("an infeasible answer carries no decision")
        return
    if decision is None:
        if solution.status is Status.TIME_LIMIT:
            return  # stopped before a first incumbent: nothing to check
        raise VerificationError(f"status {solution.status} without a decision")
    ids = {j.id for j in inp.jobs}
    if set(decision.chunks) != ids:
        raise VerificationError(f"chunks must name every job, got {sorted(decision.chunks)}")
    total, used = 0.0, 0
    for job in inp.jobs:
        k = decision.chunks[job.id]
        lo = _minimum(inp, job.peak_gb, job.curve[0][0])
        hi = math.ceil(job.peak_gb / inp.chunk_gb - 1e-9)
        if isinstance(k, bool) or not isinstance(k, int) or not lo <= k <= hi:
            raise VerificationError(f"job {job.id!r}: {k!r} chunks outside [{lo}, {hi}]")
        used += k
        gb = min(k * inp.chunk_gb, job.peak_gb)
        fractions, speeds = zip(*job.curve, strict=True)
        speed = float(np.interp(min(gb / job.peak_gb, 1.0), fractions, speeds))
        if abs(decision.memory_gb.get(job.id, math.nan) - gb) > 1e-9 * (1 + gb):
            raise VerificationError(f"job {job.id!r}: memory {decision.memory_gb.get(job.id)}")
        if abs(decision.speed.get(job.id, math.nan) - speed) > TOLERANCE * (1 + speed):
            raise VerificationError(f"job {job.id!r}: speed {decision.speed.get(job.id)}")
        total += speed
    if used > capacity:
        raise VerificationError(f"{used} chunks exceed the {capacity} available")
    reported = solution.objective
    if reported is None or not math.isfinite(reported):
        raise VerificationError(f"objective must be a finite number, got {reported!r}")
    if abs(reported - total) > TOLERANCE * (1 + total):
        raise VerificationError(f"reported objective {reported} != recomputed {total}")
    if solution.bound is not None and not (solution.bound >= reported - 1e-9 * (1 + abs(reported))):
        # Written so that a NaN bound fails too.
        raise VerificationError(f"upper bound {solution.bound} below the objective {reported}")
    if solution.status is Status.OPTIMAL:
        witness = _best_single_grant(inp, capacity)
        if reported < witness - TOLERANCE * (1 + witness):
            raise VerificationError(
                f"optimal claimed with {reported}, but giving the spare chunks to one job "
                f"reaches {witness}"
            )


def _best_single_grant(inp: MemorySplitInput, capacity: int) -> float:
    """The best split that raises one job above its minimum (the checker's own witness)."""
    lows = [_minimum(inp, j.peak_gb, j.curve[0][0]) for j in inp.jobs]
    spare = capacity - sum(lows)

    def speed(job_index: int, chunks: int) -> float:
        job = inp.jobs[job_index]
        gb = min(chunks * inp.chunk_gb, job.peak_gb)
        fractions, speeds = zip(*job.curve, strict=True)
        return float(np.interp(min(gb / job.peak_gb, 1.0), fractions, speeds))

    base = [speed(i, lo) for i, lo in enumerate(lows)]
    total = math.fsum(base)
    return max([total] + [total - base[i] + speed(i, lows[i] + spare) for i in range(len(lows))])
