"""Aryl best-fit decreasing placement (Aryl §5.3).

Jobs, in decreasing order of GPUs per worker, put each worker on the
non-empty server that fits it best (fewest free GPUs left), else on a new
(empty) server. Elastic jobs prefer on-loan inference servers, with their base
and flexible workers on separate server groups so that reclaiming can release
the flexible group first (§4); inelastic jobs prefer training servers. A job
bound to a GPU type only ever sees servers of that type.

Our precise reading (the paper gives the rule in prose only):

- Preference tiers, tried in order, each with best fit then a new server:
  inelastic: training, then on-loan; elastic base workers: on-loan servers
  not in the flexible group, then training, then the flexible group; elastic
  flexible workers: on-loan servers not in the base group, then training,
  then the base group. An on-loan server joins the base (flexible) group with
  its first base (flexible) worker; one already running workers starts in the
  base group (which of its workers are flexible is unknown, so releasing it
  could preempt). A new server is the empty one with the fewest GPUs that
  fits, then the first in file order; best-fit ties go to file order too.
- Placement is all-or-nothing per job: a job whose workers do not all fit on
  its eligible servers stays unplaced and takes nothing.
- Order: GPUs per worker descending, then total GPUs descending, then file
  order (stable).
- Groups across calls (:func:`bfd_assign`'s ``groups`` and ``flexible``):
  a scheduler that calls BFD at every round and keeps the groups between
  rounds (Aryl's does, §5.3) names the group of each on-loan server in use
  (``base`` or ``flexible``) instead of the in-call default (busy = base), and
  may place a running elastic job's added workers as a job of their own
  whose workers are all flexible demand (Algorithm 2's phase two grows
  running jobs): they take the flexible tiers and join the flexible group.
  With kept groups the flexible group stays for flexible workers, so that
  it can go back without a preemption: inelastic workers on on-loan
  servers take free or base servers first and the flexible group last, and
  join the base group.

Per-worker best fit keeps choosing the same server while it has room (its
free count only shrinks and stays the smallest that fits), so the workers
going to one server are placed at once. Servers sit in buckets keyed by
(group, GPU type, empty or not, free GPUs), each a lazy heap of server
indices, with a bitmask of the non-empty free levels: a lookup is a few bit
operations. Complexity O(J log J + P (C + log S)) for J jobs, P placement
rows produced, S servers and C = groups x types, plus O(C L) memory and
O(J L) time for L = the largest server's GPUs (the free levels): servers of
more than :data:`MAX_SERVER_GPUS` GPUs are refused up front (a 10^6-GPU
server took 7 s and 1 GB; 10^9 exhausted the machine).
"""

from __future__ import annotations

import heapq
import time
from collections.abc import Collection, Mapping, Sequence

from scheduling_opt.errors import InstanceTooLargeError, InvalidInstanceError
from scheduling_opt.placement.bounds import heuristic_solution
from scheduling_opt.placement.model import Assignment, PlacementDecision, PlacementInput
from scheduling_opt.solution import Seed, Solution, named

TRAIN, LOAN_FREE, LOAN_BASE, LOAN_FLEX = range(4)
#: The names of the on-loan groups a caller may give (:func:`bfd_assign`'s ``groups``).
GROUPS = {"base": LOAN_BASE, "flexible": LOAN_FLEX}

#: Largest server (GPUs) the free-level buckets are built for: 16 buckets of
#: that many levels each stay a few MB.
MAX_SERVER_GPUS = 4096
_N_GROUPS = 4

