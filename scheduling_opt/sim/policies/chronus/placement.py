"""Chronus' Allocator in the simulator: round-up consolidation and local search (§3.4).

The engine's free-GPU map and the jobs to start become a
:class:`~scheduling_opt.placement.PlacementInput` (each server's busy GPUs
held by one stand-in job, so that the servers keep their true size and the
consolidated spans ``k*`` stay right), and the library's placement package
places them:

- guaranteed SLO jobs selected for the term: round-up consolidation
  (§3.4.1, :func:`~scheduling_opt.placement.consolidate`): each demand rounded
  up to 1, 2, 4 or 8n GPUs and packed by Proposition 1's construction;
- the other jobs (unguaranteed SLO and best-effort, and a selected job the
  consolidation could not place): Chronus Algorithm 1
  (:func:`~scheduling_opt.placement.search_assign` with ``large_first``:
  jobs of 16+ GPUs by round-up consolidation first, then the exhaustive
  search over the top-K jobs by potential within |S| leaves and
  quasi-consolidation of the rest), maximizing the total allocation reward
  RW of Eq. (7) under the bundled ``model_info.json`` placement
  sensitivity, which is also the engine's speed model: a spread job earns
  less RW and runs slower by the same table.

Algorithm 1 may spread a job over several servers (at the table's speed)
where the simulator's default rule (best fit on one server, or whole
servers) would leave it waiting, and it may leave a job out when the jobs do
not all fit. Cost: building the input is O((J + S) S) for J jobs and S
servers; consolidation O(J (log J + S)); the search at most |S| leaves of
one quasi-consolidation pass each, cut off at a time budget (its best
combination so far).

:class:`Allocator` is that rule in the policy's loop: the jobs that fit in
the free GPUs in the loop's order are placed, the selected ones by round-up
consolidation, the others (and a selected job the consolidation could not
place) by Algorithm 1; the loop's consolidating best fit then tries the
jobs still pending on what is left (:meth:`Allocator.place_one`: the
simulator's default rule, or the Chronus artifact's any-free-GPUs rule
under ``placement="pool"``). Chronus re-places best-effort jobs at every
5-minute BE lease (§3.3.5); the simulator keeps a placement until the job
stops, so a job local search spread is migrated onto its fewest servers as
soon as the GPUs left over at an event allow it
(:meth:`Allocator.consolidate`).
"""

from __future__ import annotations

import time
from collections.abc import Sequence

from scheduling_opt.jsonpath import read_int
from scheduling_opt.model import Cluster, GpuType, Job, Placement, PlacementRow, Server
from scheduling_opt.placement import PlacementInput, consolidate, search_assign
from scheduling_opt.scaling import TableModel
from scheduling_opt.sim.cluster import FreeMap
from scheduling_opt.sim.cluster import Placement as SimPlacement
from scheduling_opt.sim.policies.chronus.artifact.rules import pool_place
from scheduling_opt.sim.policies.chronus.ledger import Ledger
from scheduling_opt.sim.policies.chronus.options import ChronusOptions
from scheduling_opt.sim.protocol import JobView, View
from scheduling_opt.sim.speed import bundled_table
from scheduling_opt.sim.workload import SimJob

__all__ = ["Allocator", "Placer", "may_consolidate", "place_jobs"]

#: Prefix of the stand-in jobs that hold the busy GPUs (no trace id starts so).
_BUSY = "~busy:"


