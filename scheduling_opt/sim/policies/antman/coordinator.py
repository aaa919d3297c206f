"""AntMan's local coordinator over the engine's shared GPUs: memory grants, compute shares, costs.

Given, for every GPU that holds an opportunistic job, its resource-guarantee
job (if any) and its opportunistic jobs in the order they came, and what
each job asks now (:class:`Need`: memory, Fig. 10 curve, SM utilization,
growth cost), :meth:`Coordinator.plan` decides what AntMan's local
coordinator does (§3.1, §3.3) and what it costs:

- **Memory, dynamic scaling** (``scaling="dynamic"``, AntMan's; §3.1.1,
  §3.3, Table 2): the guarantee job gets its whole demand; the memory left
  is split among the opportunistic jobs (:mod:`scheduling_opt.memory_split`:
  ``greedy``, AntMan's trial-and-error, or ``exact``), each running at its
  curve's speed with the rest of its tensors in host memory (universal
  memory). When the minimums do not fit, the latest opportunistic jobs are
  evicted until they do. A grant that changes costs the job a stall:
  :data:`~.profiles.SHRINK_SECONDS` to shrink, its profile's
  ``grow_seconds`` to grow (§5.1, Fig. 11); a guarantee job launched beside
  jobs that shrink waits for the shrink. Static scaling
  (``scaling="static"``, §5.1's UMem): a job's limit is what was free when it
  started, for its whole life, whoever comes or goes; nobody shrinks, nothing
  grows back.
- **Compute, GpuOpManager** (``compute="gpuopmanager"``, §3.1.2, §3.3):
  the opportunistic jobs share the SM time the guarantee job leaves idle,
  1 - its utilization (all of it without a guarantee job, §3.3: "fully
  utilized by this job without any constraints"); when their utilizations
  sum to more, each gets the same fraction of its own
  (idle / sum; a share never below :data:`MIN_SHARE`: GpuOpManager only
  delays kernels). The guarantee job keeps ``residual`` of slowdown while an
  opportunistic job runs beside it (§5.1 measured 3.4% for ESPnet and 0.8%
  for Table 2's ResNet-50). A job's speed factor is its worst GPU's (a
  synchronous job). ``compute="constant"`` is the engine's fixed pair
  (sim/sharing.py: 0.57 and 0.966): only the memory speed is set here.
- **Utilization** of each GPU for Algorithm 1's M test: the guarantee job's
  SM plus what the opportunistic jobs use of the idle share (the constant
  variant: a GPU with an opportunistic job counts as full, as before).

Cost per call: O(G x k) over the G GPUs holding opportunistic jobs, k per
GPU, plus one memory split per distinct (free memory, jobs) combination,
cached for the run.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Literal

import numpy as np

from scheduling_opt.memory_split import MemorySplitInput, OpportunisticJob, exact, greedy
from scheduling_opt.memory_split.model import Curve
from scheduling_opt.sim.policies.antman.profiles import CHUNK_GB, GPU_MEMORY_GB, SHRINK_SECONDS
from scheduling_opt.solution import Status

Gpu = tuple[int, int]
Compute = Literal["gpuopmanager", "constant"]
Scaling = Literal["dynamic", "static"]
Split = Literal["greedy", "exact"]
#: The least compute share GpuOpManager leaves an opportunistic job (it delays, never stops, it).
MIN_SHARE = 0.01
#: Grants closer than this (GB) are the same grant: no scaling, no cost.
_SAME_GB = 1e-9
#: ``lower(job, factor)``: the job's speed factor is at most ``factor``.
Lower = Callable[[int, float], None]


@dataclass(frozen=True, slots=True)
class Need:
    """What a job asks of each of its GPUs now: memory, memory curve, SM, growth cost (s)."""

    gb: float
    curve: Curve
    sm: float
    grow: float

    @property
    def floor(self) -> float:
        """The least memory it runs with (its curve's first fraction: the persistent model)."""
        return self.curve[0][0] * self.gb


def speed_at(curve: Curve, fraction: float) -> float:
    """The curve's speed at ``fraction`` of the job's memory (0 below its first point).

    Examples
    --------
    >>> speed_at(((0.1, 0.75), (1.0, 1.0)), 0.55), speed_at(((0.5, 0.9), (1.0, 1.0)), 0.2)
    (0.875, 0.0)
    """
    xs = [f for f, _ in curve]
    if fraction >= 1.0:
        return 1.0
    if fraction < xs[0] - 1e-12:
        return 0.0
    return float(np.interp(fraction, xs, [s for _, s in curve]))


@dataclass(slots=True)
class Plan:
    """One call's coordination: speed factors, grants, evictions, stalls (s), GPU loads."""

    factor: dict[int, float] = field(default_factory=dict)
    grants: dict[tuple[int, Gpu], float] = field(default_factory=dict)
    evict: list[int] = field(default_factory=list)
    stall: dict[int, float] = field(default_factory=dict)
    load: dict[Gpu, float] = field(default_factory=dict)
    shrinks: int = 0
    growths: int = 0


class Coordinator:
    """The local coordinators of one run (the module docstring); keeps the grants between calls.

    Examples
    --------
    Table 2: Job-A (GCN, 3.5 GB, opportunistic) alone, then Job-B (ResNet-50,
    30 GB, guarantee) launched on its GPU: A shrinks to the 2 GB left (17 ms,
    B waits for it), runs at SR's curve at 2 / 3.5 and, with 0.1 SM, fits in
    the 0.1 that B leaves idle; B keeps a 3.4% residual slowdown.

    >>> c = Coordinator(compute="gpuopmanager", scaling="dynamic", split="greedy", residual=0.034)
    >>> a = Need(3.5, ((0.1, 0.75), (1.0, 1.0)), 0.1, 0.115)
    >>> b = Need(30.0, ((0.1, 0.1), (0.9, 0.38), (1.0, 1.0)), 0.9, 0.115)
    >>> c.plan({}, {(0, 0): [0]}, {0: a}, fresh={0}).factor
    {0: 1.0}
    >>> p = c.plan({(0, 0): 1}, {(0, 0): [0]}, {0: a, 1: b}, fresh={1})
    >>> p.grants[(0, (0, 0))], round(p.factor[0], 4), p.factor[1], p.stall
    (2.0, 0.881, 0.966, {0: 0.017, 1: 0.017})
    >>> p = c.plan({}, {(0, 0): [0]}, {0: a}, fresh=set())  # B left: A grows back
    >>> p.grants[(0, (0, 0))], p.factor, p.stall
    (3.5, {0: 1.0}, {0: 0.115})
    """

    def __init__(
        self,
        *,
        compute: Compute,
        scaling: Scaling,
        split: Split,
        residual: float,
        overheads: bool = True,
    ) -> None:
        self.compute = compute
        self.scaling = scaling
        self.split_method = split
        self.residual = residual
        self.overheads = overheads
        self.grants: dict[tuple[int, Gpu], float] = {}
        self._splits: dict[
            tuple[float, tuple[tuple[float, Curve], ...]], tuple[float, ...] | None
        ] = {}

    # ------------------------------------------------------------------ memory

    def _split(self, taken: float, jobs: Sequence[Need]) -> tuple[float, ...] | None:
        """GB for each of ``jobs`` beside ``taken`` GB on one GPU (None: the minimums do not fit)."""
        key = (taken, tuple((n.gb, n.curve) for n in jobs))
        if key in self._splits:
            return self._splits[key]
        out: tuple[float, ...] | None
        if taken + sum(n.gb for n in jobs) <= GPU_MEMORY_GB:
            out = tuple(n.gb for n in jobs)
        elif taken > GPU_MEMORY_GB:
            out = None
        else:
            inp = MemorySplitInput(
                GPU_MEMORY_GB,
                tuple(OpportunisticJob(f"g{k}", n.gb, n.curve) for k, n in enumerate(jobs)),
                guarantee_gb=taken,
                chunk_gb=CHUNK_GB,
            )
            sol = (exact if self.split_method == "exact" else greedy)(inp)
            if sol.status is Status.INFEASIBLE or sol.decision is None:
                out = None
            else:
                gb = sol.decision.memory_gb
                out = tuple(float(gb[f"g{k}"]) for k in range(len(jobs)))
        self._splits[key] = out
        return out

    def admits(
        self,
        host: int | None,
        guests: Sequence[int],
        gpu: Gpu,
        needs: Mapping[int, Need],
    ) -> bool:
        """Whether ``guests`` (the last one new) fit beside ``host`` on ``gpu``.

        Dynamic scaling: their minimums fit beside the host's whole demand.
        Static: the new one's minimum fits in what the others hold (their
        limits; a job without one yet counts its demand).
        """
        if self.scaling == "dynamic":
            taken = needs[host].gb if host is not None else 0.0
            return self._split(taken, [needs[j] for j in guests]) is not None
        held = ([] if host is None else [host]) + list(guests[:-1])
        used = sum(self.grants.get((j, gpu), needs[j].gb) for j in held)
        return GPU_MEMORY_GB - used >= needs[guests[-1]].floor - _SAME_GB

    # ------------------------------------------------------------------ plan

    def plan(
        self,
        hosts: Mapping[Gpu, int],
        guests: Mapping[Gpu, Sequence[int]],
        needs: Mapping[int, Need],
        fresh: set[int],
    ) -> Plan:
        """Grants, speed factors, evictions, stalls and loads after this call's starts.

        ``hosts``: GPU -> guarantee job (after this call's upgrades and
        launches) on every GPU that holds opportunistic jobs, and under
        static scaling on every GPU that holds one (its limit is kept for its
        life); ``guests``: GPU -> opportunistic
        jobs in the order they came (this call's starts last); ``needs``:
        every job's :class:`Need`; ``fresh``: jobs started by this call (no
        scaling cost for their first grant, a wait for a guarantee job's
        shrinking neighbours).
        """
        plan = Plan()
        old, self.grants = self.grants, {}
        worst: dict[int, float] = {}
        evicted: set[int] = set()

        def lower(job: int, value: float) -> None:
            worst[job] = min(worst.get(job, 1.0), value)

        for gpu in sorted(set(hosts) | set(guests)):
            h = hosts.get(gpu)
            on = [j for j in guests.get(gpu, ()) if j not in evicted]
            host_need = needs[h] if h is not None else None
            if self.scaling == "dynamic":
                gb = self._dynamic(host_need, on, needs, evicted)
                if h is not None:
                    assert host_need is not None
                    self.grants[(h, gpu)] = min(host_need.gb, GPU_MEMORY_GB)
            else:
                gb = self._static(gpu, h, host_need, on, needs, evicted, old)
            on = [j for j in on if j not in evicted]
            for j, g in zip(on, gb, strict=True):
                self.grants[(j, gpu)] = g
            self._compute(gpu, h, host_need, on, gb, needs, plan, lower)
        plan.evict = sorted(evicted)
        for j in evicted:
            worst.pop(j, None)
        plan.factor = worst
        self._costs(old, hosts, needs, fresh, evicted, plan)
        plan.grants = dict(self.grants)
        return plan

    def _dynamic(
        self,
        host: Need | None,
        on: list[int],
        needs: Mapping[int, Need],
        evicted: set[int],
    ) -> tuple[float, ...]:
        taken = host.gb if host is not None else 0.0
        while on:
            gb = self._split(taken, [needs[j] for j in on])
            if gb is not None:
                return gb
            evicted.add(on.pop())  # the latest opportunistic job goes first
        return ()

    def _static(
        self,
        gpu: Gpu,
        h: int | None,
        host: Need | None,
        on: list[int],
        needs: Mapping[int, Need],
        evicted: set[int],
        old: Mapping[tuple[int, Gpu], float],
    ) -> tuple[float, ...]:
        # Jobs keep the limit they started with; a new job gets what is free.
        # A new guarantee job below its minimum evicts the latest guests.
        held: dict[int, float] = {j: old[(j, gpu)] for j in on if (j, gpu) in old}
        if h is not None and host is not None:
            if (h, gpu) in old:
                host_gb = old[(h, gpu)]
            else:
                while on and GPU_MEMORY_GB - sum(held.get(j, 0.0) for j in on) < host.floor:
                    evicted.add(on.pop())
                host_gb = min(host.gb, GPU_MEMORY_GB - sum(held.get(j, 0.0) for j in on))
            self.grants[(h, gpu)] = host_gb
        else:
            host_gb = 0.0
        out = []
        used = host_gb + sum(held.get(j, 0.0) for j in on)
        for j in on:
            if j in held:
                out.append(held[j])
            else:
                g = min(needs[j].gb, max(GPU_MEMORY_GB - used, 0.0))
                used += g
                out.append(g)
        return tuple(out)

    # ------------------------------------------------------------------ compute

    def _compute(
        self,
        gpu: Gpu,
        h: int | None,
        host: Need | None,
        on: list[int],
        gb: Sequence[float],
        needs: Mapping[int, Need],
        plan: Plan,
        lower: Lower,
    ) -> None:
        mem = [
            speed_at(needs[j].curve, min(g, needs[j].gb) / needs[j].gb)
            for j, g in zip(on, gb, strict=True)
        ]
        # The guarantee job's own memory speed (below 1 only under a static limit,
        # or a demand above the GPU's memory) times its residual slowdown.
        host_mem = 1.0
        if h is not None and host is not None:
            host_mem = speed_at(host.curve, min(self.grants[(h, gpu)], host.gb) / host.gb)
        if self.compute == "constant":
            # The engine applies its pair; here only the memory speed (as before).
            for j, s in zip(on, mem, strict=True):
                lower(j, s)
            if h is not None:
                lower(h, host_mem)
            plan.load[gpu] = 1.0 if on else (host.sm if host is not None else 0.0)
            return
        idle = 1.0 - host.sm if host is not None else 1.0
        demand = sum(needs[j].sm for j in on)
        share = 1.0 if demand <= idle else max(idle / demand, MIN_SHARE)
        for j, s in zip(on, mem, strict=True):
            lower(j, share * s)
        if h is not None:
            lower(h, host_mem * (1.0 - self.residual if on else 1.0))
        used = (host.sm if host is not None else 0.0) + min(idle, demand)
        plan.load[gpu] = min(1.0, used)

    # ------------------------------------------------------------------ costs

    def _costs(
        self,
        old: Mapping[tuple[int, Gpu], float],
        hosts: Mapping[Gpu, int],
        needs: Mapping[int, Need],
        fresh: set[int],
        evicted: set[int],
        plan: Plan,
    ) -> None:
        """Stalls: a changed grant costs a shrink or a growth; a new host waits for shrinks."""
        if not self.overheads:
            return
        shrunk: set[Gpu] = set()
        for (j, gpu), g in self.grants.items():
            if j in fresh or (j, gpu) not in old:
                continue
            before = old[(j, gpu)]
            if g < before - _SAME_GB:
                cost = SHRINK_SECONDS
                shrunk.add(gpu)
                plan.shrinks += 1
            elif g > before + _SAME_GB:
                cost = needs[j].grow
                plan.growths += 1
            else:
                continue
            plan.stall[j] = max(plan.stall.get(j, 0.0), cost)
        for gpu in shrunk:
            h = hosts.get(gpu)
            if h is not None and h in fresh:
                plan.stall[h] = max(plan.stall.get(h, 0.0), SHRINK_SECONDS)
        for j in evicted:
            plan.stall.pop(j, None)
        for key in [k for k in self.grants if k[0] in evicted]:
            del self.grants[key]
