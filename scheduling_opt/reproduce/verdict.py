"""A verdict per claim: reproduced, direction only, or not reproduced.

A paper's claim has a *direction* (ours better than the baseline, or
worse) and a *size*, the effect measured from "no difference": for a
reduction, the percentage itself (-89.5% is a size of 89.5); for a factor
"x lower", the factor minus 1 (14.7x is a size of 13.7, 1.76x of 0.76). The
rule, the same for every paper:

- **reproduced**: the same direction, and our size within a factor of 2 of
  the paper's (14.7x against ours 7.85x-28.4x; 1.76x against 1.38x-2.52x;
  -89.5% against -44.75% to -179%);
- **direction only**: the same direction, the size outside that band;
- **not reproduced**: the other direction (or no change at all);
- **no data**: a run is missing, or a ratio divides by zero with nothing to
  compare.

Why the factor minus 1 and not the factor as printed: compared as printed,
a factor near 1 would make the band absurdly wide (1.76x would be
"reproduced" by 1.01x, a 1% gain). A value claim (a utilization, a
preemption ratio) has no direction: it is reproduced when within a factor
of 2 of the paper's value, else not. Written once here so that every paper
is judged the same way (issues 23, 24).
"""

from __future__ import annotations

import enum
import math

#: The size band of "reproduced": ours within ``[paper / BAND, paper x BAND]``.
BAND = 2.0


class Verdict(enum.Enum):
    """A claim's verdict (see the module docstring for the rule)."""

    REPRODUCED = "reproduced"
    DIRECTION = "direction only"
    NOT_REPRODUCED = "not reproduced"
    NO_DATA = "no data"


def size(kind: str, value: float) -> float:
    """The effect's size: a reduction's percent, a factor minus 1, a value itself.

    Examples
    --------
    >>> size("ratio", 14.7), size("reduction", 89.5), size("value", 0.86)
    (13.7, 89.5, 0.86)
    """
    return value - 1.0 if kind == "ratio" else value


def _direction(kind: str, value: float) -> int:
    """+1, -1 or 0: which way ``value`` points for a claim of ``kind``."""
    x = size(kind, value)
    return (x > 0) - (x < 0)


def within(paper: float, ours: float, band: float = BAND) -> bool:
    """Whether size ``ours`` is within a factor ``band`` of size ``paper`` (same sign).

    Examples
    --------
    >>> within(13.7, 6.85), within(13.7, 6.8), within(-89.5, -44.75), within(2.0, -2.0)
    (True, False, True, False)
    """
    if paper == 0.0 or math.isnan(ours) or math.isinf(ours):
        return False
    ratio = ours / paper
    return 1.0 / band <= ratio <= band


def judge(kind: str, paper: float, ours: float | None) -> Verdict:
    """The verdict of our number ``ours`` against the paper's ``paper`` for a ``kind`` claim.

    Parameters
    ----------
    kind : {"reduction", "ratio", "value"}
        The claim's kind (:class:`~scheduling_opt.reproduce.papers.Claim`).
    paper : float
        The paper's number as printed (percent for a reduction, a factor for
        a ratio).
    ours : float or None
        Ours, computed the same way (None: a run is missing).

    Returns
    -------
    Verdict

    Examples
    --------
    >>> judge("ratio", 14.7, 12.0).value, judge("ratio", 14.7, 1.68).value
    ('reproduced', 'direction only')
    >>> judge("ratio", 1.76, 1.01).value, judge("ratio", 1.76, 1.5).value
    ('direction only', 'reproduced')
    >>> judge("reduction", 89.5, -3.0).value, judge("ratio", 2.05, None).value
    ('not reproduced', 'no data')
    >>> judge("value", 0.86, 0.80).value, judge("value", 0.10, 0.30).value
    ('reproduced', 'not reproduced')
    """
    if ours is None or math.isnan(ours):
        return Verdict.NO_DATA
    if kind == "value":
        return Verdict.REPRODUCED if within(paper, ours) else Verdict.NOT_REPRODUCED
    want = _direction(kind, paper)
    if want == 0 or _direction(kind, ours) != want:
        return Verdict.NOT_REPRODUCED
    inside = within(size(kind, paper), size(kind, ours))
    return Verdict.REPRODUCED if inside else Verdict.DIRECTION


def same_direction(kind: str, paper: float, ours: float) -> bool:
    """Whether ``ours`` points the paper's way (a value claim: always True).

    Examples
    --------
    >>> same_direction("ratio", 2.05, 1.1), same_direction("reduction", 45.6, -2.0)
    (True, False)
    """
    if kind == "value":
        return True
    want = _direction(kind, paper)
    return want != 0 and _direction(kind, ours) == want
