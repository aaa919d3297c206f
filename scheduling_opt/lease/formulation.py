"""The tightened lease MILP, backend-neutral: variables, rows, and solutions as schedules.

Binary s[i,p]: job i meets its level p; integer y[i,b]: terms job i holds in
block b. Blocks split the horizon [0, H):

- capacity: sum_i G_i y[i,b] <= M for every capacitated block;
- choice: sum_p s[i,p] <= 1 (= 1 with ``require_all``, Eq. 5);
- count: sum_b y[i,b] = RL_i sum_p s[i,p] (RL_i terms if selected, none if not);
- tight linking: y[i,b] <= min(len_b, RL_i) sum_{p: DL_p >= end_b} s[i,p]: a
  term is held only if the chosen deadline lies after it. With the count
  row this implies Eq. (4) (sum_{k < DL_p} x[i,k] >= RL_i s[i,p]) and its
  LP relaxation is much tighter than Eq. (4) linearized alone
  (``tight=False`` keeps Eq. (4)'s rows instead, for the study);
- symmetry: identical jobs (same G, RL, levels) get non-worsening levels in
  index order (a rejected job after every selected one);
- aggregation (optional; off by default, it made HiGHS slower): terms from
  the first breakpoint after which the jobs that can still hold terms need
  at most M GPUs together are never short of room; each interval between
  consecutive deadlines there becomes one block, an integer count without
  capacity row (exact, since any terms of such an interval do).

Objective (1): max sum V_p s[i,p] (zero for a feasibility check). Chronus
§3.3.4. NP-hard (a one-term instance is a knapsack problem); the model has
O(N (P + H)) variables and rows.
"""

from __future__ import annotations

import bisect
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import overload

import numpy as np
from numpy.typing import NDArray

from scheduling_opt.lease._schedule import Schedule, best_of, finish, relevel
from scheduling_opt.lease.greedy import Hint, greedy_schedule, repair
from scheduling_opt.lease.model import LeaseDecision, LeaseInput
from scheduling_opt.solution import Solution, Status

__all__ = [
    "ExactOutcome",
    "LevelEntries",
    "Model",
    "ModelConfig",
    "build",
    "build_levels",
    "model_size",
]


@dataclass(frozen=True, slots=True)
class ModelConfig:
    """Formulation switches; the defaults are the final model (docs/lease.md's study)."""

    tight: bool = True
    symmetry: bool = True
    aggregate: bool = False  # exact, but measured slower on HiGHS
    feasibility: bool = False  # zero objective: admission control's check


@dataclass(frozen=True, slots=True)
class Blocks:
    """Consecutive term ranges [start, end); ``capped`` ones have a capacity row."""

    start: tuple[int, ...]
    end: tuple[int, ...]
    capped: tuple[bool, ...]


def make_blocks(inp: LeaseInput, aggregate: bool) -> Blocks:
    """One block per term, except the uncapacitated tail intervals when ``aggregate``."""
    jobs = inp.lease_jobs
    dues = sorted({lv.due for job in jobs for lv in job.levels})
    free_from = inp.horizon
    if aggregate:
        prev = 0
        for due in dues:
            reach = sum(j.gpus for j in jobs if j.last_due >= due)
            if reach <= inp.capacity:
                free_from = prev
                break
            prev = due
    start = list(range(free_from))
    end = [k + 1 for k in start]
    capped = [True] * free_from
    prev = free_from
    for due in dues:
        if due > prev:
            start.append(prev)
            end.append(due)
            capped.append(False)
            prev = due
    return Blocks(tuple(start), tuple(end), tuple(capped))


class Layout:
    """Variable indices: s[i] per kept level, y[i] as (block, index) pairs.

    ``y`` may be given as spans instead (per job: its first term column and
    how many blocks it has) and is then built on first read: the levels
    model keeps the term columns in its layout but never reads them, and at
    C120 they are ~10,000 pairs per lease term.
    """

    __slots__ = ("_spans", "_y", "s", "size")

    def __init__(
        self,
        s: list[list[int]] | None = None,
        y: list[list[tuple[int, int]]] | None = None,
        size: int = 0,
        *,
        spans: list[tuple[int, int]] | None = None,
    ) -> None:
        self.s: list[list[int]] = [] if s is None else s
        self._y = y if y is not None or spans is not None else []
        self._spans = spans
        self.size = size

    @property
    def y(self) -> list[list[tuple[int, int]]]:
        if self._y is None:
            self._y = [
                list(zip(range(k), range(first, first + k), strict=True))
                for first, k in self._spans or ()
            ]
        return self._y

    def new(self) -> int:
        self.size += 1
        return self.size - 1

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Layout):
            return NotImplemented
        return (self.s, self.y, self.size) == (other.s, other.y, other.size)

    __hash__ = None  # type: ignore[assignment]  # mutable, as the dataclass it was

    def __repr__(self) -> str:
        return f"Layout(s={self.s!r}, y={self.y!r}, size={self.size!r})"


