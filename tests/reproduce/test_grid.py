"""The reproduce framework's grid: job densities, verdicts, "up to" claims, seeds."""

from __future__ import annotations

import argparse
import re
from dataclasses import replace
from pathlib import Path

import pytest

from scheduling_opt.errors import InvalidInstanceError
from scheduling_opt.reproduce import PAPERS, Claim, PaperWorkload
from scheduling_opt.reproduce.command import add_arguments, parse_densities, run
from scheduling_opt.reproduce.grid import ClaimRow, Point, evaluate, judged_points, points
from scheduling_opt.reproduce.papers import LoadTarget, PolicyRun, Sweep
from scheduling_opt.reproduce.report import summary_table
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
        quick_sizes=None,  # the Chronus set's own quick cluster is not this test's
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
    # A claim that does not speak of "syn" (skip_on) has no row there and no
    # "up to" over it: each says no data; skipping another workload changes nothing.
    skipped = replace(
        tiny,  # type: ignore[type-var]
        claims=tuple(replace(c, skip_on=("syn",)) for c in tiny.claims),  # type: ignore[attr-defined]
    )
    assert [(r.where, r.verdict) for r in evaluate(skipped, results, quick=True)] == [  # type: ignore[arg-type]
        ("no run", Verdict.NO_DATA),
        ("the grid", Verdict.NO_DATA),
    ]
    other = replace(
        tiny,  # type: ignore[type-var]
        claims=tuple(replace(c, skip_on=("P_SLO",)) for c in tiny.claims),  # type: ignore[attr-defined]
    )
    again = evaluate(other, results, quick=True)  # type: ignore[arg-type]
    assert [replace(r, claim=c) for r, c in zip(again, tiny.claims, strict=True)] == rows  # type: ignore[attr-defined]


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
    # The workload "syn x0.5" writes to syn-x0.5/: no link of the report holds a space.
    links = re.findall(r"\]\(([^)]*)\)", report)
    assert "syn-x0.5/jct_cdf.png" in links
    assert [link for link in links if " " in link] == []
    assert all((tmp_path / link).is_file() for link in links)
    for bad in ("0", "a"):
        with pytest.raises(InvalidInstanceError, match="--density"):
            run(_args("chronus", "--quick", "--density", bad, "--out", str(tmp_path)))
    with pytest.raises(InvalidInstanceError, match="--seeds"):
        run(_args("chronus", "--quick", "--seeds", "0", "--out", str(tmp_path)))


# ---------------------------------------------------------------- issue 24: load rules


def test_load_target_statistic_and_nearest_by_hand() -> None:
    t = LoadTarget("tiresias", "jct_mean", 200.0, per="jct_median")
    assert t.statistic({"tiresias": {"jct_mean": 900.0, "jct_median": 30.0}}) == 30.0
    assert t.statistic({"other": {"jct_mean": 1.0}}) is None
    assert t.statistic({"tiresias": {"jct_mean": 9.0, "jct_median": 0.0}}) is None
    # |log(50 / 200)| = 1.386 > |log(400 / 200)| = 0.693: density 3 is nearer.
    assert t.nearest([(1.0, 10.0), (2.0, 50.0), (3.0, 400.0)]) == 3.0
    # A tie on the log scale (100 and 400 around 200) goes to the lower density.
    assert t.nearest([(2.0, 400.0), (1.0, 100.0)]) == 1.0
    assert t.nearest([(1.0, None)]) is None
    with pytest.raises(InvalidInstanceError, match="target"):
        LoadTarget("a", "b", 0.0)


def test_cluster_rule_keeps_the_jobs_and_divides_the_servers() -> None:
    base = _base()
    assert scale_density(base, 2.5, "cluster", 0) is base
    spec = PaperWorkload("synthetic", synthetic=SyntheticSpec(jobs=10, rate=0.5), label="syn")
    chronus = PAPERS["chronus"]
    s = replace(
        chronus,
        servers=12,
        quick_sizes=None,  # the Chronus set's own quick cluster is not this test's
        quick_spec=spec,
        policies=(PolicyRun("fifo-no-loan"),),
        seeds=1,
        inference_servers=7,
        sweep=Sweep(quick_densities=(1.0, 1.5, 4.0), quick_at=1.0, rule="cluster"),
    )
    got = [
        (c.workload.density, c.servers, dict(c.policy_params).get("inference_servers", 0))  # type: ignore[attr-defined]
        for c in s.configs(quick=True)
    ]
    # round(12 / 1.5) = 8, round(12 / 4) = 3; round(7 / 1.5) = 5 (4.67), round(7 / 4) = 2 (1.75).
    assert got == [(1.0, 12, 7), (1.5, 8, 5), (4.0, 3, 2)]


def _target_set(**over: object) -> object:
    spec = PaperWorkload("synthetic", synthetic=SyntheticSpec(jobs=40, rate=0.5), label="syn")
    fields: dict[str, object] = {
        "servers": 2,
        "quick_sizes": None,
        "quick_spec": spec,
        "policies": (PolicyRun("fifo"), PolicyRun("sjf", everywhere=False)),
        "claims": (Claim("jct vs fifo", "jct_mean", "ratio", 2.0, "fifo", "sjf"),),
        "seeds": 1,
        "sweep": Sweep(
            quick_densities=(0.5, 1.0, 2.0),
            quick_at=None,
            rule="compress",
            target=LoadTarget("fifo", "queueing_mean", 1e9, per="jct_mean"),
        ),
    }
    fields.update(over)
    return replace(PAPERS["chronus"], **fields)  # type: ignore[arg-type]


