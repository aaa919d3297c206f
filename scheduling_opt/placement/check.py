"""The independent placement checker: recomputes everything from the model objects.

It reads the cluster, jobs, current placement, worker counts, model names
and speed model of the input (never the solvers' flattened tables) and
verifies a :class:`~scheduling_opt.solution.Solution`: the rows, the
capacity, the unplaced set, the reward (Chronus §3.4.2, Eq. 7) and the
claims (status and bound). O(rows + J S).
"""

from __future__ import annotations

import math
from typing import Any

from scheduling_opt.errors import VerificationError
from scheduling_opt.model import Job, used_gpus
from scheduling_opt.placement.model import PlacementDecision, PlacementInput
from scheduling_opt.solution import Solution, Status

#: Relative tolerance of the objective and bound comparisons.
TOLERANCE = 1e-6


def _rows(decision: PlacementDecision) -> list[tuple[str, str, int]]:
    if not isinstance(decision.rows, tuple):
        raise VerificationError("placement rows must be a tuple of (job, server, workers)")
    out = []
    for i, row in enumerate(decision.rows):
        if not isinstance(row, tuple) or len(row) != 3:
            raise VerificationError(f"placement[{i}] must be (job, server, workers), got {row!r}")
        job, server, w = row
        if not isinstance(job, str) or not isinstance(server, str):
            raise VerificationError(f"placement[{i}]: job and server must be strings")
        if isinstance(w, bool) or not isinstance(w, int) or w < 1:
            raise VerificationError(f"placement[{i}].workers must be an integer >= 1, got {w!r}")
        out.append((job, server, w))
    return out


def _caps(inp: PlacementInput, job: Job) -> list[int]:
    return [
        s.gpus // job.gpus_per_worker
        for s in inp.cluster.servers
        if s.usable_for_training and job.fits(s)
    ]


def _expected_rw(inp: PlacementInput, job: Job, n: int, span: int) -> float:
    """Eq. (7) from the cluster directly (not the solver's reward table)."""
    k_star = math.ceil(n / max(_caps(inp, job)))
    gpus = n * job.gpus_per_worker
    model = inp.models.get(job.id)
    return gpus * inp.speed.speed(model, gpus, span) / inp.speed.speed(model, gpus, k_star)


def _close(a: float, b: float) -> bool:
    return abs(a - b) <= TOLERANCE * max(1.0, abs(b))


