"""Workloads: the trace loader on files the tests write, validation, the excerpt, synthetic."""

from __future__ import annotations

from pathlib import Path

import pytest

from scheduling_opt.errors import InvalidInstanceError
from scheduling_opt.sim import SimJob, SyntheticSpec, Workload, bundled, generate, load_trace

HEADER = (
    "job_id,user,num_gpu,submit_time,iterations,model_name,duration,interval,"
    "expect_time_list,expect_value_list,best_effort,job_type\n"
)


def _write(tmp_path: Path, rows: list[str]) -> Path:
    path = tmp_path / "trace.csv"
    path.write_text(HEADER + "".join(r + "\n" for r in rows), encoding="utf-8")
    return path


def test_loader_converts_rows(tmp_path: Path) -> None:
    path = _write(
        tmp_path,
        [
            "10,vc_a,2,5,100,vgg16,30,1,40-50,10-8,0,soft",
            "3,vc_b,0,1,100,vgg16,30,1,1,0,1,best",  # zero GPUs: skipped
            "4,vc_b,1,5,100,alexnet,20,1,5,0,1,best",
        ],
    )
    w = load_trace(path)
    assert [j.id for j in w.jobs] == ["4", "10"]  # submit 5 tie: id 4 before 10 (numeric)
    soft = w.jobs[1]
    assert soft.gpus == 2
    assert soft.work == 30
    assert soft.tenant == "vc_a"
    assert soft.model == "vgg16"
    assert soft.deadlines == ((45.0, 100.0), (55.0, 80.0))  # absolute, rewards x 10
    assert w.jobs[0].deadlines == ()  # best effort: placeholder ignored
    assert len(load_trace(path, zero_gpu="one").jobs) == 3


@pytest.mark.parametrize(
    ("row", "where"),
    [
        ("1,vc,x,0,1,m,10,1,20,10,0,strict", "trace.csv:2 num_gpu"),
        ("1,vc,1,0,1,m,10,1,20-10,10-8,0,soft", "trace.csv:2 expect_time_list"),
        ("1,vc,1,0,1,m,10,1,20,10,0,urgent", "trace.csv:2 job_type"),
        ("1,vc,1,0,1,m,0,1,20,10,0,strict", "trace.csv:2 duration"),
    ],
)
def test_bad_rows_name_file_line_and_column(tmp_path: Path, row: str, where: str) -> None:
    with pytest.raises(InvalidInstanceError, match=where):
        load_trace(_write(tmp_path, [row]))


def test_duplicate_ids_are_refused() -> None:
    with pytest.raises(InvalidInstanceError, match="duplicate job id"):
        Workload.of([SimJob("1", 0, 1, 1.0), SimJob("1", 1, 1, 1.0)], "w")


def test_bundled_excerpt_is_the_first_day_of_p_mix2() -> None:
    w = bundled()
    assert len(w.jobs) == 5217  # 5,222 rows, 5 of them zero-GPU
    assert max(j.submit for j in w.jobs) < 1440
    assert (
        (Path(__file__).parents[2] / "scheduling_opt/sim/data/LICENSE")
        .read_text()
        .startswith("MIT License")
    )


def test_synthetic_is_seeded() -> None:
    a = generate(SyntheticSpec(jobs=200), seed=5)
    assert a.jobs == generate(SyntheticSpec(jobs=200), seed=5).jobs
    assert a.jobs != generate(SyntheticSpec(jobs=200), seed=6).jobs
    assert all(j.gpus in (1, 2, 4, 8, 12, 16, 20, 32) and j.work >= 1 for j in a.jobs)
    kinds = {j.job_type for j in a.jobs}
    assert kinds == {"strict", "soft", "best"}
