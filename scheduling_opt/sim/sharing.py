"""GPU sharing in the engine: an opportunistic layer beside the exclusive one (AntMan).

Every GPU has two slots. The *exclusive* slot is what every start takes (the
engine's :class:`~scheduling_opt.sim.cluster.FreeMap`); the *opportunistic*
slot is taken by ``Decision.share`` starts, counted in a second free map
(:attr:`Sharing.guests`): at most one opportunistic job per GPU, whether or
not an exclusive job holds that GPU. An opportunistic job never blocks an
exclusive start, as AntMan's opportunistic jobs never block a
resource-guarantee job (§3.3: the local coordinator shrinks them instead).

GPU identity. Placements count GPUs per server; for sharing the engine also
knows which GPUs: a job gets the GPU indices a decision names
(``Decision.gpus``) or, by default, the lowest free ones in its layer that
hold no job of the other layer (an exclusive job avoids opportunistic
jobs, an opportunistic job prefers idle GPUs: AntMan's ``minLoadNodes``).

Interference model (AntMan §5.1), applied while a GPU holds one job of each
layer: the opportunistic job runs at ``1 - share_slowdown`` of its speed
(default 0.43: ResNet-50 "maintains 57% performance" beside ESPnet under
AntMan's GpuOpManager, Fig. 12), the exclusive one at ``1 - host_slowdown``
(default 0.034: ESPnet 20.1 -> 20.8 minutes, the larger of §5.1's two
measured slowdowns; Table 2's ResNet-50 91.1 -> 91.8 minutes is 0.8%). A
synchronous job runs at its slowest worker, so one shared GPU slows the
whole job. When the partner leaves, the job runs at full speed again; the
engine evicts nobody for sharing (a policy preempts an opportunistic job
whose memory does not fit, AntMan's local coordinator decision).

This module keeps the slots only: it never changes a job's speed. Taking
and giving GPUs returns the partners whose interference changed, and the
state's owner (:class:`~scheduling_opt.sim.live.ClusterState`) re-rates them.

Cost: a start, stop or upgrade touches the job's GPUs and the at most one
partner per GPU, O(GPUs of the job x GPUs per server): the engine stays O(1)
per event in the number of running jobs.
"""

from __future__ import annotations

from collections.abc import Sequence

from scheduling_opt.sim.cluster import FreeMap, Placement
from scheduling_opt.sim.protocol import RUNNING
from scheduling_opt.sim.state import JobState

#: A GPU: ``(server index, GPU index on the server)``.
Gpu = tuple[int, int]
EXCLUSIVE, OPPORTUNISTIC = 0, 1


