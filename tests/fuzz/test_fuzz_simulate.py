"""Hostile traces and options through the real ``simulate``: exit 0 or 2, one line, no hang (issue 27).

Hypothesis mutates windows of the bundled excerpt and draws hostile options
(:mod:`tests.fuzz.sim_mutate`); each mutant is one ``simulate`` process
(forked from a server that imported the CLI, :mod:`tests.fuzz.preloaded`)
under the instance-file fuzz's 2 GB address-space cap and 20 s wall-time
cap, judged by its verdicts plus the simulator's own (a clean stderr and
finite cells on exit 0). CI draws the same :data:`CI_MUTANTS` on every run
(``HYPOTHESIS_PROFILE=repeatable``); ``benchmarks/fuzz.py --sim --long N``
runs thousands with a summary table.
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from scheduling_opt.cli import main
from tests.fuzz import mutate, preloaded, sim_mutate

#: Mutants per CI run, one process each forked from a server that imported the
#: CLI once (tests/fuzz/preloaded.py). Since simulate writes ./simulate-out with
#: its plots by default, an exit-0 mutant draws three plots: 40 mutants cost the
#: file 13 s of CPU, 20 about half (2026-11-27, load average 11); the long runs
#: are benchmarks/fuzz.py --sim (docs/testing.md).
#: SCHEDULING_OPT_SIM_FUZZ_MUTANTS overrides it locally.
CI_MUTANTS = int(os.environ.get("SCHEDULING_OPT_SIM_FUZZ_MUTANTS", "20"))

SEED = sim_mutate.seed_lines()


def test_the_unmutated_window_is_the_excerpt_byte_for_byte() -> None:
    header, rows = SEED
    assert len(rows) == 5222
    doc = sim_mutate.Doc([header, *rows[10:14]])
    text = sim_mutate.SEED_TRACE.read_bytes().split(b"\n")
    assert doc.render() == b"\n".join([text[0], *text[11:15]]) + b"\n"


def test_mutations_are_deterministic_and_change_the_trace() -> None:
    header, rows = SEED
    changed = 0
    for i in range(60):
        a = sim_mutate.mutant(mutate.NumpyDraw(np.random.default_rng(i)), SEED)
        b = sim_mutate.mutant(mutate.NumpyDraw(np.random.default_rng(i)), SEED)
        assert a == b
        # The same first two draws give the window before its mutations.
        draw = mutate.NumpyDraw(np.random.default_rng(i))
        size = draw.integer(1, sim_mutate.MAX_WINDOW)
        start = draw.integer(0, len(rows) - size)
        changed += a[0] != sim_mutate.Doc([header, *rows[start : start + size]]).render()
    assert changed >= 50


def test_the_simulator_verdicts_catch_warnings_and_nan_cells() -> None:
    warned = mutate.Run(["simulate"], 0, "| fifo | 0 | 1.0 |\n", "UserWarning: x\n  y\n", 0.1, 1)
    assert sim_mutate.sim_complaints(warned) == ["stderr on exit 0 (2 lines)"]
    nan = mutate.Run(["simulate"], 0, "| fifo | 0 | nan | 1.0 |\n", "", 0.1, 1)
    assert sim_mutate.sim_complaints(nan) == ["a nan or inf cell in the table"]
    crash = mutate.Run(["simulate"], 1, "", "scheduling-opt: internal error: X\n", 0.1, 1)
    assert sim_mutate.sim_complaints(crash) == ["exit 1"]
    fine = mutate.Run(["simulate"], 2, "", "scheduling-opt: error: --servers: x\n", 0.1, 1)
    assert sim_mutate.sim_complaints(fine) == []


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
def test_mutated_traces_and_options_get_an_answer_or_one_error_line(data: st.DataObject) -> None:
    draw = mutate.HypothesisDraw(data)
    trace, what = sim_mutate.mutant(draw, SEED)
    case = sim_mutate.run_sim_mutant(trace, None, draw, what)
    problems = case.complaints()
    if problems:
        pytest.fail(f"{sim_mutate.describe(case)}: " + " | ".join(problems))


def test_a_preloaded_run_answers_like_the_command(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    # The same arguments through main() in this process: the fork must change nothing
    # of what the verdicts look at (exit status, stdout, stderr).
    argv = ["simulate", "--workload", "synthetic", "--synthetic-jobs", "0", "--quiet"]
    run = preloaded.run_cli_preloaded(argv, cwd=tmp_path)
    code = main(argv)
    out, err = capsys.readouterr()
    assert (run.returncode, run.stdout, run.stderr) == (code, out, err)
    assert code == 2
    assert err.count("\n") == 1
    # A run past its wall-time cap is killed and says so (10^5 jobs take seconds).
    slow = ["simulate", "--workload", "synthetic", "--synthetic-jobs", "100000", "--quiet"]
    killed = preloaded.run_cli_preloaded(slow, time_cap=0.5, cwd=tmp_path)
    assert killed.timed_out
    assert killed.returncode == -9
    assert mutate.complaints(killed)[0].startswith("hang")
