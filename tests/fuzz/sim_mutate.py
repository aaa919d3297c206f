"""Hostile traces and options for ``scheduling-opt simulate``, judged like the instance files (issue 27).

The seed is the bundled excerpt (``scheduling_opt/sim/data/philly_mix2_day1.csv``)
cut to a window of 1-12 consecutive rows, so a run takes a second, not a
minute. A *mutant* is that window after one to three mutations:

- a field of a row (or of the header) replaced by a hostile number
  (``1e308``, ``nan``, ``1e-320``, 5,000 digits, ``2e9`` past the clock...),
  an odd string (empty, a newline, a NUL, 100,000 characters, ``²``) or an
  odd deadline list (``3-2-1``, ``1--2``, 5,000 steps);
- rows deleted, duplicated (same id or fresh ids, up to 100 times),
  given a field more or less; the header dropped, repeated, renamed,
  reordered; every row removed;
- the bytes: a UTF-8 byte-order mark, CRLF or CR line ends, UTF-16, a byte
  that is not UTF-8, a NUL, an unbalanced quote, blank lines, no final
  newline, a 70 KB line;

and zero to three options with hostile values (``--servers 1000000000``,
``--round 1e-9``, ``--seeds -1``, ``--timeline-step nan``, an ``--out``
under a file, a policy given twice...). Each mutant is one ``simulate``
process (:func:`tests.fuzz.preloaded.run_cli_preloaded`: forked from a
server that imported the CLI once) under the instance-file fuzz's caps and
verdicts (:func:`tests.fuzz.mutate.complaints`:
exit 0 or 2 only, one stderr line on exit 2, no traceback, no memory or
time cap hit), plus two of the simulator's own: nothing on stderr on exit 0
(the empty trace's matplotlib warnings) and no ``nan``/``inf`` cell in the
printed table.

Options within the limits that ask for a legitimately long run (10^6
synthetic jobs, 1,000 seeds of six policies) are not drawn: the fuzz
checks refusals and answers, not patience.
"""

from __future__ import annotations

import contextlib
import csv
import io
import os
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from scheduling_opt.sim.registry import default_policies, policy_names, policy_spec
from tests.fuzz.mutate import ROOT, Draw, Run, complaints
from tests.fuzz.preloaded import run_cli_preloaded

SEED_TRACE = ROOT / "scheduling_opt" / "sim" / "data" / "philly_mix2_day1.csv"
#: Rows of the seed window (1..MAX_WINDOW consecutive rows of the excerpt).
MAX_WINDOW = 12
#: Policies a mutant may name: simulate's default baselines, each other
#: family's first policy (from the registry: a new family is fuzzed at once)
#: and a bad name.
POLICIES = (
    *default_policies(),
    *dict.fromkeys(
        policy_names(policy_spec(n).family)[0]
        for n in policy_names()
        if policy_spec(n).family != "baselines"
    ),
    "nope",
)

