"""The load sweep's plot: no two panel titles overlap (Aryl's long oracle claims once did).

Titles side by side must keep :data:`GAP` pixels between them: the tick
labels of real data widen the panels' margins and move the titles (the
unwrapped titles of the test's empty panels sat 1 px apart, and overlapped
in the Aryl run's plot).
"""

from __future__ import annotations

import itertools

import pytest

from scheduling_opt.reproduce import PAPERS
from scheduling_opt.reproduce.grid import Point
from scheduling_opt.reproduce.plots import sweep_figure

pytest.importorskip("matplotlib", reason="matplotlib is not installed (the 'test' extra)")

#: Least horizontal room (pixels at 100 dpi) between two titles of one row.
GAP = 20.0


@pytest.mark.parametrize("name", ["aryl", "chronus", "edl"])
def test_no_two_panel_titles_overlap(name: str) -> None:
    import matplotlib.pyplot as plt

    # Two densities with no runs: the panels and their titles, no lines.
    grid = [Point("excerpt", 1.0, ()), Point("excerpt", 1.3, ())]
    fig = sweep_figure(PAPERS[name], grid)
    assert fig is not None
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    boxes = [ax.title.get_window_extent(renderer) for ax in fig.axes if ax.get_visible()]
    assert len(boxes) == len([c for c in PAPERS[name].claims if c.kind != "value"])
    overlapping = [
        (i, j)
        for (i, a), (j, b) in itertools.combinations(enumerate(boxes), 2)
        if a.y0 < b.y1
        and b.y0 < a.y1  # one row
        and a.x0 < b.x1 + GAP
        and b.x0 < a.x1 + GAP
    ]
    plt.close(fig)
    assert overlapping == []
