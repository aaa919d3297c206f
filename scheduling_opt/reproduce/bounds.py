"""How much room the offline bounds leave each claim of a reproduction.

For each verdict row whose metric has a bound (mean JCT, makespan and wDMR
from below, utilization from above; :mod:`scheduling_opt.sim.bounds`),
at the point where the row was judged: the bound (the mean over the
point's workloads, one per seed: a mean of lower bounds bounds the mean),
the claim's policy as a multiple of it, and the largest claim any covered
policy could make against the same baseline there: ``baseline / bound``
for an "x lower" claim, ``(baseline - bound) / baseline`` for a
reduction. A paper's number above that is out of reach on our trace and
cluster, whatever the policy.
"""

from __future__ import annotations

from collections.abc import Sequence

from scheduling_opt.reproduce.grid import ClaimRow, Point
from scheduling_opt.sim.bounds.outputs import BOUNDED, group_bounds, room
from scheduling_opt.sim.bounds.solve import Bounds

_FIELD = {
    "jct_mean": "jct_mean_lower",
    "makespan": "makespan_lower",
    "utilization": "utilization_upper",
    "wdmr": "wdmr_lower",
}


def _value(b: Bounds, metric: str) -> float:
    bound = getattr(b, _FIELD[metric])
    return float(bound.value)


def room_table(rows: Sequence[ClaimRow], grid: Sequence[Point]) -> str:
    """The room each bounded claim has (markdown; empty when no row has a bound).

    Examples
    --------
    >>> room_table([], [])
    ''
    """
    at = {p.label: p for p in grid}
    cache: dict[str, list[Bounds]] = {}
    lines = []
    for r in rows:
        c = r.claim
        point = at.get(r.where)
        if c.metric not in BOUNDED or point is None:
            continue
        if point.label not in cache:
            cache[point.label] = [g.bounds for g in group_bounds(point.results)]
        found = cache[point.label]
        if not found:
            continue
        excluded = dict(found[0].envelope.excluded)
        if c.policy in excluded:
            lines.append(f"| {c.what} | {r.where} | | | not covered: {excluded[c.policy]} | |")
            continue
        bound = sum(_value(b, c.metric) for b in found) / len(found)
        metrics = point.metrics
        side = BOUNDED[c.metric]
        ours = metrics.get(c.policy, {}).get(c.metric)
        best = ""
        base = metrics.get(r.baseline, {}).get(c.metric)
        if c.kind != "value" and base is not None and side == "lower":
            if c.kind == "ratio":
                best = f"{base / bound:.3g}x" if bound > 0 else "unbounded"
            elif base > 0:
                best = f"-{100.0 * (base - bound) / base:.1f}%"
            best += f" (vs {r.baseline}; paper {c.show(c.paper)})"
        shown = f"{ours:.4g}" if ours is not None else ""
        lines.append(
            f"| {c.what} | {r.where} | {c.policy}: {shown} | {'>=' if side == 'lower' else '<='} "
            f"{bound:.4g} | {room(ours, bound, side)} | {best} |"
        )
    if not lines:
        return ""
    head = [
        "| claim | where | ours | bound | ours against the bound | most any covered policy "
        "could claim |",
        "|---|---|---|---|---|---|",
    ]
    return "\n".join(head + lines) + "\n"
