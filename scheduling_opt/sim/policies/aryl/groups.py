"""Aryl's base and flexible server groups, kept across scheduling calls (§5.3, Table 6).

§5.3: "When placing elastic jobs, we also place their base and flexible
demands on separate groups of inference servers so that during reclaiming
(§4), Aryl can release the server group for flexible demands first without
any preemption". The library's BFD derives the groups within one call (a
busy on-loan server counts as base: which of its workers are flexible is
unknown); a scheduler that runs every few minutes must remember them.
:class:`ServerGroups` is that memory:

- each on-loan server's group while it runs workers: it joins a group with
  the first workers placed on it (``base`` for an elastic job's base demand
  and for inelastic workers, which no reclaim can scale in; ``flexible`` for
  a running job's added workers), becomes base if base workers join it
  later (the placement's last resort), and leaves its group when it empties
  or goes back to the inference cluster;
- each running elastic job's flexible GPUs per server (its GPUs beyond its
  base demand), so that a shrink gives back flexible workers first
  (:meth:`ServerGroups.trim`) and a growth's workers are flexible.

The reclaim solvers need no groups: a server whose return preempts nobody
(one holding only flexible workers of jobs above their base) goes first
(docs/reclaim.md, "Free servers first"). Costs: O(servers of a placement)
per update, O(groups) per refresh.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping

from scheduling_opt.sim.cluster import FreeMap, Placement
from scheduling_opt.sim.policies.aryl.pools import cut_fewest_first

BASE, FLEXIBLE = "base", "flexible"


def _held(rows: Mapping[int, int]) -> int:
    return sum(rows.values())


class ServerGroups:
    """The on-loan servers' groups and the elastic jobs' flexible GPUs, kept across calls.

    Examples
    --------
    >>> plan = FreeMap([0, 0, 0, 0, 2, 2])
    >>> g = ServerGroups()
    >>> g.joined(((4, 2),), plan, "base", {4, 5})  # a start at base demand
    >>> plan.take(((4, 2),))
    >>> g.grown(7, ((5, 2),))  # phase two adds two workers on server 5
    >>> g.joined(((5, 2),), plan, "flexible", {4, 5})
    >>> g.group, g.flex[7]
    ({4: 'base', 5: 'flexible'}, {5: 2})
    >>> g.trim(7, ((4, 2), (5, 2)), 3)  # a shrink gives back a flexible worker
    ((4, 2), (5, 1))
    """

    __slots__ = ("flex", "group")

    def __init__(self) -> None:
        self.group: dict[int, str] = {}
        self.flex: dict[int, dict[int, int]] = {}

    def refresh(self, plan: FreeMap, lent: Collection[int]) -> None:
        """Forget the groups of servers that are empty on ``plan`` or no longer lent."""
        gone = [s for s in self.group if s not in lent or plan.free[s] >= plan.capacity[s]]
        for s in gone:
            del self.group[s]

    def in_use(self, plan: FreeMap) -> dict[int, str]:
        """The groups of the servers that run workers on ``plan`` (an emptied one is free)."""
        return {s: g for s, g in self.group.items() if plan.free[s] < plan.capacity[s]}

    def joined(self, placement: Placement, plan: FreeMap, kind: str, lent: Collection[int]) -> None:
        """Lent servers of ``placement`` (placed on ``plan``, before it) join ``kind``'s group.

        An empty server joins ``kind``'s group. Base workers (or inelastic
        ones) make a flexible server base: it can no longer go back without
        a preemption. Flexible workers leave a base server base.
        """
        for s, _ in placement:
            if s in lent and (
                kind == BASE or s not in self.group or plan.free[s] >= plan.capacity[s]
            ):
                self.group[s] = kind

    def grown(self, job: int, added: Placement) -> None:
        """Job ``job`` got the workers of ``added``: flexible demand."""
        mine = self.flex.setdefault(job, {})
        for s, g in added:
            mine[s] = mine.get(s, 0) + g

    def trim(self, job: int, placement: Placement, gpus: int) -> Placement:
        """``placement`` cut down to ``gpus`` GPUs, flexible GPUs first (``flex`` updated).

        Among the job's flexible GPUs, the servers where it has the fewest
        go first (ties: the higher index), as the plain trim does; then, if
        more must go (a target below the base demand, which phase two never
        asks), its other GPUs by the same rule.
        """
        rows = dict(placement)
        mine = {s: min(f, rows.get(s, 0)) for s, f in self.flex.get(job, {}).items()}
        drop = _held(rows) - gpus
        for s, cut in cut_fewest_first(mine, drop).items():
            rows[s] -= cut
            drop -= cut
        cut_fewest_first(rows, drop)
        # A server's flexible GPUs stay within what the job still holds there.
        kept = {s: min(f, rows.get(s, 0)) for s, f in mine.items()}
        self.flex[job] = {s: f for s, f in kept.items() if f > 0}
        return tuple(sorted((s, g) for s, g in rows.items() if g > 0))

    def settle(self, job: int, placement: Placement, base: int) -> None:
        """Make job ``job``'s flexible GPUs fit ``placement``: exactly its GPUs beyond ``base``.

        A server's flexible GPUs are at most what the job holds there; when
        the job lost base GPUs (a reclaimed server) flexible ones become
        base, from the servers holding the fewest; when it holds more than
        its record (a growth planned in this call), the rest are flexible,
        on the servers where it has GPUs that are not yet flexible.
        """
        rows = dict(placement)
        mine = {s: min(f, rows.get(s, 0)) for s, f in self.flex.get(job, {}).items()}
        want = max(_held(rows) - base, 0)
        excess = _held(mine) - want
        excess -= sum(cut_fewest_first(mine, excess).values())
        for s in sorted(rows):
            if excess >= 0:
                break
            add = min(-excess, rows[s] - mine.get(s, 0))
            if add > 0:
                mine[s] = mine.get(s, 0) + add
                excess += add
        mine = {s: f for s, f in mine.items() if f > 0}
        if mine:
            self.flex[job] = mine
        else:
            self.flex.pop(job, None)

    def forget(self, job: int) -> None:
        """Job ``job`` no longer runs."""
        self.flex.pop(job, None)
