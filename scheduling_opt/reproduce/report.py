"""``report.md`` of a paper's set: the paper's numbers beside ours, per workload.

Layout of ``--out DIR``: ``report.md`` (this module), and per workload a
folder ``DIR/<workload>/`` with the simulator's raw files (``jobs.csv``,
``timeline.csv``, ``summary.json``, its own ``report.md``) and plots
(``jct_cdf.png``, ``timeline.png``, ``deadline_miss.png``), plus the run cache
``DIR/cache``. Our numbers are the mean over seeds of each policy's metrics.
"""

from __future__ import annotations

import datetime
import re
from collections.abc import Sequence
from pathlib import Path
from urllib.parse import quote

from scheduling_opt.metrics import GLOSSARY_LINE
from scheduling_opt.reproduce.bounds import room_table
from scheduling_opt.reproduce.grid import (
    ClaimRow,
    Point,
    evaluate,
    judged_points,
    mean_metrics,
    points,
)
from scheduling_opt.reproduce.papers import Claim, PaperSet
from scheduling_opt.reproduce.plots import write_sweep_plot
from scheduling_opt.sim.bounds.outputs import bound_table
from scheduling_opt.sim.cli.output import short_unit, table, write_all
from scheduling_opt.sim.sweep import RunResult

__all__ = [
    "by_workload",
    "claims_table",
    "folder_name",
    "mean_metrics",
    "solver_table",
    "stats_table",
    "summary_table",
    "sweep_tables",
    "verdict_table",
    "write_report",
]


def folder_name(workload: str) -> str:
    """A workload's output folder: its name with every run of other characters as ``-``.

    Links in ``report.md`` must not hold spaces (CommonMark renderers, GitHub's
    among them, show no image whose link has one), so a density's workload
    ``"excerpt x1.3"`` writes its files to ``excerpt-x1.3/``.

    Examples
    --------
    >>> folder_name("excerpt x1.3"), folder_name("P_MIX2"), folder_name("a b/c")
    ('excerpt-x1.3', 'P_MIX2', 'a-b-c')
    """
    return re.sub(r"[^A-Za-z0-9._-]+", "-", workload).strip("-") or "workload"


def by_workload(results: Sequence[RunResult]) -> dict[str, list[RunResult]]:
    """Results grouped by workload name, in run order."""
    out: dict[str, list[RunResult]] = {}
    for r in results:
        out.setdefault(r.workload_name, []).append(r)
    return out


def claims_table(paper: PaperSet, results: Sequence[RunResult]) -> str:
    """The paper's numbers beside ours for one workload (markdown)."""
    metrics = mean_metrics(results)
    lines = [
        f"| claim ({paper.source}) | baseline -> policy | paper | ours | ours: baseline -> policy |",
        "|---|---|---|---|---|",
    ]
    for c in paper.claims:
        ours = c.ours(metrics)
        base = c.base_of(metrics)
        if c.kind == "value" or ours is None:
            values = ""
        else:
            values = f"{base}: {metrics[base][c.metric]:.4g} -> {metrics[c.policy][c.metric]:.4g}"
        lines.append(
            f"| {c.what} | {c.baseline} -> {c.policy} | {c.show(c.paper)} | {c.show(ours)} "
            f"| {values} |"
        )
    return "\n".join(lines) + "\n"


def verdict_table(rows: Sequence[ClaimRow]) -> str:
    """Each claim: the paper's number, ours and where, the seeds, the verdict (markdown).

    A claim with ``over`` labels gets a column with its range over them.
    """
    ranged = any(r.claim.over for r in rows)
    head = "| claim | computed as | paper | ours | where | seeds | verdict |"
    lines = [head + (" over the parameter |" if ranged else ""), "|---|---|---|---|---|---|---|"]
    if ranged:
        lines[1] += "---|"
    for r in rows:
        c = r.claim
        how = _how(c)
        level = c.kind == "value" and c.paper_baseline is None
        where = r.where if level else f"{r.where}, vs {r.baseline}"
        verdict = r.verdict.value
        if c.note and r.verdict.value != "reproduced":
            verdict += f" ({c.note})"
        line = (
            f"| {c.what} | {how} | {c.show(c.paper)} | {c.show(r.ours)} | {where} "
            f"| {r.spread()} | {verdict} |"
        )
        lines.append(line + (f" {r.over_range()} |" if ranged else ""))
    return "\n".join(lines) + "\n"


