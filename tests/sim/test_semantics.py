"""Named semantics (``sim/semantics.py``): what each sets, what wins, what it refuses."""

from __future__ import annotations

import sys

import pytest

from scheduling_opt.cli import main
from scheduling_opt.errors import InvalidInstanceError
from scheduling_opt.sim.policies.chronus.artifact import mip as chronus_mip
from scheduling_opt.sim.semantics import with_semantics
from scheduling_opt.sim.sweep import RunConfig

_MIP = pytest.mark.skipif(
    not chronus_mip.mip_available(),
    reason="python-mip is not installed (the 'parity' extra, Python < 3.12)",
)


def _params(config: RunConfig) -> dict[str, object]:
    return dict(config.policy_params)


def test_artifact_sets_the_engine_and_the_chronus_options_only() -> None:
    config = with_semantics(RunConfig("chronus"), "artifact")
    assert (config.start_overhead, config.arrival_step, config.round_length) == (0.5, 5.0, 1.0)
    assert config.placement_table is False
    params = _params(config)
    assert (params["queue"], params["selection"], params["start_credit"]) == (
        "artifact",
        "artifact",
        True,
    )
    assert "search_rows" not in params
    # Another policy gets the engine's rules, none of chronus's options.
    assert with_semantics(RunConfig("edf"), "artifact").policy_params == ()
    assert with_semantics(RunConfig("chronus"), "default") == RunConfig("chronus")


@_MIP
@pytest.mark.parametrize(
    ("given", "rows"),
    [
        # MAX_SEARCH_JOB = 1,200 x T_l // 60: 400 for 20-minute terms, 1,200 for 60.
        ({}, 400),
        ({"lease_length": 60.0}, 1200),
        ({"lease_length": 10.0}, 200),
        # A value the configuration names wins over the preset's.
        ({"search_rows": 50}, 50),
    ],
)
def test_artifact_mip_adds_the_row_cap_for_the_term_and_the_artifacts_solver(
    given: dict[str, object], rows: int
) -> None:
    config = RunConfig("chronus", policy_params=tuple(sorted(given.items())))
    params = _params(with_semantics(config, "artifact-mip"))
    assert (params["search_rows"], params["selection"], params["queue"]) == (
        rows,
        "artifact-mip",
        "artifact",
    )


def test_artifact_mip_without_python_mip_names_the_extra(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setitem(sys.modules, "mip", None)  # import mip now raises ImportError
    with pytest.raises(InvalidInstanceError, match=r"scheduling-opt\[parity\]"):
        with_semantics(RunConfig("chronus"), "artifact-mip")
    # Not a chronus run: nothing of python-mip is needed.
    assert with_semantics(RunConfig("edf"), "artifact-mip").policy_params == ()
    # The command line: one line naming the option and the extra, exit status 2.
    status = main(["simulate", "--policy", "chronus", "--semantics", "artifact-mip", "--quiet"])
    err = capsys.readouterr().err
    assert status == 2
    assert len(err.strip().splitlines()) == 1
    assert "--semantics" in err
    assert "parity" in err


def test_an_unknown_semantics_is_refused() -> None:
    with pytest.raises(InvalidInstanceError, match="default, artifact, artifact-mip"):
        with_semantics(RunConfig("chronus"), "artefact")
