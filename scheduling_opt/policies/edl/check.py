"""The independent checker of one Elastic-Tiresias round.

It re-derives what a round may do from the state alone, never from the
step's internals: capacity, min..max workers and GPU types of the new
placement; inelastic jobs keep their size; scale-in only by compaction,
never below max(min_j, ceil(r P_j)) and never of G0; scale-out only by
expansion within the locality rule; started, preempted and promoted jobs
consistent with the state; the reported objective equal to the new
placement's throughput. EDL (TPDS '22) §5 Algorithm 1, §5.1 footnote 4,
§6.3. O(J + S + rows).
"""

from __future__ import annotations

import math

from scheduling_opt.errors import InvalidInstanceError, VerificationError
from scheduling_opt.policies._numbers import expect
from scheduling_opt.policies.edl.model import (
    EdlDecision,
    EdlState,
    check_placement,
    qos_floor,
)
from scheduling_opt.policies.locality import locality_limit
from scheduling_opt.solution import Solution, Status

#: Relative tolerance of the objective against the recomputed throughput.
TOLERANCE = 1e-9


def check_decision(state: EdlState, decision: EdlDecision) -> None:
    """Check one round's decision against the state's rules.

    Parameters
    ----------
    state : EdlState
        The round's input.
    decision : EdlDecision
        The decision to check.

    Raises
    ------
    VerificationError
        The first rule the decision breaks, named.

    Examples
    --------
    >>> from scheduling_opt.model import Cluster, GpuType, Job, Placement, Server
    >>> c = Cluster((GpuType("V100"),), (Server("s0", "V100", 4),))
    >>> s = EdlState(c, ())
    >>> check_decision(s, EdlDecision(Placement(), {}, (), (), (), {}, "none"))

    References
    ----------
    EDL (TPDS '22) §5 Algorithm 1, §5.1 footnote 4, §6.3.
    """
    expect(state, EdlState, "state")
    expect(decision, EdlDecision, "decision")
    p = state.params
    by_id = state.jobs_by_id
    new = decision.placement
    try:
        check_placement(state.cluster, by_id, new, "placement")
    except InvalidInstanceError as e:
        raise VerificationError(str(e)) from None
    if set(decision.queues) != set(by_id):
        raise VerificationError("queues must name every job of the state, and only those")
    running = {j.id for j in state.running()}
    stray = sorted(set(decision.resized) - running)
    if stray:
        raise VerificationError(f"resized names jobs that were not running: {stray[:5]}")
    for job_id in decision.promoted:
        if job_id not in by_id:
            raise VerificationError(f"promoted {job_id!r} is no job of the state")
        j = by_id[job_id]
        if state.placement.workers_of(job_id) or j.waiting < p.limit(j.executed):
            raise VerificationError(f"{job_id!r} promoted without starving")
        if decision.queues.get(job_id) != 0:
            raise VerificationError(f"promoted {job_id!r} is not in G0")
    for job_id in decision.started:
        if job_id not in by_id:
            raise VerificationError(f"started {job_id!r} is no job of the state")
        j = by_id[job_id]
        if state.placement.workers_of(job_id) or not new.workers_of(job_id):
            raise VerificationError(f"started {job_id!r} was running or is not placed")
        # Expansion in the same round may widen it, within its own rule.
        gpus = max(j.parallelism, new.workers_of(job_id)) * j.job.gpus_per_worker
        if len(new.servers_of(job_id)) > locality_limit(state.cluster, j.job, gpus):
            raise VerificationError(f"started {job_id!r} spans too many servers")
    for job_id in decision.preempted:
        if not state.placement.workers_of(job_id) or new.workers_of(job_id):
            raise VerificationError(f"preempted {job_id!r} was not running or still runs")
    for j in state.pending():
        if new.workers_of(j.id) and j.id not in decision.started:
            raise VerificationError(f"{j.id!r} placed without being started")
    for j in state.running():
        before, after = state.placement.workers_of(j.id), new.workers_of(j.id)
        if not after:
            if j.id not in decision.preempted:
                raise VerificationError(f"{j.id!r} stopped without a preemption")
            continue
        if after != before and not j.job.elastic:
            raise VerificationError(f"inelastic {j.id!r} resized {before} -> {after}")
        if after < before:
            floor = qos_floor(j, p.qos)
            if decision.mode != "compaction" or after < floor:
                raise VerificationError(f"{j.id!r} scaled in to {after} (floor {floor})")
            if decision.queues.get(j.id) == 0:
                raise VerificationError(f"{j.id!r} of G0 scaled in")
        if after > before:
            limit = locality_limit(state.cluster, j.job, after * j.job.gpus_per_worker)
            spread = len(new.servers_of(j.id))
            if decision.mode != "expansion" or spread > max(
                limit, len(state.placement.servers_of(j.id))
            ):
                raise VerificationError(f"{j.id!r} scaled out outside expansion or locality")
        if decision.resized.get(j.id, before) != after:
            raise VerificationError(f"{j.id!r}: resized misreported")


def check(state: EdlState, solution: Solution[EdlDecision]) -> None:
    """Check a step's :class:`~scheduling_opt.solution.Solution`: status, objective, decision.

    A step always decides (status ``feasible`` with a decision); its
    objective must be finite and equal to the new placement's cluster
    throughput, the sum over jobs of S(p)/S(1), recomputed here from the
    speed-up curves.

    Parameters
    ----------
    state : EdlState
        The round's input.
    solution : Solution[EdlDecision]
        What :func:`~.elastic_tiresias.elastic_tiresias_step` returned.

    Raises
    ------
    VerificationError
        A wrong status, a missing decision, a NaN/inf or mismatched
        objective, or a rule the decision breaks (:func:`check_decision`).

    Examples
    --------
    >>> from scheduling_opt.model import Cluster, GpuType, Job, Server
    >>> from scheduling_opt.policies.edl import elastic_tiresias_step
    >>> c = Cluster((GpuType("V100"),), (Server("s0", "V100", 4),))
    >>> s = EdlState.from_jobs(c, [Job("a", 1, 4, 60.0)])
    >>> check(s, elastic_tiresias_step(s))

    References
    ----------
    EDL (TPDS '22) §5 Algorithm 1, §6.3 (normalized throughput).
    """
    expect(state, EdlState, "state")
    expect(solution, Solution, "solution")
    if solution.status is not Status.FEASIBLE or solution.decision is None:
        raise VerificationError(
            f"a policy step is feasible with a decision, got {solution.status.value}"
        )
    decision = solution.decision
    objective = solution.objective
    if objective is None or not math.isfinite(objective):
        raise VerificationError(f"objective must be a finite number, got {objective!r}")
    expected = 0.0
    for j in state.jobs:
        n = decision.placement.workers_of(j.id)
        if n:
            expected += j.speedup[n - 1] if j.speedup else n
    if not math.isclose(objective, expected, rel_tol=TOLERANCE, abs_tol=TOLERANCE):
        raise VerificationError(f"objective {objective} is not the throughput {expected}")
    check_decision(state, decision)
