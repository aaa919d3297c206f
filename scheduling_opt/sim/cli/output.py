"""Files of a simulation run: jobs.csv, timeline.csv, summary.json, report.md.

The contract other tools read (``summary.json``): an object with
``version``, ``workload`` and a list ``runs``, one per (policy, seed,
parameters), each with ``policy``, ``seed``, ``params``, ``config_hash``
(the cache key), ``code_hash`` (the engine's and the policy's code),
``from_cache``, ``wall_seconds``, ``cpu_seconds``, ``events``, ``events_per_second``,
``policy_calls`` and ``metrics`` (:data:`~scheduling_opt.sim.results.METRIC_KEYS`).
``time_unit`` names the unit of every time (:data:`TIME_UNIT`, minutes, for
Chronus-Philly traces and the synthetic workload; a caller whose workload
counts in another unit passes it, e.g. ONES' seconds). Headers write it
short (:func:`short_unit`). Floats in the
CSV files are written with ``repr`` so the same run gives the same bytes.
"""

from __future__ import annotations

import csv
import io
import json
import math
import operator
from collections.abc import Sequence
from dataclasses import asdict, fields
from pathlib import Path
from typing import Any
from urllib.parse import quote

from scheduling_opt.metrics import GLOSSARY_LINE
from scheduling_opt.sim.bounds.outputs import bound_table
from scheduling_opt.sim.limits import check_timeline
from scheduling_opt.sim.results import JobRecord, job_records, sample
from scheduling_opt.sim.sweep import RunResult

#: Columns of the side-by-side table (metric key, header, format); ``{unit}`` in a
#: header is the workload's time unit, short (:func:`short_unit`).
TABLE = (
    ("jct_mean", "avg JCT ({unit})", "{:.1f}"),
    ("jct_median", "median JCT ({unit})", "{:.1f}"),
    ("jct_p95", "p95 JCT ({unit})", "{:.1f}"),
    ("queueing_mean", "avg queueing ({unit})", "{:.1f}"),
    ("makespan", "makespan ({unit})", "{:.0f}"),
    ("utilization", "utilization (share of GPU time)", "{:.3f}"),
    ("deadline_miss_ratio", "deadline miss (share of SLO jobs)", "{:.3f}"),
    ("wdmr", "wDMR (share)", "{:.3f}"),
    ("best_effort_jct_mean", "BE JCT ({unit})", "{:.1f}"),
    ("preemption_ratio", "preemption ratio (per job)", "{:.3f}"),
)
#: Runs a cache note names before it counts the rest.
CACHE_NAMES = 8
#: The time unit of every workload the command line reads: Chronus-Philly
#: traces (the bundled excerpt included) and the synthetic generator.
TIME_UNIT = "minutes"
#: Short forms of the time units a header writes.
_SHORT_UNITS = {"minutes": "min", "seconds": "s", "hours": "h"}


def short_unit(unit: str) -> str:
    """``unit`` as a header writes it (``minutes`` -> ``min``; an unknown unit as given).

    Examples
    --------
    >>> short_unit("minutes"), short_unit("seconds"), short_unit("days")
    ('min', 's', 'days')
    """
    return _SHORT_UNITS.get(unit, unit)


def _cell(value: object) -> str:
    if isinstance(value, float):
        return "" if math.isnan(value) else repr(value)
    if value is None:
        return ""
    return str(value)


def jobs_csv(results: Sequence[RunResult]) -> str:
    """The per-job rows of every run (policy, seed, then the job's fields)."""
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    names = [f.name for f in fields(JobRecord)]
    w.writerow(["policy", "seed", *names])
    row = operator.attrgetter(*names)  # one call per record, not one getattr per field
    for r in results:
        name, seed = r.config.name, r.config.seed
        w.writerows([name, seed, *map(_cell, row(rec))] for rec in job_records(r.output))
    return buf.getvalue()


def timeline_csv(results: Sequence[RunResult], step: float = 60.0) -> str:
    """Busy GPUs, pending and running jobs sampled every ``step`` time units per run."""
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(["policy", "seed", "time", "busy_gpus", "pending", "running"])
    for r in results:
        for t, busy, pending, running in sample(r.output.changes, step):
            w.writerow([r.config.name, r.config.seed, repr(t), busy, pending, running])
    return buf.getvalue()


def run_entry(r: RunResult) -> dict[str, Any]:
    """One element of ``summary.json``'s ``runs``."""
    out = r.output
    return {
        "policy": r.config.policy,
        "name": r.config.name,
        "seed": r.config.seed,
        "params": dict(r.config.policy_params),
        "config": asdict(r.config),
        "config_hash": r.config.digest(),
        "code_hash": r.config.code_digest(),
        "from_cache": r.from_cache,
        "workload": r.workload_name,
        "workload_hash": r.workload_digest,
        "wall_seconds": out.wall_seconds,
        "cpu_seconds": out.cpu_seconds,
        "events": out.events,
        "events_per_second": out.events / out.wall_seconds if out.wall_seconds > 0 else 0.0,
        "policy_calls": out.calls,
        "metrics": r.metrics,
    }


def summary(results: Sequence[RunResult], version: str, unit: str = TIME_UNIT) -> dict[str, Any]:
    """The ``summary.json`` object (``unit``: the workload's time unit)."""
    return {
        "version": version,
        "time_unit": unit,
        "runs": [run_entry(r) for r in results],
    }


