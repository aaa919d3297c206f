"""Gandiva (Xiao et al., OSDI '18) in the simulator: time slicing, packing by throughput, migration.

Gandiva shares GPUs among deep-learning jobs with three mechanisms; here
they run over the engine's two slots per GPU (sim/sharing.py: a GPU holds
at most two jobs, the first in its exclusive slot, the second in its
opportunistic slot):

- **Placement** (Gandiva's reactive mode, §4.2). Jobs in submit order,
  passing over a job that cannot be placed now. A job that fits idle GPUs
  takes them (best fit on one server, else whole idle servers: the
  simulator's rule). Otherwise Gandiva oversubscribes: the job joins GPUs
  that hold one job, the ones of lowest GPU utilization first (its lowest-
  load rule; the trace has no utilization, AntMan's adapter rule gives one:
  :func:`~scheduling_opt.sim.policies.antman.policy.utilization`); a job of at
  most one server's GPUs on one server, a larger one over the fewest
  servers. No GPU with a free second slot: the job waits.
- **Time slicing by suspend-resume** (§3.1, §4.1). Two jobs on a GPU take
  turns (Gandiva's 60-s slices), modelled as processor sharing: each runs
  at ``(1 - slice_overhead) / 2`` of its speed; suspend-resume swaps a
  job's memory out, so time slicing needs no memory fit.
- **Packing decided by measured throughput** (§4.1, introspective mode).
  Two jobs whose peak memory fits one GPU together may run at once
  instead; each then runs at ``1 - pack_slowdown``. Gandiva tries a pack,
  measures it, and keeps it only when the pair's throughput beats time
  slicing's: ``2 (1 - pack_slowdown) > 1 - slice_overhead``. The simulator
  knows both numbers, so the trial is decided at once (Gandiva's
  measurement window, about a minute, is negligible against jobs of hours).
- **Migration** (§4.1, §4.2). When GPUs become idle, after the waiting
  jobs are placed, a job in a GPU's second slot moves to idle GPUs if its
  gang fits them (preempted and restarted there in the same call: it
  counts as a preemption, and pays the run's restart cost); a job left
  alone on its GPUs by its partner's departure takes over their first
  slot in place (the engine's upgrade: no move, no cost).

Variant ``pack`` (``mode="pack"``) is the Gandiva that AntMan §5.2 ran:
"the packing strategy of Gandiva ..., which greedily schedules jobs to the
GPUs with lowest GPU utilization and sufficient GPU memory"; migration and
time slicing are off ("orthogonal to AntMan"). A job that finds no idle
GPUs is packed onto the lowest-utilization GPUs whose memory fits beside
their job, and stays packed whatever its throughput; none fits: it waits.

**Interference of a packed pair.** One documented number for every pair,
``pack_slowdown`` d, applied to both jobs (the one published pair gives
one number; per-model interference is not published, so the two jobs are
treated alike). Default :data:`PACK_SLOWDOWN` = 1 - 20.1 / 105.2 = 0.809:
AntMan §5.1 measured ESPnet slowed from 20.1 to 105.2 minutes beside
ResNet-50 under Gandiva's packing. The reproduction sweeps it
(scheduling_opt/reproduce/papers/antman.py). Peak memory per model:
:func:`~scheduling_opt.sim.policies.antman.policy.memory_of` (AntMan's numbers,
32 GB V100s). The engine's own interference is off for this policy
(``interference = (0.0, 0.0)``): every job's speed is set here through
``Decision.rate`` as the slowest of its GPUs (a synchronous job), and
reset when its partner leaves.

Cost per call: O(J x g) to rebuild the slots of J running jobs of g GPUs,
O(P x G) to place P waiting jobs on G GPUs.
"""

from __future__ import annotations

from collections.abc import Mapping

from scheduling_opt.sim.cluster import Placement
from scheduling_opt.sim.policies.antman import PACK_SLOWDOWN
from scheduling_opt.sim.policies.antman.policy import GPU_MEMORY_GB, MEMORY, memory_of, utilization
from scheduling_opt.sim.protocol import Decision, JobView, View

