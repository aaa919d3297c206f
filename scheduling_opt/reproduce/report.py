"""``report.md`` of a paper's set: the paper's numbers beside ours, per workload.

Layout of ``--out DIR``: ``report.md`` (this module), and per workload a
folder ``DIR/<workload>/`` with the simulator's raw files (``jobs.csv``,
``timeline.csv``, ``summary.json``, its own ``report.md``) and plots
(``jct_cdf.png``, ``timeline.png``, ``deadline_miss.png``), plus the run cache
``DIR/cache``. Our numbers are the mean over seeds of each policy's metrics.
"""

from __future__ import annotations

import datetime
from collections.abc import Sequence
from pathlib import Path

from scheduling_opt.reproduce.papers import PaperSet
from scheduling_opt.sim.output import table, write_all
from scheduling_opt.sim.sweep import RunResult


def by_workload(results: Sequence[RunResult]) -> dict[str, list[RunResult]]:
    """Results grouped by workload name, in run order."""
    out: dict[str, list[RunResult]] = {}
    for r in results:
        out.setdefault(r.workload_name, []).append(r)
    return out


def mean_metrics(results: Sequence[RunResult]) -> dict[str, dict[str, float]]:
    """``policy -> metric -> mean over seeds``.

    Examples
    --------
    >>> mean_metrics([])
    {}
    """
    sums: dict[str, dict[str, float]] = {}
    counts: dict[str, int] = {}
    for r in results:
        acc = sums.setdefault(r.config.policy, {})
        for k, v in r.metrics.items():
            acc[k] = acc.get(k, 0.0) + v
        counts[r.config.policy] = counts.get(r.config.policy, 0) + 1
    return {p: {k: v / counts[p] for k, v in m.items()} for p, m in sums.items()}


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


def solver_table(results: Sequence[RunResult]) -> str:
    """Wall and CPU seconds per run (the policy's decisions are the time of a run)."""
    lines = [
        "| policy | seed | wall s | CPU s | policy calls | events |",
        "|---|---|---|---|---|---|",
    ]
    for r in results:
        o = r.output
        lines.append(
            f"| {r.config.policy} | {r.config.seed} | {o.wall_seconds:.1f} | "
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
            lines.append(f"| {r.config.policy} | {r.config.seed} | " + " | ".join(cells) + " |")
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
        f"Run {day}, scheduling-opt {version}, mode {'quick' if quick else 'full'}; "
        f"{servers} servers x {paper.gpus_per_server} GPUs{lendable}; times in the trace's "
        f"unit ({paper.unit}).\n",
        f"**Paper's setup.** {paper.setup}.\n",
        f"**Our setup and differences.** {paper.differences}\n",
    ]
    parts += [f"- {n}\n" for n in notes]
    for name, group in by_workload(results).items():
        sub = out_dir / name
        plots = write_all(sub, group, version)
        parts.append(f"\n## Workload `{name}` ({int(group[0].metrics['jobs'])} jobs)\n")
        parts.append(claims_table(paper, group))
        parts.append("\nAll metrics:\n")
        parts.append(table(group))
        parts.append("\nRun times:\n")
        parts.append(solver_table(group))
        stats = stats_table(group)
        if stats:
            parts.append("\nPolicy counters (solver seconds are wall time inside the run):\n")
            parts.append(stats)
        parts.append(f"\nRaw results: `{name}/jobs.csv`, `{name}/summary.json`.\n")
        parts += [f"\n![{p}]({name}/{p})\n" for p in plots]
    path = out_dir / "report.md"
    path.write_text("\n".join(parts), encoding="utf-8")
    return path