NUMBERS = (
    "0",
    "-0",
    "-1",
    "0.5",
    "1.5",
    "2",
    "16",
    "1000",
    "1e6",
    "1e9",
    "999999999.5",
    "1000000001",
    "2e9",
    "1e15",
    "1e16",
    "1e308",
    "-1e308",
    "1e400",
    "1e-9",
    "1e-300",
    "1e-320",
    "5e-324",
    "nan",
    "inf",
    "-inf",
    "Infinity",
    "1" + "0" * 40,
    "9" * 5000,
    "0x10",
    "1_000",
    " 7 ",
    "",
    "1e",
)
STRINGS = (
    "",
    " ",
    "x" * 100_000,
    "line\nbreak",
    "nul\x00byte",
    "\u00e9\u4e2d\U0001f600",
    '"',
    "a,b",
    "best",
    "strict",
    "soft",
    "gold",
    "\u00b2",
    "\u0663",
)
STEP_LISTS = (
    "1-2-3",
    "3-2-1",
    "5-5",
    "-",
    "1--2",
    "1-",
    "1e308-1e309",
    "nan",
    "0",
    "10" + "-10" * 5000,
)
#: Values a column accepts that are absurd for it (half the field mutations:
#: they reach the engine instead of stopping at the reader).
VALID: dict[str, tuple[str, ...]] = {
    "job_id": ("0", "007", "9" * 40, "x", "\u00b2", "a b", "3"),
    "user": ("", "vc", "\u00e9\u4e2d", "x" * 1000),
    "num_gpu": ("0", "1", "3", "8", "9", "16", "64", "960", "961", "1000000"),
    "submit_time": ("0", "1e-300", "0.001", "1439.999", "999999999", "1e9", "123456789.123456789"),
    "iterations": ("0", "1", "9007199254740992"),
    "model_name": ("", "vgg16", "resnet50", "nope"),
    "duration": ("1e-300", "1e-9", "0.001", "1", "1e6", "999999999.5", "1e9"),
    "interval": ("0", "1", "1000000"),
    "expect_time_list": ("0", "1e-9", "1e6", "999999000", "1-2-3-4-5-6-7-8-9-10"),
    "expect_value_list": ("0", "1e15", "1e-300", "10-8-5-2"),
    "best_effort": ("0", "1", "7"),
    "job_type": ("strict", "soft", "best", " best "),
}
NUMERIC = {"num_gpu", "submit_time", "iterations", "duration", "interval", "best_effort"}
LISTS = {"expect_time_list", "expect_value_list"}

COUNTS = ("0", "-1", "1", "2", "3", "8", "1000", "1000000000", "9" * 30, "1.5", "x", "1e3")
REALS = (
    "0",
    "-1",
    "nan",
    "inf",
    "-inf",
    "1e-320",
    "1e-9",
    "1e308",
    "0.5",
    "1",
    "60",
    "x",
    "1e9",
    "0.01",
    "999999999",
)
OPTIONS: dict[str, tuple[str, ...]] = {
    "--servers": (*COUNTS, "100000"),
    "--gpus-per-server": (*COUNTS, "1024", "1025"),
    # Not 1,000 seeds: 6,000 runs within the limits take about 30 s of CPU,
    # a legitimate sweep, not a hang.
    "--seeds": (*(c for c in COUNTS if c != "1000"), "10001", "1000000"),
    "--workers": COUNTS,
    "--round": REALS,
    "--restart-cost": REALS,
    "--preemption-cost": REALS,
    "--skip": ("0", "0.5", "0.999", "1", "-0.1", "nan", "inf", "x"),
    "--timeline-step": REALS,
    "--policy": POLICIES,
    "--synthetic-jobs": COUNTS,
}


def seed_lines() -> tuple[list[str], list[list[str]]]:
    """The excerpt's header and rows (parsed once)."""
    with SEED_TRACE.open(encoding="utf-8", newline="") as f:
        rows = list(csv.reader(f))
    return rows[0], rows[1:]


@dataclass
class Doc:
    """A trace being mutated: CSV records, then how its bytes are written."""

    lines: list[list[str] | bytes]
    newline: str = "\n"
    bom: bool = False
    utf16: bool = False
    final_newline: bool = True
    what: list[str] = field(default_factory=list)

    def render(self) -> bytes:
        out = io.StringIO()
        writer = csv.writer(out, lineterminator=self.newline)
        parts: list[bytes] = []
        for line in self.lines:
            if isinstance(line, bytes):
                parts.append(line + self.newline.encode())
                continue
            out.seek(0)
            out.truncate()
            writer.writerow(line)
            text = out.getvalue()
            parts.append(text.encode("utf-16-le" if self.utf16 else "utf-8", "surrogatepass"))
        data = b"".join(parts)
        if not self.final_newline and data.endswith(self.newline.encode()):
            data = data[: -len(self.newline)]
        if self.utf16:
            data = b"\xff\xfe" + data
        elif self.bom:
            data = b"\xef\xbb\xbf" + data
        return data


def _window(draw: Draw, header: list[str], rows: list[list[str]]) -> Doc:
    size = draw.integer(1, MAX_WINDOW)
    start = draw.integer(0, len(rows) - size)
    return Doc([list(header), *(list(r) for r in rows[start : start + size])])


