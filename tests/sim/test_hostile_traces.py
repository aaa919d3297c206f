"""Hostile trace files: encodings, empty files, absurd numbers, odd rows (issue 27, item 1).

Every malformed file is one :class:`InvalidInstanceError` naming
``file:line`` (and the column where there is one); a spreadsheet export
(byte-order mark, CRLF) reads as the same file; numbers follow the instance
files' rules and the simulator's clock limit. The expected values are the
rows the tests write, worked out by hand.
"""

from __future__ import annotations

import pickle
from pathlib import Path

import pytest

from scheduling_opt.errors import InstanceTooLargeError, InvalidInstanceError
from scheduling_opt.io.traces import MAX_LINE_BYTES, iter_trace
from scheduling_opt.sim import ClusterSpec, load_trace, make_policy, simulate, summarize
from scheduling_opt.sim.limits import MAX_TIME

HEADER = (
    "job_id,user,num_gpu,submit_time,iterations,model_name,duration,interval,"
    "expect_time_list,expect_value_list,best_effort,job_type"
)
ROWS = [
    "3,vc_a,1,61,8388,inception_v3,83,18,119,10,0,strict",
    "10,vc_b,2,70,6832,vgg16,146,10,918,10,1,best",
]


def _write(tmp_path: Path, data: bytes, name: str = "trace.csv") -> Path:
    path = tmp_path / name
    path.write_bytes(data)
    return path


def _plain(tmp_path: Path, rows: list[str], name: str = "trace.csv") -> Path:
    return _write(tmp_path, ("\n".join([HEADER, *rows]) + "\n").encode(), name)


def _error(path: Path) -> InvalidInstanceError:
    with pytest.raises(InvalidInstanceError) as err:
        load_trace(path)
    assert "\n" not in str(err.value)
    return err.value


def test_a_spreadsheet_export_with_bom_and_crlf_is_the_same_file(tmp_path: Path) -> None:
    plain = load_trace(_plain(tmp_path, ROWS, "a.csv"), name="w")
    text = "\r\n".join([HEADER, *ROWS]) + "\r\n"
    exported = load_trace(_write(tmp_path, b"\xef\xbb\xbf" + text.encode(), "b.csv"), name="w")
    assert exported == plain
    assert [j.id for j in exported.jobs] == ["3", "10"]
    assert exported.jobs[0].work == 83.0  # not "83\r"
    assert exported.jobs[1].job_type == "best"  # the last column has no "\r" left


def test_a_byte_that_is_not_utf8_names_the_file_and_line(tmp_path: Path) -> None:
    data = ("\n".join([HEADER, *ROWS]) + "\n").encode()
    data += b"11,vc_\xff,1,918,6832,vgg16,146,10,918,10,1,best\n"
    err = _error(_write(tmp_path, data))
    assert err.path.endswith("trace.csv:4")  # header, two rows, then the bad one
    assert "not UTF-8" in err.reason
    assert "0xff" in err.reason


def test_utf16_text_is_named(tmp_path: Path) -> None:
    data = ("\n".join([HEADER, *ROWS]) + "\n").encode("utf-16")
    err = _error(_write(tmp_path, data))
    assert err.path.endswith("trace.csv:1")
    assert "UTF-16" in err.reason


def test_an_empty_file_and_a_header_only_file(tmp_path: Path) -> None:
    err = _error(_write(tmp_path, b""))
    assert "empty file" in err.reason
    # A header and no rows is a valid, empty workload for the library (the
    # CLI refuses it: tests/sim/test_hostile_options.py); simulating it is clean.
    w = load_trace(_plain(tmp_path, []))
    assert w.jobs == ()
    c = ClusterSpec.uniform(1, 8)
    metrics = summarize(simulate(w, c, make_policy("fifo", w, c)))
    assert metrics["jobs"] == 0.0
    assert metrics["jct_mean"] == 0.0


@pytest.mark.parametrize(
    ("field", "value", "column", "words"),
    [
        (6, "1e308", "duration", "at most 1e15"),
        (6, "2e9", "duration", f"at most {MAX_TIME:g}"),
        (6, "nan", "duration", "finite"),
        (6, "inf", "duration", "finite"),
        (6, "1e-320", "duration", "2.2e-308"),
        (3, "1e308", "submit_time", "at most 1e15"),
        (3, "1500000000", "submit_time", f"at most {MAX_TIME:g}"),
        (3, "-5", "submit_time", ">= 0"),
        (2, "1.5", "num_gpu", "integer"),
        (2, "2000000", "num_gpu", "at most 1,000,000"),
        (4, "9" * 5000, "iterations", "finite"),
        (8, "1e10", "expect_time_list", f"at most {MAX_TIME:g}"),
        (9, "1e308", "expect_value_list", "at most 1e15"),
        (0, "", "job_id", "empty"),
    ],
)
def test_absurd_numbers_are_refused_naming_the_row_column_and_limit(
    tmp_path: Path, field: int, value: str, column: str, words: str
) -> None:
    row = ROWS[0].split(",")
    row[field] = value
    err = _error(_plain(tmp_path, [ROWS[1], ",".join(row)]))
    assert err.path.endswith(f"trace.csv:3 {column}"), err
    assert words in err.reason, err