class Placer:
    """:func:`place_jobs` for one run, with the model objects that do not change kept.

    The cluster (rebuilt only when a server's capacity changes), each
    stand-in of a server's busy GPUs and each job to place are validated
    model objects; built once per distinct value and reused, so that their
    checks do not dominate a call (a full-trace run makes about 10,000 calls
    over 120 servers). The answers are :func:`place_jobs`' own: same input objects by
    value, same solver calls.
    """

    def __init__(self) -> None:
        self._cluster: tuple[tuple[int, ...], Cluster, list[int]] | None = None
        self._busy: dict[tuple[int, int], tuple[Job, PlacementRow]] = {}
        self._jobs: dict[tuple[int, int, float], Job] = {}
        #: Local searches the time limit stopped (0: the run was bounded by work alone).
        self.stopped = 0
        self._no_table = TableModel({})  # every span worth its GPUs

    def cluster(self, capacity: Sequence[int]) -> tuple[Cluster, list[int]]:
        """The servers with capacity as a model cluster, and their engine indices."""
        key = tuple(capacity)
        if self._cluster is None or self._cluster[0] != key:
            servers = [s for s, c in enumerate(key) if c > 0]
            cluster = Cluster(
                (GpuType("gpu"),), tuple(Server(f"s{s}", "gpu", key[s]) for s in servers)
            )
            self._cluster = (key, cluster, servers)
        return self._cluster[1], self._cluster[2]

    def busy(self, server: int, used: int) -> tuple[Job, PlacementRow]:
        """The stand-in job holding ``used`` GPUs of ``server``, and its placement row."""
        got = self._busy.get((server, used))
        if got is None:
            name = f"{_BUSY}{server}"
            got = (Job(name, used, used, 1.0), PlacementRow(name, f"s{server}", used))
            self._busy[(server, used)] = got
        return got

    def job(self, k: int, job: SimJob) -> Job:
        """The ``k``-th job to place as a model job (id ``str(k)``, one worker per GPU)."""
        key = (k, job.gpus, job.work)
        got = self._jobs.get(key)
        if got is None:
            got = Job(str(k), job.gpus, job.gpus, max(job.work, 1e-9))
            self._jobs[key] = got
        return got

    def input(
        self,
        capacity: Sequence[int],
        free: Sequence[int],
        jobs: Sequence[SimJob],
        table: TableModel | None,
        search_space: int,
    ) -> tuple[PlacementInput, list[int]]:
        """The placement input over the servers with capacity, and their engine indices."""
        search_space = read_int(search_space, "search_space", 1)
        cluster, servers = self.cluster(capacity)
        model_jobs: list[Job] = []
        rows: list[PlacementRow] = []
        for s in servers:
            used = capacity[s] - free[s]
            if used > 0:
                stand_in, row = self.busy(s, used)
                model_jobs.append(stand_in)
                rows.append(row)
        models: dict[str, str] = {}
        for k, job in enumerate(jobs):
            model_jobs.append(self.job(k, job))
            if table is not None and job.model is not None and table.knows(job.model):
                models[str(k)] = job.model
        # Trusted: the stand-ins fill their servers' busy GPUs exactly, the jobs
        # are the Placer's own (unique ids, one GPU per worker, no type), the
        # models known to the table (PlacementInput's checks, in
        # tests/sim/test_chronus_placement_trusted.py, pass on such inputs).
        inp = PlacementInput._trusted(
            cluster,
            tuple(model_jobs),
            Placement(tuple(rows)),
            models,
            table if table is not None else self._no_table,
            search_space,
        )
        return inp, servers

    def place(
        self,
        capacity: Sequence[int],
        free: Sequence[int],
        jobs: Sequence[SimJob],
        *,
        method: str,
        table: TableModel | None,
        search_space: int = 100_000,
        time_limit: float = 1.0,
    ) -> list[SimPlacement | None]:
        """:func:`place_jobs` (the same parameters and answer)."""
        if method not in ("round-up", "local-search"):
            raise ValueError(f"method must be round-up or local-search, got {method!r}")
        if not jobs:
            return []
        inp, servers = self.input(capacity, free, jobs, table, search_space)
        if method == "round-up":
            assign = consolidate(inp)
        else:
            deadline = time.perf_counter() + time_limit
            assign, stopped = search_assign(inp, large_first=True, deadline=deadline)
            self.stopped += stopped
        return [
            None if a is None else tuple((servers[s], w) for s, w in a if w > 0) or None
            for a in assign
        ]


