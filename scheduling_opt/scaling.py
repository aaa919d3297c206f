"""Placement sensitivity: how fast a job runs when its GPUs span k servers.

A :class:`SpeedModel` gives the speed of a job of ``gpus`` GPUs spread over
``nodes`` servers, relative to the same job on one server (1.0). Two models:

- :class:`Log2Model`: Chronus §3.2.2, the iteration time on ``n`` nodes is
  ``t_n = t_1 + log2(n) (t_2 - t_1)``, so the relative speed is
  ``t_1 / t_n``; ``t_1``/``t_2`` per model name (profiled on one and two
  nodes), with a default for jobs naming no model.
- :class:`TableModel`: a measured table ``{model: {N: {k: speed}}}`` in the
  shape of the Chronus artifact's ``model_info.json`` (speed of an N-GPU job
  over k nodes, 1.0 consolidated). Gaps are filled as the Chronus artifact
  does (``convert_to_bin``): an N missing from the table uses the smallest
  tabulated N above it (3 -> 4, 5 -> 6 or 8), else the largest; a k missing
  uses the smallest tabulated k above it (3 nodes -> the 4-node speed), else
  the largest. A job naming no model is placement-insensitive (speed 1.0),
  as 1-GPU and >8-GPU jobs are in the artifact.

The models are data the user passes in (``params.sensitivity`` of a
``placement`` instance); nothing here reads files. Evaluation is O(1) (log2)
or O(table row) (table).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

from scheduling_opt.errors import InvalidInstanceError
from scheduling_opt.jsonpath import check_keys, read_number, read_object, read_string


class SpeedModel(Protocol):
    """Relative speed of a ``gpus``-GPU job of ``model`` over ``nodes`` servers."""

    def speed(self, model: str | None, gpus: int, nodes: int) -> float: ...

    def knows(self, model: str) -> bool:
        """Whether ``model`` names an entry of this model (else an input error)."""
        ...


@dataclass(frozen=True, slots=True)
class Log2Times:
    """Profiled iteration times on one node (``t1``) and on two nodes (``t2``)."""

    t1: float
    t2: float

    def __post_init__(self) -> None:
        if not (math.isfinite(self.t1) and self.t1 > 0):
            raise InvalidInstanceError("t1", f"must be > 0, got {self.t1!r}")
        if not (math.isfinite(self.t2) and self.t2 > 0):
            raise InvalidInstanceError("t2", f"must be > 0, got {self.t2!r}")

    def time(self, nodes: int) -> float:
        """Chronus §3.2.2: ``t_n = t_1 + log2(n) (t_2 - t_1)``."""
        return self.t1 + math.log2(nodes) * (self.t2 - self.t1)


#: Default when an instance gives no model: communication = half the compute.
DEFAULT_LOG2 = Log2Times(1.0, 1.5)


@dataclass(frozen=True, slots=True)
class Log2Model:
    """Chronus' log2 communication model, per model name, with a default."""

    default: Log2Times = DEFAULT_LOG2
    models: Mapping[str, Log2Times] = field(default_factory=dict)

    def speed(self, model: str | None, gpus: int, nodes: int) -> float:
        times = self.models.get(model, self.default) if model is not None else self.default
        t = times.time(nodes)
        # t2 < t1 with many nodes would give t_n <= 0: a model extrapolated
        # beyond sense; cap the speed-up rather than divide by zero.
        return times.t1 / t if t > 0 else 1e6

    def knows(self, model: str) -> bool:
        return model in self.models


def _lookup(row: Mapping[int, float], key: int) -> float:
    """The entry at ``key``, else at the smallest key above it, else the largest."""
    above = [k for k in row if k >= key]
    return row[min(above)] if above else row[max(row)]


