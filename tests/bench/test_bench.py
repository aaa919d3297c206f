"""The benchmark runner on a tiny suite of a toy problem registered by the test.

The toy problem is a 0-1 knapsack whose exact method is brute force, so every
expected optimum here comes from enumeration, independent of the runner.
"""

from __future__ import annotations

import csv
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from scheduling_opt.bench import (
    Row,
    Task,
    build_tasks,
    format_table,
    run_tasks,
    summarize,
    write_outputs,
)
from scheduling_opt.registry import Problem

from .toy import NAME, brute_force, fractional_bound, generate, read, registered

FOUR = ["exact", "greedy", "broken", "liar"]


@pytest.fixture
def toy() -> Iterator[Problem[Any, Any]]:
    with registered() as problem:
        yield problem


def test_runner_verifies_every_row_and_reports_failures(
    toy: Problem[Any, Any], tmp_path: Path
) -> None:
    tasks = build_tasks("quick", [NAME], seeds=3, instances_dir=None)
    assert len(tasks) == 6
    rows, interrupted = run_tasks(tasks, FOUR, time_limit=5)
    assert not interrupted
    assert len(rows) == 6 * 4
    by_method: dict[str, list[Any]] = {}
    for r in rows:
        by_method.setdefault(r.method, []).append(r)
    assert all(r.verified and not r.error and r.gap == 0 for r in by_method["exact"])
    assert all(r.at_optimum is True for r in by_method["exact"])
    # Greedy is at the optimum exactly where its value is the brute-force one.
    assert all(r.at_optimum is (r.objective == r.optimum) for r in by_method["greedy"])
    assert all(r.verified and r.gap is not None and r.gap >= 0 for r in by_method["greedy"])
    assert all(r.status == "error" and "solver bug" in r.error for r in by_method["broken"])
    assert all(not r.verified and r.error.startswith("check:") for r in by_method["liar"])
    for r in rows:
        # The optimum recorded is the brute-force optimum of that instance.
        assert r.optimum == brute_force(read(generate(r.size, r.seed)))[0]

    summaries = write_outputs(rows, tmp_path, suite="quick", interrupted=False, plots=False)
    with (tmp_path / "results.csv").open() as fh:
        assert len(list(csv.DictReader(fh))) == len(rows)
    payload = json.loads((tmp_path / "results.json").read_text())
    assert len(payload["rows"]) == len(rows)
    report = (tmp_path / "report.md").read_text()
    assert "## toy-knapsack" in report
    assert "Failed rows" in report
    greedy = [s for s in summaries if s.method == "greedy"]
    assert {s.size for s in greedy} == {"n4", "n8"}
    assert all(s.runs == 3 and s.speedup is not None for s in greedy)


def test_rows_carry_the_methods_own_bound_and_certified_gap(
    toy: Problem[Any, Any], tmp_path: Path
) -> None:
    tasks = build_tasks("quick", [NAME], seeds=2, instances_dir=None)
    rows, _ = run_tasks(tasks, ["exact", "greedy"], time_limit=5)
    for r in rows:
        inp = read(generate(r.size, r.seed))
        optimum = brute_force(inp)[0]
        if r.method == "exact":
            # Proven optimal: the bound is the objective, the certified gap 0.
            assert (r.bound, r.certified_gap) == (optimum, 0.0)
        else:
            lp = fractional_bound(inp)  # computed by the toy, not by the runner
            assert r.bound == pytest.approx(lp)
            assert r.bound >= optimum >= r.objective  # a maximization's upper bound
            assert r.certified_gap == pytest.approx((lp - r.objective) / max(lp, 1.0))
            assert r.certified_gap >= r.gap - 1e-12  # the bound is never tighter than the optimum
    write_outputs(rows, tmp_path, suite="quick", interrupted=False, plots=False)
    with (tmp_path / "results.csv").open() as fh:
        records = list(csv.DictReader(fh))
    assert {"bound", "certified_gap", "key", "tie_gap", "at_optimum"} <= set(records[0])
    greedy = next(rec for rec in records if rec["method"] == "greedy")
    assert float(greedy["bound"]) >= float(greedy["optimum"])
    payload = json.loads((tmp_path / "results.json").read_text())
    assert all("bound" in row and "certified_gap" in row for row in payload["rows"])
    report = (tmp_path / "report.md").read_text()
    assert "| certified gap % | dominated by |" in report


def test_a_bound_beyond_the_proven_optimum_is_a_failed_row(toy: Problem[Any, Any]) -> None:
    tasks = build_tasks("quick", [NAME], seeds=1, instances_dir=None)
    rows, _ = run_tasks(tasks, ["exact", "bad-bound"], time_limit=5)
    bad = [r for r in rows if r.method == "bad-bound"]
    assert bad
    assert all(r.verified is True for r in bad)  # the checker accepts the empty answer...
    assert all("wrong side of the proven optimum" in r.error for r in bad)  # ...not its bound


