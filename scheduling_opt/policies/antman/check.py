"""The independent checker of one AntMan round.

It re-derives what a round may do from the state alone: each started job
gets exactly its demand, whole workers per server, on GPUs of its type;
guarantee launches respect the topology limit and take no GPU another
guarantee job holds or still reserves; opportunistic starts use only GPUs
under M; upgrades keep their GPUs; reservations only for waiting jobs, and
the next state keeps every quota and the one-guarantee-job-per-GPU rule.
AntMan (OSDI '20) §3.2, §3.3. O(J + G).
"""

from __future__ import annotations

from scheduling_opt.errors import InvalidInstanceError, VerificationError
from scheduling_opt.policies._numbers import expect
from scheduling_opt.policies.antman.model import (
    AntManDecision,
    AntManState,
    apply,
    check_invariants,
)
from scheduling_opt.policies.locality import locality_limit
from scheduling_opt.solution import Solution, Status


def check_decision(state: AntManState, decision: AntManDecision) -> None:
    """Check one round's decision against the state's rules.

    Parameters
    ----------
    state : AntManState
        The round's input.
    decision : AntManDecision
        The decision to check.

    Raises
    ------
    VerificationError
        The first rule the decision breaks, named.

    Examples
    --------
    >>> from scheduling_opt.model import Cluster, GpuType, Job, Server
    >>> c = Cluster((GpuType("V100"),), (Server("s0", "V100", 2),))
    >>> s = AntManState(c, {"A": 2}, (Job("g", 1, 1, 9.0, tenant="A"),),
    ...                 guarantee={"g": (("s0", 0),)})
    >>> bad = AntManDecision({}, {}, ("g",), (), {}, {})
    >>> check_decision(s, bad)
    Traceback (most recent call last):
    ...
    scheduling_opt.errors.VerificationError: upgraded 'g' is not a running opportunistic job

    References
    ----------
    AntMan (OSDI '20) §3.2, §3.3 Algorithm 1.
    """
    expect(state, AntManState, "state")
    expect(decision, AntManDecision, "decision")
    m = state.params.max_utilization
    by_id = state.jobs_by_id
    pending = {j.id for j in state.pending()}
    held = {g: k for k, gpus in state.guarantee.items() for g in gpus}
    # A reservation released this round (its job launched elsewhere, or gave
    # up) frees its GPUs for another launch in the same round.
    reserved_by = {
        g: k
        for k, gpus in state.reserved.items()
        for g in gpus
        if g not in set(decision.released.get(k, ()))
    }
    for name, alloc in (
        ("launched", decision.launched),
        ("opportunistic", decision.opportunistic),
    ):
        for job_id, gpus in alloc.items():
            if job_id not in pending:
                raise VerificationError(f"{name}: {job_id!r} is not pending")
            job = by_id[job_id]
            if len(set(gpus)) != len(gpus) or len(gpus) != job.max_gpus:
                raise VerificationError(f"{job_id!r}: got {len(gpus)} GPUs, needs {job.max_gpus}")
            per_server: dict[str, int] = {}
            for g in gpus:
                if not state.has_gpu(g) or not job.fits(state.cluster.server(g[0])):
                    raise VerificationError(f"{job_id!r}: GPU {g!r} unknown or of the wrong type")
                per_server[g[0]] = per_server.get(g[0], 0) + 1
            if any(n % job.gpus_per_worker for n in per_server.values()):
                raise VerificationError(f"{job_id!r}: a worker split across servers")
            if name == "launched":
                if len(per_server) > locality_limit(state.cluster, job):
                    raise VerificationError(f"{job_id!r}: spans {len(per_server)} servers")
                for g in gpus:
                    owner = reserved_by.get(g)
                    other = held.get(g) or (owner if owner != job_id else None)
                    if other is not None:
                        raise VerificationError(f"{job_id!r}: GPU {g!r} belongs to {other!r}")
            else:
                bad = [g for g in gpus if state.utilization.get(g, 0.0) >= m]
                if bad:
                    raise VerificationError(f"{job_id!r}: GPUs {bad} are at or over M")
    both = set(decision.launched) & set(decision.opportunistic)
    if both:
        raise VerificationError(f"jobs started in both classes: {sorted(both)}")
    for job_id in decision.upgraded:
        if job_id not in state.opportunistic:
            raise VerificationError(f"upgraded {job_id!r} is not a running opportunistic job")
        if job_id in state.pinned:
            raise VerificationError(f"upgraded {job_id!r} is pinned as opportunistic")
    stray = sorted(set(decision.released) - set(state.reserved))
    if stray:
        raise VerificationError(f"released names jobs that held no reservation: {stray[:5]}")
    for job_id in decision.demoted:
        if job_id not in decision.opportunistic:
            raise VerificationError(f"demoted {job_id!r} did not start as opportunistic")
    for job_id in decision.reserved:
        if job_id not in pending or job_id in decision.launched or job_id in decision.opportunistic:
            raise VerificationError(f"reservation of {job_id!r}, which is not waiting")
    for job_id, gpus in state.reserved.items():
        kept = set(decision.reserved.get(job_id, ()))
        dropped = set(gpus) - kept
        if dropped != set(decision.released.get(job_id, ())) - kept:
            raise VerificationError(f"{job_id!r}: released GPUs misreported")
    try:
        check_invariants(apply(state, decision))
    except InvalidInstanceError as e:
        raise VerificationError(str(e)) from None


def check(state: AntManState, solution: Solution[AntManDecision]) -> None:
    """Check a step's :class:`~scheduling_opt.solution.Solution`: status, objective, decision.

    A step always decides (status ``feasible`` with a decision) and states no
    objective (None).

    Parameters
    ----------
    state : AntManState
        The round's input.
    solution : Solution[AntManDecision]
        What :func:`~.step.antman_step` returned.

    Raises
    ------
    VerificationError
        A wrong status, a missing decision, an objective, or a rule the
        decision breaks (:func:`check_decision`).

    Examples
    --------
    >>> from scheduling_opt.model import Cluster, GpuType, Job, Server
    >>> from scheduling_opt.policies.antman import antman_step
    >>> c = Cluster((GpuType("V100"),), (Server("s0", "V100", 4),))
    >>> s = AntManState(c, {"A": 4}, (Job("a", 2, 2, 60.0, tenant="A"),))
    >>> check(s, antman_step(s))

    References
    ----------
    AntMan (OSDI '20) §3.3.
    """
    expect(state, AntManState, "state")
    expect(solution, Solution, "solution")
    if solution.status is not Status.FEASIBLE or solution.decision is None:
        raise VerificationError(
            f"a policy step is feasible with a decision, got {solution.status.value}"
        )
    if solution.objective is not None:
        raise VerificationError(f"an AntMan round has no objective, got {solution.objective!r}")
    check_decision(state, solution.decision)
