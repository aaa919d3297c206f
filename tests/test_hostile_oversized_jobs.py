"""One rule for a job that needs more GPUs than the whole cluster: refused by name.

Issue 17 item 16: allocation refused such a job while lease and placement
left it out of every answer silently. The rule for every problem that
schedules jobs (docs/architecture.md): a job that can never fit, even on the
empty cluster, is a malformed instance; the typed input refuses it, so the
file reader (CLI exit 2, one line) and a library call give the same error,
naming the job and the numbers. Mckp and memory-split have no GPU jobs,
reclaim only reads jobs that already run (their placement is checked per
server), and a batch-size job runs on 1..max_workers GPUs (``max_workers``
beyond the cluster is a cap), so none of them can hold such a job.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from scheduling_opt.allocation import AllocationInput
from scheduling_opt.errors import InvalidInstanceError
from scheduling_opt.io.instance import load
from scheduling_opt.lease import LeaseInput
from scheduling_opt.model import Cluster, GpuType, Job, Placement, PlacementRow, RewardStep, Server
from scheduling_opt.placement import PlacementInput
from scheduling_opt.registry import get_problem, problem_names

ROOT = Path(__file__).resolve().parents[1]
V100 = GpuType("V100", 1.0, 32.0)
T4 = GpuType("T4", 0.25, 16.0)
# Two 8-GPU training servers and an 8-GPU T4 inference server not on loan: 16
# GPUs training may use.
CLUSTER = Cluster(
    (V100, T4),
    (Server("a", "V100", 8), Server("b", "V100", 8), Server("i", "T4", 8, "inference")),
)
CLUSTER_DOC = {
    "gpu_types": [
        {"name": "V100", "compute": 1.0, "memory_gb": 32.0},
        {"name": "T4", "compute": 0.25, "memory_gb": 16.0},
    ],
    "servers": [
        {"id": "a", "gpu_type": "V100", "gpus": 8, "pool": "training"},
        {"id": "b", "gpu_type": "V100", "gpus": 8, "pool": "training"},
        {"id": "i", "gpu_type": "T4", "gpus": 8, "pool": "inference"},
    ],
}
DEADLINE = {"deadlines": [{"time": 7200, "reward": 10}]}


def _doc(problem: str, jobs: list[dict[str, Any]], params: dict[str, Any]) -> dict[str, Any]:
    return {
        "format": "scheduling-opt/v1",
        "problem": problem,
        "cluster": CLUSTER_DOC,
        "jobs": jobs,
        "params": params,
    }


# (problem, file document, the one line's path and message)
FILE_CASES = [
    (
        "placement",
        # 17 one-GPU workers on 16 GPUs.
        _doc(
            "placement",
            [
                {"id": "ok", "workers": 2, "duration": 60.0},
                {"id": "big", "workers": 17, "duration": 60.0},
            ],
            {},
        ),
        "jobs[1]: job 'big' needs 17 GPUs (17 workers of 1), more than the 16 its 2 training "
        "servers can ever hold",
    ),
    (
        "placement",
        # 3 workers of 5 GPUs: 15 <= 16 GPUs, but one 5-GPU worker per 8-GPU server.
        _doc(
            "placement",
            [{"id": "odd", "gpus_per_worker": 5, "workers": 3, "duration": 60.0}],
            {},
        ),
        "jobs[0]: job 'odd' needs 15 GPUs (3 workers of 5), more than the 10 its 2 training "
        "servers can ever hold",
    ),
    (
        "placement",
        # Elastic, no params.workers: all max_workers (12 of 2 GPUs = 24) are placed.
        _doc(
            "placement",
            [
                {
                    "id": "el",
                    "gpus_per_worker": 2,
                    "min_workers": 2,
                    "max_workers": 12,
                    "duration": 60.0,
                }
            ],
            {},
        ),
        "jobs[0]: job 'el' needs 24 GPUs (12 workers of 2), more than the 16 its 2 training "
        "servers can ever hold",
    ),
    (
        "placement",
        # Bound to T4: the only T4 server is an inference server not on loan.
        _doc(
            "placement",
            [{"id": "t4", "workers": 1, "duration": 60.0, "gpu_type": "T4"}],
            {},
        ),
        "jobs[0]: job 't4' needs 1 GPUs (1 workers of 1), more than the 0 its 0 training "
        "servers of type 'T4' can ever hold",
    ),
    (
        "lease",
        _doc(
            "lease",
            [{"id": "big", "workers": 20, "duration": 600.0, **DEADLINE}],
            {"lease_length": 600.0},
        ),
        "jobs[0]: job 'big' needs 20 GPUs, more than the 16 GPUs of the lease cluster",
    ),
    (
        "allocation",
        _doc("allocation", [{"id": "big", "workers": 17, "duration": 600.0}], {}),
        "jobs[0].min_workers: job 'big' needs 17 GPUs at base demand, only 16 can ever be free",
    ),
]


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "scheduling_opt.cli", *args],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=ROOT,
    )


@pytest.mark.parametrize(
    ("problem", "doc", "line"),
    # Two CLI processes per case: the first case runs by default, the rest are slow.
    [
        pytest.param(*c, id=f"{c[0]}-{i}", marks=() if i == 0 else pytest.mark.slow)
        for i, c in enumerate(FILE_CASES)
    ],
)
def test_the_file_is_refused_in_one_line_naming_job_and_numbers(
    tmp_path: Path, problem: str, doc: dict[str, Any], line: str
) -> None:
    path = tmp_path / f"{problem}.json"
    path.write_text(json.dumps(doc))
    for command in ("validate", "solve"):
        proc = _cli(command, str(path))
        assert proc.returncode == 2, (proc.stdout, proc.stderr)
        lines = proc.stderr.strip().splitlines()
        assert len(lines) == 1, proc.stderr
        assert lines[0].endswith(line), lines[0]


def test_placement_library_call_refuses_like_the_file() -> None:
    with pytest.raises(InvalidInstanceError) as err:
        PlacementInput(CLUSTER, [Job("ok", 2, 2, 60.0), Job("big", 17, 17, 60.0)])
    assert err.value.path == "jobs[1]"
    assert "job 'big' needs 17 GPUs (17 workers of 1), more than the 16" in err.value.reason


def test_placement_counts_the_workers_to_place_not_the_maximum() -> None:
    # An elastic job of up to 12 two-GPU workers fits when asked for 8 (16 GPUs).
    job = Job("el", 2, 12, 60.0, 2)
    assert PlacementInput(CLUSTER, [job], workers={"el": 8}).job_workers == (8,)
    with pytest.raises(InvalidInstanceError, match=r"needs 18 GPUs \(9 workers of 2\)"):
        PlacementInput(CLUSTER, [job], workers={"el": 9})


def test_placement_judges_the_empty_cluster_not_the_free_gpus() -> None:
    # 14 of 16 GPUs are busy: a 16-GPU job cannot start now but may later.
    running = Job("r", 14, 14, 60.0)
    rows = Placement((PlacementRow("r", "a", 8), PlacementRow("r", "b", 6)))
    inp = PlacementInput(CLUSTER, [running, Job("wide", 16, 16, 60.0)], rows)
    assert inp.job_ids == ("wide",)


def test_lease_library_call_refuses_like_the_file() -> None:
    big = Job("big", 20, 20, 600.0, deadlines=(RewardStep(7200.0, 10),))
    with pytest.raises(InvalidInstanceError) as err:
        LeaseInput([big], capacity=16, lease_length=600.0)
    assert err.value.path == "jobs[0]"
    assert "needs 20 GPUs, more than the 16 GPUs" in err.value.reason


def test_allocation_library_call_refuses_like_the_file() -> None:
    with pytest.raises(InvalidInstanceError) as err:
        AllocationInput((Job("ok", 1, 1, 60.0), Job("big", 17, 17, 600.0)), 16)
    assert err.value.path == "jobs[1].min_workers"
    assert "job 'big' needs 17 GPUs at base demand, only 16 can ever be free" in err.value.reason


def test_batch_size_caps_max_workers_instead() -> None:
    """Not a job that can never fit: it runs on 1..max_workers GPUs."""
    from scheduling_opt.batch_size import BatchSizeInput, JobState
    from scheduling_opt.model import BatchInfo

    job = Job("a", 1, 100, 3600.0, batch=BatchInfo(1000, 128, 64))
    inp = BatchSizeInput(CLUSTER, [job], {"a": JobState(beta=2.0)})
    assert inp.max_gpus.tolist() == [16]


@pytest.mark.parametrize("name", sorted(problem_names()))
def test_generators_make_no_job_bigger_than_the_cluster(name: str) -> None:
    problem = get_problem(name)
    sizes = sorted({s for suite in ("quick", "standard") for s in problem.sizes.get(suite, ())})
    for size in sizes:
        for seed in range(3):
            problem.parse(problem.generate(size, seed))


@pytest.mark.parametrize("servers", [1, 2, 3])
def test_the_smallest_placement_clusters_generate_fitting_jobs(servers: int) -> None:
    # One 8-GPU server used to get 12- and 16-GPU jobs.
    problem = get_problem("placement")
    for seed in range(20):
        problem.parse(problem.generate(str(servers), seed))


def test_every_curated_instance_still_loads() -> None:
    for path in sorted((ROOT / "instances").glob("*.json")):
        instance = load(path)
        get_problem(instance.problem).parse(instance)
