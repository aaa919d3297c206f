"""The throughput matrix of the shared model (Gavel §3): validation, speeds, files, allocation."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from scheduling_opt.allocation import free_capacity
from scheduling_opt.errors import InvalidInstanceError
from scheduling_opt.io.instance import loads, parse_throughputs, throughputs_to_dict
from scheduling_opt.model import (
    Cluster,
    GpuType,
    Job,
    Placement,
    PlacementRow,
    Server,
)
from scheduling_opt.registry import get_problem
from scheduling_opt.throughput import ThroughputMatrix, job_speed

ROOT = Path(__file__).resolve().parents[1]
CLUSTER = Cluster(
    (GpuType("V100"), GpuType("T4", 0.25)),
    (Server("v", "V100", 8), Server("t", "T4", 8, "inference", on_loan=True)),
)


@pytest.mark.parametrize(
    ("rows", "path"),
    [
        ({}, "throughputs"),
        ([], "throughputs"),
        ({"a": {}}, "throughputs.a"),
        ({"a": 1.0}, "throughputs.a"),
        ({"a": {"V100": float("nan")}}, "throughputs.a.V100"),
        ({"a": {"V100": float("inf")}}, "throughputs.a.V100"),
        ({"a": {"V100": -0.5}}, "throughputs.a.V100"),
        ({"a": {"V100": True}}, "throughputs.a.V100"),
        ({"a": {"V100": "fast"}}, "throughputs.a.V100"),
        ({"a": {"V100": 1.0}, "b": {"T4": 1.0}}, "throughputs.b"),
        ({"a": {"V100": 1.0}, "b": {"V100": 1.0, "T4": 1.0}}, "throughputs.b"),
        ({"": {"V100": 1.0}}, "throughputs"),
    ],
)
def test_bad_matrices_name_the_field(rows: object, path: str) -> None:
    with pytest.raises(InvalidInstanceError) as err:
        ThroughputMatrix(rows)  # type: ignore[arg-type]
    assert err.value.path == path


def test_check_against_cluster_and_jobs() -> None:
    t = ThroughputMatrix({"a": {"V100": 1.0, "T4": 0.6}})
    t.check(CLUSTER, ["a"])
    with pytest.raises(InvalidInstanceError, match="unknown job 'a'") as err:
        t.check(CLUSTER, ["b"])
    assert err.value.path == "throughputs.a"
    with pytest.raises(InvalidInstanceError, match="unknown GPU type 'K80'") as err:
        ThroughputMatrix({"a": {"V100": 1.0, "K80": 0.6}}).check(CLUSTER, ["a"])
    assert err.value.path == "throughputs.a.K80"
    with pytest.raises(InvalidInstanceError, match="no column for the cluster's GPU type 'T4'"):
        ThroughputMatrix({"a": {"V100": 1.0}}).check(CLUSTER, ["a"])
    with pytest.raises(InvalidInstanceError, match="no row for job 'c'"):
        t.check(CLUSTER, ["a", "c"])


def test_speed_is_the_matrix_entry_or_the_type_s_compute() -> None:
    t = ThroughputMatrix({"a": {"V100": 1.0, "T4": 0.6}})
    assert job_speed(CLUSTER, "a", "T4") == 0.25
    assert job_speed(CLUSTER, "a", "T4", t) == 0.6
    with pytest.raises(InvalidInstanceError, match="no row for job 'b'"):
        job_speed(CLUSTER, "b", "T4", t)


def test_file_round_trip() -> None:
    t = parse_throughputs({"a": {"V100": 1, "T4": 0.6}})
    assert t.rows == {"a": {"V100": 1.0, "T4": 0.6}}
    assert parse_throughputs(throughputs_to_dict(t)) == t
    with pytest.raises(InvalidInstanceError) as err:
        parse_throughputs({"a": {"V100": -1}})
    assert err.value.path == "throughputs.a.V100"


def test_free_capacity_counts_a_running_job_s_flexible_gpus_at_its_own_speed() -> None:
    # Job e: 2..6 workers, 4 on the V100 server and 2 on the on-loan T4 server.
    # Flexible workers: 4, counted on its slowest servers first: 2 on T4, 2 on V100.
    # Idle: 4 V100 (4.0) and 6 T4 at compute 0.25 (1.5).
    jobs = {"e": Job("e", 2, 6, 100.0)}
    placement = Placement((PlacementRow("e", "v", 4), PlacementRow("e", "t", 2)))
    # Without a matrix: 2 T4 at 0.25 + 2 V100 at 1 = 2.5; total 4 + 1.5 + 2.5 = 8.
    assert free_capacity(CLUSTER, jobs, placement) == 8
    # With e at 0.9 of its V100 speed on a T4: 2 x 0.9 + 2 = 3.8; total 9.3, floored.
    t = ThroughputMatrix({"e": {"V100": 2.0, "T4": 1.8}})
    assert free_capacity(CLUSTER, jobs, placement, t) == 9
    # A job faster on T4 than on V100 has its V100 workers counted first.
    fast_t4 = ThroughputMatrix({"e": {"V100": 1.0, "T4": 2.0}})
    # Flexible 4: 4 on V100 (4 x 1.0), none of the T4s: 4 + 1.5 + 4 = 9.5 -> 9.
    assert free_capacity(CLUSTER, jobs, placement, fast_t4) == 9


def test_allocation_reads_the_throughputs_section() -> None:
    doc = json.loads((ROOT / "instances" / "allocation-aryl-table4.json").read_text())
    assert "cluster" in doc
    problem = get_problem("allocation")
    base = problem.parse(loads(json.dumps(doc)))
    ids = [j["id"] for j in doc["jobs"]]
    types = [t["name"] for t in doc["cluster"]["gpu_types"]]
    doc["throughputs"] = {j: dict.fromkeys(types, 1.0) for j in ids}
    assert problem.parse(loads(json.dumps(doc))).capacity == base.capacity
    doc["throughputs"][ids[0]][types[0]] = -1
    with pytest.raises(InvalidInstanceError) as err:
        problem.parse(loads(json.dumps(doc)))
    assert err.value.path == f"throughputs.{ids[0]}.{types[0]}"
    doc["throughputs"] = {"ghost": dict.fromkeys(types, 1.0)}
    with pytest.raises(InvalidInstanceError, match="unknown job 'ghost'"):
        problem.parse(loads(json.dumps(doc)))