def place_jobs(
    capacity: Sequence[int],
    free: Sequence[int],
    jobs: Sequence[SimJob],
    *,
    method: str,
    table: TableModel | None,
    search_space: int = 100_000,
    time_limit: float = 1.0,
) -> list[SimPlacement | None]:
    """Place ``jobs`` on the free GPUs by Chronus' round-up consolidation or local search.

    Parameters
    ----------
    capacity : sequence of int
        Usable GPUs per engine server (0: unavailable).
    free : sequence of int
        Free GPUs per engine server.
    jobs : sequence of SimJob
        The jobs to place (one worker per GPU).
    method : {"round-up", "local-search"}
        Chronus §3.4.1 (guaranteed jobs) or Algorithm 1 of §3.4.2 (the others).
    table : TableModel or None
        Placement sensitivity (None: every span runs at full speed).
    search_space : int
        Algorithm 1's |S| (the paper's 100,000 is too slow for every
        scheduling event of a 14-day trace; 1,000 by default).
    time_limit : float
        Seconds for the search; past it, its best combination so far.

    Returns
    -------
    list of (Placement or None)
        Per job (input order) its ``(server, GPUs)`` pairs, None if unplaced.

    Raises
    ------
    ValueError
        When ``method`` is not one of the two.

    Examples
    --------
    Two 8-GPU servers with 4 GPUs free each: a 6-GPU job rounds up to 8 and
    cannot be consolidated; local search spreads it (4 + 2), where the
    simulator's default rule would leave it waiting.

    >>> a = SimJob("a", 0.0, 6, 10.0)
    >>> place_jobs([8, 8], [4, 4], [a], method="round-up", table=None)
    [None]
    >>> place_jobs([8, 8], [4, 4], [a], method="local-search", table=None)
    [((0, 4), (1, 2))]

    References
    ----------
    Chronus (SoCC '21) §3.4.1 (RoundUp, Proposition 1), §3.4.2 (Algorithm 1, Eq. 7).
    """
    return Placer().place(
        capacity,
        free,
        jobs,
        method=method,
        table=table,
        search_space=search_space,
        time_limit=time_limit,
    )


