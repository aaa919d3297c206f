"""The frontier DP: the exact reclaim optimum by dynamic programming along a server order.

The lexicographic cost ``preempted * big + collateral`` (Aryl §4) is a sum
over jobs, and a job only sees the servers it runs on. Process the servers
of one connected component of the server-job graph in a fixed order,
deciding return / keep for each: the only thing the past passes to the
future is, for every job that has servers on both sides of the cut (the
*frontier*), how many workers it has lost so far, or that it is already
preempted, or that it can no longer be. States with the same frontier
and the same number of returned servers are interchangeable, so the DP
keeps one cost per (frontier state, r) and is exact. Each component yields
its whole cost curve (the optimum for every r), and the min-plus budget DP
of ``aryl-dp`` splits N_R among components, again exactly.

This is dynamic programming over a path decomposition of the server-job
hypergraph: O(sum over positions of states * N_R), with at most
prod (min(slack_j, loan_j) + 2) states over the jobs of a frontier, so
exponential in the frontier's width and polynomial when it is bounded. On
placements with locality (a best-fit placer fills neighbouring servers:
the generator's chains, Figure 5) the frontier stays narrow: at 500 on-loan
servers and 1,000 jobs the largest layer holds 36-120 states. When the
frontier estimate is hopeless, or the DP exceeds its state or cell budget,
it gives up (``None``) and the caller falls back (``exact``: the MILP;
``auto``: ``aryl-dp``).
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from scheduling_opt.reclaim.aryl_dp import components, split_budget
from scheduling_opt.reclaim.model import ReclaimInput

#: Default budgets of one call, over all layers: frontier states (the Python
#: work, about 5-10 us each) and (state, r) cells (the memory, 8 bytes each).
MAX_STATES = 60_000
MAX_CELLS = 6_000_000

#: Give up before starting when the orders' estimated states (an upper bound:
#: 4-15x the states the generator's instances reach, 55x on one) exceed this
#: many times the state budget: random spans estimate 1e8 at 40 servers.
HOPELESS = 100

#: Job states besides "lost l workers so far" (l = 0..slack).
SAFE = -1  # lost + workers still to decide <= slack: no choice preempts it any more
PREEMPTED = -2

_INF = np.iinfo(np.int64).max // 4

Int2D = NDArray[np.int64]


Transition = tuple[tuple[int, int, int], ...]


# Not frozen: one of each per server and call, and a frozen dataclass's
# __init__ costs 4x a plain one's (2.4 against 0.6 us).
@dataclass(slots=True)
class _Step:
    """One position of the order: its server, and what returning or keeping it does.

    ``columns`` pairs each frontier column of a job on the server with its
    transition table: ``table[state + 2]`` = (state if kept, state if
    returned, cost added if returned), state in PREEMPTED, SAFE, 0..slack.
    ``new`` columns (jobs first seen here) are appended as state 0 first;
    ``keep`` lists the columns that stay after the step (None: all).
    """

    server: int
    new: int
    columns: tuple[tuple[int, Transition], ...]
    keep: tuple[int, ...] | None


@dataclass(slots=True)
class _Layer:
    """Costs per (state, r) before one step, and the state each step's choice leads to.

    ``kept[row]`` / ``returned[row]``: the next layer's state reached from
    ``row`` by keeping / returning the step's server, ``added[row]`` the
    cost of returning it.
    """

    values: Int2D
    kept: NDArray[np.intp]
    returned: NDArray[np.intp]
    added: NDArray[np.int64]


@dataclass(slots=True)
class Budget:
    """What the DP may still spend: states, cells, and a ``perf_counter`` deadline."""

    states: int
    cells: int
    deadline: float = math.inf

    def spend(self, states: int, width: int) -> bool:
        """Charge one layer of ``states`` rows of ``width + 1`` cells; False once overspent."""
        self.states -= states
        self.cells -= states * (width + 1)
        return self.states >= 0 and self.cells >= 0


def _table(inp: ReclaimInput, j: int, w: int, rest: int) -> Transition:
    """Job ``j``'s transitions at a server holding ``w`` of its workers, ``rest`` on later ones.

    A preempted job gives back ``gpw * w`` collateral GPUs per returned
    server (its cost is big + gpus - gpw * lost); a job that can no longer
    lose more than its slack is SAFE (all such states are equivalent).
    """
    slack, gpw = inp.slack[j], inp.gpw[j]
    rows = [(PREEMPTED, PREEMPTED, -gpw * w), (SAFE, SAFE, 0)]
    fixed = inp.big + inp.gpus[j]
    for lost in range(slack + 1):
        kept = SAFE if lost + rest <= slack else lost
        now = lost + w
        if now > slack:
            rows.append((kept, PREEMPTED, fixed - gpw * now))
        else:
            rows.append((kept, SAFE if now + rest <= slack else now, 0))
    return tuple(rows)


def _width(inp: ReclaimInput, order: list[int], live: list[bool]) -> float:
    """Upper estimate of the DP's work along ``order``: the sum over cuts of 2**log2(states)."""
    pos = {s: i for i, s in enumerate(order)}
    delta = [0.0] * (len(order) + 1)
    seen: dict[int, list[int]] = {}
    for s in order:
        for j, _ in inp.server_jobs[s]:
            if live[j]:
                seen.setdefault(j, []).append(pos[s])
    for j, where in seen.items():
        weight = math.log2(min(inp.slack[j], inp.loan_workers[j]) + 2)
        delta[min(where)] += weight
        delta[max(where)] -= weight
    total, level = 0.0, 0.0
    for i in range(len(order)):
        level += delta[i]
        # 2.0 ** 1024 overflows a float; any level near it is hopeless anyway.
        total += 2.0 ** min(level, 1000.0)
    return total


