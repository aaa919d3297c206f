"""The inference cluster's load curve: how many inference servers inference needs, over time.

Aryl (EuroSys '22) §4 lets the inference scheduler decide what it lends:
idle inference servers go to training, and come back when traffic grows.
The simulator reads that demand from a :class:`LoadCurve`, a step function
``time -> demand`` sampled at increasing times (the trace's unit, minutes
for Chronus-Philly). A CSV gives it, with a header naming the unit of the
demand column:

- ``time,servers``: inference servers needed (an integer, at most the
  inference cluster's size);
- ``time,fraction``: the share of the inference cluster needed, in [0, 1]
  (scales with any cluster size).

A value holds from its time to the next sample; before the first sample the
first value holds, after the last the last.

The bundled curve (``scheduling_opt/sim/data/inference_load.csv``, the
paper's production curve is not public) is :func:`diurnal_curve` with its
defaults, and a test checks that the file equals the generator's output:

    fraction(t) = clip(m + a cos(2 pi (t - t_peak) / P) + e(t), 0, 1)

with period P = 1,440 minutes, mean m = 0.65 and amplitude a = 0.375 m, so
that the peak-to-trough ratio (m + a) / (m - a) is 2.2 (Aryl §2.1, Figure 1:
"peak-to-trough ratio ~2.2", "average utilization ~65%"); the peak at 21:00
(t_peak = 1,260; Figure 1 puts the peak at night; one sinusoid cannot also
put the trough "before dawn", it falls at 09:00); e(t) Gaussian noise of
standard deviation 0.02 from ``numpy.random.default_rng(0)``; sampled every
5 minutes (Figure 1's interval) over 14 days (the trace's span) plus one
day for the jobs that run on, and rounded to 4 decimals. Time 0 is midnight.
Complexity: reading is O(n), a lookup O(log n).
"""

from __future__ import annotations

import bisect
import math
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from scheduling_opt.errors import InvalidInstanceError
from scheduling_opt.sim.workload import data_path

#: Bundled curve's file name in ``scheduling_opt/sim/data/``.
BUNDLED_CURVE = "inference_load.csv"
_UNITS = ("servers", "fraction")


@dataclass(frozen=True, slots=True)
class LoadCurve:
    """A step function ``time -> demand``; ``unit`` is ``servers`` or ``fraction``.

    Examples
    --------
    >>> c = LoadCurve((0.0, 60.0), (0.5, 0.9), "fraction")
    >>> c.needed(30.0, 10), c.needed(60.0, 10), c.needed(-5.0, 10)
    (5, 9, 5)
    >>> c.next_change(0.0), c.next_change(60.0)
    (60.0, inf)
    """

    times: tuple[float, ...]
    values: tuple[float, ...]
    unit: str = "fraction"

    def __post_init__(self) -> None:
        if self.unit not in _UNITS:
            raise InvalidInstanceError(
                "curve.unit", f"must be servers or fraction, not {self.unit!r}"
            )
        if not self.times or len(self.times) != len(self.values):
            raise InvalidInstanceError("curve", "needs at least one (time, value) sample")
        for i, (t, v) in enumerate(zip(self.times, self.values, strict=True)):
            if not (math.isfinite(t) and math.isfinite(v)) or v < 0:
                raise InvalidInstanceError(
                    f"curve[{i}]", f"needs finite time and value >= 0, got {t}, {v}"
                )
            if i and not t > self.times[i - 1]:
                raise InvalidInstanceError(f"curve[{i}].time", "times must be strictly increasing")
            if self.unit == "fraction" and v > 1:
                raise InvalidInstanceError(f"curve[{i}].fraction", f"must be in [0, 1], got {v}")
            if self.unit == "servers" and v != int(v):
                raise InvalidInstanceError(f"curve[{i}].servers", f"must be an integer, got {v}")

    def value(self, t: float) -> float:
        """The demand in force at ``t`` (O(log n))."""
        i = bisect.bisect_right(self.times, t) - 1
        return self.values[max(i, 0)]

    def needed(self, t: float, servers: int) -> int:
        """Inference servers needed at ``t`` out of ``servers`` (fractions rounded up)."""
        v = self.value(t)
        if self.unit == "fraction":
            return min(servers, math.ceil(v * servers - 1e-9))
        if v > servers:
            raise InvalidInstanceError(
                "curve.servers", f"needs {v:g} servers, the inference cluster has {servers}"
            )
        return int(v)

    def peak(self, start: float, end: float, servers: int) -> int:
        """The most servers needed at any time in ``[start, end)``."""
        lo = max(bisect.bisect_right(self.times, start) - 1, 0)
        hi = max(bisect.bisect_left(self.times, end), lo + 1)
        return max(self.needed(self.times[i] if i > lo else start, servers) for i in range(lo, hi))

    def next_change(self, t: float) -> float:
        """The first sample time after ``t`` (``inf`` after the last)."""
        i = bisect.bisect_right(self.times, t)
        return self.times[i] if i < len(self.times) else math.inf


