"""The ``simulate`` command: default run, outputs and their contract, cache, bad input."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import pytest

from scheduling_opt.errors import InvalidInstanceError
from scheduling_opt.sim import METRIC_KEYS
from scheduling_opt.sim.cli.simulate import add_arguments, run
from scheduling_opt.sim.registry import default_policies


def _args(*argv: str) -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    add_arguments(parser)
    return parser.parse_args(["--quiet", *argv])


@pytest.mark.slow
def test_no_arguments_runs_the_excerpt_under_all_baselines(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)  # the default --out is ./simulate-out
    assert run(_args()) == 0
    out = capsys.readouterr().out
    assert "philly-mix2-day1 (5217 jobs), 60 x 8 GPUs" in out
    for name in default_policies():
        assert f"| {name} | 0 |" in out
    assert (tmp_path / "simulate-out" / "summary.json").is_file()


def test_a_trace_or_synthetic_workload_keeps_chronus_120_servers(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    argv = ["--workload", "synthetic", "--synthetic-jobs", "30", "--policy", "fifo"]
    assert run(_args(*argv, "--out", str(tmp_path))) == 0
    out = capsys.readouterr().out
    assert "(30 jobs), 120 x 8 GPUs; times in minutes" in out
    # simulate charges no restart cost unless asked, and its header says so.
    assert "; restart costs: none (the default;" in out


def test_the_header_states_the_costs_a_run_charges(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    argv = ["--workload", "synthetic", "--synthetic-jobs", "30", "--policy", "srtf"]
    costs = ["--restart-cost", "1.05", "--resize-cost", "0.1", "--start-overhead", "0.5"]
    assert run(_args(*argv, *costs, "--out", str(tmp_path))) == 0
    head = capsys.readouterr().out.splitlines()[0]
    assert head.endswith(
        "restart costs: 1.05 stall per resume, 0.1 stall per resize, "
        "0.5 x (1 + log2 g) work per start"
    )


def test_out_dir_files_contract_and_cache(tmp_path: Path) -> None:
    argv = ["--workload", "synthetic", "--synthetic-jobs", "120", "--servers", "4", "--seeds", "2"]
    argv += ["--policy", "fifo", "--policy", "srtf", "--out", str(tmp_path)]
    assert run(_args(*argv)) == 0
    for name in ("jobs.csv", "timeline.csv", "summary.json", "report.md"):
        assert (tmp_path / name).is_file()
    summary = json.loads((tmp_path / "summary.json").read_text())
    runs = summary["runs"]
    assert [(r["policy"], r["seed"]) for r in runs] == [
        ("fifo", 0),
        ("fifo", 1),
        ("srtf", 0),
        ("srtf", 1),
    ]
    for r in runs:
        assert {"policy", "seed", "wall_seconds", "events", "metrics"} <= set(r)
        assert set(METRIC_KEYS) <= set(r["metrics"])
    assert len(list((tmp_path / "cache").glob("*.pkl"))) == 4
    jobs_before = (tmp_path / "jobs.csv").read_bytes()
    assert run(_args(*argv)) == 0  # all four from the cache
    assert (tmp_path / "jobs.csv").read_bytes() == jobs_before
    assert "| fifo | 0 |" in (tmp_path / "report.md").read_text()


@pytest.mark.parametrize(
    ("argv", "where"),
    [
        (["--policy", "nope"], "--policy"),
        (["--trace", "/nonexistent/trace.csv"], "/nonexistent/trace.csv"),
        (["--seeds", "0"], "--seeds"),
        (["--skip", "1.5"], "--skip"),
        (["--round", "0"], "--round"),
    ],
)
def test_bad_input_is_one_line_error(argv: list[str], where: str) -> None:
    with pytest.raises(InvalidInstanceError, match=where) as err:
        run(_args(*argv))
    assert "\n" not in str(err.value)


def test_parallel_workers_give_the_same_results(tmp_path: Path) -> None:
    argv = ["--workload", "synthetic", "--synthetic-jobs", "80", "--servers", "2", "--seeds", "2"]
    argv += ["--policy", "sjf"]
    assert run(_args(*argv, "--out", str(tmp_path / "a"))) == 0
    assert run(_args(*argv, "--workers", "2", "--out", str(tmp_path / "b"))) == 0
    a = (tmp_path / "a" / "jobs.csv").read_bytes()
    assert a == (tmp_path / "b" / "jobs.csv").read_bytes()


def test_trace_by_path(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    trace = tmp_path / "mini.csv"
    trace.write_text(
        "job_id,user,num_gpu,submit_time,iterations,model_name,duration,interval,"
        "expect_time_list,expect_value_list,best_effort,job_type\n"
        "0,vc_a,8,0,1,vgg16,10,1,12,10,0,strict\n"
        "1,vc_b,8,1,1,vgg16,10,1,1,0,1,best\n",
        encoding="utf-8",
    )
    assert run(_args("--trace", str(trace), "--servers", "1", "--policy", "fifo")) == 0
    out = capsys.readouterr().out
    assert "workload mini (2 jobs)" in out
    assert "| fifo | 0 | 14.5 |" in out  # JCTs 10 and 20 - 1 = 19


@pytest.mark.parametrize("policy", ["chronus-greedy", "edl-tiresias"])
def test_simulate_runs_a_paper_policy_by_name(
    policy: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["--workload", "synthetic", "--synthetic-jobs", "30", "--servers", "2"]
    assert run(_args(*argv, "--policy", policy, "--out", str(tmp_path))) == 0
    assert f"| {policy} |" in capsys.readouterr().out


def test_a_cache_entry_of_an_older_version_is_recomputed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # An entry pickled before RunConfig's last two fields existed holds two
    # values fewer; it unpickles into an object without those slots, and
    # comparing it raised AttributeError deep in the sweep. Written here as
    # the older version did: the same state without the last two values.
    import pickle

    from scheduling_opt.sim.sweep import RunConfig

    argv = ["--workload", "synthetic", "--synthetic-jobs", "20", "--servers", "2"]
    argv += ["--policy", "fifo", "--out", str(tmp_path)]
    assert run(_args(*argv)) == 0
    (entry,) = (tmp_path / "cache").glob("*.pkl")
    result = pickle.loads(entry.read_bytes())
    state = RunConfig.__getstate__
    with monkeypatch.context() as m:
        m.setattr(RunConfig, "__getstate__", lambda self: state(self)[:-2])
        entry.write_bytes(pickle.dumps(result))
    assert not hasattr(pickle.loads(entry.read_bytes()).config, "plugins")
    before = (tmp_path / "jobs.csv").read_bytes()
    assert run(_args(*argv)) == 0
    assert (tmp_path / "jobs.csv").read_bytes() == before
    assert hasattr(pickle.loads(entry.read_bytes()).config, "plugins")


def test_unknown_policy_error_points_at_the_listing_and_the_close_names() -> None:
    with pytest.raises(InvalidInstanceError, match="--policy") as err:
        run(_args("--policy", "nope"))
    assert "'scheduling-opt policies' lists them" in str(err.value)
    with pytest.raises(InvalidInstanceError, match="did you mean 'tiresias'") as err:
        run(_args("--policy", "tiresais"))
    with pytest.raises(InvalidInstanceError, match="did you mean 'chronus-exact'"):
        run(_args("--policy", "chronus-exakt"))


def test_the_busy_claim_is_made_only_for_the_size_the_rule_found(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    # The rule scanned 8-GPU servers: with 4 GPUs per server, 60 servers is
    # just a size, not the bundled day's busy size.
    assert run(_args("--policy", "fifo", "--gpus-per-server", "4", "--out", str(tmp_path))) == 0
    head = capsys.readouterr().out.splitlines()[0]
    assert "(5217 jobs), 60 x 4 GPUs; times in minutes; restart costs: none" in head
    assert "busy size" not in head


@pytest.mark.slow  # 48 runs and their plots: 3.6 s
def test_many_runs_draw_their_plots_without_a_warning(tmp_path: Path) -> None:
    # Found by the simulator fuzz: --seeds 8 under the six default baselines
    # (48 runs in one legend) made tight_layout warn on stderr at exit 0.
    import warnings

    pytest.importorskip(
        "matplotlib",
        reason="matplotlib is not installed: the plots need the 'test' or 'bench' extra",
    )
    argv = ["--workload", "synthetic", "--synthetic-jobs", "2", "--seeds", "8"]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert run(_args(*argv, "--out", str(tmp_path))) == 0
    assert [str(w.message) for w in caught] == []
    assert (tmp_path / "timeline.png").stat().st_size > 0