class Sharing:
    """Both slots of every GPU, the opportunistic free map and the interference factors.

    Examples
    --------
    >>> s = Sharing([2], share_slowdown=0.5, host_slowdown=0.1)
    >>> s.guests.free, s.factor(OPPORTUNISTIC, True), s.factor(EXCLUSIVE, True)
    ([2], 0.5, 0.9)
    """

    __slots__ = ("guests", "host_slowdown", "share_slowdown", "slots")

    def __init__(
        self, capacity: Sequence[int], *, share_slowdown: float, host_slowdown: float
    ) -> None:
        for name, v in (("share_slowdown", share_slowdown), ("host_slowdown", host_slowdown)):
            if not 0.0 <= v < 1.0:
                raise ValueError(f"{name} must be in [0, 1), got {v!r}")
        self.share_slowdown = share_slowdown
        self.host_slowdown = host_slowdown
        self.guests = FreeMap(capacity)
        # slots[layer][server][gpu] = job index or -1
        self.slots = [[[-1] * max(c, 1) for c in capacity] for _ in (EXCLUSIVE, OPPORTUNISTIC)]

    def factor(self, layer: int, shared: bool) -> float:
        """The interference factor of a job of ``layer`` that shares a GPU or not."""
        if not shared:
            return 1.0
        return 1.0 - (self.share_slowdown if layer == OPPORTUNISTIC else self.host_slowdown)

    def widen(self, server: int, gpus: int) -> None:
        """Make room for ``gpus`` GPUs on ``server`` (a capacity raised above the spec)."""
        for layer in self.slots:
            row = layer[server]
            if len(row) < gpus:
                row.extend([-1] * (gpus - len(row)))

    def pick(self, layer: int, placement: Placement) -> tuple[Gpu, ...]:
        """The default GPUs for ``placement`` in ``layer``: free, unshared first, lowest index."""
        mine, other = self.slots[layer], self.slots[1 - layer]
        out: list[Gpu] = []
        for s, g in placement:
            free = [i for i, j in enumerate(mine[s]) if j < 0]
            if len(free) > g:  # a choice: unshared GPUs first (a stable sort keeps index order)
                row = other[s]
                free.sort(key=lambda i: row[i] >= 0)
            out.extend((s, i) for i in free[:g])
        return tuple(out)

    def valid(self, layer: int, placement: Placement, gpus: Sequence[Gpu]) -> str | None:
        """Why ``gpus`` cannot carry ``placement`` in ``layer`` (None: they can)."""
        want = dict(placement)
        got: dict[int, int] = {}
        for gpu in gpus:
            if not (isinstance(gpu, tuple) and len(gpu) == 2):
                return f"GPU {gpu!r} is not (server, index)"
            s, i = gpu
            row = self.slots[layer][s] if s in want else None
            if row is None or not 0 <= i < len(row):
                return f"GPU {gpu!r} is not on the placement's servers"
            if row[i] >= 0:
                return f"GPU {gpu!r} is taken by job index {row[i]}"
            got[s] = got.get(s, 0) + 1
        if got != want or len(set(gpus)) != len(gpus):
            return f"GPUs {tuple(gpus)!r} do not match placement {placement}"
        return None

    def partners(self, st: JobState) -> list[int]:
        """Indices of the jobs of the other layer on ``st``'s GPUs (each once, in GPU order)."""
        other = self.slots[1 - st.layer]
        seen: list[int] = []
        for s, i in st.gpus:
            j = other[s][i]
            if j >= 0 and j not in seen:
                seen.append(j)
        return seen

    def occupy(self, st: JobState, gpus: tuple[Gpu, ...]) -> tuple[int, list[int]]:
        """Put ``st`` on ``gpus`` in its layer.

        Returns the GPUs that became busy (held by no job of the other layer
        before) and the partners, whose speed the caller re-rates.
        """
        mine, other = self.slots[st.layer], self.slots[1 - st.layer]
        newly_busy = 0
        for s, i in gpus:
            if other[s][i] < 0:
                newly_busy += 1
            mine[s][i] = st.index
        st.gpus = gpus
        partners = self.partners(st)
        st.shared = bool(partners)
        return newly_busy, partners

    def vacate(self, st: JobState) -> tuple[int, list[int]]:
        """Take ``st`` off its GPUs.

        Returns the GPUs that became idle and the partners, whose speed the
        caller re-rates.
        """
        partners = self.partners(st)
        mine, other = self.slots[st.layer], self.slots[1 - st.layer]
        idle = 0
        for s, i in st.gpus:
            mine[s][i] = -1
            if other[s][i] < 0:
                idle += 1
        st.gpus = ()
        st.shared = False
        return idle, partners

    def upgrade(self, st: JobState, exclusive: FreeMap) -> str | None:
        """Move running opportunistic ``st`` to the exclusive layer on its GPUs (None: done).

        Allowed only when no exclusive job holds any of its GPUs (AntMan's
        upgrade: "all GPUs are filled up in opportunistic jobs"); its speed
        is unchanged (unshared before and after), with no restart.
        ``exclusive`` is the exclusive layer's free map, which gains its GPUs.
        """
        if st.status != RUNNING or st.layer != OPPORTUNISTIC:
            return "upgraded but not a running opportunistic job"
        if st.shared:
            return f"upgraded on GPUs held by job indices {self.partners(st)}"
        guest, host = self.slots[OPPORTUNISTIC], self.slots[EXCLUSIVE]
        for s, i in st.gpus:
            guest[s][i] = -1
            host[s][i] = st.index
        self.guests.give(st.placement)
        exclusive.take(st.placement)
        st.layer = EXCLUSIVE
        return None
