"""EDL Elastic-Tiresias: 2D-LAS priority queues with elastic compaction and expansion.

Each scheduling round orders jobs by Tiresias' discretized two-dimensional
least-attained-service queues and keeps, preempts or starts them; then, when
more than N jobs wait, running jobs of lower queues are scaled in to start
waiting ones (compaction), and when none waits, idle GPUs scale out the
running jobs that gain most (expansion). EDL (TPDS '22) §5 Algorithm 1, §5.1
footnote 4, §6.3; Tiresias (NSDI '19). Choices where the paper is vague are
listed in docs/elastic.md.

Each rule lives in one module, which the simulator's adapter
(:mod:`scheduling_opt.sim.policies.edl`) calls too, on the index of the
state it keeps across calls: a job's queue and promotion and when they can
next change (:mod:`.priority`); Tiresias' plan, i.e. the budget pass, the starts' gangs
and the restore of idle victims (:mod:`.plan`); compaction
(:mod:`.compaction`) and its next-plan check (:mod:`.replan`); expansion
(:mod:`.expansion`). This module orders the jobs, runs the rules in turn
(:func:`elastic_rules`: which one, and compaction's loop over the waiting
jobs) and builds the decision.

Complexity per step, J jobs, S servers: ordering O(J log J); the plan
O(J + S) plus O(C log B) for the C waiting jobs its budget pass visits in
B streams and O(S log S) per start placed; compaction O(J + S + P L D) per
waiting job tried (P its requested workers, L <= ceil(P g / m) servers, D
donors; the donors and obtainable GPUs are computed once per change of the
round, and a class of like jobs that fails is not tried again until the
round changes: :func:`_compaction`), plus one next-plan check per job it
would start (:func:`.replan.replan_preempts`); expansion O(J log J + W log
J) plus server scans for W workers added.
"""

from __future__ import annotations

import bisect
import heapq
import itertools
import time
from collections.abc import Hashable, Mapping, Sequence
from types import MappingProxyType

from scheduling_opt.model import Placement, PlacementRow
from scheduling_opt.policies._numbers import expect
from scheduling_opt.policies.edl.expansion import expand
from scheduling_opt.policies.edl.model import (
    EdlDecision,
    EdlJob,
    EdlState,
    Mode,
    TiresiasParams,
    cluster_throughput,
    qos_floor,
    worker_counts,
)
from scheduling_opt.policies.edl.plan import Gangs, budget_pass, restore_idle
from scheduling_opt.policies.edl.priority import job_queue
from scheduling_opt.policies.edl.replan import PlanCheck, compact_stable
from scheduling_opt.policies.edl.round import Round
from scheduling_opt.policies.edl.waiting import Stream, Waiting, job_class, kind, take_head
from scheduling_opt.solution import Seed, Solution, Status, time_limit_of


def _priority(state: EdlState, queue: Mapping[str, int]) -> list[EdlJob]:
    """Tiresias order: lower queue first, FIFO (arrival order) inside a queue.

    Python's sort is stable, so sorting the arrival-ordered jobs by queue
    alone keeps FIFO inside a queue.
    """
    return sorted(state.jobs, key=lambda j: queue[j.job.id])


def _base_plan(
    r: Round, state: EdlState, order: list[EdlJob], plan: Waiting
) -> tuple[list[str], list[str]]:
    """Tiresias' plan on the state: returns the started and the preempted jobs, in priority order.

    The budget pass (:func:`.plan.budget_pass`) over the state's running
    jobs and its waiting ones (``plan``: keyed by position in ``order``);
    a running job in the plan keeps its workers and servers, and a waiting
    one starts with P_j workers where the locality rule finds room on what
    the kept jobs leave (:class:`.plan.Gangs`: no migration, so
    fragmentation can defer it). O(R log R + S) plus the pass and the gangs.
    """
    held, prio, jobs = r.held, r.prio, r.jobs
    running = sorted(held, key=prio.__getitem__)
    demand = [held[k] * jobs[k].job.gpus_per_worker for k in running]
    sums = list(itertools.accumulate(demand, initial=0))
    victims: list[int] = []
    starts: list[int] = []
    budget_pass(
        r.cluster.total_gpus,
        [prio[k] for k in running],
        lambda a, b: sums[b] - sums[a],
        lambda a, b: demand[a:b],
        plan.streams,
        victims,
        starts,
    )
    gone = set(victims)
    servers_of = state.placement.servers_of
    for t, k in enumerate(running):
        if t not in gone:
            r.keep(k, servers_of(k), held[k])
    servers = r.cluster.servers
    # r.free lists the servers in cluster order.
    gangs = Gangs(list(r.free.values()), [s.gpus for s in servers], [s.gpu_type for s in servers])
    started = []
    for x in starts:
        j = order[x]
        where = gangs.place(j.parallelism, j.job.gpus_per_worker, j.job.gpu_type)
        if where is not None:
            for s, n in where:
                r.add(j.id, servers[s].id, n)
            started.append(j.id)
    return started, [running[t] for t in victims]


