"""The simulated cluster: servers, and the free-GPU map with the default placement rule.

A :class:`ClusterSpec` is the static description (servers, GPUs per server,
GPU type and compute factor per server). A :class:`FreeMap` is the mutable
count of free GPUs per server with an index by free level, so that the
default placement rule costs O(GPUs per server) instead of O(servers): the
backfilling baselines test thousands of queued jobs per call, and a scan of
120 servers per test would dominate the run.

Default placement rule (the baselines'): a job of at most one server's GPUs
goes on one server, best fit (fewest free GPUs that fit; ties: lowest server
index); a larger job takes ``ceil(g / K)`` whole free servers, lowest indices
first (filling them in order, so a 12-GPU job on 8-GPU servers holds 8 + 4);
otherwise it does not fit now.
"""

from __future__ import annotations

import bisect
from collections.abc import Sequence
from dataclasses import dataclass

from scheduling_opt.errors import InvalidInstanceError
from scheduling_opt.jsonpath import show
from scheduling_opt.sim import limits
from scheduling_opt.sim.limits import MAX_GPUS_PER_SERVER, count

#: A placement: ``(server index, GPUs on it)`` pairs, servers ascending.
Placement = tuple[tuple[int, int], ...]

#: Relative compute of GPU types (V100 = 1.0; Aryl Appendix E: T4 = 0.25).
GPU_COMPUTE: dict[str, float] = {"V100": 1.0, "T4": 0.25}


@dataclass(frozen=True, slots=True)
class ServerSpec:
    """One server: ``gpus`` GPUs of ``gpu_type`` with relative ``compute`` (V100 = 1).

    Validated when built: ``gpus`` an integer in ``[1, MAX_GPUS_PER_SERVER]``,
    ``gpu_type`` a non-empty string, ``compute`` in ``[MIN_COMPUTE,
    MAX_COMPUTE]`` (:mod:`scheduling_opt.sim.limits`), ``available`` a bool.

    Examples
    --------
    >>> ServerSpec(8, "T4", 0.25).compute
    0.25
    """

    gpus: int
    gpu_type: str = "V100"
    compute: float = 1.0
    available: bool = True

    def __post_init__(self) -> None:
        gpus = count(self.gpus, "gpus", MAX_GPUS_PER_SERVER, why=limits.GPU_SCAN)
        object.__setattr__(self, "gpus", gpus)
        if type(self.gpu_type) is not str or not self.gpu_type:
            raise InvalidInstanceError(
                "gpu_type", f"must be a non-empty string, got {show(self.gpu_type)}"
            )
        object.__setattr__(self, "compute", limits.compute(self.compute, "compute"))
        if type(self.available) is not bool:
            raise InvalidInstanceError(
                "available", f"must be true or false, got {show(self.available)}"
            )


@dataclass(frozen=True, slots=True)
class ClusterSpec:
    """The servers of a simulated cluster (index = position in ``servers``).

    ``available`` False marks a server that exists but is not usable at the
    start (an inference server not yet lent to training, for Aryl): a
    capacity-change event can bring it in later. At most ``MAX_SERVERS``
    servers and ``MAX_GPUS`` GPUs (:mod:`scheduling_opt.sim.limits`); a
    list of servers is stored as a tuple.

    Examples
    --------
    >>> spec = ClusterSpec.uniform(2, 8)
    >>> spec.total_gpus, spec.gpus_per_server
    (16, 8)
    """

    servers: tuple[ServerSpec, ...]

    def __post_init__(self) -> None:
        servers = self.servers
        if isinstance(servers, list):
            servers = tuple(servers)
            object.__setattr__(self, "servers", servers)
        if not isinstance(servers, tuple):
            raise InvalidInstanceError(
                "servers", f"must be a tuple of ServerSpec, got {show(servers)}"
            )
        if not servers:
            raise InvalidInstanceError("servers", "a cluster needs at least one server")
        gpus = 0
        for i, s in enumerate(servers):
            if not isinstance(s, ServerSpec):
                raise InvalidInstanceError(
                    f"servers[{i}]", f"must be a ServerSpec, got {type(s).__name__}"
                )
            gpus += s.gpus
        limits.check_cluster(len(servers), gpus)

    @classmethod
    def uniform(cls, servers: int, gpus_per_server: int, gpu_type: str = "V100") -> ClusterSpec:
        """``servers`` identical servers of ``gpus_per_server`` GPUs.

        Parameters
        ----------
        servers : int
            1 to ``MAX_SERVERS``.
        gpus_per_server : int
            1 to ``MAX_GPUS_PER_SERVER``, and ``servers x gpus_per_server``
            at most ``MAX_GPUS``.
        gpu_type : str, default "V100"
            Its compute factor from :data:`GPU_COMPUTE` (1.0 if unknown).

        Returns
        -------
        ClusterSpec
            Checked before anything is built; the servers share one
            :class:`ServerSpec` (frozen), so the spec costs 8 bytes a server.

        Raises
        ------
        InvalidInstanceError
            An argument that is not an integer >= 1 (the error names it);
            :class:`~scheduling_opt.errors.InstanceTooLargeError` beyond the limits.

        Examples
        --------
        >>> ClusterSpec.uniform(1.5, 8)
        Traceback (most recent call last):
        ...
        scheduling_opt.errors.InvalidInstanceError: servers: must be an integer, got 1.5
        """
        n = count(servers, "servers", limits.MAX_SERVERS, why=limits.SERVER_COST)
        k = count(gpus_per_server, "gpus_per_server", MAX_GPUS_PER_SERVER, why=limits.GPU_SCAN)
        limits.check_cluster(n, n * k, "gpus_per_server")
        compute = GPU_COMPUTE.get(gpu_type, 1.0) if isinstance(gpu_type, str) else 1.0
        return cls((ServerSpec(k, gpu_type, compute),) * n)

    @property
    def total_gpus(self) -> int:
        """GPUs of all servers, available or not."""
        return sum(s.gpus for s in self.servers)

    @property
    def gpus_per_server(self) -> int:
        """The largest server's GPU count (K of the placement rule)."""
        return max(s.gpus for s in self.servers)