def test_a_target_judges_where_the_statistic_is_nearest_and_judged_only_runs_follow() -> None:
    tiny = _target_set()
    first = tiny.configs(quick=True)  # type: ignore[attr-defined]
    assert {c.policy for c in first} == {"fifo"}  # sjf waits for the judged density
    results = run_sweep(first)
    grid = points(results)
    # fifo's queueing share of its JCT per density, by hand from the runs.
    share = {
        p.density: p.metrics["fifo"]["queueing_mean"] / p.metrics["fifo"]["jct_mean"] for p in grid
    }
    want = max(share, key=lambda d: (share[d], -d))  # the target (1e9) is above every share
    judged = judged_points(tiny, grid, quick=True)  # type: ignore[arg-type]
    assert [j.point.density for j in judged] == [want]
    assert "paper 1e+09" in judged[0].why
    second = tiny.configs(quick=True, judged={"syn": want})  # type: ignore[attr-defined]
    assert [(c.policy, c.workload.density) for c in second if c.policy == "sjf"] == [("sjf", want)]
    rows = evaluate(tiny, run_sweep(second), quick=True)  # type: ignore[arg-type]
    assert [r.where for r in rows] == [grid[[p.density for p in grid].index(want)].label]


def test_no_stated_load_judges_every_density_and_sums_up(tmp_path: Path) -> None:
    tiny = _target_set(
        policies=(PolicyRun("fifo"), PolicyRun("sjf")),
        sweep=Sweep(quick_densities=(0.5, 2.0), quick_at=None, rule="compress"),
    )
    results = run_sweep(tiny.configs(quick=True))  # type: ignore[attr-defined]
    rows = evaluate(tiny, results, quick=True)  # type: ignore[arg-type]
    assert [r.where for r in rows] == ["syn x0.5", "syn x2"]
    table = summary_table(rows)
    lo, hi = sorted(r.ours for r in rows if r.ours is not None)
    assert f"{lo:.2f}x" in table
    assert f"{hi:.2f}x" in table
    assert "of 2 |" in table


def test_over_gives_the_claim_against_each_parameter_value_by_hand() -> None:
    c = Claim("x", "jct_mean", "ratio", 2.0, "g d=0.8", "p", over=("g d=0.2", "g d=0.5"))
    m = {
        "p": {"jct_mean": 10.0},
        "g d=0.8": {"jct_mean": 40.0},
        "g d=0.5": {"jct_mean": 20.0},
        "g d=0.2": {"jct_mean": 8.0},
    }
    pt = Point("w", 1.0, ())
    row = ClaimRow(
        c,
        pt.label,
        c.ours(m),
        "g d=0.8",
        (),
        judge("ratio", 2.0, 4.0),
        "",
        tuple((b, c.against(m, b)) for b in c.over),
    )
    assert row.ours == 4.0
    assert row.over == (("g d=0.2", 0.8), ("g d=0.5", 2.0))
    assert row.over_range() == "0.80x..2.00x (g d=0.2: 0.80x, g d=0.5: 2.00x)"


def test_over_with_one_value_prints_one_number() -> None:
    # One label in ``over`` (AntMan's `gandiva` at d = 0.2 only), or two labels that print
    # alike, make a range of one value: "1.25x", not "1.25x..1.25x".
    c = Claim("x", "jct_mean", "ratio", 2.0, "g d=0.8", "p", over=("g d=0.2",))
    row = ClaimRow(c, "w", 4.0, "g d=0.8", (), judge("ratio", 2.0, 4.0), "", (("g d=0.2", 1.25),))
    assert row.over_range() == "1.25x (g d=0.2: 1.25x)"
    two = replace(row, over=(("g d=0.2", 1.25), ("g d=0.5", 1.2500001)))
    assert two.over_range() == "1.25x (g d=0.2: 1.25x, g d=0.5: 1.25x)"
    cut = Claim("y", "jct_mean", "reduction", 40.0, "a", "p", over=("b",))
    red = ClaimRow(cut, "w", 10.0, "a", (), judge("reduction", 40.0, 10.0), "", (("b", 12.5),))
    assert red.over_range() == "-12.5% (b: -12.5%)"


def test_every_seed_is_shown_with_its_direction() -> None:
    c = Claim("x", "jct_mean", "ratio", 2.0, "a", "p")
    row = ClaimRow(c, "w", 1.2, "a", (0.9, 1.4, 1.3), judge("ratio", 2.0, 1.2), "")
    assert row.spread() == "0.90x / 1.40x / 1.30x; 2/3 the paper's way"
    many = replace(row, seeds=tuple(1.0 + k / 10 for k in range(1, 7)))
    assert many.spread() == "1.10x..1.60x; 6/6 the paper's way"


def test_quick_false_leaves_a_run_out_of_quick_only() -> None:
    tiny = _target_set(policies=(PolicyRun("fifo"), PolicyRun("sjf", quick=False)))
    assert {c.policy for c in tiny.configs(quick=True, judged={"syn": 1.0})} == {"fifo"}  # type: ignore[attr-defined]


def test_the_command_runs_judged_only_policies_in_a_second_stage(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    tiny = _target_set()
    monkeypatch.setitem(PAPERS, "chronus", tiny)
    assert run(_args("chronus", "--quick", "--out", str(tmp_path))) == 0
    report = (tmp_path / "report.md").read_text()
    verdicts = report.split("## Verdicts")[1].split("\n## ")[0]
    row = next(line for line in verdicts.splitlines() if line.startswith("| jct vs fifo"))
    assert "n/a" not in row  # sjf ran at the judged density
    assert "Point claims are judged at syn" in verdicts
