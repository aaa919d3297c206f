"""Workloads: the simulator's job records, the Chronus-Philly trace and the bundled excerpt.

A :class:`SimJob` is one job as the engine sees it: times in the trace's
unit (minutes for Chronus-Philly), work = the running time at speed 1 (the
trace's ``duration``), deadlines as absolute ``(time, reward)`` steps on the
trace's clock. A :class:`Workload` is the jobs in the engine's order
(submit time, then job id; ids that are all decimal integers compare as
integers, since the trace's ids are ``"0"``..``"30939"``), with a content
hash for the output's provenance.

The bundled excerpt (:func:`bundled`) is the jobs submitted in the first day
(``submit_time < 1440``) of P_MIX2: 5,222 rows copied byte for byte (5,217
jobs with GPUs), MIT license beside it in ``scheduling_opt/sim/data/``.
"""

from __future__ import annotations

import functools
import hashlib
import sys
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

from scheduling_opt.errors import InstanceTooLargeError, InvalidInstanceError
from scheduling_opt.io.traces import ZeroGpu, iter_trace
from scheduling_opt.jsonpath import MAX_NUMBER, read_number, show
from scheduling_opt.sim.limits import MAX_GPUS, MAX_JOBS, MAX_TIME, clock, count

#: Name of the bundled excerpt (``--workload`` value).
BUNDLED = "philly-mix2-day1"
#: Jobs of the bundled excerpt (its rows with GPUs).
BUNDLED_JOBS = 5_217
#: Reward multiplier: the file's 10-8-5-2 becomes 100-80-50-20 (wDMR bounds 1 and 100).
REWARD_SCALE = 10.0


#: A job's kind: strict or soft SLO, or best effort (the trace's ``job_type``).
JOB_TYPES = ("strict", "soft", "best")

_set = object.__setattr__
_TINY = sys.float_info.min


def _text(value: object, name: str, *, optional: bool = True) -> None:
    if value is None and optional:
        return
    if type(value) is not str or not value:
        raise InvalidInstanceError(name, f"must be a non-empty string, got {show(value)}")


def _pairs(value: object, name: str) -> Iterator[tuple[object, object]]:
    """``value``'s items, each a 2-tuple (or list), or an error naming ``name``."""
    if isinstance(value, (str, bytes)) or not isinstance(value, Iterable):
        raise InvalidInstanceError(name, f"must be a tuple of pairs, got {show(value)}")
    for i, item in enumerate(value):
        if (type(item) is not tuple and type(item) is not list) or len(item) != 2:
            raise InvalidInstanceError(f"{name}[{i}]", f"must be a pair, got {show(item)}")
        yield item[0], item[1]


def _deadlines(value: object) -> tuple[tuple[float, float], ...]:
    steps: list[tuple[float, float]] = []
    last = -1.0
    for i, (t, v) in enumerate(_pairs(value, "deadlines")):
        time = clock(t, f"deadlines[{i}].time")
        if time <= last:
            raise InvalidInstanceError(
                f"deadlines[{i}].time", f"must be after the step before, got {time!r}"
            )
        last = time
        steps.append((time, read_number(v, f"deadlines[{i}].reward", 0)))
    return tuple(steps)


def _scaling(value: object) -> tuple[tuple[int, float], ...]:
    points: list[tuple[int, float]] = []
    last = 0
    for i, (g, v) in enumerate(_pairs(value, "scaling")):
        gpus = count(g, f"scaling[{i}].gpus", MAX_GPUS)
        if gpus <= last:
            raise InvalidInstanceError(
                f"scaling[{i}].gpus", f"must be above the point before, got {gpus}"
            )
        last = gpus
        speed = read_number(v, f"scaling[{i}].speed", 0)
        if speed <= 0:
            raise InvalidInstanceError(f"scaling[{i}].speed", f"must be > 0, got {speed!r}")
        points.append((gpus, speed))
    return tuple(points)


def _checked_steps(steps: object) -> bool:
    """Whether ``steps`` is a tuple of (float time, float reward) in checked form."""
    if type(steps) is not tuple:
        return False
    last = -1.0
    for step in steps:
        if type(step) is not tuple or len(step) != 2:
            return False
        t, v = step
        if not (
            type(t) is float
            and last < t <= MAX_TIME
            and (t >= _TINY or t == 0.0)
            and type(v) is float
            and 0.0 <= v <= MAX_NUMBER
            and (v >= _TINY or v == 0.0)
        ):
            return False
        last = t
    return True