def _records(doc: Doc) -> list[int]:
    return [i for i, line in enumerate(doc.lines) if isinstance(line, list)]


def _field(doc: Doc, draw: Draw, header: list[str]) -> str:
    records = _records(doc)
    if not records:
        return "field@none"
    i = draw.choice(records[1:] or records) if draw.integer(0, 9) else records[0]
    line = doc.lines[i]
    assert isinstance(line, list)
    if not line:
        return "field@empty"
    k = draw.integer(0, len(line) - 1)
    column = header[k] if k < len(header) else "?"
    if i == records[0]:
        pool: tuple[str, ...] = (*STRINGS, "job_id", "duration ", "DURATION")
    elif column in VALID and draw.integer(0, 1) == 0:
        pool = VALID[column]
    elif draw.integer(0, 4) == 0:
        pool = draw.choice((NUMBERS, STRINGS, STEP_LISTS))
    elif column in NUMERIC:
        pool = NUMBERS
    elif column in LISTS:
        pool = (*STEP_LISTS, *NUMBERS)
    else:
        pool = STRINGS
    line[k] = draw.choice(pool)
    return f"field {column}@{i}={line[k][:20]!r}"


def _rows(doc: Doc, draw: Draw, header: list[str]) -> str:
    records = _records(doc)
    body = records[1:]
    op = draw.choice(("delete", "duplicate", "fresh", "grow", "more", "fewer", "header-only"))
    if not body or op == "header-only":
        doc.lines = doc.lines[: (records[0] + 1) if records else 0]
        return "rows:header-only"
    i = draw.choice(body)
    line = doc.lines[i]
    assert isinstance(line, list)
    if op == "delete":
        del doc.lines[i]
    elif op == "duplicate":
        doc.lines.insert(i, list(line))
    elif op in ("fresh", "grow"):
        # At most 100 copies: 1,000 rows of a job of 10^9 minutes on a full
        # cluster under Tiresias is a correct simulation of a million
        # promotions (minutes of CPU), a sweep the limits allow, not a hang.
        times = 1 if op == "fresh" else draw.choice((10, 30, 100))
        for n in range(times):
            copy = list(line)
            if copy:
                copy[0] = f"{copy[0]}{n}x"
            doc.lines.append(copy)
    elif op == "more":
        line.append(draw.choice(("", "x", "1")))
    elif line:
        line.pop()
    return f"rows:{op}@{i}"


def _header(doc: Doc, draw: Draw, header: list[str]) -> str:
    records = _records(doc)
    if not records:
        return "header@none"
    first = doc.lines[records[0]]
    assert isinstance(first, list)
    op = draw.choice(("drop", "repeat", "rename", "reorder", "extra"))
    if op == "drop":
        del doc.lines[records[0]]
    elif op == "repeat" and first:
        first.append(draw.choice(first))
    elif op == "rename" and first:
        first[draw.integer(0, len(first) - 1)] = draw.choice(("", "id", "Job_ID", "duration "))
    elif op == "reorder":
        # The same permutation on every record: a valid file with columns moved.
        order = list(range(len(first)))
        k = draw.integer(0, max(0, len(order) - 1))
        order = order[k:] + order[:k]
        for i in records:
            line = doc.lines[i]
            assert isinstance(line, list)
            doc.lines[i] = [line[j] for j in order if j < len(line)]
    elif op == "extra":
        for n, i in enumerate(records):
            line = doc.lines[i]
            assert isinstance(line, list)
            line.append("note" if n == 0 else draw.choice(("", "x")))
    return f"header:{op}"


