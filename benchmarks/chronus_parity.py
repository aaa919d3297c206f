"""Job-by-job comparison of our ``chronus`` with the Chronus authors' simulator (issue 23).

Usage::

    python benchmarks/chronus_parity.py --trace TRACE.csv --artifact jobs.csv.gz
        [--semantics default|artifact|artifact-mip] [--set KEY=VALUE ...] [--until MINUTES]
        [--label NAME] [--out DIR]
    python benchmarks/chronus_parity.py --trace TRACE.csv --artifact jobs.csv.gz
        --against other-run.csv.gz [--until MINUTES] [--label NAME] [--out DIR]

Runs our ``chronus`` on the trace (120 x 8 GPUs; ``--until 1440`` keeps the
jobs submitted in the first day, the rows of the bundled excerpt) under the
named semantics (``scheduling_opt.sim.semantics``), with ``--set`` overriding
one option (``--set queue=chronus``, ``--set start_overhead=0``: an engine
field of ``RunConfig`` or a policy parameter), and compares it with the
artifact's per-job results (its ``time-aware-with-lease.csv``, gzipped):

- the artifact's metrics, computed as its code computes them
  (``alg/scheduler/time_aware_with_lease.py`` 1029-1042, ``tools/metrics.py``):
  wDMR = mean over SLO jobs of ``1 - v/10``, v the value of the first reward
  step whose deadline (submit + step) is at or after the job's end (1 when
  none); first-deadline miss ratio; mean JCT of best-effort and of all jobs;
  preemptions per job;
- per SLO job, whether both met the first deadline (agreement, and the
  confusion matrix), and per job the JCTs (median ratio, a scatter plot).

Writes ``DIR/LABEL.json`` (metrics of both, agreement, run times),
``DIR/LABEL-jobs.csv.gz`` (per job: both simulators' end times and
preemptions) and
``DIR/LABEL.png`` (JCT scatter, confusion matrix) when matplotlib is
installed, and prints one table row. ``--against`` compares a second run of
the artifact (its per-job file, gzipped) with the first instead of running
ours: the artifact's selection MILP stops on the wall clock (CBC, 5 s cap,
and 1 s without a better incumbent: ``solver.py`` 408), so two runs of it
need not agree, and this measures by how much ("ours" is then the second
run, and the CPU time is 0). A run takes the policy's time: with
``--semantics artifact`` and the default work-bounded limits below, about
10 s of CPU for the first day and 3 minutes for the whole trace; with
``--semantics artifact-mip`` (the ``parity`` extra), which reproduces the
artifact job by job, 2 minutes and 23.
"""

from __future__ import annotations

import argparse
import csv
import gzip
import json
import math
import os
import sys
import time
from collections.abc import Callable
from dataclasses import fields, replace
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from scheduling_opt.sim.engine import cpu_time  # noqa: E402
from scheduling_opt.sim.semantics import semantics_names, with_semantics  # noqa: E402
from scheduling_opt.sim.sweep import RunConfig, WorkloadSpec, run_config  # noqa: E402
from scheduling_opt.sim.workload import REWARD_SCALE, SimJob, Workload, load_trace  # noqa: E402

#: Work-bounded runs: time limits far above what a term or a placement needs,
#: so that the schedule does not depend on the machine's load.
BOUNDED = {"time_limit": 1e9, "placement_time_limit": 1e9}


def artifact_jobs(path: Path) -> dict[str, dict[str, float]]:
    """The artifact's per-job rows: id -> submit, end, preempt, best_effort, miss_ddl."""
    out: dict[str, dict[str, float]] = {}
    with gzip.open(path, "rt", newline="") as f:
        for row in csv.DictReader(f):
            out[row["job_id"]] = {
                "submit": float(row["submit_time"]),
                "end": float(row["end_time"]),
                "preempt": float(row["preempt"]),
                "best_effort": float(row["best_effort"]),
                "miss_ddl": float(row["miss_ddl"]),
                "gpus": float(row["num_gpu"]),
            }
    return out


def miss(job: SimJob, end: float) -> float:
    """The artifact's ``miss_ddl``: 1 - v/10 for the first step met, 1 when none is."""
    for t, v in job.deadlines:
        if t >= end:
            return 1.0 - v / REWARD_SCALE / 10.0
    return 1.0


def metrics(
    jobs: list[SimJob], end: dict[str, float], preempt: dict[str, float]
) -> dict[str, float]:
    """The artifact's metrics over ``jobs`` (ends by id)."""
    slo = [j for j in jobs if j.slo]
    best = [j for j in jobs if not j.slo]
    jct = {j.id: end[j.id] - j.submit for j in jobs}
    return {
        "jobs": float(len(jobs)),
        "slo_jobs": float(len(slo)),
        "wdmr": sum(miss(j, end[j.id]) for j in slo) / max(len(slo), 1),
        "first_deadline_miss": sum(end[j.id] > j.deadlines[0][0] for j in slo) / max(len(slo), 1),
        "jct_mean": sum(jct.values()) / max(len(jobs), 1),
        "be_jct_mean": sum(jct[j.id] for j in best) / max(len(best), 1),
        "slo_jct_mean": sum(jct[j.id] for j in slo) / max(len(slo), 1),
        "preemptions_per_job": sum(preempt[j.id] for j in jobs) / max(len(jobs), 1),
        "makespan": max(end.values(), default=0.0),
    }