def _restore(r: Round, state: EdlState, preempted: list[str]) -> list[str]:
    """The plan's victims whose GPUs no start took run on (:func:`.plan.restore_idle`); the rest.

    A victim put back keeps exactly its servers. O(S + rows of the victims).
    """
    jobs, servers_of = r.jobs, state.placement.servers_of

    def rows(k: str) -> list[tuple[str, int]]:
        g = jobs[k].job.gpus_per_worker
        return [(s, n * g) for s, n in servers_of(k).items()]

    still = restore_idle(dict(r.free), preempted, rows)
    if len(still) < len(preempted):
        stays = set(still)
        for k in preempted:
            if k not in stays:
                r.keep(k, servers_of(k), r.held[k])
    return still


def _placement(r: Round, state: EdlState) -> Placement:
    """``Placement.from_mapping(r.alloc)``, reusing the rows of the jobs the round kept as they ran.

    Most running jobs keep their servers from round to round, and building
    and validating a row per (job, server) at every round would be a large
    part of the step. A job placed by ``Round.keep`` and never ``touched`` has
    exactly its rows of ``state.placement``, in the same server order
    (``keep`` copies ``servers_of``, which follows the rows). O(rows).
    """
    previous: dict[str, list[PlacementRow]] = {}
    for row in state.placement.rows:
        previous.setdefault(row.job, []).append(row)
    rows: list[PlacementRow] = []
    touched = r.touched
    for job, servers in r.alloc.items():
        if job in touched or job not in previous:
            rows.extend(PlacementRow(job, server, n) for server, n in servers.items() if n)
        else:
            rows.extend(previous[job])
    return Placement(tuple(rows))


def elastic_rule(params: TiresiasParams, waiting: int) -> Mode:
    """The elastic rule of a round in which ``waiting`` jobs wait after the plan (and its restore).

    Compaction when more than N jobs wait, expansion when none does
    (Algorithm 1), else none.

    Examples
    --------
    >>> p = TiresiasParams(compaction=10)
    >>> elastic_rule(p, 11), elastic_rule(p, 10), elastic_rule(p, 0)
    ('compaction', 'none', 'expansion')
    """
    if waiting > params.compaction:
        return "compaction"
    return "none" if waiting else "expansion"


def elastic_rules(
    r: Round,
    order: Sequence[EdlJob],
    preempted: list[str],
    started: list[str],
    waiting: Waiting,
) -> Mode:
    """Run the round's elastic rule (:func:`elastic_rule`) on ``r``; returns it.

    ``order`` is the round's priority order (read only by expansion, when
    no job waits), ``preempted`` the plan's victims still preempted,
    ``waiting`` the round's waiting jobs (its streams may list jobs ``r``
    places: they are skipped); jobs compaction starts are appended to
    ``started``. ``r.floors`` is filled from ``r.jobs`` when empty.
    """
    p = r.params
    mode = elastic_rule(p, waiting.count)
    if mode == "compaction":
        if not r.floors:
            r.floors = {k: qos_floor(j, p.qos) for k, j in r.jobs.items()}
        # A job Tiresias just preempted (a start took its GPUs) waits one round
        # rather than restart smaller at once: stop-and-restart churn in a
        # single round is no scale-in.
        _compaction(r, waiting, set(preempted), started)
    elif mode == "expansion":
        expand(r, order)
    return mode


