"""Numbers no solver should see: subnormals, huge literals, and error lines that stay short.

Issue 17 items 9, 14 and 17: a subnormal duration passed every "> 0" check
and hung ``solve --verify``; an integer literal of more than 4,300 digits
raised Python's int-string ValueError from inside ``json``; error lines echoed
the offending value whole (up to 100 KB).
"""

from __future__ import annotations

import json

import pytest

from scheduling_opt.errors import InvalidInstanceError
from scheduling_opt.io.instance import loads
from scheduling_opt.jsonpath import read_int, read_number, read_string


def test_subnormal_number_is_refused_naming_its_path() -> None:
    with pytest.raises(InvalidInstanceError, match=r"^jobs\[0\]\.duration: .*1e-320"):
        read_number(1e-320, "jobs[0].duration", minimum=0)


def test_smallest_normal_and_zero_are_accepted() -> None:
    assert read_number(2.2250738585072014e-308, "x") == 2.2250738585072014e-308
    assert read_number(0.0, "x") == 0.0


def test_integer_literal_of_5000_digits_is_one_clear_error() -> None:
    text = '{"format": "scheduling-opt/v1", "problem": "mckp", "capacity": ' + "7" * 5000 + "}"
    with pytest.raises(InvalidInstanceError, match="integer literal of 5000 digits"):
        loads(text)


def test_thirty_digit_literal_still_reaches_the_magnitude_check() -> None:
    # 10**29 parses (30 digits), then the reader's own bound refuses it by name.
    with pytest.raises(InvalidInstanceError, match=r"^capacity: must be at most 2\*\*53"):
        read_int(json.loads("1" + "0" * 29), "capacity")


def test_error_line_does_not_echo_a_100kb_value() -> None:
    with pytest.raises(InvalidInstanceError) as info:
        read_string(["x" * 100_000], "jobs[0].id")
    message = str(info.value)
    assert message.startswith("jobs[0].id: must be a string, got ['xxx")
    assert len(message) <= 400
    assert "\n" not in message


def test_error_line_cuts_a_100kb_path_but_keeps_it_in_the_attribute() -> None:
    path = "params." + "k" * 100_000
    error = InvalidInstanceError(path, "unknown field")
    assert len(str(error)) <= 400
    assert str(error).endswith("...: unknown field")
    assert error.path == path
