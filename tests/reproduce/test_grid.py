"""The reproduce framework's grid: job densities, verdicts, "up to" claims, seeds."""

from __future__ import annotations

import argparse
from dataclasses import replace
from pathlib import Path

import pytest

from scheduling_opt.errors import InvalidInstanceError
from scheduling_opt.reproduce import PAPERS, Claim, PaperWorkload
from scheduling_opt.reproduce.command import add_arguments, parse_densities, run
from scheduling_opt.reproduce.grid import evaluate, points
from scheduling_opt.reproduce.papers import PolicyRun, Sweep
from scheduling_opt.reproduce.verdict import Verdict, judge
from scheduling_opt.reproduce.workloads import offered_load, scale_density
from scheduling_opt.sim import SimJob, SyntheticSpec, run_sweep


def _base(n: int = 10) -> tuple[SimJob, ...]:
    # Job i: submitted at 10 i, 2 GPUs, 5 min, due 8 min after its submission.
    return tuple(
        SimJob(str(i), 10.0 * i, 2, 5.0, deadlines=((10.0 * i + 8.0, 100.0),)) for i in range(n)
    )


def test_sample_density_removes_and_injects_the_stated_counts() -> None:
    base = _base()
    ids = {j.id for j in base}
    low = scale_density(base, 0.8, "sample", seed=3)
    assert len(low) == 8  # round(0.2 x 10) = 2 removed
    assert {j.id for j in low} < ids
    high = scale_density(base, 1.3, "sample", seed=3)
    assert len(high) == 13  # round(0.3 x 10) = 3 injected
    extra = [j for j in high if j.id not in ids]
    assert sorted(j.id for j in extra) == ["10", "11", "12"]  # numeric ids continue
    for j in extra:
        assert 0.0 <= j.submit <= 90.0  # within the submission span
        assert (j.gpus, j.work) == (2, 5.0)  # a copy of a job of the trace
        assert j.deadlines == ((j.submit + 8.0, 100.0),)  # the same slack
    assert scale_density(base, 1.0, "sample", seed=3) is base


def test_sample_density_is_seeded_and_nested() -> None:
    base = _base(50)
    assert scale_density(base, 0.6, "sample", 1) == scale_density(base, 0.6, "sample", 1)
    assert scale_density(base, 0.6, "sample", 1) != scale_density(base, 0.6, "sample", 2)
    kept_06 = {j.id for j in scale_density(base, 0.6, "sample", 1)}
    kept_08 = {j.id for j in scale_density(base, 0.8, "sample", 1)}
    assert kept_06 < kept_08  # the jobs removed at 0.8 are also removed at 0.6
    at_12 = scale_density(base, 1.2, "sample", 1)
    at_14 = scale_density(base, 1.4, "sample", 1)
    assert at_14[: len(at_12)] == at_12  # the jobs injected at 1.4 extend those of 1.2


def test_compress_divides_the_gaps_and_keeps_the_slack() -> None:
    out = scale_density(_base(4), 2.0, "compress", seed=0)
    # Submissions 0, 10, 20, 30 -> 0, 5, 10, 15; deadlines 8 after each.
    assert [j.submit for j in out] == [0.0, 5.0, 10.0, 15.0]
    assert [j.deadlines[0][0] for j in out] == [8.0, 13.0, 18.0, 23.0]


def test_offered_load_by_hand() -> None:
    # 10 jobs x 2 GPUs x 5 min = 100 GPU-min over a 90-min span on 4 GPUs: 100 / 360.
    assert offered_load(_base(), 4) == pytest.approx(100.0 / 360.0)
    # Twice the density (compressed): half the span, twice the load.
    assert offered_load(scale_density(_base(), 2.0, "compress", 0), 4) == pytest.approx(
        200.0 / 360.0
    )


@pytest.mark.parametrize("bad", [0.0, -1.0, 11.0, float("nan"), float("inf")])
def test_a_density_out_of_range_is_refused(bad: float) -> None:
    with pytest.raises(InvalidInstanceError, match="density"):
        scale_density(_base(), bad, "sample", 0)
    with pytest.raises(InvalidInstanceError, match="--density"):
        parse_densities(str(bad))