def _bytes(doc: Doc, draw: Draw, header: list[str]) -> str:
    op = draw.choice(
        ("bom", "crlf", "cr", "utf16", "latin1", "nul", "quote", "blank", "no-newline", "long")
    )
    where = draw.integer(0, len(doc.lines))
    if op == "bom":
        doc.bom = True
    elif op == "crlf":
        doc.newline = "\r\n"
    elif op == "cr":
        doc.newline = "\r"
    elif op == "utf16":
        doc.utf16 = True
    elif op == "latin1":
        doc.lines.insert(where, b"11,vc_\xff\xe9,1,918,6832,vgg16,146,10,918,10,1,best")
    elif op == "nul":
        doc.lines.insert(where, b"12,vc\x00,1,918,6832,vgg16,146,10,918,10,1,best")
    elif op == "quote":
        doc.lines.insert(where, b'13,"vc,1,918,6832,vgg16,146,10,918,10,1,best')
    elif op == "blank":
        for _ in range(draw.integer(1, 3)):
            doc.lines.insert(where, b"")
    elif op == "no-newline":
        doc.final_newline = False
    else:
        doc.lines.insert(where, b"14," + b"y" * 70_000)
    return f"bytes:{op}@{where}"


MUTATIONS = (_field, _field, _field, _rows, _header, _bytes)


def options(draw: Draw, folder: str) -> list[str]:
    """Zero to three options with hostile values (and sometimes ``--out``)."""
    out: list[str] = []
    for _ in range(draw.choice((0, 0, 1, 1, 2, 3))):
        name = draw.choice(tuple(OPTIONS))
        if name == "--synthetic-jobs":
            continue  # only with --workload synthetic, drawn below
        out += [name, draw.choice(OPTIONS[name])]
    pick = draw.integer(0, 9)
    if pick == 0:
        out += ["--out", os.path.join(folder, "out")]
    elif pick == 1:
        out += ["--out", os.path.join(folder, "trace.csv", "sub")]
    elif pick == 2:
        # The synthetic workload instead of the trace (its size drawn hostile).
        sizes = ("0", "-1", "1", "2", "8", "100", "1000000000", "x")
        out += ["--workload", "synthetic", "--synthetic-jobs", draw.choice(sizes)]
    return out


def mutant(draw: Draw, seed: tuple[list[str], list[list[str]]]) -> tuple[bytes, str]:
    """A mutated trace window as bytes, and what was done to it."""
    header, rows = seed
    doc = _window(draw, header, rows)
    done = [f"window of {len(doc.lines) - 1} rows"]
    for _ in range(draw.integer(1, 3)):
        done.append(draw.choice(MUTATIONS)(doc, draw, header))
    return doc.render(), "; ".join(done)


@dataclass
class SimCase:
    """One mutant: what was done, the command and its run."""

    what: str
    args: list[str]
    run: Run | None = None

    def complaints(self) -> list[str]:
        assert self.run is not None
        found = sim_complaints(self.run)
        return [f"{c}: {self.run.stderr.strip()[:300]!r}" for c in found]


def sim_complaints(run: Run) -> list[str]:
    """The instance fuzz's verdicts, plus: a clean stderr and finite cells on exit 0."""
    found = complaints(run)
    if run.returncode == 0 and not run.timed_out:
        if run.stderr.strip():
            found.append(f"stderr on exit 0 ({len(run.stderr.splitlines())} lines)")
        cells = [c.strip() for line in run.stdout.splitlines() for c in line.split("|")]
        if any(c in ("nan", "inf", "-inf") for c in cells):
            found.append("a nan or inf cell in the table")
    return found


def run_sim_mutant(data: bytes, extra: list[str] | None, draw: Draw | None, what: str) -> SimCase:
    """Write the trace, draw the options (unless ``extra`` is given) and run ``simulate``."""
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "trace.csv")
        Path(path).write_bytes(data)
        opts = extra if extra is not None else options(draw, tmp) if draw is not None else []
        args = ["simulate", *(["--trace", path] if "--workload" not in opts else []), *opts]
        if "--quiet" not in args and (draw is None or draw.integer(0, 1)):
            args.append("--quiet")
        case = SimCase(what, args)
        case.run = run_cli_preloaded(args, cwd=tmp)  # the default --out is ./simulate-out
        with contextlib.suppress(OSError):
            Path(path).unlink()
    return case


def describe(case: SimCase) -> str:
    """One line: what the mutant is and its options (for failure lists)."""
    opts = [a for a in case.args[1:] if not a.endswith("trace.csv")]
    return f"{case.what} [{' '.join(a[:30] for a in opts)}]"
