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
"reproduced" by 1.01x, a 1% gain).

A level claim (``value``: a utilization, a preemption ratio) is judged by
its level, within a factor of 2 of the paper's. When the paper also gives
its baseline's level (Aryl Table 5: Aryl's training GPU usage 0.86 against
the Baseline's 0.72), the paper's number has a *direction* too, above or
below that baseline, and a *size*, its difference from it (0.14), and ours
is judged against our own baseline as well:

- **reproduced**: ours on the paper's side of our baseline, our level
  within a factor of 2 of the paper's, and our difference from our
  baseline within a factor of 2 of the paper's difference;
- **direction only**: on the paper's side, the level or the difference
  outside its band (Gandiva's usage 0.65154 against our Baseline's
  0.65152: above it, by 0.00002 where the paper's is 0.07);
- **not reproduced**: on the other side of our baseline, or equal to it
  (Aryl's usage 0.643 against our Baseline's 0.652: the paper's 0.86 is
  above its Baseline's 0.72), whatever the level;
- **no data**: our baseline's run is missing.

A level claim without a baseline level is reproduced within the band, else
not. Written once here so that every paper is judged the same way (issues
23, 24, 38).
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


def judge(
    kind: str,
    paper: float,
    ours: float | None,
    *,
    paper_base: float | None = None,
    base: float | None = None,
) -> Verdict:
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
    paper_base : float, optional
        A level claim's baseline level in the paper: the claim then has the
        direction of ``paper - paper_base`` (see the module docstring).
    base : float, optional
        Our baseline's level, the same metric (None with ``paper_base``
        given: no data).

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

    A level claim above its baseline (paper 0.86 against 0.72) below ours:

    >>> judge("value", 0.86, 0.643, paper_base=0.72, base=0.652).value
    'not reproduced'
    >>> judge("value", 0.86, 0.75, paper_base=0.72, base=0.652).value
    'reproduced'
    >>> judge("value", 0.86, 0.70, paper_base=0.72, base=0.652).value  # +0.048 < 0.14 / 2
    'direction only'
    >>> judge("value", 0.102, 0.0036, paper_base=0.187, base=0.0082).value
    'direction only'
    """
    if ours is None or math.isnan(ours):
        return Verdict.NO_DATA
    if kind == "value":
        return _judge_level(paper, ours, paper_base, base)
    want = _direction(kind, paper)
    if want == 0 or _direction(kind, ours) != want:
        return Verdict.NOT_REPRODUCED
    inside = within(size(kind, paper), size(kind, ours))
    return Verdict.REPRODUCED if inside else Verdict.DIRECTION


def _judge_level(
    paper: float, ours: float, paper_base: float | None, base: float | None
) -> Verdict:
    """A level claim: its side of the baseline (when the paper gives one), then its level."""
    inside = within(paper, ours)
    if paper_base is None:
        return Verdict.REPRODUCED if inside else Verdict.NOT_REPRODUCED
    if base is None or math.isnan(base):
        return Verdict.NO_DATA
    want = (paper > paper_base) - (paper < paper_base)
    if want == 0:  # the paper's level equals its baseline's: the level alone decides
        return Verdict.REPRODUCED if inside else Verdict.NOT_REPRODUCED
    if (ours > base) - (ours < base) != want:
        return Verdict.NOT_REPRODUCED
    if inside and within(paper - paper_base, ours - base):
        return Verdict.REPRODUCED
    return Verdict.DIRECTION


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
