"""GPU sharing in the engine: an opportunistic layer beside the exclusive one (AntMan).

Every GPU has an *exclusive* slot and ``guests_per_gpu`` *opportunistic*
slots (1 unless the policy declares more:
:class:`~scheduling_opt.sim.protocol.Stacking`). The exclusive slot is what
every start takes (the engine's :class:`~scheduling_opt.sim.cluster.FreeMap`);
the opportunistic slots are taken by ``Decision.share`` starts, counted in a
second free map (:attr:`Sharing.guests`, ``guests_per_gpu`` slots per GPU),
whether or not an exclusive job holds that GPU. An opportunistic job never
blocks an exclusive start, as AntMan's opportunistic jobs never block a
resource-guarantee job (§3.3: the local coordinator shrinks them instead).
A job holds at most one slot of a GPU: a gang's GPUs are distinct.

GPU identity. Placements count GPUs per server; for sharing the engine also
knows which GPUs: a job gets the GPU indices a decision names
(``Decision.gpus``) or, by default, the lowest free ones in its layer that
hold no job of the other layer (an exclusive job avoids opportunistic
jobs, an opportunistic job prefers idle GPUs, then GPUs with fewer
opportunistic jobs: AntMan's ``minLoadNodes``).

Interference model (AntMan §5.1), applied while a GPU holds jobs of both
layers: an opportunistic job runs at ``1 - share_slowdown`` of its speed
(default 0.43: ResNet-50 "maintains 57% performance" beside ESPnet under
AntMan's GpuOpManager, Fig. 12), the exclusive one at ``1 - host_slowdown``
(default 0.034: ESPnet 20.1 -> 20.8 minutes, the larger of §5.1's two
measured slowdowns; Table 2's ResNet-50 91.1 -> 91.8 minutes is 0.8%). A
synchronous job runs at its slowest worker, so one shared GPU slows the
whole job. When the partners leave, the job runs at full speed again; the
engine evicts nobody for sharing (a policy preempts an opportunistic job
whose memory does not fit, AntMan's local coordinator decision).
Opportunistic jobs on one GPU are not partners of one another: a policy
that stacks them sets their speeds itself (``Decision.rate``; AntMan's
GpuOpManager model declares this model off,
:class:`~scheduling_opt.sim.protocol.Interfering`).

This module keeps the slots only: it never changes a job's speed. Taking
and giving GPUs returns the partners whose interference changed, and the
state's owner (:class:`~scheduling_opt.sim.live.ClusterState`) re-rates them.

Cost: a start, stop or upgrade touches the job's GPUs and their partners,
O(GPUs of the job x (GPUs per server + guests per GPU)): the engine stays
O(1) per event in the number of running jobs.
"""

from __future__ import annotations

from collections.abc import Sequence

from scheduling_opt.sim.cluster import FreeMap, Placement
from scheduling_opt.sim.protocol import RUNNING
from scheduling_opt.sim.state import JobState

#: A GPU: ``(server index, GPU index on the server)``.
Gpu = tuple[int, int]
EXCLUSIVE, OPPORTUNISTIC = 0, 1
#: Most opportunistic slots a GPU may have (the resource model: slots are kept per GPU).
MAX_GUESTS_PER_GPU = 16