def _greedy_order(inp: ReclaimInput, members: list[int], live: list[bool], start: int) -> list[int]:
    """Grow the order from ``start``: next, the frontier server adding the least state weight."""
    inside = set(members)
    jobs_of = {s: [j for j, _ in inp.server_jobs[s] if live[j]] for s in members}
    left: dict[int, int] = {}
    for s in members:
        for j in jobs_of[s]:
            left[j] = left.get(j, 0) + 1
    weight = {j: math.log2(min(inp.slack[j], inp.loan_workers[j]) + 2) for j in left}
    active: set[int] = set()
    done: set[int] = set()
    order: list[int] = []
    candidates = {start}
    while len(order) < len(members):
        if not candidates:
            candidates = {next(s for s in members if s not in done)}
        best: tuple[float, int] | None = None
        for s in candidates:
            grow = 0.0
            for j in jobs_of[s]:
                if j in active:
                    grow -= weight[j] if left[j] == 1 else 0.0
                elif left[j] > 1:
                    grow += weight[j]
            if best is None or (grow, s) < best:
                best = (grow, s)
        assert best is not None
        s = best[1]
        order.append(s)
        done.add(s)
        candidates.discard(s)
        for j in jobs_of[s]:
            left[j] -= 1
            if left[j] == 0:
                active.discard(j)
                continue
            active.add(j)
            candidates.update(t for t, _ in inp.job_servers[j] if t in inside and t not in done)
    return order