class FreeMap:
    """Free GPUs per server, indexed by free level; the default placement rule.

    ``capacity[s]`` is 0 for an unavailable server. :meth:`copy` is the
    scratch copy a policy plans on (a few small lists, not the cluster).

    Examples
    --------
    >>> m = FreeMap([8, 8])
    >>> m.take(((0, 5),))
    >>> m.place(2)  # best fit: server 0 has 3 free, server 1 has 8
    ((0, 2),)
    >>> m.place(12) is None  # needs two whole free servers
    True
    """

    __slots__ = ("capacity", "free", "kmax", "levels", "total_free", "uniform")

    def __init__(self, capacity: Sequence[int]) -> None:
        self.capacity = list(capacity)
        self.free = list(capacity)
        self.kmax = max(self.capacity, default=0)
        self.levels: list[list[int]] = [[] for _ in range(self.kmax + 1)]
        for s, c in enumerate(self.capacity):
            if c > 0:
                self.levels[c].append(s)
        self.total_free = sum(self.capacity)
        self.uniform = all(c in (0, self.kmax) for c in self.capacity)

    @classmethod
    def with_free(cls, capacity: Sequence[int], free: Sequence[int]) -> FreeMap:
        """The map of ``capacity`` with ``free[s]`` GPUs free on server ``s`` (O(servers)).

        The state that :meth:`~scheduling_opt.sim.cluster.FreeMap.take` of
        the used GPUs would leave, without its per-server bisections.

        Examples
        --------
        >>> m = FreeMap.with_free([8, 8, 0], [3, 8, 0])
        >>> m.total_free, m.place(2)
        (11, ((0, 2),))
        """
        if len(free) != len(capacity) or any(
            not 0 <= f <= c for c, f in zip(capacity, free, strict=True)
        ):
            raise ValueError(f"free GPUs {list(free)} not within capacity {list(capacity)}")
        other = cls(capacity)
        other.free = list(free)
        other.levels = [[] for _ in range(other.kmax + 1)]
        for s, (c, f) in enumerate(zip(capacity, free, strict=True)):
            if c > 0:
                other.levels[f].append(s)
        other.total_free = sum(free)
        return other

    def copy(self) -> FreeMap:
        """An independent copy (O(servers))."""
        other = FreeMap.__new__(FreeMap)
        other.capacity = self.capacity[:]
        other.free = self.free[:]
        other.kmax = self.kmax
        other.levels = [lv[:] for lv in self.levels]
        other.total_free = self.total_free
        other.uniform = self.uniform
        return other

    def _move(self, s: int, new: int) -> None:
        old = self.free[s]
        if self.capacity[s] > 0:
            lv = self.levels[old]
            del lv[bisect.bisect_left(lv, s)]
            bisect.insort(self.levels[new], s)
        self.free[s] = new
        self.total_free += new - old

    def take(self, placement: Placement) -> None:
        """Mark ``placement``'s GPUs used (the caller checked that they are free)."""
        for s, g in placement:
            self._move(s, self.free[s] - g)

    def give(self, placement: Placement) -> None:
        """Mark ``placement``'s GPUs free again."""
        for s, g in placement:
            self._move(s, self.free[s] + g)

    def fits(self, placement: Placement) -> bool:
        """Whether every server of ``placement`` has that many GPUs free."""
        return all(0 <= s < len(self.free) and 0 < g <= self.free[s] for s, g in placement)

    def set_capacity(self, s: int, capacity: int) -> None:
        """Change server ``s``'s capacity (0: unavailable); its used GPUs stay used.

        The caller evicts first when ``capacity`` is below the GPUs in use.
        """
        used = self.capacity[s] - self.free[s]
        if capacity < used:
            raise ValueError(f"server {s}: capacity {capacity} below the {used} GPUs in use")
        if self.capacity[s] > 0:
            lv = self.levels[self.free[s]]
            del lv[bisect.bisect_left(lv, s)]
        new_free = capacity - used
        self.total_free += new_free - self.free[s]
        self.capacity[s] = capacity
        self.free[s] = new_free
        if capacity > self.kmax:
            self.levels.extend([] for _ in range(capacity - self.kmax))
            self.kmax = capacity
        if capacity > 0:
            bisect.insort(self.levels[new_free], s)
        self.uniform = all(c in (0, self.kmax) for c in self.capacity)

    def place(self, gpus: int) -> Placement | None:
        """The default placement of a ``gpus``-GPU job on the free GPUs, or None."""
        if gpus > self.total_free or gpus <= 0:
            return None
        if gpus <= self.kmax:
            for k in range(gpus, self.kmax + 1):
                lv = self.levels[k]
                if lv:
                    return ((lv[0], gpus),)
            return None
        # Whole free servers, lowest indices first.
        out: list[tuple[int, int]] = []
        need = gpus
        if self.uniform:
            whole = self.levels[self.kmax]
            if len(whole) * self.kmax < gpus:
                return None
        else:
            whole = sorted(
                s for k in range(1, self.kmax + 1) for s in self.levels[k] if self.capacity[s] == k
            )
        for s in whole:
            g = min(need, self.capacity[s])
            out.append((s, g))
            need -= g
            if need == 0:
                return tuple(out)
        return None
