"""Exact placement on identical servers and jobs aggregated (arc-flow MILP, method ``exact``).

Servers with the same GPU type and the same free GPUs are interchangeable,
and so are jobs with the same workers, GPUs per worker, eligible servers and
reward table; the per-server model (:mod:`~scheduling_opt.placement.exact_cpsat`)
spends its time permuting them. This model counts instead (HiGHS):

- per server class ``c`` (``m_c`` servers of ``f`` free GPUs), an arc flow
  (Valério de Carvalho 1999) on the nodes ``0..f``: an arc ``u -> u + g``
  is a piece of ``g`` GPUs on one server, a path from 0 one server's pieces;
  at most ``m_c`` paths. Any flow splits into at most ``m_c`` paths, so this
  is bin packing, exactly, with a strong LP (Gilmore-Gomory) bound;
- ``p[J, w, c]``: pieces of ``w`` workers of job class ``J`` on class ``c``
  (each uses an arc of ``w * gpw_J`` GPUs);
- ``z[J, pi]``: jobs of class ``J`` split as the partition ``pi`` of their
  workers (one part per server, ``len(pi)`` = the span; at most ``m_J``
  jobs), earning ``RW_J(len(pi))`` (Chronus §3.4.2, Eq. 7); the parts of
  the chosen partitions are exactly the pieces placed.

Every placement maps onto a solution of equal reward, so the model's optimum
(and HiGHS' bound) bounds the true optimum. Back from counts to servers:
each class's flow is split into paths, one per server, pieces go to the
slots of their size, and each job takes its parts, on distinct servers when
it can; two parts of a job on one server merge (span one less, which earns
at least as much when RW does not grow with the span, as in every log2 or
measured table). The placement's reward is recomputed exactly, and the answer
is ``optimal`` only when it reaches the proven bound (relative 1e-9).

Complexity: NP-hard; the model has ``O(C f^2 + J_c W C + P)`` variables for
``C`` server classes, ``J_c`` job classes, ``W`` piece sizes and ``P``
partitions, independent of the number of servers and jobs of each class.
When the partitions pass
:data:`~scheduling_opt.placement.arcflow_model.MAX_PARTITIONS` (jobs of very many
workers) or a class's arcs ``MAX_ARCS`` (servers of very many free GPUs),
:func:`exact` falls back to the per-server CP-SAT model. The model
itself is in :mod:`~scheduling_opt.placement.arcflow_model`.
"""

from __future__ import annotations

import time
from collections.abc import Sequence

import numpy as np

from scheduling_opt.placement.arcflow_model import (
    Classes,
    Columns,
    build_model,
    classes_of,
    solve_model,
)
from scheduling_opt.placement.bounds import upper_bound
from scheduling_opt.placement.improve import improve
from scheduling_opt.placement.local_search import SEARCH_WORK, search_assign
from scheduling_opt.placement.model import (
    Assignment,
    PlacementDecision,
    PlacementInput,
    decide,
)
from scheduling_opt.solution import Seed, Solution, Status, named, time_limit_of

#: Relative tolerance under which a placement's reward reaches the bound.
TOLERANCE = 1e-9


def _paths(cl: Classes, c: int, flow: dict[tuple[int, int], int]) -> list[list[int]]:
    """Split class ``c``'s arc flow ``{(g, u): count}`` into paths (one server each)."""
    f = cl.servers[c][0]
    out_of: dict[int, list[int]] = {}
    for (g, u), n in flow.items():
        out_of.setdefault(u, []).extend([g] * n)
    paths = []
    while out_of.get(0):
        u, path = 0, []
        while out_of.get(u):
            g = out_of[u].pop()
            path.append(g)
            u += g
        if u > f:  # unreachable: arcs end at f at the latest
            raise AssertionError("arc-flow path past the server's free GPUs")
        paths.append(path)
    return paths


def realize(
    inp: PlacementInput, cl: Classes, cols: Columns, x: np.ndarray
) -> list[Assignment | None]:
    """Servers for the counts ``x``: per job its ``(server, workers)`` pairs or None."""
    value = np.rint(x).astype(np.int64)
    slots: dict[tuple[int, int], list[int]] = {}  # (class, GPUs) -> servers with such a slot
    for c in range(len(cl.servers)):
        flow = {(g, u): int(value[col]) for (cc, g, u), col in cols.arcs.items() if cc == c}
        flow = {k: n for k, n in flow.items() if n > 0}
        for path, s in zip(_paths(cl, c, flow), cl.servers[c][1], strict=False):
            for g in path:
                slots.setdefault((c, g), []).append(s)
    pool: dict[tuple[int, int], list[int]] = {}  # (job class, workers) -> servers
    for (jc, w, c), col in sorted(cols.pieces.items()):
        g = w * inp.gpw[cl.jobs[jc][0]]
        for _ in range(int(value[col])):
            pool.setdefault((jc, w), []).append(slots[c, g].pop())
    assign: list[Assignment | None] = [None] * inp.n_jobs
    for jc, members in enumerate(cl.jobs):
        chosen = [pi for (k, pi), col in sorted(cols.splits.items()) if k == jc
                  for _ in range(int(value[col]))]  # fmt: skip
        for j, pi in zip(members, chosen, strict=False):
            on: dict[int, int] = {}
            for w in pi:
                servers = pool[jc, w]
                # Distinct servers keep the span; a repeat merges two parts.
                pick = next((i for i, s in enumerate(servers) if s not in on), 0)
                s = servers.pop(pick)
                on[s] = on.get(s, 0) + w
            assign[j] = tuple(sorted(on.items()))
    return assign


