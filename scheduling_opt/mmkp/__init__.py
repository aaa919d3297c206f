"""Multiple-choice knapsack with a capacity per resource (MMKP), e.g. per GPU type.

Items come in groups (jobs); an item (a configuration: a GPU type and a GPU
count) has a value and an integer weight per resource. Pick at most one
item per group so that every resource's weights stay within its capacity;
a group that takes none earns its ``none`` value. Sia (SOSP '23 §3.3)
solves this problem every round over its GPU types; with one resource it
is the MCKP of :mod:`scheduling_opt.mckp`.
"""

from scheduling_opt.mmkp._lagrange import lagrange
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
    "GroupsLike",
    "Mmkp",
    "MmkpDecision",
    "as_mmkp",
    "evaluate",
    "lagrange",
    "to_mckp",
]
