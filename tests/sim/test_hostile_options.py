"""``simulate`` and ``reproduce`` options and traces, as a careless user runs them (issue 27).

One test per row of the issue's table (and the ``--out FILE/sub`` note):
each bad input is one stderr line naming the option (or ``file:line``)
and exit status 2, checked before anything large is allocated. The rows
about memory run the real CLI in a process of its own under the fuzz
harness's 2 GB address-space cap (forked from a server that imported the
CLI once, ``tests/fuzz/preloaded.py``), so a refusal that came after an
allocation would fail as a cap hit.
"""

from __future__ import annotations

import warnings
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from scheduling_opt.cli import main
from tests.fuzz import mutate
from tests.fuzz.preloaded import run_cli_preloaded

HEADER = (
    "job_id,user,num_gpu,submit_time,iterations,model_name,duration,interval,"
    "expect_time_list,expect_value_list,best_effort,job_type"
)
ROWS = [
    "3,vc_a,1,61,8388,inception_v3,83,18,119,10,0,strict",
    "10,vc_b,2,70,6832,vgg16,146,10,918,10,1,best",
]


@pytest.fixture(autouse=True)
def _in_tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)  # the default --out is ./simulate-out


def _trace(tmp_path: Path, data: bytes | None = None, name: str = "t.csv") -> Path:
    path = tmp_path / name
    path.write_bytes(data if data is not None else ("\n".join([HEADER, *ROWS]) + "\n").encode())
    return path


def _cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def _one_line(capsys: pytest.CaptureFixture[str], *argv: str) -> str:
    code, _, err = _cli(capsys, *argv)
    assert code == 2, err
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    return lines[0]


def test_a_header_only_trace_is_one_line_and_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = _trace(tmp_path, (HEADER + "\n").encode())
    line = _one_line(capsys, "simulate", "--trace", str(path), "--quiet", "--out", str(tmp_path))
    assert f"{path}: no jobs to simulate" in line
    zero = _trace(tmp_path, (HEADER + "\n4,vc,0,1,1,m,3,1,1,1,1,best\n").encode(), "z.csv")
    assert "every row asks for 0 GPUs" in _one_line(capsys, "simulate", "--trace", str(zero))


def test_outputs_of_an_empty_run_raise_no_matplotlib_warning(tmp_path: Path) -> None:
    pytest.importorskip(
        "matplotlib",
        reason="matplotlib is not installed: the plots need the 'test' or 'bench' extra",
    )
    from scheduling_opt.sim import RunConfig, WorkloadSpec, run_config
    from scheduling_opt.sim.cli.output import write_all

    empty = _trace(tmp_path, (HEADER + "\n").encode())
    result = run_config(RunConfig("fifo", WorkloadSpec("trace", str(empty))))
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # "No artists with labels found" would raise
        plots = write_all(tmp_path / "o", [result], "test")
    assert plots == ["jct_cdf.png", "timeline.png", "deadline_miss.png"]