MODES = ("full", "pack")

Gpu = tuple[int, int]


def pair_speed(
    host: str | None,
    guest: str | None,
    *,
    mode: str,
    pack_slowdown: float,
    slice_overhead: float = 0.0,
    memory: Mapping[str, tuple[float, str]] = MEMORY,
) -> float:
    """The speed of each job of a pair on one GPU (both run alike).

    ``full``: packed when their memory fits and packing's throughput beats
    time slicing's, else time-sliced; ``pack``: packed (the caller placed
    it only where the memory fits).

    Examples
    --------
    >>> round(pair_speed("vgg16", "alexnet", mode="full", pack_slowdown=0.2), 3)  # packed
    0.8
    >>> pair_speed("vgg16", "resnet50", mode="full", pack_slowdown=0.2)  # 34.6 GB: sliced
    0.5
    >>> pair_speed("vgg16", "alexnet", mode="full", pack_slowdown=PACK_SLOWDOWN)  # 2 x 0.19 < 1
    0.5
    """
    sliced = (1.0 - slice_overhead) / 2.0
    packed = 1.0 - pack_slowdown
    if mode == "pack":
        return packed
    if fits(host, guest, memory) and 2.0 * packed > 1.0 - slice_overhead:
        return packed
    return sliced


def fits(
    host: str | None, guest: str | None, memory: Mapping[str, tuple[float, str]] = MEMORY
) -> bool:
    """Whether two jobs' peak memory fits one GPU together (AntMan's per-model peaks).

    Examples
    --------
    >>> fits("vgg16", "alexnet"), fits("vgg16", "resnet50")
    (True, False)
    """
    return memory_of(host, memory)[0] + memory_of(guest, memory)[0] <= GPU_MEMORY_GB


def _placement(gpus: list[Gpu]) -> Placement:
    counts: dict[int, int] = {}
    for s, _ in gpus:
        counts[s] = counts.get(s, 0) + 1
    return tuple(sorted(counts.items()))


