"""Aryl server reclaiming: which on-loan servers to give back to inference.

The inference cluster takes back N_R of the servers it lent to training; we
choose which N_R on-loan servers to return so that as few jobs as possible are
preempted (a job is preempted when the workers it keeps elsewhere fall below
its ``min_workers``), and among equal counts as few GPUs as possible are
vacated on the servers we keep (collateral damage). Paper: Aryl (EuroSys '22)
§4, §5.3 (flexible server group released first), §7.3 and Appendix B
(Algorithm 1); a knapsack with dependent item values, NP-hard.

Methods and complexity (n on-loan servers, P placement rows on them):

- ``aryl``: Algorithm 1 with a lazy-deletion heap, O((P * d + N_R) log n)
  where d is the largest job span; exhaustive O(P) when N_R = 1.
- ``aryl-plus`` (ours): aryl's answer and two tie-aware greedies, each
  improved by an exact-delta 1-1 swap local search, then seeded simulated
  annealing over swaps, O(n d^2) per swap pass and O(d) per annealing
  proposal (max(150 n, 30,000) proposals); never worse than ``aryl``.
- ``scf`` (smallest job count first) and ``random``: the paper's baselines,
  O(n log n) and O(n).
- ``exact`` (HiGHS, two-stage lexicographic MILP on a reduced model) and
  ``exact-pulp`` (an independent PuLP/CBC model): see
  :mod:`scheduling_opt.solvers.reclaim_exact`.

Objective: lexicographic (preempted jobs, collateral GPUs), encoded in one
integer ``count * BIG + collateral`` with ``BIG`` above any collateral.
"""

from __future__ import annotations

import heapq
import math
import random
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from scheduling_opt.errors import InvalidInstanceError, VerificationError
from scheduling_opt.instance import Instance
from scheduling_opt.jsonpath import check_keys, read_int
from scheduling_opt.model import Cluster, GpuType, Job, Placement, PlacementRow, Server
from scheduling_opt.result import Result, SolveOptions, Status, timed
from scheduling_opt.solvers import reclaim_exact as _exact
from scheduling_opt.solvers.registry import Method, Problem

# --------------------------------------------------------------------------- input


@dataclass(frozen=True, slots=True)
class ReclaimInput:
    """A parsed reclaim instance, as index arrays the solvers iterate over.

    Servers are the on-loan servers in file order (index ``s``); jobs are the
    jobs with at least one worker on an on-loan server (index ``j``): no
    other job can be touched. ``server_jobs[s]`` and ``job_servers[j]`` are
    the incidence lists ``((j, workers), ...)`` / ``((s, workers), ...)``.
    ``slack[j]`` = placed workers - ``min_workers``: the workers a job can
    lose and survive. ``gpus[j]`` = placed GPUs everywhere (training servers
    included), ``gpw[j]`` = GPUs per worker.
    """

    instance: Instance
    n_reclaim: int
    server_ids: tuple[str, ...]
    job_ids: tuple[str, ...]
    server_jobs: tuple[tuple[tuple[int, int], ...], ...]
    job_servers: tuple[tuple[tuple[int, int], ...], ...]
    slack: tuple[int, ...]
    loan_workers: tuple[int, ...]
    gpw: tuple[int, ...]
    gpus: tuple[int, ...]
    big: int
    neighbours: tuple[frozenset[int], ...] = field(repr=False)

    @property
    def n_servers(self) -> int:
        return len(self.server_ids)

    @property
    def n_jobs(self) -> int:
        return len(self.job_ids)

    def can_preempt(self, j: int) -> bool:
        """Whether returning every on-loan server of job ``j`` preempts it."""
        return self.loan_workers[j] > self.slack[j]

    def job_cost(self, j: int, lost: int) -> int:
        """Objective contribution of job ``j`` after losing ``lost`` workers."""
        if lost <= self.slack[j]:
            return 0
        return self.big + self.gpus[j] - self.gpw[j] * lost


