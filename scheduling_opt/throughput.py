"""Throughput per job per GPU type (Gavel §3, Sia §3): the shared model's optional matrix.

A heterogeneous cluster's scalar :attr:`~scheduling_opt.model.GpuType.compute`
says how fast any job runs on a type; a :class:`ThroughputMatrix` says it per
job, as Gavel and Sia measure it. Allocation's free capacity and the
multiple-choice knapsack (:mod:`scheduling_opt.mmkp`) read it through
:func:`job_speed`, which falls back to ``compute`` when no matrix is given.
Checks are O(jobs x types).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from scheduling_opt.errors import InvalidInstanceError
from scheduling_opt.jsonpath import join_path, read_number, show
from scheduling_opt.model import Cluster

__all__ = ["ThroughputMatrix", "job_speed"]


def _check_name(value: object, name: str) -> None:
    if not isinstance(value, str) or not value:
        raise InvalidInstanceError(name, f"must be a non-empty string, got {value!r}")


@dataclass(frozen=True, slots=True)
class ThroughputMatrix:
    """Relative throughput of each job on each GPU type (Gavel §3, Sia §3), ``T[job][type]``.

    Optional: where none is given, a job runs on a GPU type at that type's
    scalar :attr:`GpuType.compute` (:func:`job_speed`). A job's row lists
    the same GPU types as every other row; a value is a finite real >= 0
    (0: the job cannot run on that type, e.g. its model does not fit the
    GPU's memory), in any unit shared by the matrix (Gavel normalizes each
    job to its fastest type; iterations per second work as well).

    Parameters
    ----------
    rows : mapping of str to (mapping of str to float)
        ``{job id: {GPU type: throughput}}``.

    Raises
    ------
    InvalidInstanceError
        Naming ``throughputs`` (not a mapping, no row), ``throughputs.<job>``
        (not a mapping, a GPU type missing from or added to the first row's
        set) or ``throughputs.<job>.<type>`` (not a number, NaN, infinite,
        negative).

    Examples
    --------
    >>> t = ThroughputMatrix({"a": {"V100": 1.0, "K80": 0.3}, "b": {"V100": 1.0, "K80": 0.5}})
    >>> t.of("b", "K80"), t.gpu_types
    (0.5, ('V100', 'K80'))

    References
    ----------
    Narayanan et al., "Heterogeneity-aware cluster scheduling policies for
    deep learning workloads" (Gavel, OSDI '20) §3; Jayaram Subramanya et al.,
    "Sia" (SOSP '23) §3.
    """

    rows: Mapping[str, Mapping[str, float]]
    gpu_types: tuple[str, ...] = field(init=False)

    def __post_init__(self) -> None:
        if not isinstance(self.rows, Mapping) or not self.rows:
            raise InvalidInstanceError(
                "throughputs",
                f"must be a non-empty mapping job -> GPU type -> throughput, got {show(self.rows)}",
            )
        rows: dict[str, dict[str, float]] = {}
        types: tuple[str, ...] = ()
        for job, row in self.rows.items():
            _check_name(job, "throughputs")
            path = join_path("throughputs", job)
            if not isinstance(row, Mapping) or not row:
                raise InvalidInstanceError(
                    path, f"must be a non-empty mapping GPU type -> throughput, got {show(row)}"
                )
            if not rows:
                types = tuple(row)
            elif set(row) != set(types):
                missing = sorted(set(types) - set(row), key=str)
                extra = sorted(set(row) - set(types), key=str)
                what = (
                    f"lacks GPU type {missing[0]!r}" if missing else f"adds GPU type {extra[0]!r}"
                )
                raise InvalidInstanceError(
                    path, f"{what}: every row lists the first row's types {list(types)}"
                )
            kept: dict[str, float] = {}
            for gpu_type in types:
                _check_name(gpu_type, path)
                value = read_number(row[gpu_type], join_path(path, gpu_type), 0.0)
                kept[gpu_type] = float(value)
            rows[job] = kept
        object.__setattr__(self, "rows", rows)
        object.__setattr__(self, "gpu_types", types)

    def of(self, job_id: str, gpu_type: str) -> float:
        """The throughput of ``job_id`` on ``gpu_type``; unknown names raise InvalidInstanceError."""
        row = self.rows.get(job_id)
        if row is None:
            raise InvalidInstanceError("throughputs", f"no row for job {job_id!r}")
        if gpu_type not in row:
            raise InvalidInstanceError(
                join_path("throughputs", job_id), f"no column for GPU type {gpu_type!r}"
            )
        return row[gpu_type]

    def check(self, cluster: Cluster, job_ids: Iterable[str]) -> None:
        """Check that the rows are exactly the jobs and the columns exactly the cluster's types.

        Raises
        ------
        InvalidInstanceError
            ``throughputs.<job>``: a job that is not one of ``job_ids``, or a
            GPU type the cluster does not have (``throughputs.<job>.<type>``);
            ``throughputs``: a job or a GPU type of the cluster with no entry.

        Examples
        --------
        >>> from scheduling_opt.model import GpuType, Server
        >>> c = Cluster((GpuType("V100"),), (Server("s", "V100", 4),))
        >>> ThroughputMatrix({"a": {"V100": 1.0}}).check(c, ["a", "b"])
        Traceback (most recent call last):
        ...
        scheduling_opt.errors.InvalidInstanceError: throughputs: no row for job 'b' (every job needs one)
        """
        ids = list(job_ids)
        known = set(ids)
        for job in self.rows:
            if job not in known:
                raise InvalidInstanceError(join_path("throughputs", job), f"unknown job {job!r}")
        first = next(iter(self.rows))
        for gpu_type in self.gpu_types:
            if not cluster.has_gpu_type(gpu_type):
                raise InvalidInstanceError(
                    join_path(join_path("throughputs", first), gpu_type),
                    f"unknown GPU type {gpu_type!r} (cluster: {[t.name for t in cluster.gpu_types]})",
                )
        for job in ids:
            if job not in self.rows:
                raise InvalidInstanceError(
                    "throughputs", f"no row for job {job!r} (every job needs one)"
                )
        for t in cluster.gpu_types:
            if t.name not in self.rows[first]:
                raise InvalidInstanceError(
                    "throughputs",
                    f"no column for the cluster's GPU type {t.name!r} (every type needs one)",
                )


def job_speed(
    cluster: Cluster, job_id: str, gpu_type: str, throughputs: ThroughputMatrix | None = None
) -> float:
    """How fast ``job_id`` runs on one GPU of ``gpu_type``: the matrix's entry, else ``compute``.

    Examples
    --------
    >>> from scheduling_opt.model import GpuType
    >>> c = Cluster((GpuType("V100"), GpuType("T4", 0.25)), ())
    >>> job_speed(c, "a", "T4"), job_speed(c, "a", "T4", ThroughputMatrix({"a": {"V100": 1.0, "T4": 0.6}}))
    (0.25, 0.6)
    """
    if throughputs is None:
        return cluster.gpu_type(gpu_type).compute
    return throughputs.of(job_id, gpu_type)