def server_order(inp: ReclaimInput, members: list[int], live: list[bool]) -> list[int]:
    """An order of one component's servers with a narrow frontier (a heuristic; any order is exact).

    Candidates: the file order started after its largest index gap (placers
    fill neighbouring servers, possibly wrapping around), and, when that
    order's frontier is wide, greedy orders grown from the first server and
    from a least-loaded one; the smallest :func:`_width` wins (ties: the
    earlier candidate). O(P) per candidate for P placement rows, plus
    O(n * frontier) for a greedy one.

    Parameters
    ----------
    inp : ReclaimInput
        The reclaim problem.
    members : list of int
        The component's server indices, sorted.
    live : list of bool
        Per job: whether some choice preempts it (other jobs cost nothing).

    Returns
    -------
    list of int
        The members in processing order.

    Examples
    --------
    Job a wraps around the server list (i4, i1), job b links i1 and i2; i3
    is another component. The largest gap is i2 -> i4, so the order starts
    at i4 and every job's servers are adjacent in it:

    >>> from scheduling_opt.model import Cluster, GpuType, Job, Placement, PlacementRow, Server
    >>> servers = tuple(Server(f"i{k}", "T4", 8, "inference", True) for k in (1, 2, 3, 4))
    >>> rows = (PlacementRow("a", "i4", 1), PlacementRow("a", "i1", 1))
    >>> rows += (PlacementRow("b", "i1", 1), PlacementRow("b", "i2", 1))
    >>> jobs = (Job("a", 2, 2, 1.0), Job("b", 2, 2, 1.0))
    >>> inp = ReclaimInput(Cluster((GpuType("T4"),), servers), jobs, Placement(rows), 1)
    >>> server_order(inp, [0, 1, 3], [True, True])
    [3, 0, 1]

    References
    ----------
    Aryl (Li et al., EuroSys '22), §4 (the objective is a sum over jobs).
    """
    return _order_and_width(inp, members, live)[0]


def _order_and_width(
    inp: ReclaimInput, members: list[int], live: list[bool], hopeless: float = math.inf
) -> tuple[list[int], float]:
    """:func:`server_order` and its :func:`_width` estimate.

    The greedy orders (O(n^2) on a wide component) are not tried when the
    file order's estimate exceeds ``hopeless``: they cut the estimate by
    at most 60x on the generator's instances, not by 10,000x.
    """
    n = inp.n_servers
    gaps = [(members[(i + 1) % len(members)] - members[i]) % n for i in range(len(members))]
    cut = max(range(len(members)), key=lambda i: (gaps[i], -i))
    candidates = [members[cut + 1 :] + members[: cut + 1]]
    first = _width(inp, candidates[0], live)
    if first <= 64.0 * len(members) or first > 1e4 * hopeless:
        return candidates[0], first
    least = min(members, key=lambda s: (len(inp.server_jobs[s]), s))
    for start in dict.fromkeys((members[0], least)):
        candidates.append(_greedy_order(inp, members, live, start))
    widths = [first] + [_width(inp, order, live) for order in candidates[1:]]
    best = min(range(len(candidates)), key=lambda i: (widths[i], i))
    return candidates[best], widths[best]


def _steps(inp: ReclaimInput, order: list[int], live: list[bool]) -> list[_Step]:
    """The per-position frontier columns and transition tables of the DP along ``order``."""
    last: dict[int, int] = {}
    rest: dict[int, int] = {}
    for i, s in enumerate(order):
        for j, w in inp.server_jobs[s]:
            if live[j]:
                last[j] = i
                rest[j] = rest.get(j, 0) + w
    frontier: list[int] = []
    column: dict[int, int] = {}
    steps: list[_Step] = []
    memo: dict[tuple[int, int, int, int, int], Transition] = {}
    slack, gpw, gpus = inp.slack, inp.gpw, inp.gpus
    for i, s in enumerate(order):
        mine = [(j, w) for j, w in inp.server_jobs[s] if live[j]]
        new = [j for j, _ in mine if j not in column]
        for j in new:
            column[j] = len(frontier)
            frontier.append(j)
        tables = []
        for j, w in mine:
            rest[j] -= w
            # Tables depend on (slack, gpw, gpus, w, rest) only: many repeat.
            shape = (slack[j], gpw[j], gpus[j], w, rest[j])
            table = memo.get(shape)
            if table is None:
                table = memo[shape] = _table(inp, j, w, rest[j])
            tables.append((column[j], table))
        keep = None
        if any(last[j] == i for j, _ in mine):
            frontier = [j for j in frontier if last[j] != i]
            keep = tuple(column[j] for j in frontier)
            column = {j: k for k, j in enumerate(frontier)}
        steps.append(_Step(s, len(new), tuple(tables), keep))
    return steps


