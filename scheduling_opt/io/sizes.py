"""The numbers in a generator's ``size``: digits only, each within a stated range.

``scheduling-opt generate PROBLEM --size SIZE`` hands SIZE to the problem's
generator (``Problem.generate``); each generator reads the numbers in it with
:func:`size_number` and states its grammar and ranges in
``Problem.size_grammar`` (shown by ``scheduling-opt list`` and in the error).
The upper ends keep a generated instance to at most about 50 MB of JSON and
a few seconds on a 2-core machine (docs/instance-format.md), so a mistyped
or enormous size fails in one line naming the limit instead of filling the
memory. O(len(text)).
"""

from __future__ import annotations

import re

from scheduling_opt.errors import InvalidInstanceError
from scheduling_opt.jsonpath import show

__all__ = ["check_count", "size_number"]

#: Longest run of digits read: any accepted number is far shorter, and
#: ``int()`` of a 10,000-digit string is slow and refused by Python.
_MAX_DIGITS = 18


def check_count(value: int, what: str, low: int, high: int) -> int:
    """``value`` if ``low <= value <= high``; else an error at ``size`` naming the range.

    Parameters
    ----------
    value : int
        A count of the instance to generate (servers, jobs, groups...).
    what : str
        Its name in the error (``"on-loan servers"``).
    low, high : int
        The accepted range, both ends included.

    Returns
    -------
    int
        ``value``.

    Raises
    ------
    InvalidInstanceError
        At path ``size``, naming ``what`` and the range.

    Examples
    --------
    >>> check_count(2000, "on-loan servers", 1, 50_000)
    2000
    >>> check_count(60_000, "on-loan servers", 1, 50_000)
    Traceback (most recent call last):
    ...
    scheduling_opt.errors.InvalidInstanceError: size: 60000 on-loan servers is too many: \
at most 50,000 (the generator's limit)
    """
    if isinstance(value, bool) or not isinstance(value, int):
        raise InvalidInstanceError("size", f"{what} must be an integer, got {value!r}")
    if value > high:
        raise InvalidInstanceError(
            "size", f"{value} {what} is too many: at most {high:,} (the generator's limit)"
        )
    if value < low:
        raise InvalidInstanceError("size", f"{what} must be >= {low}, got {value}")
    return value


def size_number(text: str, what: str, low: int, high: int) -> int:
    """The number ``text`` (ASCII digits only) within ``low..high``.

    Parameters
    ----------
    text : str
        The digits of one number of a size (``"2000"`` of ``"2000"``,
        ``"60"`` of ``"c60-j100"``).
    what : str
        Its name in the error.
    low, high : int
        The accepted range, both ends included.

    Returns
    -------
    int

    Raises
    ------
    InvalidInstanceError
        At path ``size``: not a run of ASCII digits, or out of range (the
        message names the limit).

    Examples
    --------
    >>> size_number("443", "servers", 1, 20_000)
    443
    >>> size_number("4e3", "servers", 1, 20_000)
    Traceback (most recent call last):
    ...
    scheduling_opt.errors.InvalidInstanceError: size: servers must be a whole number, got '4e3'
    """
    if not re.fullmatch(r"[0-9]+", text):
        raise InvalidInstanceError("size", f"{what} must be a whole number, got {show(text)}")
    if len(text.lstrip("0")) > _MAX_DIGITS:
        raise InvalidInstanceError(
            "size", f"{what} must be at most {high:,}, got a number of {len(text)} digits"
        )
    return check_count(int(text), what, low, high)