def _checked_curve(points: object) -> bool:
    """Whether ``points`` is a tuple of (int GPUs, float speed) in checked form."""
    if type(points) is not tuple:
        return False
    last = 0
    for point in points:
        if type(point) is not tuple or len(point) != 2:
            return False
        g, v = point
        if not (
            type(g) is int
            and last < g <= MAX_GPUS
            and type(v) is float
            and _TINY <= v <= MAX_NUMBER
        ):
            return False
        last = g
    return True


@dataclass(frozen=True, slots=True)
class SimJob:
    """One job of a workload (times in the trace's unit).

    ``deadlines`` are absolute ``(time, reward)`` steps, empty for best effort.
    ``min_gpus``/``max_gpus`` bound an elastic job's size (both ``gpus`` for an
    inelastic one); ``scaling`` gives ``(gpus, relative speed)`` points of an
    elastic job's curve (empty: linear in the GPU count).

    Validated when built, by the instance files' number rules and the
    simulator's limits (:mod:`scheduling_opt.sim.limits`): ``submit`` and
    deadline times in ``[0, MAX_TIME]``, ``work`` in ``(0, MAX_TIME]``, GPU
    counts integers in ``[1, MAX_GPUS]`` with ``min_gpus <= gpus <=
    max_gpus``, ``job_type`` one of :data:`JOB_TYPES`, deadline times and
    curve points strictly increasing, rewards and speeds finite; numpy
    scalars become Python numbers. A violation raises
    :class:`~scheduling_opt.errors.InvalidInstanceError` naming the field.

    Examples
    --------
    >>> SimJob("a", 0.0, 4, float("nan"))
    Traceback (most recent call last):
    ...
    scheduling_opt.errors.InvalidInstanceError: work: must be finite, got nan
    """

    id: str
    submit: float
    gpus: int
    work: float
    model: str | None = None
    tenant: str | None = None
    deadlines: tuple[tuple[float, float], ...] = ()
    job_type: str = "best"
    min_gpus: int = 0
    max_gpus: int = 0
    scaling: tuple[tuple[int, float], ...] = ()

    def __post_init__(self) -> None:
        if self.min_gpus == 0:
            _set(self, "min_gpus", self.gpus)
        if self.max_gpus == 0:
            _set(self, "max_gpus", self.gpus)
        if not self._checked_form():
            self._check()

    def _checked_form(self) -> bool:
        """Whether every field already is what :meth:`_check` would store (one pass, no copies).

        The common case (a trace row, a generated job, an elastic copy of
        either): plain floats and ints within the limits. Anything else
        (ints for times, numpy scalars, lists, a bad value) takes
        :meth:`_check`, which converts or names the field. O(deadlines +
        curve points).
        """
        s, w, g, lo, hi = self.submit, self.work, self.gpus, self.min_gpus, self.max_gpus
        return (
            type(self.id) is str
            and self.id != ""
            and type(s) is float
            and 0.0 <= s <= MAX_TIME
            and (s >= _TINY or s == 0.0)
            and type(w) is float
            and _TINY <= w <= MAX_TIME
            and type(g) is int
            and type(lo) is int
            and type(hi) is int
            and 1 <= lo <= g <= hi <= MAX_GPUS
            and (self.model is None or (type(self.model) is str and self.model != ""))
            and (self.tenant is None or (type(self.tenant) is str and self.tenant != ""))
            and type(self.job_type) is str
            and self.job_type in JOB_TYPES
            and _checked_steps(self.deadlines)
            and _checked_curve(self.scaling)
        )

    def _check(self) -> None:
        """Validate and normalize every field (numpy scalars to Python numbers, lists to tuples)."""
        _text(self.id, "id", optional=False)
        _set(self, "submit", clock(self.submit, "submit"))
        gpus = count(self.gpus, "gpus", MAX_GPUS)
        _set(self, "gpus", gpus)
        _set(self, "work", clock(self.work, "work", positive=True))
        _text(self.model, "model")
        _text(self.tenant, "tenant")
        _set(self, "deadlines", _deadlines(self.deadlines))
        if type(self.job_type) is not str or self.job_type not in JOB_TYPES:
            raise InvalidInstanceError(
                "job_type", f"must be one of {list(JOB_TYPES)}, got {show(self.job_type)}"
            )
        low = count(self.min_gpus, "min_gpus", MAX_GPUS)
        high = count(self.max_gpus, "max_gpus", MAX_GPUS)
        if not low <= gpus <= high:
            raise InvalidInstanceError(
                "min_gpus", f"needs min_gpus <= gpus <= max_gpus, got {low} <= {gpus} <= {high}"
            )
        _set(self, "min_gpus", low)
        _set(self, "max_gpus", high)
        _set(self, "scaling", _scaling(self.scaling))

    @property
    def slo(self) -> bool:
        """Whether the job has a deadline (strict or soft SLO)."""
        return bool(self.deadlines)

    @property
    def first_deadline(self) -> float:
        """The first deadline step's time, ``inf`` for best effort."""
        return self.deadlines[0][0] if self.deadlines else float("inf")


