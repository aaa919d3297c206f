"""The Chronus artifact's selection MILP and placement, answered by scheduling-opt.

The artifact (S-Lab-System-Group/ChronusArtifact, ``code/``) calls, every
lease term, ``MIPSolver.job_selection(soft_list, value_list, soft_id_list,
required_resource_list, required_block_list, maximum_block_list,
resource_num_list, objective)`` (``alg/scheduler/solver.py`` 347-424). Read
from its code, the model is (``scheduling_opt.sim.policies.chronus_cbc``
states it at length):

- a row r per (guaranteed job, reward step): GPUs ``g`` (binned), terms
  still needed ``n``, window ``w`` (terms from now that end by the step's
  deadline; 0 or negative once it passed), value ``v``; rows of a job are
  consecutive, its first has ``soft_id == 0``;
- binaries ``X[r, k]`` (k < W = max w) and ``S[r]``:
  ``sum_{k<w} X[r, k] = n S[r]`` and, flat index ``f = r W + k``, every
  ``X`` in ``[r W + w, (r + 1) W)`` is 0 (a negative ``w`` so reaches the
  previous rows' last terms, and for row 0 wraps to the last rows');
- per term ``sum_r g_r X[r, k] <= free[k]`` (``resource_num_list``: the
  GPUs the frozen jobs' reservations leave);
- per job ``sum S = 1`` (every guaranteed job keeps a step);
- maximize ``sum v S +/- sum_r g_r X[r, 0] / max(free)`` (minus while an
  unguaranteed SLO job waits: ``objective == 'minimize'``).

The library's lease problem (:meth:`scheduling_opt.lease.LeaseInput.from_terms`,
Chronus §3.3.4, in terms as the artifact counts) is the same selection with three differences, handled so:

1. the window caps that the flat-index zeros put on earlier rows are
   applied to those rows' windows (exact: the zeroed columns of a row are
   always a suffix of it);
2. its capacity is one number per term, M; ``free[k]`` varies with the
   frozen jobs. With M = max free and a blocker job pinned to terms
   ``[0, k+1)`` (needing k+1 terms, due at k+1, ``require_all``) for each
   drop of the reservations ``M - free[k]``, the model is exact whenever
   the reservations do not increase with k; otherwise the blockers take
   their non-increasing upper envelope (a tighter capacity: every answer is
   feasible for the artifact, possibly not its optimum; counted);
3. the term-0 tie-breaker (worth at most 1, less than any difference of
   values but the rare exact tie) is not in the library's objective: after
   the exact solve a pass moves whole jobs into term 0 (``maximize``) or out
   of it (``minimize``) where the real ``free[k]`` allows, keeping every
   chosen step.

An infeasible model (a job with no reachable step, or more GPUs than any
term has) returns the artifact's own infeasible shape: ``None`` entries,
which make its caller fall back to its greedy, as after CBC. O(R W) to
build plus the exact lease solve.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field

from scheduling_opt.lease import LeaseInput, exact
from scheduling_opt.solution import Status

BLOCK = "~block:"


@dataclass
class SelectionStats:
    """Counts over a run's calls."""

    calls: int = 0
    exact_capacity: int = 0
    envelope: int = 0
    infeasible: int = 0
    proven: int = 0
    moved: int = 0
    seconds: list[float] = field(default_factory=list)


@dataclass(frozen=True, slots=True)
class Answer:
    """The artifact's return shape plus what the library found."""

    solution_matrix: list[list[int | None]]
    soft_matrix: list[float | None]
    value: float | None
    objective: float | None
    optimal: bool


def groups_of(soft_id_list: Sequence[int]) -> list[list[int]]:
    """Rows per job: a job starts at each ``soft_id == 0``."""
    out: list[list[int]] = []
    for r, sid in enumerate(soft_id_list):
        if sid == 0 or not out:
            out.append([r])
        else:
            out[-1].append(r)
    return out


def effective_windows(windows: Sequence[int]) -> list[int]:
    """Each row's window after the flat-index zeros of negative windows (item 1)."""
    n = len(windows)
    width = max(windows)
    cap = list(windows)
    if width <= 0:
        return cap
    for r, w in enumerate(windows):
        if w >= 0:
            continue
        for f in range(r * width + w, r * width):
            g = f % (n * width)  # Python's negative indexing on the flat list
            row, k = divmod(g, width)
            cap[row] = min(cap[row], k)
    return cap


def infeasible(windows: Sequence[int]) -> Answer:
    """The artifact's shape when CBC finds no solution (``x`` is None everywhere)."""
    return Answer([[None] * max(w, 0) for w in windows], [None] * len(windows), None, None, False)


