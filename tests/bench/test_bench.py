"""The benchmark runner on a tiny suite of a toy problem registered by the test.

The toy problem is a 0-1 knapsack whose exact method is brute force, so every
expected optimum here comes from enumeration, independent of the runner.
"""

from __future__ import annotations

import csv
import itertools
import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from scheduling_opt.bench import Task, build_tasks, run_tasks, summarize, write_outputs
from scheduling_opt.errors import VerificationError
from scheduling_opt.instance import Instance
from scheduling_opt.result import Result, SolveOptions, Status
from scheduling_opt.solvers import registry
from scheduling_opt.solvers.registry import Method, Problem

NAME = "toy-knapsack"


@dataclass(frozen=True)
class ToyInput:
    weights: tuple[int, ...]
    values: tuple[int, ...]
    capacity: int


@dataclass(frozen=True)
class ToyResult:
    status: Status
    objective: float | None
    seconds: float
    chosen: tuple[int, ...]

    def decision(self) -> dict[str, Any]:
        return {"chosen": list(self.chosen)}


def _parse(inst: Instance) -> ToyInput:
    return ToyInput(tuple(inst.data["weights"]), tuple(inst.data["values"]), inst.data["capacity"])


def _brute(d: ToyInput, _: SolveOptions) -> Result:
    best: tuple[int, tuple[int, ...]] = (0, ())
    for r in range(len(d.weights) + 1):
        for combo in itertools.combinations(range(len(d.weights)), r):
            if sum(d.weights[i] for i in combo) <= d.capacity:
                best = max(best, (sum(d.values[i] for i in combo), combo))
    return ToyResult(Status.OPTIMAL, best[0], 0.001, best[1])


def _greedy(d: ToyInput, opts: SolveOptions) -> Result:
    order = sorted(range(len(d.weights)), key=lambda i: -d.values[i] / d.weights[i])
    used, chosen = 0, []
    for i in order:
        if used + d.weights[i] <= d.capacity:
            used += d.weights[i]
            chosen.append(i)
    return ToyResult(Status.FEASIBLE, sum(d.values[i] for i in chosen), 0.0001, tuple(chosen))


def _broken(d: ToyInput, _: SolveOptions) -> Result:
    raise RuntimeError("solver bug")


def _liar(d: ToyInput, _: SolveOptions) -> Result:
    everything = tuple(range(len(d.weights)))
    return ToyResult(Status.FEASIBLE, sum(d.values), 0.0001, everything)


def _check(d: ToyInput, result: Result) -> None:
    chosen = result.decision()["chosen"]
    if sum(d.weights[i] for i in chosen) > d.capacity:
        raise VerificationError("over capacity")
    if sum(d.values[i] for i in chosen) != result.objective:
        raise VerificationError("objective mismatch")


def _generate(size: str, seed: int) -> Instance:
    import numpy as np

    n = int(size[1:])
    rng = np.random.default_rng(seed)
    weights = rng.integers(1, 20, n).tolist()
    values = rng.integers(1, 30, n).tolist()
    return Instance(
        NAME, data={"weights": weights, "values": values, "capacity": sum(weights) // 2}
    )


TOY = Problem(
    name=NAME,
    summary="0-1 knapsack (test toy)",
    sense="max",
    parse=_parse,
    methods=(
        Method("exact", _brute, exact=True),
        Method("greedy", _greedy),
        Method("broken", _broken),
        Method("liar", _liar),
    ),
    default="exact",
    check=_check,
    generate=_generate,
    sizes={"quick": ("n4", "n8")},
)


@pytest.fixture
def toy() -> Iterator[Problem]:
    registry.register(TOY)
    yield TOY
    registry._registered.pop(NAME, None)


def test_runner_verifies_every_row_and_reports_failures(toy: Problem, tmp_path: Path) -> None:
    tasks = build_tasks("quick", [NAME], seeds=3, instances_dir=None)
    assert len(tasks) == 6
    rows, interrupted = run_tasks(tasks, None, time_limit=5)
    assert not interrupted
    assert len(rows) == 6 * 4
    by_method: dict[str, list[Any]] = {}
    for r in rows:
        by_method.setdefault(r.method, []).append(r)
    assert all(r.verified and not r.error and r.gap == 0 for r in by_method["exact"])
    assert all(r.verified and r.gap is not None and r.gap >= 0 for r in by_method["greedy"])
    assert all(r.status == "error" and "solver bug" in r.error for r in by_method["broken"])
    assert all(not r.verified and r.error.startswith("check:") for r in by_method["liar"])
    for r in rows:
        # The optimum recorded is the brute-force optimum of that instance.
        inst = _parse(_generate(r.size, r.seed))
        assert r.optimum == _brute(inst, SolveOptions()).objective

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


def test_same_seeds_same_results(toy: Problem) -> None:
    tasks = build_tasks("quick", [NAME], seeds=2, instances_dir=None)
    first, _ = run_tasks(tasks, ["exact", "greedy"], time_limit=5)
    second, _ = run_tasks(tasks, ["exact", "greedy"], time_limit=5)
    assert [(r.method, r.objective, r.gap) for r in first] == [
        (r.method, r.objective, r.gap) for r in second
    ]


def test_curated_files_are_included(toy: Problem, tmp_path: Path) -> None:
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


def test_summary_math() -> None:
    from scheduling_opt.bench import Row

    def row(method: str, exact: bool, gap: float | None, seconds: float) -> Row:
        return Row("p", "s", 0, "i", method, exact, "optimal", 1.0, 1.0, gap, seconds, True, "")

    rows = [
        row("exact", True, 0.0, 2.0),
        row("exact", True, 0.0, 4.0),
        row("h", False, 0.1, 0.5),
        row("h", False, 0.3, 1.5),
    ]
    (ex, h) = summarize(rows)
    assert ex.median_seconds == 3.0
    assert ex.speedup == 1.0
    assert h.mean_gap == pytest.approx(0.2)
    assert h.worst_gap == pytest.approx(0.3)
    assert h.median_seconds == 1.0
    assert h.speedup == 3.0


def test_dask_executor_matches_local_run(toy: Problem) -> None:
    distributed = pytest.importorskip("distributed")
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


def test_ctrl_c_keeps_finished_rows(toy: Problem) -> None:
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