def _value(text: str) -> Any:
    if text in ("None", "none"):
        return None
    if text in ("True", "true", "False", "false"):
        return text.lower() == "true"
    try:
        return int(text)
    except ValueError:
        pass
    try:
        return float(text)
    except ValueError:
        return text


def configure(trace: Path, semantics: str, overrides: list[str]) -> RunConfig:
    """The run: ``chronus`` on the trace, the semantics, the overrides, work-bounded limits."""
    config = with_semantics(RunConfig("chronus", WorkloadSpec("trace", str(trace))), semantics)
    engine = {f.name for f in fields(RunConfig)}
    params = {**BOUNDED, **dict(config.policy_params)}
    changes: dict[str, Any] = {}
    for item in overrides:
        key, _, text = item.partition("=")
        if key in engine:
            changes[key] = _value(text)
        else:
            params[key] = _value(text)
    return replace(config, **changes, policy_params=tuple(sorted(params.items())))


def excerpt(trace: Path, until: float | None, out: Path) -> Path:
    """The trace's rows submitted before ``until`` (the whole file when None)."""
    if until is None:
        return trace
    path = out / f"{trace.stem}-until{until:g}.csv"
    with trace.open(newline="") as src, path.open("w", newline="") as dst:
        rows = csv.reader(src)
        writer = csv.writer(dst, lineterminator="\n")
        header = next(rows)
        writer.writerow(header)
        col = header.index("submit_time")
        for row in rows:
            if float(row[col]) < until:
                writer.writerow(row)
    return path


