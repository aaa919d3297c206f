"""The independent allocation checker: worker ranges, capacity, running jobs, JCTs.

The completion times are replayed by an event loop written independently of
:func:`~scheduling_opt.allocation.simulate_elastic` (same rules, Aryl §5.2,
Table 3). O(n^2).
"""

from __future__ import annotations

import math
from collections.abc import Mapping

from scheduling_opt.allocation.model import AllocationDecision, AllocationInput
from scheduling_opt.errors import VerificationError
from scheduling_opt.model import Job
from scheduling_opt.solution import Solution, Status


def check(inp: AllocationInput, solution: Solution[AllocationDecision]) -> None:
    """Verify an allocation independently; raise :class:`VerificationError` if it fails.

    Parameters
    ----------
    inp : AllocationInput
    solution : Solution[AllocationDecision]

    Returns
    -------
    None
        Returns only when the solution holds.

    Raises
    ------
    VerificationError
        A missing decision (waiting is always feasible, so there is always
        one), workers outside a job's range, a running job below its minimum,
        more free GPUs used than there are, a wrong ``start_now``, a
        non-finite objective or one (or a per-job JCT) that the replay does
        not reproduce, a lower bound above the objective (or NaN), or an
        ``optimal`` claim worse than letting the queued jobs wait.

    Examples
    --------
    >>> from scheduling_opt.allocation import AllocationInput, two_phase
    >>> from scheduling_opt.model import Job
    >>> inp = AllocationInput((Job("A", 2, 3, 100.0), Job("B", 2, 6, 20.0)), 8)
    >>> check(inp, two_phase(inp))

    References
    ----------
    Aryl (EuroSys '22) §5.2.
    """
    decision = solution.decision
    if decision is None or solution.status is Status.INFEASIBLE:
        raise VerificationError(
            f"status {solution.status} without a decision: letting queued jobs wait is feasible"
        )
    workers = dict(decision.workers)
    if set(workers) != {j.id for j in inp.jobs}:
        raise VerificationError("workers must name every job exactly once")
    gpus = 0
    for j in inp.jobs:
        k = workers[j.id]
        if isinstance(k, bool) or not isinstance(k, int):
            raise VerificationError(f"job {j.id}: workers must be an integer, got {k!r}")
        if j.id in inp.running and not j.min_workers <= k <= j.max_workers:
            raise VerificationError(
                f"running job {j.id} must keep {j.min_workers}..{j.max_workers} workers, got {k}"
            )
        if k and not j.min_workers <= k <= j.max_workers:
            raise VerificationError(
                f"job {j.id}: {k} workers outside {j.min_workers}..{j.max_workers}"
            )
        gpus += (k - (j.min_workers if j.id in inp.running else 0)) * j.gpus_per_worker
    if gpus > inp.capacity:
        raise VerificationError(f"allocation uses {gpus} free GPUs of {inp.capacity}")
    expected = sorted(j.id for j in inp.queued() if workers[j.id])
    if sorted(decision.start_now) != expected:
        raise VerificationError(f"start_now must list the queued jobs given workers: {expected}")
    objective = solution.objective
    if objective is None or not math.isfinite(objective):
        raise VerificationError(f"objective must be a finite number, got {objective!r}")
    finish = _replay(inp, workers)
    mean = sum(finish.values()) / len(finish) if finish else 0.0
    for value in (objective, decision.average_jct):
        if abs(value - mean) > 1e-6 * (1 + mean):
            raise VerificationError(f"reported average JCT {value} != replayed {mean}")
    for job_id, t in finish.items():
        got = decision.jct.get(job_id)
        if got is None or abs(got - t) > 1e-6 * (1 + t):
            raise VerificationError(f"job {job_id}: reported JCT {got} != replayed {t}")
    if solution.bound is not None and not (
        solution.bound <= objective + 1e-6 * (1 + abs(objective))
    ):
        # Written so that a NaN bound fails too.
        raise VerificationError(f"lower bound {solution.bound} above the objective {objective}")
    if solution.status is Status.OPTIMAL:
        # The checker's own witness: running jobs at their minimum, queued jobs waiting.
        base = {j.id: (j.min_workers if j.id in inp.running else 0) for j in inp.jobs}
        replayed = _replay(inp, base)
        witness = sum(replayed.values()) / len(replayed) if replayed else 0.0
        if objective > witness + 1e-6 * (1 + witness):
            raise VerificationError(
                f"optimal claimed with {objective}, but letting queued jobs wait gives {witness}"
            )


def _replay(inp: AllocationInput, workers: Mapping[str, int]) -> dict[str, float]:
    """Replay the JCTs with an event loop written independently of the simulator."""
    jobs = list(inp.jobs)
    alloc = dict(workers)
    progress = dict.fromkeys(alloc, 0.0)
    finish: dict[str, float] = {}
    t, first = 0.0, True
    while len(finish) < len(jobs):
        live = [j for j in jobs if j.id not in finish and alloc[j.id]]
        if not first or not live:
            _refill(jobs, inp.total_gpus, alloc, finish)
            live = [j for j in jobs if j.id not in finish and alloc[j.id]]
        first = False
        if not live:
            raise VerificationError("no job can run")
        rate = {j.id: 1 / inp.scaling.time(j, alloc[j.id]) for j in live}
        dt = min((1 - progress[j.id]) / rate[j.id] for j in live)
        t += dt
        for j in live:
            progress[j.id] += dt * rate[j.id]
            if progress[j.id] >= 1 - 1e-9:
                finish[j.id] = t
                alloc[j.id] = 0
    return finish


def _refill(
    jobs: list[Job], total: int, alloc: dict[str, int], finish: Mapping[str, float]
) -> None:
    free = total - sum(alloc[j.id] * j.gpus_per_worker for j in jobs if j.id not in finish)
    for j in jobs:
        if j.id not in finish and alloc[j.id] == 0 and j.min_gpus <= free:
            alloc[j.id], free = j.min_workers, free - j.min_gpus
    for j in jobs:
        if j.id not in finish and alloc[j.id]:
            grow = min(j.max_workers - alloc[j.id], free // j.gpus_per_worker)
            alloc[j.id], free = alloc[j.id] + grow, free - grow * j.gpus_per_worker
