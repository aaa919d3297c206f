"""Multiple-choice knapsack with a capacity per resource (MMKP), e.g. per GPU type.

Items come in groups (jobs); an item (a configuration: a GPU type and a
worker count) has a value and an integer weight per resource. Pick at most
one item per group so that every resource's weights stay within its
capacity; a group that takes none earns its ``none`` value (default 0; Sia's
penalty for an unallocated job is a negative one). Maximize the total.
Sia (SOSP '23 §3.3) solves this problem every round over its GPU types;
with one resource it is the MCKP of :mod:`scheduling_opt.mckp`, and every
method here then calls its core (:func:`scheduling_opt.mckp.core`), except
the independent PuLP model.

Every algorithm is ``fn(inp: Mmkp, *, seed=None, time_limit=None) ->
Solution[MmkpDecision]``: :func:`exact` (the default: Lagrangian bound,
reduced-cost fixing, then HiGHS on the items left; exact), :func:`lagrange`
(Lagrangian relaxation at the LP relaxation's duals, with repair, its
bound tightened by MCKP-core subproblems; fast, with a proven bound) and :func:`exact_pulp` (the full
model in PuLP/CBC, written independently). :func:`job_knapsack` builds an
instance from jobs, a cluster with several GPU types and an optional
throughput matrix. Complexity: ``lagrange`` one LP (polynomial) and
O(m R) per evaluation of the relaxation (m items, R resources) plus R
MCKP-core solves; ``exact`` that plus an MILP
on the survivors, exponential in the worst case.

Examples
--------
>>> from scheduling_opt.mmkp import Mmkp, exact, lagrange
>>> p = Mmkp.from_groups(
...     [[((1, 0), 1.0), ((2, 0), 1.8), ((0, 2), 0.9)], [((2, 0), 2.0), ((0, 2), 1.0)]],
...     capacity=(2, 2),
...     none=(-1.0, -1.0),
... )
>>> sol = exact(p)
>>> sol.status.value, sol.objective, sol.decision.choice, sol.decision.weight
('optimal', 2.9, (2, 0), (2, 2))
"""

from scheduling_opt.mmkp._highs import exact
from scheduling_opt.mmkp._lagrange import lagrange
from scheduling_opt.mmkp._pulp import exact_pulp
from scheduling_opt.mmkp.build import Config, JobKnapsack, job_knapsack
from scheduling_opt.mmkp.checker import check
from scheduling_opt.mmkp.model import (
    TOLERANCE,
    GroupsLike,
    Mmkp,
    MmkpDecision,
    as_mmkp,
    evaluate,
    to_mckp,
)

__all__ = [
    "TOLERANCE",
    "Config",
    "GroupsLike",
    "JobKnapsack",
    "Mmkp",
    "MmkpDecision",
    "as_mmkp",
    "check",
    "evaluate",
    "exact",
    "exact_pulp",
    "job_knapsack",
    "lagrange",
    "to_mckp",
]
