"""Argument checks at the policies' public boundary, with the file reader's rules.

A scheduler passes whatever its state holds: numpy integers and floats are
accepted wherever plain ones are (converted once, here), a fraction where a
count is expected is refused (``1.5`` workers is no count), and every refusal
is an :class:`~scheduling_opt.errors.InvalidInstanceError` naming the argument.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TypeVar

import numpy as np

from scheduling_opt.errors import InvalidInstanceError
from scheduling_opt.jsonpath import read_int, read_number

T = TypeVar("T")


def as_int(value: object, name: str, minimum: int | None = None) -> int:
    """A plain ``int`` from an int or a numpy integer (not a bool, not a float)."""
    if isinstance(value, np.integer):
        value = int(value)
    return read_int(value, name, minimum)


def as_number(value: object, name: str, minimum: float | None = None) -> float:
    """A finite plain ``float`` from an int, a float or a numpy scalar of either."""
    if isinstance(value, (np.integer, np.floating)):
        value = value.item()
    return float(read_number(value, name, minimum))


def as_fraction(value: object, name: str, *, open_low: bool = False) -> float:
    """A number in [0, 1] (in (0, 1] with ``open_low``)."""
    x = as_number(value, name)
    if not (0 < x <= 1 if open_low else 0 <= x <= 1):
        low = "(0" if open_low else "[0"
        raise InvalidInstanceError(name, f"must be in {low}, 1], got {value!r}")
    return x


def unique_ids(ids: Iterable[str], name: str) -> None:
    """Refuse a repeated id (a later entry would silently replace the earlier one)."""
    seen: set[str] = set()
    for i, x in enumerate(ids):
        if x in seen:
            raise InvalidInstanceError(f"{name}[{i}]", f"duplicate id {x!r}")
        seen.add(x)


def expect(value: T, cls: type, name: str) -> T:
    """``value`` unchanged if it is a ``cls``, else an error naming the argument and the type.

    A step function handed the wrong object would fail deep inside with an
    ``AttributeError`` (``'str' object has no attribute 'params'``); this
    says what was expected. One ``isinstance``: O(1).

    Examples
    --------
    >>> expect("x", int, "state")
    Traceback (most recent call last):
    ...
    scheduling_opt.errors.InvalidInstanceError: state: must be an int, got str
    """
    if not isinstance(value, cls):
        article = "an" if cls.__name__[:1].lower() in "aeiou" else "a"
        raise InvalidInstanceError(
            name, f"must be {article} {cls.__name__}, got {type(value).__name__}"
        )
    return value
