"""The benchmark's outputs: per-size summaries, the Pareto marking, CSV, JSON, Markdown.

:func:`summarize` aggregates rows per (problem, size, method): runs, failed,
skipped and time-limited runs, mean and worst gap to the proven optimum, mean certified gap (from each
method's own bound), median time, speed-up over the reference exact method,
and the methods that dominate it at that size (:func:`dominated`).
:func:`status_notes` gives, under each table, the reason of every run that
did not finish normally (skipped, stopped at its time limit, failed).
:func:`write_outputs` writes ``results.csv``, ``results.json`` and
``report.md`` (and the plots). Complexity: linear in the rows, quadratic in
the methods of one size for the dominance test.
"""

from __future__ import annotations

import csv
import json
import math
import statistics
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, fields, replace
from pathlib import Path
from typing import Any

from scheduling_opt.bench.runner import Row
from scheduling_opt.metrics import GLOSSARY_LINE
from scheduling_opt.solution import Status

#: The method whose time the speed-up column divides by (else the fastest exact one).
REFERENCE_METHOD = "exact"
#: Mean gaps closer than this are equal in the dominance test.
_GAP_EPS = 1e-12
#: Median times within this fraction of the larger one count as equal in the
#: dominance test: two methods calling the same solver (``auto`` and
#: ``exact``) differ by timing noise alone, and without a tolerance the mark
#: flapped from run to run on the shared machine.
TIME_REL_TOLERANCE = 0.10
#: ... or within this many seconds: the noise floor of a millisecond run.
TIME_ABS_TOLERANCE = 0.002


@dataclass(frozen=True, slots=True)
class Summary:
    """One method at one size: the report's table row.

    ``dominated_by`` names the methods that are at least as fast (median
    time) and at least as good (mean gap, then mean tie-break gap for a
    lexicographic objective) at this size, one of them strictly; empty when
    the method is on the time/gap Pareto front (or when its gap is unknown).
    ``at_optimum`` counts the runs whose whole key equals the proven
    optimum's, out of ``compared`` runs that have a proven optimum;
    ``mean_tie_gap`` is the mean tie-break gap (lexicographic objectives
    only, a run whose objective differs counting 0). ``failed``: runs with
    an error (a crash, a checker's refusal, a false bound); ``skipped``:
    runs the method refused (beyond its size limit); ``time_limited``: runs
    stopped by their time limit (their answer, if any, is still compared).
    """

    problem: str
    size: str
    method: str
    runs: int
    failed: int
    mean_gap: float | None
    worst_gap: float | None
    median_seconds: float | None
    speedup: float | None
    mean_certified_gap: float | None = None
    dominated_by: tuple[str, ...] = ()
    mean_tie_gap: float | None = None
    at_optimum: int = 0
    compared: int = 0
    skipped: int = 0
    time_limited: int = 0


Quality = float | tuple[float, ...]


def _as_tuple(q: Quality) -> tuple[float, ...]:
    return q if isinstance(q, tuple) else (q,)


def _compare(a: Quality, b: Quality) -> int:
    """-1, 0 or 1 as gap ``a`` is lexicographically below, equal to or above ``b``."""
    for x, y in zip(_as_tuple(a), _as_tuple(b), strict=False):
        if abs(x - y) > _GAP_EPS:
            return -1 if x < y else 1
    return 0


def same_time(a: float, b: float) -> bool:
    """Whether two median times are equal within the dominance test's tolerance.

    Equal when they differ by at most ``max(TIME_REL_TOLERANCE * max(a, b),
    TIME_ABS_TOLERANCE)``: 10% of the slower one, or 2 ms. O(1).

    Parameters
    ----------
    a, b : float
        Median times in seconds.

    Returns
    -------
    bool
        True when the difference is within the tolerance.

    Examples
    --------
    >>> same_time(1.00, 1.09), same_time(1.00, 1.12), same_time(0.001, 0.0029)
    (True, False, True)
    """
    return abs(a - b) <= max(TIME_REL_TOLERANCE * max(a, b), TIME_ABS_TOLERANCE)


