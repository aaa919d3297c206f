"""Model constructors validate every field and name it in the error."""

from __future__ import annotations

import math
from typing import Any

import pytest

from scheduling_opt.errors import InvalidInstanceError
from scheduling_opt.model import (
    BatchInfo,
    Cluster,
    GpuType,
    Job,
    Placement,
    PlacementRow,
    RewardStep,
    Server,
    used_gpus,
)


def job(**kw: Any) -> Job:
    base: dict[str, Any] = {"id": "j", "min_workers": 1, "max_workers": 2, "duration": 10.0}
    base.update(kw)
    return Job(**base)


@pytest.mark.parametrize(
    ("kw", "field"),
    [
        ({"id": ""}, "id"),
        ({"min_workers": 0}, "min_workers"),
        ({"min_workers": 3, "max_workers": 2}, "max_workers"),
        ({"min_workers": True}, "min_workers"),
        ({"duration": 0.0}, "duration"),
        ({"duration": math.nan}, "duration"),
        ({"duration": math.inf}, "duration"),
        ({"gpus_per_worker": 0}, "gpus_per_worker"),
        ({"submit_time": -1.0}, "submit_time"),
        ({"gpu_type": ""}, "gpu_type"),
        ({"deadlines": (RewardStep(5, 1), RewardStep(5, 1))}, "deadlines[1].time"),
        ({"job_class": "vip"}, "class"),
        ({"tenant": ""}, "tenant"),
    ],
)
def test_job_errors_name_the_field(kw: dict[str, Any], field: str) -> None:
    with pytest.raises(InvalidInstanceError) as info:
        job(**kw)
    assert info.value.path == field


def test_job_derived_values() -> None:
    j = job(min_workers=2, max_workers=6, duration=50.0, gpus_per_worker=2)
    assert j.elastic
    assert j.min_gpus == 4
    assert j.max_gpus == 12
    # Aryl Table 3: job A (2..6 workers, 50 s at 6) runs 150 s at 2 workers.
    assert j.running_time(2) == pytest.approx(150.0)
    with pytest.raises(InvalidInstanceError, match="workers"):
        j.running_time(7)


@pytest.mark.parametrize(
    ("make", "field"),
    [
        (lambda: GpuType("V100", compute=0), "compute"),
        (lambda: GpuType("V100", memory_gb=math.nan), "memory_gb"),
        (lambda: Server("s", "V100", 0), "gpus"),
        (lambda: Server("s", "V100", 8, "training", on_loan=True), "on_loan"),
        (lambda: Server("s", "V100", 8, "spot"), "pool"),  # type: ignore[arg-type]
        (lambda: RewardStep(-1, 1), "time"),
        (lambda: BatchInfo(0, 1, 1), "epoch_size"),
        (lambda: PlacementRow("a", "s", 0), "workers"),
    ],
)
def test_small_values_validate(make: Any, field: str) -> None:
    with pytest.raises(InvalidInstanceError) as info:
        make()
    assert info.value.path == field


def test_cluster_lookups_and_errors() -> None:
    v100 = GpuType("V100", 1.0, 32)
    t4 = GpuType("T4", 0.25, 16)
    cluster = Cluster(
        (v100, t4),
        (
            Server("t1", "V100", 8),
            Server("i1", "T4", 4, "inference", True),
            Server("i2", "T4", 4, "inference"),
        ),
    )
    assert cluster.total_gpus == 16
    assert [s.id for s in cluster.on_loan_servers()] == ["i1"]
    assert not cluster.server("i2").usable_for_training
    with pytest.raises(InvalidInstanceError, match="unknown server 'x'"):
        cluster.server("x")
    with pytest.raises(InvalidInstanceError) as info:
        Cluster((v100,), (Server("t1", "T4", 8),))
    assert info.value.path == "servers[0].gpu_type"
    with pytest.raises(InvalidInstanceError) as info:
        Cluster((v100, v100), ())
    assert info.value.path == "gpu_types[1].name"


def test_gpu_type_constraint() -> None:
    bound = job(gpu_type="V100")
    assert bound.fits(Server("t1", "V100", 8))
    assert not bound.fits(Server("i1", "T4", 8, "inference", True))
    assert job().fits(Server("i1", "T4", 8, "inference", True))


def test_placement_views() -> None:
    p = Placement.from_mapping({"a": {"s1": 2, "s2": 1, "s3": 0}, "b": {"s1": 1}})
    assert p.workers_of("a") == 3
    assert p.workers_of("zz") == 0
    assert dict(p.servers_of("a")) == {"s1": 2, "s2": 1}
    assert p.jobs() == ("a", "b")
    jobs = {"a": job(id="a", gpus_per_worker=2, max_workers=4), "b": job(id="b")}
    assert used_gpus(p, jobs) == {"s1": 5, "s2": 2}
    with pytest.raises(InvalidInstanceError, match="duplicate row"):
        Placement((PlacementRow("a", "s", 1), PlacementRow("a", "s", 2)))


def test_values_are_immutable() -> None:
    j = job()
    with pytest.raises(AttributeError):
        j.min_workers = 5  # type: ignore[misc]


def test_model_refuses_what_an_instance_file_would() -> None:
    # Same bounds as the file readers: no value built in code overflows a solver.
    with pytest.raises(InvalidInstanceError, match="duration: must be at most 1e15"):
        Job("a", 1, 1, 1e300)
    with pytest.raises(InvalidInstanceError, match="gpus: must be at most 2\\*\\*53"):
        Server("s", "V100", 2**60)
