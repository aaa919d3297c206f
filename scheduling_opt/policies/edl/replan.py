"""Compaction's next-plan check: is a compaction one the next call's plan would undo?

A start by compaction lies outside Tiresias' budget, and a scale-in frees
budget the next call's plan may give to a waiting job ahead of the started
one: the plan run again on the round's placement (no time passed) would
then preempt a job. Such a compaction is not made, so that a call on the
step's own output never preempts (docs/elastic.md, rule 5).
:func:`compact_stable` makes a compaction only when :func:`replan_preempts`
says the plan keeps it; :class:`PlanCheck` holds what the checks of one
compaction call share. The check runs on plain counts, with the plan's own
pieces (:mod:`.plan`): it runs once per compaction attempt that would start
a job, and building the placement and a round for the plan per attempt was
most of a full-trace run. EDL (TPDS '22) §5 Algorithm 1.
"""

from __future__ import annotations

import bisect

from scheduling_opt.policies.edl.compaction import compact
from scheduling_opt.policies.edl.model import EdlJob
from scheduling_opt.policies.edl.plan import Gangs, budget_pass, restore_idle
from scheduling_opt.policies.edl.round import Round
from scheduling_opt.policies.edl.waiting import Waiting


class PlanCheck:
    """The next-plan check's inputs in one compaction call (see :func:`compact_stable`).

    ``waiting``: the round's waiting jobs; ``keys``, ``ids``, ``gpus``: the
    priority key, id and GPUs per worker of every job the round places, in
    priority order, built at the first check of the call (most calls make
    none) and kept as compaction starts jobs; ``demand``: their GPUs in the
    round and ``index``: each one's place in the lists, built at the first
    check after the round changed (a start changes its donors' workers);
    ``asked``: whether the last attempt reached the check; ``lost``:
    whether the check refused it with the attempted job among its victims
    (then every later job of its class is refused alike on this round:
    :func:`~.elastic_tiresias.elastic_rules`).
    """

    __slots__ = (
        "asked",
        "demand",
        "gpus",
        "ids",
        "index",
        "keys",
        "listed",
        "lost",
        "servers",
        "waiting",
    )

    def __init__(self, waiting: Waiting) -> None:
        self.waiting = waiting
        self.keys: list[int] = []
        self.ids: list[str] = []
        self.gpus: list[int] = []
        self.demand: list[int] | None = None
        self.index: dict[str, int] = {}
        self.asked = False
        self.lost = False
        self.listed = False
        # GPUs and GPU type per server, in cluster order (once per call).
        self.servers: tuple[list[int], list[str]] | None = None

    def placed(self, r: Round) -> None:
        """List the jobs ``r`` places, when first asked. O(R log R) then, O(1) after."""
        if not self.listed:
            self.listed = True
            prio, jobs = r.prio, r.jobs
            running = sorted((prio[k], k, jobs[k].job.gpus_per_worker) for k in r.alloc)
            self.keys = [x[0] for x in running]
            self.ids = [x[1] for x in running]
            self.gpus = [x[2] for x in running]

    def started(self, r: Round, key: int, j: EdlJob) -> None:
        """``j`` (priority key ``key``) started in ``r``: listed; the demands are stale."""
        self.placed(r)
        at = bisect.bisect_left(self.keys, key)
        self.keys.insert(at, key)
        self.ids.insert(at, j.job.id)
        self.gpus.insert(at, j.job.gpus_per_worker)
        self.demand = None

    def trial(self, r: Round, trial: Round, j: EdlJob) -> tuple[list[int], list[str], list[int]]:
        """Keys, ids and GPUs of the jobs ``trial`` places: ``r`` with ``j`` started by compaction.

        The trial differs from ``r`` only in the jobs it ``touched`` (j and
        its donors; the jobs of ``r.touched`` read the same counts), so the
        lists of ``r`` are copied in C and those entries set: O(R) in C plus
        O(T) for T touched jobs, not a Python pass over the R placed jobs
        per check.
        """
        self.placed(r)
        if self.demand is None:
            count = r.count
            self.demand = [count[k] * g for k, g in zip(self.ids, self.gpus, strict=True)]
            self.index = {k: i for i, k in enumerate(self.ids)}
        g = j.job.gpus_per_worker
        key = r.prio[j.job.id]
        at = bisect.bisect_left(self.keys, key)
        keys = self.keys.copy()
        keys.insert(at, key)
        ids = self.ids.copy()
        ids.insert(at, j.job.id)
        demand = self.demand.copy()
        count, jobs, index = trial.count, trial.jobs, self.index
        demand.insert(at, count[j.job.id] * g)
        for k in trial.touched:
            i = index.get(k)
            if i is not None:
                demand[i + 1 if i >= at else i] = count[k] * jobs[k].job.gpus_per_worker
        return keys, ids, demand


