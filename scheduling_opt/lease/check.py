"""The independent checker of lease answers: recompute everything from the model's jobs.

Works from the jobs (durations, GPUs, deadline steps) and the raw parameters,
not from the solvers' lease view (``lease_jobs``) or helpers: RL_i distinct
terms, all before the chosen deadline (and that deadline the first one the
last term meets), at most M GPUs per term, the total reward, and the status
claim. Chronus §3.3.4. O(N (P + RL)) for N jobs.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence

from scheduling_opt.errors import VerificationError
from scheduling_opt.lease.model import LeaseDecision, LeaseInput
from scheduling_opt.model import Job, RewardStep
from scheduling_opt.solution import Solution, Status

__all__ = ["check"]


def _friendly(gpus: int) -> int:
    """Eq. (6) round-up, computed independently of the solvers' helper."""
    if gpus <= 4:
        return 1 << (gpus - 1).bit_length()
    return math.ceil(gpus / 8) * 8


def _charged(inp: LeaseInput, job: Job) -> int:
    gpus = job.max_workers * job.gpus_per_worker
    return _friendly(gpus) if inp.round_up else gpus


def _due(inp: LeaseInput, step: RewardStep) -> int:
    due = math.floor(step.time / inp.lease_length)
    return due if inp.max_terms is None else min(due, inp.max_terms)


def _need(inp: LeaseInput, job: Job) -> int:
    return math.ceil(job.duration / inp.lease_length)


def _all_at_once(inp: LeaseInput) -> bool:
    """Whether every job fits from term 0 at once, each meeting its first deadline."""
    fits = sum(_charged(inp, job) for job in inp.jobs) <= inp.capacity
    return fits and all(_due(inp, job.deadlines[0]) >= _need(inp, job) for job in inp.jobs)


def _check_no_answer(inp: LeaseInput, status: Status) -> None:
    if status not in (Status.INFEASIBLE, Status.TIME_LIMIT):
        raise VerificationError(f"status {status} without a decision")
    if status is Status.INFEASIBLE:
        if not inp.require_all:
            raise VerificationError("infeasible without require_all (rejecting all is feasible)")
        if _all_at_once(inp):
            raise VerificationError("infeasible, yet every job fits at once from term 0")


def _check_job(
    inp: LeaseInput, job: Job, level: object, held: Sequence[object], usage: Counter[int]
) -> float:
    """One job's terms and level; returns its reward."""
    if level is None:
        if held:
            raise VerificationError(f"rejected job {job.id!r} holds terms {list(held)}")
        if inp.require_all:
            raise VerificationError(f"require_all, yet job {job.id!r} is rejected")
        return 0.0
    if isinstance(level, bool) or not isinstance(level, int):
        raise VerificationError(f"job {job.id!r}: bad level {level!r}")
    if not 0 <= level < len(job.deadlines):
        raise VerificationError(f"job {job.id!r}: bad level {level!r}")
    terms = [k for k in held if isinstance(k, int) and not isinstance(k, bool) and k >= 0]
    if len(terms) != len(held) or len(set(terms)) != len(terms):
        raise VerificationError(f"job {job.id!r}: terms must be distinct indices >= 0")
    need = _need(inp, job)
    if len(terms) != need:
        raise VerificationError(f"job {job.id!r} holds {len(terms)} terms, needs {need}")
    met = [p for p, step in enumerate(job.deadlines) if max(terms) < _due(inp, step)]
    if not met or met[0] != level:
        raise VerificationError(
            f"job {job.id!r}: last term {max(terms)} meets deadline "
            f"{met[0] if met else None}, decision says {level}"
        )
    for k in terms:
        usage[k] += _charged(inp, job)
    return float(job.deadlines[level].reward)


def _check_decision(inp: LeaseInput, decision: LeaseDecision) -> float:
    """The decision's feasibility; returns its recomputed reward."""
    ids = [job.id for job in inp.jobs]
    if sorted(decision.levels) != sorted(ids):
        raise VerificationError(f"levels must name every job exactly: {sorted(decision.levels)}")
    unknown = sorted(set(decision.terms) - set(ids))
    if unknown:
        raise VerificationError(f"terms name unknown jobs {unknown}")
    usage: Counter[int] = Counter()
    total = 0.0
    for job in inp.jobs:
        total += _check_job(
            inp, job, decision.levels[job.id], decision.terms.get(job.id, ()), usage
        )
    over = {k: u for k, u in sorted(usage.items()) if u > inp.capacity}
    if over:
        raise VerificationError(f"terms over capacity {inp.capacity}: {over}")
    return total


def check(inp: LeaseInput, solution: Solution[LeaseDecision]) -> None:
    """Verify a lease solution against the jobs; raise if anything does not hold.

    Parameters
    ----------
    inp : LeaseInput
        The input the solution answers.
    solution : Solution[LeaseDecision]
        Any method's answer.

    Returns
    -------
    None

    Raises
    ------
    VerificationError
        An infeasible decision (wrong term count, a term at or after the
        chosen deadline, a level that is not the first deadline met, a term
        over capacity, a rejected job under ``require_all``), an objective
        that is NaN/inf or differs from the recomputed reward, a bound below
        the objective, or a status that the answer contradicts (``infeasible``
        without ``require_all``, or when every job fits at once).

    Examples
    --------
    >>> from scheduling_opt.model import Job, RewardStep
    >>> from scheduling_opt.lease import LeaseInput, greedy
    >>> inp = LeaseInput([Job("a", 1, 1, 60.0, deadlines=(RewardStep(120.0, 5),))], 1, 60.0)
    >>> check(inp, greedy(inp)) is None
    True

    References
    ----------
    Chronus (SoCC '21) §3.3.4, Eqs. (3)-(5).
    """
    decision, objective = solution.decision, solution.objective
    if decision is None:
        if objective is not None:
            raise VerificationError(f"objective {objective!r} without a decision")
        _check_no_answer(inp, solution.status)
        return
    if solution.status is Status.INFEASIBLE:
        raise VerificationError("infeasible, yet a decision")
    total = _check_decision(inp, decision)
    for name, got in (("objective", objective), ("decision reward", decision.reward)):
        if got is None or not math.isfinite(got):
            raise VerificationError(f"{name} {got!r} is not a finite number")
        if not math.isclose(got, total, rel_tol=1e-9, abs_tol=1e-6):
            raise VerificationError(f"{name} {got!r} != recomputed reward {total}")
    bound = solution.bound
    if bound is not None:
        if math.isnan(bound):
            raise VerificationError("bound is NaN")
        if bound < total - 1e-6 * max(1.0, abs(total)):
            raise VerificationError(f"bound {bound} below the reward {total} of the decision")