def _layout(inp: LeaseInput, blocks: Blocks) -> Layout:
    """Per job its level columns, then one term column per block starting before its last due.

    The block starts ascend, so a job's blocks are a prefix (found by
    bisection): O(N (P + log B)); the term columns (``Layout.y``) on first
    read.
    """
    s: list[list[int]] = []
    spans: list[tuple[int, int]] = []
    starts = blocks.start
    size = 0
    for job in inp.lease_jobs:
        n = len(job.levels)
        s.append(list(range(size, size + n)))
        size += n
        k = bisect.bisect_left(starts, job.last_due)
        spans.append((size, k))
        size += k
    return Layout(s, size=size, spans=spans)


def identical_pairs(inp: LeaseInput) -> list[tuple[int, int]]:
    """Consecutive pairs of jobs with the same G, RL and levels (symmetric in the model)."""
    groups: dict[tuple[object, ...], list[int]] = {}
    for i, job in enumerate(inp.lease_jobs):
        if job.levels:
            key = (job.gpus, job.terms, tuple((lv.due, lv.reward) for lv in job.levels))
            groups.setdefault(key, []).append(i)
    return [(g[t], g[t + 1]) for g in groups.values() for t in range(len(g) - 1)]


Row = tuple[list[int], list[float], float, float]


def _rows(inp: LeaseInput, blocks: Blocks, lay: Layout, cfg: ModelConfig) -> list[Row]:
    """Every constraint as (columns, coefficients, lower, upper)."""
    inf = float("inf")
    rows: list[Row] = []
    for i, job in enumerate(inp.lease_jobs):
        s, y = lay.s[i], lay.y[i]
        if not s:
            continue
        rows.append(_choice_row(inp, s))
        count = ([v for _, v in y] + s, [1.0] * len(y) + [-float(job.terms)] * len(s))
        if cfg.tight:
            rows.append((*count, 0.0, 0.0))
            for b, v in y:
                cap = min(blocks.end[b] - blocks.start[b], job.terms)
                open_ = [s[p] for p, lv in enumerate(job.levels) if lv.due >= blocks.end[b]]
                rows.append(([v, *open_], [1.0] + [-float(cap)] * len(open_), -inf, 0.0))
        else:
            rows.append((*count, -inf, 0.0))
            for p, lv in enumerate(job.levels):
                before = [v for b, v in y if blocks.end[b] <= lv.due]
                rows.append(([*before, s[p]], [1.0] * len(before) + [-float(job.terms)], 0.0, inf))
    # Capacity rows: each block's term columns in job order (one pass over the jobs).
    cap_cols: list[list[int]] = [[] for _ in blocks.start]
    cap_coefs: list[list[float]] = [[] for _ in blocks.start]
    for job, y in zip(inp.lease_jobs, lay.y, strict=True):
        g = float(job.gpus)
        for b, v in y:
            cap_cols[b].append(v)
            cap_coefs[b].append(g)
    for b, capped in enumerate(blocks.capped):
        if capped and cap_cols[b]:
            rows.append((cap_cols[b], cap_coefs[b], -inf, float(inp.capacity)))
    rows.extend(_symmetry_rows(inp, lay, cfg))
    return rows


def _choice_row(inp: LeaseInput, s: list[int]) -> Row:
    """sum_p s[i,p] <= 1 (= 1 with ``require_all``, Eq. 5)."""
    return (s, [1.0] * len(s), 1.0 if inp.require_all else 0.0, 1.0)


def _symmetry_rows(inp: LeaseInput, lay: Layout, cfg: ModelConfig) -> list[Row]:
    """Identical jobs get non-worsening levels in index order (none without ``cfg.symmetry``)."""
    rows: list[Row] = []
    if cfg.symmetry:
        for a, b in identical_pairs(inp):
            # Rank of the level (rejected = 0): integral, so CP-SAT takes it as is.
            ranks = [float(len(lay.s[a]) - p) for p in range(len(lay.s[a]))]
            rows.append((lay.s[a] + lay.s[b], ranks + [-r for r in ranks], 0.0, float("inf")))
    return rows


