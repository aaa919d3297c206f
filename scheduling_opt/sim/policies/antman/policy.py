"""AntMan in the simulator: ``antman_step`` over the engine's shared GPUs and its local coordinator.

At every call the unfinished jobs (pending and running, in workload order)
become an :class:`~scheduling_opt.policies.antman.AntManState`: the tenant
of a job is ``SimJob.tenant`` (the trace's user, a virtual cluster), its
class is AntMan's default (resource-guarantee when its tenant has a quota,
else opportunistic; opportunistic too when it asks more GPUs than the whole
quota, which it could never get), running exclusive jobs are guarantee jobs, running
jobs in the engine's opportunistic slots (``Decision.share``) are
opportunistic jobs, and the reservations are the previous step's.
:func:`~scheduling_opt.policies.antman.antman_step` decides (job upgrade,
Algorithm 1, demotion of guarantee jobs waiting over ``demote_after``);
its launches become exclusive starts on the exact GPUs it chose
(``Decision.gpus``), its opportunistic starts ``share`` starts, its
upgrades ``upgrade``. AntMan (OSDI '20) §3.2, §3.3 (Algorithm 1, job
upgrade, demotion), §5.

The local coordinator (:mod:`.coordinator`) then runs the GPUs: memory per
job from its model's profile over its life (:mod:`.profiles`), shrunk to
make room for a guarantee job and grown back when it leaves, with the rest
of its tensors in host memory at its Fig. 10 slowdown, each shrink or
growth a stall of its measured cost (§3.1.1, §5.1); GpuOpManager's compute
control (§3.1.2): opportunistic jobs share the SM time the guarantee job
leaves idle; up to ``guests_per_gpu`` opportunistic jobs on one GPU where
memory allows (§3.3). The speeds go to the engine as ``Decision.rate``
factors (the engine's own interference is off: :attr:`AntMan.interference`
is (0, 0)); ``compute="constant"`` keeps the engine's fixed pair instead
(0.57 / 0.966, sim/sharing.py) and one opportunistic job per GPU, the model
before the coordinator was built. An opportunistic start that does not fit
in memory is dropped (the job waits); one that would put a GPU's load at or
above M, or find its slots full, waits for the retry 10 s later;
opportunistic jobs whose minimum no longer fits beside a guarantee job are
preempted (the coordinator cannot shrink them further).

GPU utilization (Algorithm 1's M test): a GPU's load is its guarantee
job's SM plus what the opportunistic jobs use of the rest; a job's SM is
its profile's, else the trace's rule (:func:`~.profiles.utilization`: 0.9
for a stable 10% of jobs, AntMan Fig. 1, else 0.5). Under
``compute="constant"`` a GPU holding an opportunistic job counts as full.

Complexity per call: O(J + G) to build the state and the layout for J
unfinished jobs and G GPUs; one ``antman_step`` (see
:mod:`scheduling_opt.policies.antman.step`); the coordinator over the GPUs
holding opportunistic jobs (:mod:`.coordinator`).
"""

from __future__ import annotations

import math
import time
from collections.abc import Mapping

from scheduling_opt.model import Cluster, GpuType, Job, JobClass, Server
from scheduling_opt.policies.antman import AntManParams, AntManState, antman_step
from scheduling_opt.sim.cluster import ClusterSpec
from scheduling_opt.sim.policies.antman import DEMOTE_AFTER, GUARANTEE_SLOWDOWN, GUESTS_PER_GPU
from scheduling_opt.sim.policies.antman.coordinator import (
    Compute,
    Coordinator,
    Need,
    Scaling,
    Split,
)
from scheduling_opt.sim.policies.antman.profiles import (
    GPU_MEMORY_GB,
    HOT,
    PROFILES,
    WARM,
    ModelProfile,
    as_profile,
    profile_of,
    profiles,
    utilization,
)
from scheduling_opt.sim.policies.antman.translate import Layout, translate
from scheduling_opt.sim.protocol import Decision, JobView, View

#: Model -> (peak GB per GPU, Figure 10 curve preset): the profiles' memory (Gandiva's table).
MEMORY: dict[str, tuple[float, str]] = {
    m: (p.peak_gb, p.curve) for m, p in PROFILES.items() if isinstance(p.curve, str)
}

__all__ = [
    "DEMOTE_AFTER",
    "GPU_MEMORY_GB",
    "GUARANTEE_SLOWDOWN",
    "GUESTS_PER_GPU",
    "HOT",
    "MEMORY",
    "WARM",
    "AntMan",
    "memory_of",
    "utilization",
]

Gpu = tuple[str, int]


def memory_of(model: str | None, table: Mapping[str, object] = MEMORY) -> tuple[float, object]:
    """Peak GB per GPU and curve of ``model`` in ``table`` (``(GB, preset)`` or profiles).

    Examples
    --------
    >>> memory_of("vgg16"), memory_of(None)
    ((17.0, 'vgg'), (8.0, 'vgg'))
    """
    entry = table.get(model or "")
    p = profile_of(None, PROFILES) if entry is None else as_profile(entry)
    return p.peak_gb, p.curve


