"""AntMan in the simulator: an adapter to ``antman_step``, the memory split and GPU sharing.

At every call the unfinished jobs (pending and running, in workload order)
become an :class:`~scheduling_opt.policies.antman.AntManState`: the tenant
of a job is ``SimJob.tenant`` (the trace's user, a virtual cluster), its
class is AntMan's default (resource-guarantee when its tenant has a quota,
else opportunistic; opportunistic too when it asks more GPUs than the whole
quota, which it could never get), running exclusive jobs are guarantee jobs, running
jobs in the engine's opportunistic slot (``Decision.share``) are
opportunistic jobs, and the reservations are the previous step's.
:func:`~scheduling_opt.policies.antman.antman_step` decides; its launches
become exclusive starts on the exact GPUs it chose (``Decision.gpus``), its
opportunistic starts become ``share`` starts, its upgrades ``upgrade``.
AntMan (OSDI '20) §3.2, §3.3 (Algorithm 1, job upgrade), §5.2.

GPU utilization (the trace has none; AntMan's M = 80% test needs it): a GPU
of a running exclusive job is at :data:`HOT` (0.9) for a stable 10% of jobs
(a hash of the id: AntMan Fig. 1, "only 10% of the GPUs achieve higher than
80% GPU utilization") and :data:`WARM` (0.5) for the others; a GPU holding
an opportunistic job counts as full (1.0), since the engine allows one
opportunistic job per GPU; an idle GPU is at 0.

GPU memory (the trace has none either): a job's peak per GPU and its
Figure 10 slowdown curve come from its model (:data:`MEMORY`, numbers the
paper reports: Fig. 11b VGG16 17 GB, Inception3 16 GB, GoogleNet 4 GB;
Fig. 11a ResNet-50 17.6 GB; Table 1 GCN 3.5 GB), on 32 GB V100s. Where an
opportunistic job shares a GPU with a guarantee job, the memory split
(:func:`scheduling_opt.memory_split.exact`, the guarantee job keeping its
whole peak) decides whether it fits (infeasible: its persistent model does
not fit) and its speed with the memory left (the slowest of its GPUs, a
synchronous job), which becomes its ``Decision.rate`` factor; the engine's
interference model multiplies in AntMan's compute sharing (sim/sharing.py).
An opportunistic start that does not fit is dropped (the job waits); an
opportunistic job that no longer fits beside a guarantee job launched on
its GPU is preempted (AntMan's local coordinator could shrink it no further).

Complexity per call: building the state, O(J + G) for J unfinished jobs
and G GPUs; one ``antman_step`` (O(J + G) plus the work of the jobs that can
take GPUs, see :mod:`scheduling_opt.policies.antman.step`); O(G) for the
translation.
"""

from __future__ import annotations

import hashlib
import math
import time
from collections.abc import Mapping

from scheduling_opt.memory_split import PRESETS, MemorySplitInput, OpportunisticJob, exact
from scheduling_opt.model import Cluster, GpuType, Job, JobClass, Server
from scheduling_opt.policies.antman import (
    AntManDecision,
    AntManParams,
    AntManState,
    antman_step,
)
from scheduling_opt.sim.cluster import ClusterSpec, Placement
from scheduling_opt.sim.protocol import Decision, JobView, View
from scheduling_opt.solution import Status

#: Utilization of a GPU under a busy (10% of jobs) or an ordinary guarantee job.
HOT, WARM = 0.9, 0.5
#: Model -> (peak GB per GPU, Figure 10 curve preset); other models: ``DEFAULT_MEMORY``.
MEMORY: dict[str, tuple[float, str]] = {
    "vgg16": (17.0, "vgg"),
    "inception_v3": (16.0, "resnet"),
    "resnet101": (17.6, "resnet"),
    "resnet50": (17.6, "resnet"),
    "alexnet": (4.0, "vgg"),
    "mobilenet_v2": (3.5, "sr"),
}
DEFAULT_MEMORY = (8.0, "vgg")
#: V100 memory (AntMan §5: 32 GB) and the split's chunk.
GPU_MEMORY_GB, CHUNK_GB = 32.0, 0.5

