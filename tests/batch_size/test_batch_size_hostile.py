"""Issue 17 items 3, 5, 8 and 11 for ``batch-size``: user penalties, huge clusters, time limits."""

from __future__ import annotations

import itertools
import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from scheduling_opt.batch_size import (
    AnalyticThroughput,
    BatchSizeInput,
    JobState,
    brute_force,
    exact,
    greedy,
    ones,
)
from scheduling_opt.batch_size.evaluate import objective
from scheduling_opt.batch_size.io import generate, read
from scheduling_opt.errors import InstanceTooLargeError
from scheduling_opt.io.instance import load, loads
from scheduling_opt.model import BatchInfo, Job
from scheduling_opt.registry import get_problem
from scheduling_opt.solution import Status
from scheduling_opt.testing import cluster_of, seeded_batch_size_input

INSTANCES = Path(__file__).resolve().parent.parent.parent / "instances"
PROBLEM = get_problem("batch-size")


def example() -> dict[str, Any]:
    raw = json.loads((INSTANCES / "batch-size-example.json").read_text())
    assert isinstance(raw, dict)
    return raw


def idle_pays() -> BatchSizeInput:
    """5 GPUs on one server, 2 jobs of at most 4; no idle penalty, a large wait penalty.

    Every job's GPU-time c * Y / X(c) grows with c (0.5 s of communication per
    doubling: a's 1 GPU costs 0.178 s per 64 samples, 4 GPUs 1.178 s per 256), so the
    optimum runs each job on one GPU and leaves 3 GPUs idle; filling them
    (what ``ones`` and ``greedy`` did before, 148% off on such an instance)
    only adds GPU-time.
    """
    jobs = [
        Job("a", 1, 4, 3600.0, batch=BatchInfo(1000, 256, 64)),
        Job("b", 1, 4, 3600.0, batch=BatchInfo(2000, 128, 32)),
    ]
    return BatchSizeInput(
        cluster_of((5,)),
        jobs,
        {"a": JobState(4.0), "b": JobState(6.0)},
        AnalyticThroughput(overhead=0.05, per_sample=0.002, comm=0.5),
        wait_penalty=1e6,
        idle_penalty=0.0,
    )


def test_user_penalties_let_ones_and_greedy_leave_gpus_idle() -> None:
    inp = idle_pays()
    assert inp.may_idle
    best = exact(inp)
    truth = brute_force(inp)
    assert best.status is Status.OPTIMAL
    assert best.objective == pytest.approx(truth.objective, rel=1e-9)
    assert best.decision is not None
    assert best.decision.gpus == (1, 1)
    for method in (ones, greedy):
        sol = method(inp, seed=0)
        assert sol.decision is not None
        assert sol.decision.gpus == (1, 1), method.__name__
        assert sol.objective == pytest.approx(truth.objective, rel=1e-9)
    # What filling every GPU costs here (the old behaviour): strictly worse.
    full = [
        np.array(row)
        for row in itertools.product((0, 1), repeat=5)
        if row.count(0) <= 4 and row.count(1) <= 4
    ]
    filled = float(objective(inp, np.stack(full)).min())
    assert truth.objective is not None
    assert filled > truth.objective * 2


@pytest.mark.parametrize("seed", range(8))
def test_ones_reaches_the_optimum_under_user_penalties(seed: int) -> None:
    base = seeded_batch_size_input(seed, nodes=(3, 2), jobs=3)
    u = base.util_max
    for wait, idle in ((0.0, 0.0), (0.3 * u, 0.0), (u, 0.05 * u), (0.1 * u, 0.2 * u), (0, 0.5 * u)):
        inp = seeded_batch_size_input(
            seed, nodes=(3, 2), jobs=3, wait_penalty=wait, idle_penalty=idle
        )
        truth = brute_force(inp).objective
        assert truth is not None
        found = ones(inp, seed=0)
        assert found.objective == pytest.approx(truth, rel=1e-9, abs=1e-9), (wait / u, idle / u)
        g = greedy(inp)
        assert g.objective is not None
        assert g.objective >= truth - 1e-9 * max(abs(truth), 1)
        PROBLEM.check(inp, found)
        PROBLEM.check(inp, g)


def test_a_billion_gpu_server_is_refused_at_once_with_one_line() -> None:
    doc = example()
    doc["cluster"]["servers"][0]["gpus"] = 1_000_000_000
    path_msg = "cluster.servers"
    start = time.perf_counter()
    with pytest.raises(InstanceTooLargeError) as err:
        PROBLEM.parse(loads(json.dumps(doc)))
    assert time.perf_counter() - start < 1.0
    assert str(err.value).startswith(path_msg)
    assert "4096" in str(err.value)
    assert "\n" not in str(err.value)


@pytest.mark.slow
def test_the_cli_validate_refuses_a_billion_gpus_in_one_line(tmp_path: Path) -> None:
    doc = example()
    doc["cluster"]["servers"][0]["gpus"] = 1_000_000_000
    path = tmp_path / "huge.json"
    path.write_text(json.dumps(doc))
    run = subprocess.run(
        [sys.executable, "-m", "scheduling_opt.cli", "validate", str(path)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert run.returncode == 2
    lines = run.stderr.strip().splitlines()
    assert len(lines) == 1
    assert "cluster.servers" in lines[0]
    assert "4096" in lines[0]


def test_a_million_generations_honour_the_time_limit() -> None:
    doc = example()
    doc["params"]["generations"] = 1_000_000
    inp = PROBLEM.parse(loads(json.dumps(doc)))
    start = time.perf_counter()
    sol = PROBLEM.method("ones").run(inp, seed=0, time_limit=1.0)
    elapsed = time.perf_counter() - start
    assert elapsed < 1.5
    assert sol.status is Status.FEASIBLE
    assert "time limit" in sol.message
    PROBLEM.check(inp, sol)
    # The answer is the best so far: never worse than the greedy start it holds.
    g = greedy(inp)
    assert sol.objective is not None
    assert g.objective is not None
    assert sol.objective <= g.objective + 1e-9


def test_large_generated_instances_keep_the_time_limit() -> None:
    inp = read(generate("g512", 0))  # population 512 x 512 GPUs: about 4 s per generation
    for method in (ones, exact, greedy):
        start = time.perf_counter()
        sol = method(inp, seed=0, time_limit=0.5)
        assert time.perf_counter() - start < 1.5, method.__name__
        assert sol.decision is not None
        PROBLEM.check(inp, sol)


def test_curated_batch_size_files_still_load() -> None:
    for path in sorted(INSTANCES.glob("batch-size-*.json")):
        assert PROBLEM.parse(load(path)).n_gpus >= 8
