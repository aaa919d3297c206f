"""``scheduling-opt generate`` at any size its grammar accepts, and bounded (issue 26 item 3).

The expected counts come from each grammar's words (``c<servers>-j<jobs>``:
that many servers and jobs), not from the generators' code.
"""

from __future__ import annotations

import json
import re
from typing import Any

import pytest

from scheduling_opt.cli import main
from scheduling_opt.registry import get_problem, problem_names

from .test_cli import one_line_error, run


def _generate(capsys: pytest.CaptureFixture[str], problem: str, size: str) -> dict[str, Any]:
    assert main(["generate", problem, "--size", size, "--seed", "1"]) == 0, capsys.readouterr().err
    doc: dict[str, Any] = json.loads(capsys.readouterr().out)
    return doc


def _error(capsys: pytest.CaptureFixture[str], problem: str, size: str) -> str:
    assert main(["generate", problem, "--size", size]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1, err
    return err[0]


def _servers(doc: dict[str, Any]) -> list[dict[str, Any]]:
    servers: list[dict[str, Any]] = doc["cluster"]["servers"]
    return servers


def test_reclaim_at_2000_on_loan_servers(capsys: pytest.CaptureFixture[str]) -> None:
    doc = _generate(capsys, "reclaim", "2000")
    assert sum(1 for s in _servers(doc) if s.get("on_loan")) == 2000


def test_placement_at_443_servers_has_1000_jobs_to_place(
    capsys: pytest.CaptureFixture[str],
) -> None:
    doc = _generate(capsys, "placement", "443")
    assert len(_servers(doc)) == 443
    placed = {row["job"] for row in doc["placement"]}
    assert sum(1 for j in doc["jobs"] if j["id"] not in placed) == 1000


@pytest.mark.parametrize(
    ("problem", "size", "expect"),
    [
        ("mckp", "n7-c30-weak", lambda d: (len(d["groups"]), d["capacity"]) == (7, 30)),
        ("mckp", "n9", lambda d: (len(d["groups"]), d["capacity"]) == (9, 36)),
        ("allocation", "n7", lambda d: len(d["jobs"]) == 7),
        ("placement", "5", lambda d: len(_servers(d)) == 5),
        ("lease", "j5", lambda d: ([s["gpus"] for s in _servers(d)], len(d["jobs"])) == ([4], 5)),
        (
            "lease",
            "c3-j9",
            lambda d: ([s["gpus"] for s in _servers(d)], len(d["jobs"])) == ([8, 8, 8], 9),
        ),
        (
            "batch-size",
            "g12-n5",
            lambda d: (sum(s["gpus"] for s in _servers(d)), len(d["jobs"])) == (12, 5),
        ),
        ("batch-size", "g12", lambda d: len(d["jobs"]) == 9),  # 3/4 of 12 GPUs
        (
            "memory-split",
            "n5-c100",
            lambda d: (len(d["opportunistic"]), d["gpu"]["chunk_gb"]) == (5, 0.1),
        ),
    ],
)
def test_sizes_outside_the_suites_are_generated(
    capsys: pytest.CaptureFixture[str], problem: str, size: str, expect: Any
) -> None:
    named = {s for sizes in get_problem(problem).sizes.values() for s in sizes}
    assert size not in named
    assert expect(_generate(capsys, problem, size))


def _limits(grammar: str) -> list[int]:
    """The upper ends of the ranges a grammar states (``1..50,000`` -> 50000)."""
    return [int(m.replace(",", "")) for m in re.findall(r"\.\.([0-9][0-9,]*)", grammar)]


#: One size per problem just past the first range its grammar states.
TOO_LARGE = {
    "allocation": "n{}",
    "batch-size": "g{}",
    "lease": "j{}",
    "mckp": "n{}",
    "mmkp": "n{}",
    "memory-split": "n{}",
    "placement": "{}",
    "reclaim": "{}",
}


def test_every_problem_states_its_grammar_and_has_a_too_large_case() -> None:
    assert sorted(TOO_LARGE) == sorted(problem_names())
    for name in problem_names():
        assert _limits(get_problem(name).size_grammar), name


@pytest.mark.parametrize("problem", sorted(TOO_LARGE))
def test_a_size_past_the_limit_is_one_line_naming_the_limit(
    capsys: pytest.CaptureFixture[str], problem: str
) -> None:
    limit = _limits(get_problem(problem).size_grammar)[0]
    over = limit + 4  # + 4 keeps batch-size's GPU count a multiple of 4
    line = _error(capsys, problem, TOO_LARGE[problem].format(over))
    assert f"bad size '{TOO_LARGE[problem].format(over)}' for problem '{problem}'" in line
    assert f"at most {limit:,}" in line


@pytest.mark.parametrize("problem", sorted(TOO_LARGE))
def test_an_enormous_number_is_refused_at_once(
    capsys: pytest.CaptureFixture[str], problem: str
) -> None:
    line = _error(capsys, problem, TOO_LARGE[problem].format("9" * 5000))
    assert "at most" in line
    assert len(line) < 600


@pytest.mark.parametrize(
    ("problem", "size"),
    [
        ("reclaim", "4e3"),
        ("reclaim", "-5"),
        ("reclaim", "\u0665"),
        ("mckp", "huge"),
        ("lease", "c2"),
    ],
)
def test_a_malformed_size_shows_the_grammar(
    capsys: pytest.CaptureFixture[str], problem: str, size: str
) -> None:
    line = _error(capsys, problem, size)
    assert get_problem(problem).size_grammar in line


def test_list_shows_every_grammar_and_a_refusal_exits_2() -> None:
    proc = run("list")
    assert proc.returncode == 0
    for name in problem_names():
        assert f"  sizes: {get_problem(name).size_grammar}\n" in proc.stdout
    line = one_line_error(run("generate", "reclaim", "--size", "50001"))
    assert "at most 50,000" in line