def test_a_duration_of_1e308_names_the_row_and_the_limit(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = _trace(tmp_path, (HEADER + "\n" + ROWS[0].replace(",83,", ",1e308,") + "\n").encode())
    line = _one_line(capsys, "simulate", "--trace", str(path), "--quiet")
    assert f"{path}:2 duration: must be at most 1e15" in line


def test_bom_and_crlf_give_the_same_table(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    plain = _trace(tmp_path, name="plain.csv")
    crlf = ("\r\n".join([HEADER, *ROWS]) + "\r\n").encode()
    exported = _trace(tmp_path, b"\xef\xbb\xbf" + crlf, "plain2.csv")
    argv = ["simulate", "--quiet", "--policy", "fifo", "--policy", "srtf", "--servers", "1"]
    code_a, out_a, _ = _cli(capsys, *argv, "--trace", str(plain))
    code_b, out_b, _ = _cli(capsys, *argv, "--trace", str(exported))
    assert code_a == code_b == 0
    # The tables agree but for the name and the wall-time column.
    strip = [r.rsplit("|", 2)[0] for r in out_a.splitlines()[1:]]
    assert strip == [r.rsplit("|", 2)[0] for r in out_b.splitlines()[1:]]
    # One server of 8 GPUs holds both jobs (1 + 2 GPUs): JCTs 83 and 146, mean 114.5.
    assert "| fifo | 0 | 114.5 |" in out_a


def test_a_non_utf8_byte_names_the_file_and_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = ("\n".join([HEADER, *ROWS]) + "\n").encode() + b"11,vc_\xff,1,9,6,m,4,1,9,1,1,best\n"
    path = _trace(tmp_path, data)
    line = _one_line(capsys, "simulate", "--trace", str(path), "--quiet")
    assert f"{path}:4: not UTF-8 text" in line


@pytest.mark.parametrize(
    ("argv", "words"),
    [
        (["--seeds", "0"], "--seeds: must be >= 1"),
        (["--workers", "0"], "--workers: must be >= 1"),
        (["--servers", "0"], "--servers: must be >= 1"),
        (["--servers", "1000000000"], "--servers: must be at most 100,000"),
        (["--gpus-per-server", "0"], "--gpus-per-server: must be >= 1"),
        (["--gpus-per-server", "1000000000"], "--gpus-per-server: must be at most 1,024"),
        (
            ["--servers", "100000", "--gpus-per-server", "1024"],
            "--servers: the cluster would have 102,400,000 GPUs",
        ),
        (["--restart-cost", "inf"], "--restart-cost: must be finite"),
        (["--preemption-cost", "nan"], "--preemption-cost: must be finite"),
        (["--round", "0"], "--round: must be > 0"),
        (["--round", "1e-9"], "--round: 1e-09 gives"),
        (["--skip", "1.5"], "--skip: must be in [0, 1)"),
        (["--timeline-step", "0"], "--timeline-step: must be > 0"),
        (["--timeline-step", "nan"], "--timeline-step: must be finite"),
        (["--policy", "nope"], "--policy: unknown policy 'nope'"),
        (["--policy", "fifo", "--policy", "fifo"], "--policy: 'fifo' given twice"),
        (["--seeds", "1000000"], "--seeds: must be at most 10,000"),
        (["--seeds", "2000"], "--seeds: 12,000 runs; at most 10,000"),
        (["--scheduler", "tcp://x:1"], "--scheduler: goes with --executor dask"),
    ],
)
def test_bad_options_name_the_option(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], argv: list[str], words: str
) -> None:
    line = _one_line(capsys, "simulate", "--trace", str(_trace(tmp_path)), "--quiet", *argv)
    assert words in line, line


def test_synthetic_size_and_the_sweep_memory_limit(capsys: pytest.CaptureFixture[str]) -> None:
    base = ["simulate", "--workload", "synthetic", "--quiet"]
    assert "--synthetic-jobs: must be >= 1" in _one_line(capsys, *base, "--synthetic-jobs", "0")
    line = _one_line(capsys, *base, "--synthetic-jobs", "1000000000")
    assert "--synthetic-jobs: must be at most 1,000,000" in line
    # 6 baselines x 100 seeds x 100,000 jobs: 60,000,000 job results > 5,000,000.
    line = _one_line(capsys, *base, "--synthetic-jobs", "100000", "--seeds", "100")
    assert "--seeds: 600 runs of 100,000 jobs keep 60,000,000 job results" in line


def test_timeline_rows_are_checked_before_any_file_is_written(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "o"
    argv = ["simulate", "--trace", str(_trace(tmp_path)), "--quiet", "--policy", "fifo"]
    line = _one_line(capsys, *argv, "--out", str(out), "--timeline-step", "1e-6")
    assert "--timeline-step: 1e-06 gives" in line
    assert not (out / "jobs.csv").exists()


def test_out_under_a_file_names_the_option(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = _trace(tmp_path)
    line = _one_line(capsys, "simulate", "--trace", str(path), "--out", str(path / "sub"))
    assert line.startswith("scheduling-opt: error: --out: cannot create folder")
    line = _one_line(capsys, "reproduce", "edl", "--quick", "--quiet", "--out", f"{path}/sub")
    assert line.startswith("scheduling-opt: error: --out: cannot create folder")
    assert "Not a directory" in line


def test_reproduce_checks_workers(capsys: pytest.CaptureFixture[str]) -> None:
    assert "--workers: must be >= 1" in _one_line(
        capsys, "reproduce", "edl", "--quick", "--workers", "0"
    )


@pytest.mark.slow
def test_huge_clusters_and_sweeps_are_refused_under_a_2gb_cap(tmp_path: Path) -> None:
    # The rows: no answer in 60 s and 1-6.5 GB before; now a refusal in one line
    # before anything is allocated (a cap hit would show as a MemoryError or exit 1).
    one = _trace(tmp_path, ("\n".join([HEADER, ROWS[0]]) + "\n").encode())
    runs = [
        ["simulate", "--trace", str(one), "--quiet", "--servers", "1000000000"],
        ["simulate", "--trace", str(one), "--quiet", "--gpus-per-server", "1000000000"],
        ["simulate", "--trace", str(one), "--quiet", "--seeds", "1000000"],
        ["simulate", "--trace", str(one), "--quiet", "--workers", "1000"],
        ["simulate", "--trace", str(one), "--quiet", "--servers", "100000", "--policy", "srtf"],
    ]
    with ThreadPoolExecutor(2) as pool:
        done = list(pool.map(lambda a: run_cli_preloaded(a, cwd=tmp_path), runs))
    for run in done:
        assert mutate.complaints(run) == [], (run.args, run.stderr)
    assert [r.returncode for r in done] == [2, 2, 2, 0, 0]
    assert "at most 100,000" in done[0].stderr
    assert "at most 1,024" in done[1].stderr
    assert "at most 10,000" in done[2].stderr
    # Six baselines, one seed each, in the results table (the bounds table below repeats them).
    results = done[3].stdout.split("Offline bounds")[0]
    assert results.count("| 0 |") == 6


def test_a_periodic_policy_on_a_long_trace_names_the_policy_option(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = _trace(tmp_path, (HEADER + "\n" + ROWS[1].replace(",146,", ",1e7,") + "\n").encode())
    line = _one_line(
        capsys, "simulate", "--trace", str(path), "--quiet", "--policy", "chronus-greedy"
    )
    assert "--policy: chronus-greedy decides every 20 time units" in line
