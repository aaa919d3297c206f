"""The independent checker of ``batch-size`` solutions (ONES §3, Eq. 2-4).

Recomputes F from the reported schedule with the throughput models
themselves (not the solvers' tables): every GPU of the cluster listed once,
a busy GPU's local batch in 1..max_local_batch, per job B_j <= R_j and c_j
<= its cap (max workers, R_j, one GPU in warm-up). It also refuses a NaN or
infinite objective, one that does not match the schedule, a bound on the
wrong side, an ``infeasible`` claim (letting every job wait is always
feasible) and an ``optimal`` claim that the greedy schedule beats.
O(G + J) model evaluations (plus one greedy run for an optimal claim).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from scheduling_opt.batch_size.model import BatchSizeInput, Schedule
from scheduling_opt.errors import VerificationError
from scheduling_opt.solution import Solution, Status

#: Relative tolerance of the objective comparisons.
TOLERANCE = 1e-6


def recompute(inp: BatchSizeInput, schedule: Schedule) -> float:
    """F of ``schedule`` from its local batches and the models; raises if it is invalid.

    Examples
    --------
    >>> from scheduling_opt.batch_size.examples import tiny_input
    >>> inp = tiny_input()
    >>> s = Schedule(inp.job_ids, inp.gpu_ids, (0, 0, -1, -1), (64, 64, 0, 0))
    >>> # a: 2 GPUs x 50000 samples / (128 / (0.05 + 0.002 * 64 + 0.03)) = 162.5;
    >>> # b waits (2835) and two GPUs idle (2 x 1417.5)
    >>> round(recompute(inp, s), 2)
    5832.5
    """
    if schedule.gpu_ids != inp.gpu_ids:
        raise VerificationError("gpus must list every GPU of the cluster once, in order")
    if schedule.job_ids != inp.job_ids:
        raise VerificationError("the schedule's jobs are not the input's jobs")
    per_job: dict[int, list[tuple[int, int]]] = {}
    for g, (j, b) in enumerate(zip(schedule.assignment, schedule.local_batch, strict=True)):
        if j < 0:
            continue
        if not 1 <= b <= inp.max_local[j]:
            raise VerificationError(
                f"GPU {inp.gpu_ids[g]}: local batch {b!r} of {inp.job_ids[j]!r}"
            )
        per_job.setdefault(j, []).append((g, b))
    util = 0.0
    for j, placed in per_job.items():
        c, total = len(placed), sum(b for _, b in placed)
        name = inp.job_ids[j]
        if total > inp.limit[j]:
            raise VerificationError(f"job {name!r}: batch {total} > limit {inp.limit[j]}")
        if c > inp.max_gpus[j]:
            raise VerificationError(f"job {name!r}: {c} GPUs > cap {inp.max_gpus[j]}")
        nodes = {int(inp.node_of[g]) for g, _ in placed}
        rate = inp.models[j].throughput(
            np.array([float(total)]),
            np.array([float(max(b for _, b in placed))]),
            np.array([float(c)]),
            np.array([1.0 if len(nodes) > 1 else 0.0]),
        )
        util += c * float(inp.work[j]) / float(rate[0])
    idle = sum(1 for j in schedule.assignment if j < 0)
    return util + inp.wait * (inp.n_jobs - len(per_job)) + inp.idle * idle


def _close(a: float, b: float) -> bool:
    return math.isclose(a, b, rel_tol=TOLERANCE, abs_tol=1e-9)


def check(inp: BatchSizeInput, solution: Solution[Schedule]) -> None:
    """Verify a solution independently; raise VerificationError if it does not hold.

    Parameters
    ----------
    inp : BatchSizeInput
        The round the solution claims to solve.
    solution : Solution of Schedule
        Any method's answer.

    Raises
    ------
    VerificationError
        An invalid schedule, a wrong, NaN or infinite objective, a bound
        above the objective, or a false ``infeasible``/``optimal`` claim.

    Examples
    --------
    >>> from scheduling_opt.batch_size.examples import tiny_input
    >>> from scheduling_opt.batch_size.greedy import greedy
    >>> inp = tiny_input()
    >>> sol = greedy(inp)
    >>> check(inp, sol)
    >>> check(inp, sol.with_(objective=1.0))
    Traceback (most recent call last):
    ...
    scheduling_opt.errors.VerificationError: reported objective 1.0 != recomputed 550.585...

    References
    ----------
    ONES (Bian et al., SC 2021), §3.1-§3.2 (Eq. 2-4, 8).
    """
    if solution.status is Status.INFEASIBLE:
        raise VerificationError("infeasible claimed, but letting every job wait is feasible")
    if solution.decision is None:
        if solution.status is not Status.TIME_LIMIT:
            raise VerificationError(f"status {solution.status} without a schedule")
        return
    f = recompute(inp, solution.decision)
    reported: Any = solution.objective
    if not isinstance(reported, (int, float)) or not math.isfinite(reported):
        raise VerificationError(f"objective {reported!r} is not a finite number")
    if not _close(reported, f):
        raise VerificationError(f"reported objective {reported} != recomputed {f}")
    bound = solution.bound
    if bound is not None and (not math.isfinite(bound) or (bound > f and not _close(bound, f))):
        raise VerificationError(f"lower bound {bound} above the objective {f}")
    if solution.status is Status.OPTIMAL:
        from scheduling_opt.batch_size.evaluate import schedule_of
        from scheduling_opt.batch_size.operators import greedy_genes

        witness = recompute(inp, schedule_of(inp, greedy_genes(inp)))
        if witness < f and not _close(witness, f):
            raise VerificationError(
                f"optimal claimed at {f}, but the greedy schedule has {witness}"
            )
