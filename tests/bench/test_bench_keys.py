"""Lexicographic objectives in the benchmark: the whole key decides what is optimal.

Reclaim's objective is (preempted jobs, collateral GPUs); the rows below are
built by hand with keys whose order is obvious, so each expected gap is
computed here from the documented rule, not taken from the runner.
"""

from __future__ import annotations

import pytest

from scheduling_opt.bench import format_table, summarize
from scheduling_opt.bench.gaps import tie_gap
from scheduling_opt.bench.runner import Outcome, Task, compare

TASK = Task("reclaim", "20", 0)


def outcome(
    method: str, exact: bool, status: str, key: tuple[float, float], seconds: float = 0.01
) -> Outcome:
    return Outcome(method, exact, status, key[0], key, seconds=seconds, verified=True)


def test_a_tie_on_preemptions_with_more_collateral_is_not_optimal() -> None:
    rows = compare(
        TASK,
        "min",
        [
            outcome("exact", True, "optimal", (3.0, 4.0)),
            outcome("same", False, "feasible", (3.0, 4.0)),
            outcome("more-collateral", False, "feasible", (3.0, 6.0)),
            outcome("more-preempted", False, "feasible", (4.0, 0.0)),
        ],
    )
    got = {r.method: (r.gap, r.tie_gap, r.at_optimum) for r in rows}
    assert got["exact"] == (0.0, 0.0, True)
    assert got["same"] == (0.0, 0.0, True)
    # Same preemption count, 6 collateral GPUs against 4: gap 0, tie-break (6 - 4) / 4.
    assert got["more-collateral"] == (0.0, pytest.approx(0.5), False)
    # One more preempted job decides, whatever the collateral: (4 - 3) / 3.
    assert got["more-preempted"] == (pytest.approx(1 / 3), None, False)
    assert all(r.optimum == 3.0 and not r.error for r in rows)
    assert rows[2].key == (3.0, 6.0)


def test_summary_and_dominance_see_the_tie_break() -> None:
    # "fast" ties the preemption count on every run but with more collateral:
    # it is faster than exact yet does not dominate it, and is never at the optimum.
    rows = []
    for seed, (collateral, best) in enumerate([(6.0, 4.0), (5.0, 5.0)]):
        task = Task("reclaim", "20", seed)
        rows += compare(
            task,
            "min",
            [
                outcome("exact", True, "optimal", (3.0, best), seconds=0.05),
                outcome("fast", False, "feasible", (3.0, collateral), seconds=0.001),
                outcome("worse", False, "feasible", (4.0, best), seconds=0.002),
            ],
        )
    by = {s.method: s for s in summarize(rows)}
    assert (by["fast"].mean_gap, by["fast"].mean_tie_gap) == (0.0, pytest.approx(0.25))
    assert (by["fast"].at_optimum, by["fast"].compared) == (1, 2)
    assert (by["exact"].at_optimum, by["exact"].compared) == (2, 2)
    assert by["exact"].dominated_by == ()
    # "worse" preempts one more job on both runs (gap 1/3): slower than "fast" and worse.
    assert by["worse"].mean_gap == pytest.approx(1 / 3)
    assert by["worse"].dominated_by == ("fast",)
    table = format_table(list(by.values()), "reclaim")
    assert "| worst gap % | tie-break gap % | at optimum |" in table
    assert "| 20 | fast | 2 | 0 | 0 | 0 | 0.00 | 0.00 | 25.00 | 1/2 |" in table


def test_the_best_key_among_exact_methods_is_the_optimum() -> None:
    # Two exact methods claim optimality with the same count; the smaller
    # collateral is the proven optimum and the other one is noted, not hidden.
    rows = compare(
        TASK,
        "min",
        [
            outcome("exact-pulp", True, "optimal", (2.0, 8.0)),
            outcome("exact", True, "optimal", (2.0, 5.0)),
        ],
    )
    by = {r.method: r for r in rows}
    assert by["exact"].at_optimum is True
    assert by["exact-pulp"].tie_gap == pytest.approx(3 / 5)
    assert by["exact-pulp"].at_optimum is False
    assert "claims optimal" in by["exact-pulp"].note


def test_beating_the_proven_key_is_flagged() -> None:
    rows = compare(
        TASK,
        "min",
        [
            outcome("exact", True, "optimal", (2.0, 5.0)),
            outcome("too-good", False, "feasible", (2.0, 3.0)),
        ],
    )
    assert "beats the proven optimum" in rows[1].error


@pytest.mark.parametrize(
    ("sense", "obj", "key", "opt", "opt_key", "expected"),
    [
        ("min", 3.0, (3.0,), 3.0, (3.0,), None),
        ("min", 5.0, (), 4.0, (), None),
        ("max", 8.0, (8.0, 1.0), 10.0, (10.0, 1.0), None),
        ("max", 10.0, (10.0, 1.0), 10.0, (10.0, 3.0), 2 / 3),
        ("min", 2.0, (2.0, 1.0, 7.0), 2.0, (2.0, 1.0, 5.0), 2 / 5),
        # Keys of different lengths: only the objective can be compared.
        ("min", 3.0, (3.0,), 3.0, (3.0, 4.0), None),
        ("min", None, (), 3.0, (3.0, 4.0), None),
    ],
)
def test_tie_gap_rule(
    sense: str,
    obj: float | None,
    key: tuple[float, ...],
    opt: float,
    opt_key: tuple[float, ...],
    expected: float | None,
) -> None:
    got = tie_gap(sense, obj, key, opt, opt_key)  # type: ignore[arg-type]
    if expected is None:
        assert got is None
    else:
        assert got == pytest.approx(expected)
