"""Loader of the Chronus/Philly job traces (CSV) into the library's model.

Format (Chronus artifact, ``trace_job_Philly_{SLO,MIX1,MIX2}.csv``): columns
``job_id,user,num_gpu,submit_time,iterations,model_name,duration,interval,
expect_time_list,expect_value_list,best_effort,job_type``; times in minutes;
``expect_time_list`` / ``expect_value_list`` are ``-``-joined deadline steps.
The deadlines count from the job's submission (``159-189-229-289`` for a job
of 96 minutes: 1.66 x its duration), and a best-effort row repeats its
submit time there as a placeholder, so best-effort deadlines are ignored.

Choices for the real data's quirks:

- ``num_gpu`` 0 (about 190 rows per file, CPU-only jobs in the Philly log):
  ``zero_gpu="skip"`` (default) leaves them out, since a GPU scheduler never
  holds GPUs for them; ``zero_gpu="one"`` runs them as 1-GPU jobs.
- 12- and 20-GPU jobs (consolidation-hostile, Chronus §3.4.1) are kept as
  they are; the lease problem's ``round_up`` option charges them 16 and 24.
- A job of G GPUs becomes G workers of 1 GPU (data parallel, inelastic).
- Rewards are multiplied by ``reward_scale`` (default 10: the file's
  10-8-5-2 becomes the paper's 100-80-50-20 of §4.1, so wDMR's bounds 1 and
  100 apply).

Complexity: linear in the file size. Errors name ``file:line column``.
"""

from __future__ import annotations

import csv
import itertools
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from scheduling_opt.errors import InvalidInstanceError
from scheduling_opt.model import Job, RewardStep

JobType = Literal["strict", "soft", "best"]
ZeroGpu = Literal["skip", "one"]
COLUMNS = (
    "job_id",
    "user",
    "num_gpu",
    "submit_time",
    "iterations",
    "model_name",
    "duration",
    "interval",
    "expect_time_list",
    "expect_value_list",
    "best_effort",
    "job_type",
)
_TYPES: tuple[JobType, ...] = ("strict", "soft", "best")


@dataclass(frozen=True, slots=True)
class TraceJob:
    """One trace row, units as in the file (minutes).

    ``deadlines`` are ``(minutes after submission, reward)`` steps, empty for
    a best-effort job.
    """

    job_id: str
    user: str
    num_gpu: int
    submit_time: float
    iterations: int
    model_name: str
    duration: float
    interval: int
    deadlines: tuple[tuple[float, float], ...]
    job_type: JobType

    @property
    def slo(self) -> bool:
        return self.job_type != "best"


def _number(text: str, where: str, column: str, *, integer: bool = False) -> float:
    try:
        value = float(text)
    except ValueError:
        raise InvalidInstanceError(f"{where} {column}", f"not a number: {text!r}") from None
    if not value >= 0 or value == float("inf"):
        raise InvalidInstanceError(f"{where} {column}", f"must be finite and >= 0, got {text!r}")
    if integer and value != int(value):
        raise InvalidInstanceError(f"{where} {column}", f"must be an integer, got {text!r}")
    return value


def _steps(row: dict[str, str], where: str) -> tuple[tuple[float, float], ...]:
    times = row["expect_time_list"].split("-")
    values = row["expect_value_list"].split("-")
    if len(times) != len(values):
        raise InvalidInstanceError(
            f"{where} expect_value_list",
            f"{len(values)} values for {len(times)} deadlines",
        )
    steps = tuple(
        (_number(t, where, "expect_time_list"), _number(v, where, "expect_value_list"))
        for t, v in zip(times, values, strict=True)
    )
    for (a, _), (b, _) in itertools.pairwise(steps):
        if b <= a:
            raise InvalidInstanceError(
                f"{where} expect_time_list", "deadlines must be strictly increasing"
            )
    return steps


def _row(row: dict[str, str], where: str) -> TraceJob:
    job_type = row["job_type"].strip()
    if job_type not in _TYPES:
        raise InvalidInstanceError(
            f"{where} job_type", f"must be one of {list(_TYPES)}, got {job_type!r}"
        )
    steps = () if job_type == "best" else _steps(row, where)
    return TraceJob(
        job_id=row["job_id"].strip(),
        user=row["user"].strip(),
        num_gpu=int(_number(row["num_gpu"], where, "num_gpu", integer=True)),
        submit_time=_number(row["submit_time"], where, "submit_time"),
        iterations=int(_number(row["iterations"], where, "iterations", integer=True)),
        model_name=row["model_name"].strip(),
        duration=_number(row["duration"], where, "duration"),
        interval=int(_number(row["interval"], where, "interval", integer=True)),
        deadlines=steps,
        job_type=job_type,
    )


def iter_trace(path: str | Path) -> Iterator[TraceJob]:
    """Rows of a trace file, validated one by one, in file order."""
    name = str(path)
    try:
        handle = open(path, encoding="utf-8", newline="")  # noqa: SIM115
    except OSError as e:
        raise InvalidInstanceError(name, f"cannot read: {e}") from None
    with handle:
        reader = csv.DictReader(handle)
        missing = [c for c in COLUMNS if c not in (reader.fieldnames or ())]
        if missing:
            raise InvalidInstanceError(f"{name}:1", f"missing columns {missing}")
        for row in reader:
            where = f"{name}:{reader.line_num}"
            if any(row[c] is None for c in COLUMNS):
                raise InvalidInstanceError(where, "too few fields")
            yield _row(row, where)


def read_trace(path: str | Path, *, limit: int | None = None) -> tuple[TraceJob, ...]:
    """The first ``limit`` rows (all when None) of a trace file."""
    out: list[TraceJob] = []
    for job in iter_trace(path):
        if limit is not None and len(out) >= limit:
            break
        out.append(job)
    return tuple(out)


def to_job(
    record: TraceJob,
    now: float | None = None,
    *,
    zero_gpu: ZeroGpu = "skip",
    reward_scale: float = 10.0,
    remaining: float | None = None,
) -> Job | None:
    """The model's :class:`Job` of a trace row, times in seconds; None if skipped.

    ``now`` (minutes, default: the submission) is the instant the deadlines
    count from: a step at ``submit + D`` becomes ``(submit + D - now) * 60``
    seconds; steps already past are dropped. ``remaining`` (minutes, default
    the whole duration) is the running time left.
    """
    gpus = record.num_gpu
    if gpus == 0:
        if zero_gpu == "skip":
            return None
        gpus = 1
    at = record.submit_time if now is None else now
    steps = tuple(
        RewardStep((record.submit_time + d - at) * 60.0, v * reward_scale)
        for d, v in record.deadlines
        if record.submit_time + d - at >= 0
    )
    left = record.duration if remaining is None else remaining
    return Job(
        id=record.job_id,
        min_workers=gpus,
        max_workers=gpus,
        duration=max(left, 1e-9) * 60.0,
        gpus_per_worker=1,
        submit_time=record.submit_time * 60.0,
        deadlines=steps,
        tenant=record.user or None,
    )


def to_jobs(
    records: Sequence[TraceJob],
    now: float | None = None,
    *,
    zero_gpu: ZeroGpu = "skip",
    reward_scale: float = 10.0,
) -> tuple[Job, ...]:
    """:func:`to_job` of each row, skipped rows left out."""
    jobs = (to_job(r, now, zero_gpu=zero_gpu, reward_scale=reward_scale) for r in records)
    return tuple(j for j in jobs if j is not None)
