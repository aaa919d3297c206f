"""Errors that point at the fix: close matches, the subcommand's help, the file, what is missing.

Run in-process (``main(argv)``) with the captured stderr; the exit status of
bad input is 2 and the message one line (``test_cli.py`` runs the same
rules as a subprocess).
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from scheduling_opt.cli import main

ROOT = Path(__file__).resolve().parents[2]
FIG5 = ROOT / "instances" / "reclaim-aryl-fig5.json"


def error_of(argv: list[str], capsys: pytest.CaptureFixture[str]) -> str:
    assert main(argv) == 2
    lines = capsys.readouterr().err.strip().splitlines()
    assert len(lines) == 1, lines
    return lines[0]


@pytest.mark.parametrize(
    ("argv", "hint"),
    [
        (
            ["generate", "reclam", "--size", "8"],
            "unknown problem 'reclam'; did you mean 'reclaim'?",
        ),
        (
            ["solve", str(FIG5), "--method", "exact-pulpp"],
            "unknown method 'exact-pulpp' for problem 'reclaim'; did you mean 'exact-pulp'",
        ),
        (
            ["solve", str(FIG5), "--method", "EXACT_PULP"],
            "unknown method 'EXACT_PULP' for problem 'reclaim'; did you mean 'exact-pulp'?",
        ),
        (
            ["generate", "lease", "--size", "c60j100"],
            "bad size 'c60j100' for problem 'lease' (did you mean 'c60-j100'",
        ),
        (
            ["bench", "--problem", "mckp", "--method", "dpp"],
            "unknown method(s) ['dpp']; did you mean 'dp'?",
        ),
        (
            ["bench", "--problem", "mckpp"],
            "unknown problem 'mckpp'; did you mean 'mckp' or 'mmkp'?",
        ),
        (["reproduce", "arly"], "unknown paper 'arly'; did you mean 'aryl'?"),
    ],
)
def test_a_mistyped_name_gets_the_close_match(
    argv: list[str], hint: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert hint in error_of(argv, capsys)


def test_no_suggestion_when_nothing_is_close(capsys: pytest.CaptureFixture[str]) -> None:
    line = error_of(["generate", "zzzz", "--size", "8"], capsys)
    assert "did you mean" not in line
    assert "(known: allocation, batch-size" in line


@pytest.mark.parametrize(
    ("argv", "expected"),
    [
        (
            ["simulate", "--polcy", "x"],
            "unrecognized arguments: --polcy x; did you mean '--policy'? "
            "(see 'scheduling-opt simulate --help')",
        ),
        (
            ["bench", "--sute", "quick"],
            "unrecognized arguments: --sute quick; did you mean '--suite'? "
            "(see 'scheduling-opt bench --help')",
        ),
        (
            ["validate", str(FIG5), "extra.json"],
            "unrecognized arguments: extra.json (see 'scheduling-opt validate --help')",
        ),
    ],
)
def test_an_unknown_argument_names_the_subcommands_help(
    argv: list[str], expected: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert error_of(argv, capsys) == f"scheduling-opt: error: {expected}"


def test_truncated_json_names_the_file_line_and_column(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Line 3 opens the string "problem" at column 3 and the file ends inside it.
    path = tmp_path / "cut.json"
    path.write_text('{\n  "format": "scheduling-opt/v1",\n  "prob', encoding="utf-8")
    line = error_of(["validate", str(path)], capsys)
    assert line == (
        f"scheduling-opt: error: {path}: not valid JSON: Unterminated string starting at "
        "(line 3, column 3)"
    )


def test_a_duplicate_key_names_the_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "twice.json"
    path.write_text('{"format": "scheduling-opt/v1", "format": "x"}', encoding="utf-8")
    assert error_of(["solve", str(path)], capsys).startswith(f"scheduling-opt: error: {path}: ")


@pytest.mark.parametrize(
    ("deleted", "expected"),
    [
        ("jobs", "jobs: missing (the placement names jobs)"),
        ("cluster", "cluster: missing (the placement names servers)"),
    ],
)
def test_a_missing_section_is_reported_as_missing(
    deleted: str, expected: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    doc = json.loads(FIG5.read_text(encoding="utf-8"))
    assert doc["placement"]  # the rows name jobs and servers
    del doc[deleted]
    path = tmp_path / "cut.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    assert error_of(["validate", str(path)], capsys) == f"scheduling-opt: error: {expected}"


def test_params_naming_jobs_without_jobs_is_missing_jobs(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    doc = json.loads((ROOT / "instances" / "batch-size-g8.json").read_text(encoding="utf-8"))
    del doc["jobs"]
    path = tmp_path / "cut.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    line = error_of(["validate", str(path)], capsys)
    assert line == "scheduling-opt: error: jobs: missing (params.jobs names jobs)"


def test_an_old_method_name_runs_with_a_warning(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "split.json"
    shutil.copy(ROOT / "instances" / "memory-split-n8.json", path)
    assert main(["solve", str(path), "--method", "exact-milp"]) == 0
    captured = capsys.readouterr()
    assert "method     exact-highs" in captured.out
    assert captured.err.strip() == (
        "scheduling-opt: warning: method 'exact-milp' of problem 'memory-split' is deprecated "
        "and will be removed in the next release; use 'exact-highs'"
    )


def test_list_names_the_renamed_methods(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["list"]) == 0
    out = capsys.readouterr().out
    assert "  exact-milp: renamed exact-highs (the old name warns" in out
