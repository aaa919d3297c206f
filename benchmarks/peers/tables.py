"""The Markdown tables of docs/use-from-your-scheduler.md, from the case scripts' outputs.

Usage::

    python benchmarks/peers/tables.py sia RUN.json [RUN.json ...]
    python benchmarks/peers/tables.py sia-runs CVXPY.json OURS.json
    python benchmarks/peers/tables.py chronus RUN_DIR [RUN_DIR ...]
    python benchmarks/peers/tables.py pollux RUN.json [RUN.json ...]

``sia``: per file (a ``run --shadow`` or a ``replay``) the objective
agreement and the solver times; ``sia-runs``: JCT and makespan of Sia's own
run beside the library's; ``chronus``: per run directory of
``chronus_case.py`` the metrics of the shared copy's ``tools/metrics.py``
(``peer_metrics.json``, computed first) and the selection calls' times;
``pollux``: per run the JCT, makespan and decision time. Standard library
and numpy only.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np


def _load(path: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(Path(path).read_text())
    return data


def sia(paths: Sequence[str]) -> list[str]:
    """Objective agreement and solver times per file."""
    out = [
        "| run | rounds | max jobs | equal objective | ours lower / higher | max abs gap "
        "| cvxpy+CBC ms (mean / p95) | library ms (mean / p95) | ratio |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for path in paths:
        d = _load(path)
        rows = [r for r in d["rounds"] if "cvxpy_obj" in r and "ours_obj" in r]
        if not rows:
            continue
        unit = "cpu_ms" if all("cvxpy_cpu_ms" in r for r in rows) else "ms"
        cvx = np.array([r[f"cvxpy_{unit}"] for r in rows])
        mine = np.array([r[f"ours_{unit}"] for r in rows])
        gaps = np.array([r["ours_obj"] - r["cvxpy_obj"] for r in rows])
        out.append(
            f"| {Path(path).stem} | {len(rows)} | {max(r.get('jobs', 0) for r in rows)} "
            f"| {int((abs(gaps) <= 1e-4).sum())} | {int((gaps < -1e-4).sum())} / "
            f"{int((gaps > 1e-4).sum())} | {abs(gaps).max():.2g} "
            f"| {cvx.mean():.1f} / {np.percentile(cvx, 95):.1f} "
            f"| {mine.mean():.2f} / {np.percentile(mine, 95):.2f} "
            f"| {cvx.sum() / mine.sum():.0f}x |"
        )
    return out


def sia_runs(cvxpy: str, ours: str) -> list[str]:
    """JCT and makespan of the two runs."""
    a, b = _load(cvxpy), _load(ours)
    same = sum(1 for k, v in a["jcts"].items() if b["jcts"].get(k) == v)
    return [
        "| run | jobs done | mean JCT (s) | makespan (s) | rounds | jobs with equal JCT |",
        "|---|---|---|---|---|---|",
        f"| Sia's cvxpy+CBC | {a['jobs_done']} | {a['avg_jct_s']:.1f} | {a['makespan_s']} "
        f"| {a['steps']} | |",
        f"| library | {b['jobs_done']} | {b['avg_jct_s']:.1f} | {b['makespan_s']} "
        f"| {b['steps']} | {same} of {len(a['jcts'])} |",
    ]


def chronus(dirs: Sequence[str]) -> list[str]:
    """Metrics and selection times per run directory."""
    out = [
        "| run | wDMR | best-effort JCT (min) | mean JCT (min) | makespan (min) "
        "| selections | selection CPU s | CPU s |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for d in dirs:
        m = _load(str(Path(d) / "peer_metrics.json"))
        case = Path(d) / "peer_case.json"
        c = _load(str(case)) if case.exists() else {}
        calls = c.get("milp", [])
        sel = sum(x["t"] for x in calls)
        out.append(
            f"| {Path(d).name} | {100 * m['wDMR_mean_miss_ddl_over_slo']:.2f}% "
            f"| {m['avg_jct_best_effort_min']:.1f} | {m['avg_jct_all_min']:.1f} "
            f"| {m['makespan_min']:.0f} | {len(calls)} | {sel:.1f} | {c.get('cpu_s', 0):.0f} |"
        )
    return out


def pollux(paths: Sequence[str]) -> list[str]:
    """JCT, makespan and decision time per run."""
    out = [
        "| policy | jobs done | mean JCT (s) | makespan (s) | decision CPU ms (mean / p95 / max) "
        "| library calls CPU ms (mean / max) |",
        "|---|---|---|---|---|---|",
    ]
    for path in paths:
        d = _load(path)
        lib = (
            f"{d['library_cpu_ms_mean']:.1f} / {d['library_cpu_ms_max']:.1f}"
            if d.get("library_cpu_ms_mean") is not None
            else ""
        )
        out.append(
            f"| {d['policy']} | {d['jobs_done']} | {d['avg_jct_s']:.0f} | {d['makespan_s']} "
            f"| {d['decision_cpu_ms_mean']:.1f} / {d['decision_cpu_ms_p95']:.1f} / "
            f"{d['decision_cpu_ms_max']:.1f} | {lib} |"
        )
    return out


def main(argv: Sequence[str]) -> int:
    """Print the table named by the first argument."""
    kind, rest = argv[0], argv[1:]
    if kind == "sia":
        lines = sia(rest)
    elif kind == "sia-runs":
        lines = sia_runs(rest[0], rest[1])
    elif kind == "chronus":
        lines = chronus(rest)
    elif kind == "pollux":
        lines = pollux(rest)
    else:
        raise SystemExit(f"unknown table {kind!r}: sia, sia-runs, chronus or pollux")
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
