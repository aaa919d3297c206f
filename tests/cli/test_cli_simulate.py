"""`scheduling-opt simulate` as a user runs it: defaults on the bundled excerpt, bad input."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from .test_cli import one_line_error, run


def _cells(line: str) -> list[str]:
    return [c.strip() for c in line.strip().strip("|").split("|")]


def test_simulate_with_no_arguments_teaches_something(tmp_path: Path) -> None:
    """Issue 26: policies that differ (>= 2x in mean JCT), units, a reading, the plots named."""
    proc = run("simulate", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    first_row = next(i for i, line in enumerate(lines) if line.startswith("| "))
    head, rows = _cells(lines[first_row]), [_cells(x) for x in lines[first_row + 2 : first_row + 8]]
    assert [r[0] for r in rows] == ["fifo", "sjf", "edf", "srtf", "tiresias", "yarn-cs"]
    # A unit in every header but the policy's name and the seed.
    assert all(re.search(r"\((min|s|share|share of .+|per job)\)$", h) for h in head[2:]), head
    assert "times in minutes" in lines[first_row - 1]
    jct = [float(r[head.index("avg JCT (min)")]) for r in rows]
    assert max(jct) >= 2 * min(jct)
    # The busy rule of docs/simulation.md holds at the size shown.
    miss = [float(r[head.index("deadline miss (share of SLO jobs)")]) for r in rows]
    assert min(miss) >= 0.05
    reading = lines[first_row + 8]
    assert reading.startswith("Reading: ")
    best, worst = rows[jct.index(min(jct))][0], rows[jct.index(max(jct))][0]
    assert f"{best} has the lowest mean JCT" in reading
    assert f"{worst} the highest" in reading
    written = [line for line in lines if line.startswith(("wrote ", "plots: "))]
    assert written[0].startswith("wrote simulate-out/report.md")
    assert (tmp_path / "simulate-out" / "report.md").is_file()
    plots = written[1].removeprefix("plots: ")
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        assert plots.startswith("none (matplotlib is not installed")
    else:
        for name in plots.split(", "):
            assert (tmp_path / name).is_file(), name


@pytest.mark.slow
def test_simulate_writes_the_output_contract(tmp_path: Path) -> None:
    proc = run("simulate", "--policy", "fifo", "--policy", "edf", "--out", str(tmp_path / "o"))
    assert proc.returncode == 0, proc.stderr
    summary = json.loads((tmp_path / "o" / "summary.json").read_text())
    assert [r["policy"] for r in summary["runs"]] == ["fifo", "edf"]
    for key in ("jct_mean", "jct_p99", "utilization", "deadline_miss_ratio", "wdmr"):
        assert key in summary["runs"][0]["metrics"]
    assert (tmp_path / "o" / "jobs.csv").read_text().startswith("policy,seed,job_id,")


def test_simulate_bad_trace_is_one_line_exit_2(tmp_path: Path) -> None:
    bad = tmp_path / "bad.csv"
    bad.write_text("job_id,user\n1,u\n")
    assert "bad.csv" in one_line_error(run("simulate", "--trace", str(bad)))
    assert "policy" in one_line_error(run("simulate", "--policy", "nope"))
