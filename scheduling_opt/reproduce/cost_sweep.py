"""The claims re-judged at other restart costs: the report's "Restart costs" table.

A paper that states no restart cost (AntMan), or a range (EDL's
Stop-Resume: over 30 s, 40 to over 60 s), gets a documented default
(:attr:`PaperSet.costs`) and :attr:`PaperSet.cost_sweep`: the claims'
policies are run again at each of those costs, at the points where the
claims are judged (seed 0 only with ``--quick``, so that the quick run
stays small), and each claim's number and verdict are shown per cost.
"Up to" claims are then taken over the judged points only. Cost: one run
per claim policy, judged point, seed and cost.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from scheduling_opt.reproduce.costs import Costs
from scheduling_opt.reproduce.grid import ClaimRow, coordinates, evaluate, judged_points, points
from scheduling_opt.reproduce.papers import PaperSet
from scheduling_opt.sim.cli.options import as_options
from scheduling_opt.sim.sweep import RunConfig, RunResult

#: Runs ``configs`` (the command's cached sweep) and returns their results in order.
Runner = Callable[[list[RunConfig]], list[RunResult]]


def claim_labels(paper: PaperSet) -> set[str]:
    """The run labels the claims of ``paper`` compare (policies, baselines, their ranges).

    Examples
    --------
    >>> from scheduling_opt.reproduce.papers import PAPERS
    >>> sorted(claim_labels(PAPERS["edl"]))
    ['edl-tiresias', 'elastic-tiresias', 'tiresias']
    """
    out: set[str] = set()
    for c in paper.claims:
        out |= {c.policy, c.baseline, *c.among, *c.over}
    return out


def base_configs(paper: PaperSet, results: Sequence[RunResult], *, quick: bool) -> list[RunConfig]:
    """The runs the sweep repeats: claim policies at the judged points (seed 0 with ``quick``)."""
    judged = {
        (j.point.workload, j.point.density)
        for j in judged_points(paper, points(results), quick=quick)
    }
    labels = claim_labels(paper)
    return [
        r.config
        for r in results
        if coordinates(r) in judged
        and r.config.name in labels
        and (not quick or r.config.seed == 0)
    ]


def cost_section(paper: PaperSet, results: Sequence[RunResult], run: Runner, *, quick: bool) -> str:
    """The report's "Restart costs" section: each claim at the set's cost and its sweep's.

    Empty when the set has no sweep. ``run`` makes the runs (cached: the
    set's own cost's are already made).

    Examples
    --------
    >>> from scheduling_opt.reproduce.papers import PAPERS
    >>> cost_section(PAPERS["aryl"], [], lambda c: [], quick=True)
    ''
    """
    if not paper.cost_sweep:
        return ""
    base = base_configs(paper, results, quick=quick)
    if not base:
        return ""
    columns: list[tuple[Costs, list[ClaimRow]]] = []
    for costs in sorted({paper.costs, *paper.cost_sweep}, key=_size):
        with as_options():
            todo = [costs.apply(c) for c in base]
        columns.append((costs, evaluate(paper, run(todo), quick=quick)))
    return _table(paper, columns, quick=quick)


def _size(c: Costs) -> tuple[float, float, float, float]:
    return (c.restart, c.start, c.preemption, c.resize or 0.0)


def _table(paper: PaperSet, columns: Sequence[tuple[Costs, list[ClaimRow]]], *, quick: bool) -> str:
    unit = paper.unit
    heads = [c.describe(unit) + (" (default)" if c == paper.costs else "") for c, _ in columns]
    seeds = "seed 0" if quick else "every seed"
    lines = [
        "## Restart costs\n",
        f"Every policy of the set pays {paper.costs.describe(unit)} by default. "
        f"{paper.costs.source}. The claims' policies run again at the costs below, at the "
        f'judged points ({seeds}; an "up to" claim over those points only):\n',
        "| claim | where | " + " | ".join(heads) + " |",
        "|---|---|" + "---|" * len(heads),
    ]
    for row, cells in _aligned([rows for _, rows in columns]):
        texts = [
            "no data"
            if other is None or other.ours is None
            else f"{other.claim.show(other.ours)} ({other.verdict.value})"
            for other in cells
        ]
        where = row.where if row.claim.kind == "value" else f"{row.where}, vs {row.baseline}"
        lines.append(f"| {row.claim.what} | {where} | " + " | ".join(texts) + " |")
    return "\n".join(lines) + "\n"


def _aligned(
    columns: Sequence[Sequence[ClaimRow]],
) -> list[tuple[ClaimRow, list[ClaimRow | None]]]:
    """The rows of every column matched by claim and point, in the claims' order.

    A column whose runs are missing (a report from a partial cache) may
    judge other points, or none: rows are matched by (claim, where), never
    by position, and a claim's placeholder without a number ("no run")
    shows only when no column has a number for it.

    Examples
    --------
    >>> from scheduling_opt.reproduce.papers.paper_set import Claim
    >>> from scheduling_opt.reproduce.verdict import Verdict
    >>> c = Claim("x", "jct_mean", "ratio", 2.0, "a", "b")
    >>> at = lambda where, ours: ClaimRow(c, where, ours, "a", (), Verdict.NO_DATA, "")
    >>> rows = _aligned([[at("no run", None)], [at("x1", 1.5), at("x2", 1.7)]])
    >>> [(r.where, [o.ours if o else None for o in cells]) for r, cells in rows]
    [('x1', [None, 1.5]), ('x2', [None, 1.7])]
    """
    order: dict[int, int] = {}
    keyed: list[dict[tuple[int, str], ClaimRow]] = []
    for rows in columns:
        by: dict[tuple[int, str], ClaimRow] = {}
        for row in rows:
            claim = order.setdefault(id(row.claim), len(order))
            by[(claim, row.where)] = row
        keyed.append(by)
    numbered = {k[0] for by in keyed for k, row in by.items() if row.ours is not None}
    keys: list[tuple[int, str]] = []
    for by in keyed:
        for k, row in by.items():
            if k not in keys and (row.ours is not None or k[0] not in numbered):
                keys.append(k)
    keys.sort(key=lambda k: k[0])
    out: list[tuple[ClaimRow, list[ClaimRow | None]]] = []
    for k in keys:
        cells = [by.get(k) for by in keyed]
        out.append((next(c for c in cells if c is not None), cells))
    return out