def summary_table(rows: Sequence[ClaimRow]) -> str:
    """Claims judged at several points (a paper without a stated load): range and verdicts.

    Examples
    --------
    >>> summary_table([])
    ''
    """
    by_claim: dict[int, list[ClaimRow]] = {}
    claims: dict[int, Claim] = {}
    for r in rows:
        by_claim.setdefault(id(r.claim), []).append(r)
        claims[id(r.claim)] = r.claim
    lines = []
    for key, group in by_claim.items():
        if len(group) < 2:
            continue
        c = claims[key]
        known = [(r.ours, r.where) for r in group if r.ours is not None]
        if not known:
            continue
        lo, hi = min(known), max(known)
        counts: dict[str, int] = {}
        for r in group:
            counts[r.verdict.value] = counts.get(r.verdict.value, 0) + 1
        tally = ", ".join(f"{v} at {n}" for v, n in counts.items())
        lines.append(
            f"| {c.what} | {c.show(c.paper)} | {c.show(lo[0])} ({lo[1]}) .. "
            f"{c.show(hi[0])} ({hi[1]}) | {tally} of {len(group)} |"
        )
    if not lines:
        return ""
    head = ["| claim | paper | ours: lowest .. highest | verdicts |", "|---|---|---|---|"]
    return "\n".join(head + lines) + "\n"


def _how(c: Claim) -> str:
    if c.kind == "value":
        if c.paper_baseline is None:
            return f"{c.policy}'s {c.metric}"
        side = "above" if c.paper > c.paper_baseline else "below"
        return f"{c.policy}'s {c.metric}, {side} {c.baseline}'s (paper: {c.show(c.paper_baseline)})"
    if not c.among:
        base = c.baseline
    elif c.pick == "max":
        base = "the baseline giving the largest number"
    else:
        base = "the best baseline"
    where = "max over the grid" if c.scope == "grid" else "at the paper's load"
    verb = "reduction" if c.kind == "reduction" else "ratio"
    return f"{c.metric} {verb}, {c.policy} vs {base}, {where}"


def sweep_tables(paper: PaperSet, grid: Sequence[Point]) -> str:
    """Each claim's number at every (workload, density), with the measured offered load."""
    densities = sorted({p.density for p in grid})
    if len(densities) < 2:
        return ""
    workloads = list(dict.fromkeys(p.workload for p in grid))
    at = {(p.workload, p.density): p for p in grid}
    out = ["| workload | " + " | ".join(f"x{d:g}" for d in densities) + " |"]
    out.append("|---|" + "---|" * len(densities))
    out.append("| *offered load* | " + " | ".join("" for _ in densities) + " |")
    for w in workloads:
        cells = [f"{at[(w, d)].offered_load:.2f}" if (w, d) in at else "" for d in densities]
        out.append(f"| {w} (offered load) | " + " | ".join(cells) + " |")
    parts = ["\n".join(out) + "\n"]
    for c in paper.claims:
        if c.kind == "value":
            continue
        # Two claims may share a name against different baselines (EDL's vs
        # `tiresias` and vs `edl-tiresias`): the heading names both runs.
        lines = [f"\n{c.what}, {c.policy} vs {c.baseline} (paper {c.show(c.paper)}):\n"]
        lines.append("| workload | " + " | ".join(f"x{d:g}" for d in densities) + " |")
        lines.append("|---|" + "---|" * len(densities))
        for w in workloads:
            if w in c.skip_on:
                continue
            cells = [c.show(c.ours(at[(w, d)].metrics)) if (w, d) in at else "" for d in densities]
            lines.append(f"| {w} | " + " | ".join(cells) + " |")
            for label in c.over:  # the same claim against the parameter's other values
                cells = [
                    c.show(c.against(at[(w, d)].metrics, label)) if (w, d) in at else ""
                    for d in densities
                ]
                lines.append(f"| {w}, vs {label} | " + " | ".join(cells) + " |")
        parts.append("\n".join(lines) + "\n")
    return "".join(parts)


def solver_table(results: Sequence[RunResult]) -> str:
    """Wall and CPU seconds per run (the policy's decisions are the time of a run)."""
    lines = [
        "| policy | seed | wall s | CPU s | policy calls | events |",
        "|---|---|---|---|---|---|",
    ]
    for r in results:
        o = r.output
        lines.append(
            f"| {r.config.name} | {r.config.seed} | {o.wall_seconds:.1f} | "
            f"{o.cpu_seconds:.1f} | {o.calls} | {o.events} |"
        )
    return "\n".join(lines) + "\n"