def _order(jobs: Sequence[SimJob]) -> Callable[[SimJob], tuple[float, int, str]]:
    """The engine's order: submit time, then id (as integers when all ids are decimal)."""
    if all(j.id.isascii() and j.id.isdecimal() for j in jobs):
        # (length, digits) without leading zeros orders as the integers do,
        # and an id of 5,000 digits is no error (int() refuses 4,300).
        def numeric(j: SimJob) -> tuple[float, int, str]:
            digits = j.id.lstrip("0") or "0"
            return (j.submit, len(digits), digits)

        return numeric
    return lambda j: (j.submit, 0, j.id)


@dataclass(frozen=True, slots=True)
class Workload:
    """Jobs in engine order, with a name and a content hash.

    Build it with :meth:`of`; the constructor checks what :meth:`of`
    guarantees (a tuple of at most ``MAX_JOBS`` :class:`SimJob`, unique ids,
    engine order) in O(jobs).

    Examples
    --------
    >>> w = Workload.of([SimJob("b", 0.0, 1, 5.0), SimJob("a", 0.0, 1, 3.0)], "demo")
    >>> [j.id for j in w.jobs]
    ['a', 'b']
    """

    jobs: tuple[SimJob, ...]
    name: str
    digest: str

    def __post_init__(self) -> None:
        if not isinstance(self.jobs, tuple):
            raise InvalidInstanceError("jobs", f"must be a tuple of SimJob, got {show(self.jobs)}")
        _text(self.name, "name", optional=False)
        if type(self.digest) is not str:
            raise InvalidInstanceError("digest", f"must be a string, got {show(self.digest)}")
        _check_jobs(self.jobs)
        keys = list(map(_order(self.jobs), self.jobs))
        for i in range(1, len(keys)):
            if keys[i] < keys[i - 1]:
                raise InvalidInstanceError(
                    f"jobs[{i}]", "not in engine order (submit, id): build with Workload.of"
                )

    @classmethod
    def of(cls, jobs: Iterable[SimJob], name: str) -> Workload:
        """Validate ``jobs`` and sort them by (submit, id).

        Parameters
        ----------
        jobs : iterable of SimJob
            At most ``MAX_JOBS``, unique ids.
        name : str
            The workload's name (non-empty).

        Returns
        -------
        Workload

        Raises
        ------
        InvalidInstanceError
            A job that is no :class:`SimJob`, a repeated id, an empty name;
            :class:`~scheduling_opt.errors.InstanceTooLargeError` beyond ``MAX_JOBS``.
        """
        if isinstance(jobs, (str, bytes)) or not isinstance(jobs, Iterable):
            raise InvalidInstanceError("jobs", f"must be an iterable of SimJob, got {show(jobs)}")
        _text(name, "name", optional=False)
        items = list(jobs)
        _check_jobs(items)
        items.sort(key=_order(items))
        h = hashlib.sha256()
        for j in items:
            h.update(repr(j).encode())
        # Checked and sorted here: built without __post_init__'s second pass.
        out = object.__new__(cls)
        _set(out, "jobs", tuple(items))
        _set(out, "name", name)
        _set(out, "digest", h.hexdigest()[:16])
        return out