def _compaction(r: Round, waiting: Waiting, gone: set[str], started: list[str]) -> None:
    """Algorithm 1 lines 1-6: each waiting job in priority order, not ``gone``, compacted if stable.

    The same attempts as a loop over every waiting job, without visiting
    most of a long queue: the streams' heads are merged by priority key,
    and a job whose attempt fails before the next-plan check marks its
    class (:func:`.waiting.job_class`) dead, since
    every job of the class fails alike until the round changes, which only
    a start does; a dead class's streams are parked, and a start revives
    them past its own key (their jobs before it were tried, in effect, on
    the unchanged round). A refusal by the check in general says nothing of
    the next job (it depends on the job's place in the order), but one with
    the job itself among the plan's victims (``PlanCheck.lost``) does, and
    marks the class dead too (a long queue of 1-GPU jobs otherwise makes
    hundreds of such checks in one call, one per job).

    Why. Let j (key x) and a later j' (key x' > x) be of one class, on one
    round r. Their attempts are the same (the same donors scaled in, the
    same servers and workers for the started job: compaction reads only
    the class and r), so the two trials differ only in which of j, j' is
    placed, with the same demand c. The check's budget pass is the same on
    both before x; j a victim of its trial means the budget b at x was
    below c <= P_j g. On the trial of j' at x, j waits and does not fit
    (P_j g > b), so its stream is dropped as on j's trial (the pass tests
    the head's P_j g before whether the head is placed); the budget only
    falls, so at x' j' is a victim of its trial, as j' (waiting) fails to
    fit on j's. Between and after, the pass meets the same jobs with the
    same budget: the same other victims and the same starts, whose gangs
    then go on the same free GPUs (j and j' hold the same). The restore
    refuses iff some server holding a victim lost GPUs to the starts beyond
    its free ones (taking the last victim restored there, whose GPUs alone
    are then left: free + its GPUs - started < its GPUs), which reads only
    the victims' servers, the same for both. So j' is refused too.

    O(S + T log S) plus the attempts, for S streams and T jobs tried.
    """
    alloc = r.alloc
    check = PlanCheck(waiting)
    streams, job_of = waiting.streams, waiting.job
    heads = [(s.base + s.items[0], n) for n, s in enumerate(streams) if s.items]
    heapq.heapify(heads)
    at = [0] * len(streams)
    dead: set[Hashable] = set()
    parked: list[int] = []
    while heads:
        key, n = heads[0]
        s = streams[n]
        if s.cls in dead:
            heapq.heappop(heads)
            parked.append(n)
            continue
        j = job_of(take_head(heads, streams, at))
        k = j.job.id
        if k in alloc or k in gone:
            continue
        check.asked = False
        if compact_stable(r, j, check):
            started.append(k)
            check.started(r, key, j)
            dead.clear()
            for m in parked:
                t = streams[m]
                i = at[m] = bisect.bisect_right(t.items, key - t.base, at[m])
                if i < len(t.items):
                    heapq.heappush(heads, (t.base + t.items[i], m))
            parked.clear()
        elif not check.asked or check.lost:
            dead.add(s.cls)


def queues(state: EdlState) -> tuple[dict[str, int], list[str]]:
    """Every job's queue, and the waiting jobs promoted to G0 for starving.

    Parameters
    ----------
    state : EdlState
        The round's input (its ``params`` hold the thresholds and the
        starvation rule: a fixed limit, or Tiresias' knob times the job's
        executed time).

    Returns
    -------
    tuple of (dict of str to int, list of str)
        Job id -> queue (0 = G0), and the promoted jobs in arrival order.

    Examples
    --------
    >>> from scheduling_opt.model import Cluster, GpuType, Job, Server
    >>> c = Cluster((GpuType("V100"),), (Server("s0", "V100", 4),))
    >>> s = EdlState.from_jobs(c, [Job("a", 1, 1, 9.0), Job("b", 1, 1, 9.0)],
    ...                        service={"a": 600.0, "b": 600.0}, waiting={"b": 4000.0})
    >>> queues(s)
    ({'a': 1, 'b': 0}, ['b'])

    References
    ----------
    Tiresias (NSDI '19) §4 (discretized 2D-LAS, starvation); EDL (TPDS '22) §6.3.
    """
    expect(state, EdlState, "state")
    return _queues(state, worker_counts(state.placement))


