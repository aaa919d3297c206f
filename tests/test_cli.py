"""The command line, run as a user runs it: a subprocess, exit codes, one-line errors."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from scheduling_opt import __version__


def run(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "scheduling_opt.cli", *args],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=cwd,
    )


def one_line_error(proc: subprocess.CompletedProcess[str], code: int = 2) -> str:
    assert proc.returncode == code, (proc.stdout, proc.stderr)
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1, proc.stderr
    assert "Traceback" not in proc.stderr
    return lines[0]


def write(tmp_path: Path, doc: Any, name: str = "inst.json") -> Path:
    path = tmp_path / name
    path.write_text(doc if isinstance(doc, str) else json.dumps(doc))
    return path


def test_version() -> None:
    proc = run("--version")
    assert proc.returncode == 0
    assert proc.stdout.strip() == f"scheduling-opt {__version__}"


@pytest.mark.parametrize(
    ("doc", "needle"),
    [
        ("{not json", "not valid JSON"),
        ({"format": "v0", "problem": "mckp"}, "format: expected 'scheduling-opt/v1'"),
        ({"format": "scheduling-opt/v1", "problem": "nosuch"}, "unknown problem 'nosuch' (known:"),
        (
            {
                "format": "scheduling-opt/v1",
                "problem": "reclaim",
                "cluster": {
                    "gpu_types": [{"name": "V100"}],
                    "servers": [{"id": "s", "gpu_type": "V100", "gpus": 8}],
                },
                "jobs": [{"id": "a", "workers": 1, "duration": 1}],
                "placement": [{"job": "a", "server": "i9", "workers": 1}],
            },
            "placement[0].server: unknown server 'i9'",
        ),
    ],
)
@pytest.mark.parametrize("command", ["validate", "solve"])
def test_bad_instances_one_line_exit_2(tmp_path: Path, doc: Any, needle: str, command: str) -> None:
    line = one_line_error(run(command, str(write(tmp_path, doc))))
    assert needle in line


def test_missing_file_and_bad_arguments(tmp_path: Path) -> None:
    assert "cannot read" in one_line_error(run("validate", str(tmp_path / "nope.json")))
    assert "invalid choice" in one_line_error(run("frobnicate"))
    assert "--time-limit" in one_line_error(run("solve", "x.json", "--time-limit", "-1"))
    assert "required" in one_line_error(run("generate", "mckp"))
    assert "unknown problem" in one_line_error(run("generate", "nosuch", "--size", "x"))


INSTANCES = Path(__file__).resolve().parent.parent / "instances"
FIGURE6 = INSTANCES / "mckp-aryl-figure6.json"


def test_solve_json_is_one_object_with_the_documented_keys() -> None:
    proc = run("solve", str(FIGURE6), "--method", "exact", "--json", "--verify")
    assert proc.returncode == 0, proc.stderr
    record = json.loads(proc.stdout)  # exactly one JSON document on stdout
    assert {"problem", "method", "status", "objective", "seconds", "choice", "weight"} <= set(
        record
    )
    assert record["problem"] == "mckp"
    assert record["method"] == "exact"
    assert record["status"] == "optimal"
    assert record["verified"] is True
    # Aryl Figure 6 (Table 4 jobs), 4 free GPUs: A's item (2 GPUs, 50) plus
    # B's 2-worker item (2 GPUs, 30) beat B alone at 4 workers (40) or A + B's 1 (70).
    assert record["objective"] == pytest.approx(80.0)
    assert record["choice"] == [0, 1]


def test_solve_default_method_and_table_output() -> None:
    proc = run("solve", str(FIGURE6))
    assert proc.returncode == 0, proc.stderr
    lines = dict(line.split(None, 1) for line in proc.stdout.strip().splitlines())
    assert lines["problem"] == "mckp"
    assert lines["status"] in {"optimal", "feasible"}
    assert float(lines["objective"]) == pytest.approx(80.0)


def test_unknown_method_lists_the_known_ones() -> None:
    line = one_line_error(run("solve", str(FIGURE6), "--method", "magic"))
    assert "unknown method 'magic'" in line
    assert "dp" in line
    assert "exact" in line


def test_problem_specific_errors_are_one_line(tmp_path: Path) -> None:
    doc = {"format": "scheduling-opt/v1", "problem": "mckp", "capacity": -3, "groups": []}
    for command in ("validate", "solve"):
        assert "capacity" in one_line_error(run(command, str(write(tmp_path, doc))))


def test_validate_ok_on_every_curated_instance(capsys: pytest.CaptureFixture[str]) -> None:
    from scheduling_opt.cli import main

    files = sorted(INSTANCES.glob("*.json"))
    assert files
    for path in files:  # in-process: one interpreter start per file would be slow
        assert main(["validate", str(path)]) == 0, (path, capsys.readouterr().err)
        assert capsys.readouterr().out == "ok\n"


def test_generate_then_solve_round_trip(tmp_path: Path) -> None:
    out = tmp_path / "gen.json"
    proc = run("generate", "mckp", "--size", "n20", "--seed", "3", "--out", str(out))
    assert proc.returncode == 0, proc.stderr
    again = run("generate", "mckp", "--size", "n20", "--seed", "3")
    assert again.stdout == out.read_text()  # same seed, same instance
    dp = json.loads(run("solve", str(out), "--method", "dp", "--json", "--verify").stdout)
    milp = json.loads(run("solve", str(out), "--method", "exact-pulp", "--json").stdout)
    assert dp["objective"] == pytest.approx(milp["objective"])
    assert "unknown size" in one_line_error(run("generate", "mckp", "--size", "huge"))


def test_list_names_every_problem() -> None:
    proc = run("list")
    assert proc.returncode == 0
    assert "mckp:" in proc.stdout
    assert "  dp (default, exact)" in proc.stdout