def dominated(points: Mapping[str, tuple[float, Quality]]) -> dict[str, tuple[str, ...]]:
    """For each method, the methods that dominate it on (median seconds, mean gap).

    ``b`` dominates ``a`` when ``b`` is at least as fast and has at most
    ``a``'s mean gap, one of them strictly. Times within
    :func:`same_time`'s tolerance (10% or 2 ms) are equal: then only a
    strictly smaller gap dominates, and a method a little slower within the
    tolerance but strictly better dominates too. A gap given as a tuple
    (mean gap, mean tie-break gap) compares lexicographically.

    Parameters
    ----------
    points : mapping of str to (float, float or tuple of float)
        Method name -> (median seconds, mean gap), for the methods of one size.

    Returns
    -------
    dict of str to tuple of str
        Method name -> the names of the methods dominating it, in input order
        (empty for the Pareto front).

    Examples
    --------
    >>> dominated({"exact": (0.10, 0.0), "dp": (0.01, 0.0), "greedy": (0.02, 0.05)})
    {'exact': ('dp',), 'dp': (), 'greedy': ('dp',)}
    >>> dominated({"fast": (0.01, 0.2), "good": (1.0, 0.0)})
    {'fast': (), 'good': ()}

    Timing noise: ``auto`` 5% slower than ``exact`` with the same gap is not
    dominated, and a heuristic 1 ms faster but worse is dominated:

    >>> dominated({"exact": (0.100, 0.0), "auto": (0.105, 0.0), "greedy": (0.099, 0.01)})
    {'exact': (), 'auto': (), 'greedy': ('exact', 'auto')}

    A fast heuristic preempting as few jobs as the optimum but with more
    collateral GPUs does not dominate the exact method:

    >>> dominated({"exact": (0.06, (0.0, 0.0)), "aryl-plus": (0.03, (0.0, 0.2))})
    {'exact': (), 'aryl-plus': ()}
    """
    out: dict[str, tuple[str, ...]] = {}
    for a, (time_a, gap_a) in points.items():
        out[a] = tuple(
            b
            for b, (time_b, gap_b) in points.items()
            if b != a
            and (time_b <= time_a or same_time(time_a, time_b))
            and _compare(gap_b, gap_a) <= 0
            and (not same_time(time_a, time_b) or _compare(gap_b, gap_a) < 0)
        )
    return out


def summarize(rows: Sequence[Row]) -> list[Summary]:
    """Aggregate rows per (problem, size, method), in first-seen order.

    Parameters
    ----------
    rows : sequence of Row
        Benchmark rows (any problems and sizes).

    Returns
    -------
    list of Summary
        One per (problem, size, method): runs, failed rows, mean and worst
        gap, median time, speed-up over the reference exact method, mean
        certified gap, and the methods dominating it at that size.

    Examples
    --------
    >>> from scheduling_opt.bench.runner import Row
    >>> def row(method, exact, gap, seconds):
    ...     return Row("p", "s", 0, "i", method, exact, "optimal", 1.0, 1.0, gap, seconds, True, "")
    >>> rows = [row("exact", True, 0.0, 2.0), row("h", False, 0.1, 0.5), row("h", False, 0.3, 1.5)]
    >>> [(s.method, s.runs, round(s.mean_gap, 3), s.median_seconds, s.speedup) for s in summarize(rows)]
    [('exact', 1, 0.0, 2.0, 1.0), ('h', 2, 0.2, 1.0, 2.0)]
    """
    groups: dict[tuple[str, str, str], list[Row]] = {}
    for row in rows:
        groups.setdefault((row.problem, row.size, row.method), []).append(row)
    exact_median: dict[tuple[str, str], float] = {}
    reference_set: set[tuple[str, str]] = set()
    for (problem, size, method), group in groups.items():
        times = [r.seconds for r in group if r.exact and r.seconds is not None]
        if times:
            key = (problem, size)
            exact_time = statistics.median(times)
            if method == REFERENCE_METHOD:
                exact_median[key] = exact_time
                reference_set.add(key)
            elif key not in reference_set:
                exact_median[key] = min(exact_time, exact_median.get(key, math.inf))
    out = []
    for (problem, size, method), group in groups.items():
        gaps = [r.gap for r in group if r.gap is not None]
        certified = [r.certified_gap for r in group if r.certified_gap is not None]
        lexicographic = any(r.tie_gap is not None for r in group)
        ties = [r.tie_gap or 0.0 for r in group if r.gap is not None]
        times = [r.seconds for r in group if r.seconds is not None]
        median = statistics.median(times) if times else None
        ref = exact_median.get((problem, size))
        speedup = ref / median if ref is not None and median else None
        out.append(
            Summary(
                problem,
                size,
                method,
                len(group),
                sum(1 for r in group if r.error),
                statistics.fmean(gaps) if gaps else None,
                max(gaps) if gaps else None,
                median,
                speedup,
                statistics.fmean(certified) if certified else None,
                (),
                statistics.fmean(ties) if lexicographic and ties else None,
                sum(1 for r in group if r.at_optimum),
                sum(1 for r in group if r.at_optimum is not None),
                sum(1 for r in group if r.status == SKIPPED),
                sum(1 for r in group if r.status == Status.TIME_LIMIT.value),
            )
        )
    return _mark_dominated(out)


