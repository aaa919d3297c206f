"""The reproduce framework: claims, a paper's runs, the command's outputs."""

from __future__ import annotations

import argparse
import json
import math
from dataclasses import replace
from pathlib import Path

import pytest

from scheduling_opt.errors import InvalidInstanceError
from scheduling_opt.reproduce import PAPERS, Claim, ElasticRule, PaperWorkload
from scheduling_opt.reproduce.command import add_arguments, run
from scheduling_opt.reproduce.papers import PaperSet
from scheduling_opt.sim import SimJob, SyntheticSpec


def _args(*argv: str) -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    add_arguments(parser)
    return parser.parse_args([*argv, "--quiet"])


def test_claim_kinds_and_best_baseline() -> None:
    m = {"a": {"x": 10.0}, "b": {"x": 4.0}, "p": {"x": 2.0}}
    assert Claim("", "x", "reduction", 0, "a", "p").ours(m) == 80.0
    assert Claim("", "x", "ratio", 0, "a", "p").ours(m) == 5.0
    best = Claim("", "x", "ratio", 0, "best", "p", ("a", "b"))
    assert best.base_of(m) == "b"
    assert best.ours(m) == 2.0
    assert Claim("", "x", "value", 0, "", "p").ours(m) == 2.0
    zero = Claim("", "x", "ratio", 0, "a", "z").ours({**m, "z": {"x": 0.0}})
    assert zero is not None
    assert math.isinf(zero)
    assert Claim("", "x", "ratio", 0, "a", "missing").ours(m) is None


def test_elastic_rule_is_stable_and_shares_about_its_fraction() -> None:
    rule = ElasticRule(share=0.3)
    chosen = [rule.chosen(str(i)) for i in range(2000)]
    assert chosen == [rule.chosen(str(i)) for i in range(2000)]
    assert 0.25 < sum(chosen) / 2000 < 0.35
    job = SimJob("1", 0.0, 3, 5.0)
    assert ElasticRule(share=0.0).apply(job) is job


def test_full_mode_skips_missing_traces_with_a_note(tmp_path: Path) -> None:
    workloads, notes = PAPERS["chronus"].workloads(quick=False, traces=tmp_path)
    assert workloads == []
    assert len(notes) == 3
    with pytest.raises(InvalidInstanceError, match="no trace"):
        run(_args("chronus", "--traces", str(tmp_path), "--out", str(tmp_path / "o")))


def test_full_mode_of_a_trace_paper_requires_traces_and_names_the_fix(
    capsys: pytest.CaptureFixture[str],
) -> None:
    from scheduling_opt.cli import main

    for name in ("chronus", "edl"):
        assert PAPERS[name].needs_traces
        with pytest.raises(InvalidInstanceError, match="--traces DIR") as err:
            run(_args(name))
        assert "--quick" in str(err.value)
        assert "/work/shared" not in str(err.value)
    assert main(["reproduce", "chronus", "--quiet"]) == 2
    lines = capsys.readouterr().err.strip().splitlines()
    assert len(lines) == 1
    assert "--traces DIR" in lines[0]
    assert "--quick" in lines[0]


def test_a_paper_with_generated_full_workloads_needs_no_traces() -> None:
    generated = replace(
        PAPERS["chronus"],
        full=(),
        full_specs=(PaperWorkload("synthetic", synthetic=SyntheticSpec(jobs=5), label="g"),),
    )
    assert not generated.needs_traces
    assert [w.label for w in generated.workloads(quick=False)[0]] == ["g"]


def test_unknown_paper_is_refused() -> None:
    with pytest.raises(InvalidInstanceError, match="unknown paper"):
        run(_args("nope"))


