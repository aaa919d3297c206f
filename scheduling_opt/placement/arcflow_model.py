"""The arc-flow model of placement on identical servers and jobs, and its LP bound.

Servers with the same GPU type and free GPUs form a class, and so do jobs
with the same workers, GPUs per worker, eligible servers and reward table
(:func:`classes_of`). The model (:func:`build_model`, solved by HiGHS in
:func:`solve_model`): per server class an arc flow on the nodes ``0..f``
(an arc ``u -> u + g``: a piece of ``g`` GPUs on one server; a path from 0:
one server's pieces, in non-increasing size; at most ``m_c`` paths), pieces
``p[J, w, c]`` of ``w`` workers of job class ``J`` on server class ``c``
tied to the arcs of their size, and per job class the number of jobs split
as each partition of its workers (:func:`partitions`; the span is the
number of parts, the reward ``RW_J(span)``, Chronus §3.4.2, Eq. 7). Every
placement is a solution of equal reward, so the model's optimum, HiGHS'
bound and the LP relaxation (:func:`lp_bound`, the Gilmore-Gomory bound)
bound the true optimum. :mod:`~scheduling_opt.placement.arcflow` solves it
and maps the counts back to servers.

Size: O(C f^2 + J_c W C + P) variables for C server classes of at most f
free GPUs, J_c job classes, W piece sizes and P partitions; the model is
refused (None) past :data:`MAX_PARTITIONS` or :data:`MAX_ARCS`.
"""

from __future__ import annotations

import math
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

import numpy as np
from scipy.optimize import Bounds, LinearConstraint
from scipy.sparse import coo_array

from scheduling_opt import exact as backends
from scheduling_opt.placement.bounds import upper_bound
from scheduling_opt.placement.model import PlacementInput
from scheduling_opt.solution import Status, time_limit_of

#: Partitions (job splits) the model may hold before falling back to CP-SAT.
MAX_PARTITIONS = 20_000
#: Arcs per server class the model may hold (servers of very many free GPUs).
MAX_ARCS = 100_000


@dataclass(frozen=True, slots=True)
class Classes:
    """Identical servers and identical jobs, grouped.

    ``servers[c]``: ``(free GPUs, server indices)`` of class ``c`` (free > 0);
    ``jobs[J]``: the job indices of class ``J`` (file order), only jobs that
    can be placed; ``eligible[J]``: the server classes job class ``J`` may use;
    ``pieces[J]``: its piece sizes in workers (``1..wmax``).
    """

    servers: tuple[tuple[int, tuple[int, ...]], ...]
    jobs: tuple[tuple[int, ...], ...]
    eligible: tuple[tuple[int, ...], ...]
    pieces: tuple[int, ...]