def test_verdict_rule_by_hand() -> None:
    # Sizes: a factor minus 1, a reduction's percent.
    assert judge("ratio", 14.7, 7.9) is Verdict.REPRODUCED  # 6.9 >= 13.7 / 2 = 6.85
    assert judge("ratio", 14.7, 7.8) is Verdict.DIRECTION  # 6.8 < 6.85
    assert judge("ratio", 14.7, 28.4) is Verdict.REPRODUCED  # 27.4 = 2 x 13.7
    assert judge("ratio", 14.7, 28.5) is Verdict.DIRECTION
    assert judge("ratio", 2.05, 0.9) is Verdict.NOT_REPRODUCED  # the other way
    assert judge("ratio", 2.05, 1.0) is Verdict.NOT_REPRODUCED  # no change
    assert judge("reduction", 45.6, 22.8) is Verdict.REPRODUCED
    assert judge("reduction", 45.6, 22.7) is Verdict.DIRECTION
    assert judge("reduction", 45.6, -1.0) is Verdict.NOT_REPRODUCED
    assert judge("value", 0.86, 0.43) is Verdict.REPRODUCED
    assert judge("value", 0.86, 0.42) is Verdict.NOT_REPRODUCED
    assert judge("ratio", 2.0, float("inf")) is Verdict.DIRECTION
    assert judge("ratio", 2.0, None) is Verdict.NO_DATA


def _tiny_set() -> tuple[object, list[object]]:
    spec = PaperWorkload("synthetic", synthetic=SyntheticSpec(jobs=40, rate=0.5), label="syn")
    chronus = PAPERS["chronus"]
    tiny = replace(
        chronus,
        servers=2,
        quick_spec=spec,
        policies=(PolicyRun("fifo"), PolicyRun("sjf"), PolicyRun("edf")),
        claims=(
            Claim("jct vs fifo", "jct_mean", "ratio", 2.0, "fifo", "sjf"),
            Claim("up to", "jct_mean", "ratio", 2.0, "any", "sjf", ("fifo", "edf"), "max", "grid"),
        ),
        seeds=2,
        sweep=Sweep(quick_densities=(0.5, 1.0, 2.0), quick_at=1.0, rule="compress"),
    )
    results = run_sweep(tiny.configs(quick=True))
    return tiny, results


def test_grid_claims_are_judged_at_the_paper_load_and_up_to_over_the_grid() -> None:
    tiny, results = _tiny_set()
    grid = points(results)  # type: ignore[arg-type]
    assert [(p.workload, p.density) for p in grid] == [("syn", 0.5), ("syn", 1.0), ("syn", 2.0)]
    assert all(len(p.results) == 3 * 2 for p in grid)  # 3 policies x 2 seeds
    # Denser: more offered load.
    assert grid[0].offered_load < grid[1].offered_load < grid[2].offered_load
    rows = evaluate(tiny, results, quick=True)  # type: ignore[arg-type]
    point, up_to = rows
    # The point claim: fifo's mean JCT over sjf's at density 1, means over the seeds.
    at1 = [r for r in results if r.config.workload.density == 1.0]  # type: ignore[attr-defined]

    def mean(policy: str, runs: list[object]) -> float:
        vals = [r.metrics["jct_mean"] for r in runs if r.config.policy == policy]  # type: ignore[attr-defined]
        return sum(vals) / len(vals)

    assert point.where == "syn"
    assert point.ours == pytest.approx(mean("fifo", at1) / mean("sjf", at1))
    assert len(point.seeds) == 2
    # "Up to": the largest fifo/sjf or edf/sjf ratio over the three densities.
    best = 0.0
    for d in (0.5, 1.0, 2.0):
        runs = [r for r in results if r.config.workload.density == d]  # type: ignore[attr-defined]
        best = max(best, *(mean(b, runs) / mean("sjf", runs) for b in ("fifo", "edf")))
    assert up_to.ours == pytest.approx(best)
    assert up_to.verdict is judge("ratio", 2.0, best)


def _args(*argv: str) -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    add_arguments(parser)
    return parser.parse_args([*argv, "--quiet"])


def test_command_density_and_seeds_override_and_the_report_has_verdicts_and_a_sweep(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    tiny, _ = _tiny_set()
    monkeypatch.setitem(PAPERS, "chronus", tiny)
    assert (
        run(
            _args(
                "chronus", "--quick", "--density", "1,0.5", "--seeds", "1", "--out", str(tmp_path)
            )
        )
        == 0
    )
    report = (tmp_path / "report.md").read_text()
    assert "## Verdicts" in report
    assert "## Load sweep" in report
    assert "| x0.5 | x1 |" in report  # exactly the densities asked for
    assert "x2" not in report.split("## Load sweep")[1].split("\n")[3]
    for bad in ("0", "a"):
        with pytest.raises(InvalidInstanceError, match="--density"):
            run(_args("chronus", "--quick", "--density", bad, "--out", str(tmp_path)))
    with pytest.raises(InvalidInstanceError, match="--seeds"):
        run(_args("chronus", "--quick", "--seeds", "0", "--out", str(tmp_path)))