#: Rows over the level columns only, as COO entries: (row, position among the
#: level columns in layout order, value) and the rows' lower and upper bounds.
LevelEntries = tuple[
    NDArray[np.int64],
    NDArray[np.int64],
    NDArray[np.float64],
    NDArray[np.float64],
    NDArray[np.float64],
]


@dataclass(frozen=True, slots=True)
class Model:
    """The built model: blocks, variable layout, rows, objective ``c`` and upper bounds ``ub``.

    ``entries``: ``rows`` as :data:`LevelEntries`, when they hold level
    columns only and the builder computed them with numpy
    (:func:`build_levels`); the levels stage then reads them instead of
    converting the rows (tests/lease/test_levels_matrix.py: the same matrix),
    and such ``rows`` are built only if read (:class:`LazyRows`).
    """

    blocks: Blocks
    lay: Layout
    rows: Sequence[Row]
    c: NDArray[np.float64]
    ub: NDArray[np.float64]
    entries: LevelEntries | None = field(default=None, compare=False, repr=False)

    def schedule(self, inp: LeaseInput, values: Sequence[float]) -> Schedule:
        """Terms from a solution vector: a block's count becomes its first terms."""
        held: list[list[int]] = []
        for s, y in zip(self.lay.s, self.lay.y, strict=True):
            if not any(values[v] > 0.5 for v in s):
                held.append([])
                continue
            terms: list[int] = []
            for b, v in y:
                n = round(values[v])
                terms.extend(range(self.blocks.start[b], self.blocks.start[b] + n))
            held.append(terms)
        return relevel(inp, held)

    def values(self, schedule: Schedule) -> list[float]:
        """A schedule as a solution vector of this model (for hints and starts)."""
        values = [0.0] * self.lay.size
        blocks = self.blocks
        for i, pos in enumerate(schedule.levels):
            if pos is None:
                continue
            values[self.lay.s[i][pos]] = 1.0
            for b, v in self.lay.y[i]:
                values[v] = float(
                    sum(1 for k in schedule.terms[i] if blocks.start[b] <= k < blocks.end[b])
                )
        return values


def build(inp: LeaseInput, config: ModelConfig = ModelConfig()) -> Model:
    """The model of ``inp`` under ``config`` (backend-neutral)."""
    blocks = make_blocks(inp, config.aggregate)
    lay = _layout(inp, blocks)
    c = np.zeros(lay.size)
    if not config.feasibility:
        for job, s in zip(inp.lease_jobs, lay.s, strict=True):
            for lv, v in zip(job.levels, s, strict=True):
                c[v] = lv.reward
    ub = np.ones(lay.size)
    for job, y in zip(inp.lease_jobs, lay.y, strict=True):
        for b, v in y:
            ub[v] = min(blocks.end[b] - blocks.start[b], job.terms)
    return Model(blocks, lay, _rows(inp, blocks, lay, config), c, ub)


def _energy_table(
    inp: LeaseInput,
) -> tuple[NDArray[np.int64], NDArray[np.int64], NDArray[np.float64], NDArray[np.float64]]:
    """The energy rows' (row, level position, coefficient) entries and upper bounds.

    Per t = 1..H (rows without entries left out): sum_{i,p} G_i max(0, RL_i -
    max(0, DL_p - t)) s[i,p] <= M t, level columns in job, then level order;
    one (t, entry) table in numpy: O(H N P) vectorized work.
    """
    jobs = inp.lease_jobs
    n = sum(len(job.levels) for job in jobs)
    gpus = np.fromiter((job.gpus for job in jobs for _ in job.levels), np.int64, n)
    terms = np.fromiter((job.terms for job in jobs for _ in job.levels), np.int64, n)
    due = np.fromiter((lv.due for job in jobs for lv in job.levels), np.int64, n)
    t = np.arange(1, inp.horizon + 1, dtype=np.int64)
    must = terms[None, :] - np.maximum(0, due[None, :] - t[:, None])
    keep = must > 0
    present = keep.any(axis=1) if n else np.zeros(len(t), dtype=np.bool_)
    which, pos = np.nonzero(keep[present])
    coefs = (gpus[pos] * must[present][which, pos]).astype(np.float64)
    hi = (inp.capacity * t[present]).astype(np.float64)
    return which, pos, coefs, hi