def compare(
    workload: Workload,
    ours_end: dict[str, float],
    ours_pre: dict[str, float],
    art: dict[str, dict[str, float]],
) -> dict[str, Any]:
    """Both runs' metrics over the jobs both have, agreement and the confusion matrix."""
    jobs = [j for j in workload.jobs if j.id in art]
    theirs_end = {j.id: art[j.id]["end"] for j in jobs}
    theirs_pre = {j.id: art[j.id]["preempt"] for j in jobs}
    ours = metrics(jobs, ours_end, ours_pre)
    theirs = metrics(jobs, theirs_end, theirs_pre)
    confusion = {"both_met": 0, "both_missed": 0, "ours_only_met": 0, "theirs_only_met": 0}
    for j in jobs:
        if not j.slo:
            continue
        a = ours_end[j.id] <= j.deadlines[0][0]
        b = theirs_end[j.id] <= j.deadlines[0][0]
        key = (
            "both_met"
            if a and b
            else "both_missed"
            if not (a or b)
            else ("ours_only_met" if a else "theirs_only_met")
        )
        confusion[key] += 1
    slo = sum(confusion.values())
    ratios = sorted(
        (ours_end[j.id] - j.submit) / max(theirs_end[j.id] - j.submit, 1e-9) for j in jobs
    )
    return {
        "ours": ours,
        "theirs": theirs,
        "relative_gap": {
            k: (ours[k] - theirs[k]) / theirs[k] if theirs[k] else math.nan
            for k in ("wdmr", "be_jct_mean", "jct_mean", "first_deadline_miss")
        },
        "agreement": (confusion["both_met"] + confusion["both_missed"]) / max(slo, 1),
        "confusion": confusion,
        "jct_ratio_median": ratios[len(ratios) // 2] if ratios else math.nan,
        "jobs_compared": len(jobs),
        "jobs_missing_in_artifact": len(workload.jobs) - len(jobs),
    }


def write_jobs(
    path: Path,
    workload: Workload,
    ours_end: dict[str, float],
    ours_pre: dict[str, float],
    art: dict[str, dict[str, float]],
) -> None:
    """Per job: submit, GPUs, work, first deadline, both simulators' ends and preemptions."""
    with gzip.open(path, "wt", newline="") as f:
        w = csv.writer(f, lineterminator="\n")
        w.writerow(
            [
                "job_id",
                "submit",
                "gpus",
                "work",
                "first_deadline",
                "ours_end",
                "theirs_end",
                "ours_preempt",
                "theirs_preempt",
            ]
        )
        for j in workload.jobs:
            a = art.get(j.id)
            w.writerow(
                [
                    j.id,
                    j.submit,
                    j.gpus,
                    j.work,
                    j.deadlines[0][0] if j.deadlines else "",
                    repr(ours_end[j.id]),
                    "" if a is None else a["end"],
                    ours_pre[j.id],
                    "" if a is None else a["preempt"],
                ]
            )


def plot(
    path: Path,
    workload: Workload,
    ours_end: dict[str, float],
    art: dict[str, dict[str, float]],
    result: dict[str, Any],
    label: str,
) -> None:
    """JCT scatter (log-log) and the confusion matrix of first deadlines met."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return
    fig, (ax, bx) = plt.subplots(1, 2, figsize=(11, 4.8))
    for slo, color, name in ((True, "tab:orange", "SLO"), (False, "tab:blue", "best effort")):
        xs = [art[j.id]["end"] - j.submit for j in workload.jobs if j.id in art and j.slo == slo]
        ys = [ours_end[j.id] - j.submit for j in workload.jobs if j.id in art and j.slo == slo]
        ax.scatter(xs, ys, s=2, alpha=0.35, color=color, label=name)
    top = max(max(ours_end.values()), 10.0)
    ax.plot([1, top], [1, top], color="black", lw=0.8)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("JCT, authors' simulator (min)")
    ax.set_ylabel("JCT, ours (min)")
    ax.set_title(f"per-job JCT ({label})")
    ax.legend(markerscale=6)
    c = result["confusion"]
    grid = [[c["both_met"], c["ours_only_met"]], [c["theirs_only_met"], c["both_missed"]]]
    bx.imshow(grid, cmap="Blues")
    for r in range(2):
        for k in range(2):
            bx.text(k, r, f"{grid[r][k]:,}", ha="center", va="center")
    bx.set_xticks([0, 1], ["theirs met", "theirs missed"])
    bx.set_yticks([0, 1], ["ours met", "ours missed"])
    bx.set_title(f"first deadline, SLO jobs: agreement {result['agreement']:.1%}")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def _progress(label: str) -> Callable[[int, int], None]:
    """A stderr line at every further 5% of the jobs done (a full P_MIX2 run takes minutes)."""
    shown = [-1]

    def report(done: int, total: int) -> None:
        step = 20 * done // max(total, 1)
        if step > shown[0]:
            shown[0] = step
            print(f"{label}: {done:,} of {total:,} jobs done", file=sys.stderr, flush=True)

    return report


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trace", type=Path, required=True)
    parser.add_argument("--artifact", type=Path, required=True, help="its jobs.csv.gz")
    parser.add_argument("--semantics", default="artifact", choices=semantics_names())
    parser.add_argument("--set", action="append", default=[], metavar="KEY=VALUE")
    parser.add_argument("--until", type=float, help="only jobs submitted before (1440: day 1)")
    parser.add_argument("--label", default="run")
    parser.add_argument("--out", type=Path, default=Path("parity"))
    parser.add_argument(
        "--against",
        type=Path,
        help="a second artifact run's jobs.csv.gz, compared in place of ours (no run)",
    )
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    trace = excerpt(args.trace, args.until, args.out)
    workload = load_trace(trace)
    art = artifact_jobs(args.artifact)
    load = os.getloadavg()[0]
    run: dict[str, Any]
    if args.against is not None:
        other = artifact_jobs(args.against)
        ours_end = {i: r["end"] for i, r in other.items()}
        ours_pre = {i: r["preempt"] for i, r in other.items()}
        missing = [j.id for j in workload.jobs if j.id not in other]
        if missing:
            raise SystemExit(f"--against lacks {len(missing)} of the trace's jobs: {missing[:3]}")
        cpu = 0.0
        run = {"against": str(args.against)}
    else:
        config = configure(trace, args.semantics, args.set)
        cpu, wall = cpu_time(), time.perf_counter()
        result = run_config(config, progress=_progress(args.label))
        cpu, wall = cpu_time() - cpu, time.perf_counter() - wall
        out = result.output
        ours_end = {j.id: e for j, e in zip(out.jobs, out.end, strict=True)}
        ours_pre = {j.id: float(p) for j, p in zip(out.jobs, out.preemptions, strict=True)}
        run = {
            "semantics": args.semantics,
            "overrides": args.set,
            "config": repr(config),
            "cpu_seconds": cpu,
            "wall_seconds": wall,
            "events": out.events,
            "policy": result.extra,
        }
    report = compare(workload, ours_end, ours_pre, art)
    report.update(
        label=args.label,
        load_average=load,
        date=time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        **run,
    )
    (args.out / f"{args.label}.json").write_text(json.dumps(report, indent=1, default=str) + "\n")
    write_jobs(args.out / f"{args.label}-jobs.csv.gz", workload, ours_end, ours_pre, art)
    plot(args.out / f"{args.label}.png", workload, ours_end, art, report, args.label)
    o, t = report["ours"], report["theirs"]
    print(
        f"| {args.label} | {o['wdmr']:.4f} ({t['wdmr']:.4f}) | {o['be_jct_mean']:.1f} "
        f"({t['be_jct_mean']:.1f}) | {o['jct_mean']:.1f} ({t['jct_mean']:.1f}) | "
        f"{o['first_deadline_miss']:.4f} ({t['first_deadline_miss']:.4f}) | "
        f"{report['agreement']:.1%} | {o['preemptions_per_job']:.2f} | {cpu:.0f} s | {load:.1f} |",
        flush=True,
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