def test_same_seeds_same_results(toy: Problem[Any, Any]) -> None:
    tasks = build_tasks("quick", [NAME], seeds=2, instances_dir=None)
    first, _ = run_tasks(tasks, ["exact", "greedy"], time_limit=5)
    second, _ = run_tasks(tasks, ["exact", "greedy"], time_limit=5)
    assert [(r.method, r.objective, r.gap) for r in first] == [
        (r.method, r.objective, r.gap) for r in second
    ]


def test_curated_files_are_included(toy: Problem[Any, Any], tmp_path: Path) -> None:
    doc = {
        "format": "scheduling-opt/v1",
        "problem": NAME,
        "weights": [3, 4],
        "values": [5, 6],
        "capacity": 4,
    }
    (tmp_path / "a.json").write_text(json.dumps(doc))
    (tmp_path / f"{NAME}-big.json").write_text(json.dumps(doc))
    (tmp_path / "other.json").write_text(json.dumps({"problem": "something-else"}))
    (tmp_path / "broken.json").write_text("{")
    tasks = build_tasks("standard", [NAME], seeds=1, instances_dir=tmp_path)
    # One row per file, named after it without the problem prefix.
    assert tasks == [
        Task(NAME, "file:a", 0, str(tmp_path / "a.json")),
        Task(NAME, "file:big", 0, str(tmp_path / f"{NAME}-big.json")),
    ]
    rows, _ = run_tasks(tasks, ["exact"], time_limit=5)
    assert [r.objective for r in rows] == [6, 6]


def _row(method: str, exact: bool, gap: float | None, seconds: float, size: str = "s") -> Row:
    return Row("p", size, 0, "i", method, exact, "optimal", 1.0, 1.0, gap, seconds, True, "")


def test_summary_math() -> None:
    rows = [
        _row("exact", True, 0.0, 2.0),
        _row("exact", True, 0.0, 4.0),
        _row("h", False, 0.1, 0.5),
        _row("h", False, 0.3, 1.5),
    ]
    (ex, h) = summarize(rows)
    assert ex.median_seconds == 3.0
    assert ex.speedup == 1.0
    assert h.mean_gap == pytest.approx(0.2)
    assert h.worst_gap == pytest.approx(0.3)
    assert h.median_seconds == 1.0
    assert h.speedup == 3.0


def test_dominated_methods_are_marked_on_a_hand_made_table() -> None:
    # Size "s" (median ms, mean gap %):
    #   exact (300, 0)   dp (20, 0)   greedy (10, 5)   slow-bad (500, 10)   tie (20, 0)
    # dp and tie dominate exact (faster, same gap) and slow-bad; neither dominates
    # the other (equal on both); greedy is the fastest, so nothing dominates it.
    # Size "t": only two methods, a trade-off: neither is dominated.
    rows = [
        _row("exact", True, 0.0, 0.300),
        _row("exact", True, 0.0, 0.300),
        _row("dp", True, 0.0, 0.020),
        _row("greedy", False, 0.04, 0.010),
        _row("greedy", False, 0.06, 0.010),
        _row("slow-bad", False, 0.10, 0.500),
        _row("tie", False, 0.0, 0.020),
        _row("fast", False, 0.2, 0.001, size="t"),
        _row("exact", True, 0.0, 1.0, size="t"),
    ]
    marks = {(s.size, s.method): s.dominated_by for s in summarize(rows)}
    assert marks == {
        ("s", "exact"): ("dp", "tie"),
        ("s", "dp"): (),
        ("s", "greedy"): (),
        ("s", "slow-bad"): ("exact", "dp", "greedy", "tie"),
        ("s", "tie"): (),
        ("t", "fast"): (),
        ("t", "exact"): (),
    }
    table = format_table(summarize(rows), "p")
    assert "| s | exact | 2 | 0 | 0 | 0 | 0.00 | 0.00 | - | 300.00 | 1.0x | - | dp, tie |" in table
    assert "| s | greedy | 2 | 0 | 0 | 0 | 5.00 | 6.00 | - | 10.00 | 30.0x | - |  |" in table


