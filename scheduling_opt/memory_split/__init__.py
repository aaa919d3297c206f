"""AntMan GPU-memory split among opportunistic jobs sharing one GPU.

The memory left by a GPU's resource-guarantee job is split, in chunks, among
the opportunistic jobs co-located on it to maximize the sum of their
normalized speeds, each a piecewise-linear slowdown curve of the memory it
gets (AntMan §3.3, Figure 10). Every algorithm is ``fn(inp:
MemorySplitInput, *, seed=None, time_limit=None) ->
Solution[MemorySplitDecision]``: :func:`exact` (MCKP DP, the default),
:func:`exact_highs` (the same MCKP on HiGHS; ``exact_milp`` in release 0.2, a
deprecated alias for one release), :func:`exact_pulp` (an
independent piecewise-linear MILP on CBC) and :func:`greedy` (AntMan's
trial-and-error). Complexity, n jobs, C spare chunks, K <= C chunks per job:
greedy O(C log n); exact O(n K C); the MILPs exponential in the worst case.

Examples
--------
>>> from scheduling_opt.memory_split import MemorySplitInput, OpportunisticJob, PRESETS, exact
>>> jobs = (
...     OpportunisticJob("sr", 10.0, PRESETS["sr"]),
...     OpportunisticJob("vgg", 8.0, PRESETS["vgg"]),
... )
>>> sol = exact(MemorySplitInput(16.0, jobs, guarantee_gb=8.0, chunk_gb=1.0))
>>> sol.status.value, dict(sol.decision.chunks)
('optimal', {'sr': 4, 'vgg': 4})
"""

from scheduling_opt.deprecation import deprecated_names
from scheduling_opt.memory_split.check import check
from scheduling_opt.memory_split.exact import exact, to_mckp, upper_bound
from scheduling_opt.memory_split.exact_highs import exact_highs
from scheduling_opt.memory_split.exact_pulp import exact_pulp
from scheduling_opt.memory_split.greedy import greedy
from scheduling_opt.memory_split.model import (
    MAX_CHUNKS,
    PRESETS,
    Curve,
    MemorySplitDecision,
    MemorySplitInput,
    OpportunisticJob,
    check_curve,
)

__all__ = [
    "MAX_CHUNKS",
    "PRESETS",
    "Curve",
    "MemorySplitDecision",
    "MemorySplitInput",
    "OpportunisticJob",
    "check",
    "check_curve",
    "exact",
    "exact_highs",
    "exact_pulp",
    "greedy",
    "to_mckp",
    "upper_bound",
]

#: Names of release 0.2, served with a DeprecationWarning for one release.
__getattr__ = deprecated_names(__name__, globals(), {"exact_milp": "exact_highs"})
