"""The Chronus/Philly CSV loader, on small files the tests write."""

from __future__ import annotations

from pathlib import Path

import pytest

from scheduling_opt.errors import InvalidInstanceError
from scheduling_opt.io.traces import read_trace, to_job, to_jobs
from scheduling_opt.model import RewardStep

HEADER = (
    "job_id,user,num_gpu,submit_time,iterations,model_name,duration,interval,"
    "expect_time_list,expect_value_list,best_effort,job_type\n"
)
ROWS = (
    "0,vc_a,1,5601,5530,mobilenet_v2,96,5,159-189-229-289,10-8-5-2,0,soft\n"
    "1,vc_b,4,7505,760,alexnet,106,6,235,10,0,strict\n"
    "2,vc_c,1,14341,3621,alexnet,30,17,14341,10,1,best\n"
    "3,vc_d,0,61,8388,inception_v3,83,18,119,10,0,strict\n"
    "4,vc_e,12,100,10,vgg16,50,5,90,10,0,strict\n"
)


def write(tmp_path: Path, body: str, header: str = HEADER) -> Path:
    path = tmp_path / "trace.csv"
    path.write_text(header + body, encoding="utf-8")
    return path


def test_rows_are_read_in_file_units(tmp_path: Path) -> None:
    jobs = read_trace(write(tmp_path, ROWS))
    assert [j.job_id for j in jobs] == ["0", "1", "2", "3", "4"]
    soft = jobs[0]
    assert soft.job_type == "soft"
    assert soft.num_gpu == 1
    assert soft.duration == 96
    assert soft.deadlines == ((159, 10), (189, 8), (229, 5), (289, 2))
    assert jobs[2].deadlines == ()  # best effort: the placeholder is ignored
    assert not jobs[2].slo
    assert jobs[1].slo
    assert len(read_trace(write(tmp_path, ROWS), limit=2)) == 2


def test_conversion_to_model_jobs(tmp_path: Path) -> None:
    jobs = read_trace(write(tmp_path, ROWS))
    soft = to_job(jobs[0])
    assert soft is not None
    assert soft.duration == 96 * 60
    assert soft.max_gpus == 1
    assert soft.submit_time == 5601 * 60
    assert soft.deadlines[0] == RewardStep(159 * 60, 100)  # rewards x10: the paper's scale
    assert [s.reward for s in soft.deadlines] == [100, 80, 50, 20]
    later = to_job(jobs[0], now=5601 + 170)  # 170 minutes after submission
    assert later is not None
    assert later.deadlines == (
        RewardStep(19 * 60, 80),
        RewardStep(59 * 60, 50),
        RewardStep(119 * 60, 20),
    )
    assert to_job(jobs[3]) is None  # 0 GPUs: skipped by default
    one = to_job(jobs[3], zero_gpu="one")
    assert one is not None
    assert one.max_gpus == 1
    big = to_job(jobs[4])
    assert big is not None
    assert big.max_gpus == 12
    assert [j.id for j in to_jobs(jobs)] == ["0", "1", "2", "4"]


@pytest.mark.parametrize(
    ("body", "where"),
    [
        ("0,u,x,1,1,m,5,5,9,10,0,strict\n", "trace.csv:2 num_gpu"),
        ("0,u,1,1,1,m,5,5,9-12,10,0,soft\n", "trace.csv:2 expect_value_list"),
        ("0,u,1,1,1,m,5,5,12-9,10-8,0,soft\n", "trace.csv:2 expect_time_list"),
        ("0,u,1,1,1,m,5,5,9,10,0,gold\n", "trace.csv:2 job_type"),
        ("0,u,1,1,1,m,-5,5,9,10,0,strict\n", "trace.csv:2 duration"),
        ("0,u,1,1,1\n", "trace.csv:2"),
    ],
)
def test_errors_name_line_and_column(tmp_path: Path, body: str, where: str) -> None:
    with pytest.raises(InvalidInstanceError) as err:
        read_trace(write(tmp_path, body))
    assert err.value.path.endswith(where), str(err.value)


def test_missing_columns_and_files(tmp_path: Path) -> None:
    with pytest.raises(InvalidInstanceError, match="missing columns"):
        read_trace(write(tmp_path, "", header="job_id,user\n"))
    with pytest.raises(InvalidInstanceError, match="cannot read"):
        read_trace(tmp_path / "absent.csv")