def _check_jobs(items: Sequence[object]) -> None:
    """At most MAX_JOBS jobs, each a :class:`SimJob`, ids unique. O(jobs)."""
    if len(items) > MAX_JOBS:
        raise InstanceTooLargeError("jobs", f"{len(items):,} jobs; at most {MAX_JOBS:,}")
    seen: set[str] = set()
    for i, j in enumerate(items):
        if not isinstance(j, SimJob):
            raise InvalidInstanceError(f"jobs[{i}]", f"must be a SimJob, got {type(j).__name__}")
        if j.id in seen:
            raise InvalidInstanceError(f"jobs[{i}]", f"duplicate job id {show(j.id)}")
        seen.add(j.id)


#: The trace's column for each :class:`SimJob` field (errors of a row name the column).
_COLUMN = {
    "id": "job_id",
    "submit": "submit_time",
    "gpus": "num_gpu",
    "work": "duration",
    "model": "model_name",
    "tenant": "user",
    "deadlines": "expect_time_list",
}


def _column(path: str) -> str:
    if path.startswith("deadlines") and path.endswith(".reward"):
        return "expect_value_list"
    return _COLUMN.get(path.split("[")[0].split(".")[0], path)


def load_trace(
    path: str | Path, *, zero_gpu: ZeroGpu = "skip", name: str | None = None
) -> Workload:
    """A Chronus-Philly CSV as a :class:`Workload` (errors name ``file:line column``).

    ``zero_gpu`` as in :func:`scheduling_opt.io.traces.to_job`: ``"skip"``
    (default) drops the rows asking for 0 GPUs, ``"one"`` runs them on 1 GPU.
    A zero duration (never in the released files) is an error: a job must
    hold GPUs for some time to be scheduled at all. The file is read by
    :func:`scheduling_opt.io.traces.iter_trace` (encodings, numbers, field
    counts); each row must also make a valid :class:`SimJob` (the clock
    limit, GPU counts) and carry a job id of its own. A trace with no job
    (a header only, or only 0-GPU rows skipped) gives an empty workload.
    """
    jobs: list[SimJob] = []
    first_line: dict[str, int] = {}
    for rec in iter_trace(path):
        where = f"{path}:{rec.line}"
        gpus = rec.num_gpu
        if gpus == 0:
            if zero_gpu == "skip":
                continue
            gpus = 1
        if rec.duration <= 0:
            raise InvalidInstanceError(f"{where} duration", "must be > 0")
        if rec.job_id in first_line:
            raise InvalidInstanceError(
                f"{where} job_id",
                f"duplicate job id {show(rec.job_id)} (first on line {first_line[rec.job_id]})",
            )
        first_line[rec.job_id] = rec.line
        steps = tuple((rec.submit_time + d, v * REWARD_SCALE) for d, v in rec.deadlines)
        try:
            job = SimJob(
                id=rec.job_id,
                submit=rec.submit_time,
                gpus=gpus,
                work=rec.duration,
                model=rec.model_name or None,
                tenant=rec.user or None,
                deadlines=steps,
                job_type=rec.job_type,
            )
        except InvalidInstanceError as e:
            raise InvalidInstanceError(f"{where} {_column(e.path)}", e.reason) from None
        jobs.append(job)
    return Workload.of(jobs, name or Path(path).stem or "trace")


def data_path(name: str) -> Path:
    """Path of a bundled data file (``scheduling_opt/sim/data/<name>``)."""
    return Path(str(resources.files("scheduling_opt.sim").joinpath("data").joinpath(name)))


def bundled() -> Workload:
    """The bundled excerpt: P_MIX2's jobs submitted in its first day (5,217 with GPUs).

    Parsed once per process while the file stays the same (its size and
    modification time): a sweep of many runs in one process reads it once
    (a parse is about 0.3 s). The workload is immutable, so the runs share it.

    Examples
    --------
    >>> w = bundled()
    >>> len(w.jobs) == BUNDLED_JOBS, w.jobs[0].submit >= 0, max(j.submit for j in w.jobs) < 1440
    (True, True, True)
    >>> bundled() is w
    True
    """
    path = data_path("philly_mix2_day1.csv")
    stat = path.stat()
    return _parsed(str(path), stat.st_size, stat.st_mtime_ns)


@functools.lru_cache(maxsize=1)
def _parsed(path: str, size: int, mtime_ns: int) -> Workload:
    """The bundled excerpt at ``path`` (its size and time key the cache)."""
    return load_trace(path, name=BUNDLED)
