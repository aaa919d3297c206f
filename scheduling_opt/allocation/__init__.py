"""Aryl two-phase resource allocation for inelastic and elastic training jobs.

Given the free GPUs, the queued jobs and the running elastic jobs, decide how
many workers each job gets now so that the average job completion time (JCT)
is small (Aryl §5.1-§5.2, Appendix C-D). Every algorithm is
``fn(inp: AllocationInput, *, seed=None, time_limit=None) ->
Solution[AllocationDecision]``: :func:`auto` (the default: the
enumeration when small, else the better of two planners), :func:`two_phase`
(Aryl), the baselines :func:`fifo`, :func:`afs`, :func:`max_elastic`, and the
enumeration :func:`exact` (``exact_allocation`` in release 0.2: that name
still works for one release, with a ``DeprecationWarning``). Complexity: two-phase O(n log n +
MCKP); fifo, max-elastic O(n log n); afs O(n C); each plus the O(n^2)
simulation of its plan (refused above :data:`SIMULATION_LIMIT` = n^2 steps,
or when it cannot fit the time limit); exact O(prod_j choices_j * n^2),
refused above :data:`~scheduling_opt.allocation.exact.EXACT_LIMIT` allocations.

Examples
--------
>>> from scheduling_opt.allocation import AllocationInput, two_phase
>>> from scheduling_opt.model import Job
>>> sol = two_phase(AllocationInput((Job("A", 2, 3, 100.0), Job("B", 2, 6, 20.0)), capacity=8))
>>> dict(sol.decision.workers), sol.objective, sol.bound
({'A': 3, 'B': 5}, 62.0, 60.0)
"""

from scheduling_opt.allocation.afs import afs
from scheduling_opt.allocation.auto import auto
from scheduling_opt.allocation.capacity import free_capacity
from scheduling_opt.allocation.check import check
from scheduling_opt.allocation.exact import EXACT_LIMIT, allocation_count, exact
from scheduling_opt.allocation.fifo import fifo
from scheduling_opt.allocation.max_elastic import max_elastic
from scheduling_opt.allocation.model import (
    LINEAR,
    AllocationDecision,
    AllocationInput,
    Scaling,
)
from scheduling_opt.allocation.simulate import (
    SIMULATION_LIMIT,
    average_jct,
    lower_bound,
    plan_deadline,
    simulate_elastic,
)
from scheduling_opt.allocation.two_phase import flexible_workers, knapsack_groups, two_phase
from scheduling_opt.deprecation import deprecated_names

__all__ = [
    "EXACT_LIMIT",
    "LINEAR",
    "SIMULATION_LIMIT",
    "AllocationDecision",
    "AllocationInput",
    "Scaling",
    "afs",
    "allocation_count",
    "auto",
    "average_jct",
    "check",
    "exact",
    "fifo",
    "flexible_workers",
    "free_capacity",
    "knapsack_groups",
    "lower_bound",
    "max_elastic",
    "plan_deadline",
    "simulate_elastic",
    "two_phase",
]

#: Names of release 0.2, served with a DeprecationWarning for one release.
__getattr__ = deprecated_names(__name__, globals(), {"exact_allocation": "exact"})