def _library_job(st: JobView, quota: int) -> Job:
    g = st.job.gpus
    per = g if g <= 8 else math.gcd(g, 8)
    # A job larger than its tenant's quota could never launch as guarantee:
    # it runs as opportunistic (AntMan: jobs without quota granted).
    job_class: JobClass | None = "opportunistic" if g > quota else None
    return Job(
        str(st.index),
        g // per,
        g // per,
        st.job.work,
        gpus_per_worker=per,
        submit_time=st.job.submit,
        job_class=job_class,
        tenant=st.job.tenant or "",
    )


class AntMan:
    """AntMan's global scheduler and local coordinator over the engine's GPU sharing.

    Parameters
    ----------
    quotas : Mapping[str, int]
        Tenant -> guaranteed GPUs (a tenant not named has none: its jobs are
        opportunistic).
    max_utilization : float
        AntMan's M (§3.3: 0.8).
    demote_after : float or None
        A guarantee job waiting longer than this (trace time units) runs as
        opportunistic and may be upgraded later (§3.3; None: never).
    unit_seconds : float
        Seconds per time unit of the trace (60 for minutes): the 10-second
        utilization window, the profiles' seconds and the scaling costs.
    memory : Mapping[str, ModelProfile or (float, str)], optional
        Model -> profile (or ``(peak GB, Figure 10 preset)``), over the
        default table :data:`~.profiles.PROFILES`.
    compute : {"gpuopmanager", "constant"}
        GpuOpManager's idle-share control (default), or the engine's fixed
        pair with one opportunistic job per GPU (the model kept for comparison).
    guarantee_slowdown : float
        The guarantee job's residual slowdown beside running opportunistic
        jobs under GpuOpManager (§5.1: 3.4%).
    guests_per_gpu : int
        Opportunistic jobs one GPU may hold where memory allows (under
        ``compute="constant"``: 1).
    scaling : {"dynamic", "static"}
        AntMan's dynamic memory scaling, or §5.1's UMem: universal memory
        with each job's limit fixed at its start.
    overheads : bool
        Charge the shrink (17 ms) and growth (the profile's, 115 ms for
        ResNet-50) of a job's memory as stalls.
    split : {"greedy", "exact"}
        How a GPU's spare memory is split among its opportunistic jobs:
        AntMan's trial-and-error greedy or the exact DP (memory-split).

    Examples
    --------
    >>> from scheduling_opt.sim import ClusterSpec, SimJob, Workload, simulate
    >>> w = Workload.of([SimJob("a", 0.0, 1, 10.0, tenant="A"),
    ...                  SimJob("b", 0.0, 1, 10.0, tenant="B")], "demo")
    >>> out = simulate(w, ClusterSpec.uniform(1, 1), AntMan({"A": 1}))
    >>> # a starts at 0 at SM 0.5; b shares its GPU after the 10 s window
    >>> # (1/6 min) and gets the idle half, all it uses: b at 1 ends at 10 + 1/6,
    >>> # a at 20.1 / 20.8 meanwhile (9.830 done), then alone.
    >>> [round(e, 3) for e in out.end]
    [10.337, 10.167]

    References
    ----------
    AntMan (OSDI '20) §3.1-§3.3, §5.1, §5.2.
    """

    name = "antman"

    def __init__(
        self,
        quotas: Mapping[str, int],
        *,
        max_utilization: float = 0.8,
        demote_after: float | None = DEMOTE_AFTER,
        unit_seconds: float = 60.0,
        memory: Mapping[str, object] | None = None,
        compute: Compute = "gpuopmanager",
        guarantee_slowdown: float = GUARANTEE_SLOWDOWN,
        guests_per_gpu: int = GUESTS_PER_GPU,
        scaling: Scaling = "dynamic",
        overheads: bool = True,
        split: Split = "greedy",
    ) -> None:
        if not unit_seconds > 0:
            raise ValueError(f"unit_seconds must be > 0, got {unit_seconds!r}")
        if compute not in ("gpuopmanager", "constant"):
            raise ValueError(f"compute must be gpuopmanager or constant, got {compute!r}")
        if scaling not in ("dynamic", "static"):
            raise ValueError(f"scaling must be dynamic or static, got {scaling!r}")
        if split not in ("greedy", "exact"):
            raise ValueError(f"split must be greedy or exact, got {split!r}")
        if not 0.0 <= guarantee_slowdown < 1.0:
            raise ValueError(f"guarantee_slowdown must be in [0, 1), got {guarantee_slowdown!r}")
        self.unit_seconds = unit_seconds
        self.window = 10.0 / unit_seconds
        self.profiles: dict[str, ModelProfile] = profiles(memory)
        self.quotas = {str(t): int(q) for t, q in quotas.items()}
        self.params = AntManParams(max_utilization=max_utilization, demote_after=demote_after)
        self.compute = compute
        self.scaling = scaling
        self.guests_per_gpu = 1 if compute == "constant" else int(guests_per_gpu)
        if compute == "gpuopmanager":
            # The engine's pair off: every shared job's speed is set here (Interfering).
            self.interference = (0.0, 0.0)
        self.coordinator = Coordinator(
            compute=compute,
            scaling=scaling,
            split=split,
            residual=guarantee_slowdown,
            overheads=overheads,
        )
        self.cluster: Cluster | None = None
        self.jobs: dict[int, Job] = {}
        self.reserved: dict[str, tuple[Gpu, ...]] = {}
        self.sms: dict[str, float] = {}
        self.counters = dict.fromkeys(
            (
                "steps",
                "step_seconds",
                "launched",
                "shared_launches",
                "opportunistic_starts",
                "shared_starts",
                "stacked_starts",
                "upgrades",
                "demotions",
                "memory_refused",
                "memory_evictions",
                "slot_conflicts",
                "shrinks",
                "growths",
                "stall_seconds",
            ),
            0.0,
        )

    def stats(self) -> dict[str, float]:
        """Counters: steps and their seconds, starts by kind, upgrades, memory rule, scaling."""
        return dict(self.counters)

    def _cluster(self, spec: ClusterSpec) -> Cluster:
        if self.cluster is None:
            self.cluster = Cluster(
                (GpuType("V100"),),
                tuple(Server(f"s{i}", "V100", s.gpus) for i, s in enumerate(spec.servers)),
            )
        return self.cluster

    def need(self, st: JobView, now: float) -> Need:
        """What job ``st`` asks of each GPU now: its profile at its progress."""
        p = profile_of(st.job.model, self.profiles)
        gb, sm, _ = p.at(st.attained(now) * self.unit_seconds) if p.phases else (p.peak_gb, p.sm, 0)
        if sm is None:
            job_id = st.job.id
            if job_id not in self.sms:  # a hash per job per event was a fifth of a Philly run
                self.sms[job_id] = utilization(job_id)
            sm = self.sms[job_id]
        return Need(gb, p.points, sm, p.grow_seconds)

    def phase_left(self, st: JobView, now: float) -> float:
        """Seconds of progress left in ``st``'s phase (inf: one phase for life)."""
        p = profile_of(st.job.model, self.profiles)
        return p.at(st.attained(now) * self.unit_seconds)[2] if p.phases else math.inf

    def next_demotion(self, view: View, leaving: set[int]) -> float | None:
        """The first instant a waiting guarantee job will have waited over ``demote_after``."""
        after = self.params.demote_after
        if after is None:
            return None
        times = [
            math.nextafter(st.job.submit + after, math.inf)
            for i, st in view.pending.items()
            if i not in leaving and self.quotas.get(st.job.tenant or "", 0) > 0
        ]
        later = [t for t in times if t > view.now]
        return min(later) if later else None

    def decide(self, view: View) -> Decision:
        cluster = self._cluster(view.cluster)
        for st in view.arrived:
            self.jobs[st.index] = _library_job(st, self.quotas.get(st.job.tenant or "", 0))
        for st in view.finished:
            self.jobs.pop(st.index, None)
            self.sms.pop(st.job.id, None)
        now = view.now
        layout = Layout()
        for i, st in view.running.items():
            layout.needs[i] = self.need(st, now)
            for g in st.gpus:
                if st.opportunistic:
                    layout.guests.setdefault(g, []).append(i)
                else:
                    layout.hosts[g] = i
        util: dict[Gpu, float] = {}
        for g in layout.hosts.keys() | layout.guests.keys():
            # A GPU whose opportunistic slots are all taken takes no more: full.
            full = len(layout.guests.get(g, ())) >= self.guests_per_gpu
            util[(f"s{g[0]}", g[1])] = 1.0 if full else layout.load(g, self.compute)
        live = sorted((*view.pending, *view.running))
        state = AntManState(
            cluster,
            self.quotas,
            tuple(self.jobs[i] for i in live),
            guarantee={
                str(i): tuple((f"s{s}", k) for s, k in st.gpus)
                for i, st in view.running.items()
                if not st.opportunistic
            },
            opportunistic={
                str(i): tuple((f"s{s}", k) for s, k in st.gpus)
                for i, st in view.running.items()
                if st.opportunistic
            },
            reserved={k: v for k, v in self.reserved.items() if int(k) in view.pending},
            utilization=util,
            now=now,
            params=self.params,
        )
        started = time.perf_counter()
        decision = antman_step(state).decision
        self.counters["step_seconds"] += time.perf_counter() - started
        self.counters["steps"] += 1
        assert decision is not None  # antman_step always decides
        self.reserved = dict(decision.reserved)
        return translate(self, view, decision, layout)
