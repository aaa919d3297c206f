"""Hostile instance files through the real CLI: exit 0 or 2, one line, no hang (issue 17).

Hypothesis mutates every curated instance and every generated quick-suite
instance (:mod:`tests.fuzz.mutate`) and runs ``validate``, ``solve`` (a
drawn method, ``--time-limit 5``) and ``solve --verify --time-limit 2`` on
each mutant, every run in its own process under a 2 GB address-space cap and
a 20 s wall-time cap. CI draws the same :data:`CI_MUTANTS` mutants on every
run (``HYPOTHESIS_PROFILE=repeatable``: derandomized); ``benchmarks/fuzz.py
--long N`` runs thousands with a summary table.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.fuzz import mutate

#: Mutants per CI run (three processes each): 0.56-0.68 s per mutant measured
#: on 2 cores at a load of 8 (150 mutants: 84 s; 250: 171 s), so 200 keep the
#: CI share near 2 minutes. SCHEDULING_OPT_FUZZ_MUTANTS overrides it locally.
CI_MUTANTS = int(os.environ.get("SCHEDULING_OPT_FUZZ_MUTANTS", "200"))

SEEDS = mutate.seeds()


def test_every_problem_has_curated_and_generated_seeds() -> None:
    from scheduling_opt.registry import problem_names

    names = {s.name for s in SEEDS}
    for problem in problem_names():
        assert any(s.problem == problem and s.name.endswith(".json") for s in SEEDS), problem
        assert any(s.problem == problem and s.name.endswith("-s0") for s in SEEDS), problem
    assert len(names) == len(SEEDS)


def test_mutations_are_deterministic_and_change_the_document() -> None:
    import numpy as np

    changed = 0
    for i in range(50):
        seed = SEEDS[i % len(SEEDS)]
        a = mutate.mutant(seed, mutate.NumpyDraw(np.random.default_rng(i)))
        b = mutate.mutant(seed, mutate.NumpyDraw(np.random.default_rng(i)))
        assert a == b
        changed += a[0] != mutate.dump(seed.doc)
    assert changed >= 45
    assert json.loads(mutate.dump(SEEDS[0].doc)) == SEEDS[0].doc


def test_the_judge_catches_a_traceback_a_crash_and_a_hang() -> None:
    bad = mutate.run_cli(["solve", "--definitely-not-an-option"])
    assert bad.returncode == 2
    assert mutate.complaints(bad) == []
    crash = mutate.Run(["solve"], 1, "", "Traceback (most recent call last):\n  x\n", 0.1, 1)
    assert "exit 1" in mutate.complaints(crash)
    assert "traceback" in mutate.complaints(crash)
    two_lines = mutate.Run(["validate"], 2, "", "a\nb\n", 0.1, 1)
    assert mutate.complaints(two_lines) == ["2 stderr lines on exit 2"]
    hang = mutate.run_cli(["list"], time_cap=0.01)
    assert hang.timed_out
    assert mutate.complaints(hang)[0].startswith("hang")


def test_one_mutant_of_every_problem_gets_an_answer_or_one_error_line() -> None:
    """The default run's share of the fuzz: one seeded mutant per problem (the run below is slow)."""
    import numpy as np

    from scheduling_opt.registry import problem_names

    for problem in problem_names():
        seed = next(s for s in SEEDS if s.problem == problem and s.name.endswith(".json"))
        draw = mutate.NumpyDraw(np.random.default_rng(len(problem)))
        text, what = mutate.mutant(seed, draw)
        method = draw.choice(seed.methods)
        problems = mutate.run_mutant(text, method, what, seed.name).complaints()
        assert problems == [], f"{what} (method {method}): {problems}"


@pytest.mark.slow
@settings(
    max_examples=CI_MUTANTS,
    deadline=None,
    suppress_health_check=[
        HealthCheck.too_slow,
        HealthCheck.data_too_large,
        HealthCheck.large_base_example,
    ],
)
@given(data=st.data())
def test_mutated_instances_get_an_answer_or_one_error_line(data: st.DataObject) -> None:
    draw = mutate.HypothesisDraw(data)
    seed = draw.choice(SEEDS)
    text, what = mutate.mutant(seed, draw)
    method = draw.choice(seed.methods)
    case = mutate.run_mutant(text, method, what, seed.name)
    problems = case.complaints()
    if problems:
        pytest.fail(f"{what} (method {method}): " + " | ".join(problems))


def test_the_preloaded_runner_answers_like_a_fresh_interpreter(tmp_path: Path) -> None:
    # The fuzz runs each command forked from a preloaded server; a fresh
    # `python -m scheduling_opt.cli` must see the same exit, stdout and stderr.
    from tests.fuzz.preloaded import run_cli_preloaded

    bad = tmp_path / "bad.json"
    bad.write_text('{"format": 1, "problem": "mckp", "capacity": NaN}', encoding="utf-8")
    for args in (["validate", str(bad)], ["list"]):
        fresh, forked = mutate.run_cli(args), run_cli_preloaded(args)
        assert (forked.returncode, forked.stdout, forked.stderr) == (
            fresh.returncode,
            fresh.stdout,
            fresh.stderr,
        )
    assert fresh.returncode == 0
    assert "mckp" in fresh.stdout