def table(results: Sequence[RunResult], unit: str = TIME_UNIT) -> str:
    """The side-by-side markdown table (one row per run; times in ``unit``).

    Examples
    --------
    >>> table([], unit="seconds").splitlines()[0].split(" | ")[2]
    'avg JCT (s)'
    """
    short = short_unit(unit)
    head = ["policy", "seed", *(h.format(unit=short) for _, h, _ in TABLE), "wall (s)"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for r in results:
        cells = [r.config.name, str(r.config.seed)]
        cells += [fmt.format(r.metrics[k]) for k, _, fmt in TABLE]
        cells.append(f"{r.output.wall_seconds:.2f}" + (" (cached)" if r.from_cache else ""))
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def cache_note(results: Sequence[RunResult]) -> str:
    """One line naming the runs read from the cache ('' when none was).

    Examples
    --------
    >>> cache_note([])
    ''
    """
    cached = [f"{r.config.name} (seed {r.config.seed})" for r in results if r.from_cache]
    if not cached:
        return ""
    shown = ", ".join(cached[:CACHE_NAMES])
    if len(cached) > CACHE_NAMES:
        shown += f" and {len(cached) - CACHE_NAMES} more"
    return (
        f"From the cache ({len(cached)} of {len(results)} runs, made earlier with this "
        f"configuration, data and code): {shown}; --no-cache runs them again."
    )


def _by_policy(results: Sequence[RunResult], key: str) -> dict[str, float]:
    """Each policy's ``key`` averaged over its runs (seeds), in first-run order."""
    runs: dict[str, list[float]] = {}
    for r in results:
        runs.setdefault(r.config.name, []).append(float(r.metrics[key]))
    return {p: sum(v) / len(v) for p, v in runs.items()}


def reading(results: Sequence[RunResult], unit: str = TIME_UNIT) -> str:
    """One line that reads the table: the mean-JCT spread and the deadline-miss spread.

    Parameters
    ----------
    results : sequence of RunResult
        The runs of the table (a policy's seeds are averaged).

    Returns
    -------
    str
        ``"Reading: ..."``, without a line break.

    Examples
    --------
    >>> reading([])
    'Reading: no runs.'
    """
    jct = _by_policy(results, "jct_mean")
    if not jct:
        return "Reading: no runs."
    best, worst = min(jct, key=jct.__getitem__), max(jct, key=jct.__getitem__)
    if len(jct) == 1:
        return f"Reading: one policy, {best}: mean JCT {jct[best]:.1f} {unit}."
    ratio = jct[worst] / jct[best] if jct[best] > 0 else float("inf")
    line = (
        f"Reading: {best} has the lowest mean JCT ({jct[best]:.1f} {unit}), "
        f"{worst} the highest ({jct[worst]:.1f}, {ratio:.1f}x)"
    )
    if all(r.metrics["slo_jobs"] > 0 for r in results):
        miss = _by_policy(results, "deadline_miss_ratio")
        low, high = min(miss, key=miss.__getitem__), max(miss, key=miss.__getitem__)
        line += (
            f"; {low} misses the fewest deadlines ({miss[low]:.1%} of SLO jobs), "
            f"{high} the most ({miss[high]:.1%})"
        )
    return line + "."


def report(
    results: Sequence[RunResult], plots: Sequence[str], note: str = "", unit: str = TIME_UNIT
) -> str:
    """``report.md``: the workload, the table, the plots (times in ``unit``)."""
    first = results[0] if results else None
    parts = ["# Simulation report\n", GLOSSARY_LINE + "\n"]
    if first is not None:
        c = first.config
        parts.append(
            f"Workload `{first.workload_name}` (hash {first.workload_digest}, "
            f"{int(first.metrics['jobs'])} jobs measured), {c.servers} servers x "
            f"{c.gpus_per_server} GPUs; times in {unit}.\n"
        )
    parts.append(table(results, unit))
    parts.append("\n" + reading(results, unit) + "\n")
    cached = cache_note(results)
    if cached:
        parts.append(f"\n{cached}\n")
    parts.append("\n" + bound_table(results, short_unit(unit)))
    if note:
        parts.append(f"\n{note}\n")
    for p in plots:
        parts.append(f"\n![{p}]({quote(p)})\n")
    return "\n".join(parts)


def write_all(
    out_dir: Path,
    results: Sequence[RunResult],
    version: str,
    step: float = 60.0,
    unit: str = TIME_UNIT,
) -> list[str]:
    """Write every file into ``out_dir``; return the plot names written.

    ``step`` is the timeline's sampling step and ``unit`` the time unit of
    the workload (both in the workload's unit).
    """
    from scheduling_opt.sim.cli.plots import write_plots

    # Every run's timeline is sampled at ``step``: refused before any file is written.
    check_timeline(
        [r.output.changes[-1][0] - r.output.changes[0][0] for r in results if r.output.changes],
        step,
    )
    out_dir.mkdir(parents=True, exist_ok=True)
    (out_dir / "jobs.csv").write_text(jobs_csv(results), encoding="utf-8")
    (out_dir / "timeline.csv").write_text(timeline_csv(results, step), encoding="utf-8")
    text = json.dumps(summary(results, version, unit), indent=2, sort_keys=True, default=str)
    (out_dir / "summary.json").write_text(text + "\n", encoding="utf-8")
    plots, note = write_plots(out_dir, results, step, unit)
    (out_dir / "report.md").write_text(report(results, plots, note, unit), encoding="utf-8")
    return plots