Gpu = tuple[str, int]


def _unit(job_id: str) -> float:
    """A stable number in [0, 1) from a job id (no RNG: the same under every seed)."""
    return int.from_bytes(hashlib.sha256(job_id.encode()).digest()[:8], "big") / 2**64


def utilization(job_id: str) -> float:
    """The GPU utilization of a guarantee job's GPUs (see the module docstring).

    Examples
    --------
    >>> sorted({utilization(str(i)) for i in range(100)})
    [0.5, 0.9]
    """
    return HOT if _unit(job_id) < 0.1 else WARM


def memory_of(
    model: str | None, table: Mapping[str, tuple[float, str]] = MEMORY
) -> tuple[float, str]:
    """Peak GB per GPU and curve preset of ``model`` in ``table``.

    Examples
    --------
    >>> memory_of("vgg16"), memory_of(None)
    ((17.0, 'vgg'), (8.0, 'vgg'))
    """
    return table.get(model or "", DEFAULT_MEMORY)


def split_speed(
    host_model: str | None,
    guest_model: str | None,
    table: Mapping[str, tuple[float, str]] = MEMORY,
) -> float | None:
    """Speed of a guest beside a host on one GPU by the memory split; None: does not fit.

    Examples
    --------
    >>> split_speed("alexnet", "vgg16")  # 28 GB left for a 17 GB peak
    1.0
    >>> round(split_speed("resnet101", "resnet101"), 3)  # 28 chunks = 14 of 17.6 GB
    0.343
    """
    host_gb = memory_of(host_model, table)[0]
    peak, preset = memory_of(guest_model, table)
    inp = MemorySplitInput(
        GPU_MEMORY_GB,
        (OpportunisticJob("guest", peak, PRESETS[preset]),),
        guarantee_gb=host_gb,
        chunk_gb=CHUNK_GB,
    )
    sol = exact(inp)
    if sol.status is Status.INFEASIBLE or sol.decision is None:
        return None
    return float(sol.decision.speed["guest"])


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
    """AntMan's global scheduler with memory split and GPU sharing.

    Parameters
    ----------
    quotas : Mapping[str, int]
        Tenant -> guaranteed GPUs (a tenant not named has none: its jobs are
        opportunistic).
    max_utilization : float
        AntMan's M (§3.3: 0.8).
    demote_after : float or None
        A guarantee job waiting longer than this (trace time units) runs as
        opportunistic and may be upgraded later (None: never; the paper's
        trace experiment fixes the classes by tenant).
    unit_seconds : float
        Seconds per time unit of the trace (60 for minutes): the 10-second
        utilization window after a launch before its GPUs take opportunistic jobs.
    memory : Mapping[str, tuple[float, str]], optional
        Model -> (peak GB per GPU, Figure 10 preset); default :data:`MEMORY`.

    Examples
    --------
    >>> from scheduling_opt.sim import ClusterSpec, SimJob, Workload, simulate
    >>> w = Workload.of([SimJob("a", 0.0, 1, 10.0, tenant="A"),
    ...                  SimJob("b", 0.0, 1, 10.0, tenant="B")], "demo")
    >>> out = simulate(w, ClusterSpec.uniform(1, 1), AntMan({"A": 1}))
    >>> # a starts at 0; b shares its GPU after the 10 s window (1/6 min), a
    >>> # then at 0.966 (ends 1/6 + (10 - 1/6) / 0.966), b at 0.57, then alone.
    >>> [round(e, 3) for e in out.end]
    [10.346, 14.544]

    References
    ----------
    AntMan (OSDI '20) §3.2, §3.3, §5.2.
    """

    name = "antman"

    def __init__(
        self,
        quotas: Mapping[str, int],
        *,
        max_utilization: float = 0.8,
        demote_after: float | None = None,
        unit_seconds: float = 60.0,
        memory: Mapping[str, tuple[float, str]] | None = None,
    ) -> None:
        if not unit_seconds > 0:
            raise ValueError(f"unit_seconds must be > 0, got {unit_seconds!r}")
        self.window = 10.0 / unit_seconds
        self.memory = dict(MEMORY if memory is None else memory)
        self.quotas = {str(t): int(q) for t, q in quotas.items()}
        self.params = AntManParams(max_utilization=max_utilization, demote_after=demote_after)
        self.cluster: Cluster | None = None
        self.jobs: dict[int, Job] = {}
        self.reserved: dict[str, tuple[Gpu, ...]] = {}
        self.speeds: dict[tuple[str | None, str | None], float | None] = {}
        self.utils: dict[str, float] = {}
        self.counters = dict.fromkeys(
            (
                "steps",
                "step_seconds",
                "launched",
                "shared_launches",
                "opportunistic_starts",
                "shared_starts",
                "upgrades",
                "demotions",
                "memory_refused",
                "memory_evictions",
                "slot_conflicts",
            ),
            0.0,
        )

    def stats(self) -> dict[str, float]:
        """Counters of the run: steps and their seconds, starts by kind, upgrades, memory rule."""
        return dict(self.counters)

    def _cluster(self, spec: ClusterSpec) -> Cluster:
        if self.cluster is None:
            self.cluster = Cluster(
                (GpuType("V100"),),
                tuple(Server(f"s{i}", "V100", s.gpus) for i, s in enumerate(spec.servers)),
            )
        return self.cluster

    def _utilization(self, job_id: str) -> float:
        # A hash per running job per event was a fifth of a Philly-scale run.
        if job_id not in self.utils:
            self.utils[job_id] = utilization(job_id)
        return self.utils[job_id]

    def _speed(self, host: str | None, guest: str | None) -> float | None:
        key = (host, guest)
        if key not in self.speeds:
            self.speeds[key] = split_speed(host, guest, self.memory)
        return self.speeds[key]

    def _next_demotion(self, view: View, leaving: set[int]) -> float | None:
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
            self.utils.pop(st.job.id, None)
        live = sorted((*view.pending, *view.running))
        guarantee: dict[str, tuple[Gpu, ...]] = {}
        opportunistic: dict[str, tuple[Gpu, ...]] = {}
        util: dict[Gpu, float] = {}
        host: dict[tuple[int, int], int] = {}  # GPU -> exclusive job index
        guest: dict[tuple[int, int], int] = {}  # GPU -> opportunistic job index
        for i, st in view.running.items():
            gpus = tuple((f"s{s}", k) for s, k in st.gpus)
            if st.opportunistic:
                opportunistic[str(i)] = gpus
                guest.update(dict.fromkeys(st.gpus, i))
                util.update(dict.fromkeys(gpus, 1.0))
            else:
                guarantee[str(i)] = gpus
                host.update(dict.fromkeys(st.gpus, i))
                u = self._utilization(st.job.id)
                for g in gpus:
                    util[g] = max(util.get(g, 0.0), u)
        reserved = {k: v for k, v in self.reserved.items() if int(k) in view.pending}
        state = AntManState(
            cluster,
            self.quotas,
            tuple(self.jobs[i] for i in live),
            guarantee=guarantee,
            opportunistic=opportunistic,
            reserved=reserved,
            utilization=util,
            now=view.now,
            params=self.params,
        )
        started = time.perf_counter()
        decision = antman_step(state).decision
        self.counters["step_seconds"] += time.perf_counter() - started
        self.counters["steps"] += 1
        assert decision is not None  # antman_step always decides
        self.reserved = dict(decision.reserved)
        return self._translate(view, decision, host, guest)

    def _translate(
        self,
        view: View,
        decision: AntManDecision,
        host: dict[tuple[int, int], int],
        guest: dict[tuple[int, int], int],
    ) -> Decision:
        running, pending = view.running, view.pending

        def model(i: int) -> str | None:
            st = running.get(i) or pending.get(i)
            return st.job.model if st is not None else None

        upgrade = tuple(int(k) for k in decision.upgraded)
        for i in upgrade:
            host.update(dict.fromkeys(running[i].gpus, i))
            for g in running[i].gpus:
                guest.pop(g, None)
        starts: list[tuple[int, Placement]] = []
        rate: list[tuple[int, float]] = []
        share: list[tuple[int, Placement]] = []
        exact_gpus: list[tuple[int, tuple[tuple[int, int], ...]]] = []
        evict: set[int] = set()
        for k, gpus in decision.launched.items():
            i = int(k)
            sim = tuple(sorted((int(s[1:]), g) for s, g in gpus))
            self.counters["shared_launches"] += any(g in guest for g in sim)
            for g in sim:
                other = guest.get(g)
                if other is not None and self._speed(model(i), model(other)) is None:
                    evict.add(other)
                host[g] = i
            starts.append((i, _placement(sim)))
            exact_gpus.append((i, sim))
            if pending[i].factor != 1.0:  # a demoted job that ran shared before
                rate.append((i, 1.0))
        for i in evict:
            for g in running[i].gpus:
                guest.pop(g, None)
        self.counters["memory_evictions"] += len(evict)
        self.counters["launched"] += len(starts)
        self.counters["upgrades"] += len(upgrade)
        self.counters["demotions"] += len(decision.demoted)
        retry = False
        for k, gpus in decision.opportunistic.items():
            i = int(k)
            sim = tuple(sorted((int(s[1:]), g) for s, g in gpus))
            if any(g in guest for g in sim):
                # antman_step may stack opportunistic jobs on one GPU (its
                # memory split shares among them); the engine holds one per
                # GPU: this job waits for the retry, when those GPUs count as full.
                self.counters["slot_conflicts"] += 1
                retry = True
                continue
            if any(g in host and self._speed(model(host[g]), model(i)) is None for g in sim):
                self.counters["memory_refused"] += 1
                continue
            guest.update(dict.fromkeys(sim, i))
            share.append((i, _placement(sim)))
            exact_gpus.append((i, sim))
            self.counters["opportunistic_starts"] += 1
            self.counters["shared_starts"] += any(g in host for g in sim)
        # Each opportunistic job runs at the memory split's speed on its worst GPU.
        worst: dict[int, float] = {}
        for g, i in guest.items():
            h = host.get(g)
            s = 1.0 if h is None else (self._speed(model(h), model(i)) or 1.0)
            worst[i] = min(worst.get(i, 1.0), s)
        for i, s in sorted(worst.items()):
            st = running.get(i) or pending.get(i)
            if st is not None and st.factor != s:
                rate.append((i, s))
        # A GPU launched on now has no measured load yet (antman_step offers
        # it to no opportunistic job this round): look again after the
        # utilization window, AntMan's "past 10 seconds" (also the retry of a
        # start dropped for a taken opportunistic slot).
        waiting = len(pending) > len(starts) + len(share)
        wake = view.now + self.window if (starts and waiting) or retry else None
        demote = self._next_demotion(view, {i for i, _ in starts} | {i for i, _ in share})
        if demote is not None and (wake is None or demote < wake):
            wake = demote
        return Decision(
            starts=tuple(starts),
            preempt=tuple(sorted(evict)),
            share=tuple(share),
            upgrade=upgrade,
            gpus=tuple(exact_gpus),
            rate=tuple(rate),
            wake_at=wake,
        )


def _placement(gpus: tuple[tuple[int, int], ...]) -> Placement:
    counts: dict[int, int] = {}
    for s, _ in gpus:
        counts[s] = counts.get(s, 0) + 1
    return tuple(sorted(counts.items()))