def _mark_dominated(summaries: list[Summary]) -> list[Summary]:
    """Fill ``dominated_by`` per (problem, size); a method with failed runs dominates none."""
    by_size: dict[tuple[str, str], dict[str, tuple[float, Quality]]] = {}
    for s in summaries:
        if s.mean_gap is not None and s.median_seconds is not None:
            gap: Quality = s.mean_gap
            if s.mean_tie_gap is not None:
                gap = (s.mean_gap, s.mean_tie_gap)
            by_size.setdefault((s.problem, s.size), {})[s.method] = (s.median_seconds, gap)
    failed = {(s.problem, s.size, s.method) for s in summaries if s.failed}
    out = []
    for s in summaries:
        points = by_size.get((s.problem, s.size), {})
        if s.method not in points:
            out.append(s)
            continue
        marks = dominated(points)[s.method]
        marks = tuple(m for m in marks if (s.problem, s.size, m) not in failed)
        out.append(replace(s, dominated_by=marks))
    return out


def _fmt(value: float | None, kind: str) -> str:
    if value is None:
        return "-"
    if kind == "pct":
        return f"{100 * value:.2f}"
    if kind == "time":
        return f"{1000 * value:.2f}"
    return f"{value:.1f}x"


TABLE_HEAD = (
    "| size | method | runs | failed | skipped | time limit | mean gap % | worst gap % "
    "| at optimum | median ms | speed-up vs exact | certified gap % | dominated by |"
)
#: The ``status`` of a run the method refused (beyond its size limit).
SKIPPED = "skipped"
#: The extra column of a lexicographic objective's table, after ``worst gap %``.
TIE_COLUMN = "tie-break gap %"


