"""A paper's restart costs: what a resume, a resize, a preemption and a start cost every policy of its set.

Each paper words its cost its own way (docs/reproduction.md, "Restart
costs"): Chronus' artifact charges 0.5 x (1 + log2 g) minutes of work at
each start of a g-GPU job (the engine's ``start_overhead``); Aryl adds 63 s
at each preemption (a stall: ``restart_cost``); EDL and ONES measure a
checkpoint restart (Stop-Resume: 30-60 s; checkpoint-based migration: over
20 s) against their own elastic scaling (under 1 s: ``resize_cost``);
AntMan names no value. A set's :class:`Costs` apply to every policy it
runs, baselines included, so that the comparison stays like for like.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from scheduling_opt.sim.sweep import RunConfig


@dataclass(frozen=True, slots=True)
class Costs:
    """The engine's four costs for a set's runs, in the set's time unit, and where they come from.

    ``restart``: the stall of a resume (a job that ran before holds its
    GPUs without progress); ``resize``: the stall of a resize or migration
    (None: ``restart``); ``preemption``: work lost at each preemption;
    ``start``: work owed at each start, x (1 + log2 g) for g GPUs;
    ``source``: the paper's words for them (the report's header).

    Examples
    --------
    >>> c = Costs(restart=0.5, resize=0.0, source="x")
    >>> r = c.apply(RunConfig("fifo"))
    >>> r.restart_cost, r.resize_cost, r.start_overhead
    (0.5, 0.0, 0.0)
    >>> c.describe("s"), Costs().describe("s")
    ('0.5 s stall per resume, 0 s per resize', 'none')
    """

    restart: float = 0.0
    resize: float | None = None
    preemption: float = 0.0
    start: float = 0.0
    source: str = ""

    def apply(self, config: RunConfig) -> RunConfig:
        """``config`` with these costs (checked as RunConfig checks them)."""
        return replace(
            config,
            restart_cost=self.restart,
            resize_cost=self.resize,
            preemption_cost=self.preemption,
            start_overhead=self.start,
        )

    @property
    def zero(self) -> bool:
        """Whether nothing costs anything."""
        return not (self.restart or self.resize or self.preemption or self.start)

    def describe(self, unit: str) -> str:
        """The costs in words (``none`` when every one is 0)."""
        parts = []
        if self.restart:
            parts.append(f"{self.restart:.3g} {unit} stall per resume")
        if self.resize is not None and self.resize != self.restart:
            parts.append(f"{self.resize:.3g} {unit} per resize")
        if self.preemption:
            parts.append(f"{self.preemption:.3g} {unit} of work lost per preemption")
        if self.start:
            parts.append(f"{self.start:.3g} x (1 + log2 g) {unit} of work per start")
        return ", ".join(parts) or "none"


#: No cost at all (the simulator's default).
NO_COSTS = Costs()