def _energy_rows(inp: LeaseInput, lay: Layout) -> list[Row]:
    """The energy rows of :func:`_energy_table` as rows over the layout's columns."""
    inf = float("inf")
    col = np.array([v for s in lay.s for v in s], dtype=np.int64)
    which, pos, coefs, hi = _energy_table(inp)
    if not len(hi):
        return []
    counts = np.bincount(which, minlength=len(hi))
    bounds = np.cumsum(counts)[:-1].tolist()
    return [
        (c.tolist(), v.tolist(), -inf, h)
        for c, v, h in zip(
            np.split(col[pos], bounds), np.split(coefs, bounds), hi.tolist(), strict=True
        )
    ]


class LazyRows(Sequence[Row]):
    """Rows built by ``build`` on first read (the levels model's: its stage reads entries)."""

    __slots__ = ("_build", "_rows")

    def __init__(self, build: Callable[[], list[Row]]) -> None:
        self._build: Callable[[], list[Row]] | None = build
        self._rows: list[Row] = []

    def _all(self) -> list[Row]:
        if self._build is not None:
            self._rows, self._build = self._build(), None
        return self._rows

    @overload
    def __getitem__(self, index: int) -> Row: ...
    @overload
    def __getitem__(self, index: slice) -> Sequence[Row]: ...
    def __getitem__(self, index: int | slice) -> Row | Sequence[Row]:
        return self._all()[index]

    def __len__(self) -> int:
        return len(self._all())

    def __iter__(self) -> Iterator[Row]:
        return iter(self._all())


def build_levels(inp: LeaseInput, config: ModelConfig = ModelConfig()) -> Model:
    """The levels-only relaxation: s binary, no terms; columns as in :func:`build`.

    It keeps the choice and symmetry rows and replaces terms and capacity by
    one *energy* row per t = 1..H: the selected jobs' work that must fall
    before t, sum G_i max(0, RL_i - max(0, DL_p - t)) s[i,p], fits in M t
    GPU-terms. For fixed levels these rows hold exactly when the terms can be
    held *fractionally* (y[i,k] in [0, 1], RL_i in total before DL, at most
    M GPUs per term): that is a transportation problem (job i sends G_i RL_i
    through arcs of capacity G_i to the terms before its deadline, each term
    takes M), feasible iff every cut is at least the supply (max-flow
    min-cut); since every job's window is a prefix [0, DL) of the terms, the
    smallest cuts put a prefix [0, t) of the terms on the source side, and
    their condition is the row of t. So this is a relaxation of the lease
    problem (integral terms are fractional ones), whose optimum is an upper
    bound, with H rows instead of O(N H) term columns. The y columns stay in
    the layout (upper bound 0) so that solutions share :func:`build`'s indices.
    O(N P H) to build.
    """
    blocks = make_blocks(inp, config.aggregate)
    lay = _layout(inp, blocks)
    c = np.zeros(lay.size)
    ub = np.zeros(lay.size)
    cols = np.array([v for s in lay.s for v in s], dtype=np.int64)
    ub[cols] = 1.0
    if not config.feasibility:
        c[cols] = [lv.reward for job in inp.lease_jobs for lv in job.levels]
    entries = _level_entries(inp, lay, config)

    def rows() -> list[Row]:
        # Of :func:`_rows`, the rows over level columns only: the choice and
        # symmetry rows (every other row holds a term column); then the energy rows.
        head = [_choice_row(inp, s) for s in lay.s if s]
        return head + _symmetry_rows(inp, lay, config) + _energy_rows(inp, lay)

    return Model(blocks, lay, LazyRows(rows), c, ub, entries)


