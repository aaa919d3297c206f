"""Reading JSON values with errors that name their path inside the document.

Shared by the instance loader and every problem's parser, so that a malformed
file always fails with one line such as ``jobs[2].min_workers: must be an
integer, got 1.5``, never with a traceback from inside a solver.
"""

from __future__ import annotations

import json
import math
import sys
from collections.abc import Callable, Mapping, Sequence
from typing import Any, TypeVar

import numpy as np

from scheduling_opt.errors import InvalidInstanceError

T = TypeVar("T")

MAX_INT = 2**53
"""Largest integer magnitude an instance may hold: JSON's exactly representable range.

Solvers keep counts in int64 arrays and multiply them; a bound far below
int64's keeps those products exact and turns 1e30 into an input error."""
MAX_NUMBER = 1e15
"""Largest magnitude of a real number in an instance (seconds, rewards, rates...).

Anything larger is no scheduling quantity, and products of such values would
overflow to inf deep inside a solver instead of failing here."""
_TINY = sys.float_info.min
MAX_INT_DIGITS = 30
"""Longest integer literal the file reader parses (any valid value has at most 16 digits).

Python refuses to parse integer strings of more than 4,300 digits with a
ValueError deep inside ``json``; a literal this long is refused up front."""


def show(value: object, limit: int = 60) -> str:
    """``repr(value)`` cut to ``limit`` characters, so an error line stays short."""
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def parse_int_literal(text: str) -> int:
    """``int(text)`` for the JSON reader, refusing absurdly long literals in one line."""
    if len(text.lstrip("-")) > MAX_INT_DIGITS:
        raise InvalidInstanceError(
            "", f"an integer literal of {len(text)} digits is not allowed (at most 2**53)"
        )
    return int(text)


def reject_constant(name: str) -> float:
    raise InvalidInstanceError("", f"{name} is not allowed in an instance file")


def type_name(value: object) -> str:
    return {dict: "object", list: "array", str: "string", bool: "boolean"}.get(
        type(value), "null" if value is None else "number"
    )


def read_object(value: object, path: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise InvalidInstanceError(path, f"must be an object, got {type_name(value)}")
    return value


def read_array(value: object, path: str) -> list[Any]:
    if not isinstance(value, list):
        raise InvalidInstanceError(path, f"must be an array, got {type_name(value)}")
    return value


def check_keys(
    obj: Mapping[str, Any], path: str, allowed: Sequence[str], required: Sequence[str]
) -> None:
    for key in obj:
        if key not in allowed:
            raise InvalidInstanceError(
                join_path(path, key), f"unknown field (allowed: {', '.join(allowed)})"
            )
    for key in required:
        if key not in obj:
            raise InvalidInstanceError(join_path(path, key), "missing required field")


def join_path(path: str, key: str) -> str:
    """``path.key``; a key that is not a plain name is quoted (``path["a b"]``).

    Quoting keeps every error message on one line whatever the document's keys
    hold (a key may contain a newline).
    """
    if not key.isidentifier():
        return f"{path}[{json.dumps(key)}]"
    return f"{path}.{key}" if path else key


def plain(value: object) -> object:
    """A numpy scalar as the Python number it holds; anything else unchanged.

    A scheduler passes whatever its state holds: ``numpy.int64(3)`` is
    accepted wherever ``3`` is (and ``numpy.float64(2.5)`` wherever ``2.5``
    is), one conversion at the boundary so that no numpy scalar reaches the
    solvers' integer arithmetic (int64 wraps around silently).
    """
    if isinstance(value, (np.integer, np.floating)):
        return value.item()
    if isinstance(value, np.bool_):
        return bool(value)
    return value


def read_int(value: object, path: str, minimum: int | None = None) -> int:
    """An integer (not a boolean; a numpy integer becomes an int), at least ``minimum`` when given."""
    value = plain(value)
    if isinstance(value, bool) or not isinstance(value, int):
        raise InvalidInstanceError(path, f"must be an integer, got {show(value)}")
    if abs(value) > MAX_INT:
        raise InvalidInstanceError(path, f"must be at most 2**53 in magnitude, got {value}")
    if minimum is not None and value < minimum:
        raise InvalidInstanceError(path, f"must be >= {minimum}, got {value}")
    return value


def read_number(value: object, path: str, minimum: float | None = None) -> float:
    """A finite number (not a boolean; numpy scalars become Python ones), at least ``minimum``."""
    if (
        type(value) is float
        and (_TINY <= abs(value) <= MAX_NUMBER or value == 0.0)
        and (minimum is None or value >= minimum)
    ):
        return value  # the common case (readers parse floats), checked without conversions
    value = plain(value)
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise InvalidInstanceError(path, f"must be a number, got {show(value)}")
    if isinstance(value, int) and abs(value) > MAX_NUMBER:
        # A huge JSON integer (10**400) would overflow math.isfinite.
        raise InvalidInstanceError(path, "must be at most 1e15 in magnitude")
    if not math.isfinite(value):
        raise InvalidInstanceError(path, f"must be finite, got {value!r}")
    if abs(value) > MAX_NUMBER:
        raise InvalidInstanceError(path, f"must be at most 1e15 in magnitude, got {value!r}")
    if value != 0 and abs(value) < sys.float_info.min:
        # A subnormal passes every "> 0" check, then divisions by it overflow
        # to inf (or loops run 1e300 times) deep inside a solver.
        raise InvalidInstanceError(
            path, f"must be 0 or at least 2.2e-308 in magnitude, got {value!r}"
        )
    if minimum is not None and value < minimum:
        raise InvalidInstanceError(path, f"must be >= {minimum}, got {value!r}")
    return value


def read_string(value: object, path: str) -> str:
    if not isinstance(value, str):
        raise InvalidInstanceError(path, f"must be a string, got {show(value)}")
    return value


def read_bool(value: object, path: str) -> bool:
    if not isinstance(value, bool):
        raise InvalidInstanceError(path, f"must be true or false, got {show(value)}")
    return value


def located(path: str, make: Callable[[], T]) -> T:
    """Run a model constructor, locating its error under ``path``."""
    try:
        return make()
    except InvalidInstanceError as e:
        if e.path == path or e.path.startswith((f"{path}.", f"{path}[")):
            raise  # a reader inside ``make`` already named the full path
        raise e.at(path) from None


def read_each(items: list[Any], path: str, parse: Callable[[dict[str, Any], str], T]) -> list[T]:
    out = []
    for i, item in enumerate(items):
        p = f"{path}[{i}]"
        out.append(parse(read_object(item, p), p))
    return out