def parse(instance: Instance) -> ReclaimInput:
    """Validate a reclaim instance and precompute the incidence arrays."""
    instance.require_no_other_sections()
    check_keys(instance.params, "params", ("servers_to_reclaim",), ("servers_to_reclaim",))
    cluster = instance.require_cluster()
    on_loan = cluster.on_loan_servers()
    n_reclaim = read_int(instance.params["servers_to_reclaim"], "params.servers_to_reclaim", 0)
    if n_reclaim > len(on_loan):
        raise InvalidInstanceError(
            "params.servers_to_reclaim",
            f"cannot reclaim {n_reclaim} servers: only {len(on_loan)} are on loan",
        )
    server_index = {s.id: i for i, s in enumerate(on_loan)}
    job_ids: list[str] = []
    job_servers: list[tuple[tuple[int, int], ...]] = []
    for job_id in instance.placement.jobs():
        rows = instance.placement.servers_of(job_id)
        loan = tuple((server_index[sid], w) for sid, w in rows.items() if sid in server_index)
        if loan:
            job_ids.append(job_id)
            job_servers.append(loan)
    server_jobs: list[list[tuple[int, int]]] = [[] for _ in on_loan]
    for j, incidences in enumerate(job_servers):
        for s, w in incidences:
            server_jobs[s].append((j, w))
    jobs = [instance.jobs_by_id[j] for j in job_ids]
    placed = [instance.placement.workers_of(j) for j in job_ids]
    gpus = tuple(n * job.gpus_per_worker for n, job in zip(placed, jobs, strict=True))
    neighbours = tuple(
        frozenset(t for j, _ in incidences for t, _ in job_servers[j]) - {s}
        for s, incidences in enumerate(server_jobs)
    )
    return ReclaimInput(
        instance=instance,
        n_reclaim=n_reclaim,
        server_ids=tuple(s.id for s in on_loan),
        job_ids=tuple(job_ids),
        server_jobs=tuple(tuple(x) for x in server_jobs),
        job_servers=tuple(job_servers),
        slack=tuple(n - job.min_workers for n, job in zip(placed, jobs, strict=True)),
        loan_workers=tuple(sum(w for _, w in inc) for inc in job_servers),
        gpw=tuple(job.gpus_per_worker for job in jobs),
        gpus=gpus,
        big=sum(gpus) + 1,
        neighbours=neighbours,
    )


def _as_input(source: Instance | ReclaimInput, n_reclaim: int | None = None) -> ReclaimInput:
    """The parsed input; ``n_reclaim`` overrides ``params.servers_to_reclaim``."""
    if isinstance(source, Instance):
        if n_reclaim is not None:
            params = dict(source.params) | {"servers_to_reclaim": n_reclaim}
            source = Instance(
                source.problem, source.cluster, source.jobs, source.placement, params, source.data
            )
        return parse(source)
    if n_reclaim is not None and n_reclaim != source.n_reclaim:
        return _as_input(source.instance, n_reclaim)
    return source


# --------------------------------------------------------------------------- result


@dataclass(frozen=True, slots=True)
class ReclaimResult:
    """The servers to return and what returning them does.

    ``scaled_in`` maps each surviving job that loses workers to how many;
    ``objective`` is the number of preempted jobs; ``collateral_gpus`` the
    GPUs the preempted jobs vacate on servers that are not returned.
    """

    status: Status
    objective: float | None
    seconds: float
    servers: tuple[str, ...]
    preempted_jobs: tuple[str, ...]
    scaled_in: tuple[tuple[str, int], ...]
    collateral_gpus: int
    method: str = ""

    def decision(self) -> dict[str, Any]:
        return {
            "servers": list(self.servers),
            "preempted_jobs": list(self.preempted_jobs),
            "scaled_in": dict(self.scaled_in),
            "objective": 0 if self.objective is None else int(self.objective),
            "collateral_gpus": self.collateral_gpus,
        }

    @property
    def key(self) -> tuple[int, int]:
        """The lexicographic objective (preempted jobs, collateral GPUs)."""
        return len(self.preempted_jobs), self.collateral_gpus


def lost_workers(inp: ReclaimInput, chosen: Sequence[int]) -> list[int]:
    """Workers each job loses when the servers ``chosen`` (indices) return."""
    lost = [0] * inp.n_jobs
    for s in chosen:
        for j, w in inp.server_jobs[s]:
            lost[j] += w
    return lost


def objective_key(inp: ReclaimInput, chosen: Sequence[int]) -> int:
    """``preempted * BIG + collateral`` of returning ``chosen``."""
    return sum(inp.job_cost(j, lost) for j, lost in enumerate(lost_workers(inp, chosen)))


