"""The papers' policies as simulator policies: small adapters to the solver packages.

Each module turns the engine's read-only :class:`~scheduling_opt.sim.policy.View`
into the typed input of one of the library's solvers, calls it, and turns its
decision back into a :class:`~scheduling_opt.sim.policy.Decision`. The engine
knows none of them; :mod:`scheduling_opt.sim.registry` makes them by name.

- :mod:`.elastic_tiresias`: EDL §5.1 Elastic-Tiresias (and plain Tiresias
  through the same step), over :func:`scheduling_opt.policies.edl.elastic_tiresias_step`;
- :mod:`.chronus`: Chronus' admission control and lease terms (SoCC '21
  §3.3), over :func:`scheduling_opt.lease.admit_jobs`,
  :func:`scheduling_opt.lease.exact` and :func:`scheduling_opt.lease.greedy`,
  with :mod:`.chronus_placement` (§3.4: round-up consolidation and local
  search over :mod:`scheduling_opt.placement`);
- :mod:`.antman`: AntMan's guarantee / opportunistic jobs (OSDI '20 §3.3)
  over :func:`scheduling_opt.policies.antman.antman_step` and
  :func:`scheduling_opt.memory_split.exact`, on the engine's GPU sharing.
- :mod:`.aryl`: Aryl's capacity loaning and elastic scaling (EuroSys '22
  §4-§5): inference servers lent from a load curve (:mod:`.aryl_load`),
  returned by :mod:`scheduling_opt.reclaim` (Algorithm 1 and the
  baselines), jobs sized by :func:`scheduling_opt.allocation.two_phase` or
  :func:`scheduling_opt.allocation.afs` and placed by
  :func:`scheduling_opt.placement.bfd_assign` (:mod:`.aryl_pools`).

A policy may also offer ``stats() -> dict[str, float]`` (solver seconds,
terms, rules used): :func:`~scheduling_opt.sim.sweep.run_config` records it
in ``RunResult.extra``.
"""

from scheduling_opt.sim.policies.antman import AntMan
from scheduling_opt.sim.policies.chronus import Chronus
from scheduling_opt.sim.policies.elastic_tiresias import EdlTiresias

__all__ = ["AntMan", "Chronus", "EdlTiresias"]
