"""The command line, run as a user runs it: a subprocess, exit codes, one-line errors."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
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


@pytest.mark.slow
def test_missing_file_and_bad_arguments(tmp_path: Path) -> None:
    assert "cannot read" in one_line_error(run("validate", str(tmp_path / "nope.json")))
    assert "invalid choice" in one_line_error(run("frobnicate"))
    assert "--time-limit" in one_line_error(run("solve", "x.json", "--time-limit", "-1"))
    assert "required" in one_line_error(run("generate", "mckp"))
    assert "unknown problem" in one_line_error(run("generate", "nosuch", "--size", "x"))


INSTANCES = Path(__file__).resolve().parents[2] / "instances"
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
    # Proven optimal: the bound is the objective and the certified gap zero.
    assert record["bound"] == pytest.approx(80.0)
    assert record["gap"] == 0.0


def test_solve_default_method_and_table_output() -> None:
    proc = run("solve", str(FIGURE6))
    assert proc.returncode == 0, proc.stderr
    lines = dict(line.split(None, 1) for line in proc.stdout.strip().splitlines())
    assert lines["problem"] == "mckp"
    assert lines["status"] in {"optimal", "feasible"}
    assert float(lines["objective"]) == pytest.approx(80.0)
    # The text output keeps its historical lines: bound and gap are JSON-only.
    assert "bound" not in lines
    assert "gap" not in lines


def test_unknown_method_lists_the_known_ones() -> None:
    line = one_line_error(run("solve", str(FIGURE6), "--method", "magic"))
    assert "unknown method 'magic'" in line
    assert "dp" in line
    assert "exact" in line


@pytest.mark.slow
def test_problem_specific_errors_are_one_line(tmp_path: Path) -> None:
    doc = {"format": "scheduling-opt/v1", "problem": "mckp", "capacity": -3, "groups": []}
    for command in ("validate", "solve"):
        assert "capacity" in one_line_error(run(command, str(write(tmp_path, doc))))


def _huge(doc: dict[str, Any], field: str, value: float) -> dict[str, Any]:
    doc = json.loads(json.dumps(doc))
    if field == "beta":
        doc["params"]["jobs"]["resnet50"]["beta"] = value
    elif field == "processed_samples":
        doc["jobs"][0]["batch"]["processed_samples"] = value
    else:
        doc["jobs"][0]["deadlines"][0]["time"] = value
    return doc


@pytest.mark.parametrize(
    ("name", "field", "value", "path"),
    [
        # Found by review: each once hung, overflowed or printed NaN deep inside a solver.
        # 10**20: beyond 2**53 yet a literal the JSON reader parses (longer
        # literals are refused before any path is known: see the next test).
        ("batch-size-example", "processed_samples", 10**20, "processed_samples"),
        pytest.param("batch-size-example", "beta", 1e308, "beta", marks=pytest.mark.slow),
        pytest.param(
            "lease-example", "time", 1e12, "jobs[0].deadlines[0].time", marks=pytest.mark.slow
        ),
    ],
)
def test_absurd_magnitudes_are_input_errors(
    tmp_path: Path, name: str, field: str, value: float, path: str
) -> None:
    doc = _huge(json.loads((INSTANCES / f"{name}.json").read_text()), field, value)
    for command in ("validate", "solve"):
        assert path in one_line_error(run(command, str(write(tmp_path, doc))))


def test_validate_ok_on_every_curated_instance(capsys: pytest.CaptureFixture[str]) -> None:
    from scheduling_opt.cli import main

    files = sorted(INSTANCES.glob("*.json"))
    assert files
    for path in files:  # in-process: one interpreter start per file would be slow
        assert main(["validate", str(path)]) == 0, (path, capsys.readouterr().err)
        assert capsys.readouterr().out == "ok\n"


@pytest.mark.slow
def test_generate_then_solve_round_trip(tmp_path: Path) -> None:
    out = tmp_path / "gen.json"
    proc = run("generate", "mckp", "--size", "n20", "--seed", "3", "--out", str(out))
    assert proc.returncode == 0, proc.stderr
    again = run("generate", "mckp", "--size", "n20", "--seed", "3")
    assert again.stdout == out.read_text()  # same seed, same instance
    dp = json.loads(run("solve", str(out), "--method", "dp", "--json", "--verify").stdout)
    milp = json.loads(run("solve", str(out), "--method", "exact-pulp", "--json").stdout)
    assert dp["objective"] == pytest.approx(milp["objective"])
    assert "bad size 'huge'" in one_line_error(run("generate", "mckp", "--size", "huge"))


def test_list_names_every_problem() -> None:
    proc = run("list")
    assert proc.returncode == 0
    assert "mckp:" in proc.stdout
    assert "  core (default, exact)" in proc.stdout
    assert "  dp (exact)" in proc.stdout
    from scheduling_opt.registry import get_problem

    quick = get_problem("mckp").sizes["quick"]
    assert f"  quick sizes: {', '.join(quick)}\n" in proc.stdout  # suite order, not text order


def _mutated(name: str, change: Any) -> Any:
    doc = json.loads((INSTANCES / f"{name}.json").read_text())
    change(doc)
    return doc


def _rename(doc: dict[str, Any], old: str, new: str) -> None:
    doc[new] = doc.pop(old)


# Found by a newcomer's review: each was accepted silently, crashed with an
# internal error, or named its path twice.
REVIEWED_BAD_INPUTS = [
    (
        "reclaim-aryl-fig5",
        lambda d: _rename(d, "placement", "placment"),
        "placment: unknown section for problem 'reclaim'",
    ),
    (
        "placement-n8",
        lambda d: d.update(extra=1),
        "extra: unknown section for problem 'placement'",
    ),
    (
        "reclaim-aryl-fig5",
        lambda d: d["params"].update(servers_to_reclam=1),
        "params.servers_to_reclam: unknown field",
    ),
    (
        "reclaim-aryl-fig5",
        lambda d: d["cluster"]["servers"][0].update(gpus="8"),
        "error: cluster.servers[0].gpus: must be an integer",
    ),
    (
        "allocation-n4",
        lambda d: d["cluster"].update(servers=[]) or d.update(placement=[]),
        "only 0 can ever be free",
    ),
    (
        "memory-split-antman-fig10",
        lambda d: d["gpu"].update(chunk_gb=1e-12),
        "gpu.chunk_gb: 1e-12 GB makes",
    ),
    (
        "batch-size-example",
        lambda d: d["params"].update(generations=10**12),
        "params.generations: must be <= 1000000",
    ),
]


@pytest.mark.parametrize(("name", "change", "expected"), REVIEWED_BAD_INPUTS)
def test_reviewed_bad_inputs_are_one_line_errors(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    name: str,
    change: Any,
    expected: str,
) -> None:
    from scheduling_opt.cli import main

    path = write(tmp_path, _mutated(name, change))
    for command in ("validate", "solve"):
        assert main([command, str(path)]) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1, err
        assert expected in err, err


def test_duplicate_keys_and_huge_integers(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from scheduling_opt.cli import main

    dup = '{"format": "scheduling-opt/v1", "problem": "mckp", "capacity": 3, "capacity": 4, "groups": []}'
    assert main(["validate", str(write(tmp_path, dup))]) == 2
    assert 'duplicate key "capacity"' in capsys.readouterr().err
    huge = json.loads(FIGURE6.read_text())
    huge["capacity"] = 10**25  # valid JSON, beyond 2**53
    assert main(["validate", str(write(tmp_path, huge))]) == 2
    assert "capacity: must be at most 2**53" in capsys.readouterr().err
    huge["capacity"] = 10**400  # valid JSON, beyond any float: refused as a literal
    assert main(["validate", str(write(tmp_path, huge))]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert "integer literal of 401 digits" in err


def test_bad_command_line_arguments_are_one_line_errors(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from scheduling_opt.cli import main

    cases = [
        (["solve", str(FIGURE6), "--seed", "-5"], "--seed: must be >= 0"),
        (["generate", "mckp", "--size", "n20", "--seed", "-1"], "--seed: must be >= 0"),
        (
            ["generate", "mckp", "--size", "n20", "--out", str(tmp_path / "no" / "x.json")],
            "No such file",
        ),
        (["generate", "mckp", "--size", "n20", "--out", str(tmp_path)], "Is a directory"),
        (
            ["bench", "--problem", "mckp", "--out", str(FIGURE6)],
            "--out: exists and is not a folder",
        ),
        (
            ["bench", "--problem", "mckp", "--instances", str(tmp_path / "none")],
            "--instances: not a folder",
        ),
    ]
    for argv, expected in cases:
        assert main(argv) == 2, argv
        err = capsys.readouterr().err
        assert err.count("\n") == 1, (argv, err)
        assert expected in err, (argv, err)


@pytest.fixture
def toy_file(tmp_path: Path) -> Iterator[Path]:
    """A toy knapsack instance, its problem registered in this process."""
    from tests.bench.toy import registered

    doc = {
        "format": "scheduling-opt/v1",
        "problem": "toy-knapsack",
        # Value/weight: 10/5 = 2, 6/4 = 1.5, 5/5 = 1; capacity 9.
        "weights": [5, 4, 5],
        "values": [10, 6, 5],
        "capacity": 9,
    }
    with registered():
        yield write(tmp_path, doc, "toy.json")


def _solve_json(capsys: pytest.CaptureFixture[str], *argv: str) -> dict[str, Any]:
    from scheduling_opt.cli import main

    assert main(["solve", *argv, "--json"]) == 0, capsys.readouterr().err
    out = capsys.readouterr().out
    assert out.count("\n") == 1
    record: dict[str, Any] = json.loads(out)
    return record


def test_solve_json_has_bound_and_gap(toy_file: Path, capsys: pytest.CaptureFixture[str]) -> None:
    greedy = _solve_json(capsys, str(toy_file), "--method", "greedy", "--verify")
    # Greedy takes items 0 and 1 (weight 9, value 16); Dantzig's bound fills the
    # same two items exactly, so the bound is 16 and the certified gap 0.
    assert greedy["objective"] == 16.0
    assert greedy["chosen"] == [0, 1]
    assert greedy["bound"] == pytest.approx(16.0)
    assert greedy["gap"] == pytest.approx(0.0)
    exact = _solve_json(capsys, str(toy_file))
    assert (exact["status"], exact["objective"], exact["bound"], exact["gap"]) == (
        "optimal",
        16.0,
        16.0,
        0.0,
    )
    assert list(exact)[:5] == ["problem", "method", "status", "objective", "seconds"]


def test_solve_json_bound_and_gap_are_null_when_unknown(
    toy_file: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # "liar" states no bound: bound and gap are null, the other keys stay.
    record = _solve_json(capsys, str(toy_file), "--method", "liar")
    assert record["bound"] is None
    assert record["gap"] is None
    assert {"problem", "method", "status", "objective", "seconds", "chosen"} <= set(record)


def test_solve_json_gap_is_certified_from_the_bound(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from tests.bench.toy import registered

    doc = {
        "format": "scheduling-opt/v1",
        "problem": "toy-knapsack",
        # Greedy by ratio takes item 0 (3/2 = 1.5 > 2/2 = 1), then nothing fits;
        # Dantzig: item 0 whole + 1/2 of item 1 = 3 + 1 = 4.
        "weights": [2, 2],
        "values": [3, 2],
        "capacity": 3,
    }
    with registered():
        record = _solve_json(capsys, str(write(tmp_path, doc)), "--method", "greedy")
    assert record["objective"] == 3.0
    assert record["bound"] == pytest.approx(4.0)
    assert record["gap"] == pytest.approx((4.0 - 3.0) / 4.0)


def test_solve_json_time_limited_exact_states_its_proven_gap() -> None:
    # 500 on-loan servers: the exact model does not prove the optimum in 0.05 s
    # on this machine; whatever it returns, its bound and gap must be honest.
    path = INSTANCES / "reclaim-n500.json"
    proc = run("solve", str(path), "--method", "exact", "--time-limit", "0.05", "--json")
    assert proc.returncode == 0, proc.stderr
    record = json.loads(proc.stdout)
    assert record["status"] in {"time_limit", "optimal"}
    objective, bound = record["objective"], record["bound"]
    assert bound is not None
    assert bound <= objective + 1e-9  # a lower bound of a minimization
    assert record["gap"] == pytest.approx(abs(objective - bound) / max(abs(bound), 1.0))
    if record["status"] == "optimal":
        assert record["gap"] == 0.0