class Allocator:
    """Chronus' placement of the jobs a scheduling loop starts, and the migrations of spread jobs.

    Parameters
    ----------
    options : ChronusOptions
        ``placement``, ``placement_table``, ``search_space``,
        ``placement_time_limit``.
    ledger : Ledger
        The term's selected jobs (placed by round-up), the counts.
    """

    def __init__(self, options: ChronusOptions, ledger: Ledger) -> None:
        self.options = options
        self.ledger = ledger
        self.table: TableModel | None = bundled_table() if options.placement_table else None
        self.placer = Placer()
        #: Running jobs local search spread over more than their fewest servers.
        self.spread: set[int] = set()
        #: Seconds in the §3.4 placement, in all and the longest call.
        self.seconds = 0.0
        self.max_seconds = 0.0

    def place_one(self, plan: FreeMap, gpus: int) -> SimPlacement | None:
        """The simulator's default placement, or any free GPUs under ``placement="pool"``."""
        return pool_place(plan, gpus) if self.options.placement == "pool" else plan.place(gpus)

    def place(self, plan: FreeMap, order: list[JobView]) -> list[tuple[int, SimPlacement]]:
        """Round-up consolidation of the selected jobs, local search of the others (§3.4).

        The jobs of ``order`` that fit in the free GPUs, in order, are
        placed; the starts are taken from ``plan``.
        """
        room = plan.total_free
        chosen: list[JobView] = []
        for st in order:
            if room == 0:
                break
            if st.job.gpus <= room:
                chosen.append(st)
                room -= st.job.gpus
        if not chosen:
            return []
        started = time.perf_counter()
        counts, selected_ids = self.ledger.counts, self.ledger.selected
        starts: list[tuple[int, SimPlacement]] = []
        selected = [st for st in chosen if st.index in selected_ids]
        rest = [st for st in chosen if st.index not in selected_ids]
        if selected:
            got = self.placer.place(
                plan.capacity, plan.free, [st.job for st in selected], method="round-up", table=None
            )
            for st, placement in zip(selected, got, strict=True):
                if placement is None:
                    rest.insert(0, st)
                else:
                    plan.take(placement)
                    starts.append((st.index, placement))
        if rest:
            got = self.placer.place(
                plan.capacity,
                plan.free,
                [st.job for st in rest],
                method="local-search",
                table=self.table,
                search_space=self.options.search_space,
                time_limit=self.options.placement_time_limit,
            )
            fewest = max(plan.capacity)
            for st, placement in zip(rest, got, strict=True):
                if placement is not None:
                    plan.take(placement)
                    starts.append((st.index, placement))
                    if len(placement) > -(-st.job.gpus // fewest):
                        counts["spread_starts"] += 1
                        self.spread.add(st.index)
        spent = time.perf_counter() - started
        self.seconds += spent
        self.max_seconds = max(self.max_seconds, spent)
        counts["placement_calls"] += 1
        return starts

    def consolidate(
        self, view: View, plan: FreeMap, starting: set[int]
    ) -> tuple[tuple[int, SimPlacement], ...]:
        """Move spread jobs onto their fewest servers when the GPUs left over allow it."""
        moves: list[tuple[int, SimPlacement]] = []
        fewest_of = max(plan.capacity)
        for index in sorted(self.spread - starting):
            st = view.running.get(index)
            fewest = -(-st.job.gpus // fewest_of) if st is not None else 0
            if st is None or len(st.placement) <= fewest:
                self.spread.discard(index)
                continue
            if not may_consolidate(plan, st.placement, st.job.gpus):
                continue  # plan.place would not find its fewest servers: nothing to try
            plan.give(st.placement)
            target = plan.place(st.job.gpus)
            if target is not None and len(target) <= fewest:
                plan.take(target)
                moves.append((index, target))
                self.spread.discard(index)
                self.ledger.counts["consolidated_moves"] += 1
            else:
                plan.take(st.placement)
        return tuple(moves)


def may_consolidate(plan: FreeMap, placement: SimPlacement, gpus: int) -> bool:
    """Whether ``plan.place(gpus)``, with ``placement`` given back, could use its fewest servers.

    False only when it surely cannot: a job of at most K GPUs needs one
    server with that many free (counting its own GPUs there), a larger one
    on a uniform cluster ``ceil(gpus / K)`` whole free servers. Lets
    :meth:`Allocator.consolidate` skip the give, place and take back of a
    spread job that stays spread (the free map's levels are sorted lists, so
    giving and taking back left the same map): O(K + |placement|).

    Examples
    --------
    A 4-GPU job spread 2 + 2, 2 GPUs free on each server: given back, one
    server has its 4. A 6-GPU job spread 3 + 3, 1 GPU free on each: no
    server would have 6.

    >>> plan = FreeMap([8, 8])
    >>> plan.take(((0, 6), (1, 6)))
    >>> may_consolidate(plan, ((0, 2), (1, 2)), 4)
    True
    >>> plan.take(((0, 1), (1, 1)))
    >>> may_consolidate(plan, ((0, 3), (1, 3)), 6)
    False
    """
    kmax = plan.kmax
    free, levels = plan.free, plan.levels
    if gpus <= kmax:
        top = next((k for k in range(kmax, 0, -1) if levels[k]), 0)
        return top >= gpus or any(free[s] + g >= gpus for s, g in placement)
    if not plan.uniform:
        return True
    whole = len(levels[kmax]) + sum(
        1 for s, g in placement if free[s] < kmax and free[s] + g == kmax
    )
    return whole * kmax >= gpus
