"""The Chronus authors' simulator's semantics, as named options of the ``chronus`` policy.

The artifact released with Chronus (SoCC '21) is the public repository
S-Lab-System-Group/ChronusArtifact at commit bc7e15f; its simulator is in
the folder ``code/``, and the citations below name its functions in
``code/alg/scheduler/time_aware_with_lease.py`` (the scheduler
``TimeAwareWithLeaseScheduler``) unless another file is named. It runs
Chronus with rules that differ from ours. Each rule here is one option of
:class:`~scheduling_opt.sim.policies.chronus.policy.Chronus`, pointed to in
the artifact's code; :data:`ARTIFACT_POLICY` sets them all (with the
engine's options, :data:`ARTIFACT_ENGINE`, through the ``artifact``
semantics). This module holds the pieces the options share: the estimate,
the GPU bins, the queue classes and their three orders, the admission
packing and the pool placement. Nothing here is the artifact's code: each
is a rule read from it and written again.

- ``estimate="artifact"``: a job's lease work is its estimate
  ``int(duration (1 + (1 + log2 g) 0.5 / T_l) 1.1)``
  (``flush_event_jobs_with_cache_solution``) less the time it has run, and
  it is charged ``g`` rounded to 1, 2, 4, 8 or itself above 8
  (:func:`bins`, ``convert_to_bin``): instead of the trace's remaining
  duration (an oracle) and Eq. (6)'s round-up.
- ``admission_check="reserved"``: an arriving SLO job is admitted when it
  fits, latest terms first, before its *first* deadline in the terms the
  guaranteed jobs leave (``solver.py``,
  ``MIPSolver.batch_fast_check_if_packable``: the packing visits each job
  once, at its smallest slack, the first deadline; the binary search of
  ``process_unaccepted_jobs`` then never finds a larger window, its lower
  end being the last deadline's); no re-solve. Its deadline becomes the
  last step's, rounded down to a term boundary
  (``flush_event_jobs_with_cache_solution``).
- ``admission_check="batch"`` (the artifact's; ``"reserved"`` is a
  coarser reading kept for comparison): the guaranteed jobs the last
  selection placed hold their reserved terms after the current one (its
  ``cache_solution``, less its earliest terms as its remaining estimate
  shrinks, as ``flush_running_jobs`` trims it; a job that finished or left
  the guaranteed class holds none); the jobs guaranteed since that
  selection, the batch's earlier arrivals and the arriving job are packed
  again together by :func:`packs` (each job at its first deadline); a
  refused job stays in the rest of its batch's packing
  (``process_unaccepted_jobs`` trims only its own copies of the lists), a
  one-step job at the window its binary search leaves
  (:func:`relaxed_window`), so a refused strict job does not refuse the
  jobs after it, a refused soft job does
  (:mod:`~scheduling_opt.sim.policies.chronus.artifact.admission`).
- ``cache_layout="late"`` (with ``admission_check="batch"``): the terms a
  guaranteed job holds after the current one, as the admission sees them,
  lie as late as its deadline allows (:func:`late_layout`). The artifact's
  MILP scores only the first term, so where it puts the others is CBC's
  choice; measured at minute 6,695 of P_MIX2, its 358 cached jobs spread
  them through their windows (30 start at the next term) where the
  library's solvers put all 355 at the earliest terms
  (docs/reproduction.md). Late is the rule of the artifact's own greedy
  selection and admission packing.
- ``search_rows=400`` (an option, not in :data:`ARTIFACT_POLICY`): the
  artifact's selection MILP takes at most ``MAX_SEARCH_JOB`` = 1,200 x
  T_l / 60 rows (:func:`search_rows`), one per guaranteed job and reward
  step (``flush_lease_jobs``, its ``lease_info_collection``); beyond, the
  jobs that hold reservations are frozen, most (binned) GPUs and latest
  windows first, until the excess rows are out: they keep their terms
  (``cache_solution``; run in the term if it holds it, its
  ``should_run_jobs``), so the term-0 minimisation of
  ``selection="artifact"`` does not move them, and :func:`late_layout`
  keeps them where they are
  (:func:`~scheduling_opt.sim.policies.chronus.artifact.selection.frozen_jobs`).
  The rule is the artifact's, but the terms a frozen job keeps are CBC's
  choice when it was last in the MILP; the library's selection keeps the
  terms its solver gave it, and on P_MIX2 that overshoots
  (docs/reproduction.md): left out of the preset.
- ``selection="artifact-cbc"`` and ``"artifact-mip"`` (options, not in
  :data:`ARTIFACT_POLICY`; the ``artifact-mip`` semantics sets the second
  with ``search_rows``): the selection MILP as ``solver.py``,
  ``MIPSolver.job_selection``, writes it, solved by CBC
  (:mod:`~scheduling_opt.sim.policies.chronus.artifact.cbc`,
  :mod:`~scheduling_opt.sim.policies.chronus.artifact.mip`); the frozen
  jobs keep the terms CBC gave them, which is the artifact's rule.
- ``term_release="all"``: every term boundary releases every running job
  that the term's selection does not hold (``flush_lease_jobs``); they
  restart by the queue order, paying the engine's start overhead (the
  resume count of ``flush_pending_jobs`` and ``flush_lease_jobs``).
- ``selection="artifact"``: every guaranteed job must keep a deadline level
  (``MIPSolver.job_selection``, an equality per job); while unguaranteed
  jobs wait, the selected jobs' terms lie as late as their levels allow, so
  that the term holds the fewest GPUs (the adaptive objective: the
  minimisation ``flush_lease_jobs`` asks of ``MIPSolver.job_selection``).
  "Wait" is the artifact's count ``number_of_accepted`` (recounted at the
  end of ``flush_lease_jobs``, raised by each refusal of
  ``flush_event_jobs_with_cache_solution``): the jobs of its unguaranteed
  class at the last selection's end, plus the SLO arrivals refused since;
  jobs that arrived since the last 5-minute pass are not in its queue and
  do not count
  (:meth:`~scheduling_opt.sim.policies.chronus.artifact.queue.QueueState.minimize_first`).
- ``queue="artifact"``: the classes of the artifact's queue (guaranteed,
  unguaranteed, best effort, lowest: its ``queue_priority`` values) and its
  passes (``run``): at whole minutes only; terms on multiples of T_l;
  arrivals and the pending pass every 5 minutes, ordered by :func:`pass_key`
  (``best_func``: jobs that overran their estimate first, then best-effort
  and unguaranteed jobs together by smallest remaining estimate x GPUs,
  then guaranteed jobs by smallest slack x GPUs, then the lowest); the fill
  of every odd minute (``filling_jobs``) by :func:`fill_key` (ascending
  class: lowest first). An SLO job that can no longer meet its deadline
  (the trace's remaining duration, ``flush_pending_jobs``) joins the lowest
  class; a job that ran past its estimate becomes unguaranteed and first in
  the pass (``flush_running_jobs``)
  (:mod:`~scheduling_opt.sim.policies.chronus.artifact.queue`,
  :mod:`~scheduling_opt.sim.policies.chronus.artifact.minute`).
- ``force_short=True``: an unguaranteed pending job that can finish (by the
  trace's duration) before the term ends is started at once on the GPUs the
  term's selection leaves, smallest first, preempting opportunistic jobs
  (``flush_pending_jobs``).
- ``fill_overhead=False``: the starts of the odd-minute fill owe no start
  overhead (:class:`~scheduling_opt.sim.protocol.StartTerms`):
  ``filling_jobs`` counts no resume, and the overhead is the resume count
  times 0.5 x (1 + log2 g) (``flush_running_jobs``); the pass and the terms
  count one per start (``flush_pending_jobs``, ``flush_lease_jobs``).
- ``start_credit=True``: a job started outside the 5-minute pass is
  credited the minutes since the last pass
  (:class:`~scheduling_opt.sim.protocol.StartTerms`). The odd-minute fill
  (``filling_jobs``) and the term's selection (``flush_lease_jobs``) set no
  ``last_check_time`` (unlike the pass, ``opportunistic_run``), so the next
  progress update (``update_job_time``) counts from the pass that last
  updated the waiting job (``flush_pending_jobs``: every pending job, every
  5 minutes): 1 to 4 minutes for a fill start (e.g. job 16192 of P_MIX2:
  pass at 155, fill start at 157, ends at 197.5 with the 2 minutes, 199.5
  without), 5 for a waiting job the selection starts at a boundary (the
  pass of that minute runs after the selection; e.g. job 10868: waiting
  from 135, selected at 140, progress 25 at 160).
- ``placement="pool"``: a job starts whenever enough GPUs are free anywhere
  (the artifact's placement splits a job over any servers,
  ``alg/placement/greedy.py``, ``GreedyPolicy``, and the progress model
  ignores the split: ``compute_progress`` returns 1.0).

Cost: every helper is O(1) per job but :func:`pool_place` (O(servers)),
:func:`packs` and :func:`relaxed_window` (their docstrings).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from scheduling_opt.sim.cluster import FreeMap, Placement

if TYPE_CHECKING:
    from scheduling_opt.sim.protocol import JobView

__all__ = [
    "ACCEPTED",
    "ARTIFACT_POLICY",
    "BEST_EFFORT",
    "LOWEST",
    "UNACCEPTED",
    "Entry",
    "Estimates",
    "bins",
    "estimate",
    "fill_key",
    "late_layout",
    "packs",
    "pass_key",
    "pool_place",
    "relaxed_window",
    "search_rows",
    "victim_key",
]

#: The artifact's queue classes (its ``queue_priority`` values: ``LOWEST``, ``ACCEPTED_SLO``, ...).
LOWEST, ACCEPTED, UNACCEPTED, BEST_EFFORT = -1, 0, 1, 2
#: Checkpoint + resume overhead per start, minutes (``CHECKPOINT_OVER_HEAD + RESUME_OVER_HEAD``).
START_OVERHEAD = 0.5
#: Minutes between the artifact's arrival and pending passes (``BEST_SLOT``).
PASS_STEP = 5
#: The policy options that make ``chronus`` run by the artifact's rules.
ARTIFACT_POLICY: dict[str, object] = {
    "placement": "pool",
    "placement_table": False,
    "estimate": "artifact",
    "admission_check": "batch",
    "term_release": "all",
    "selection": "artifact",
    "queue": "artifact",
    "force_short": True,
    "fill_overhead": False,
    "start_credit": True,
    "cache_layout": "late",
    "max_terms": None,
}
#: The engine options of the artifact's semantics (RunConfig fields): no
#: placement slowdown, the start overhead, arrivals every 5 minutes, a
#: decision every minute.
ARTIFACT_ENGINE: dict[str, object] = {
    "placement_table": False,
    "start_overhead": START_OVERHEAD,
    "arrival_step": float(PASS_STEP),
    "round_length": 1.0,
}
#: The rows of the artifact's selection MILP per hour of lease term
#: (``MAX_SEARCH_JOB`` = 1,200 x T_l / 60, set in the scheduler's ``__init__``).
SEARCH_ROWS_PER_HOUR = 1200


def search_rows(lease_length: float) -> int:
    """The artifact's cap on its selection MILP's rows for terms of ``lease_length`` minutes.

    ``MAX_SEARCH_JOB = MAX_SEARCH_JOB * self.lease_term_interval // 60``
    (the scheduler's ``__init__``), integer division as there.

    Examples
    --------
    >>> search_rows(20.0), search_rows(60.0), search_rows(10.0)
    (400, 1200, 200)
    """
    return int(SEARCH_ROWS_PER_HOUR * lease_length // 60)


#: One job in the artifact's admission packing: (GPUs charged, terms needed,
#: window: the terms from the next one that end by its deadline).
Entry = tuple[int, int, int]


def bins(gpus: int) -> int:
    """The GPUs the artifact's lease charges a job: 3-4 -> 4, 5-7 -> 8, others as asked.

    Examples
    --------
    >>> [bins(g) for g in (1, 2, 3, 4, 5, 7, 8, 12)]
    [1, 2, 4, 4, 8, 8, 8, 12]
    """
    if gpus in (3, 4):
        return 4
    if 5 <= gpus <= 7:
        return 8
    return gpus


def estimate(duration: float, gpus: int, lease_length: float) -> int:
    """The artifact's running-time estimate: ``int(duration (1 + (1 + log2 g) 0.5 / T_l) 1.1)``.

    Examples
    --------
    A 100-minute job of 4 GPUs with 20-minute terms: 100 x (1 + 3 x 0.5 / 20)
    x 1.1 = 118.25, truncated.

    >>> estimate(100.0, 4, 20.0)
    118
    """
    coef = 1.0 + (1.0 + math.log2(gpus)) * START_OVERHEAD / lease_length
    return int(duration * coef * 1.1)


class Estimates:
    """Each job's :func:`estimate`, computed once per job (a job's trace values never change).

    Examples
    --------
    >>> from types import SimpleNamespace
    >>> st = SimpleNamespace(index=3, job=SimpleNamespace(work=100.0, gpus=4))
    >>> Estimates(20.0).of(st)  # type: ignore[arg-type]
    118
    """

    __slots__ = ("_known", "lease_length")

    def __init__(self, lease_length: float) -> None:
        self.lease_length = lease_length
        self._known: dict[int, int] = {}

    def of(self, st: JobView) -> int:
        """The estimate of the job ``st`` (by its index)."""
        est = self._known.get(st.index)
        if est is None:
            est = self._known[st.index] = estimate(st.job.work, st.job.gpus, self.lease_length)
        return est


def pass_key(
    overran: bool, cls: int, emergence: float, submit: float, index: int
) -> tuple[float, ...]:
    """Ascending sort key of the 5-minute pass (the artifact sorts ``best_func`` descending).

    Jobs that overran their estimate first; then best-effort and
    unguaranteed jobs together; then guaranteed ones; then the lowest. In a
    class, the larger ``emergence`` (minus remaining estimate x GPUs, or
    minus slack x GPUs) first, then the earlier submission (``best_func``'s
    last term is minus the submit time, sorted descending). Python's sort
    is stable and the pass first sorts by class, emergence and submission,
    descending (``flush_pending_jobs``), so among jobs equal so far a
    best-effort job goes before an unguaranteed one; then the older list
    order, here the index (the trace's, its arrival order in a minute).

    Examples
    --------
    Two best-effort jobs with the same emergence: the one submitted first
    goes first.

    >>> sorted([pass_key(False, BEST_EFFORT, -10.0, s, k) for k, s in ((0, 7.0), (1, 3.0))])[0][-1]
    1

    Equal but for the class: the best-effort job first.

    >>> sorted([pass_key(False, c, -10.0, 3.0, k) for k, c in ((0, UNACCEPTED), (1, BEST_EFFORT))])[0][-1]
    1
    """
    return (
        -float(overran),
        -float(min(cls, UNACCEPTED)),
        -emergence,
        submit,
        -float(cls),
        index,
    )


def victim_key(
    overran: bool, cls: int, emergence: float, submit: float, seq: int
) -> tuple[float, ...]:
    """Ascending sort key of the pass's preemption victims (``best_func`` ascending).

    The reverse of :func:`pass_key`'s first four terms: the lowest class,
    the smallest emergence, the latest submission first. The victims are
    the running list's opportunistic jobs sorted once, so ties keep the
    running list's order: ``seq``, the start order.

    Examples
    --------
    >>> sorted([victim_key(False, BEST_EFFORT, -10.0, 3.0, k) for k in (5, 2)])[0][-1]
    2
    """
    return (float(overran), float(min(cls, UNACCEPTED)), emergence, -submit, seq)


def fill_key(
    cls: int, emergence: float, overran: bool, submit: float, index: int
) -> tuple[float, ...]:
    """Ascending sort key of the odd-minute fill: the lowest class first, smallest emergence first.

    The fill sorts the pending list by class and emergence (``filling_jobs``); the
    sort is stable over the last pass's order (:func:`pass_key`), so among
    equals a job that overran its estimate goes first, then the earlier
    submission, then the index.

    Examples
    --------
    >>> sorted([fill_key(UNACCEPTED, -5.0, o, 3.0, k) for k, o in ((0, False), (1, True))])[0][-1]
    1
    """
    return (float(cls), emergence, -float(overran), submit, index)


def pool_place(plan: FreeMap, gpus: int) -> Placement | None:
    """Any free GPUs for ``gpus``: the default rule if it finds a place, else the fullest servers.

    The artifact's placement never leaves a job waiting while enough GPUs
    are free in the cluster (it splits the job: ``alg/placement/greedy.py``,
    ``GreedyPolicy``).

    Examples
    --------
    >>> plan = FreeMap([8, 8])
    >>> plan.take(((0, 5), (1, 5)))
    >>> pool_place(plan, 6)
    ((0, 3), (1, 3))
    """
    placement = plan.place(gpus)
    if placement is not None or gpus > plan.total_free:
        return placement
    out: dict[int, int] = {}
    need = gpus
    for k in range(plan.kmax, 0, -1):
        for s in plan.levels[k]:
            g = min(need, k)
            out[s] = g
            need -= g
            if need == 0:
                return tuple(sorted(out.items()))
    return None


def packs(entries: Sequence[Entry], free: Sequence[int], capacity: int) -> bool:
    """Whether the artifact's greedy packs every entry into the terms' free GPUs.

    ``MIPSolver.batch_fast_check_if_packable`` (``solver.py``): the entries
    sorted by most GPUs first, then least slack (window - terms needed),
    then the widest window (ties in list order); each takes, from the last
    term of its window backwards, every term with room for it until it has
    the terms it needs; the first that cannot makes the packing fail.
    ``free[i]``: the GPUs term ``i`` (from the next term) has left after the
    reservations; terms beyond have ``capacity``. O(E log E + E W) for E
    entries and windows of W terms.

    Examples
    --------
    Two 8-GPU jobs of one term each in a window of 2 terms of 8 GPUs fit; a
    third does not.

    >>> packs([(8, 1, 2), (8, 1, 2)], [8, 8], 8), packs([(8, 1, 2)] * 3, [8, 8], 8)
    (True, False)
    """
    order = sorted(
        range(len(entries)),
        key=lambda k: (-entries[k][0], entries[k][2] - entries[k][1], -entries[k][2], k),
    )
    width = max((w for _, _, w in entries), default=0)
    room = [*free[:width], *([capacity] * max(width - len(free), 0))]
    for k in order:
        gpus, need, window = entries[k]
        got = 0
        for i in range(window - 1, -1, -1):
            if got == need:
                break
            if room[i] >= gpus:
                room[i] -= gpus
                got += 1
        if got < need:
            return False
    return True


def relaxed_window(entries: Sequence[Entry], free: Sequence[int], capacity: int, high: int) -> int:
    """The window the artifact's binary search leaves on a refused job (the last entry).

    ``process_unaccepted_jobs`` searches for the smallest
    window of the refused job that packs (the others as they are), between
    its own window (at least its terms needed) and ``high``; it writes the
    result into the packing's list, which the rest of the batch's checks
    reuse. The search assumes the packing monotone in the window; it is
    not quite (a wider window sorts the job later), and this follows the
    same steps. O(log(high) x :func:`packs`).

    Examples
    --------
    A 2-term job behind a 1-term job of the full cluster in a window of 2
    terms: it packs only in a window of 3.

    >>> relaxed_window([(8, 1, 2), (8, 2, 2)], [8, 8], 8, high=10)
    3
    """
    gpus, need, window = entries[-1]
    low = max(window, need)
    rest = list(entries[:-1])
    while low < high:
        mid = low + (high - low) // 2
        if packs([*rest, (gpus, need, mid)], free, capacity):
            high = mid
        else:
            low = mid + 1
    return high


def late_layout(
    terms: Mapping[str, Sequence[int]],
    gpus: Mapping[str, int],
    due: Mapping[str, int],
    capacity: int,
    keep: frozenset[str] = frozenset(),
) -> dict[str, tuple[int, ...]]:
    """Each job's reserved terms after the first moved as late as its deadline allows.

    The artifact's selection MILP scores only the first term (``solver.py``,
    ``MIPSolver.job_selection``: values, and the first term's GPUs); where a
    job's later terms lie is the solver's choice. Its own greedy selection,
    used when the MILP fails (``MIPSolver.batch_fast_job_selection``), and
    its admission packing take the latest terms with room, most GPUs and
    least slack first: the same here for the terms after the first (term 0,
    the current one, stays as selected). Terms ``k < due[j]`` are in job ``j``'s
    window. The jobs of ``keep`` hold their terms as given (the jobs the
    artifact's selection leaves frozen, ``search_rows``). When the greedy
    cannot place a job, ``terms`` is returned as it is (a feasible layout).
    O(N log N + N H) for N jobs over H terms.

    Examples
    --------
    Two 8-GPU jobs on 8 GPUs, each one term within 3: a holds 1, b holds 2;
    laid late, the one with the least slack first (b: due 3, a: due 4).

    >>> late_layout({"a": (1,), "b": (2,)}, {"a": 8, "b": 8}, {"a": 4, "b": 3}, 8)
    {'b': (2,), 'a': (3,)}

    Laid late, ``a`` takes term 3 and ``b`` term 2; with ``a`` kept where
    it is (term 1), ``b`` takes term 3.

    >>> g, due = {"a": 8, "b": 8}, {"a": 4, "b": 4}
    >>> late_layout({"a": (1,), "b": (2,)}, g, due, 8)
    {'a': (3,), 'b': (2,)}
    >>> late_layout({"a": (1,), "b": (2,)}, g, due, 8, keep=frozenset("a"))
    {'a': (1,), 'b': (3,)}
    """
    load = [0] * (max([*due.values(), *(k + 1 for j in keep for k in terms[j])], default=0) + 1)
    later = {j: sum(k > 0 for k in t) for j, t in terms.items()}
    out: dict[str, tuple[int, ...]] = {}
    for j, t in terms.items():
        if j in keep:
            out[j] = tuple(t)
            for k in t:
                load[k] += gpus[j]
        elif 0 in t:
            load[0] += gpus[j]
    for j in sorted(
        (j for j in terms if j not in keep), key=lambda j: (-gpus[j], due[j] - later[j], -due[j], j)
    ):
        g, picked = gpus[j], [0] if 0 in terms[j] else []
        for k in range(due[j] - 1, 0, -1):
            if len(picked) == later[j] + (0 in terms[j]):
                break
            if load[k] + g <= capacity:
                load[k] += g
                picked.append(k)
        if len(picked) < later[j] + (0 in terms[j]):
            return {j: tuple(t) for j, t in terms.items()}
        out[j] = tuple(sorted(picked))
    return out
