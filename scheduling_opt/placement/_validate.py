"""The instance reader's rules for a placement input built in code.

:class:`~scheduling_opt.placement.model.PlacementInput` runs these on its
arguments, so an input built from model objects holds nothing an instance
file would be refused for; errors name the field (``jobs[1].id``,
``placement[0].workers``, ``workers.a``, ``models.a``). O(J + rows).
"""

from __future__ import annotations

from collections.abc import Mapping

from scheduling_opt.errors import InvalidInstanceError
from scheduling_opt.jsonpath import read_int, read_string
from scheduling_opt.model import Cluster, Job, Placement
from scheduling_opt.scaling import SpeedModel


def check_placement_rows(cluster: Cluster, jobs: Mapping[str, Job], placement: Placement) -> None:
    """The instance file's rules for the current placement (paths ``placement[i]``)."""
    used: dict[str, int] = {}
    for i, row in enumerate(placement.rows):
        job = jobs.get(row.job)
        if job is None:
            raise InvalidInstanceError(f"placement[{i}].job", f"unknown job {row.job!r}")
        if not cluster.has_server(row.server):
            raise InvalidInstanceError(f"placement[{i}].server", f"unknown server {row.server!r}")
        server = cluster.server(row.server)
        if not job.fits(server):
            raise InvalidInstanceError(
                f"placement[{i}].server",
                f"job {job.id!r} needs GPU type {job.gpu_type!r}, server "
                f"{server.id!r} has {server.gpu_type!r}",
            )
        if not server.usable_for_training:
            raise InvalidInstanceError(
                f"placement[{i}].server",
                f"server {server.id!r} is an inference server not on loan to training",
            )
        used[server.id] = used.get(server.id, 0) + row.workers * job.gpus_per_worker
        if used[server.id] > server.gpus:
            raise InvalidInstanceError(
                f"placement[{i}].workers",
                f"server {server.id!r} is over-full: {used[server.id]} GPUs used of {server.gpus}",
            )
    for job_id in placement.jobs():
        job = jobs[job_id]
        n = placement.workers_of(job_id)
        if not job.min_workers <= n <= job.max_workers:
            first = next(i for i, r in enumerate(placement.rows) if r.job == job_id)
            raise InvalidInstanceError(
                f"placement[{first}].workers",
                f"job {job_id!r} has {n} workers placed, outside its range "
                f"{job.min_workers}..{job.max_workers}",
            )


def check_workers(
    raw: Mapping[str, int], jobs: Mapping[str, Job], placed: set[str]
) -> dict[str, int]:
    if not isinstance(raw, Mapping):
        raise InvalidInstanceError("workers", f"must map job ids to counts, got {raw!r}")
    out: dict[str, int] = {}
    for job_id, value in raw.items():
        path = f"workers.{job_id}"
        job = jobs.get(job_id)
        if job is None:
            raise InvalidInstanceError(path, f"unknown job {job_id!r}")
        if job_id in placed:
            raise InvalidInstanceError(path, f"job {job_id!r} is already placed")
        n = read_int(value, path, job.min_workers)
        if n > job.max_workers:
            raise InvalidInstanceError(path, f"must be <= max_workers ({job.max_workers}), got {n}")
        out[job_id] = n
    return out


def check_models(
    raw: Mapping[str, str], jobs: Mapping[str, Job], speed: SpeedModel
) -> dict[str, str]:
    if not isinstance(raw, Mapping):
        raise InvalidInstanceError("models", f"must map job ids to model names, got {raw!r}")
    out: dict[str, str] = {}
    for job_id, name in raw.items():
        path = f"models.{job_id}"
        if job_id not in jobs:
            raise InvalidInstanceError(path, f"unknown job {job_id!r}")
        model = read_string(name, path)
        if not speed.knows(model):
            raise InvalidInstanceError(path, f"model {model!r} is not in params.sensitivity")
        out[job_id] = model
    return out
