"""Worker placement: on which servers each job's workers run (Aryl §5.3, Chronus §3.4).

Build a :class:`PlacementInput` from the cluster, the jobs and the current
placement, then call any method; each returns a
:class:`~scheduling_opt.solution.Solution` whose decision is a
:class:`PlacementDecision` and whose objective is the total allocation
reward RW (Chronus Eq. 7).

Methods: :func:`best_fit_decreasing` (``bfd``), :func:`round_up_consolidation`
(``round-up``), :func:`quasi_consolidation` (``quasi``),
:func:`chronus_local_search` (``local-search``, the default),
:func:`exact` (``exact``: the arc-flow model on HiGHS), :func:`exact_cpsat`
(``exact-cpsat``: the per-server model on CP-SAT), :func:`exact_pulp`
(``exact-pulp``: an independent model on PuLP/CBC). The names
``exact_arcflow`` and ``exact_cbc`` of release 0.2 still work for one
release, with a ``DeprecationWarning``.

Examples
--------
>>> from scheduling_opt.model import Cluster, GpuType, Job, Server
>>> from scheduling_opt.placement import PlacementInput, chronus_local_search
>>> cluster = Cluster((GpuType("V100"),), (Server("n0", "V100", 8), Server("n1", "V100", 8)))
>>> sol = chronus_local_search(PlacementInput(cluster, [Job("a", 12, 12, 60.0)]))
>>> sol.objective, sol.decision.nodes_spanned
(12.0, 2)
"""

from scheduling_opt.deprecation import deprecated_names
from scheduling_opt.placement.arcflow import exact
from scheduling_opt.placement.arcflow_model import lp_bound
from scheduling_opt.placement.bfd import best_fit_decreasing, bfd_assign
from scheduling_opt.placement.bounds import upper_bound
from scheduling_opt.placement.check import check
from scheduling_opt.placement.consolidation import consolidate, round_up_consolidation
from scheduling_opt.placement.exact_cpsat import exact_cpsat
from scheduling_opt.placement.exact_pulp import exact_pulp
from scheduling_opt.placement.local_search import chronus_local_search, search_assign
from scheduling_opt.placement.model import (
    DEFAULT_SEARCH_SPACE,
    IN_USE,
    Assignment,
    PlacementDecision,
    PlacementInput,
    decide,
    total_rw,
)
from scheduling_opt.placement.quasi import (
    place_span,
    potential,
    quasi_assign,
    quasi_consolidation,
    smallest_span,
)
from scheduling_opt.placement.reward import consolidated_span, reward_table
from scheduling_opt.placement.rounding import (
    buddy_pack,
    fits_rounded,
    is_consolidation_friendly,
    largest_part,
    node_parts,
    round_up,
    rounded_demand,
)

__all__ = [
    "DEFAULT_SEARCH_SPACE",
    "IN_USE",
    "Assignment",
    "PlacementDecision",
    "PlacementInput",
    "best_fit_decreasing",
    "bfd_assign",
    "buddy_pack",
    "check",
    "chronus_local_search",
    "consolidate",
    "consolidated_span",
    "decide",
    "exact",
    "exact_cpsat",
    "exact_pulp",
    "fits_rounded",
    "is_consolidation_friendly",
    "largest_part",
    "lp_bound",
    "node_parts",
    "place_span",
    "potential",
    "quasi_assign",
    "quasi_consolidation",
    "reward_table",
    "round_up",
    "round_up_consolidation",
    "rounded_demand",
    "search_assign",
    "smallest_span",
    "total_rw",
    "upper_bound",
]

#: Names of release 0.2, served with a DeprecationWarning for one release.
__getattr__ = deprecated_names(
    __name__, globals(), {"exact_arcflow": "exact", "exact_cbc": "exact_pulp"}
)