def compact_stable(r: Round, j: EdlJob, check: PlanCheck) -> bool:
    """Compaction of ``j`` (:func:`.compaction.compact`), made only if the next plan keeps it.

    The check (:func:`replan_preempts`) runs once per compaction that would
    start a job; ``check.asked`` records that it ran, ``check.lost`` that
    it refused with ``j`` among the plan's victims. Returns whether ``j``
    started.
    """

    def accept(trial: Round) -> bool:
        check.asked = True
        keys, ids, demand = check.trial(r, trial, j)
        victims: list[str] = []
        refused = replan_preempts(trial, check, keys, ids, demand, victims)
        check.lost = refused and j.job.id in victims
        return not refused

    return compact(r, j, accept) > 0


def replan_preempts(
    r: Round,
    check: PlanCheck,
    keys: list[int],
    ids: list[str],
    demand: list[int],
    victims: list[str] | None = None,
) -> bool:
    """Would the plan, run on the placement the round has so far, preempt a job?

    The next call sees the same jobs, service and queues (a promoted job
    that started keeps G0: its service restarts at 0), so the same
    priority order, and its plan preempts iff a victim of its budget pass
    cannot go back on its GPUs after its starts. So: the budget pass
    (:func:`~.plan.budget_pass`) over the placed jobs (``keys``, ``ids``,
    ``demand``: their GPUs in ``r``, in priority order) and the round's
    waiting jobs (``check.waiting``; those ``r`` places are skipped); no
    victim means no preemption; else the kept jobs leave ``r``'s free GPUs
    plus the victims', the starts take their gangs from them in order
    (:class:`~.plan.Gangs`), and the victims are put back in order
    (:func:`~.plan.restore_idle`). ``victims``: filled with the budget
    pass's victims when given. ``tests/policies/test_edl_replan.py`` checks
    it against the plan run in full on a round built from ``r``'s
    placement. O(R + B + C log B) for R placed jobs, B streams and C
    waiting jobs visited, plus the gangs of the starts.
    """
    waiting = check.waiting
    alloc, jobs = r.alloc, r.jobs
    job_of = waiting.job
    found: list[int] = []
    starts: list[int] = []
    budget_pass(
        r.cluster.total_gpus,
        keys,
        lambda a, b: sum(demand[a:b]),
        lambda a, b: demand[a:b],
        waiting.streams,
        found,
        starts,
        lambda item: job_of(item).job.id in alloc,
    )
    if not found:
        return False
    out = [ids[t] for t in found]
    if victims is not None:
        victims.extend(out)
    rank = r.rank
    # r.free lists the servers in cluster order (its keys never change).
    free = list(r.free.values())
    for k in out:
        g = jobs[k].job.gpus_per_worker
        for s, n in alloc[k].items():
            free[rank[s]] += n * g
    if check.servers is None:
        servers = r.cluster.servers
        check.servers = ([s.gpus for s in servers], [s.gpu_type for s in servers])
    gangs = Gangs(free, *check.servers)
    for item in starts:
        job = job_of(item)
        gangs.place(job.parallelism, job.job.gpus_per_worker, job.job.gpu_type)

    def rows(k: str) -> list[tuple[int, int]]:
        g = jobs[k].job.gpus_per_worker
        return [(rank[s], n * g) for s, n in alloc[k].items()]

    return bool(restore_idle(gangs.free, out, rows))