def _queues(state: EdlState, held: Mapping[str, int]) -> tuple[dict[str, int], list[str]]:
    """:func:`queues` with the placement's worker counts given (``held``)."""
    p = state.params
    out, promoted = {}, []
    for j in state.jobs:
        gpus = held.get(j.id, 0) * j.job.gpus_per_worker
        q, up, _ = job_queue(p, j.service, gpus, j.waiting, j.executed)
        if up:
            promoted.append(j.id)
        out[j.id] = q
    return out, promoted


def elastic_tiresias_step(
    state: EdlState, *, seed: Seed = None, time_limit: float | None = None
) -> Solution[EdlDecision]:
    """One round of (Elastic-)Tiresias; pure: ``state`` is not changed.

    (1) queues from attained service, starving jobs promoted to G0; (2) the
    Tiresias plan: keep, preempt or start jobs in priority order; (3) with
    ``params.elastic``: a preempted job whose GPUs no start took keeps
    running; compaction when more than N jobs still wait (a compaction the
    plan re-run on the result would undo is not made), expansion when none
    waits and GPUs are idle. So a call on the step's own output (no time
    passed) never preempts (docs/elastic.md, rule 5).

    Parameters
    ----------
    state : EdlState
        The cluster, the unfinished jobs, the running placement and the knobs.
    seed : int, numpy Generator or None
        Unused (the policy is deterministic); accepted for the common signature.
    time_limit : float, optional
        Validated only: the step is polynomial and bounded by its work.

    Returns
    -------
    Solution[EdlDecision]
        Status ``feasible`` (a policy step, no optimality claim); objective:
        the cluster throughput of the new placement (EDL §6.3: the sum of
        S(p)/S(1), see :func:`~.model.cluster_throughput`); no bound.

    Raises
    ------
    ValueError
        ``time_limit`` is not a positive number.

    Examples
    --------
    >>> from scheduling_opt.model import Cluster, GpuType, Job, Server
    >>> c = Cluster((GpuType("V100"),), (Server("s0", "V100", 8),))
    >>> s = EdlState.from_jobs(c, [Job("a", 1, 8, 60.0), Job("b", 1, 8, 60.0)],
    ...                        requested={"a": 2, "b": 2})
    >>> sol = elastic_tiresias_step(s)
    >>> sol.decision.started, sol.decision.mode, sol.objective
    (('a', 'b'), 'expansion', 8.0)

    References
    ----------
    EDL (TPDS '22) §5 Algorithm 1, §5.1 footnote 4, §6.3; Tiresias (NSDI '19).
    """
    expect(state, EdlState, "state")
    start = time.perf_counter()
    time_limit_of(time_limit)
    p = state.params
    held = worker_counts(state.placement)
    queue, promoted = _queues(state, held)
    order = _priority(state, queue)
    r = Round(
        state.cluster,
        p,
        {},
        {s.id: s.gpus for s in state.cluster.servers},
        queue,
        {s.id: i for i, s in enumerate(state.cluster.servers)},
        state.jobs_by_id,
        {},  # floors: only compaction reads them, filled below when it runs
        {j.job.id: i for i, j in enumerate(order)},
        {},
        held,
    )
    plan = Waiting.of(order, queue, held)
    started, preempted = _base_plan(r, state, order, plan)
    mode: Mode = "none"
    if p.elastic:
        preempted = _restore(r, state, preempted)
        # The plan's streams (its starts among them, skipped) and a stream per victim.
        jobs, prio = r.jobs, r.prio
        streams = plan.streams + [
            Stream(0, job_class(queue[k], kind(jobs[k])), jobs[k].requested_gpus, (prio[k],))
            for k in preempted
        ]
        waiting = Waiting(streams, order.__getitem__, len(state.jobs) - len(r.alloc))
        mode = elastic_rules(r, order, preempted, started, waiting)
    count = r.count
    changed = {k for k, n in held.items() if k in r.alloc and count[k] != n}
    # In arrival order, as the jobs are (a scan of all jobs only when one changed).
    resized = (
        {j.job.id: count[j.job.id] for j in state.jobs if j.job.id in changed} if changed else {}
    )
    decision = EdlDecision(
        placement=_placement(r, state),
        queues=MappingProxyType(queue),
        promoted=tuple(promoted),
        started=tuple(started),
        preempted=tuple(preempted),
        resized=MappingProxyType(resized),
        mode=mode,
    )
    return Solution(
        Status.FEASIBLE,
        cluster_throughput(state, decision.placement),
        decision,
        seconds=time.perf_counter() - start,
    )