#: Groups tried in order by each kind of worker.
INELASTIC_TIERS: tuple[tuple[int, ...], ...] = ((TRAIN,), (LOAN_FREE, LOAN_BASE, LOAN_FLEX))
BASE_TIERS: tuple[tuple[int, ...], ...] = ((LOAN_FREE, LOAN_BASE), (TRAIN,), (LOAN_FLEX,))
FLEX_TIERS: tuple[tuple[int, ...], ...] = ((LOAN_FREE, LOAN_FLEX), (TRAIN,), (LOAN_BASE,))
#: Inelastic workers when the caller keeps the groups: the flexible group last.
KEPT_INELASTIC_TIERS: tuple[tuple[int, ...], ...] = (
    (TRAIN,),
    (LOAN_FREE, LOAN_BASE),
    (LOAN_FLEX,),
)


class _Servers:
    """Free GPUs and group of every server, bucketed for best-fit lookups."""

    def __init__(self, inp: PlacementInput, named: Mapping[int, int]) -> None:
        largest = max(inp.cap, default=0)
        if largest > MAX_SERVER_GPUS:
            raise InstanceTooLargeError(
                "cluster.servers",
                f"a server of {largest} GPUs; bfd handles servers of at most "
                f"{MAX_SERVER_GPUS} GPUs (its best-fit buckets grow with the largest server)",
            )
        self.n_types = inp.n_types
        self.levels = largest + 1
        self.free = list(inp.free)
        self.group = [
            named.get(s, (LOAN_BASE if busy else LOAN_FREE) if loan else TRAIN)
            for s, (loan, busy) in enumerate(zip(inp.loan, inp.busy, strict=True))
        ]
        self.used = list(inp.busy)
        self.type = inp.server_type
        n_buckets = _N_GROUPS * self.n_types * 2
        self.heaps: list[list[list[int]]] = [
            [[] for _ in range(self.levels)] for _ in range(n_buckets)
        ]
        self.count = [[0] * self.levels for _ in range(n_buckets)]
        self.mask = [0] * n_buckets
        # GPUs free per (type, level), over every group: the all-or-nothing test.
        self.by_level = [[0] * self.levels for _ in range(self.n_types)]
        for s in range(len(self.free)):
            self._enter(s)
            self.by_level[self.type[s]][self.free[s]] += 1

    def _bucket(self, s: int) -> int:
        return (self.group[s] * self.n_types + self.type[s]) * 2 + self.used[s]

    def _enter(self, s: int) -> None:
        f = self.free[s]
        if f == 0:
            return
        b = self._bucket(s)
        heapq.heappush(self.heaps[b][f], s)
        self.count[b][f] += 1
        self.mask[b] |= 1 << f

    def _leave(self, s: int) -> None:
        f = self.free[s]
        if f == 0:
            return
        b = self._bucket(s)
        self.count[b][f] -= 1
        if not self.count[b][f]:
            self.mask[b] &= ~(1 << f)

    def room(self, types: Sequence[int], gpw: int) -> int:
        """Workers of ``gpw`` GPUs that still fit on the servers of ``types``."""
        return sum(
            n * (f // gpw)
            for t in types
            for f, n in enumerate(self.by_level[t][gpw:], start=gpw)
            if n
        )

    def _first(self, b: int, f: int) -> int:
        heap = self.heaps[b][f]
        # Lazy deletion: a server left this bucket when its key changed.
        while self._bucket(heap[0]) != b or self.free[heap[0]] != f:
            heapq.heappop(heap)
        return heap[0]

    def find(self, groups: Sequence[int], types: Sequence[int], gpw: int) -> int:
        """Best fit among non-empty servers of ``groups``, else a new one; -1: none."""
        low = ~((1 << gpw) - 1)
        for used in (1, 0):
            buckets = [(g * self.n_types + t) * 2 + used for g in groups for t in types]
            union = 0
            for b in buckets:
                union |= self.mask[b]
            union &= low
            if union:
                f = (union & -union).bit_length() - 1
                return min(self._first(b, f) for b in buckets if self.mask[b] >> f & 1)
        return -1

    def take(self, s: int, gpus: int, group: int) -> None:
        """Use ``gpus`` GPUs of server ``s``; an on-loan server may join ``group``."""
        self._leave(s)
        self.by_level[self.type[s]][self.free[s]] -= 1
        self.free[s] -= gpus
        self.by_level[self.type[s]][self.free[s]] += 1
        self.used[s] = True
        if self.group[s] == LOAN_FREE and group != TRAIN:
            self.group[s] = group
        self._enter(s)


def _place_workers(
    servers: _Servers,
    placed: dict[int, int],
    count: int,
    gpw: int,
    types: Sequence[int],
    tiers: Sequence[Sequence[int]],
    group: int,
) -> None:
    left = count
    for tier in tiers:
        while left:
            s = servers.find(tier, types, gpw)
            if s < 0:
                break
            k = min(left, servers.free[s] // gpw)
            servers.take(s, k * gpw, group)
            placed[s] = placed.get(s, 0) + k
            left -= k
        if not left:
            return
    raise AssertionError("room() promised space that find() did not reach")


def bfd_order(inp: PlacementInput) -> list[int]:
    """Jobs by GPUs per worker, then total GPUs, both descending; then file order."""
    return sorted(range(inp.n_jobs), key=lambda j: (-inp.gpw[j], -inp.gpus(j), j))


def _named_groups(inp: PlacementInput, groups: Mapping[str, str] | None) -> dict[int, int]:
    """``groups`` by server index, checked: on-loan servers, ``base`` or ``flexible``."""
    if groups is None:
        return {}
    if not isinstance(groups, Mapping):
        raise InvalidInstanceError("groups", f"must map server ids to groups, got {groups!r}")
    index = {sid: s for s, sid in enumerate(inp.server_ids)}
    out: dict[int, int] = {}
    for sid, name in groups.items():
        s = index.get(sid)
        if s is None or not inp.loan[s]:
            raise InvalidInstanceError(f"groups.{sid}", "not an on-loan server of the input")
        if name not in GROUPS:
            raise InvalidInstanceError(
                f"groups.{sid}", f"must be 'base' or 'flexible', got {name!r}"
            )
        out[s] = GROUPS[name]
    return out


def bfd_assign(
    inp: PlacementInput,
    *,
    groups: Mapping[str, str] | None = None,
    flexible: Collection[str] = (),
) -> list[Assignment | None]:
    """Aryl's best-fit decreasing: per job ``((server, workers), ...)`` or None.

    Parameters
    ----------
    inp : PlacementInput
        The jobs to place and the free GPUs.
    groups : mapping of str to str, optional
        The group (``"base"`` or ``"flexible"``) of on-loan servers, by id,
        for a caller that keeps the groups across calls (Aryl §5.3). A
        server not named is in the base group if it runs workers, else free.
        Given (even empty), the flexible group is kept for flexible workers:
        inelastic workers on on-loan servers take free or base ones first,
        the flexible group last, and join the base group (no reclaim can
        scale them in).
    flexible : collection of str, optional
        Jobs to place whose workers are all flexible demand: a running
        elastic job's added workers, given as a job of their own. They take
        the flexible workers' tiers and an on-loan server they open joins
        the flexible group.

    Returns
    -------
    list of (Assignment or None)
        Per job (input order) its ``(server index, workers)`` pairs, None if
        its workers do not all fit (all-or-nothing).

    Raises
    ------
    InstanceTooLargeError
        A server of more than :data:`MAX_SERVER_GPUS` GPUs.
    InvalidInstanceError
        ``groups.<id>``: not an on-loan server of the input, or a group
        other than base and flexible; ``flexible.<id>``: not a job to place.

    Examples
    --------
    >>> from scheduling_opt.model import Cluster, GpuType, Job, Server
    >>> cluster = Cluster((GpuType("V100"),), (Server("n0", "V100", 8), Server("n1", "V100", 8)))
    >>> bfd_assign(PlacementInput(cluster, [Job("a", 2, 2, 60.0, 4), Job("b", 9, 9, 60.0)]))
    [((0, 2),), None]

    Two on-loan servers with 4 free GPUs each, the first kept in the base
    group, the second in the flexible group: a job's added flexible workers
    go to the flexible group's server, a new base demand to the base one.

    >>> lent = Cluster(
    ...     (GpuType("T4"),),
    ...     (Server("i0", "T4", 4, "inference", True), Server("i1", "T4", 4, "inference", True)),
    ... )
    >>> inp = PlacementInput(lent, [Job("e+", 2, 2, 60.0), Job("f", 2, 8, 60.0)], workers={"f": 2})
    >>> bfd_assign(inp, groups={"i0": "base", "i1": "flexible"}, flexible=("e+",))
    [((1, 2),), ((0, 2),)]

    References
    ----------
    Aryl §5.3.
    """
    named = _named_groups(inp, groups)
    flex = set(flexible)
    for job_id in flex:
        if job_id not in inp.job_ids:
            raise InvalidInstanceError(f"flexible.{job_id}", "not a job to place of the input")
    servers = _Servers(inp, named)
    all_types = tuple(range(inp.n_types))
    out: list[Assignment | None] = [None] * inp.n_jobs
    for j in bfd_order(inp):
        gpw, n = inp.gpw[j], inp.job_workers[j]
        types = all_types if inp.job_type[j] < 0 else (inp.job_type[j],)
        if servers.room(types, gpw) < n:
            continue
        placed: dict[int, int] = {}
        if inp.job_ids[j] in flex:
            _place_workers(servers, placed, n, gpw, types, FLEX_TIERS, LOAN_FLEX)
        elif inp.elastic[j]:
            _place_workers(servers, placed, inp.base[j], gpw, types, BASE_TIERS, LOAN_BASE)
            _place_workers(servers, placed, n - inp.base[j], gpw, types, FLEX_TIERS, LOAN_FLEX)
        elif groups is None:
            _place_workers(servers, placed, n, gpw, types, INELASTIC_TIERS, TRAIN)
        else:
            _place_workers(servers, placed, n, gpw, types, KEPT_INELASTIC_TIERS, LOAN_BASE)
        out[j] = tuple(sorted(placed.items()))
    return out


@named("bfd")
def best_fit_decreasing(
    inp: PlacementInput, *, seed: Seed = None, time_limit: float | None = None
) -> Solution[PlacementDecision]:
    """Aryl best-fit decreasing with the elastic/inelastic pool preferences (``bfd``).

    Deterministic and bounded by work (one pass), so ``seed`` and
    ``time_limit`` are accepted for the common calling convention only.

    Parameters
    ----------
    inp : PlacementInput
        The jobs to place and the free GPUs.
    seed : int, numpy Generator or None
        Unused (the method is deterministic).
    time_limit : float, optional
        Unused (one pass of O(J log J + P (C + log S))).

    Returns
    -------
    Solution[PlacementDecision]
        Status ``feasible``; ``objective`` the total reward RW; ``bound`` the
        fractional-knapsack upper bound (:func:`~scheduling_opt.placement.upper_bound`).

    Raises
    ------
    InstanceTooLargeError
        A server of more than :data:`MAX_SERVER_GPUS` GPUs.

    Examples
    --------
    >>> from scheduling_opt.model import Cluster, GpuType, Job, Server
    >>> cluster = Cluster((GpuType("V100"),), (Server("n0", "V100", 8), Server("n1", "V100", 8)))
    >>> sol = best_fit_decreasing(PlacementInput(cluster, [Job("a", 6, 6, 60.0)]))
    >>> sol.status.value, sol.objective, sol.decision.rows
    ('feasible', 6.0, (('a', 'n0', 6),))

    References
    ----------
    Aryl §5.3 (best-fit decreasing), §4 (on-loan servers, base and flexible groups).
    """
    start = time.perf_counter()
    return heuristic_solution(inp, bfd_assign(inp), start)