def format_table(summaries: Sequence[Summary], problem: str) -> str:
    """A Markdown table of one problem's summaries (the table of ``report.md``).

    A problem with a lexicographic objective (reclaim) gets a ``tie-break
    gap %`` column after ``worst gap %``.

    Parameters
    ----------
    summaries : sequence of Summary
        From :func:`summarize` (other problems' rows are left out).
    problem : str
        The problem of the table.

    Returns
    -------
    str
        The table: gaps in percent, times in milliseconds, ``-`` where unknown;
        the failed, skipped and time-limited runs counted in their columns
        (their reasons: :func:`status_notes`).

    Examples
    --------
    >>> s = Summary("p", "n4", "greedy", 5, 0, 0.01, 0.05, 0.002, 40.0, 0.02, ("dp",), None, 2, 5)
    >>> print(format_table([s], "p").splitlines()[2])
    | n4 | greedy | 5 | 0 | 0 | 0 | 1.00 | 5.00 | 2/5 | 2.00 | 40.0x | 2.00 | dp |
    """
    mine = [s for s in summaries if s.problem == problem]
    lexicographic = any(s.mean_tie_gap is not None for s in mine)
    head = TABLE_HEAD
    if lexicographic:
        head = head.replace("| worst gap % |", f"| worst gap % | {TIE_COLUMN} |")
    lines = [head, "|" + "---|" * head.count(" |")]
    for s in mine:
        cells = [
            s.size,
            s.method,
            str(s.runs),
            str(s.failed),
            str(s.skipped),
            str(s.time_limited),
            _fmt(s.mean_gap, "pct"),
            _fmt(s.worst_gap, "pct"),
        ]
        if lexicographic:
            cells.append(_fmt(s.mean_tie_gap, "pct"))
        cells += [
            f"{s.at_optimum}/{s.compared}" if s.compared else "-",
            _fmt(s.median_seconds, "time"),
            _fmt(s.speedup, "x"),
            _fmt(s.mean_certified_gap, "pct"),
            ", ".join(s.dominated_by),
        ]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


#: How each status that is not a normal finish is named in the notes, in their order.
_UNFINISHED = (
    ("failed", "failed"),
    (SKIPPED, "skipped"),
    (Status.TIME_LIMIT.value, "time limit"),
)


def _unfinished(row: Row) -> str:
    """``failed``, ``skipped``, ``time_limit`` or ``""`` (a normal finish)."""
    if row.error:
        return "failed"
    if row.status in (SKIPPED, Status.TIME_LIMIT.value):
        return row.status
    return ""


def _reason(row: Row) -> str:
    return row.error or row.note or "(no reason given)"


def status_notes(rows: Sequence[Row], problem: str) -> str:
    """The reasons under a problem's table: one line per size, method and unfinished status.

    Every run counted in the ``failed``, ``skipped`` or ``time limit``
    column is here, with its reason (the first run's, and how many more
    runs share the status): the table's dashes and counts never stand
    unexplained. O(rows).

    Parameters
    ----------
    rows : sequence of Row
        Benchmark rows (other problems' rows are left out).
    problem : str
        The problem of the table.

    Returns
    -------
    str
        The lines (``""`` when every run finished normally).

    Examples
    --------
    >>> skipped = Row("allocation", "n40", 0, "n40/seed0", "exact", True, "skipped", None,
    ...               None, None, None, False, "", "6.96e+16 allocations, limit 200,000")
    >>> print(status_notes([skipped], "allocation"))
    - n40 exact, skipped (1 of 1 runs): n40/seed0: 6.96e+16 allocations, limit 200,000
    """
    mine = [r for r in rows if r.problem == problem]
    runs: dict[tuple[str, str], int] = {}
    for r in mine:
        runs[(r.size, r.method)] = runs.get((r.size, r.method), 0) + 1
    groups: dict[tuple[str, str, str], list[Row]] = {}
    for r in mine:
        status = _unfinished(r)
        if status:
            groups.setdefault((r.size, r.method, status), []).append(r)
    shown = dict(_UNFINISHED)
    lines = []
    for (size, method, status), group in groups.items():
        first = group[0]
        more = f" (and {len(group) - 1} more)" if len(group) > 1 else ""
        lines.append(
            f"- {size} {method}, {shown[status]} ({len(group)} of {runs[(size, method)]} runs): "
            f"{first.instance}: {_reason(first)}{more}"
        )
    return "\n".join(lines)


def problem_section(rows: Sequence[Row], summaries: Sequence[Summary], problem: str) -> str:
    """A problem's table, then the reasons of its unfinished runs (printed and in report.md).

    Examples
    --------
    >>> problem_section([], [], "p").splitlines()[0].startswith("| size | method | runs |")
    True
    """
    table = format_table(summaries, problem)
    notes = status_notes(rows, problem)
    if not notes:
        return table
    return (
        f"{table}\n\nRuns that did not finish normally (the reason of the first of each):\n{notes}"
    )


