"""What the parts of the Chronus policy share: the guaranteed jobs, the term's selection, the counters.

The admission adds guaranteed jobs, the term selection demotes them and
chooses which hold the term, the scheduling loops read both; each part owns
the rest of its state. :class:`Ledger` is that shared part, passed
explicitly to each; :class:`Tally` is the term selection's record (terms
solved, proven, solver seconds, reward per term), kept by whichever
solver selects the term. Plain data: O(1) per access.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

__all__ = ["COUNTERS", "Ledger", "Tally"]

#: The run's counters, in the order :meth:`Chronus.stats` reports them.
COUNTERS = (
    "admitted",
    "rejected",
    "undecided",
    "admitted_quick",
    "demoted",
    "placement_calls",
    "spread_starts",
    "consolidated_moves",
    "lowest",
    "overran",
    "forced",
    "late_terms",
    "selection_fallbacks",
    "frozen",
)


@dataclass(slots=True)
class Ledger:
    """The state the admission, the term selection and the scheduling loops share.

    Attributes
    ----------
    guaranteed : set of int
        Indices of the admitted SLO jobs the lease still serves.
    selected : set of int
        Jobs holding the current term (the last selection's term 0).
    select_order : list of int
        The order the last selection starts its jobs in (the artifact's
        ``should_run_jobs``; empty under the library's solvers).
    cache : dict of int to list of int
        Each guaranteed job's reserved terms (absolute term indices) from
        the last selection: the artifact's ``cache_solution``, which its
        batch admission and its frozen rows read.
    deadline : dict of int to float
        The absolute deadline the artifact's queue checks for an admitted
        job: its last step's, down to a term boundary.
    unaccepted : int
        The artifact's ``number_of_accepted``: the unguaranteed jobs at the
        last selection's end plus the SLO arrivals refused since; its
        selection minimizes term 0's GPUs while it is > 0.
    counts : dict of str to int
        The run's counters (:data:`COUNTERS`).

    Examples
    --------
    >>> ledger = Ledger()
    >>> ledger.counts["admitted"] += 1
    >>> ledger.counts["admitted"], len(ledger.counts) == len(COUNTERS)
    (1, True)
    """

    guaranteed: set[int] = field(default_factory=set)
    selected: set[int] = field(default_factory=set)
    select_order: list[int] = field(default_factory=list)
    cache: dict[int, list[int]] = field(default_factory=dict)
    deadline: dict[int, float] = field(default_factory=dict)
    unaccepted: int = 0
    counts: dict[str, int] = field(default_factory=lambda: dict.fromkeys(COUNTERS, 0))


@dataclass(slots=True)
class Tally:
    """The term selection's record: terms solved, proven optimal, fallbacks, seconds, rewards.

    ``rewards``: (objective, proven bound or NaN) per solved term.

    Examples
    --------
    >>> t = Tally()
    >>> t.record(140.0, 140.0, optimal=True)
    >>> t.record(100.0, math.nan, optimal=False)
    >>> t.terms, t.proven, t.reward(), math.isnan(t.bound())
    (2, 1, 240.0, True)
    """

    terms: int = 0
    proven: int = 0
    fallbacks: int = 0
    solver_seconds: float = 0.0
    rewards: list[tuple[float, float]] = field(default_factory=list)

    def record(self, objective: float, bound: float, *, optimal: bool) -> None:
        """One solved term: its objective, its bound (NaN: none proven), proven or not."""
        self.terms += 1
        self.proven += optimal
        self.rewards.append((objective, bound))

    def reward(self) -> float:
        """The selections' total objective."""
        return sum(r for r, _ in self.rewards)

    def bound(self) -> float:
        """The total of the proven bounds, NaN when a term has none."""
        bounds = [b for _, b in self.rewards if not math.isnan(b)]
        return sum(bounds) if len(bounds) == len(self.rewards) else math.nan