def test_a_duration_at_the_clock_limit_is_simulated_exactly(tmp_path: Path) -> None:
    # Submit 61, duration 1e9 minutes, alone on one server: it starts at 61
    # and ends at 61 + 1e9 (exactly representable), JCT 1e9.
    row = ROWS[0].split(",")
    row[6] = "1e9"
    w = load_trace(_plain(tmp_path, [",".join(row)]))
    c = ClusterSpec.uniform(1, 8)
    out = simulate(w, c, make_policy("fifo", w, c))
    assert out.end == (61.0 + 1e9,)
    assert summarize(out)["jct_mean"] == 1e9


@pytest.mark.parametrize(
    ("lines", "where", "words"),
    [
        ([ROWS[0], "4,vc,1,5,1,m"], "trace.csv:3", "too few fields: 6, the header has 12"),
        ([ROWS[0] + ",extra"], "trace.csv:2", "too many fields: 13"),
        ([ROWS[0], "", "", ROWS[0]], "trace.csv:5 job_id", "first on line 2"),
        ([ROWS[0], '"12\n",vc,1,5,1,m,3,1,1,1,1,nope'], "trace.csv:3 job_type", "nope"),
    ],
)
def test_odd_rows_name_their_own_line(
    tmp_path: Path, lines: list[str], where: str, words: str
) -> None:
    err = _error(_plain(tmp_path, lines))
    assert err.path.endswith(where), err
    assert words in err.reason, err


def test_blank_lines_are_skipped_and_later_lines_keep_their_numbers(tmp_path: Path) -> None:
    path = _plain(tmp_path, ["", ROWS[0], "", ROWS[1]])
    assert [r.line for r in iter_trace(path)] == [3, 5]
    assert len(load_trace(path).jobs) == 2


def test_header_problems(tmp_path: Path) -> None:
    twice = _error(_write(tmp_path, (HEADER + ",user\n").encode()))
    assert twice.path.endswith("trace.csv:1")
    assert "'user' appears twice" in twice.reason
    spaced = ", ".join(HEADER.split(","))  # spaces after the commas
    w = load_trace(_write(tmp_path, (spaced + "\n" + ROWS[0] + "\n").encode(), "s.csv"))
    assert [j.id for j in w.jobs] == ["3"]


def test_a_line_longer_than_the_limit_is_refused_before_it_is_held(tmp_path: Path) -> None:
    data = (HEADER + "\n").encode() + b"x" * (MAX_LINE_BYTES + 10) + b"\n"
    err = _error(_write(tmp_path, data))
    assert err.path.endswith("trace.csv:2")
    assert "longer than" in err.reason


def test_ids_of_5000_digits_and_unicode_digits_sort_without_crashing(tmp_path: Path) -> None:
    # int() refuses 4,300+ digits, and "²".isdigit() is True but int("²") fails:
    # both used to crash the sort. Long decimal ids still sort as integers.
    long = "9" * 5000
    w = load_trace(
        _plain(tmp_path, [f"{long},vc,1,0,1,m,3,1,1,1,1,best", "8,vc,1,0,1,m,3,1,1,1,1,best"])
    )
    assert [j.id for j in w.jobs] == ["8", long]
    w = load_trace(_plain(tmp_path, ["²,vc,1,0,1,m,3,1,1,1,1,best", "8,vc,1,0,1,m,3,1,1,1,1,best"]))
    assert [j.id for j in w.jobs] == ["8", "²"]  # compared as text: "8" < "²"


def test_zero_gpu_rows_keep_the_line_numbers_of_later_rows(tmp_path: Path) -> None:
    skipped = "5,vc,0,1,1,m,3,1,1,1,1,best"
    bad = "6,vc,1,1,1,m,-3,1,1,1,1,best"
    err = _error(_plain(tmp_path, [skipped, skipped.replace("5,", "7,", 1), bad]))
    assert err.path.endswith("trace.csv:4 duration")


def test_more_rows_than_the_limit_are_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import scheduling_opt.io.traces as traces

    monkeypatch.setattr(traces, "MAX_ROWS", 2)
    with pytest.raises(InvalidInstanceError, match="more than 2 rows"):
        load_trace(_plain(tmp_path, [ROWS[0], ROWS[1], ROWS[0].replace("3,", "4,", 1)]))


def test_errors_survive_a_process_pool() -> None:
    # A sweep's worker raises these in another process: they must unpickle as themselves.
    for error in (InvalidInstanceError("a.csv:3 duration", "x"), InstanceTooLargeError("s", "y")):
        back = pickle.loads(pickle.dumps(error))
        assert type(back) is type(error)
        assert (back.path, back.reason, str(back)) == (error.path, error.reason, str(error))


def test_cr_line_ends_are_named_in_plain_words(tmp_path: Path) -> None:
    err = _error(_write(tmp_path, ("\r".join([HEADER, *ROWS]) + "\r").encode()))
    assert err.path.endswith("trace.csv:1")
    assert "carriage return" in err.reason
    assert "universal-newline" not in err.reason  # Python's words, not the user's