@dataclass(frozen=True, slots=True)
class TableModel:
    """Measured speeds ``{model: {N GPUs: {k nodes: speed}}}`` (model_info.json)."""

    table: Mapping[str, Mapping[int, Mapping[int, float]]]

    def speed(self, model: str | None, gpus: int, nodes: int) -> float:
        if model is None or nodes <= 1:
            return 1.0
        by_gpus = self.table[model]
        row = by_gpus[min((n for n in by_gpus if n >= gpus), default=max(by_gpus))]
        return _lookup(row, nodes)

    def knows(self, model: str) -> bool:
        return model in self.table


# --------------------------------------------------------------------------- parsing


def _times(value: object, path: str) -> Log2Times:
    obj = read_object(value, path)
    check_keys(obj, path, ("t1", "t2"), ("t1", "t2"))
    t1 = read_number(obj["t1"], f"{path}.t1")
    t2 = read_number(obj["t2"], f"{path}.t2")
    if t1 <= 0:
        raise InvalidInstanceError(f"{path}.t1", f"must be > 0, got {t1!r}")
    if t2 <= 0:
        raise InvalidInstanceError(f"{path}.t2", f"must be > 0, got {t2!r}")
    return Log2Times(t1, t2)


def _parse_log2(obj: dict[str, Any], path: str) -> Log2Model:
    check_keys(obj, path, ("kind", "t1", "t2", "models", "source"), ("kind",))
    default = DEFAULT_LOG2
    if "t1" in obj or "t2" in obj:
        default = _times({k: obj[k] for k in ("t1", "t2") if k in obj}, path)
    models_obj = read_object(obj.get("models", {}), f"{path}.models")
    models = {name: _times(v, f"{path}.models.{name}") for name, v in models_obj.items()}
    return Log2Model(default, models)


def _int_key(key: str, path: str, minimum: int) -> int:
    try:
        value = int(key)
    except ValueError:
        raise InvalidInstanceError(path, f"key {key!r} must be an integer") from None
    if value < minimum or str(value) != key.strip():
        raise InvalidInstanceError(path, f"key {key!r} must be an integer >= {minimum}")
    return value


def _parse_row(value: object, path: str) -> dict[int, float]:
    obj = read_object(value, path)
    if not obj:
        raise InvalidInstanceError(path, "must name at least one node count")
    row: dict[int, float] = {}
    for key, speed in obj.items():
        k = _int_key(key, f"{path}.{key}", 1)
        s = read_number(speed, f"{path}.{key}")
        if s <= 0:
            raise InvalidInstanceError(f"{path}.{key}", f"speed must be > 0, got {s!r}")
        row[k] = s
    return row


def _parse_table(obj: dict[str, Any], path: str) -> TableModel:
    check_keys(obj, path, ("kind", "models", "source"), ("kind", "models"))
    models_obj = read_object(obj["models"], f"{path}.models")
    table: dict[str, dict[int, dict[int, float]]] = {}
    for name, by_gpus in models_obj.items():
        p = f"{path}.models.{name}"
        rows = read_object(by_gpus, p)
        if not rows:
            raise InvalidInstanceError(p, "must give at least one GPU count")
        table[name] = {
            _int_key(n, f"{p}.{n}", 1): _parse_row(r, f"{p}.{n}") for n, r in rows.items()
        }
    return TableModel(table)


def parse_speed_model(value: object, path: str = "params.sensitivity") -> SpeedModel:
    """A speed model from its JSON object (``kind`` ``log2`` or ``table``)."""
    obj = read_object(value, path)
    if "kind" not in obj:
        raise InvalidInstanceError(f"{path}.kind", "missing required field (log2 or table)")
    kind = read_string(obj["kind"], f"{path}.kind")
    if "source" in obj:
        read_string(obj["source"], f"{path}.source")
    if kind == "log2":
        return _parse_log2(obj, path)
    if kind == "table":
        return _parse_table(obj, path)
    raise InvalidInstanceError(f"{path}.kind", f"must be 'log2' or 'table', got {kind!r}")