def _pick(
    inp: PlacementInput, candidates: Sequence[list[Assignment | None] | None]
) -> PlacementDecision:
    best = decide(inp, [None] * inp.n_jobs)
    for assign in candidates:
        if assign is not None:
            decision = decide(inp, assign)
            if decision.reward > best.reward:
                best = decision
    return best


@named("exact")
def exact(
    inp: PlacementInput,
    *,
    seed: Seed = None,
    time_limit: float | None = None,
    incumbent: Sequence[Assignment | None] | None = None,
    warm: bool = True,
) -> Solution[PlacementDecision]:
    """Solve placement exactly on aggregated servers and jobs (arc flow, HiGHS; method ``exact``).

    Parameters
    ----------
    inp : PlacementInput
        The jobs to place and the free GPUs.
    seed : int, numpy Generator or None
        Unused (HiGHS runs deterministically); passed to the CP-SAT fallback.
    time_limit : float, optional
        Seconds for the whole call (default
        :data:`~scheduling_opt.solution.DEFAULT_TIME_LIMIT`).
    incumbent : sequence of (Assignment or None), optional
        A known placement, returned if the model finds nothing better.
    warm : bool
        Run local search first (at most a tenth of the time limit) when no
        ``incumbent`` is given: its answer is the incumbent (returned when
        HiGHS stops with nothing better, and ``optimal`` when it reaches
        HiGHS' bound).

    Returns
    -------
    Solution[PlacementDecision]
        ``optimal`` when the placement's reward reaches the proven bound;
        else ``time_limit`` (HiGHS stopped) or ``feasible`` (the way back to
        servers lost reward) with HiGHS' bound (at most the cheap bound).

    Raises
    ------
    ValueError
        If ``time_limit`` is not a positive number.

    Examples
    --------
    >>> from scheduling_opt.model import Cluster, GpuType, Job, Server
    >>> cluster = Cluster((GpuType("V100"),), (Server("n0", "V100", 8), Server("n1", "V100", 8)))
    >>> jobs = [Job("a", 6, 6, 60.0), Job("b", 4, 4, 60.0), Job("c", 6, 6, 60.0)]
    >>> sol = exact(PlacementInput(cluster, jobs), time_limit=10)
    >>> sol.status.value, round(sol.objective, 4), sol.gap
    ('optimal', 14.6667, 0.0)

    References
    ----------
    Chronus §3.4.2 (Eq. 7); J. M. Valério de Carvalho, "Exact solution of
    bin-packing problems using column generation and branch-and-bound",
    Annals of Operations Research 86 (1999).
    """
    start = time.perf_counter()
    limit = time_limit_of(time_limit)
    cl = classes_of(inp)
    cheap = upper_bound(inp)
    given = None if incumbent is None else list(incumbent)
    if given is None and warm:
        # Only the incumbent: no early exit when it meets the cheap bound, so
        # this method never races local search on the easy instances.
        given, _ = search_assign(inp, deadline=start + limit / 10, work_limit=SEARCH_WORK)
        given = improve(inp, given, deadline=start + limit / 10)
    if not cl.jobs:
        decision = _pick(inp, [given])
        return Solution(Status.OPTIMAL, decision.reward, decision, bound=decision.reward,
                        seconds=time.perf_counter() - start)  # fmt: skip
    built = build_model(inp, cl)
    if built is None:
        from scheduling_opt.placement.exact_cpsat import exact_cpsat

        return exact_cpsat(inp, seed=seed, time_limit=limit)
    mdl, cols = built
    out = solve_model(mdl, integral=True, time_limit=limit, started=start)
    found, lost = None, ""
    if out.x is not None:
        try:
            found = realize(inp, cl, cols, out.x)
        except (KeyError, IndexError):  # counts off by HiGHS' tolerances: keep the incumbent
            lost = "; HiGHS' counts did not map back to servers"
    decision = _pick(inp, [found, given])
    # HiGHS' dual bound; an optimal run without one is proven to its objective.
    proven = out.bound if out.bound is not None else out.objective
    if out.status is not Status.OPTIMAL and out.bound is None:
        proven = None
    bound = cheap if proven is None else min(proven, cheap)
    bound = max(bound, decision.reward)
    reached = decision.reward >= bound - TOLERANCE * max(abs(bound), 1.0)
    if reached:
        status, message = Status.OPTIMAL, ""
    elif out.status is Status.OPTIMAL:
        status, message = Status.FEASIBLE, "the way back to servers lost reward (merged parts)"
    else:
        status, message = Status.TIME_LIMIT, "HiGHS stopped at the time limit"
    return Solution(
        status,
        decision.reward,
        decision,
        bound=bound,
        seconds=time.perf_counter() - start,
        message=(message + lost).lstrip("; "),
    )
