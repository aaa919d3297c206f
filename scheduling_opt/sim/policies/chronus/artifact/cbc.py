"""The Chronus artifact's lease-selection MILP, as its code writes it, solved by CBC.

Chronus (SoCC '21) §3.3.4 selects, each lease term, one reward step per
guaranteed job and the terms it holds. The authors' simulator (the Chronus
artifact, :mod:`~scheduling_opt.sim.policies.chronus.artifact.rules`;
``code/alg/scheduler/solver.py``, ``MIPSolver.job_selection``, called from
``time_aware_with_lease.py``, ``flush_lease_jobs``) writes it so:

- a row per guaranteed job and reward step (``abstract_lease_list``):
  the job's binned GPUs ``g``, the terms it still needs ``n``, the
  step's window ``w`` (terms from the current one that end by the step's
  deadline, ``compute_maximum_lease``; it may be 0 or negative once the step
  has passed) and the step's value ``v``;
- binaries ``X[r, k]`` for every row and every term ``k < W`` (``W`` the
  largest window), and ``S[r]``, the row's step is chosen;
- per row ``sum_{k < w} X[r, k] = n S[r]`` and ``sum_{w <= k < W} X = 0``;
- per term ``sum_r g_r X[r, k] <= free[k]``, the GPUs the frozen jobs'
  reservations leave
  (:func:`~scheduling_opt.sim.policies.chronus.artifact.selection.frozen_jobs`);
- per job, the rows from its step 0 to the next job's: ``sum S = 1`` (every
  guaranteed job keeps a step);
- maximise ``sum_r v_r S[r] +/- sum_r g_r X[r, 0] / max(free)``: the sign is
  minus while an unguaranteed SLO job waits (the adaptive objective
  ``flush_lease_jobs`` chooses), plus otherwise.

Only term 0 is scored, so where a row's later terms lie is the solver's
choice: that is why this module exists. The artifact's admission and its
frozen jobs read those terms (docs/reproduction.md, "Parity with the
authors' simulator"), and no rule we can write lays them out as CBC does;
the same model given to CBC (the binary PuLP, a base dependency, bundles)
is the closest reading. Two deliberate differences from the artifact's
call: CBC runs without its wall-clock stops (5 s, and 1 s without a better
incumbent, in ``MIPSolver.job_selection``), because a run must not depend
on the machine's load, and optionally with a node limit instead; and the
rows of a job whose step 0 has passed are written with the artifact's
flat-index arithmetic (a negative window reaches into the previous row's
last terms, as the "past the window" equality of
``MIPSolver.job_selection`` indexes them, and for the first row wraps, as
Python's negative indexing does, to the last rows' last terms), which we
keep because it is the model CBC solved. Which optimal layout CBC returns
also depends on its build:
:mod:`~scheduling_opt.sim.policies.chronus.artifact.mip` gives the same
model to the build the artifact ran.

The model goes to the CBC binary PuLP bundles as a fixed MPS file written
here (PuLP's own modelling layer took 2.8 of 3.9 s on 343 rows x 263 terms;
the file takes 0.5 s), variables in the artifact's creation order, and
CBC's answer is checked against the model before it is used.

Not the artifact's code: the model is written again from the rules above.
Cost: one CBC process per call on R W + R binaries (R rows, W terms);
writing and checking the model is O(R W) Python work.
"""

from __future__ import annotations

import subprocess
import tempfile
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import pulp

__all__ = ["Row", "Selection", "select"]


@dataclass(frozen=True, slots=True)
class Row:
    """One (job, reward step) row of the artifact's selection MILP."""

    job: str
    gpus: int
    need: int
    window: int
    value: float
    step: int


@dataclass(frozen=True, slots=True)
class Selection:
    """CBC's answer: per job its chosen step and held terms; the objective; proven or not."""

    steps: dict[str, int]
    terms: dict[str, tuple[int, ...]]
    objective: float
    optimal: bool


