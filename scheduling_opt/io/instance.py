"""Instance files: JSON, format ``scheduling-opt/v1``; load, dump, validate.

Shape (the parts shared by every problem)::

    {"format": "scheduling-opt/v1", "problem": "reclaim",
     "cluster": {"gpu_types": [{"name": "V100", "compute": 1.0, "memory_gb": 32}],
                 "servers": [{"id": "t1", "gpu_type": "V100", "gpus": 8,
                              "pool": "training"}]},
     "jobs": [{"id": "a", "gpus_per_worker": 1, "min_workers": 2,
               "max_workers": 6, "duration": 50.0}],
     "placement": [{"job": "a", "server": "t1", "workers": 4}],
     "params": {"servers_to_reclaim": 1}}

``"workers": n`` on a job is shorthand for ``min_workers = max_workers = n``.
Any other top-level key is a problem-specific section (``capacity`` and
``groups`` of a ``mckp`` instance); it is kept in :attr:`Instance.data`, and
the problem's own parser validates it.

Loading never evaluates code, rejects NaN and Infinity, and reports the first
error with its JSON path (``placement[3].server: unknown server 'i9'``). Files
written by :func:`dump` load back equal. Complexity: linear in the file size.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from scheduling_opt.errors import InvalidInstanceError
from scheduling_opt.jsonpath import (
    check_keys,
    join_path,
    located,
    parse_int_literal,
    read_array,
    read_bool,
    read_each,
    read_int,
    read_number,
    read_object,
    read_string,
    reject_constant,
)
from scheduling_opt.model import (
    BatchInfo,
    Cluster,
    GpuType,
    Job,
    Placement,
    PlacementRow,
    RewardStep,
    Server,
)
from scheduling_opt.throughput import ThroughputMatrix

FORMAT = "scheduling-opt/v1"
_RESERVED = ("format", "problem", "cluster", "jobs", "placement", "params")


@dataclass(frozen=True, slots=True)
class Instance:
    """One problem instance: the cluster, jobs, current placement and parameters.

    ``cluster`` is None for problems that need none (``mckp``). ``params`` and
    ``data`` hold plain JSON values and must be treated as read-only.
    Construction checks every cross-reference: a placement row names a known
    job and server, the server admits the job's GPU type, a placed job's
    worker count lies in its range, and no server holds more GPUs than it has.
    """

    problem: str
    cluster: Cluster | None = None
    jobs: tuple[Job, ...] = ()
    placement: Placement = field(default_factory=Placement)
    params: Mapping[str, Any] = field(default_factory=dict)
    data: Mapping[str, Any] = field(default_factory=dict)
    _jobs: Mapping[str, Job] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        if not isinstance(self.problem, str) or not self.problem:
            raise InvalidInstanceError(
                "problem", f"must be a non-empty string, got {self.problem!r}"
            )
        object.__setattr__(self, "jobs", tuple(self.jobs))
        by_id: dict[str, Job] = {}
        for i, job in enumerate(self.jobs):
            if job.id in by_id:
                raise InvalidInstanceError(f"jobs[{i}].id", f"duplicate job id {job.id!r}")
            by_id[job.id] = job
        object.__setattr__(self, "_jobs", by_id)
        if self.cluster is not None:
            for i, job in enumerate(self.jobs):
                if job.gpu_type is not None and not self.cluster.has_gpu_type(job.gpu_type):
                    raise InvalidInstanceError(
                        f"jobs[{i}].gpu_type", f"unknown GPU type {job.gpu_type!r}"
                    )
        self._check_placement()

    def _check_placement(self) -> None:
        rows = self.placement.rows
        if rows and self.cluster is None:
            raise InvalidInstanceError("placement", "a placement needs a cluster")
        used: dict[str, int] = {}
        for i, row in enumerate(rows):
            assert self.cluster is not None
            job = self._jobs.get(row.job)
            if job is None:
                raise InvalidInstanceError(f"placement[{i}].job", f"unknown job {row.job!r}")
            if not self.cluster.has_server(row.server):
                raise InvalidInstanceError(
                    f"placement[{i}].server", f"unknown server {row.server!r}"
                )
            server = self.cluster.server(row.server)
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
                    f"server {server.id!r} is over-full: {used[server.id]} GPUs used "
                    f"of {server.gpus}",
                )
        for job_id in self.placement.jobs():
            job = self._jobs[job_id]
            n = self.placement.workers_of(job_id)
            if not job.min_workers <= n <= job.max_workers:
                first = next(i for i, r in enumerate(rows) if r.job == job_id)
                raise InvalidInstanceError(
                    f"placement[{first}].workers",
                    f"job {job_id!r} has {n} workers placed, outside its range "
                    f"{job.min_workers}..{job.max_workers}",
                )

    def job(self, job_id: str) -> Job:
        """The job with this id; an unknown id raises InvalidInstanceError."""
        try:
            return self._jobs[job_id]
        except KeyError:
            raise InvalidInstanceError("job", f"unknown job {job_id!r}") from None

    @property
    def jobs_by_id(self) -> Mapping[str, Job]:
        return self._jobs

    def require_no_other_sections(self, allowed: tuple[str, ...] = ()) -> None:
        """Refuse top-level sections the problem does not read (a typo such as
        ``"placment"`` must not silently drop the placement)."""
        for key in self.data:
            if key not in allowed:
                known = ", ".join((*_RESERVED, *allowed))
                raise InvalidInstanceError(
                    key if key.isidentifier() else f"[{json.dumps(key)}]",
                    f"unknown section for problem {self.problem!r} (allowed: {known})",
                )

    def require_cluster(self) -> Cluster:
        """The cluster, or a clear error for a problem that needs one."""
        if self.cluster is None:
            raise InvalidInstanceError("cluster", f"problem {self.problem!r} needs a cluster")
        return self.cluster


# --------------------------------------------------------------------------- reading


def _gpu_type(obj: dict[str, Any], p: str) -> GpuType:
    check_keys(obj, p, ("name", "compute", "memory_gb"), ("name",))
    return located(
        p,
        lambda: GpuType(
            read_string(obj["name"], f"{p}.name"),
            read_number(obj.get("compute", 1.0), f"{p}.compute"),
            read_number(obj.get("memory_gb", 32.0), f"{p}.memory_gb"),
        ),
    )


def _server(obj: dict[str, Any], p: str) -> Server:
    check_keys(obj, p, ("id", "gpu_type", "gpus", "pool", "on_loan"), ("id", "gpu_type", "gpus"))
    return located(
        p,
        lambda: Server(
            read_string(obj["id"], f"{p}.id"),
            read_string(obj["gpu_type"], f"{p}.gpu_type"),
            read_int(obj["gpus"], f"{p}.gpus"),
            read_string(obj.get("pool", "training"), f"{p}.pool"),  # type: ignore[arg-type]
            read_bool(obj.get("on_loan", False), f"{p}.on_loan"),
        ),
    )


def parse_cluster(value: object, path: str = "cluster") -> Cluster:
    """A :class:`Cluster` from its JSON object."""
    obj = read_object(value, path)
    check_keys(obj, path, ("gpu_types", "servers"), ("gpu_types", "servers"))
    types = read_each(
        read_array(obj["gpu_types"], f"{path}.gpu_types"), f"{path}.gpu_types", _gpu_type
    )
    servers = read_each(read_array(obj["servers"], f"{path}.servers"), f"{path}.servers", _server)
    return located(path, lambda: Cluster(tuple(types), tuple(servers)))


_JOB_FIELDS = (
    "id",
    "gpus_per_worker",
    "workers",
    "min_workers",
    "max_workers",
    "duration",
    "submit_time",
    "gpu_type",
    "deadlines",
    "class",
    "tenant",
    "batch",
)


def _steps(value: object, path: str) -> tuple[RewardStep, ...]:
    def step(obj: dict[str, Any], p: str) -> RewardStep:
        check_keys(obj, p, ("time", "reward"), ("time", "reward"))
        return located(
            p,
            lambda: RewardStep(
                read_number(obj["time"], f"{p}.time"), read_number(obj["reward"], f"{p}.reward")
            ),
        )

    return tuple(read_each(read_array(value, path), path, step))


def _batch(value: object, path: str) -> BatchInfo:
    obj = read_object(value, path)
    fields = ("epoch_size", "batch_limit", "max_local_batch", "processed_samples")
    check_keys(obj, path, fields, fields[:3])
    return located(
        path,
        lambda: BatchInfo(
            read_int(obj["epoch_size"], f"{path}.epoch_size"),
            read_int(obj["batch_limit"], f"{path}.batch_limit"),
            read_int(obj["max_local_batch"], f"{path}.max_local_batch"),
            read_int(obj.get("processed_samples", 0), f"{path}.processed_samples"),
        ),
    )


def _opt_str(obj: dict[str, Any], key: str, p: str) -> str | None:
    value = obj.get(key)
    return None if value is None else read_string(value, f"{p}.{key}")


def _job(obj: dict[str, Any], p: str) -> Job:
    check_keys(obj, p, _JOB_FIELDS, ("id", "duration"))
    if "workers" in obj:
        for key in ("min_workers", "max_workers"):
            if key in obj:
                raise InvalidInstanceError(
                    f"{p}.{key}", "give either workers or min_workers/max_workers, not both"
                )
        lo = hi = read_int(obj["workers"], f"{p}.workers")
    else:
        for key in ("min_workers", "max_workers"):
            if key not in obj:
                raise InvalidInstanceError(f"{p}.{key}", "missing required field (or give workers)")
        lo = read_int(obj["min_workers"], f"{p}.min_workers")
        hi = read_int(obj["max_workers"], f"{p}.max_workers")
    deadlines = _steps(obj["deadlines"], f"{p}.deadlines") if "deadlines" in obj else ()
    batch = _batch(obj["batch"], f"{p}.batch") if obj.get("batch") is not None else None
    return located(
        p,
        lambda: Job(
            id=read_string(obj["id"], f"{p}.id"),
            min_workers=lo,
            max_workers=hi,
            duration=read_number(obj["duration"], f"{p}.duration"),
            gpus_per_worker=read_int(obj.get("gpus_per_worker", 1), f"{p}.gpus_per_worker"),
            submit_time=read_number(obj.get("submit_time", 0.0), f"{p}.submit_time"),
            gpu_type=_opt_str(obj, "gpu_type", p),
            deadlines=deadlines,
            job_class=_opt_str(obj, "class", p),  # type: ignore[arg-type]
            tenant=_opt_str(obj, "tenant", p),
            batch=batch,
        ),
    )


def parse_jobs(value: object, path: str = "jobs") -> tuple[Job, ...]:
    """Jobs from their JSON array."""
    return tuple(read_each(read_array(value, path), path, _job))


def _row(obj: dict[str, Any], p: str) -> PlacementRow:
    check_keys(obj, p, ("job", "server", "workers"), ("job", "server", "workers"))
    return located(
        p,
        lambda: PlacementRow(
            read_string(obj["job"], f"{p}.job"),
            read_string(obj["server"], f"{p}.server"),
            read_int(obj["workers"], f"{p}.workers"),
        ),
    )


def parse_placement(value: object, path: str = "placement") -> Placement:
    """A :class:`Placement` from its JSON array of rows."""
    rows = read_each(read_array(value, path), path, _row)
    return located(path, lambda: Placement(tuple(rows)))


def parse_throughputs(value: object, path: str = "throughputs") -> ThroughputMatrix:
    """A :class:`~scheduling_opt.throughput.ThroughputMatrix` from ``{job: {GPU type: value}}``.

    A section of the problems that read it (``allocation``), not a common
    one; the caller checks it against its cluster and jobs
    (:meth:`~scheduling_opt.throughput.ThroughputMatrix.check`).

    Examples
    --------
    >>> parse_throughputs({"a": {"V100": 1.0, "T4": 0.4}}).of("a", "T4")
    0.4
    """
    obj = read_object(value, path)
    rows = {job: read_object(row, join_path(path, job)) for job, row in obj.items()}
    return located(path, lambda: ThroughputMatrix(rows))


def throughputs_to_dict(matrix: ThroughputMatrix) -> dict[str, dict[str, float]]:
    """The JSON object of a throughput matrix; :func:`parse_throughputs` reads it back equal."""
    return {job: dict(row) for job, row in matrix.rows.items()}


def _require_referenced(doc: Mapping[str, Any]) -> None:
    """A section that names jobs or servers needs the section defining them.

    Checked before any section is read, so that a deleted ``jobs`` is
    reported as missing, not as the first placement row's unknown job.
    """
    placement = doc.get("placement")
    placed = isinstance(placement, list) and bool(placement)
    params = doc.get("params")
    if "jobs" not in doc:
        if placed:
            raise InvalidInstanceError("jobs", "missing (the placement names jobs)")
        if isinstance(params, dict) and params.get("jobs"):
            raise InvalidInstanceError("jobs", "missing (params.jobs names jobs)")
    if "cluster" not in doc and placed:
        raise InvalidInstanceError("cluster", "missing (the placement names servers)")


def from_dict(raw: object) -> Instance:
    """An :class:`Instance` from the parsed JSON document (validated).

    A missing top-level section is reported as missing before anything that
    depends on it.

    Examples
    --------
    >>> from_dict({"format": FORMAT, "problem": "reclaim",
    ...            "placement": [{"job": "a", "server": "s", "workers": 1}]})
    Traceback (most recent call last):
    ...
    scheduling_opt.errors.InvalidInstanceError: jobs: missing (the placement names jobs)
    """
    doc = read_object(raw, "")
    if "format" not in doc:
        raise InvalidInstanceError("format", f"missing required field (expected {FORMAT!r})")
    if doc["format"] != FORMAT:
        raise InvalidInstanceError("format", f"expected {FORMAT!r}, got {doc['format']!r}")
    if "problem" not in doc:
        raise InvalidInstanceError("problem", "missing required field")
    _require_referenced(doc)
    problem = read_string(doc["problem"], "problem")
    cluster = parse_cluster(doc["cluster"]) if "cluster" in doc else None
    jobs = parse_jobs(doc["jobs"]) if "jobs" in doc else ()
    placement = parse_placement(doc["placement"]) if "placement" in doc else Placement()
    params = read_object(doc.get("params", {}), "params")
    data = {k: v for k, v in doc.items() if k not in _RESERVED}
    return Instance(problem, cluster, jobs, placement, params, data)


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """A JSON object; a key given twice is an error (JSON would keep the last)."""
    out: dict[str, Any] = {}
    for key, value in pairs:
        if key in out:
            raise InvalidInstanceError("", f"duplicate key {json.dumps(key)} in a JSON object")
        out[key] = value
    return out


def loads(text: str) -> Instance:
    """Parse and validate an instance from JSON text."""
    try:
        raw = json.loads(
            text,
            parse_constant=reject_constant,
            parse_int=parse_int_literal,
            object_pairs_hook=_unique_keys,
        )
    except json.JSONDecodeError as e:
        raise InvalidInstanceError(
            "", f"not valid JSON: {e.msg} (line {e.lineno}, column {e.colno})"
        ) from None
    except RecursionError:
        raise InvalidInstanceError("", "not valid JSON: nested too deeply") from None
    return from_dict(raw)


def load(path: str | Path) -> Instance:
    """Read, parse and validate an instance file.

    An error of the file as a whole (not JSON, a duplicate key) names the
    file: ``FILE: not valid JSON: Unterminated string starting at (line 121,
    column 7)``; an error inside it names the JSON path.
    """
    try:
        text = Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as e:
        raise InvalidInstanceError("", f"cannot read {str(path)!r}: {e}") from None
    try:
        return loads(text)
    except InvalidInstanceError as e:
        if e.path:
            raise
        raise InvalidInstanceError(str(path), e.reason) from None


# --------------------------------------------------------------------------- writing


def _num_out(x: float) -> float | int:
    return x if isinstance(x, int) else float(x)


def job_to_dict(job: Job) -> dict[str, Any]:
    """The JSON object of a job (``workers`` shorthand for inelastic jobs)."""
    out: dict[str, Any] = {"id": job.id, "gpus_per_worker": job.gpus_per_worker}
    if job.elastic:
        out["min_workers"] = job.min_workers
        out["max_workers"] = job.max_workers
    else:
        out["workers"] = job.min_workers
    out["duration"] = _num_out(job.duration)
    if job.submit_time:
        out["submit_time"] = _num_out(job.submit_time)
    if job.gpu_type is not None:
        out["gpu_type"] = job.gpu_type
    if job.deadlines:
        out["deadlines"] = [
            {"time": _num_out(s.time), "reward": _num_out(s.reward)} for s in job.deadlines
        ]
    if job.job_class is not None:
        out["class"] = job.job_class
    if job.tenant is not None:
        out["tenant"] = job.tenant
    if job.batch is not None:
        b = job.batch
        out["batch"] = {
            "epoch_size": b.epoch_size,
            "batch_limit": b.batch_limit,
            "max_local_batch": b.max_local_batch,
            "processed_samples": b.processed_samples,
        }
    return out


def cluster_to_dict(cluster: Cluster) -> dict[str, Any]:
    return {
        "gpu_types": [
            {"name": t.name, "compute": _num_out(t.compute), "memory_gb": _num_out(t.memory_gb)}
            for t in cluster.gpu_types
        ],
        "servers": [
            {"id": s.id, "gpu_type": s.gpu_type, "gpus": s.gpus, "pool": s.pool}
            | ({"on_loan": True} if s.on_loan else {})
            for s in cluster.servers
        ],
    }


def placement_to_list(placement: Placement) -> list[dict[str, Any]]:
    return [{"job": r.job, "server": r.server, "workers": r.workers} for r in placement.rows]


def to_dict(instance: Instance) -> dict[str, Any]:
    """The JSON document of an instance; :func:`from_dict` reads it back equal."""
    out: dict[str, Any] = {"format": FORMAT, "problem": instance.problem}
    if instance.cluster is not None:
        out["cluster"] = cluster_to_dict(instance.cluster)
    if instance.jobs:
        out["jobs"] = [job_to_dict(j) for j in instance.jobs]
    if instance.placement.rows:
        out["placement"] = placement_to_list(instance.placement)
    if instance.params:
        out["params"] = dict(instance.params)
    for key, value in instance.data.items():
        out[key] = value
    return out


def dumps(instance: Instance, *, indent: int | None = 2) -> str:
    return json.dumps(to_dict(instance), indent=indent, allow_nan=False) + "\n"


def dump(instance: Instance, path: str | Path) -> None:
    """Write an instance file (UTF-8 JSON)."""
    Path(path).write_text(dumps(instance), encoding="utf-8")