def select(
    values: Sequence[float],
    soft_ids: Sequence[int],
    gpus: Sequence[int],
    needs: Sequence[int],
    windows: Sequence[int],
    free: Sequence[int] | int,
    objective: str,
    *,
    time_limit: float | None = None,
    stats: SelectionStats | None = None,
) -> Answer:
    """Solve the artifact's selection MILP with :func:`scheduling_opt.lease.exact`.

    Arguments are ``job_selection``'s lists; returns its
    ``(solution_matrix, soft_matrix)`` in :class:`Answer`.
    """
    stats = stats if stats is not None else SelectionStats()
    stats.calls += 1
    width = max(windows)
    if isinstance(free, int):
        free = [free] * max(width, 1)
    top = max(free)  # the artifact scales the term-0 term by the whole list's maximum
    free = list(free[: max(width, 1)])
    eff = effective_windows(windows)
    if width <= 0 or max(free) <= 0:
        stats.infeasible += 1
        return infeasible(windows)
    cap = max(free)
    jobs: list[tuple[str, int, int, list[tuple[int, float]]]] = []
    rows_of: list[list[int]] = []  # per job, the row of each of its library steps
    for k, rows in enumerate(groups_of(soft_ids)):
        g, n = int(gpus[rows[0]]), int(needs[rows[0]])
        steps: list[tuple[int, float]] = []
        kept: list[int] = []
        for r in rows:
            w = eff[r]
            if w >= n and (not steps or w > steps[-1][0]):
                if steps and values[r] > steps[-1][1]:
                    continue  # a later, better-paid step with a longer window: never in the data
                steps.append((w, float(values[r])))
                kept.append(r)
        if not steps or g > cap:
            stats.infeasible += 1
            return infeasible(windows)
        jobs.append((f"j{k}", g, n, steps))
        rows_of.append(kept)
    reserved = [cap - f for f in free]
    envelope = [max(reserved[k:]) for k in range(len(reserved))]
    if envelope == reserved:
        stats.exact_capacity += 1
    else:
        stats.envelope += 1
    for k in range(len(envelope)):
        drop = envelope[k] - (envelope[k + 1] if k + 1 < len(envelope) else 0)
        if drop > 0:
            jobs.append((f"{BLOCK}{k}", drop, k + 1, [(k + 1, 0.0)]))
    inp = LeaseInput.from_terms(jobs, cap, require_all=True)
    sol = exact(inp, time_limit=time_limit)
    if sol.decision is None:
        stats.infeasible += 1
        return infeasible(windows)
    if sol.status is Status.OPTIMAL:
        stats.proven += 1
    chosen: dict[int, int] = {}
    held: dict[int, list[int]] = {}
    for k, rows in enumerate(rows_of):
        level = sol.decision.levels[f"j{k}"]
        assert level is not None  # require_all
        chosen[k] = rows[level]
        held[k] = sorted(sol.decision.terms[f"j{k}"])
    slack = list(free)
    for k, terms in held.items():
        for t in terms:
            slack[t] -= int(gpus[chosen[k]])
    stats.moved += tie_break(objective, chosen, held, slack, gpus, eff)
    return answer(values, gpus, windows, top, objective, chosen, held, sol.status)


def tie_break(
    objective: str,
    chosen: dict[int, int],
    held: dict[int, list[int]],
    slack: list[int],
    gpus: Sequence[int],
    eff: Sequence[int],
) -> int:
    """Move jobs into term 0 (``maximize``) or out of it (``minimize``); returns the moves."""
    moves = 0
    order = sorted(chosen, key=lambda k: (-int(gpus[chosen[k]]), k))
    for k in order:
        g, terms = int(gpus[chosen[k]]), held[k]
        if objective == "maximize" and terms and terms[0] != 0 and slack[0] >= g:
            last = terms.pop()
            slack[last] += g
            slack[0] -= g
            terms.insert(0, 0)
            moves += 1
        elif objective == "minimize" and terms and terms[0] == 0:
            window = eff[chosen[k]]
            spot = next((t for t in range(1, window) if t not in terms and slack[t] >= g), None)
            if spot is not None:
                terms.pop(0)
                slack[0] += g
                slack[spot] -= g
                terms.append(spot)
                terms.sort()
                moves += 1
    return moves


def answer(
    values: Sequence[float],
    gpus: Sequence[int],
    windows: Sequence[int],
    top: int,
    objective: str,
    chosen: dict[int, int],
    held: dict[int, list[int]],
    status: Status,
) -> Answer:
    """The artifact's ``(solution_matrix, soft_matrix)`` and the model's objective."""
    row_terms = {chosen[k]: set(held[k]) for k in chosen}
    matrix: list[list[int | None]] = []
    soft: list[float | None] = []
    for r, w in enumerate(windows):
        terms = row_terms.get(r, set())
        matrix.append([1 if t in terms else 0 for t in range(max(w, 0))])
        soft.append(1.0 if r in row_terms else 0.0)
    value = math.fsum(float(values[r]) for r in row_terms)
    first = sum(int(gpus[r]) for r, t in row_terms.items() if 0 in t)
    sign = {"maximize": 1.0, "minimize": -1.0}.get(objective, 0.0)
    return Answer(matrix, soft, value, value + sign * first / top, status is Status.OPTIMAL)


def model_objective(
    values: Sequence[float],
    gpus: Sequence[int],
    free: Sequence[int] | int,
    objective: str,
    solution_matrix: Sequence[Sequence[int | float | None]],
    soft_matrix: Sequence[float | None],
) -> tuple[float, float] | None:
    """(value, objective) of an artifact answer (CBC's or ours); None when infeasible."""
    if any(s is None for s in soft_matrix):
        return None
    top = free if isinstance(free, int) else max(free)
    value = math.fsum(float(v) for v, s in zip(values, soft_matrix, strict=True) if s and s > 0.5)
    first = sum(
        int(g)
        for g, row in zip(gpus, solution_matrix, strict=True)
        if row and row[0] is not None and row[0] > 0.5
    )
    sign = {"maximize": 1.0, "minimize": -1.0}.get(objective, 0.0)
    return value, value + sign * first / top