def stats_table(results: Sequence[RunResult]) -> str:
    """The policies' own counters (``RunResult.extra``: solver time, terms, rules used)."""
    keys = sorted({k for r in results for k in r.extra})
    if not keys:
        return ""
    lines = [
        "| policy | seed | " + " | ".join(keys) + " |",
        "|---|---|" + "---|" * len(keys),
    ]
    for r in results:
        if r.extra:
            cells = [f"{r.extra[k]:.4g}" if k in r.extra else "" for k in keys]
            lines.append(f"| {r.config.name} | {r.config.seed} | " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def write_report(
    out_dir: Path,
    paper: PaperSet,
    results: Sequence[RunResult],
    *,
    quick: bool,
    notes: Sequence[str] = (),
    version: str = "",
    today: str | None = None,
) -> Path:
    """Write ``report.md`` and the per-workload raw files and plots.

    Parameters
    ----------
    out_dir : Path
        The output folder (created).
    paper : PaperSet
        The set that was run (its claims, setup and differences).
    results : sequence of RunResult
        The runs, any workloads.
    quick : bool
        Whether this was the ``--quick`` variant (written in the header).
    notes : sequence of str
        Lines for the header (traces that were missing).
    version : str
        The library's version.
    today : str, optional
        The date line (default: now, UTC).

    Returns
    -------
    Path
        The report's path.

    Examples
    --------
    >>> import tempfile
    >>> from scheduling_opt.reproduce.papers import PAPERS
    >>> p = write_report(Path(tempfile.mkdtemp()), PAPERS["edl"], [], quick=True, today="x")
    >>> p.read_text().splitlines()[0]
    "# Reproduction: EDL (TPDS '22) §5.1, §6.3: Elastic-Tiresias against Tiresias"
    """
    out_dir.mkdir(parents=True, exist_ok=True)
    day = today or datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    servers, inference = paper.servers, paper.inference_servers
    if quick and paper.quick_sizes is not None:
        servers, inference = paper.quick_sizes
    lendable = f" + {inference} inference servers to lend" if inference else ""
    parts = [
        f"# Reproduction: {paper.title}\n",
        GLOSSARY_LINE + "\n",
        f"Run {day}, scheduling-opt {version}, mode {'quick' if quick else 'full'}; "
        f"{servers} servers x {paper.gpus_per_server} GPUs{lendable}; times in the trace's "
        f"unit ({paper.unit}).\n",
        f"**Paper's setup.** {paper.setup}.\n",
        f"**Our setup and differences.** {paper.differences}\n",
    ]
    parts += [f"- {n}\n" for n in notes]
    grid = points(results)
    rows = evaluate(paper, results, quick=quick)
    judged = judged_points(paper, grid, quick=quick)
    where = "; ".join(f"{j.point.label}: {j.why}" for j in judged) or "no run"
    if len(judged) > 3:
        where = f"every load of the sweep ({len(judged)} points)"
    parts.append(
        f"\n## Verdicts\n\nA claim is *reproduced* when ours points the paper's way and lies "
        f"within 2x of the paper's number, *direction only* when it points the paper's way "
        f"outside that band, *not reproduced* otherwise; a level claim the paper places above "
        f"(or below) its baseline's is *not reproduced* when ours is not on that side of our "
        f"baseline's, whatever its level, and *reproduced* only when its level and its "
        f"difference from our baseline are both within 2x of the paper's "
        f"(scheduling_opt/reproduce/verdict.py). "
        f"Point claims are judged at {where}"
        + (f" ({paper.sweep.why})" if paper.sweep is not None and paper.sweep.why else "")
        + "; seeds: every seed's number and how many point the paper's way.\n"
    )
    parts.append(verdict_table(rows))
    room = room_table(rows, grid)
    if room:
        parts.append("\nRoom the offline bounds leave each claim (docs/bounds.md):\n")
        parts.append(room)
    summary = summary_table(rows)
    if summary:
        parts.append("\nOver the judged loads (each claim's range and its verdicts):\n")
        parts.append(summary)
    sweep = sweep_tables(paper, grid)
    if sweep:
        parts.append(
            "\n## Load sweep\n\nOur number of each claim at every job density "
            "(workloads made denser or sparser by the set's rule, "
            "scheduling_opt/reproduce/workloads.py); offered load = GPU-time "
            "submitted per minute of submission span over the cluster's GPUs.\n"
        )
        parts.append(sweep)
        plot = write_sweep_plot(out_dir / "sweep.png", paper, grid)
        if plot:
            parts.append("\n![claims against load](sweep.png)\n")
    for name, group in by_workload(results).items():
        folder = folder_name(name)
        plots = write_all(out_dir / folder, group, version, unit=paper.unit)
        parts.append(f"\n## Workload `{name}` ({int(group[0].metrics['jobs'])} jobs)\n")
        parts.append(claims_table(paper, group))
        parts.append("\nAll metrics:\n")
        parts.append(table(group, paper.unit))
        parts.append("\n" + bound_table(group, short_unit(paper.unit)))
        parts.append("\nRun times:\n")
        parts.append(solver_table(group))
        stats = stats_table(group)
        if stats:
            parts.append("\nPolicy counters (solver seconds are wall time inside the run):\n")
            parts.append(stats)
        parts.append(f"\nRaw results: `{folder}/jobs.csv`, `{folder}/summary.json`.\n")
        parts += [f"\n![{p}]({quote(f'{folder}/{p}')})\n" for p in plots]
    path = out_dir / "report.md"
    path.write_text("\n".join(parts), encoding="utf-8")
    return path
