"""job_knapsack: configurations (GPU type, workers) of jobs, valued by the throughput matrix."""

from __future__ import annotations

import pytest

from scheduling_opt import mmkp as mk
from scheduling_opt.errors import InstanceTooLargeError, InvalidInstanceError
from scheduling_opt.model import Cluster, GpuType, Job, Server
from scheduling_opt.throughput import ThroughputMatrix

from .reference import brute_force

CLUSTER = Cluster(
    (GpuType("V100"), GpuType("K80", 0.25)),
    (Server("v0", "V100", 2), Server("k0", "K80", 4), Server("i0", "V100", 8, "inference")),
)


def test_configurations_weights_and_default_values_from_compute() -> None:
    # The inference server is not on loan: 2 V100 and 4 K80 are usable.
    ks = mk.job_knapsack([Job("a", 1, 3, 10.0), Job("b", 2, 2, 5.0, gpus_per_worker=2)], CLUSTER)
    p = ks.mmkp
    assert p.resources == ("V100", "K80")
    assert p.capacity.tolist() == [2, 4]
    # a: V100 x1, x2 (3 workers do not fit 2 GPUs), K80 x1..x3; b: 2 workers of 2 GPUs, K80 only.
    assert ks.configs[0] == (
        mk.Config("V100", 1, 1),
        mk.Config("V100", 2, 2),
        mk.Config("K80", 1, 1),
        mk.Config("K80", 2, 2),
        mk.Config("K80", 3, 3),
    )
    assert ks.configs[1] == (mk.Config("K80", 2, 4),)
    assert p.weights.tolist() == [[1, 0], [2, 0], [0, 1], [0, 2], [0, 3], [0, 4]]
    # workers x compute: 1, 2 on V100; 0.25, 0.5, 0.75 on K80; b 2 x 0.25.
    assert p.values.tolist() == [1.0, 2.0, 0.25, 0.5, 0.75, 0.5]


def test_the_matrix_values_each_job_on_each_type() -> None:
    t = ThroughputMatrix({"a": {"V100": 1.0, "K80": 0.2}, "b": {"V100": 1.0, "K80": 0.9}})
    ks = mk.job_knapsack([Job("a", 1, 2, 10.0), Job("b", 1, 2, 10.0)], CLUSTER, t)
    sol = mk.exact(ks.mmkp)
    assert sol.decision is not None
    # By hand: a is 5x faster on V100s, b nearly as fast on K80s: a takes both
    # V100s (2.0), b two K80s (1.8) = 3.8; swapping gives 0.4 + 2.0.
    assert ks.allocation(sol.decision) == {
        "a": mk.Config("V100", 2, 2),
        "b": mk.Config("K80", 2, 2),
    }
    assert sol.objective == pytest.approx(3.8)
    assert brute_force(ks.mmkp)[0] == pytest.approx(3.8)


def test_bound_jobs_capacity_override_custom_value_and_none() -> None:
    jobs = [Job("a", 1, 2, 10.0, gpu_type="K80"), Job("b", 1, 1, 10.0)]
    ks = mk.job_knapsack(
        jobs,
        CLUSTER,
        capacity={"V100": 1},
        value=lambda job, t, k: -1.0 / k,
        none=lambda job: -1.1 if job.id == "a" else 0.0,
    )
    assert ks.mmkp.capacity.tolist() == [1, 0]
    # a may only use K80s, and there are none free: no configuration at all.
    assert ks.configs[0] == ()
    assert ks.configs[1] == (mk.Config("V100", 1, 1),)
    assert ks.mmkp.none is not None
    assert ks.mmkp.none.tolist() == [-1.1, 0.0]
    assert ks.mmkp.values.tolist() == [-1.0]


def test_errors_name_the_field() -> None:
    with pytest.raises(InvalidInstanceError, match=r"capacity\.T4"):
        mk.job_knapsack([Job("a", 1, 1, 1.0)], CLUSTER, capacity={"T4": 1})
    with pytest.raises(InvalidInstanceError, match="no row for job 'b'"):
        mk.job_knapsack(
            [Job("a", 1, 1, 1.0), Job("b", 1, 1, 1.0)],
            CLUSTER,
            ThroughputMatrix({"a": {"V100": 1.0, "K80": 0.5}}),
        )
    with pytest.raises(InvalidInstanceError, match=r"jobs\[0\].value"):
        mk.job_knapsack([Job("a", 1, 1, 1.0)], CLUSTER, value=lambda j, t, k: float("nan"))
    with pytest.raises(InvalidInstanceError, match=r"jobs\[1\].id"):
        mk.job_knapsack([Job("a", 1, 1, 1.0), Job("a", 1, 1, 1.0)], CLUSTER)


def test_a_billion_workers_are_counted_before_anything_is_built() -> None:
    with pytest.raises(InstanceTooLargeError, match="configurations"):
        mk.job_knapsack([Job("a", 1, 10**9, 1.0)], CLUSTER, capacity={"V100": 10**9})
