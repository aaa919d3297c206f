"""Speed of a running job: placement spread, GPU type, elastic size.

``speed = spread x compute x size``, where

- spread: ``table(model, g, k) / table(model, g, k_min)`` with ``k`` the
  servers the job spans and ``k_min = ceil(g / K)`` the fewest it could span,
  read from a :class:`~scheduling_opt.scaling.TableModel` (the Chronus
  artifact's ``model_info.json``): 1 when the job is as consolidated as it can
  be, less when a policy spreads it;
- compute: the slowest of its servers' compute factors (V100 1.0, T4 0.25,
  Aryl Appendix E): a synchronous data-parallel job runs at its slowest GPU;
- size: for an elastic job running on ``n`` GPUs instead of its nominal
  ``g``, the ratio of its scaling curve at ``n`` and ``g`` (linear when the
  job gives no curve).
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Sequence
from dataclasses import dataclass

from scheduling_opt.scaling import TableModel
from scheduling_opt.sim.cluster import Placement
from scheduling_opt.sim.workload import SimJob, data_path


def bundled_table() -> TableModel:
    """The Chronus artifact's placement sensitivity table (bundled ``model_info.json``).

    Examples
    --------
    >>> round(bundled_table().speed("vgg16", 8, 2), 3)
    0.572
    """
    raw = json.loads(data_path("model_info.json").read_text(encoding="utf-8"))
    table = {
        m: {int(n): {int(k): float(v) for k, v in row.items()} for n, row in by_n.items()}
        for m, by_n in raw.items()
    }
    return TableModel(table)


def scaling_at(points: Sequence[tuple[int, float]], n: int) -> float:
    """A job's scaling curve at ``n`` GPUs: linear interpolation, clamped at the ends.

    Below the first point the curve is a line through the origin; past the
    last it stays flat. O(P log P) for P points.

    Parameters
    ----------
    points : sequence of (int, float)
        (GPUs, throughput) pairs of the curve, any order, GPUs >= 1.
    n : int
        GPUs to read the curve at (>= 1).

    Returns
    -------
    float
        The throughput at ``n``.

    Examples
    --------
    >>> pts = [(1, 1.0), (4, 3.0)]
    >>> scaling_at(pts, 2), scaling_at(pts, 8)
    (1.6666666666666665, 3.0)
    """
    pts = sorted(points)
    if n <= pts[0][0]:
        return pts[0][1] * n / pts[0][0]
    for (a, va), (b, vb) in itertools.pairwise(pts):
        if n <= b:
            return va + (vb - va) * (n - a) / (b - a)
    return pts[-1][1]


@dataclass(frozen=True, slots=True)
class SpeedModel:
    """The engine's speed function; ``table`` None makes placement spread free.

    Examples
    --------
    >>> from scheduling_opt.sim.workload import SimJob
    >>> m = SpeedModel(bundled_table(), gpus_per_server=8)
    >>> job = SimJob("1", 0.0, 8, 10.0, model="vgg16")
    >>> m.speed(job, ((0, 8),), (1.0, 1.0))
    1.0
    >>> round(m.speed(job, ((0, 4), (1, 4)), (1.0, 1.0)), 3)
    0.572
    """

    table: TableModel | None
    gpus_per_server: int

    def speed(self, job: SimJob, placement: Placement, compute: Sequence[float]) -> float:
        """Speed of ``job`` on ``placement``; ``compute[s]`` is server s's factor."""
        n = 0
        slowest = float("inf")
        for s, g in placement:
            n += g
            c = compute[s]
            if c < slowest:
                slowest = c
        value = slowest
        nodes = len(placement)
        table = self.table
        if table is not None and nodes > 1 and job.model is not None and table.knows(job.model):
            fewest = -(-n // self.gpus_per_server)
            if nodes > fewest:
                value *= table.speed(job.model, n, nodes) / table.speed(job.model, n, fewest)
        if n != job.gpus:
            if job.scaling:
                value *= scaling_at(job.scaling, n) / scaling_at(job.scaling, job.gpus)
            else:
                value *= n / job.gpus
        return value
