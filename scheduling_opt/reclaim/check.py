"""The independent checker of a reclaim solution (Aryl §4's rules, from the placement rows).

It recomputes everything from the cluster, jobs and placement rows, not
from the solver's incidence arrays: O(P) for P placement rows.
"""

from __future__ import annotations

import math

from scheduling_opt.errors import VerificationError
from scheduling_opt.reclaim.model import ReclaimDecision, ReclaimInput
from scheduling_opt.solution import Solution, Status


def _servers(inp: ReclaimInput, decision: ReclaimDecision) -> set[str]:
    servers = decision.servers
    if not isinstance(servers, tuple) or not all(isinstance(s, str) for s in servers):
        raise VerificationError("servers must be a tuple of server ids")
    if len(servers) != inp.n_reclaim:
        raise VerificationError(f"{len(servers)} servers returned, {inp.n_reclaim} requested")
    if len(set(servers)) != len(servers):
        raise VerificationError(f"servers returned twice: {list(servers)}")
    for sid in servers:
        if not inp.cluster.has_server(sid) or not inp.cluster.server(sid).on_loan:
            raise VerificationError(f"server {sid!r} is not an on-loan server")
    return set(servers)


def check(inp: ReclaimInput, solution: Solution[ReclaimDecision]) -> None:
    """Recompute a reclaim decision's effects; raise if the solution says otherwise.

    Every placed job loses its workers on returned servers, is preempted
    when the rest is below ``min_workers``, and then vacates all its
    remaining GPUs (the collateral). The decision's preempted jobs, scale-ins
    and collateral must match; ``objective`` must be the preempted count and
    ``key`` (preempted, collateral); a ``bound`` must not exceed the
    objective. Every N_R-subset is feasible, so a solution without a
    decision (or claiming ``infeasible``) is wrong.

    Parameters
    ----------
    inp : ReclaimInput
        The problem the solution claims to solve.
    solution : Solution[ReclaimDecision]
        What a method returned.

    Returns
    -------
    None

    Raises
    ------
    VerificationError
        On the first disagreement, naming it.

    Examples
    --------
    >>> from scheduling_opt.model import Cluster, GpuType, Job, Placement, PlacementRow, Server
    >>> from scheduling_opt.reclaim import aryl
    >>> servers = tuple(Server(f"i{k}", "T4", 8, "inference", True) for k in (1, 2))
    >>> rows = (PlacementRow("a", "i1", 1), PlacementRow("a", "i2", 1))
    >>> inp = ReclaimInput(Cluster((GpuType("T4"),), servers), (Job("a", 2, 2, 1.0),),
    ...                    Placement(rows), 1)
    >>> sol = aryl(inp)
    >>> check(inp, sol)
    >>> check(inp, sol.with_(key=(1.0, 0.0)))
    Traceback (most recent call last):
    ...
    scheduling_opt.errors.VerificationError: key (1.0, 0.0) != (1, 1) (preempted, collateral GPUs)

    References
    ----------
    Aryl (Li et al., EuroSys '22), §4 (preemption) and §7.3 (collateral damage).
    """
    decision = solution.decision
    if solution.status is Status.INFEASIBLE or decision is None:
        raise VerificationError(
            f"status {solution.status} with no decision, but every N_R-subset is feasible"
        )
    if not isinstance(decision, ReclaimDecision):
        raise VerificationError(f"decision must be a ReclaimDecision, got {decision!r}")
    returned = _servers(inp, decision)
    preempted: list[str] = []
    scaled: dict[str, int] = {}
    collateral = 0
    for job_id in inp.placement.jobs():
        job = inp.jobs_by_id[job_id]
        rows = inp.placement.servers_of(job_id)
        gone = sum(w for sid, w in rows.items() if sid in returned)
        kept = sum(rows.values()) - gone
        if kept < job.min_workers:
            preempted.append(job_id)
            collateral += kept * job.gpus_per_worker
        elif gone:
            scaled[job_id] = gone
    if sorted(decision.preempted_jobs) != sorted(preempted):
        raise VerificationError(
            f"preempted_jobs: solver says {sorted(decision.preempted_jobs)}, "
            f"checker finds {sorted(preempted)}"
        )
    if dict(decision.scaled_in) != scaled or len(decision.scaled_in) != len(scaled):
        raise VerificationError(
            f"scaled_in: solver says {dict(decision.scaled_in)}, checker finds {scaled}"
        )
    if decision.collateral_gpus != collateral:
        raise VerificationError(
            f"collateral_gpus: solver says {decision.collateral_gpus}, checker finds {collateral}"
        )
    objective = solution.objective
    if objective is None or not math.isfinite(objective) or objective != len(preempted):
        raise VerificationError(f"objective {objective!r} != {len(preempted)} preempted jobs")
    if tuple(solution.key) != (len(preempted), collateral):
        raise VerificationError(
            f"key {solution.key!r} != {(len(preempted), collateral)} (preempted, collateral GPUs)"
        )
    bound = solution.bound
    if bound is not None and (math.isnan(bound) or bound > objective + 1e-9):
        raise VerificationError(f"bound {bound!r} above the objective {objective!r}")