def test_dominance_treats_times_within_the_tolerance_as_equal() -> None:
    # Tolerance: max(10% of the slower median, 2 ms). Median ms and mean gap %:
    #   exact (100, 0)   auto (108, 0): 8 ms apart <= 10.8 ms: equal times, equal
    #     gaps -> neither dominates (without the tolerance exact dominated auto).
    #   greedy (99, 1): 1 ms faster than exact, within the tolerance, and worse
    #     -> dominated by exact and auto (auto: 9 ms slower <= 10.8 ms).
    #   slow (125, 0): 17 ms slower than auto, beyond 12.5 ms -> dominated by both.
    #   tiny-a (1, 3), tiny-b (2.9, 2) at size "u": 1.9 ms apart <= 2 ms floor:
    #     equal times, tiny-b strictly better -> tiny-b dominates tiny-a.
    #   tiny-c (5.5, 0): 3.5 ms slower than tiny-b (> 2 ms, > 0.55 ms) -> a trade-off.
    rows = [
        _row("exact", True, 0.0, 0.100),
        _row("auto", True, 0.0, 0.108),
        _row("greedy", False, 0.01, 0.099),
        _row("slow", True, 0.0, 0.125),
        _row("tiny-a", False, 0.03, 0.001, size="u"),
        _row("tiny-b", False, 0.02, 0.0029, size="u"),
        _row("tiny-c", False, 0.0, 0.0055, size="u"),
    ]
    marks = {(s.size, s.method): s.dominated_by for s in summarize(rows)}
    assert marks == {
        ("s", "exact"): (),
        ("s", "auto"): (),
        ("s", "greedy"): ("exact", "auto"),
        ("s", "slow"): ("exact", "auto"),
        ("u", "tiny-a"): ("tiny-b",),
        ("u", "tiny-b"): (),
        ("u", "tiny-c"): (),
    }


def test_a_method_with_failed_runs_dominates_none() -> None:
    failed = Row("p", "s", 1, "i", "h", False, "error", None, 1.0, None, None, False, "boom")
    rows = [_row("exact", True, 0.0, 1.0), _row("h", False, 0.0, 0.5), failed]
    marks = {s.method: s.dominated_by for s in summarize(rows)}
    assert marks == {"exact": (), "h": ()}


def test_dask_executor_matches_local_run(toy: Problem[Any, Any]) -> None:
    distributed = pytest.importorskip(
        "distributed", reason="dask.distributed is not installed (the 'test' or 'dask' extra)"
    )
    tasks = build_tasks("quick", [NAME], seeds=2, instances_dir=None)
    local, _ = run_tasks(tasks, ["exact", "greedy"], time_limit=5)
    # Threads, not processes: the toy problem is registered in this process only.
    with (
        distributed.LocalCluster(
            n_workers=2, threads_per_worker=1, processes=False, dashboard_address=None
        ) as cluster,
        distributed.Client(cluster) as client,
    ):
        remote, interrupted = run_tasks(
            tasks, ["exact", "greedy"], time_limit=5, executor="dask", dask_client=client
        )
    assert not interrupted
    assert [(r.instance, r.method, r.objective, r.gap) for r in remote] == [
        (r.instance, r.method, r.objective, r.gap) for r in local
    ]


def test_ctrl_c_keeps_finished_rows(toy: Problem[Any, Any]) -> None:
    tasks = build_tasks("quick", [NAME], seeds=3, instances_dir=None)
    seen: list[int] = []

    def progress(done: int, total: int) -> None:
        seen.append(done)
        if done == 2:
            raise KeyboardInterrupt

    rows, interrupted = run_tasks(tasks, ["exact"], time_limit=5, progress=progress)
    assert interrupted
    assert len(rows) == 2
    assert seen == [1, 2]


def test_bench_command_end_to_end(
    toy: Problem[Any, Any], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from scheduling_opt.cli import main

    out = tmp_path / "out"
    argv = ["bench", "--problem", NAME, "--seeds", "2", "--out", str(out), "--quiet"]
    argv += ["--instances", str(tmp_path), "--method", "exact", "--method", "greedy"]
    assert main(argv) == 0, capsys.readouterr().err
    printed = capsys.readouterr().out
    assert "| speed-up vs exact | certified gap % | dominated by |" in printed
    assert "8 runs on 4 instances" in printed
    assert {p.name for p in out.iterdir()} >= {"results.csv", "results.json", "report.md"}
    # A failed row makes the command exit 1, and the report lists it.
    assert main([*argv[:-4], "--method", "liar"]) == 1
    assert "toy-knapsack n4/seed0 liar: check: over capacity" in (out / "report.md").read_text()


def test_plots_are_drawn_when_matplotlib_is_installed(
    toy: Problem[Any, Any], tmp_path: Path
) -> None:
    pytest.importorskip(
        "matplotlib",
        reason="matplotlib is not installed: the plots need the 'test' or 'bench' extra",
    )
    tasks = build_tasks("quick", [NAME], seeds=1, instances_dir=None)
    rows, _ = run_tasks(tasks, ["exact", "greedy"], time_limit=5)
    write_outputs(rows, tmp_path, suite="quick", interrupted=False, plots=True)
    png = tmp_path / f"{NAME}.png"
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_plain_progress_bar_without_tqdm(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import sys

    from scheduling_opt.bench import progress_bar

    assert progress_bar(quiet=True) is None
    monkeypatch.setitem(sys.modules, "tqdm", None)  # import tqdm now raises ImportError
    show = progress_bar(quiet=False)
    assert show is not None
    show(1, 4)
    show(4, 4)
    err = capsys.readouterr().err
    assert "[#######.......................] 1/4 instances" in err
    assert "[##############################] 4/4 instances" in err
    assert err.endswith("\n")
