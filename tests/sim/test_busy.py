"""The busy-size rule of ``simulate``'s default (issue 26) and the table's one-line reading."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest

from scheduling_opt.errors import InvalidInstanceError
from scheduling_opt.sim.cli.busy import (
    BUNDLED_BUSY_SERVERS,
    BUSY_MISS_RATIO,
    SCAN_START,
    SCAN_STEP,
    busy_servers,
    is_busy,
)
from scheduling_opt.sim.cli.output import reading
from scheduling_opt.sim.registry import default_policies
from scheduling_opt.sim.sweep import RunConfig, run_config


def _result(policy: str, jct: float, miss: float, slo: int = 10) -> Any:
    metrics = {"jct_mean": jct, "deadline_miss_ratio": miss, "slo_jobs": float(slo)}
    return SimpleNamespace(
        config=SimpleNamespace(policy=policy, name=policy, seed=0), metrics=metrics
    )


def test_the_scan_stops_at_the_first_size_where_every_policy_misses_enough() -> None:
    # A made-up world: "fifo" misses 1% per server below 100, "sjf" always 50% (real
    # names, since a RunConfig refuses unknown policies; the fake run ignores them).
    # By hand: fifo misses >= 5% from 95 servers down; the scan 120, 110, 100, 90 stops at 90.
    seen: list[tuple[str, int]] = []

    def fake(config: RunConfig) -> Any:
        seen.append((config.policy, config.servers))
        miss = 0.5 if config.policy == "sjf" else max(0.0, (100 - config.servers) / 100)
        return _result(config.policy, 1.0, miss)

    assert busy_servers(policies=("fifo", "sjf"), run=fake) == 90
    assert [s for _, s in seen] == [120, 120, 110, 110, 100, 100, 90, 90]


def test_no_busy_size_is_an_error_naming_the_rule() -> None:
    never = lambda config: _result(config.policy, 1.0, 0.0)  # noqa: E731
    with pytest.raises(InvalidInstanceError, match="miss 5% of the deadlines"):
        busy_servers(policies=("fifo",), start=20, step=10, run=never)


def test_is_busy_needs_every_run_at_the_ratio() -> None:
    assert is_busy([_result("a", 1, 0.05), _result("b", 1, 0.9)])
    assert not is_busy([_result("a", 1, 0.049), _result("b", 1, 0.9)])


def test_the_reading_names_the_spreads() -> None:
    line = reading(
        [_result("fifo", 300.0, 0.5), _result("srtf", 100.0, 0.1), _result("x", 200, 0.2)]
    )
    assert line == (
        "Reading: srtf has the lowest mean JCT (100.0 minutes), fifo the highest (300.0, 3.0x); "
        "srtf misses the fewest deadlines (10.0% of SLO jobs), fifo the most (50.0%)."
    )
    # Seeds of one policy are averaged; without SLO jobs there is no deadline part.
    two_seeds = [_result("a", 10.0, 0.0, 0), _result("a", 30.0, 0.0, 0), _result("b", 10.0, 0, 0)]
    assert reading(two_seeds) == (
        "Reading: b has the lowest mean JCT (10.0 minutes), a the highest (20.0, 2.0x)."
    )
    assert "\n" not in line


@pytest.mark.slow
def test_the_bundled_busy_size_is_what_the_rule_gives() -> None:
    """42 runs: the scan of the bundled day, 120 servers down to the answer."""
    runs: dict[tuple[str, int], Any] = {}

    def remember(config: RunConfig) -> Any:
        runs[config.policy, config.servers] = run_config(config)
        return runs[config.policy, config.servers]

    assert busy_servers(run=remember) == BUNDLED_BUSY_SERVERS
    above = [runs[p, BUNDLED_BUSY_SERVERS + SCAN_STEP] for p in default_policies()]
    assert not is_busy(above)
    assert min(r.metrics["deadline_miss_ratio"] for r in above) < BUSY_MISS_RATIO
    assert SCAN_START == 120  # Chronus' C120, where the scan starts