def _level_entries(inp: LeaseInput, lay: Layout, config: ModelConfig) -> LevelEntries:
    """The levels model's rows as :data:`LevelEntries`, built in numpy from the jobs.

    The choice rows (one per job with levels: its level positions, 1 each),
    the symmetry rows (per identical pair, the ranks of the first job's
    levels and their negatives on the second's), then the energy rows of
    :func:`_energy_table`: the rows :func:`build_levels` lists, entry for
    entry (tests/lease/test_levels_matrix.py). O(N P H) vectorized.
    """
    sizes = np.array([len(s) for s in lay.s], dtype=np.int64)
    first = np.cumsum(sizes) - sizes  # each job's first level position
    with_levels = sizes > 0
    n_choice = int(with_levels.sum())
    total = int(sizes.sum())
    which = [np.repeat(np.arange(n_choice, dtype=np.int64), sizes[with_levels])]
    pos = [np.arange(total, dtype=np.int64)]
    vals = [np.ones(total)]
    lo = [np.full(n_choice, 1.0 if inp.require_all else 0.0)]
    hi = [np.ones(n_choice)]
    pairs = identical_pairs(inp) if config.symmetry else []
    if pairs:
        a = np.array([p for p, _ in pairs], dtype=np.int64)
        b = np.array([q for _, q in pairs], dtype=np.int64)
        n = sizes[a]  # identical jobs: as many levels each
        row = np.repeat(np.arange(len(pairs), dtype=np.int64) + n_choice, 2 * n)
        # Per pair: a's levels then b's, ranks n - p then their negatives.
        seg = np.repeat(np.cumsum(2 * n) - 2 * n, 2 * n)
        k = np.arange(int(2 * n.sum()), dtype=np.int64) - seg  # 0 .. 2n - 1 in each pair
        n2 = np.repeat(n, 2 * n)
        second = k >= n2
        p = np.where(second, k - n2, k)
        pos.append(np.where(second, np.repeat(first[b], 2 * n), np.repeat(first[a], 2 * n)) + p)
        vals.append(np.where(second, -(n2 - p), n2 - p).astype(np.float64))
        which.append(row)
        lo.append(np.zeros(len(pairs)))
        hi.append(np.full(len(pairs), np.inf))
    e_which, e_pos, e_coefs, e_hi = _energy_table(inp)
    head = n_choice + len(pairs)
    which.append(e_which + head)
    pos.append(e_pos)
    vals.append(e_coefs)
    lo.append(np.full(len(e_hi), -np.inf))
    hi.append(e_hi)
    return (
        np.concatenate(which),
        np.concatenate(pos),
        np.concatenate(vals),
        np.concatenate(lo),
        np.concatenate(hi),
    )


def model_size(inp: LeaseInput, config: ModelConfig = ModelConfig()) -> tuple[int, int]:
    """(variables, rows) of the model under ``config``.

    Parameters
    ----------
    inp : LeaseInput
        The jobs, M and T_l.
    config : ModelConfig
        Formulation switches.

    Returns
    -------
    tuple of (int, int)
        Variables and constraint rows.

    Raises
    ------
    SchedulingOptError
        Never for a built input.

    Examples
    --------
    >>> from scheduling_opt.model import Job, RewardStep
    >>> a = Job("a", 1, 1, 2.0, deadlines=(RewardStep(3.0, 10),))
    >>> model_size(LeaseInput([a], 1, 1.0))  # s, 3 x y; choice, count, 3 links, 3 capacity
    (4, 8)

    References
    ----------
    Chronus (SoCC '21) §3.3.4; docs/lease.md (the formulation study).
    """
    model = build(inp, config)
    return model.lay.size, len(model.rows)


@dataclass(frozen=True, slots=True)
class ExactOutcome:
    """What a backend proved, its schedule (None: no solution found) and its bound."""

    status: Status
    schedule: Schedule | None
    bound: float | None = None
    message: str = ""


def run_exact(
    inp: LeaseInput,
    solve: Callable[[Schedule | None], ExactOutcome],
    hint: Hint | None,
    *,
    feasibility: bool = False,
    warm_start: bool = True,
) -> Solution[LeaseDecision]:
    """An exact backend's answer, honestly labelled.

    ``hint`` is repaired into a feasible schedule and handed to ``solve`` (a
    CP-SAT hint, a CBC start). On a time limit the answer is the best of the
    solver's incumbent, the repaired hint and the greedy, with the solver's
    bound. In a feasibility run (zero objective) the solver's bound says
    nothing about the reward and is dropped. ``warm_start=False``: the
    backend takes no start (HiGHS through scipy), so the hint is repaired
    only when the fallback needs it.
    """
    start = time.perf_counter()
    if inp.require_all and inp.hopeless:
        return finish(inp, None, Status.INFEASIBLE, start, message="a job cannot meet any deadline")
    warm = repair(inp, hint) if hint is not None and warm_start else None
    out = solve(warm)
    bound = None if feasibility else out.bound
    if out.status is Status.OPTIMAL:
        return finish(inp, out.schedule, Status.OPTIMAL, start, bound=bound, message=out.message)
    if out.status is Status.INFEASIBLE:
        return finish(inp, None, Status.INFEASIBLE, start, message=out.message)
    if hint is not None and not warm_start:
        warm = repair(inp, hint)
    fallback = best_of(inp, [out.schedule, warm, greedy_schedule(inp)])
    return finish(inp, fallback, Status.TIME_LIMIT, start, bound=bound, message=out.message)