class Gandiva:
    """Gandiva's time slicing, packing and migration (``mode="full"``), or AntMan's packing baseline.

    Parameters
    ----------
    mode : {"full", "pack"}
        ``full``: time slicing, packing kept by measured throughput,
        migration; ``pack``: greedy packing only (AntMan §5.2's baseline).
    pack_slowdown : float
        Each packed job's slowdown, in [0, 1) (default :data:`PACK_SLOWDOWN`).
    slice_overhead : float
        Share of a time-sliced pair's time lost to suspend-resume, in [0, 1).
    memory : Mapping[str, tuple[float, str]], optional
        Model -> (peak GB per GPU, curve preset); default AntMan's table.
    name : str, optional
        The run's name (default ``gandiva`` or ``gandiva-pack``).

    Examples
    --------
    >>> from scheduling_opt.sim import ClusterSpec, SimJob, Workload, simulate
    >>> w = Workload.of([SimJob("a", 0.0, 1, 10.0), SimJob("b", 0.0, 1, 10.0)], "demo")
    >>> out = simulate(w, ClusterSpec.uniform(1, 1), Gandiva())  # time-sliced: both at 1/2
    >>> out.end
    (20.0, 20.0)

    References
    ----------
    W. Xiao et al., Gandiva: introspective cluster scheduling for deep
    learning, OSDI '18, §3-§4; AntMan (OSDI '20) §5.1-§5.2.
    """

    #: The engine's interference off: this policy sets every job's speed.
    interference = (0.0, 0.0)

    def __init__(
        self,
        *,
        mode: str = "full",
        pack_slowdown: float = PACK_SLOWDOWN,
        slice_overhead: float = 0.0,
        memory: Mapping[str, tuple[float, str]] | None = None,
        name: str | None = None,
    ) -> None:
        if mode not in MODES:
            raise ValueError(f"mode must be full or pack, got {mode!r}")
        for what, v in (("pack_slowdown", pack_slowdown), ("slice_overhead", slice_overhead)):
            if not 0.0 <= v < 1.0:
                raise ValueError(f"{what} must be in [0, 1), got {v!r}")
        self.mode = mode
        self.pack_slowdown = float(pack_slowdown)
        self.slice_overhead = float(slice_overhead)
        self.memory = dict(MEMORY if memory is None else memory)
        self.name = name or ("gandiva" if mode == "full" else "gandiva-pack")
        self.utils: dict[int, float] = {}
        self.counters = dict.fromkeys(
            ("exclusive_starts", "shared_starts", "packed_starts", "migrations", "upgrades"), 0.0
        )

    def stats(self) -> dict[str, float]:
        """Counters: starts on idle GPUs, beside a job (and of those packed), migrations, upgrades."""
        return dict(self.counters)

    def _util(self, st: JobView) -> float:
        if st.index not in self.utils:
            self.utils[st.index] = utilization(st.job.id)
        return self.utils[st.index]

    def _speed(self, host: str | None, guest: str | None) -> float:
        return pair_speed(
            host,
            guest,
            mode=self.mode,
            pack_slowdown=self.pack_slowdown,
            slice_overhead=self.slice_overhead,
            memory=self.memory,
        )

    def decide(self, view: View) -> Decision:
        for st in view.finished:
            self.utils.pop(st.index, None)
        caps = view.capacity
        # slots[s][i] = [first job, second job] (-1: empty), rebuilt from the view.
        slots = [[[-1, -1] for _ in range(c)] for c in caps]
        jobs: dict[int, JobView] = dict(view.running)
        for i, st in view.running.items():
            layer = 1 if st.opportunistic else 0
            for s, g in st.gpus:
                slots[s][g][layer] = i
        upgrade = self._upgrades(view, slots)
        starts: list[tuple[int, Placement]] = []
        share: list[tuple[int, Placement]] = []
        exact: list[tuple[int, tuple[Gpu, ...]]] = []
        waiting = sorted(view.pending)
        for i in waiting:  # idle GPUs first, in submit order
            gpus = self._idle_gang(slots, view.pending[i].job.gpus)
            if gpus is not None:
                self._take(slots, gpus, i, 0)
                starts.append((i, _placement(gpus)))
                exact.append((i, tuple(gpus)))
                jobs[i] = view.pending[i]
                self.counters["exclusive_starts"] += 1
        preempt: list[int] = []
        if self.mode == "full":  # migration: second-slot jobs onto what idle GPUs remain
            for i, st in sorted(view.running.items()):
                if not st.opportunistic or i in upgrade:
                    continue
                gpus = self._idle_gang(slots, st.job.gpus)
                if gpus is None:
                    continue
                for s, g in st.gpus:
                    slots[s][g][1] = -1
                self._take(slots, gpus, i, 0)
                preempt.append(i)
                starts.append((i, _placement(gpus)))
                exact.append((i, tuple(gpus)))
                self.counters["migrations"] += 1
        started = {i for i, _ in starts}
        for i in waiting:  # then oversubscription, lowest utilization first
            if i in started:
                continue
            st = view.pending[i]
            gpus = self._shared_gang(slots, jobs, st)
            if gpus is None:
                continue
            hosts = [jobs[slots[s][g][0]] for s, g in gpus if slots[s][g][0] >= 0]
            self._take(slots, gpus, i, 1)
            share.append((i, _placement(gpus)))
            exact.append((i, tuple(gpus)))
            jobs[i] = st
            if hosts:
                self.counters["shared_starts"] += 1
                sliced = (1.0 - self.slice_overhead) / 2.0
                speeds = [self._speed(h.job.model, st.job.model) for h in hosts]
                self.counters["packed_starts"] += self.mode == "pack" or min(speeds) != sliced
        rate = self._rates(slots, jobs)
        return Decision(
            starts=tuple(starts),
            preempt=tuple(preempt),
            share=tuple(share),
            upgrade=tuple(upgrade),
            gpus=tuple(exact),
            rate=tuple(rate),
        )

    def _upgrades(self, view: View, slots: list[list[list[int]]]) -> list[int]:
        """Second-slot jobs alone on all their GPUs take the first slot in place."""
        out: list[int] = []
        for i, st in sorted(view.running.items()):
            if st.opportunistic and all(slots[s][g][0] < 0 for s, g in st.gpus):
                for s, g in st.gpus:
                    slots[s][g] = [i, -1]
                out.append(i)
        self.counters["upgrades"] += len(out)
        return out

    @staticmethod
    def _take(slots: list[list[list[int]]], gpus: list[Gpu], index: int, layer: int) -> None:
        for s, g in gpus:
            slots[s][g][layer] = index

    @staticmethod
    def _idle_gang(slots: list[list[list[int]]], size: int) -> list[Gpu] | None:
        """Idle GPUs for a gang of ``size``: best fit on one server, else whole idle servers."""
        idle = [[g for g, pair in enumerate(row) if pair == [-1, -1]] for row in slots]
        k = max((len(row) for row in slots), default=0)
        if size <= k:
            fit = [(len(free), s) for s, free in enumerate(idle) if len(free) >= size]
            if not fit:
                return None
            s = min(fit)[1]
            return [(s, g) for g in idle[s][:size]]
        whole = [s for s, free in enumerate(idle) if free and len(free) == len(slots[s])]
        out: list[Gpu] = []
        for s in whole:
            out += [(s, g) for g in idle[s][: size - len(out)]]
            if len(out) == size:
                return out
        return None

    def _shared_gang(
        self, slots: list[list[list[int]]], jobs: dict[int, JobView], st: JobView
    ) -> list[Gpu] | None:
        """GPUs with a free second slot for ``st``, lowest utilization first (None: none fit).

        A GPU qualifies when its second slot is free and (``pack`` mode) the
        memory of its job and ``st`` fits; its load is its job's utilization
        (0 when idle). One server when the gang fits one, else the fewest
        servers, each by its total load.
        """
        size = st.job.gpus
        model = st.job.model
        per_server: list[list[tuple[float, int]]] = []
        for row in slots:
            cand = []
            for g, (first, second) in enumerate(row):
                if second >= 0:
                    continue
                if first < 0:
                    cand.append((0.0, g))
                    continue
                host = jobs[first]
                if self.mode == "pack" and not fits(host.job.model, model, self.memory):
                    continue
                cand.append((self._util(host), g))
            cand.sort()
            per_server.append(cand)
        k = max((len(row) for row in slots), default=0)
        if size <= k:
            best: tuple[float, int] | None = None
            for s, cand in enumerate(per_server):
                if len(cand) >= size:
                    load = sum(u for u, _ in cand[:size])
                    if best is None or load < best[0]:
                        best = (load, s)
            if best is None:
                return None
            s = best[1]
            return sorted((s, g) for _, g in per_server[s][:size])
        ranked = sorted(
            (sum(u for u, _ in cand), s)
            for s, cand in enumerate(per_server)
            if cand and len(cand) == len(slots[s])
        )
        out: list[Gpu] = []
        for _, s in ranked:
            out += [(s, g) for _, g in per_server[s][: size - len(out)]]
            if len(out) == size:
                return sorted(out)
        return None

    def _rates(
        self, slots: list[list[list[int]]], jobs: dict[int, JobView]
    ) -> list[tuple[int, float]]:
        """Each job's speed factor: the slowest of its GPUs (alone 1, else its pair's speed)."""
        speed: dict[int, float] = {}
        for row in slots:
            for first, second in row:
                if first >= 0 and second >= 0:
                    v = self._speed(jobs[first].job.model, jobs[second].job.model)
                    for i in (first, second):
                        speed[i] = min(speed.get(i, 1.0), v)
                else:
                    for i in (first, second):
                        if i >= 0:
                            speed.setdefault(i, 1.0)
        return [(i, v) for i, v in sorted(speed.items()) if jobs[i].factor != v]