def _csv_value(value: Any) -> Any:
    if value is None:
        return ""
    if isinstance(value, tuple):
        return json.dumps(list(value)) if value else ""
    return value


def write_outputs(
    rows: Sequence[Row], out: Path, *, suite: str, interrupted: bool, plots: bool
) -> list[Summary]:
    """Write results.csv, results.json, report.md (and plots); return the summaries.

    Parameters
    ----------
    rows : sequence of Row
        The rows, in task order.
    out : Path
        The output folder (created if missing).
    suite : str
        The suite's name (for the report's title and ``results.json``).
    interrupted : bool
        Whether Ctrl-C stopped the run (said in both files).
    plots : bool
        Also draw ``<problem>.png`` (when matplotlib is installed).

    Returns
    -------
    list of Summary
        :func:`summarize` of the rows.

    Raises
    ------
    OSError
        When the folder or a file cannot be written.
    """
    out.mkdir(parents=True, exist_ok=True)
    names = [f.name for f in fields(Row)]
    with (out / "results.csv").open("w", newline="", encoding="utf-8") as fh:
        writer = csv.DictWriter(fh, fieldnames=names)
        writer.writeheader()
        for row in rows:
            writer.writerow({k: _csv_value(v) for k, v in asdict(row).items()})
    payload = {"suite": suite, "interrupted": interrupted, "rows": [_json_row(r) for r in rows]}
    (out / "results.json").write_text(
        json.dumps(payload, indent=1, allow_nan=False), encoding="utf-8"
    )
    summaries = summarize(rows)
    problems = list(dict.fromkeys(r.problem for r in rows))
    (out / "report.md").write_text(
        markdown_report(rows, summaries, suite=suite, interrupted=interrupted), encoding="utf-8"
    )
    if plots:
        from scheduling_opt.bench.plots import plot

        plot(summaries, problems, out)
    return summaries


def _json_row(row: Row) -> dict[str, Any]:
    values = asdict(row)
    values["key"] = list(row.key)
    return values


def markdown_report(
    rows: Sequence[Row], summaries: Sequence[Summary], *, suite: str, interrupted: bool
) -> str:
    """The text of ``report.md``: a table per problem, then failed and skipped rows."""
    parts = [
        f"# Benchmark report: suite `{suite}`"
        + (" (interrupted: partial results)" if interrupted else ""),
        "",
        GLOSSARY_LINE,
        "",
        "Gap: relative to the best proven optimum, denominator floored at 1; tie-break gap "
        "(lexicographic objectives): the same on the first later key component when the "
        "objective ties (see docs/benchmarks.md); times in milliseconds "
        "(median); at optimum: runs whose whole objective equals the proven optimum's, of "
        "those with one; speed-up = the `exact` method's median time (else the fastest exact "
        "method's) / this method's median time; certified gap: from the method's own bound, "
        "with no exact run; dominated by: the methods at least as fast and at most as far "
        "from the optimum at that size, one of them strictly, median times within 10% or "
        "2 ms counting as equal (blank: on the Pareto front).\n",
    ]
    for problem in dict.fromkeys(r.problem for r in rows):
        parts += [f"## {problem}", "", problem_section(rows, summaries, problem), ""]
    failures = [r for r in rows if r.error]
    if failures:
        parts += ["## Failed rows", ""]
        parts += [f"- {r.problem} {r.instance} {r.method}: {r.error}" for r in failures]
        parts.append("")
    skipped = [r for r in rows if r.status == "skipped"]
    if skipped:
        parts += ["## Skipped runs (instance beyond the method's size limit)", ""]
        parts += [f"- {r.problem} {r.instance} {r.method}: {r.note}" for r in skipped]
        parts.append("")
    notes = [r for r in rows if r.note and not _unfinished(r)]
    if notes:
        parts += ["## Notes", ""]
        parts += [f"- {r.problem} {r.instance} {r.method}: {r.note}" for r in notes]
        parts.append("")
    return "\n".join(parts)
