"""The load sweep's plot: each claim's number against the measured offered load.

One panel per claim that has a direction (reductions, ratios), one line per
base workload (none for a workload the claim skips), a thin line per
``Claim.over`` label (the baseline under a parameter's other values, e.g.
Gandiva's interference), a dashed line at the paper's number and a dotted one at "no
difference". A panel's title is wrapped to :data:`TITLE_WIDTH` characters,
so that two long claim names side by side never overlap (Aryl's oracle
claims once did). matplotlib is optional: without it no plot is written.
"""

from __future__ import annotations

import textwrap
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from scheduling_opt.reproduce.grid import Point
from scheduling_opt.reproduce.papers import Claim, PaperSet

#: Characters per line of a panel's title (a 4.2-inch panel holds about 60 at
#: the "small" font size; 44 leaves room between neighbours).
TITLE_WIDTH = 44


def panel_title(claim: Claim) -> str:
    """A panel's title: the claim's name, then which runs it compares, wrapped.

    Examples
    --------
    >>> c = Claim("mean queueing, Aryl with the trace's durations (oracle, ours), x lower",
    ...           "queueing_mean", "ratio", 1.53, "fifo-no-loan", "aryl-oracle")
    >>> print(panel_title(c))
    mean queueing, Aryl with the trace's
    durations (oracle, ours), x lower
    aryl-oracle vs fifo-no-loan
    """
    lines = textwrap.wrap(claim.what, TITLE_WIDTH)
    lines += textwrap.wrap(f"{claim.policy} vs {claim.baseline}", TITLE_WIDTH)
    return "\n".join(lines)


def write_sweep_plot(path: Path, paper: PaperSet, grid: Sequence[Point]) -> bool:
    """Write the plot to ``path``; False when matplotlib is missing or nothing to draw."""
    fig = sweep_figure(paper, grid)
    if fig is None:
        return False
    import matplotlib.pyplot as plt

    fig.savefig(path, dpi=100)
    plt.close(fig)
    return True


def sweep_figure(paper: PaperSet, grid: Sequence[Point]) -> Any:
    """The plot's figure (laid out, not saved); None when matplotlib is missing or nothing to draw."""
    claims = [c for c in paper.claims if c.kind != "value"]
    if not claims or len({p.density for p in grid}) < 2:
        return None
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return None
    cols = min(3, len(claims))
    rows = -(-len(claims) // cols)
    fig: Any
    fig, axes = plt.subplots(rows, cols, figsize=(4.2 * cols, 3.2 * rows), squeeze=False)
    workloads = list(dict.fromkeys(p.workload for p in grid))
    for ax, claim in zip(axes.flat, claims, strict=False):
        for w in workloads:
            if w in claim.skip_on:
                continue
            mine = [p for p in grid if p.workload == w]
            # One colour per workload in every panel, whichever workloads a claim skips.
            color = f"C{workloads.index(w) * (1 + len(claim.over)) % 10}"
            pts = [(p.offered_load, claim.ours(p.metrics)) for p in mine]
            _line(ax, claim, pts, w, "o", color)
            for k, label in enumerate(claim.over, 1):  # the baseline's other parameter values
                pts = [(p.offered_load, claim.against(p.metrics, label)) for p in mine]
                tone = f"C{(workloads.index(w) * (1 + len(claim.over)) + k) % 10}"
                _line(ax, claim, pts, f"{w} vs {label}", ".", tone, thin=True)
        paper_y = claim.paper if claim.kind == "ratio" else -claim.paper
        ax.axhline(paper_y, linestyle="--", color="grey", linewidth=0.8, label="paper")
        ax.axhline(1.0 if claim.kind == "ratio" else 0.0, linestyle=":", color="black", lw=0.6)
        ax.set_title(panel_title(claim), fontsize="small")
        ax.set_xlabel("offered load")
        ax.set_ylabel("x lower" if claim.kind == "ratio" else "change (%)")
    for ax in list(axes.flat)[len(claims) :]:
        ax.set_visible(False)
    for ax in list(axes.flat)[: len(claims)]:
        ax.legend(fontsize="xx-small")
    fig.tight_layout()
    return fig


def _line(
    ax: Any,
    claim: Claim,
    pts: Sequence[tuple[float, float | None]],
    label: str,
    marker: str,
    color: str,
    *,
    thin: bool = False,
) -> None:
    """One line of ``claim``'s numbers against offered load (points without a number left out)."""
    known = sorted((x, y if claim.kind == "ratio" else -y) for x, y in pts if y is not None)
    if known:
        xs, ys = zip(*known, strict=True)
        ax.plot(xs, ys, marker=marker, label=label, color=color, linewidth=0.7 if thin else 1.5)
