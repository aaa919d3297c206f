"""Aryl's placement helpers on the simulator's free map: BFD starts, trims and growths.

A job runs on one pool (the training servers, V100, or the on-loan inference
servers, T4), except a heterogeneous job (the Advanced and Ideal scenarios)
placed across both as a last resort. Starts are placed by the library's
best-fit decreasing (:func:`scheduling_opt.placement.bfd_assign`, Aryl §5.3)
over the servers with free GPUs: :func:`bfd_start` on one pool without
groups, :func:`bfd_place` with the on-loan servers' groups kept across calls
(base demand, inelastic workers or a running job's flexible workers) and
across both pools. An elastic job's size changes are placed here too: a
shrink gives back the GPUs on the servers where the job has the fewest
(keeping it consolidated), a growth without groups takes GPUs on its own
servers first, then best fit. Each call is O(S) for S servers of the pool.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Literal

from scheduling_opt.model import Cluster, GpuType, Job, Server
from scheduling_opt.placement import PlacementInput, bfd_assign
from scheduling_opt.sim.cluster import FreeMap, Placement


def worker_gpus(gpus: int, per_server: int, elastic: bool) -> int:
    """GPUs per worker of a job of ``gpus`` GPUs (the BFD's item size).

    An inelastic job that fits one server is one worker (placed whole on one
    server, as the default rule does); a larger one is workers of
    gcd(g, K) GPUs; an elastic job's range is in GPUs, so its workers are 1 GPU.

    Examples
    --------
    >>> worker_gpus(4, 8, False), worker_gpus(16, 8, False), worker_gpus(12, 8, False)
    (4, 8, 4)
    >>> worker_gpus(4, 8, True)
    1
    """
    if elastic:
        return 1
    return gpus if gpus <= per_server else math.gcd(gpus, per_server)


def bfd_start(
    plan: FreeMap, servers: Sequence[int], gpus: int, per_server: int, elastic: bool
) -> Placement | None:
    """Place a ``gpus``-GPU start on ``servers`` by the library's BFD, or None.

    The BFD sees each server with its free GPUs as its size (so best fit is
    on the free GPUs); the plan is not changed. For one job on servers of
    one type without groups the library's rule reduces to a sort: every
    server starts empty, so each worker goes to a new server, the one with
    the fewest free GPUs that fits a worker (ties: the first in
    ``servers``), which takes as many of the job's workers as fit and then
    never fits another. That sort is what runs here: O(S log S), without
    building the library's input (``bfd_start_library`` is the reference,
    tests/sim/test_aryl_pools.py checks them equal).

    Examples
    --------
    >>> plan = FreeMap([8, 8, 8])
    >>> plan.take(((0, 6),))
    >>> bfd_start(plan, [0, 1, 2], 2, 8, False)  # best fit: server 0's two free GPUs
    ((0, 2),)
    >>> bfd_start(plan, [1], 16, 8, False) is None
    True
    """
    gpw = worker_gpus(gpus, per_server, elastic)
    free = plan.free
    fitting = sorted((free[s], i, s) for i, s in enumerate(servers) if free[s] >= gpw)
    left = gpus // gpw
    if sum(f // gpw for f, _, _ in fitting) < left:
        return None  # the workers cannot fit whatever the packing
    rows = []
    for f, _, s in fitting:
        k = min(left, f // gpw)
        rows.append((s, k * gpw))
        left -= k
        if not left:
            break
    return tuple(sorted(rows))


def bfd_start_library(
    plan: FreeMap, servers: Sequence[int], gpus: int, per_server: int, elastic: bool
) -> Placement | None:
    """:func:`bfd_start` by the library's :func:`~scheduling_opt.placement.bfd_assign` itself.

    Examples
    --------
    >>> plan = FreeMap([8, 8, 8])
    >>> plan.take(((0, 6),))
    >>> bfd_start_library(plan, [0, 1, 2], 2, 8, False)
    ((0, 2),)
    """
    open_servers = [s for s in servers if plan.free[s] > 0]
    if sum(plan.free[s] for s in open_servers) < gpus:
        return None
    gpw = worker_gpus(gpus, per_server, elastic)
    n = gpus // gpw
    if sum(plan.free[s] // gpw for s in open_servers) < n:
        return None  # the workers cannot fit whatever the packing
    cluster = Cluster(
        (GpuType("G"),), tuple(Server(f"s{s}", "G", plan.free[s]) for s in open_servers)
    )
    (assigned,) = bfd_assign(PlacementInput(cluster, [Job("j", n, n, 1.0, gpw)]))
    if assigned is None:
        return None
    return tuple(sorted((open_servers[i], w * gpw) for i, w in assigned))


#: What :func:`bfd_place` places: an inelastic job, an elastic job's base
#: demand, or a running elastic job's added (flexible) workers.
Kind = Literal["inelastic", "base", "flexible"]


def bfd_place(
    plan: FreeMap,
    servers: Sequence[int],
    gpus: int,
    gpw: int,
    *,
    loan: Sequence[bool],
    groups: Mapping[int, str],
    kind: Kind,
) -> Placement | None:
    """Place ``gpus`` GPUs in workers of ``gpw`` by the library's BFD with the kept groups, or None.

    ``servers`` may mix training servers and on-loan ones (``loan[s]``);
    ``groups`` gives the group (``"base"`` or ``"flexible"``) of on-loan
    servers in use, kept across calls by the caller. ``kind`` chooses the
    library's tiers: ``inelastic`` (training first, then any on-loan
    server), ``base`` (an elastic job's base demand: free or base on-loan
    servers first, then training, then flexible ones) or ``flexible`` (a
    running job's added workers: free or flexible on-loan servers first,
    then training, then base ones). The plan is not changed.

    Examples
    --------
    >>> plan = FreeMap([2, 2, 2])
    >>> plan.take(((0, 1), (1, 1)))
    >>> lent = [True, True, True]
    >>> bfd_place(plan, [0, 1, 2], 1, 1, loan=lent, groups={0: "base", 1: "flexible"}, kind="flexible")
    ((1, 1),)
    >>> bfd_place(plan, [0, 1, 2], 1, 1, loan=lent, groups={0: "base", 1: "flexible"}, kind="base")
    ((0, 1),)
    """
    open_servers = [s for s in servers if plan.free[s] > 0]
    if sum(plan.free[s] // gpw for s in open_servers) < gpus // gpw:
        return None
    rows = []
    for s in open_servers:
        if loan[s]:
            rows.append(Server(f"s{s}", "L", plan.free[s], "inference", True))
        else:
            rows.append(Server(f"s{s}", "T", plan.free[s]))
    types = tuple(GpuType(t) for t in sorted({r.gpu_type for r in rows}))
    n = gpus // gpw
    # An elastic job placed at its minimum: its workers are base demand.
    job = Job("j", n, n + 1, 1.0, gpw) if kind == "base" else Job("j", n, n, 1.0, gpw)
    inp = PlacementInput(
        Cluster(types, tuple(rows)), [job], workers={"j": n} if kind == "base" else {}
    )
    named = {f"s{s}": groups[s] for s in open_servers if loan[s] and s in groups}
    (assigned,) = bfd_assign(inp, groups=named, flexible=("j",) if kind == "flexible" else ())
    if assigned is None:
        return None
    return tuple(sorted((open_servers[i], w * gpw) for i, w in assigned))


def trim(placement: Placement, gpus: int) -> Placement:
    """``placement`` cut down to ``gpus`` GPUs, from the servers holding the fewest.

    Examples
    --------
    >>> trim(((0, 4), (3, 1), (5, 2)), 5)
    ((0, 4), (5, 1))
    """
    rows = dict(placement)
    cut_fewest_first(rows, sum(rows.values()) - gpus)
    return tuple(sorted((s, g) for s, g in rows.items() if g > 0))


def cut_fewest_first(rows: dict[int, int], drop: int) -> dict[int, int]:
    """Take ``drop`` GPUs out of ``rows`` in place, servers holding the fewest first.

    Ties go to the higher index; the order is fixed before any cut. A
    shrink empties the servers where a job holds least, so it leaves the
    fewest servers (O(n log n) for n servers).

    Parameters
    ----------
    rows : dict of int to int
        GPUs per server; reduced in place.
    drop : int
        GPUs to take (nothing when <= 0; at most all of them).

    Returns
    -------
    dict of int to int
        The GPUs taken per server.

    Examples
    --------
    >>> rows = {0: 4, 3: 1, 5: 2}
    >>> cut_fewest_first(rows, 2), rows
    ({3: 1, 5: 1}, {0: 4, 3: 0, 5: 1})
    """
    cuts: dict[int, int] = {}
    for s in sorted(rows, key=lambda s: (rows[s], -s)):
        if drop <= 0:
            break
        cut = min(drop, rows[s])
        if cut > 0:
            rows[s] -= cut
            cuts[s] = cut
            drop -= cut
    return cuts


def grow(plan: FreeMap, placement: Placement, servers: Sequence[int], extra: int) -> Placement:
    """``placement`` plus up to ``extra`` GPUs from the plan's free GPUs on ``servers``.

    Its own servers first (most free first), then best fit on the others
    (the fewest free GPUs that hold the rest, else the most free). The plan
    is not changed; the result may hold fewer than ``extra`` more GPUs.

    Examples
    --------
    >>> plan = FreeMap([8, 8, 8])
    >>> plan.take(((0, 8), (1, 2)))
    >>> grow(plan, ((0, 1),), [0, 1, 2], 4)  # server 0 is full: best fit is server 1
    ((0, 1), (1, 4))
    """
    rows = dict(placement)
    left = extra
    own = sorted((s for s in rows if plan.free[s] > 0), key=lambda s: (-plan.free[s], s))
    for s in own:
        take = min(left, plan.free[s])
        rows[s] += take
        left -= take
    others = [s for s in servers if s not in rows and plan.free[s] > 0]
    while left > 0 and others:
        fits = [s for s in others if plan.free[s] >= left]
        s = (
            min(fits, key=lambda s: (plan.free[s], s))
            if fits
            else max(others, key=lambda s: (plan.free[s], -s))
        )
        take = min(left, plan.free[s])
        rows[s] = take
        left -= take
        others.remove(s)
    return tuple(sorted(rows.items()))


def held(placement: Placement) -> int:
    """GPUs of a placement.

    Examples
    --------
    >>> held(((0, 3), (2, 1)))
    4
    """
    return sum(g for _, g in placement)
