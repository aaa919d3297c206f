"""``scheduling-opt bound``, the bound rows of ``simulate`` and the room of ``reproduce``."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest

from scheduling_opt.cli import main
from scheduling_opt.reproduce.bounds import room_table
from scheduling_opt.reproduce.grid import ClaimRow, Point
from scheduling_opt.reproduce.papers import Claim
from scheduling_opt.reproduce.verdict import Verdict
from scheduling_opt.sim import RunConfig, RunResult, Workload, WorkloadSpec, run_config
from scheduling_opt.sim.bounds import envelope_of, relax
from scheduling_opt.sim.bounds.outputs import bound_table, group_bounds
from scheduling_opt.sim.synthetic import SyntheticSpec

SYNTH = ["--workload", "synthetic", "--synthetic-jobs", "40", "--servers", "1"]


def test_bound_json_has_every_bound_with_its_method(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["bound", *SYNTH, "--json"]) == 0
    out, err = capsys.readouterr()
    record = json.loads(out)
    assert out.count("\n") == 1
    assert err == ""
    for key in ("jct_mean_lower", "makespan_lower", "utilization_upper", "wdmr_lower"):
        assert isinstance(record[key]["value"], float)
        assert isinstance(record[key]["method"], str)
        assert record[key]["method"]
    jct = record["jct_mean_lower"]
    assert jct["value"] == pytest.approx(max(jct["candidates"].values()), rel=1e-8)
    assert 0.0 < record["utilization_upper"]["value"] <= 1.0
    assert record["servers"] == 1
    assert record["jobs"] == 40
    assert "srtf" in record["covers"]
    assert "antman" not in record["covers"]


def test_bound_text_names_the_bounds_and_what_they_cover(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["bound", *SYNTH, "--policy", "antman", "--policy", "srtf"]) == 0
    out = capsys.readouterr().out
    assert "| mean JCT >= |" in out
    assert "| wDMR >= |" in out
    assert "covers antman, srtf (a GPU carrying up to 1.54 of speed-1 work)" in out


@pytest.mark.parametrize(
    ("args", "names"),
    [
        (["--servers", "0"], "--servers"),
        (["--trace", "/no/such/trace.csv"], "/no/such/trace.csv"),
        (["--policy", "nope"], "--policy"),
        (["--skip", "1.5"], "--skip"),
        (["--time-limit", "-1"], "--time-limit"),
        (["--synthetic-jobs", "0"], "--synthetic-jobs"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(
    capsys: pytest.CaptureFixture[str], args: list[str], names: str
) -> None:
    base = SYNTH if "--trace" not in args else []
    code = main(["bound", *base, *args])  # the last of a repeated option wins
    out, err = capsys.readouterr()
    assert code == 2
    assert out == ""
    assert err.count("\n") == 1
    assert names in err


@pytest.mark.slow
def test_bound_runs_on_the_bundled_day_with_no_arguments(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["bound"]) == 0
    out = capsys.readouterr().out
    assert "philly-mix2-day1 (5217 jobs" in out
    assert "60 x 8 GPUs" in out


def _runs(*policies: str, inference_servers: int = 0, inference_gpus: int = 2) -> list[RunResult]:
    spec = WorkloadSpec("synthetic", synthetic=SyntheticSpec(jobs=30))
    lend = (
        {"inference_servers": inference_servers, "inference_gpus": inference_gpus}
        if inference_servers
        else {}
    )
    return [
        run_config(RunConfig(p, spec, servers=1, gpus_per_server=8, policy_params=lend))
        for p in policies
    ]


def test_the_bound_table_has_a_bound_row_and_each_run_against_it() -> None:
    runs = _runs("fifo", "srtf")
    (group,) = group_bounds(runs)
    text = bound_table(runs)
    b = group.bounds
    assert f"| bound |  | {b.jct_mean_lower.value:.1f} min" in text
    for r in runs:
        jct = r.metrics["jct_mean"] / b.jct_mean_lower.value
        makespan = r.metrics["makespan"] / b.makespan_lower.value
        assert f"| {r.config.name} | 0 | {jct:.2f}x | {makespan:.2f}x |" in text
        assert jct >= 1.0
        assert makespan >= 1.0


def test_an_uncovered_run_and_a_wasteful_run_say_so() -> None:
    (fifo,) = _runs("fifo")
    credited = replace(
        fifo, config=replace(fifo.config, policy="chronus", policy_params=(("start_credit", True),))
    )
    wasteful = replace(fifo, output=replace(fifo.output, busy_area=2 * fifo.output.busy_area))
    text = bound_table([credited, wasteful])
    assert "| chronus | 0 | not covered | not covered | not covered | not covered |" in text
    assert "not covered (busy beyond the work)" in text
    assert "not chronus: credits work a job did not run" in text


def test_the_cluster_of_a_run_is_the_one_the_engine_measured() -> None:
    (run,) = _runs("fifo-no-loan", inference_servers=2, inference_gpus=2)
    out = run.output
    cluster = run.config.cluster()
    rel = relax(Workload.of(out.jobs, "w"), cluster, envelope_of([("fifo-no-loan", {})]))
    span = max(out.end) - min(j.submit for j in out.jobs)
    assert out.capacity_area / span == pytest.approx(rel.available)  # no server lent
    assert rel.gpus == 8 + 2 * 2


def test_the_room_table_gives_the_most_any_policy_could_claim() -> None:
    runs = _runs("fifo", "srtf")
    point = Point("synthetic", 1.0, tuple(runs))
    claim = Claim("mean JCT, x lower", "jct_mean", "ratio", 2.0, "fifo", "srtf")
    m = point.metrics
    row = ClaimRow(claim, point.label, 1.0, "fifo", (), Verdict.REPRODUCED, "")
    text = room_table([row], [point])
    (group,) = group_bounds(runs)
    bound = group.bounds.jct_mean_lower.value
    assert f"{m['fifo']['jct_mean'] / bound:.3g}x (vs fifo; paper {claim.show(2.0)})" in text
    assert f"{m['srtf']['jct_mean'] / bound:.2f}x" in text


def test_simulate_prints_the_bound_section(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    args = ["simulate", *SYNTH, "--policy", "fifo", "--quiet", "--out", str(tmp_path / "o")]
    assert main(args) == 0
    out = capsys.readouterr().out
    assert "| bound |" in out
    assert "x above the bound" in out
    assert "| bound |" in (tmp_path / "o" / "report.md").read_text()