def make_result(
    inp: ReclaimInput, chosen: Sequence[int], status: Status, seconds: float, method: str
) -> ReclaimResult:
    """The full result of returning the servers ``chosen`` (indices)."""
    lost = lost_workers(inp, chosen)
    preempted = [j for j in range(inp.n_jobs) if lost[j] > inp.slack[j]]
    scaled = [(inp.job_ids[j], lost[j]) for j in range(inp.n_jobs) if 0 < lost[j] <= inp.slack[j]]
    collateral = sum(inp.gpus[j] - inp.gpw[j] * lost[j] for j in preempted)
    return ReclaimResult(
        status=status,
        objective=float(len(preempted)),
        seconds=seconds,
        servers=tuple(inp.server_ids[s] for s in chosen),
        preempted_jobs=tuple(inp.job_ids[j] for j in preempted),
        scaled_in=tuple(scaled),
        collateral_gpus=collateral,
        method=method,
    )


# --------------------------------------------------------------------------- aryl


def _best_single(inp: ReclaimInput) -> list[int]:
    """N_R = 1: every server tried (Algorithm 1 line 19); ties to the first."""
    costs = [sum(inp.job_cost(j, w) for j, w in inp.server_jobs[s]) for s in range(inp.n_servers)]
    return [min(range(inp.n_servers), key=costs.__getitem__)]


