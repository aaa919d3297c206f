"""The papers' policies as simulator policies: small adapters to the solver packages.

Each module turns the engine's read-only :class:`~scheduling_opt.sim.policy.View`
into the typed input of one of the library's solvers, calls it, and turns its
decision back into a :class:`~scheduling_opt.sim.policy.Decision`. The engine
knows none of them; :mod:`scheduling_opt.sim.registry` makes them by name.

- :mod:`.elastic_tiresias`: EDL §5.1 Elastic-Tiresias (and plain Tiresias
  through the same step), over :func:`scheduling_opt.policies.edl.elastic_tiresias_step`;
- :mod:`.chronus`: Chronus' lease terms (SoCC '21 §3.3), over
  :func:`scheduling_opt.lease.exact` and :func:`scheduling_opt.lease.greedy`.

A policy may also offer ``stats() -> dict[str, float]`` (solver seconds,
terms, rules used): :func:`~scheduling_opt.sim.sweep.run_config` records it
in ``RunResult.extra``.
"""

from scheduling_opt.sim.policies.chronus import Chronus
from scheduling_opt.sim.policies.elastic_tiresias import EdlTiresias

__all__ = ["Chronus", "EdlTiresias"]