class Sharing:
    """Every GPU's slots, the opportunistic free map and the interference factors.

    Examples
    --------
    >>> s = Sharing([2], share_slowdown=0.5, host_slowdown=0.1)
    >>> s.guests.free, s.factor(OPPORTUNISTIC, True), s.factor(EXCLUSIVE, True)
    ([2], 0.5, 0.9)
    >>> Sharing([2], share_slowdown=0.5, host_slowdown=0.1, guests_per_gpu=3).guests.free
    [6]
    """

    __slots__ = ("guest", "guests", "guests_per_gpu", "host", "host_slowdown", "share_slowdown")

    def __init__(
        self,
        capacity: Sequence[int],
        *,
        share_slowdown: float,
        host_slowdown: float,
        guests_per_gpu: int = 1,
    ) -> None:
        for name, v in (("share_slowdown", share_slowdown), ("host_slowdown", host_slowdown)):
            if not 0.0 <= v < 1.0:
                raise ValueError(f"{name} must be in [0, 1), got {v!r}")
        k = guests_per_gpu
        if type(k) is not int or not 1 <= k <= MAX_GUESTS_PER_GPU:
            raise ValueError(
                f"guests_per_gpu must be an integer in 1..{MAX_GUESTS_PER_GPU}, got {k!r}"
            )
        self.share_slowdown = share_slowdown
        self.host_slowdown = host_slowdown
        self.guests_per_gpu = k
        self.guests = FreeMap([c * k for c in capacity])
        # host[server][gpu] = exclusive job index or -1; guest[server][gpu] = the
        # opportunistic jobs' indices, in the order they came.
        self.host = [[-1] * max(c, 1) for c in capacity]
        self.guest: list[list[list[int]]] = [[[] for _ in range(max(c, 1))] for c in capacity]

    def factor(self, layer: int, shared: bool) -> float:
        """The interference factor of a job of ``layer`` that shares a GPU or not."""
        if not shared:
            return 1.0
        return 1.0 - (self.share_slowdown if layer == OPPORTUNISTIC else self.host_slowdown)

    def widen(self, server: int, gpus: int) -> None:
        """Make room for ``gpus`` GPUs on ``server`` (a capacity raised above the spec)."""
        row, stack = self.host[server], self.guest[server]
        if len(row) < gpus:
            row.extend([-1] * (gpus - len(row)))
            stack.extend([] for _ in range(gpus - len(stack)))

    def busy_gpus(self, server: int, layer: int) -> int:
        """GPUs of ``server`` holding a job of ``layer``."""
        if layer == EXCLUSIVE:
            return sum(1 for j in self.host[server] if j >= 0)
        return sum(1 for jobs in self.guest[server] if jobs)

    def _free(self, layer: int, s: int, i: int) -> bool:
        if layer == EXCLUSIVE:
            return self.host[s][i] < 0
        return len(self.guest[s][i]) < self.guests_per_gpu

    def pick(self, layer: int, placement: Placement) -> tuple[Gpu, ...]:
        """The default GPUs for ``placement`` in ``layer``: free, unshared first, lowest index.

        Fewer GPUs than the placement asks when a server lacks free distinct
        GPUs in the layer (the caller refuses the start).
        """
        out: list[Gpu] = []
        for s, g in placement:
            free = [i for i in range(len(self.host[s])) if self._free(layer, s, i)]
            if len(free) > g:  # a choice: unshared GPUs first (a stable sort keeps index order)
                if layer == EXCLUSIVE:
                    stack = self.guest[s]
                    free.sort(key=lambda i: len(stack[i]) > 0)
                else:
                    row, stack = self.host[s], self.guest[s]
                    free.sort(key=lambda i: (row[i] >= 0, len(stack[i])))
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
            row = self.host[s] if s in want else None
            if row is None or not 0 <= i < len(row):
                return f"GPU {gpu!r} is not on the placement's servers"
            if not self._free(layer, s, i):
                taken = row[i] if layer == EXCLUSIVE else self.guest[s][i][0]
                return f"GPU {gpu!r} is taken by job index {taken}"
            got[s] = got.get(s, 0) + 1
        if got != want or len(set(gpus)) != len(gpus):
            return f"GPUs {tuple(gpus)!r} do not match placement {placement}"
        return None

    def partners(self, st: JobState) -> list[int]:
        """Indices of the jobs of the other layer on ``st``'s GPUs (each once, in GPU order)."""
        seen: list[int] = []
        if st.layer == EXCLUSIVE:
            for s, i in st.gpus:
                for j in self.guest[s][i]:
                    if j not in seen:
                        seen.append(j)
        else:
            for s, i in st.gpus:
                j = self.host[s][i]
                if j >= 0 and j not in seen:
                    seen.append(j)
        return seen

    def occupy(self, st: JobState, gpus: tuple[Gpu, ...]) -> tuple[int, list[int]]:
        """Put ``st`` on ``gpus`` in its layer.

        Returns the GPUs that became busy (held by no job before) and the
        partners, whose speed the caller re-rates.
        """
        newly_busy = 0
        host, guest = self.host, self.guest
        for s, i in gpus:
            if host[s][i] < 0 and not guest[s][i]:
                newly_busy += 1
            if st.layer == EXCLUSIVE:
                host[s][i] = st.index
            else:
                guest[s][i].append(st.index)
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
        host, guest = self.host, self.guest
        idle = 0
        for s, i in st.gpus:
            if st.layer == EXCLUSIVE:
                host[s][i] = -1
            else:
                guest[s][i].remove(st.index)
            if host[s][i] < 0 and not guest[s][i]:
                idle += 1
        st.gpus = ()
        st.shared = False
        return idle, partners

    def upgrade(self, st: JobState, exclusive: FreeMap) -> str | None:
        """Move running opportunistic ``st`` to the exclusive layer on its GPUs (None: done).

        Allowed only when no exclusive job holds any of its GPUs (AntMan's
        upgrade: "all GPUs are filled up in opportunistic jobs"); no
        restart. Other opportunistic jobs on its GPUs stay there, now beside
        an exclusive job: the caller re-rates them and ``st``
        (:meth:`partners`). ``exclusive`` is the exclusive layer's free map,
        which gains its GPUs.
        """
        if st.status != RUNNING or st.layer != OPPORTUNISTIC:
            return "upgraded but not a running opportunistic job"
        if st.shared:
            return f"upgraded on GPUs held by job indices {self.partners(st)}"
        host, guest = self.host, self.guest
        for s, i in st.gpus:
            guest[s][i].remove(st.index)
            host[s][i] = st.index
        self.guests.give(st.placement)
        exclusive.take(st.placement)
        st.layer = EXCLUSIVE
        return None
