"""A paper's runs as a grid of (workload, density) points, and each claim evaluated over it.

:func:`points` groups the runs of a reproduction by base workload and job
density (:class:`Point`: the runs of every policy and seed there, their
mean metrics, the measured offered load). :func:`evaluate` computes every
claim the way it is stated and gives it a verdict
(:mod:`~scheduling_opt.reproduce.verdict`):

- a ``point`` claim, on each workload at the density of the paper's own
  conditions (:func:`judged_points`: the set's judged density, the density
  its :class:`~scheduling_opt.reproduce.papers.LoadTarget` chooses from
  the results, or every density when the paper states no load): ours from
  the mean over seeds of each policy's metrics, plus the number of every
  seed, and how many of them point the paper's way; against each label of
  the claim's ``over`` too (a range over a parameter);
- a ``grid`` claim ("up to"): the largest number over every point of the
  grid, with the workload, density and baseline where it occurs.

:func:`sweep_table` gives a claim's number at every point, for the load
sweep's table and plot. Cost: O(points x policies x claims).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from scheduling_opt.reproduce.papers import Claim, PaperSet
from scheduling_opt.reproduce.verdict import Verdict, judge, same_direction
from scheduling_opt.reproduce.workloads import PaperWorkload, offered_load
from scheduling_opt.sim.sweep import RunResult

Metrics = dict[str, dict[str, float]]
#: Seeds listed one by one in a verdict row (more are shown as a range).
SHOWN_SEEDS = 5


def mean_metrics(results: Sequence[RunResult]) -> Metrics:
    """``policy -> metric -> mean over seeds``.

    The metrics are the run's and, under their own names, the policy's
    finite counters (``RunResult.extra``: the Profiler's queueing, which
    Chronus Fig. 6's claims read).

    Examples
    --------
    >>> mean_metrics([])
    {}
    """
    sums: dict[str, dict[str, float]] = {}
    counts: dict[str, int] = {}
    for r in results:
        acc = sums.setdefault(r.config.name, {})
        extra = {
            k: float(v)
            for k, v in r.extra.items()
            if k not in r.metrics and isinstance(v, (int, float)) and math.isfinite(v)
        }
        for k, v in (*r.metrics.items(), *extra.items()):
            acc[k] = acc.get(k, 0.0) + v
        counts[r.config.name] = counts.get(r.config.name, 0) + 1
    return {p: {k: v / counts[p] for k, v in m.items()} for p, m in sums.items()}


def coordinates(result: RunResult) -> tuple[str, float]:
    """``(base workload name, density)`` of a run (density 1 for a plain workload spec)."""
    spec = result.config.workload
    if isinstance(spec, PaperWorkload):
        return spec.base_name, spec.density
    return result.workload_name, 1.0


@dataclass(frozen=True, slots=True)
class Point:
    """The runs of one (workload, density) point of the grid."""

    workload: str
    density: float
    results: tuple[RunResult, ...]

    @property
    def metrics(self) -> Metrics:
        """Each policy's metrics, mean over seeds."""
        return mean_metrics(self.results)

    def seeds(self) -> list[Metrics]:
        """Each seed's ``policy -> metrics`` (in seed order)."""
        by_seed: dict[int, list[RunResult]] = {}
        for r in self.results:
            by_seed.setdefault(r.config.seed, []).append(r)
        return [mean_metrics(by_seed[s]) for s in sorted(by_seed)]

    @property
    def offered_load(self) -> float:
        """GPU-time submitted per unit of span over the cluster's GPUs (mean over runs)."""
        loads = [
            offered_load(r.output.jobs, r.config.servers * r.config.gpus_per_server)
            for r in self.results
        ]
        return sum(loads) / len(loads) if loads else 0.0

    @property
    def label(self) -> str:
        """``"P_MIX2"`` at density 1, ``"P_MIX2 x1.2"`` otherwise."""
        return self.workload if self.density == 1.0 else f"{self.workload} x{self.density:g}"


def points(results: Sequence[RunResult]) -> list[Point]:
    """The grid's points, workloads in run order, densities ascending.

    Examples
    --------
    >>> points([])
    []
    """
    groups: dict[tuple[str, float], list[RunResult]] = {}
    order: list[str] = []
    for r in results:
        workload, density = coordinates(r)
        if workload not in order:
            order.append(workload)
        groups.setdefault((workload, density), []).append(r)
    keys = sorted(groups, key=lambda k: (order.index(k[0]), k[1]))
    return [Point(w, d, tuple(groups[(w, d)])) for w, d in keys]


@dataclass(frozen=True, slots=True)
class ClaimRow:
    """One claim's number, where it was taken, the seeds' numbers and the verdict."""

    claim: Claim
    where: str
    ours: float | None
    baseline: str
    seeds: tuple[float | None, ...]
    verdict: Verdict
    #: ``"<baseline>: <metric> -> <policy>: <metric>"`` of the mean metrics.
    values: str
    #: Ours against each label of ``claim.over`` at the same point.
    over: tuple[tuple[str, float | None], ...] = ()

    @property
    def seeds_agreeing(self) -> int:
        """Seeds whose number points the paper's way."""
        c = self.claim
        return sum(1 for v in self.seeds if v is not None and same_direction(c.kind, c.paper, v))

    def spread(self) -> str:
        """Every seed's number, and how many point the paper's way (empty for one seed).

        Up to :data:`SHOWN_SEEDS` seeds are listed one by one (a mean can
        hide a seed that points the other way), more as ``min..max``.
        """
        known = [v for v in self.seeds if v is not None]
        if len(self.seeds) < 2 or not known:
            return ""
        c = self.claim
        if len(self.seeds) <= SHOWN_SEEDS:
            span = " / ".join(c.show(v) for v in self.seeds)
        elif c.kind == "reduction":  # shown negated: the larger reduction prints first
            span = f"{c.show(max(known))}..{c.show(min(known))}"
        else:
            span = f"{c.show(min(known))}..{c.show(max(known))}"
        if c.kind == "value":
            return span
        return f"{span}; {self.seeds_agreeing}/{len(self.seeds)} the paper's way"

    def over_range(self) -> str:
        """Ours against every label of ``claim.over``: ``"lo..hi (label: v, ...)"``.

        A range whose ends print alike (one label, or equal numbers) is one
        number: ``"v (label: v)"``.
        """
        known = [v for _, v in self.over if v is not None]
        if not known:
            return ""
        c = self.claim
        lo, hi = min(known), max(known)
        if c.kind == "reduction":
            lo, hi = hi, lo
        each = ", ".join(f"{label}: {c.show(v)}" for label, v in self.over)
        span = c.show(lo) if c.show(lo) == c.show(hi) else f"{c.show(lo)}..{c.show(hi)}"
        return f"{span} ({each})"


def _values(claim: Claim, metrics: Mapping[str, Mapping[str, float]], baseline: str) -> str:
    if claim.policy not in metrics or (claim.kind != "value" and baseline not in metrics):
        return ""
    ours = metrics[claim.policy][claim.metric]
    if claim.kind == "value" and (claim.paper_baseline is None or baseline not in metrics):
        return f"{claim.policy}: {ours:.4g}"
    return f"{baseline}: {metrics[baseline][claim.metric]:.4g} -> {claim.policy}: {ours:.4g}"


def judge_claim(claim: Claim, metrics: Mapping[str, Mapping[str, float]]) -> Verdict:
    """The verdict of ``claim`` on one point's ``label -> metrics`` (the report's rule).

    A level claim with the paper's baseline level is judged against our
    baseline's level too (:func:`~scheduling_opt.reproduce.verdict.judge`).

    Examples
    --------
    >>> c = Claim("usage", "utilization", "value", 0.86, "base", "ours", paper_baseline=0.72)
    >>> judge_claim(c, {"base": {"utilization": 0.652}, "ours": {"utilization": 0.643}}).value
    'not reproduced'
    """
    baseline = claim.base_of(metrics)
    ours = claim.against(metrics, baseline)
    base = None
    if claim.kind == "value" and claim.paper_baseline is not None and baseline in metrics:
        base = metrics[baseline][claim.metric]
    return judge(claim.kind, claim.paper, ours, paper_base=claim.paper_baseline, base=base)


def _row(claim: Claim, point: Point) -> ClaimRow:
    metrics = point.metrics
    baseline = claim.base_of(metrics)
    ours = claim.against(metrics, baseline)
    seeds = tuple(claim.ours(m) for m in point.seeds())
    return ClaimRow(
        claim,
        point.label,
        ours,
        baseline,
        seeds,
        judge_claim(claim, metrics),
        _values(claim, metrics, baseline),
        tuple((label, claim.against(metrics, label)) for label in claim.over),
    )


@dataclass(frozen=True, slots=True)
class Judged:
    """A point where ``point`` claims are judged, and why (for the report)."""

    point: Point
    why: str


def judged_points(paper: PaperSet, grid: Sequence[Point], *, quick: bool) -> list[Judged]:
    """The points where ``paper``'s ``point`` claims are judged, one or more per workload.

    With a :class:`~scheduling_opt.reproduce.papers.LoadTarget`: per
    workload, the density whose statistic is nearest the paper's (its value
    there and the paper's in ``why``); else the set's judged density, or
    every density when it is None (a paper that states no load) or was not
    run (``--density``).

    Examples
    --------
    >>> from scheduling_opt.reproduce.papers import PAPERS
    >>> judged_points(PAPERS["antman"], [], quick=False)
    []
    """
    sweep = paper.sweep
    target = sweep.target if sweep is not None else None
    if target is not None:
        out: list[Judged] = []
        for workload in dict.fromkeys(p.workload for p in grid):
            mine = [p for p in grid if p.workload == workload]
            stats = [(p.density, target.statistic(p.metrics)) for p in mine]
            density = target.nearest(stats)
            if density is None:
                break  # the target's run is missing: fall back to ``at``
            point = next(p for p in mine if p.density == density)
            value = dict(stats)[density]
            what = target.what or f"{target.policy}'s {target.metric}"
            out.append(Judged(point, f"{what} {value:.3g} (paper {target.value:.3g})"))
        else:
            return out
    at = paper.judged(quick)
    chosen = [p for p in grid if p.density == at]
    if chosen:
        return [Judged(p, f"density x{at:g}") for p in chosen]
    return [Judged(p, "every load") for p in grid]


def evaluate(paper: PaperSet, results: Sequence[RunResult], *, quick: bool) -> list[ClaimRow]:
    """Every claim of ``paper`` over ``results``, each with its verdict.

    A ``point`` claim gives one row per judged point (:func:`judged_points`);
    a ``grid`` claim one row, at the point where it is largest.

    Examples
    --------
    >>> from scheduling_opt.reproduce.papers import PAPERS
    >>> evaluate(PAPERS["edl"], [], quick=True)[0].verdict.value
    'no data'
    """
    grid = points(results)
    judged = [j.point for j in judged_points(paper, grid, quick=quick)]
    rows: list[ClaimRow] = []
    for claim in paper.claims:
        if claim.scope == "grid":
            candidates = [_row(claim, p) for p in grid if p.workload not in claim.skip_on]
            known = [r for r in candidates if r.ours is not None]
            if known:
                best = max(known, key=lambda r: r.ours if r.ours is not None else 0.0)
                rows.append(best)
                continue
            rows.append(_missing(claim, "the grid"))
            continue
        mine = [p for p in judged if p.workload not in claim.skip_on]
        if not mine:
            rows.append(_missing(claim, "no run"))
        rows += [_row(claim, p) for p in mine]
    return rows


def _missing(claim: Claim, where: str) -> ClaimRow:
    return ClaimRow(claim, where, None, claim.baseline, (), Verdict.NO_DATA, "")


def sweep_table(claim: Claim, grid: Sequence[Point]) -> dict[str, dict[float, float | None]]:
    """``workload -> density -> our number`` of ``claim`` (its own baseline rule at each point).

    Examples
    --------
    >>> sweep_table(Claim("x", "jct_mean", "ratio", 2.0, "a", "b"), [])
    {}
    """
    out: dict[str, dict[float, float | None]] = {}
    for p in grid:
        if p.workload not in claim.skip_on:
            out.setdefault(p.workload, {})[p.density] = claim.ours(p.metrics)
    return out
