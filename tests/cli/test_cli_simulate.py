"""`scheduling-opt simulate` as a user runs it: defaults on the bundled excerpt, bad input."""

from __future__ import annotations

import json
from pathlib import Path

from .test_cli import one_line_error, run


def test_simulate_with_no_arguments_prints_every_baseline(tmp_path: Path) -> None:
    proc = run("simulate", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    rows = [line for line in proc.stdout.splitlines() if line.startswith("| ")]
    policies = [row.split("|")[1].strip() for row in rows[1:]]
    assert policies == [
        "fifo",
        "sjf",
        "edf",
        "edf-np",
        "srtf",
        "tiresias",
        "yarn-cs",
        "yarn-cs-slo",
        "genie",
        "themis",
        "3sigma",
    ]


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