def _finite(value: Any, name: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise VerificationError(f"{name} must be a finite number, got {value!r}")
    return float(value)


def _placed_ok(inp: PlacementInput, decision: PlacementDecision) -> tuple[float, dict[str, int]]:
    """Check the decision; return its recomputed reward and the GPUs used per server."""
    jobs = {job.id: job for job in inp.jobs}
    running = set(inp.placement.jobs())
    wanted = {j.id: inp.workers.get(j.id, j.max_workers) for j in inp.jobs if j.id not in running}
    used = used_gpus(inp.placement, jobs)
    per_job: dict[str, dict[str, int]] = {}
    for job_id, sid, w in _rows(decision):
        if job_id not in wanted:
            raise VerificationError(f"job {job_id!r} is not a job to place")
        if not inp.cluster.has_server(sid):
            raise VerificationError(f"unknown server {sid!r}")
        server, job = inp.cluster.server(sid), jobs[job_id]
        if not server.usable_for_training:
            raise VerificationError(f"server {sid!r} is not usable for training")
        if not job.fits(server):
            raise VerificationError(
                f"job {job_id!r} needs {job.gpu_type}, {sid!r} is {server.gpu_type}"
            )
        if sid in per_job.setdefault(job_id, {}):
            raise VerificationError(f"two rows for job {job_id!r} on server {sid!r}")
        per_job[job_id][sid] = w
        used[sid] = used.get(sid, 0) + w * job.gpus_per_worker
        if used[sid] > server.gpus:
            raise VerificationError(f"server {sid!r} over-full: {used[sid]} of {server.gpus} GPUs")
    parts = []
    for job_id, servers in per_job.items():
        n = sum(servers.values())
        if n != wanted[job_id]:
            raise VerificationError(f"job {job_id!r}: {n} workers placed, {wanted[job_id]} wanted")
        parts.append(_expected_rw(inp, jobs[job_id], n, len(servers)))
    unplaced = decision.unplaced
    if not isinstance(unplaced, tuple) or sorted(unplaced) != sorted(set(wanted) - set(per_job)):
        raise VerificationError(f"unplaced {unplaced!r} is not the set of jobs without rows")
    spanned = sum(len(servers) for servers in per_job.values())
    if decision.nodes_spanned != spanned:
        raise VerificationError(f"nodes_spanned {decision.nodes_spanned!r} != {spanned}")
    return math.fsum(parts), used


def _addable(inp: PlacementInput, decision: PlacementDecision, used: dict[str, int]) -> str | None:
    """An unplaced job whose workers all fit in the GPUs left: a better answer exists."""
    jobs = {job.id: job for job in inp.jobs}
    for job_id in decision.unplaced:
        job = jobs[job_id]
        n = inp.workers.get(job_id, job.max_workers)
        room = sum(
            (s.gpus - used.get(s.id, 0)) // job.gpus_per_worker
            for s in inp.cluster.servers
            if s.usable_for_training and job.fits(s)
        )
        if room >= n:
            return job_id
    return None


def check(inp: PlacementInput, solution: Solution[PlacementDecision]) -> None:
    """Verify a placement answer from the model objects; raise if anything is wrong.

    Checks: rows name jobs to place and training-usable servers of the job's
    GPU type, one row per (job, server); a placed job has all its workers;
    ``unplaced`` is exactly the rest; no server exceeds its GPUs counting
    the current placement; the objective and the decision's reward are the
    recomputed total RW (finite); ``nodes_spanned`` counts the rows; a bound
    is finite and not below the objective; ``infeasible`` is always false
    (every job may wait); ``optimal`` is false when an unplaced job fits in
    the GPUs left (adding it earns more).

    Parameters
    ----------
    inp : PlacementInput
        The input the solution answers.
    solution : Solution[PlacementDecision]
        The answer to verify.

    Raises
    ------
    VerificationError
        On the first violation, with what is wrong.

    Examples
    --------
    >>> from scheduling_opt.model import Cluster, GpuType, Job, Server
    >>> from scheduling_opt.placement.quasi import quasi_consolidation
    >>> cluster = Cluster((GpuType("V100"),), (Server("n0", "V100", 8),))
    >>> inp = PlacementInput(cluster, [Job("a", 4, 4, 60.0)])
    >>> check(inp, quasi_consolidation(inp)) is None
    True

    References
    ----------
    Chronus §3.4.2 (Eq. 7).
    """
    status = solution.status
    if not isinstance(status, Status):
        raise VerificationError(f"status must be a Status, got {status!r}")
    if status is Status.INFEASIBLE:
        raise VerificationError("infeasible claimed, but leaving every job unplaced is feasible")
    decision = solution.decision
    if decision is None:
        if status is not Status.TIME_LIMIT or solution.objective is not None:
            raise VerificationError(f"status {status} with an objective needs a decision")
        return
    if not isinstance(decision, PlacementDecision):
        raise VerificationError(f"decision must be a PlacementDecision, got {decision!r}")
    total, used = _placed_ok(inp, decision)
    objective = _finite(solution.objective, "objective")
    reward = _finite(decision.reward, "decision reward")
    for name, value in (("solution", objective), ("decision", reward)):
        if not _close(value, total):
            raise VerificationError(f"{name} objective {value!r} != recomputed RW {total!r}")
    if solution.bound is not None:
        bound = _finite(solution.bound, "bound")
        if bound < objective - TOLERANCE * max(1.0, abs(objective)):
            raise VerificationError(f"bound {bound!r} is below the objective {objective!r}")
    if status is Status.OPTIMAL:
        better = _addable(inp, decision, used)
        if better is not None:
            raise VerificationError(f"optimal claimed, but unplaced job {better!r} fits as well")
