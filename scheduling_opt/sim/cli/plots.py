"""Plots of a simulation run (matplotlib is optional: without it, a note instead).

- ``jct_cdf.png``: the JCT CDF per run (log x axis);
- ``timeline.png``: busy GPUs and queue length over time per run;
- ``deadline_miss.png``: deadline-miss ratio and wDMR per run.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from scheduling_opt.sim.sweep import RunResult


def _label(r: RunResult, results: Sequence[RunResult]) -> str:
    seeds = {x.config.seed for x in results}
    return r.config.name if len(seeds) == 1 else f"{r.config.name} s{r.config.seed}"


def _legend(ax: Any) -> None:
    # A run without jobs draws no line: matplotlib would warn on stderr
    # ("No artists with labels found"), which a one-line CLI must not print.
    handles = ax.get_legend_handles_labels()[0]
    if handles:
        # Many runs (policies x seeds): more columns, smaller type.
        many = len(handles) > 12
        ax.legend(fontsize="x-small" if many else "small", ncol=1 + len(handles) // 25)


def _save(fig: Any, path: Path) -> None:
    """Tighten the layout where it fits and save (a crowded figure is saved as drawn)."""
    import warnings

    with warnings.catch_warnings():
        # "Tight layout not applied" (dozens of runs in one legend) is
        # cosmetic; on stderr it would break the CLI's quiet exit 0.
        warnings.simplefilter("ignore", UserWarning)
        fig.tight_layout()
    fig.savefig(path, dpi=100)


def write_plots(
    out_dir: Path, results: Sequence[RunResult], step: float, unit: str = "minutes"
) -> tuple[list[str], str]:
    """Write the plots; return their file names and a note (empty when all went well).

    ``unit`` names the workload's time unit on the axes.
    """
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return [], "Plots skipped: matplotlib is not installed (pip install matplotlib)."
    from scheduling_opt.sim.results import sample

    names = []
    fig: Any
    fig, ax = plt.subplots(figsize=(6, 4))
    for r in results:
        jct = np.sort(
            np.array([e - j.submit for j, e in zip(r.output.jobs, r.output.end, strict=True)])
        )
        if jct.size:
            ax.plot(
                np.maximum(jct, 1e-3),
                np.arange(1, jct.size + 1) / jct.size,
                label=_label(r, results),
            )
    ax.set_xscale("log")
    ax.set_xlabel(f"JCT ({unit})")
    ax.set_ylabel("CDF")
    _legend(ax)
    _save(fig, out_dir / "jct_cdf.png")
    plt.close(fig)
    names.append("jct_cdf.png")

    fig, (top, bottom) = plt.subplots(2, 1, figsize=(7, 5), sharex=True)
    for r in results:
        pts = sample(r.output.changes, step)
        if not pts:
            continue
        t = [p[0] for p in pts]
        top.plot(t, [p[1] for p in pts], label=_label(r, results), linewidth=0.8)
        bottom.plot(t, [p[2] for p in pts], linewidth=0.8)
    top.set_ylabel("busy GPUs")
    bottom.set_ylabel("queued jobs")
    bottom.set_xlabel(f"time ({unit})")
    _legend(top)
    _save(fig, out_dir / "timeline.png")
    plt.close(fig)
    names.append("timeline.png")

    fig, ax = plt.subplots(figsize=(6, 3.5))
    x = np.arange(len(results))
    ax.bar(x - 0.2, [r.metrics["deadline_miss_ratio"] for r in results], 0.4, label="miss ratio")
    ax.bar(x + 0.2, [r.metrics["wdmr"] for r in results], 0.4, label="wDMR")
    ax.set_xticks(x, [_label(r, results) for r in results], rotation=30)
    ax.set_ylabel("share of SLO jobs")
    ax.legend(fontsize="small")
    _save(fig, out_dir / "deadline_miss.png")
    plt.close(fig)
    names.append("deadline_miss.png")
    return names, ""
