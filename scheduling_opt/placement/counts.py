"""Quasi-consolidation on server counts: the fast completion of Chronus Algorithm 1 (§3.4.2).

Quasi-consolidation (:mod:`~scheduling_opt.placement.quasi`) realizes a span
``k`` by the k-server best fit over the eligible servers sorted by
``(room, free GPUs, GPU type, server index)``: the lowest window of ``k``
consecutive servers in that order whose rooms add up to the job, filled
from its smallest server. Servers of the same GPU type and free GPUs are
then interchangeable: which of them a job takes changes nothing else, so
the reward of a pass, and the multiset of free GPUs it leaves, depend only
on the **counts**: how many servers of each (type, free GPUs) there are. A
count vector has ``(F + 1) * T`` cells (``F`` the most free GPUs of a
server, ``T`` GPU types; 18 on the generated 8-GPU, two-type clusters),
against one entry per server.

On counts, a job's eligible servers in that order are the cells ``(f, t)``
with ``f >= gpw`` and ``t`` an eligible type, by ``f`` then ``t`` (the room
``f // gpw`` never decreases along them), so one placement costs O(cells)
instead of O(S log S): the fewest servers that hold the job come from the
top cells down, the lowest window of ``k`` positions slides over runs of
equal rooms (its sum grows linearly inside a run, so each run is one
step), and the filled servers move to the cells of their new free GPUs.
:func:`pass_value` runs a whole pass this way (skipping a job whose GPU
type has fewer free GPUs than it asks for, and stopping once no later job
fits), and can give up early when its reward plus a bound on the rest
cannot beat a floor (for branch and bound in local search).

Every count operation mirrors the server one exactly (tests compare both
on generated and random instances); :func:`~scheduling_opt.placement.
local_search.search_assign` realizes its chosen combination on servers.

Complexity: O(cells) per placed job, O(1) per skipped job; a count vector is
O(S) to build.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Sequence
from dataclasses import dataclass

from scheduling_opt.placement.model import PlacementInput

#: Count vectors larger than this are not built (servers of very many GPUs):
#: local search then works on servers.
MAX_CELLS = 4096


@dataclass(frozen=True, slots=True)
class JobCells:
    """What a pass needs of one job: its cells, their rooms, its reward table.

    ``cells`` are the count cells ``f * T + t`` of the servers the job may
    use with room for a worker, in the best-fit order; ``rooms[i]`` is
    ``f // gpw`` of ``cells[i]``; ``gtype`` is its GPU type (-1: any);
    ``gpus`` = ``workers * gpw``; ``best`` its best reward.
    """

    gpw: int
    workers: int
    k_star: int
    rw: tuple[float, ...]
    cells: tuple[int, ...]
    rooms: tuple[int, ...]
    gtype: int
    gpus: int
    best: float


@dataclass(frozen=True, slots=True)
class CountShape:
    """The count cells of an input: ``types`` GPU types, free GPUs ``0..top``."""

    types: int
    top: int

    @property
    def size(self) -> int:
        """Cells in a count vector."""
        return (self.top + 1) * self.types


def shape_of(inp: PlacementInput) -> CountShape | None:
    """The count cells of ``inp`` (None past :data:`MAX_CELLS`)."""
    shape = CountShape(max(inp.n_types, 1), max(inp.free, default=0))
    return shape if shape.size <= MAX_CELLS else None


def counts_of(inp: PlacementInput, shape: CountShape, free: Sequence[int]) -> list[int]:
    """Servers per cell ``f * T + t`` (free GPUs ``f``, type ``t``), O(S)."""
    out = [0] * shape.size
    for s, f in enumerate(free):
        out[f * shape.types + inp.server_type[s]] += 1
    return out


def job_cells(inp: PlacementInput, shape: CountShape, j: int) -> JobCells:
    """The cells job ``j`` sees, in best-fit order, O(cells)."""
    g, t_j, types = inp.gpw[j], inp.job_type[j], shape.types
    chosen = [t_j] if t_j >= 0 else list(range(types))
    cells = tuple(f * types + t for f in range(g, shape.top + 1) for t in chosen)
    return JobCells(
        g,
        inp.job_workers[j],
        inp.k_star[j],
        inp.rw[j],
        cells,
        tuple((c // types) // g for c in cells),
        t_j,
        inp.gpus(j),
        inp.best_rw(j),
    )


def free_by_type(shape: CountShape, counts: Sequence[int]) -> list[int]:
    """Free GPUs per GPU type of a count vector."""
    out = [0] * shape.types
    for c, m in enumerate(counts):
        if m:
            out[c % shape.types] += (c // shape.types) * m
    return out


def smallest_span(counts: Sequence[int], job: JobCells) -> int:
    """The fewest eligible servers that hold the job (0: they cannot), roomiest first."""
    n, cells, rooms = job.workers, job.cells, job.rooms
    acc = held = 0
    for i in range(len(cells) - 1, -1, -1):
        m = counts[cells[i]]
        if m:
            q = rooms[i]
            if acc + m * q >= n:
                return held + (n - acc + q - 1) // q
            acc += m * q
            held += m
    return 0


def take(counts: list[int], free: list[int], job: JobCells, k: int, types: int) -> bool:
    """Place the job on ``k`` servers by the k-server best fit, on counts (in place).

    The mirror of :func:`~scheduling_opt.placement.quasi.place_span` over
    the servers in best-fit order: the lowest window of ``k`` consecutive
    servers whose rooms hold the job, one worker each, then each filled up
    from the smallest server. ``free`` (per type) is updated too. Returns
    False, changing nothing, when no ``k`` servers hold it (or ``k`` is
    more than its workers). O(cells).
    """
    return _take(counts, free, job, k, types) != _NOT_PLACED


#: :func:`_take` results that are not a repeatable cell.
_NOT_PLACED, _PLACED = -1, -2


def _take(counts: list[int], free: list[int], job: JobCells, k: int, types: int) -> int:
    """:func:`take`, telling whether the same job would repeat the same move at once.

    Returns ``_NOT_PLACED``, ``_PLACED``, or the index ``a`` into
    ``job.cells`` when all ``k`` servers came from cell ``a`` and were filled
    completely (``workers == k * rooms[a]``): their new free GPUs are below
    one worker, out of the job's sight, and the servers below cell ``a``
    are as they were, so an identical job placed next takes ``k`` more
    servers of cell ``a`` the same way while the cell has ``k`` left
    (:func:`pass_value` repeats it without searching).
    """
    n, cells, rooms = job.workers, job.cells, job.rooms
    last = len(cells)
    if k > n:
        return _NOT_PLACED
    # A window whose top server has room below ceil(n / k) holds less than n:
    # the lowest candidate ends at the first server with that room.
    a = bisect_left(rooms, (n + k - 1) // k)
    while a < last and not counts[cells[a]]:
        a += 1
    if a == last:
        return _NOT_PLACED
    b, ob, back = a, 0, k - 1  # k - 1 servers below it start the window
    while back:
        if ob:
            d = ob if ob < back else back
            ob -= d
            back -= d
        elif b:
            b -= 1
            ob = counts[cells[b]]
        else:
            break  # fewer below: the window starts at the first server
    while ob == counts[cells[b]]:
        b += 1
        ob = 0
    # The window's sum and the next server in: cell t, offset ot.
    window, left, t, ot = 0, k, b, ob
    while True:
        if t >= last:
            return _NOT_PLACED  # fewer than k servers from there up
        m = counts[cells[t]] - ot
        if left <= m:
            window += left * rooms[t]
            ot += left
            break
        window += m * rooms[t]
        left -= m
        t += 1
        ot = 0
    # Slide up a run at a time: inside one, the sum grows by rooms[t] - rooms[b] a step.
    while window < n:
        while ot == counts[cells[t]]:
            t += 1
            if t >= last:
                return _NOT_PLACED  # even the k roomiest servers do not hold it
            ot = 0
        mb, mt = counts[cells[b]] - ob, counts[cells[t]] - ot
        run = mb if mb < mt else mt
        slope = rooms[t] - rooms[b]
        if slope > 0:
            steps = (n - window + slope - 1) // slope
            if steps <= run:
                ob += steps
                break
        window += run * slope
        ob += run
        ot += run
        while ob == counts[cells[b]]:
            b += 1
            ob = 0
    while ob == counts[cells[b]]:
        b += 1
        ob = 0
    # Fill from the bottom: w = 1 + min(extra, room - 1) per server, in order.
    extra, left, i, off, g = n - k, k, b, ob, job.gpw
    step = g * types
    if counts[cells[b]] - ob >= k and n == k * rooms[b]:
        cell = cells[b]
        counts[cell] -= k
        counts[cell - rooms[b] * step] += k
        free[cell % types] -= n * g
        return b
    while left:
        cell = cells[i]
        avail = counts[cell] - off
        i += 1
        off = 0
        if avail <= 0:
            continue
        used = avail if avail < left else left
        left -= used
        q = rooms[i - 1]
        full = 0
        if q > 1 and extra:
            full = extra // (q - 1)
            if full > used:
                full = used
            extra -= full * (q - 1)
        ones = used - full
        workers = full * q + ones
        counts[cell] -= used
        if full:
            counts[cell - q * step] += full
        if ones and extra and q > 1:  # one server takes what is left of the job
            counts[cell - (1 + extra) * step] += 1
            ones -= 1
            workers += extra
            extra = 0
        if ones:
            counts[cell - step] += ones
        free[cell % types] -= workers * g
    return _PLACED


@dataclass(frozen=True, slots=True)
class PassPlan:
    """A job order prepared for passes: the jobs' cells and the bounds on what follows.

    ``tail[i]``: the best rewards of ``jobs[i:]`` summed; ``per_gpu[i]``: the
    best reward per GPU among them; ``smallest[i]``: the fewest GPUs any of
    them asks for (a pass stops when fewer are free); ``run[i]``: how many
    jobs from ``i`` on are identical to ``jobs[i]`` (same workers, GPUs per
    worker, type and reward table).
    """

    shape: CountShape
    jobs: tuple[JobCells, ...]
    tail: tuple[float, ...]
    per_gpu: tuple[float, ...]
    smallest: tuple[int, ...]
    run: tuple[int, ...]


def pass_plan(inp: PlacementInput, shape: CountShape, order: Sequence[int]) -> PassPlan:
    """Prepare ``order`` for :func:`pass_value`, O(J cells)."""
    jobs = tuple(job_cells(inp, shape, j) for j in order)
    n = len(jobs)
    tail, per_gpu, smallest = [0.0] * (n + 1), [0.0] * (n + 1), [0] * (n + 1)
    run = [0] * (n + 1)
    smallest[n] = 1 << 62
    for i in range(n - 1, -1, -1):
        job = jobs[i]
        tail[i] = tail[i + 1] + job.best
        per_gpu[i] = max(per_gpu[i + 1], job.best / job.gpus)
        smallest[i] = min(smallest[i + 1], job.gpus)
        run[i] = run[i + 1] + 1 if i + 1 < n and jobs[i + 1] == job else 1
    return PassPlan(shape, jobs, tuple(tail), tuple(per_gpu), tuple(smallest), tuple(run[:n]))


def pass_value(
    plan: PassPlan, counts: list[int], *, floor: float = -1.0
) -> tuple[float | None, int]:
    """Quasi-consolidation of the plan's jobs, in order, on ``counts`` (updated in place).

    Each job on its smallest span, never below its consolidated span k*;
    one that does not fit is skipped. Returns the total reward (None if the
    pass gave up: its reward so far plus a bound on the rest, the best
    rewards of the jobs left or their best reward per GPU times the GPUs
    left, could not pass ``floor``) and the jobs it examined (its work).
    """
    types = plan.shape.types
    free = free_by_type(plan.shape, counts)
    total = sum(free)
    reward = 0.0
    tail, per_gpu, smallest, run, jobs = plan.tail, plan.per_gpu, plan.smallest, plan.run, plan.jobs
    examined = i = 0
    while i < len(jobs):
        job = jobs[i]
        if total < smallest[i]:
            break
        examined += 1
        i += 1
        if (total if job.gtype < 0 else free[job.gtype]) < job.gpus:
            continue
        k = smallest_span(counts, job)
        if not k:
            continue
        if k < job.k_star:
            k = job.k_star
        got = _take(counts, free, job, k, types)
        if got == _NOT_PLACED:
            continue
        reward += job.rw[k]
        total -= job.gpus
        if got >= 0 and run[i - 1] > 1:
            # The identical jobs that follow repeat the move while the cell lasts.
            cell = job.cells[got]
            again = min(run[i - 1] - 1, counts[cell] // k)
            if again:
                counts[cell] -= again * k
                counts[cell - job.rooms[got] * job.gpw * types] += again * k
                free[cell % types] -= again * job.gpus
                total -= again * job.gpus
                for _ in range(again):
                    reward += job.rw[k]
                examined += again
                i += again
        rest = tail[i]
        room = per_gpu[i] * total
        if reward + (rest if rest < room else room) <= floor:
            return None, examined
    return reward, examined