def _advance(steps: list[_Step], width: int, budget: Budget) -> tuple[list[_Layer], Int2D] | None:
    """Run the DP over ``steps`` with r = 0..``width``; None when ``budget`` runs out.

    Returns the layers (for the trace back) and the final costs (one state:
    the frontier is empty after the last server).
    """
    values: Int2D = np.full((1, width + 1), _INF, dtype=np.int64)
    values[0, 0] = 0
    keys: list[tuple[int, ...]] = [()]
    layers: list[_Layer] = []
    for step in steps:
        if time.perf_counter() > budget.deadline:
            return None
        pad = (0,) * step.new
        index: dict[tuple[int, ...], int] = {}
        to0: list[int] = []
        to1: list[int] = []
        added: list[int] = []
        keep, columns = step.keep, step.columns
        for key in keys:
            if pad:
                key += pad
            k0 = list(key)
            k1 = list(key)
            d = 0
            for c, table in columns:
                s0, s1, cost = table[key[c] + 2]
                k0[c] = s0
                k1[c] = s1
                d += cost
            if keep is None:
                c0, c1 = tuple(k0), tuple(k1)
            else:
                c0 = tuple([k0[c] for c in keep])
                c1 = tuple([k1[c] for c in keep])
            to0.append(index.setdefault(c0, len(index)))
            to1.append(index.setdefault(c1, len(index)))
            added.append(d)
        if not budget.spend(len(index), width):
            return None
        layer = _Layer(
            values, np.array(to0, np.intp), np.array(to1, np.intp), np.array(added, np.int64)
        )
        shifted = values[:, :-1] + layer.added[:, None]
        if len(index) == 2 * len(keys):
            # Every state has one parent: plain scatters, no minimum.
            new_values: Int2D = np.empty((len(index), width + 1), dtype=np.int64)
            new_values[layer.kept] = values
            new_values[layer.returned, 0] = _INF
            new_values[layer.returned, 1:] = shifted
        else:
            new_values = np.full((len(index), width + 1), _INF, dtype=np.int64)
            np.minimum.at(new_values, layer.kept, values)
            np.minimum.at(new_values[:, 1:], layer.returned, shifted)
        layers.append(layer)
        values = new_values
        keys = list(index)
    return layers, values


def _trace(steps: list[_Step], layers: list[_Layer], final: Int2D, r: int) -> list[int]:
    """The servers returned on an optimal path to the final state with ``r`` returns.

    Walks back from the last layer: at each step, the first parent (keeping
    before returning, lowest row first) whose cost leads to the child's.
    """
    if r == 0:
        return []
    if r == len(steps):  # the whole component: nothing to choose
        return [step.server for step in steps]
    g, target = 0, int(final[0, r])
    chosen: list[int] = []
    for i in range(len(steps) - 1, -1, -1):
        layer = layers[i]
        before = layer.values
        rows = np.flatnonzero(layer.kept == g)
        hit = rows[before[rows, r] == target]
        if len(hit):
            g = int(hit[0])
            continue
        # r = 0 is only reached by keeping (returning shifts r up by one).
        rows = np.flatnonzero(layer.returned == g) if r > 0 else rows[:0]
        hit = rows[before[rows, r - 1] + layer.added[rows] == target]
        if not len(hit):  # pragma: no cover - the forward pass recorded every parent
            raise AssertionError("frontier DP: no parent reaches the traced cost")
        g = int(hit[0])
        target -= int(layer.added[g])
        r -= 1
        chosen.append(steps[i].server)
    return chosen


@dataclass(frozen=True, slots=True)
class FrontierResult:
    """An optimal choice of servers (sorted), its cost, and the DP's size."""

    chosen: list[int]
    cost: int
    states: int
    cells: int
    largest_layer: int


