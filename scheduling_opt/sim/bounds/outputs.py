"""The bounds beside the runs: a bound row and each run's distance to it, for ``simulate`` and ``reproduce``.

Runs are grouped by what their bounds depend on (:func:`group_bounds`:
the workload's hash, the cluster, ``skip``); each group's bounds cover the
policies of its runs (:func:`~scheduling_opt.sim.bounds.envelope.envelope_of`
over their names and parameters), computed once per group.
:func:`bound_table` is the markdown section printed under the metrics
table: a ``bound`` row, then per run its mean JCT and makespan as
multiples of their lower bounds ("x above the bound"), its utilization as
a share of the upper bound, and its wDMR above its lower bound. A run the
bounds do not cover (its policy excluded, or, for the utilization, a run
busy longer than the workload's GPU time at speed 1) says so in its cells.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from scheduling_opt.sim.bounds.envelope import envelope_of
from scheduling_opt.sim.bounds.makespan import covers_utilization
from scheduling_opt.sim.bounds.solve import Bounds, offline_bounds
from scheduling_opt.sim.sweep import RunResult
from scheduling_opt.sim.workload import Workload

#: The metrics with a bound: metric key -> which side the bound is on.
BOUNDED = {"jct_mean": "lower", "makespan": "lower", "utilization": "upper", "wdmr": "lower"}
#: Bounds kept per process (the table and report.md of one command share them).
CACHED = 32
_CACHE: dict[tuple[object, ...], Bounds] = {}


@dataclass(frozen=True, slots=True)
class Group:
    """Runs that share one set of bounds, and those bounds."""

    results: tuple[RunResult, ...]
    bounds: Bounds


def _key(r: RunResult) -> tuple[object, ...]:
    c = r.config
    return (r.workload_digest, c.cluster().servers, c.skip)


def group_bounds(results: Sequence[RunResult]) -> list[Group]:
    """The runs grouped by workload, cluster and ``skip``, each group with its bounds.

    Examples
    --------
    >>> group_bounds([])
    []
    """
    groups: dict[tuple[object, ...], list[RunResult]] = {}
    for r in results:
        groups.setdefault(_key(r), []).append(r)
    out = []
    for key, runs in groups.items():
        first = runs[0]
        env = envelope_of(
            [(r.config.policy, dict(r.config.policy_params)) for r in runs],
            placement_table=any(r.config.placement_table for r in runs),
        )
        bounds = _CACHE.get((key, env))
        if bounds is None:
            workload = Workload.of(first.output.jobs, first.workload_name)
            cluster = first.config.cluster()
            bounds = offline_bounds(workload, cluster, env, skip=first.config.skip)
            if len(_CACHE) >= CACHED:
                del _CACHE[next(iter(_CACHE))]
            _CACHE[(key, env)] = bounds
        out.append(Group(tuple(runs), bounds))
    return out


def _times(value: float, bound: float) -> str:
    if bound <= 0.0:
        return "bound 0"
    return f"{value / bound:.2f}x"


def run_cells(r: RunResult, b: Bounds) -> list[str]:
    """A run's distance to the bounds: JCT and makespan x above, utilization share, wDMR above.

    Examples
    --------
    >>> from scheduling_opt.sim.bounds.envelope import Envelope
    >>> from scheduling_opt.sim.bounds.solve import Bound
    >>> b = Bounds(Bound(10.0, "m"), Bound(20.0, "m"), Bound(0.8, "m"), Bound(0.1, "m"),
    ...            Envelope(covered=("fifo",)), 2, 2, 1, 40.0, {})
    >>> from types import SimpleNamespace as NS
    >>> run = NS(config=NS(policy="fifo"), output=NS(busy_area=40.0),
    ...          metrics={"jct_mean": 15.0, "makespan": 30.0, "utilization": 0.6, "wdmr": 0.25})
    >>> run_cells(run, b)
    ['1.50x', '1.50x', '0.75', '+0.150 (2.50x)']
    """
    excluded = dict(b.envelope.excluded)
    policy = r.config.policy
    if policy in excluded or policy not in b.envelope.covered:
        return ["not covered"] * 4
    m = r.metrics
    wdmr = m["wdmr"] - b.wdmr_lower.value
    wdmr_cell = f"{wdmr:+.3f}"
    if b.wdmr_lower.value > 0:
        wdmr_cell += f" ({_times(m['wdmr'], b.wdmr_lower.value)})"
    util = (
        f"{m['utilization'] / b.utilization_upper.value:.2f}"
        if covers_utilization(r.output.busy_area, b.nominal) and b.utilization_upper.value > 0
        else "not covered (busy beyond the work)"
    )
    return [
        _times(m["jct_mean"], b.jct_mean_lower.value),
        _times(m["makespan"], b.makespan_lower.value),
        util,
        wdmr_cell,
    ]


def bound_row(b: Bounds, unit: str) -> list[str]:
    """The bound's cells: each bound with its method."""
    return [
        f"{b.jct_mean_lower.value:.1f} {unit} ({b.jct_mean_lower.method})",
        f"{b.makespan_lower.value:.0f} {unit}",
        f"<= {b.utilization_upper.value:.3f}",
        f">= {b.wdmr_lower.value:.3f} ({b.wdmr_lower.method})",
    ]


def bound_table(results: Sequence[RunResult], unit: str = "min") -> str:
    """The bounds section under a metrics table (markdown; empty for no runs).

    Parameters
    ----------
    results : sequence of RunResult
        The table's runs.
    unit : str
        The time unit as a header writes it (``min``).

    Returns
    -------
    str
        A sentence on what the bounds cover, then the table, or ``""``.

    Examples
    --------
    >>> bound_table([])
    ''
    """
    groups = group_bounds(results)
    if not groups:
        return ""
    head = [
        "policy",
        "seed",
        "avg JCT: x above the bound",
        "makespan: x above the bound",
        "utilization: share of the bound",
        "wDMR: above the bound",
    ]
    parts = []
    for g in groups:
        b = g.bounds
        label = "bound" if len(groups) == 1 else f"bound (seed {g.results[0].config.seed})"
        lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
        lines.append("| " + " | ".join([label, "", *bound_row(b, unit)]) + " |")
        for r in g.results:
            cells = [r.config.name, str(r.config.seed), *run_cells(r, b)]
            lines.append("| " + " | ".join(cells) + " |")
        cpu = sum(b.seconds.values())
        parts.append(
            f"Offline bounds ({b.envelope.describe()}; {cpu:.1f} s of CPU; the proofs in "
            "docs/bounds.md); utilization bounds runs busy no longer than the work's "
            "GPU time at speed 1:\n\n" + "\n".join(lines) + "\n"
        )
    return "\n".join(parts)


def room(value: float | None, bound: float, side: str) -> str:
    """How far ``value`` is from ``bound``: ``"1.23x"`` for a lower bound, a share for an upper.

    Examples
    --------
    >>> room(3.0, 2.0, "lower"), room(0.5, 0.8, "upper"), room(None, 1.0, "lower")
    ('1.50x', '0.62 of it', '')
    """
    if value is None or math.isnan(value):
        return ""
    if side == "upper":
        return f"{value / bound:.2f} of it" if bound > 0 else ""
    return _times(value, bound)