def diurnal_curve(
    *,
    days: int = 15,
    step: float = 5.0,
    mean: float = 0.65,
    ratio: float = 2.2,
    peak_minute: float = 1260.0,
    noise: float = 0.02,
    seed: int = 0,
) -> LoadCurve:
    """The synthetic diurnal inference demand (module docstring: the rule).

    Parameters
    ----------
    days : int
        Length in days (1,440 minutes each).
    step : float
        Sampling interval in minutes.
    mean, ratio : float
        Mean fraction and peak-to-trough ratio of the sinusoid.
    peak_minute : float
        Minute of the day of the peak.
    noise : float
        Standard deviation of the Gaussian noise.
    seed : int
        Seed of the noise.

    Returns
    -------
    LoadCurve
        Fractions of the inference cluster, rounded to 4 decimals.

    Examples
    --------
    >>> c = diurnal_curve(days=1, noise=0.0)
    >>> len(c.times), c.value(1260.0), c.value(540.0)
    (288, 0.8938, 0.4062)
    """
    n = round(days * 1440.0 / step)
    t = np.arange(n, dtype=np.float64) * step
    amplitude = mean * (ratio - 1.0) / (ratio + 1.0)
    wave = mean + amplitude * np.cos(2.0 * np.pi * (t - peak_minute) / 1440.0)
    wave = wave + np.random.default_rng(seed).normal(0.0, noise, n)
    values = np.round(np.clip(wave, 0.0, 1.0), 4)
    return LoadCurve(tuple(float(x) for x in t), tuple(float(v) for v in values), "fraction")


def load_curve(path: str | Path | None = None) -> LoadCurve:
    """A load curve from a CSV file (None: the bundled curve); errors name ``file:line``.

    Examples
    --------
    >>> c = load_curve()
    >>> c.unit, len(c.times), c.times[1]
    ('fraction', 4320, 5.0)
    """
    p = Path(path) if path is not None else data_path(BUNDLED_CURVE)
    try:
        lines = p.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as e:
        raise InvalidInstanceError(str(p), f"cannot read the load curve: {e}") from None
    if not lines:
        raise InvalidInstanceError(
            f"{p}:1", "empty file; expected a header time,servers or time,fraction"
        )
    header = [h.strip() for h in lines[0].split(",")]
    if len(header) != 2 or header[0] != "time" or header[1] not in _UNITS:
        raise InvalidInstanceError(
            f"{p}:1", f"header must be time,servers or time,fraction, got {lines[0]!r}"
        )
    times: list[float] = []
    values: list[float] = []
    for n, line in enumerate(lines[1:], start=2):
        if not line.strip():
            continue
        cells = line.split(",")
        if len(cells) != 2:
            raise InvalidInstanceError(f"{p}:{n}", f"expected 2 columns, got {len(cells)}")
        try:
            t, v = float(cells[0]), float(cells[1])
        except ValueError:
            raise InvalidInstanceError(f"{p}:{n}", f"not a number: {line!r}") from None
        times.append(t)
        values.append(v)
    try:
        return LoadCurve(tuple(times), tuple(values), header[1])
    except InvalidInstanceError as e:
        raise InvalidInstanceError(f"{p}: {e.path}", e.reason) from None
