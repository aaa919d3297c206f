"""Microbenchmarks of a paper set (Scenario): runs, measures, verdicts, the report's section.

Expected numbers are computed by hand in the comments.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

import pytest

from scheduling_opt.reproduce.microbench import run_scenario, scenario_section, verdict_rows
from scheduling_opt.reproduce.papers import (
    PAPERS,
    Claim,
    JobTimes,
    Measure,
    PolicyRun,
    Scenario,
)
from scheduling_opt.reproduce.report import write_report
from scheduling_opt.reproduce.verdict import Verdict
from scheduling_opt.sim import ClusterSpec, SimJob, Workload, make_policy, simulate


def _two_jobs() -> Scenario:
    # One GPU: x (work 4) at 0, y (work 2) at 1. FIFO: y waits for x, JCT 5;
    # SJF is the same here (x is running). The claim: y's JCT under fifo is 5,
    # paper 4 (a level within 2x: reproduced); fifo -> sjf ratio 1 (no change:
    # not reproduced against a paper's 1.5x).
    return Scenario(
        name="two jobs",
        source="test",
        setup="x then y",
        differences="none",
        jobs=(SimJob("x", 0.0, 1, 4.0), SimJob("y", 1.0, 1, 2.0)),
        gpus=1,
        runs=(PolicyRun("fifo"), PolicyRun("sjf")),
        measures=(
            Measure("y JCT", lambda t: t.jct("y")),
            Measure("x done at y's start", lambda t: t.done("x", t.start["y"])),
        ),
        claims=(
            Claim("y's JCT", "y JCT", "value", 4.0, "fifo", "fifo"),
            Claim("y's JCT, fifo -> sjf", "y JCT", "ratio", 1.5, "fifo", "sjf"),
        ),
        table=(("fifo", "y", "4.0"),),
    )


def test_a_scenario_runs_each_policy_once_and_measures_it() -> None:
    res = run_scenario(_two_jobs())
    assert res.metrics["fifo"]["y JCT"] == pytest.approx(5.0)
    assert res.metrics["sjf"]["y JCT"] == pytest.approx(5.0)
    # x runs 0..4; the last call at or before y's start (4) is y's arrival at 1,
    # when x had done 1 (x's completion at 4 ends it: no sample then).
    assert res.metrics["fifo"]["x done at y's start"] == pytest.approx(1.0)
    assert res.times["fifo"].slowdown("y") == pytest.approx(150.0)  # 5 vs 2 alone
    rows = verdict_rows(res)
    assert [(c.what, v) for c, _, v in rows] == [
        ("y's JCT", Verdict.REPRODUCED),
        ("y's JCT, fifo -> sjf", Verdict.NOT_REPRODUCED),
    ]


def test_job_times_progress_is_the_last_sample_at_or_before() -> None:
    t = JobTimes({}, {}, {}, {}, {"a": ((0.0, 0.0), (2.0, 1.5), (3.0, 2.0))})
    assert [t.done("a", x) for x in (-1.0, 0.0, 2.5, 3.0, 9.0)] == [0.0, 0.0, 1.5, 2.0, 2.0]
    assert t.done("nobody", 1.0) == 0.0


def test_the_probe_keeps_the_policys_sharing_model() -> None:
    # AntMan declares its own interference and stacked slots: through the probe
    # the run is the same as the policy's own (the Table 2 case: B's JCT).
    s = PAPERS["antman"].scenarios[0]
    run = next(r for r in s.runs if r.name == "antman")
    w = Workload.of(list(s.jobs), "t")
    c = ClusterSpec.uniform(1, s.gpus)
    direct = simulate(w, c, make_policy(run.policy, w, c, dict(run.params)))
    b = next(k for k, j in enumerate(direct.jobs) if j.id == "B")
    res = run_scenario(s)
    assert res.times["antman"].end["B"] == direct.end[b]


def test_antmans_scenarios_give_their_hand_computed_numbers() -> None:
    # Table 2 under AntMan: B's JCT 91.749712 (tests/reproduce/test_antman_runtime.py's
    # first schedule); FIFO: B waits for A's 43 minutes: 43 + 91.1 - 26 = 108.1.
    memory, compute = (run_scenario(s) for s in PAPERS["antman"].scenarios)
    assert memory.metrics["antman"]["B JCT"] == pytest.approx(91.749712, abs=1e-6)
    assert memory.metrics["fifo"]["B JCT"] == pytest.approx(108.1)
    # UMem: B at ResNet's curve at 28.5 / 30 (0.69) for life: 158.601101 - 26.
    assert memory.metrics["umem"]["B JCT"] == pytest.approx(132.601101, abs=1e-5)
    # Fig. 12, Gandiva's packing: ESPnet at 1 - 0.809 from 0: 20.1 / 0.191.
    assert compute.metrics["pack"]["E JCT"] == pytest.approx(20.1 / (1 - 0.809), rel=1e-3)
    verdicts = {c.what: v for c, _, v in verdict_rows(memory)}
    assert verdicts["Job-B's JCT, FIFO -> AntMan, x lower"] is Verdict.REPRODUCED


def test_the_report_has_a_microbenchmark_section() -> None:
    text = scenario_section(PAPERS["antman"])
    assert "## Microbenchmarks" in text
    assert "### memory scaling" in text
    assert "| antman | 45.30 (43.9) | 91.75 (91.8) |" in text
    assert scenario_section(PAPERS["chronus"]) == ""  # a paper without microbenchmarks
    out = Path(tempfile.mkdtemp())
    path = write_report(out, PAPERS["antman"], [], quick=True, today="x", microbenchmarks=text)
    assert "### computation unit" in path.read_text()