def classes_of(inp: PlacementInput) -> Classes:
    """Group identical servers (type, free GPUs) and identical jobs, in O(J S)."""
    by_server: dict[tuple[int, int], list[int]] = {}
    for s in range(inp.n_servers):
        if inp.free[s] > 0:
            by_server.setdefault((inp.server_type[s], inp.free[s]), []).append(s)
    keys = sorted(by_server)
    servers = tuple((f, tuple(by_server[(t, f)])) for t, f in keys)
    class_of = {s: c for c, (_, members) in enumerate(servers) for s in members}
    by_job: dict[tuple[object, ...], list[int]] = {}
    for j in range(inp.n_jobs):
        key = (inp.job_workers[j], inp.gpw[j], inp.eligible[j], inp.rw[j])
        by_job.setdefault(key, []).append(j)
    jobs, eligible, pieces = [], [], []
    for members in by_job.values():
        j = members[0]
        gpw = inp.gpw[j]
        cls = sorted({class_of[s] for s in inp.eligible[j] if s in class_of})
        cls = [c for c in cls if servers[c][0] >= gpw]
        wmax = min(inp.job_workers[j], max((servers[c][0] // gpw for c in cls), default=0))
        if not wmax or not any(inp.rw[j][k] > 0 for k in inp.spans(j)):
            continue
        jobs.append(tuple(members))
        eligible.append(tuple(cls))
        pieces.append(wmax)
    return Classes(servers, tuple(jobs), tuple(eligible), tuple(pieces))


def partitions(n: int, largest: int, parts: int) -> Iterator[tuple[int, ...]]:
    """Partitions of ``n`` into at most ``parts`` parts of at most ``largest``, non-increasing.

    Examples
    --------
    >>> list(partitions(4, 2, 3))
    [(2, 2), (2, 1, 1)]
    """
    if n == 0:
        yield ()
        return
    if parts == 0 or largest * parts < n:
        return
    for first in range(min(n, largest), 0, -1):
        for rest in partitions(n - first, first, parts - 1):
            yield (first, *rest)


@dataclass
class Model:
    """Columns and rows of the MILP, built incrementally (COO triplets)."""

    cost: list[float]
    upper: list[float]
    rows: list[int]
    cols: list[int]
    vals: list[float]
    lo: list[float]
    hi: list[float]

    def var(self, cost: float, upper: float) -> int:
        self.cost.append(cost)
        self.upper.append(upper)
        return len(self.cost) - 1

    def row(self, terms: Sequence[tuple[int, float]], lo: float, hi: float) -> None:
        r = len(self.lo)
        for col, val in terms:
            self.rows.append(r)
            self.cols.append(col)
            self.vals.append(val)
        self.lo.append(lo)
        self.hi.append(hi)


@dataclass(frozen=True, slots=True)
class Columns:
    """Where each variable of the model sits."""

    arcs: dict[tuple[int, int, int], int]  # (class, size g, start u) -> column
    pieces: dict[tuple[int, int, int], int]  # (job class, workers, server class) -> column
    splits: dict[tuple[int, tuple[int, ...]], int]  # (job class, partition) -> column


def build_model(inp: PlacementInput, cl: Classes) -> tuple[Model, Columns] | None:
    """The arc-flow MILP, or None past :data:`MAX_PARTITIONS` or :data:`MAX_ARCS`."""
    mdl = Model([], [], [], [], [], [], [])
    splits: dict[tuple[int, tuple[int, ...]], int] = {}
    piece_cols: dict[tuple[int, int, int], int] = {}
    total = 0
    for jc, members in enumerate(cl.jobs):
        j = members[0]
        rooms = sum(len(cl.servers[c][1]) for c in cl.eligible[jc])
        kmax = min(inp.max_span(j), rooms)
        for pi in partitions(inp.job_workers[j], cl.pieces[jc], kmax):
            if len(pi) < inp.k_star[j] or inp.rw[j][len(pi)] <= 0:
                continue
            total += 1
            if total > MAX_PARTITIONS:
                return None
            splits[jc, pi] = mdl.var(inp.rw[j][len(pi)], len(members))
        for w in range(1, cl.pieces[jc] + 1):
            for c in cl.eligible[jc]:
                f, servers = cl.servers[c]
                if w * inp.gpw[j] <= f:
                    piece_cols[jc, w, c] = mdl.var(0.0, len(servers) * (f // (w * inp.gpw[j])))
    by_slot: dict[tuple[int, int], list[int]] = {}  # (server class, GPUs) -> piece columns
    by_part: dict[tuple[int, int], list[int]] = {}  # (job class, workers) -> piece columns
    for (jc, w, c), col in piece_cols.items():
        by_slot.setdefault((c, w * inp.gpw[cl.jobs[jc][0]]), []).append(col)
        by_part.setdefault((jc, w), []).append(col)
    sizes: dict[int, list[int]] = {}
    for c, g in sorted(by_slot):
        sizes.setdefault(c, []).append(g)
    arcs: dict[tuple[int, int, int], int] = {}
    for c, gs in sizes.items():
        f, servers = cl.servers[c]
        if len(gs) * f > MAX_ARCS:
            return None
        # A server's pieces in non-increasing size order: an arc of g GPUs
        # starts only where pieces of g or more end (fewer arcs, no reorderings).
        reach = {0}
        for g in sorted(gs, reverse=True):
            todo = sorted(reach)
            for u in todo:
                v = u + g
                while v <= f and v not in reach:
                    reach.add(v)
                    v += g
            for u in sorted(reach):
                if u + g <= f:
                    arcs[c, g, u] = mdl.var(0.0, len(servers))
        # Flow from node 0, at most one path per server; a path may stop anywhere.
        mdl.row([(arcs[c, g, 0], 1.0) for g in gs], 0.0, len(servers))
        for u in range(1, f):
            out = [(arcs[c, g, u], 1.0) for g in gs if (c, g, u) in arcs]
            into = [(arcs[c, g, u - g], -1.0) for g in gs if (c, g, u - g) in arcs]
            if out:
                mdl.row(out + into, -math.inf, 0.0)
        for g in gs:
            use = [(col, 1.0) for col in by_slot[c, g]]
            arc = [(col, -1.0) for (cc, gg, _), col in arcs.items() if cc == c and gg == g]
            mdl.row(use + arc, 0.0, 0.0)
    by_job: dict[int, list[tuple[tuple[int, ...], int]]] = {}
    for (jc, pi), col in splits.items():
        by_job.setdefault(jc, []).append((pi, col))
    for jc, members in enumerate(cl.jobs):
        mine = by_job.get(jc, [])
        if mine:
            mdl.row([(col, 1.0) for _, col in mine], 0.0, len(members))
        for w in range(1, cl.pieces[jc] + 1):
            placed = [(col, 1.0) for col in by_part.get((jc, w), [])]
            need = [(col, -float(pi.count(w))) for pi, col in mine if w in pi]
            mdl.row(placed + need, 0.0, 0.0)
    return mdl, Columns(arcs, piece_cols, splits)


def solve_model(
    mdl: Model, *, integral: bool, time_limit: float, started: float
) -> backends.MilpOutcome:
    n = len(mdl.cost)
    matrix = coo_array((mdl.vals, (mdl.rows, mdl.cols)), shape=(len(mdl.lo), n)).tocsr()
    return backends.solve_milp(
        np.asarray(mdl.cost),
        constraints=[LinearConstraint(matrix, np.asarray(mdl.lo), np.asarray(mdl.hi))],
        integrality=np.full(n, 1 if integral else 0, dtype=np.int_),
        bounds=Bounds(np.zeros(n), np.asarray(mdl.upper)),
        time_limit=time_limit,
        maximize=True,
        started=started,
    )


def lp_bound(inp: PlacementInput, *, time_limit: float | None = None) -> float:
    """The arc-flow model's LP relaxation: a proven upper bound on the total reward RW.

    Tighter than :func:`~scheduling_opt.placement.bounds.upper_bound` (it
    sees that pieces must pack into servers: the Gilmore-Gomory bound of
    bin packing) and costs one LP solve (tens of milliseconds on 120
    servers), so heuristics do not compute it themselves.

    Parameters
    ----------
    inp : PlacementInput
        The jobs to place and the free GPUs.
    time_limit : float, optional
        Seconds (default :data:`~scheduling_opt.solution.DEFAULT_TIME_LIMIT`).

    Returns
    -------
    float
        The LP optimum, at most the cheap bound (which is returned when the
        model is too large or the LP is not solved in time).

    Examples
    --------
    >>> from scheduling_opt.model import Cluster, GpuType, Job, Server
    >>> cluster = Cluster((GpuType("V100"),), (Server("n0", "V100", 8), Server("n1", "V100", 8)))
    >>> jobs = [Job("a", 6, 6, 60.0), Job("b", 6, 6, 60.0), Job("c", 6, 6, 60.0)]
    >>> inp = PlacementInput(cluster, jobs)
    >>> round(upper_bound(inp), 4), round(lp_bound(inp), 4)  # the optimum is 12: two 6s fit
    (16.0, 13.3333)

    References
    ----------
    Chronus §3.4.2 (Eq. 7); P. C. Gilmore and R. E. Gomory, "A linear
    programming approach to the cutting-stock problem", Operations Research
    9 (1961).
    """
    start = time.perf_counter()
    cheap = upper_bound(inp)
    cl = classes_of(inp)
    built = build_model(inp, cl) if cl.jobs else None
    if built is None:
        return cheap if cl.jobs else 0.0
    out = solve_model(built[0], integral=False, time_limit=time_limit_of(time_limit), started=start)
    if out.status is not Status.OPTIMAL or out.objective is None:
        return cheap
    return min(out.objective, cheap)