def select(
    rows: Sequence[Row],
    free: Sequence[int],
    *,
    minimize_first: bool,
    max_nodes: int | None = None,
) -> Selection | None:
    """Solve the artifact's selection MILP with CBC (the module docstring's model).

    Parameters
    ----------
    rows : sequence of Row
        The rows in the artifact's order: by job, each job's steps from 0,
        consecutively (a job's group starts at its ``step == 0`` row).
    free : sequence of int
        GPUs per term left by the frozen jobs, from the current term; at
        least as long as the largest window (terms beyond it are unused).
    minimize_first : bool
        Subtract the first term's GPU use (an unguaranteed SLO job waits)
        instead of adding it.
    max_nodes : int or None
        CBC's branch-and-bound node limit (deterministic); None: solve to
        optimality.

    Returns
    -------
    Selection or None
        None when CBC finds no feasible selection (the caller falls back,
        as the artifact does); otherwise the held terms of every row's job
        (term indices from 0 = the current term) and whether CBC proved it.

    Raises
    ------
    ValueError
        When ``rows`` is empty, a row's GPUs or need is below 1, a job's
        rows do not start at step 0, or ``free`` is shorter than the
        largest window.

    Examples
    --------
    >>> rows = [Row("a", 2, 1, 2, 10.0, 0), Row("b", 2, 1, 1, 10.0, 0)]
    >>> sel = select(rows, [2, 2], minimize_first=False)
    >>> sel.terms, sel.optimal
    ({'a': (1,), 'b': (0,)}, True)
    """
    width = check_rows(rows, free)
    if max(free[:width]) <= 0:
        return None  # every row holds >= 1 term of >= 1 GPU: proven infeasible
    n = len(rows)
    groups = job_groups(rows)
    with tempfile.TemporaryDirectory(prefix="chronus-cbc-") as tmp:
        model, solution = Path(tmp, "model.mps"), Path(tmp, "model.sol")
        model.write_text(_mps(rows, free, width, groups, minimize_first), encoding="ascii")
        args = [_cbc_path(), str(model), "-max", "-threads", "1"]
        if max_nodes is not None:
            args += ["-maxNodes", str(max_nodes)]
        args += ["-solve", "-solution", str(solution)]
        subprocess.run(args, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        status, values = _read_solution(solution.read_text(encoding="ascii"))
    if status.startswith(("Infeasible", "Integer infeasible", "Unbounded")):
        return None
    x = values.get("x", {})
    s = values.get("s", {})
    chosen = [s.get(i, 0.0) >= 0.5 for i in range(n)]
    held = [tuple(k for k in range(width) if x.get(i * width + k, 0.0) >= 0.5) for i in range(n)]
    return answer(rows, free, chosen, held, minimize_first, optimal=status.startswith("Optimal"))


def check_rows(rows: Sequence[Row], free: Sequence[int]) -> int:
    """The model's width ``W`` (its largest window, at least 1); ValueError naming a bad row."""
    if not rows:
        raise ValueError("rows: the selection needs at least one row")
    width = max(max(r.window for r in rows), 1)
    if len(free) < width:
        raise ValueError(f"free: {len(free)} terms, shorter than the largest window {width}")
    for i, r in enumerate(rows):
        if r.gpus < 1 or r.need < 1:
            raise ValueError(f"rows[{i}]: gpus and need must be >= 1, got {r.gpus}, {r.need}")
        if (i == 0 or rows[i - 1].job != r.job) and r.step != 0:
            raise ValueError(f"rows[{i}]: job {r.job!r}'s rows must start at step 0")
    return width


def answer(
    rows: Sequence[Row],
    free: Sequence[int],
    chosen: Sequence[bool],
    held: Sequence[tuple[int, ...]],
    minimize_first: bool,
    *,
    optimal: bool,
) -> Selection | None:
    """A solver's values as a :class:`Selection`, or None when they break the model.

    Checked here, not trusted from the solver's status: a node limit can
    stop it before its first incumbent.
    """
    width = max(max(r.window for r in rows), 1)
    if not feasible(rows, free, width, job_groups(rows), chosen, held):
        return None
    sign = -1.0 if minimize_first else 1.0
    scale = 1.0 * max(free)
    steps: dict[str, int] = {}
    terms: dict[str, tuple[int, ...]] = {}
    objective = 0.0
    for i, r in enumerate(rows):
        objective += sign * r.gpus / scale * (0 in held[i])
        if chosen[i]:
            steps[r.job] = r.step
            terms[r.job] = held[i]
            objective += r.value
    return Selection(steps, terms, objective, optimal)


def _cbc_path() -> str:
    """The CBC binary PuLP bundles (a base dependency)."""
    path: str = pulp.PULP_CBC_CMD().path
    return path


def job_groups(rows: Sequence[Row]) -> list[range]:
    """Each job's rows: from a step-0 row to the next (the artifact's ``soft_id`` walk)."""
    out: list[range] = []
    start = 0
    while start < len(rows):
        end = start + 1
        while end < len(rows) and rows[end].step != 0:
            end += 1
        out.append(range(start, end))
        start = end
    return out


def outside(i: int, window: int, width: int, rows: int) -> list[int]:
    """Flat X indices row ``i``'s "no term past the window" equality covers (``MIPSolver.job_selection``).

    The artifact's range is flat: a negative window starts in the previous
    rows, and below index 0 Python's negative indexing wraps it to the last
    rows' last terms (of ``rows`` x ``width`` X variables); an index may
    then appear twice.
    """
    total = rows * width
    return [f % total for f in range(i * width + window, (i + 1) * width)]


def _mps(
    rows: Sequence[Row], free: Sequence[int], width: int, groups: Sequence[range], minimize: bool
) -> str:
    """The model in fixed MPS: X row-major then S (the artifact's variable order).

    Constraints in the artifact's order: per row its window equality and,
    when the window is short, its outside equality; per term its capacity;
    per job its one-step equality.
    """
    n = len(rows)
    cols: list[list[tuple[str, float]]] = [[] for _ in range(n * width + n)]
    kinds: list[str] = []
    rhs: list[float] = []

    def add(kind: str, value: float) -> str:
        kinds.append(kind)
        rhs.append(value)
        return f"C{len(kinds) - 1:07d}"

    scale = 1.0 * max(free)
    sign = -1.0 if minimize else 1.0
    for i, r in enumerate(rows):
        cols[n * width + i].append(("OBJ", float(r.value)))
        cols[i * width].append(("OBJ", sign * r.gpus / scale))
    for i, r in enumerate(rows):
        name = add("E", 0.0)
        for f in range(i * width, i * width + max(r.window, 0)):
            cols[f].append((name, 1.0))
        cols[n * width + i].append((name, -float(r.need)))
        if r.window < width:
            name = add("E", 0.0)
            # A wrapped range can name an index twice (python-mip then sums it).
            for f, count in Counter(outside(i, r.window, width, n)).items():
                cols[f].append((name, float(count)))
    for k in range(width):
        name = add("L", float(free[k]))
        for i, r in enumerate(rows):
            cols[i * width + k].append((name, float(r.gpus)))
    for group in groups:
        name = add("E", 1.0)
        for i in group:
            cols[n * width + i].append((name, 1.0))
    out = ["NAME          MODEL", "ROWS", " N  OBJ"]
    out += [f" {kind}  C{c:07d}" for c, kind in enumerate(kinds)]
    out.append("COLUMNS")
    out.append("    MARK      'MARKER'                 'INTORG'")
    names = [f"x{f:07d}" for f in range(n * width)] + [f"s{i:07d}" for i in range(n)]
    for name, entries in zip(names, cols, strict=True):
        # Entries in row order, the objective last (as PuLP writes them).
        for row, value in sorted(entries, key=lambda e: (e[0] == "OBJ", e[0])):
            out.append(f"    {name}  {row:<9}  {value:.12e}")
    out.append("    MARK      'MARKER'                 'INTEND'")
    out.append("RHS")
    out += [f"    RHS       C{c:07d}  {value:.12e}" for c, value in enumerate(rhs)]
    out.append("BOUNDS")
    out += [f" BV BND       {name}" for name in names]
    out.append("ENDATA")
    return "\n".join(out) + "\n"


def _read_solution(text: str) -> tuple[str, dict[str, dict[int, float]]]:
    """CBC's solution file: its status line, then ``index name value reduced-cost`` lines."""
    lines = text.splitlines()
    status = lines[0].strip() if lines else ""
    values: dict[str, dict[int, float]] = {"x": {}, "s": {}}
    for line in lines[1:]:
        parts = line.split()
        if parts and parts[0] == "**":  # CBC marks an infeasible value
            parts = parts[1:]
        if len(parts) >= 3 and parts[1][:1] in values:
            values[parts[1][0]][int(parts[1][1:])] = float(parts[2])
    return status, values


def feasible(
    rows: Sequence[Row],
    free: Sequence[int],
    width: int,
    groups: Sequence[range],
    chosen: Sequence[bool],
    held: Sequence[tuple[int, ...]],
) -> bool:
    """Whether CBC's values satisfy the model (checked here, not trusted from its status)."""
    flat = {i * width + k for i, terms in enumerate(held) for k in terms}
    for i, r in enumerate(rows):
        inside = sum(1 for k in held[i] if k < max(r.window, 0))
        if inside != (r.need if chosen[i] else 0):
            return False
        if r.window < width and any(f in flat for f in outside(i, r.window, width, len(rows))):
            return False
    if any(sum(chosen[i] for i in group) != 1 for group in groups):
        return False
    load = [0] * width
    for i, r in enumerate(rows):
        for k in held[i]:
            load[k] += r.gpus
    return all(load[k] <= free[k] for k in range(width))
