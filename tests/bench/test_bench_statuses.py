"""Skipped, time-limited and failed runs are counted and explained in the printed tables.

The toy knapsack (``toy.py``) has a method refused above 6 items
(``refuses-large``: the quick sizes are n4 and n8, so it runs on n4 and is
skipped on n8), one that always stops at its limit (``stops-early``) and
one whose answer the checker refuses (``liar``).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from scheduling_opt.bench import build_tasks, run_tasks, status_notes, summarize
from scheduling_opt.registry import Problem

from .toy import NAME, registered

METHODS = ["exact", "refuses-large", "stops-early", "liar"]


@pytest.fixture
def toy() -> Iterator[Problem[Any, Any]]:
    with registered() as problem:
        yield problem


def test_each_unfinished_status_is_counted_in_its_column(toy: Problem[Any, Any]) -> None:
    tasks = build_tasks("quick", [NAME], seeds=2, instances_dir=None)
    rows, _ = run_tasks(tasks, METHODS, time_limit=5)
    by = {(s.size, s.method): s for s in summarize(rows)}
    # (failed, skipped, time limit) out of 2 runs per size and method.
    counts = {k: (s.failed, s.skipped, s.time_limited) for k, s in by.items()}
    assert counts == {
        ("n4", "exact"): (0, 0, 0),
        ("n4", "refuses-large"): (0, 0, 0),
        ("n4", "stops-early"): (0, 0, 2),
        ("n4", "liar"): (2, 0, 0),
        ("n8", "exact"): (0, 0, 0),
        ("n8", "refuses-large"): (0, 2, 0),
        ("n8", "stops-early"): (0, 0, 2),
        ("n8", "liar"): (2, 0, 0),
    }


def test_the_printed_table_shows_the_statuses_and_their_reasons(
    toy: Problem[Any, Any], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from scheduling_opt.cli import main

    argv = ["bench", "--problem", NAME, "--seeds", "2", "--out", str(tmp_path), "--quiet"]
    argv += ["--time-limit", "5"]
    for m in METHODS:
        argv += ["--method", m]
    assert main(argv) == 1  # the liar's rows fail
    printed = capsys.readouterr().out
    assert "| runs | failed | skipped | time limit |" in printed
    assert "| n8 | refuses-large | 2 | 0 | 2 | 0 | - | - |" in printed
    assert "| n4 | stops-early | 2 | 0 | 0 | 2 |" in printed
    assert "| n4 | liar | 2 | 2 | 0 | 0 | - | - |" in printed
    notes = [line for line in printed.splitlines() if line.startswith("- ")]
    # In the registry's method order, per size.
    assert notes == [
        "- n4 liar, failed (2 of 2 runs): n4/seed0: check: over capacity (and 1 more)",
        "- n4 stops-early, time limit (2 of 2 runs): n4/seed0: stopped at the 5 s limit: "
        "no proof after 12 nodes (and 1 more)",
        "- n8 liar, failed (2 of 2 runs): n8/seed0: check: over capacity (and 1 more)",
        "- n8 refuses-large, skipped (2 of 2 runs): n8/seed0: items: 256 subsets, limit 64 "
        "(and 1 more)",
        "- n8 stops-early, time limit (2 of 2 runs): n8/seed0: stopped at the 5 s limit: "
        "no proof after 12 nodes (and 1 more)",
    ]
    assert "2 skipped (beyond the method's size limit), 4 stopped at the time limit, 4 failed" in (
        printed
    )
    report = (tmp_path / "report.md").read_text(encoding="utf-8")
    assert notes[3] in report


def test_no_notes_when_every_run_finished(toy: Problem[Any, Any]) -> None:
    tasks = build_tasks("quick", [NAME], seeds=1, instances_dir=None)
    rows, _ = run_tasks(tasks, ["exact", "greedy"], time_limit=5)
    assert status_notes(rows, NAME) == ""