class _Greedy:
    """Shared state of the greedy reclaimers: returned servers, lost workers.

    ``share[j]`` is job ``j``'s server fraction 1/|S_j| scaled by the lcm of
    all spans, so that costs are exact integers and ties are real ties
    (floats would split 1/3 + 1/3 + 1/3 from 1).
    """

    def __init__(self, inp: ReclaimInput) -> None:
        self.inp = inp
        spans = {len(inc) for inc in inp.job_servers}
        scale = math.lcm(*spans) if spans else 1
        self.share = [scale // len(inc) for inc in inp.job_servers]
        self.cost = [sum(self.share[j] for j, _ in inc) for inc in inp.server_jobs]
        self.lost = [0] * inp.n_jobs
        self.alive = [True] * inp.n_jobs
        self.returned = [False] * inp.n_servers
        self.order: list[int] = []

    def frees(self, s: int) -> bool:
        """Whether returning ``s`` now preempts nobody."""
        inp, lost = self.inp, self.lost
        return all(not self.alive[j] or lost[j] + w <= inp.slack[j] for j, w in inp.server_jobs[s])

    def delta(self, s: int) -> int:
        """Exact objective change (count * BIG + collateral) of returning ``s``."""
        inp, lost = self.inp, self.lost
        return sum(
            inp.job_cost(j, lost[j] + w) - inp.job_cost(j, lost[j]) for j, w in inp.server_jobs[s]
        )

    def drop(self, s: int) -> int:
        """Cost removed from other servers by the preemptions returning ``s`` causes."""
        inp, lost = self.inp, self.lost
        total = 0
        for j, w in inp.server_jobs[s]:
            if self.alive[j] and lost[j] + w > inp.slack[j]:
                total += self.share[j] * sum(
                    1 for t, _ in inp.job_servers[j] if not self.returned[t] and t != s
                )
        return total

    def take(self, s: int) -> set[int]:
        """Return ``s``; preempted jobs leave every server's cost (Algorithm 1, UpdateCost).

        Returns the servers whose greedy key may have changed.
        """
        inp = self.inp
        self.returned[s] = True
        self.order.append(s)
        touched: set[int] = set()
        for j, w in inp.server_jobs[s]:
            self.lost[j] += w
            if not self.alive[j]:
                continue
            touched.update(t for t, _ in inp.job_servers[j])
            if self.lost[j] > inp.slack[j]:
                self.alive[j] = False
                for t, _ in inp.job_servers[j]:
                    self.cost[t] -= self.share[j]
        touched.discard(s)
        return {t for t in touched if not self.returned[t]}


KeyFn = Callable[[_Greedy, int], tuple[int, ...]]


def _run_greedy(inp: ReclaimInput, key: KeyFn) -> list[int]:
    """Pick N_R servers by smallest ``key``, with a lazy-deletion heap.

    A server's key can only change when a job on it loses workers, i.e. when
    a neighbouring server is returned: only those keys are recomputed and
    pushed again; stale heap entries are skipped on pop.
    """
    state = _Greedy(inp)
    current = [key(state, s) for s in range(inp.n_servers)]
    heap = [(k, s) for s, k in enumerate(current)]
    heapq.heapify(heap)
    while len(state.order) < inp.n_reclaim:
        k, s = heapq.heappop(heap)
        if state.returned[s] or k != current[s]:
            continue
        for t in state.take(s):
            current[t] = key(state, t)
            heapq.heappush(heap, (current[t], t))
    return state.order


def _aryl_key(state: _Greedy, s: int) -> tuple[int, ...]:
    # Free servers first (Aryl releases the flexible-worker group before
    # anything else, §5.3), then Algorithm 1's cost, then file order.
    return (0 if state.frees(s) else 1, state.cost[s], s)


def aryl_order(inp: ReclaimInput) -> list[int]:
    """Server indices Algorithm 1 returns, in the order it picks them."""
    if inp.n_reclaim == 0:
        return []
    if inp.n_reclaim == 1:
        return _best_single(inp)
    return _run_greedy(inp, _aryl_key)


def reclaim_aryl(source: Instance | ReclaimInput, n_reclaim: int | None = None) -> ReclaimResult:
    """Aryl's Algorithm 1 (Appendix B) with the free-server phase of §5.3.

    N_R = 1: the best single server by exhaustive check. Otherwise servers
    whose return preempts nobody go first; then the smallest preemption cost
    (sum of 1/|S_j| over the jobs still running on it, S_j = the job's
    on-loan servers); preempted jobs leave every server's cost. Ties: the
    server listed first among the on-loan servers.
    """
    inp = _as_input(source, n_reclaim)
    chosen, seconds = timed(lambda: aryl_order(inp))
    return make_result(inp, chosen, Status.FEASIBLE, seconds, "aryl")


# --------------------------------------------------------------------------- baselines


def reclaim_scf(source: Instance | ReclaimInput, n_reclaim: int | None = None) -> ReclaimResult:
    """Smallest job count first (§7.3 baseline): fewest running jobs, then file order."""
    inp = _as_input(source, n_reclaim)

    def pick() -> list[int]:
        order = sorted(range(inp.n_servers), key=lambda s: (len(inp.server_jobs[s]), s))
        return order[: inp.n_reclaim]

    chosen, seconds = timed(pick)
    return make_result(inp, chosen, Status.FEASIBLE, seconds, "scf")


def reclaim_random(
    source: Instance | ReclaimInput, n_reclaim: int | None = None, *, seed: int = 0
) -> ReclaimResult:
    """N_R on-loan servers drawn uniformly without replacement (§7.3 baseline)."""
    inp = _as_input(source, n_reclaim)

    def pick() -> list[int]:
        rng = np.random.default_rng(seed)
        return sorted(int(s) for s in rng.choice(inp.n_servers, inp.n_reclaim, replace=False))

    chosen, seconds = timed(pick)
    return make_result(inp, chosen, Status.FEASIBLE, seconds, "random")


# --------------------------------------------------------------------------- aryl-plus


def _plus_key(state: _Greedy, s: int) -> tuple[int, ...]:
    # Algorithm 1's amortised cost stays the primary key; its ties are broken
    # by the true objective change of the pick, then by how much cost the
    # pick removes from the other servers (a preempted job makes its other
    # servers cheaper: prefer picks that open the most such free returns).
    return (state.cost[s], state.delta(s), -state.drop(s), s)


def _delta_key(state: _Greedy, s: int) -> tuple[int, ...]:
    # Myopic variant: the true objective change first, amortised cost second.
    return (state.delta(s), state.cost[s], -state.drop(s), s)


def _ls_delta(inp: ReclaimInput, lost: list[int], change: Mapping[int, int]) -> int:
    return sum(inp.job_cost(j, lost[j] + d) - inp.job_cost(j, lost[j]) for j, d in change.items())


def _move_change(inp: ReclaimInput, out: int, into: int) -> dict[int, int]:
    change: dict[int, int] = {}
    for j, w in inp.server_jobs[out]:
        change[j] = change.get(j, 0) - w
    for j, w in inp.server_jobs[into]:
        change[j] = change.get(j, 0) + w
    return change


def _best_swap(inp: ReclaimInput, chosen: set[int], lost: list[int]) -> tuple[int, int, int]:
    """The best (delta, returned server to keep, kept server to return) swap.

    Swaps of servers sharing no job split into two independent deltas, so
    the best of those needs only each side's delta; swaps of neighbours are
    evaluated exactly.
    """
    n = inp.n_servers
    single = [
        _ls_delta(inp, lost, {j: (-w if s in chosen else w) for j, w in inp.server_jobs[s]})
        for s in range(n)
    ]
    outside = sorted((s for s in range(n) if s not in chosen), key=lambda s: (single[s], s))
    best = (0, -1, -1)
    for r in sorted(chosen):
        near = inp.neighbours[r]
        for a in outside:
            if a not in near:
                best = min(best, (single[r] + single[a], r, a))
                break
        for a in near:
            if a not in chosen:
                best = min(best, (_ls_delta(inp, lost, _move_change(inp, r, a)), r, a))
    return best


def swap_search(inp: ReclaimInput, start: Sequence[int], max_moves: int | None = None) -> list[int]:
    """Best-improvement 1-1 swap local search from ``start``; never worse."""
    chosen = set(start)
    lost = lost_workers(inp, start)
    limit = 4 * inp.n_servers if max_moves is None else max_moves
    for _ in range(limit):
        delta, r, a = _best_swap(inp, chosen, lost)
        if delta >= 0:
            break
        for j, d in _move_change(inp, r, a).items():
            lost[j] += d
        chosen.remove(r)
        chosen.add(a)
    return sorted(chosen)


#: Annealing proposals per on-loan server in one run (100: 2.1% mean gap at
#: 500 servers, 150: 1.6%, 200: 1.2%, for 150, 220 and 310 ms; seeds 0-7).
ANNEAL_STEPS = 150
#: Annealing proposals per aryl-plus call at least (split into restarts).
ANNEAL_BUDGET = 30_000


class _Swapper:
    """A returned set with O(1) random picks on both sides and exact swap deltas."""

    def __init__(self, inp: ReclaimInput, chosen: Sequence[int]) -> None:
        self.inp = inp
        self.lost = lost_workers(inp, chosen)
        picked = set(chosen)
        self.side = [s in picked for s in range(inp.n_servers)]
        self.members: tuple[list[int], list[int]] = (
            [s for s in range(inp.n_servers) if not self.side[s]],
            sorted(chosen),
        )
        self.pos = [0] * inp.n_servers
        for group in self.members:
            for i, s in enumerate(group):
                self.pos[s] = i
        self.key = sum(inp.job_cost(j, x) for j, x in enumerate(self.lost))

    def delta(self, out: int, into: int) -> int:
        # The annealing hot loop: job_cost inlined over local names.
        inp, lost = self.inp, self.lost
        slack, gpus, gpw, big = inp.slack, inp.gpus, inp.gpw, inp.big
        change = {j: -w for j, w in inp.server_jobs[out]}
        for j, w in inp.server_jobs[into]:
            change[j] = change.get(j, 0) + w
        total = 0
        for j, d in change.items():
            before, after = lost[j], lost[j] + d
            if before > slack[j]:
                total -= big + gpus[j] - gpw[j] * before
            if after > slack[j]:
                total += big + gpus[j] - gpw[j] * after
        return total

    def _move(self, s: int, to: bool) -> None:
        group, other = self.members[self.side[s]], self.members[to]
        last = group.pop()
        if last != s:
            group[self.pos[s]] = last
            self.pos[last] = self.pos[s]
        self.pos[s] = len(other)
        other.append(s)
        self.side[s] = to

    def swap(self, out: int, into: int, delta: int) -> None:
        for j, d in _move_change(self.inp, out, into).items():
            self.lost[j] += d
        self._move(out, False)
        self._move(into, True)
        self.key += delta


def anneal(
    inp: ReclaimInput,
    start: Sequence[int],
    *,
    seed: int = 0,
    steps: int | None = None,
    t_hi: float = 0.5,
    t_lo: float = 0.05,
) -> list[int]:
    """Simulated annealing over 1-1 swaps; returns the best set visited.

    Greedy and swap search stop at plateaus: shifting a whole run of
    returned servers means a chain of swaps that each keep the count and
    cost some collateral. The temperature is in preempted jobs (BIG), from
    0.5 down to 0.05 (tuned on seeds 0-4 and checked on 10-17 at 60-500
    servers), so equal-count moves pass freely and +1 moves rarely late.
    ``steps`` defaults to ``ANNEAL_STEPS`` proposals per on-loan server.
    Half of the proposals return a neighbour of a returned server (runs
    grow), the other half a uniform outside server.
    """
    rnd = random.Random(seed).random
    state = _Swapper(inp, start)
    best_key, best = state.key, sorted(start)
    total = ANNEAL_STEPS * inp.n_servers if steps is None else steps
    outside, inside = state.members
    n_out, n_in = len(outside), len(inside)  # swaps keep both sizes
    if not n_out or not n_in:
        return best
    near_of = [sorted(near) for near in inp.neighbours]
    side = state.side
    for step in range(total):
        temp = inp.big * t_hi * (t_lo / t_hi) ** (step / total)
        out = inside[int(rnd() * n_in)]
        into = outside[int(rnd() * n_out)]
        if rnd() < 0.5:
            near = [t for t in near_of[inside[int(rnd() * n_in)]] if not side[t]]
            if near:
                into = near[int(rnd() * len(near))]
        delta = state.delta(out, into)
        if delta <= 0 or rnd() < math.exp(-delta / temp):
            state.swap(out, into, delta)
            if state.key < best_key:
                best_key, best = state.key, sorted(inside)
    return best


def aryl_plus_order(inp: ReclaimInput, *, seed: int = 0) -> list[int]:
    """Our heuristic's servers (see :func:`reclaim_aryl_plus`)."""
    if inp.n_reclaim in (0, 1) or inp.n_reclaim == inp.n_servers:
        return aryl_order(inp)
    starts = [aryl_order(inp), _run_greedy(inp, _plus_key), _run_greedy(inp, _delta_key)]
    improved = [swap_search(inp, start) for start in starts]
    # min() keeps the first of equal keys: aryl's own answer wins ties.
    best = min(improved, key=lambda chosen: objective_key(inp, chosen))
    # A fixed budget of proposals: small instances get several independent
    # runs (restarts beat one longer run there), large ones one run.
    runs = max(1, -(-ANNEAL_BUDGET // (ANNEAL_STEPS * inp.n_servers)))
    best_key = objective_key(inp, best)
    for run in range(runs):
        annealed = swap_search(inp, anneal(inp, best, seed=seed * 1_000 + run))
        key = objective_key(inp, annealed)
        if key < best_key:
            best, best_key = annealed, key
    return best


def reclaim_aryl_plus(
    source: Instance | ReclaimInput, n_reclaim: int | None = None, *, seed: int = 0
) -> ReclaimResult:
    """Ours: Algorithm 1 with real tie-breaking, swap local search, annealing.

    Three starts: Algorithm 1's answer; the same greedy with ties on the
    amortised cost broken by the true objective change, then by the cost
    drop the pick causes on other servers; and a greedy on the true change
    first. Each is improved by best-improvement 1-1 swaps under the
    lexicographic objective and the best kept (ties: aryl's); then seeded
    simulated annealing over swaps (:func:`anneal`) and a last swap search.
    Every phase only replaces the incumbent by a strictly better set, and
    the first incumbent is aryl's answer: never worse than ``aryl``.
    """
    inp = _as_input(source, n_reclaim)
    chosen, seconds = timed(lambda: aryl_plus_order(inp, seed=seed))
    return make_result(inp, chosen, Status.FEASIBLE, seconds, "aryl-plus")


# --------------------------------------------------------------------------- exact


def _incumbent(inp: ReclaimInput, out: _exact.ExactOutcome) -> list[int]:
    """An unproven run's answer: its incumbent or aryl's, whichever is better."""
    if out.status is Status.OPTIMAL and out.chosen is not None:
        return out.chosen
    fallback = aryl_order(inp)
    if out.chosen is None or objective_key(inp, fallback) < objective_key(inp, out.chosen):
        return fallback
    return out.chosen


def reclaim_exact(
    source: Instance | ReclaimInput,
    n_reclaim: int | None = None,
    *,
    time_limit: float = 60.0,
    config: _exact.ModelConfig | None = None,
) -> ReclaimResult:
    """Proven-optimal servers by the two-stage MILP (HiGHS).

    ``status`` is ``optimal`` only when both stages proved optimality;
    otherwise ``time_limit`` with the better of the solver's incumbent and
    aryl's answer.
    """
    inp = _as_input(source, n_reclaim)

    def solve() -> tuple[list[int], Status]:
        out = _exact.solve_exact(inp, time_limit=time_limit, config=config)
        return _incumbent(inp, out), out.status

    (chosen, status), seconds = timed(solve)
    return make_result(inp, chosen, status, seconds, "exact")


def reclaim_exact_pulp(
    source: Instance | ReclaimInput, n_reclaim: int | None = None, *, time_limit: float = 60.0
) -> ReclaimResult:
    """The same problem as an independent PuLP model solved by CBC."""
    inp = _as_input(source, n_reclaim)

    def solve() -> tuple[list[int], Status]:
        out = _exact.solve_pulp_model(inp, time_limit=time_limit)
        return _incumbent(inp, out), out.status

    (chosen, status), seconds = timed(solve)
    return make_result(inp, chosen, status, seconds, "exact-pulp")


# --------------------------------------------------------------------------- checker


def _decision_servers(decision: Mapping[str, Any], inp: ReclaimInput) -> list[str]:
    servers = decision.get("servers")
    if not isinstance(servers, list) or not all(isinstance(s, str) for s in servers):
        raise VerificationError("servers must be a list of server ids")
    if len(servers) != inp.n_reclaim:
        raise VerificationError(f"{len(servers)} servers returned, {inp.n_reclaim} requested")
    if len(set(servers)) != len(servers):
        raise VerificationError(f"servers returned twice: {servers}")
    cluster = inp.instance.require_cluster()
    for sid in servers:
        if not cluster.has_server(sid) or not cluster.server(sid).on_loan:
            raise VerificationError(f"server {sid!r} is not an on-loan server")
    return servers


def check_reclaim(source: Instance | ReclaimInput, result: Result) -> None:
    """Recompute a reclaim decision's effects from the instance; raise if they differ.

    Works from the placement rows directly (not the solver arrays): every
    placed job loses its workers on returned servers, is preempted when the
    rest is below ``min_workers``, and then vacates all its remaining GPUs.
    """
    inp = source if isinstance(source, ReclaimInput) else parse(source)
    instance = inp.instance
    decision = result.decision()
    returned = set(_decision_servers(decision, inp))
    preempted: list[str] = []
    scaled: dict[str, int] = {}
    collateral = 0
    for job_id in instance.placement.jobs():
        job = instance.jobs_by_id[job_id]
        rows = instance.placement.servers_of(job_id)
        gone = sum(w for sid, w in rows.items() if sid in returned)
        kept = sum(rows.values()) - gone
        if kept < job.min_workers:
            preempted.append(job_id)
            collateral += kept * job.gpus_per_worker
        elif gone:
            scaled[job_id] = gone
    expect = {
        "preempted_jobs": sorted(preempted),
        "scaled_in": scaled,
        "objective": len(preempted),
        "collateral_gpus": collateral,
    }
    got = {
        "preempted_jobs": sorted(decision.get("preempted_jobs", [])),
        "scaled_in": dict(decision.get("scaled_in", {})),
        "objective": decision.get("objective"),
        "collateral_gpus": decision.get("collateral_gpus"),
    }
    for name, value in expect.items():
        if got[name] != value:
            raise VerificationError(f"{name}: solver says {got[name]!r}, checker finds {value!r}")
    if result.objective is None or result.objective != len(preempted):
        raise VerificationError(
            f"objective {result.objective!r} != {len(preempted)} preempted jobs"
        )


# --------------------------------------------------------------------------- generator


def _place_job(
    rng: np.random.Generator, free: list[int], span: int, gpw: int, cap: int
) -> dict[int, int]:
    """Workers per server for one job on ``span`` neighbouring servers with room.

    Neighbouring servers (a random start, then the next ones with room) as a
    best-fit placer tends to produce: chains of jobs sharing servers, the
    structure of Figure 5.
    """
    n = len(free)
    start = int(rng.integers(n))
    picked: dict[int, int] = {}
    for step in range(n):
        s = (start + step) % n
        room = free[s] // gpw
        if room:
            picked[s] = int(rng.integers(1, min(room, cap) + 1))
            if len(picked) == span:
                break
    return picked


def generate_reclaim(n_servers: int, seed: int, *, n_reclaim: int | None = None) -> Instance:
    """A seeded reclaim instance: ``n_servers`` on-loan 8-GPU servers, ~2x jobs.

    Jobs span 1-4 servers (neighbouring ones), 1-2 GPUs per worker; 30% are
    elastic with a slack of up to half their workers; 20% also run workers
    on one of the n/4 training servers. N_R defaults to n/4.
    """
    if n_servers < 1:
        raise InvalidInstanceError("size", f"must be >= 1 on-loan servers, got {n_servers}")
    rng = np.random.default_rng(seed)
    n_train = max(1, n_servers // 4)
    free = [8] * n_servers
    train_free = [8] * n_train
    jobs: list[Job] = []
    rows: list[PlacementRow] = []
    for k in range(2 * n_servers):
        span = int(rng.choice([1, 2, 3, 4], p=[0.35, 0.3, 0.2, 0.15]))
        gpw = int(rng.choice([1, 2], p=[0.75, 0.25]))
        on_loan = _place_job(rng, free, span, gpw, 2 // gpw)
        if not on_loan:
            break
        placed = {f"i{s + 1}": w for s, w in on_loan.items()}
        for s, w in on_loan.items():
            free[s] -= w * gpw
        t = int(rng.integers(n_train))
        if rng.random() < 0.2 and train_free[t] >= gpw:
            w = int(rng.integers(1, train_free[t] // gpw + 1))
            train_free[t] -= w * gpw
            placed[f"t{t + 1}"] = w
        total = sum(placed.values())
        slack = int(rng.integers(1, total // 2 + 1)) if total > 1 and rng.random() < 0.3 else 0
        high = total + (int(rng.integers(1, 4)) if slack else 0)
        job_id = f"j{k + 1}"
        jobs.append(Job(job_id, total - slack, high, float(rng.integers(600, 86400)), gpw))
        rows.extend(PlacementRow(job_id, sid, w) for sid, w in placed.items())
    servers = [Server(f"t{i + 1}", "V100", 8) for i in range(n_train)]
    servers += [Server(f"i{i + 1}", "T4", 8, "inference", True) for i in range(n_servers)]
    cluster = Cluster((GpuType("V100", 1.0, 32.0), GpuType("T4", 0.25, 16.0)), tuple(servers))
    n_r = max(1, n_servers // 4) if n_reclaim is None else n_reclaim
    return Instance(
        "reclaim", cluster, tuple(jobs), Placement(tuple(rows)), {"servers_to_reclaim": n_r}
    )


def generate(size: str, seed: int) -> Instance:
    """The registry's generator: ``size`` is the number of on-loan servers."""
    try:
        n = int(size)
    except ValueError:
        raise InvalidInstanceError(
            "size", f"must be a number of on-loan servers, got {size!r}"
        ) from None
    return generate_reclaim(n, seed)


# --------------------------------------------------------------------------- registry


def _run_aryl(inp: ReclaimInput, options: SolveOptions) -> ReclaimResult:
    return reclaim_aryl(inp)


def _run_aryl_plus(inp: ReclaimInput, options: SolveOptions) -> ReclaimResult:
    return reclaim_aryl_plus(inp, seed=options.seed)


def _run_scf(inp: ReclaimInput, options: SolveOptions) -> ReclaimResult:
    return reclaim_scf(inp)


def _run_random(inp: ReclaimInput, options: SolveOptions) -> ReclaimResult:
    return reclaim_random(inp, seed=options.seed)


def _run_exact(inp: ReclaimInput, options: SolveOptions) -> ReclaimResult:
    return reclaim_exact(inp, time_limit=options.limit)


def _run_exact_pulp(inp: ReclaimInput, options: SolveOptions) -> ReclaimResult:
    return reclaim_exact_pulp(inp, time_limit=options.limit)


PROBLEM = Problem(
    name="reclaim",
    summary="Aryl server reclaiming: return N_R on-loan servers, fewest preempted jobs",
    sense="min",
    parse=parse,
    methods=(
        Method("aryl", _run_aryl, summary="Algorithm 1: free servers, then 1/|S_j| cost greedy"),
        Method("aryl-plus", _run_aryl_plus, summary="ours: tie-aware greedy + swap local search"),
        Method("scf", _run_scf, summary="smallest job count first (baseline)"),
        Method("random", _run_random, summary="N_R random on-loan servers (seeded baseline)"),
        Method("exact", _run_exact, exact=True, summary="two-stage lexicographic MILP (HiGHS)"),
        Method("exact-pulp", _run_exact_pulp, exact=True, summary="independent PuLP model (CBC)"),
    ),
    default="aryl-plus",
    check=check_reclaim,
    generate=generate,
    sizes={
        "quick": ("8", "12"),
        "standard": ("20", "60", "150", "500"),
        "paper": ("20", "60", "150", "500", "1000"),
    },
)
