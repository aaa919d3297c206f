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

Reading discipline (the instance files' rules, docs/simulation.md): UTF-8
with or without a byte-order mark, LF or CRLF; every number finite, >= 0,
at most 1e15 and not subnormal (:func:`scheduling_opt.jsonpath.read_number`);
counts integral; at most :data:`MAX_ROWS` rows of :data:`MAX_LINE_BYTES`.
The simulator adds its clock limit (:mod:`scheduling_opt.sim.limits`).

Complexity: linear in the file size. Errors name ``file:line column``.
"""

from __future__ import annotations

import codecs
import csv
import itertools
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import BinaryIO, Literal

from scheduling_opt.errors import InvalidInstanceError
from scheduling_opt.jsonpath import read_number, show
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
#: Most data rows of one trace file (the full Chronus-Philly traces have ~30,900).
MAX_ROWS = 1_000_000
#: Longest line of a trace file (a Chronus-Philly row has about 100 bytes).
MAX_LINE_BYTES = 65_536


@dataclass(frozen=True, slots=True)
class TraceJob:
    """One trace row, units as in the file (minutes).

    ``deadlines`` are ``(minutes after submission, reward)`` steps, empty for
    a best-effort job. ``line`` is the row's line in its file (0 when the
    record was built in code; not compared).
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
    line: int = field(default=0, compare=False)

    @property
    def slo(self) -> bool:
        return self.job_type != "best"


def _number(text: str, where: str, column: str, *, integer: bool = False) -> float:
    """A field's number by the instance files' rules (finite, >= 0, at most 1e15, no subnormal)."""
    path = f"{where} {column}"
    try:
        value = float(text)
    except ValueError:
        raise InvalidInstanceError(path, f"not a number: {show(text)}") from None
    number = read_number(value, path, 0)
    if integer and not value.is_integer():
        raise InvalidInstanceError(path, f"must be an integer, got {show(text)}")
    return number


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


def _row(row: dict[str, str], where: str, line: int) -> TraceJob:
    job_type = row["job_type"].strip()
    if job_type not in _TYPES:
        raise InvalidInstanceError(
            f"{where} job_type", f"must be one of {list(_TYPES)}, got {show(job_type)}"
        )
    job_id = row["job_id"].strip()
    if not job_id:
        raise InvalidInstanceError(f"{where} job_id", "must not be empty")
    steps = () if job_type == "best" else _steps(row, where)
    return TraceJob(
        job_id=job_id,
        user=row["user"].strip(),
        num_gpu=int(_number(row["num_gpu"], where, "num_gpu", integer=True)),
        submit_time=_number(row["submit_time"], where, "submit_time"),
        iterations=int(_number(row["iterations"], where, "iterations", integer=True)),
        model_name=row["model_name"].strip(),
        duration=_number(row["duration"], where, "duration"),
        interval=int(_number(row["interval"], where, "interval", integer=True)),
        deadlines=steps,
        job_type=job_type,
        line=line,
    )


def _lines(handle: BinaryIO, name: str) -> Iterator[str]:
    """The file's lines as text: UTF-8, a leading byte-order mark dropped, line ends kept.

    Each line is decoded on its own, so a byte that is not UTF-8 is reported
    on its own line (a text-mode reader decodes 8 KB blocks and cannot say
    where); a line longer than MAX_LINE_BYTES is refused before it is held.
    """
    number = 0
    while True:
        raw = handle.readline(MAX_LINE_BYTES + 1)
        if not raw:
            return
        number += 1
        if len(raw) > MAX_LINE_BYTES:
            raise InvalidInstanceError(
                f"{name}:{number}", f"line longer than {MAX_LINE_BYTES:,} bytes"
            )
        if number == 1:
            if raw.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
                raise InvalidInstanceError(
                    f"{name}:1", "UTF-16 text; save the trace as UTF-8 (CSV UTF-8)"
                )
            if raw.startswith(codecs.BOM_UTF8):
                raw = raw[len(codecs.BOM_UTF8) :]
        try:
            yield raw.decode("utf-8")
        except UnicodeDecodeError as e:
            raise InvalidInstanceError(
                f"{name}:{number}",
                f"not UTF-8 text: byte 0x{raw[e.start]:02x} at byte {e.start + 1} of the line",
            ) from None


def _header(fields: list[str], name: str) -> dict[str, int]:
    columns: dict[str, int] = {}
    for i, text in enumerate(fields):
        key = text.strip()
        if key in columns:
            raise InvalidInstanceError(f"{name}:1", f"column {show(key)} appears twice")
        columns[key] = i
    missing = [c for c in COLUMNS if c not in columns]
    if missing:
        raise InvalidInstanceError(f"{name}:1", f"missing columns {missing}")
    return columns


def iter_trace(path: str | Path) -> Iterator[TraceJob]:
    """Rows of a trace file, validated one by one, in file order.

    UTF-8 with or without a byte-order mark, LF or CRLF line ends (a
    spreadsheet's "CSV UTF-8" export reads as the same file); blank lines
    are skipped; header names may carry spaces around them and columns
    beyond :data:`COLUMNS` are ignored. Anything else (a byte that is not
    UTF-8, a field count that differs from the header's, a malformed
    number, more than :data:`MAX_ROWS` rows) raises
    :class:`~scheduling_opt.errors.InvalidInstanceError` naming
    ``file:line`` and the column.
    """
    name = str(path)
    try:
        handle = open(path, "rb")  # noqa: SIM115
    except OSError as e:
        raise InvalidInstanceError(name, f"cannot read: {e.strerror or e}") from None
    with handle:
        reader = csv.reader(_lines(handle, name))
        try:
            first = next(reader, None)
            if first is None:
                raise InvalidInstanceError(f"{name}:1", "empty file (no header line)")
            columns = _header(first, name)
            width = len(first)
            rows = 0
            while True:
                line = reader.line_num + 1
                fields = next(reader, None)
                if fields is None:
                    return
                if not fields:
                    continue  # a blank line
                where = f"{name}:{line}"
                if len(fields) != width:
                    few = "few" if len(fields) < width else "many"
                    raise InvalidInstanceError(
                        where, f"too {few} fields: {len(fields)}, the header has {width}"
                    )
                rows += 1
                if rows > MAX_ROWS:
                    raise InvalidInstanceError(where, f"more than {MAX_ROWS:,} rows")
                yield _row({c: fields[i] for c, i in columns.items()}, where, line)
        except csv.Error as e:
            reason = f"malformed CSV: {e}"
            if "new-line character" in str(e):
                reason = (
                    "a carriage return (CR) inside an unquoted field: CR line ends, or a stray "
                    "CR; save the trace with LF or CRLF line ends"
                )
            raise InvalidInstanceError(f"{name}:{reader.line_num}", reason) from None
        except OSError as e:
            raise InvalidInstanceError(name, f"cannot read: {e.strerror or e}") from None


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
