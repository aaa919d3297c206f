"""Plots of the benchmark summaries: mean gap and median time against size (optional).

Drawn with matplotlib when it is installed (the ``bench`` extra); without it
:func:`plot` does nothing. One PNG per problem, generated sizes only (the
curated files are not a size scale).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Protocol


class Summary(Protocol):
    """What a plot reads of a :class:`scheduling_opt.bench.report.Summary`.

    (A protocol, so that the report can call the plots without an import cycle.)
    """

    @property
    def problem(self) -> str: ...
    @property
    def size(self) -> str: ...
    @property
    def method(self) -> str: ...
    @property
    def mean_gap(self) -> float | None: ...
    @property
    def median_seconds(self) -> float | None: ...
    @property
    def dominated_by(self) -> tuple[str, ...]: ...


def plot(summaries: Sequence[Summary], problems: Sequence[str], out: Path) -> list[Path]:
    """Write ``<problem>.png`` in ``out`` for each problem; return the files written.

    Dominated methods (see :func:`scheduling_opt.bench.report.dominated`) are
    drawn with hollow markers at the sizes where they are dominated.
    """
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return []
    written = []
    for problem in problems:
        rows = [s for s in summaries if s.problem == problem and not s.size.startswith("file:")]
        if not rows:
            continue
        sizes = list(dict.fromkeys(s.size for s in rows))
        fig, (ax_gap, ax_time) = plt.subplots(1, 2, figsize=(11, 4))
        for method in dict.fromkeys(s.method for s in rows):
            mine = {s.size: s for s in rows if s.method == method}
            xs = [i for i, size in enumerate(sizes) if size in mine]
            gaps = [100 * (mine[sizes[i]].mean_gap or 0.0) for i in xs]
            times = [max(mine[sizes[i]].median_seconds or 0.0, 1e-6) for i in xs]
            (line,) = ax_gap.plot(xs, gaps, marker="o", label=method)
            ax_time.plot(xs, times, marker="o", label=method, color=line.get_color())
            hollow = [k for k, i in enumerate(xs) if mine[sizes[i]].dominated_by]
            for ax, ys in ((ax_gap, gaps), (ax_time, times)):
                ax.scatter(
                    [xs[k] for k in hollow],
                    [ys[k] for k in hollow],
                    s=60,
                    facecolors="white",
                    edgecolors=line.get_color(),
                    zorder=3,
                )
        for ax in (ax_gap, ax_time):
            ax.set_xticks(range(len(sizes)), sizes, rotation=30, ha="right")
            ax.set_xlabel("size")
        ax_gap.set_ylabel("mean gap to optimum (%)")
        ax_time.set_ylabel("median time (s)")
        ax_time.set_yscale("log")
        ax_gap.legend(fontsize="small", title="hollow: dominated", title_fontsize="small")
        fig.suptitle(problem)
        fig.tight_layout()
        path = out / f"{problem}.png"
        fig.savefig(path, dpi=100)
        plt.close(fig)
        written.append(path)
    return written
