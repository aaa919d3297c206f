"""Close matches for a mistyped name: the "did you mean" of every error that names one.

One rule for problem, method, size, paper and option names: the known
names that ``difflib.get_close_matches`` finds at a similarity of at
least :data:`CUTOFF` (at most :data:`LIMIT` of them, the closest first).
O(k * n^2) for k known names of length n.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable

#: Smallest similarity (difflib's ratio, 0..1) of a suggestion.
CUTOFF = 0.6
#: Most suggestions shown.
LIMIT = 3


def close_matches(name: str, known: Iterable[str]) -> list[str]:
    """The known names closest to ``name`` (similarity >= :data:`CUTOFF`), closest first.

    A name that differs only in case, or in ``-`` against ``_``, is the one
    match (``exact-pulp`` for ``EXACT_PULP``).

    Examples
    --------
    >>> close_matches("tiresais", ["fifo", "tiresias", "srtf"])
    ['tiresias']
    >>> close_matches("EXACT_PULP", ["exact", "exact-pulp"])
    ['exact-pulp']
    >>> close_matches("zzz", ["fifo"])
    []
    """
    names = list(dict.fromkeys(known))

    def normal(text: str) -> str:
        return text.lower().replace("_", "-")

    same = [k for k in names if normal(k) == normal(name) and k != name]
    if same:  # only the spelling differs: that is the name meant
        return same[:LIMIT]
    rest = difflib.get_close_matches(normal(name), [normal(k) for k in names], LIMIT, CUTOFF)
    by_normal = {normal(k): k for k in names}
    return [by_normal[r] for r in rest if by_normal[r] != name]


def did_you_mean(name: str, known: Iterable[str]) -> str:
    """``"; did you mean 'x'?"`` (or ``'x' or 'y'``) for a mistyped ``name``; ``""`` if none is close.

    Examples
    --------
    >>> did_you_mean("reclam", ["mckp", "reclaim"])
    "; did you mean 'reclaim'?"
    >>> did_you_mean("exact-pul", ["exact", "exact-pulp", "exact-cpsat"])
    "; did you mean 'exact-pulp', 'exact' or 'exact-cpsat'?"
    >>> did_you_mean("zzz", ["mckp"])
    ''
    """
    found = close_matches(name, known)
    if not found:
        return ""
    shown = [repr(f) for f in found]
    if len(shown) > 1:
        shown = [", ".join(shown[:-1]), shown[-1]]
    return "; did you mean " + " or ".join(shown) + "?"