def frontier_dp(
    inp: ReclaimInput,
    *,
    max_states: int = MAX_STATES,
    max_cells: int = MAX_CELLS,
    deadline: float = math.inf,
) -> FrontierResult | None:
    """The optimal N_R servers by the frontier DP, or None if it would exceed its budget.

    Splits the on-loan servers into the components of the server-job graph,
    runs the DP along :func:`server_order` inside each one for its exact
    cost curve (r = 0 .. min(size, N_R)), pools the servers no choice can
    hurt into one zero curve, splits N_R among the curves by the min-plus
    DP (:func:`~scheduling_opt.reclaim.aryl_dp.split_budget`), and traces
    each component's optimal r back. Deterministic (first minimum on ties).
    Gives up before any DP work when the orders' estimated states exceed
    ``HOPELESS * max_states`` (wide frontiers: the caller's fallback is
    faster there).

    Parameters
    ----------
    inp : ReclaimInput
        The reclaim problem.
    max_states : int
        Budget of frontier states over all layers (the Python work: about
        5-10 us each); past it the DP gives up.
    max_cells : int
        Budget of (state, r) cells over all layers (the memory: 8 bytes
        each); past it the DP gives up.
    deadline : float
        ``time.perf_counter()`` value past which the DP gives up.

    Returns
    -------
    FrontierResult or None
        The sorted server indices and their cost ``preempted * big +
        collateral`` (proven minimal), or None when the budget or the
        deadline ran out (nothing is proven then).

    Examples
    --------
    Job a (inelastic) on i1 and i2, job b (slack 1) on i2 and i3: returning
    i3 alone only scales b in.

    >>> from scheduling_opt.model import Cluster, GpuType, Job, Placement, PlacementRow, Server
    >>> servers = tuple(Server(f"i{k}", "T4", 8, "inference", True) for k in (1, 2, 3))
    >>> rows = (PlacementRow("a", "i1", 1), PlacementRow("a", "i2", 1))
    >>> rows += (PlacementRow("b", "i2", 1), PlacementRow("b", "i3", 1))
    >>> jobs = (Job("a", 2, 2, 1.0), Job("b", 1, 2, 1.0))
    >>> inp = ReclaimInput(Cluster((GpuType("T4"),), servers), jobs, Placement(rows), 1)
    >>> result = frontier_dp(inp)
    >>> result.chosen, result.cost
    ([2], 0)
    >>> frontier_dp(inp, max_states=1) is None
    True

    References
    ----------
    Aryl (Li et al., EuroSys '22), §4 (the problem; §7.3 finds the optimum by
    exhaustive search). Dynamic programming over a path decomposition:
    Bodlaender, "A tourist guide through treewidth", Acta Cybernetica 11, 1993.
    """
    n_r = inp.n_reclaim
    live = [inp.can_preempt(j) for j in range(inp.n_jobs)]
    free: list[int] = []
    curves: list[list[int]] = []
    traces: list[tuple[list[_Step], list[_Layer], Int2D]] = []
    budget = Budget(max_states, max_cells, deadline)
    largest = 1
    orders: list[list[int]] = []
    estimate = 0.0
    for members in components(inp):
        if not any(live[j] for s in members for j, _ in inp.server_jobs[s]):
            free.extend(members)
            continue
        order, work = _order_and_width(inp, members, live, HOPELESS * max_states)
        orders.append(order)
        estimate += work
    if estimate > HOPELESS * max_states:
        return None
    for order in orders:
        steps = _steps(inp, order, live)
        width = min(len(order), n_r)
        run = _advance(steps, width, budget)
        if run is None:
            return None
        layers, final = run
        largest = max(largest, max(len(layer.values) for layer in layers))
        curves.append([int(v) for v in final[0]])
        traces.append((steps, layers, final))
    free.sort()
    curves.append([0] * (min(len(free), n_r) + 1))
    take = split_budget(curves, n_r)
    chosen = free[: take[-1]]
    for (steps, layers, final), r in zip(traces, take, strict=False):
        chosen.extend(_trace(steps, layers, final, r))
    cost = sum(curve[r] for curve, r in zip(curves, take, strict=True))
    states, cells = max_states - budget.states, max_cells - budget.cells
    return FrontierResult(sorted(chosen), cost, states, cells, largest)