def test_command_writes_report_with_paper_and_our_numbers(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # The EDL set on a 60-job synthetic workload over 2 x 8 GPUs (seconds).
    tiny = replace(
        PAPERS["edl"],
        servers=2,
        cost_sweep=(),
        quick_spec=PaperWorkload(
            "synthetic", synthetic=SyntheticSpec(jobs=60), elastic=ElasticRule(), label="tiny"
        ),
    )
    monkeypatch.setitem(PAPERS, "edl", tiny)
    assert run(_args("edl", "--quick", "--out", str(tmp_path))) == 0
    report = (tmp_path / "report.md").read_text()
    assert "EDL Table 3" in report
    assert "## Workload `tiny` (60 jobs)" in report
    assert "| mean JCT | tiresias -> elastic-tiresias | -89.5% |" in report
    assert "calls_expansion" in report  # the policy's own counters (RunResult.extra)
    # The load sweep's two "mean JCT" claims name their baselines.
    assert "mean JCT, elastic-tiresias vs tiresias (paper -89.5%):" in report
    assert "mean JCT, elastic-tiresias vs edl-tiresias (paper -89.5%):" in report
    for name in ("jobs.csv", "summary.json", "timeline.csv"):
        assert (tmp_path / "tiny" / name).is_file()
    runs = json.loads((tmp_path / "tiny" / "summary.json").read_text())["runs"]
    # Elastic-Tiresias also under Stop-Resume's costs, with stragglers (removed or
    # kept) and with migration.
    assert [r["policy"] for r in runs] == ["tiresias", "edl-tiresias"] + ["elastic-tiresias"] * 5
    assert "tiny" in capsys.readouterr().out


def test_a_report_in_seconds_says_seconds_in_every_header(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # ONES' workloads count in seconds (PaperSet.unit): the tables, the per-workload
    # report, summary.json and the plots' axes must not say minutes.
    tiny = replace(
        PAPERS["ones"],
        servers=2,
        seeds=1,
        sweep=None,
        policies=tuple(p for p in PAPERS["ones"].policies if p.policy == "tiresias"),
        quick_spec=PaperWorkload(
            "synthetic", synthetic=SyntheticSpec(jobs=20, max_gpus=8), label="tiny"
        ),
    )
    assert tiny.unit == "seconds"
    monkeypatch.setitem(PAPERS, "ones", tiny)
    assert run(_args("ones", "--quick", "--out", str(tmp_path), "--quiet")) == 0
    for path in (tmp_path / "report.md", tmp_path / "tiny" / "report.md"):
        text = path.read_text()
        assert "| avg JCT (s) | median JCT (s) | p95 JCT (s) | avg queueing (s) |" in text
        assert "(min)" not in text
        assert "minutes" not in text
    summary = json.loads((tmp_path / "tiny" / "summary.json").read_text())
    assert summary["time_unit"] == "seconds"


def _tiny_edl(monkeypatch: pytest.MonkeyPatch, *policies: str) -> PaperSet:
    """The EDL set cut to ``policies`` on a 20-job synthetic workload over 2 x 8 GPUs, one seed."""
    tiny = replace(
        PAPERS["edl"],
        servers=2,
        seeds=1,
        sweep=None,
        cost_sweep=(),
        policies=tuple(p for p in PAPERS["edl"].policies if p.policy in policies),
        quick_spec=PaperWorkload("synthetic", synthetic=SyntheticSpec(jobs=20), label="tiny"),
    )
    monkeypatch.setitem(PAPERS, "edl", tiny)
    return tiny


def test_from_cache_reports_the_cached_runs_and_names_the_missing_ones(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Two policies on a 20-job workload: run both, drop one's cache entry, then
    # --from-cache must report the other, compute nothing and name the lacking run.
    tiny = _tiny_edl(monkeypatch, "tiresias", "edl-tiresias")
    assert run(_args("edl", "--quick", "--out", str(tmp_path))) == 0
    cache = tmp_path / "cache"
    entries = sorted(cache.glob("*.pkl"))
    assert len(entries) == 2
    assert run(_args("edl", "--quick", "--out", str(tmp_path), "--from-cache")) == 0
    assert (
        "Written from the cache (--from-cache): all 2 runs found."
        in (tmp_path / "report.md").read_text()
    )

    configs = tiny.configs(True, None, None, None)
    dropped = next(c for c in configs if c.policy == "tiresias")
    (cache / f"{dropped.digest()}.pkl").unlink()
    assert run(_args("edl", "--quick", "--out", str(tmp_path), "--from-cache")) == 0
    report = (tmp_path / "report.md").read_text()
    assert "PARTIAL, written from the cache (--from-cache): 1 of 2 runs not made: " in report
    assert "tiresias on tiny seed 0" in report
    assert "| edl-tiresias |" in report  # the cached run is reported
    assert sorted(cache.glob("*.pkl")) == [e for e in entries if e.stem != dropped.digest()]


def test_start_overhead_reaches_every_run_and_the_report_says_so(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import pickle

    _tiny_edl(monkeypatch, "tiresias")
    assert run(_args("edl", "--quick", "--out", str(tmp_path), "--start-overhead", "0.25")) == 0
    assert (
        "0.25 x (1 + log2 g) minutes of work at each start" in (tmp_path / "report.md").read_text()
    )
    [entry] = (tmp_path / "cache").glob("*.pkl")
    with entry.open("rb") as f:
        result = pickle.load(f)
    assert result.config.start_overhead == 0.25
    # Each job owes 0.25 x (1 + log2 g) per start: it ends no sooner than its
    # submit + work (at most speed 1 on its own GPUs) + one overhead.
    out = result.output
    for job, end in zip(out.jobs, out.end, strict=True):
        assert end - job.submit >= job.work + 0.25 * (1 + math.log2(job.gpus)) - 1e-9
