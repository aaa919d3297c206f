"""The code of docs/testing.md runs and fails the way the page shows."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from hypothesis import find, settings

from scheduling_opt.testing import (
    InvalidSolutionError,
    NotWithinGapError,
    assert_within,
    reclaim_inputs,
)

PAGE = Path(__file__).resolve().parents[2] / "docs" / "testing.md"


def _namespace() -> dict[str, Any]:
    blocks = re.findall(r"```python\n(.*?)```", PAGE.read_text(encoding="utf-8"), re.S)
    namespace: dict[str, Any] = {}
    exec("\n".join(blocks[:2]), namespace)  # the best-fit and reclaim examples
    return namespace


def test_the_best_fit_example_fails_with_the_capacity_rule() -> None:
    ns = _namespace()
    with pytest.raises(InvalidSolutionError) as info:
        ns["test_my_best_fit_is_valid"]()
    assert info.value.rule.startswith("capacity")
    assert "over-full" in info.value.detail


@pytest.mark.slow
def test_the_composed_strategy_example_draws() -> None:
    blocks = re.findall(r"```python\n(.*?)```", PAGE.read_text(encoding="utf-8"), re.S)
    namespace: dict[str, Any] = {}
    exec(blocks[2], namespace)
    cluster, jobs, placement = find(namespace["loaned_clusters_with_work"](), lambda case: True)
    assert len(cluster.on_loan_servers()) >= 2
    assert len(jobs) >= 1
    assert set(placement.jobs()) <= {j.id for j in jobs}


@pytest.mark.slow
def test_the_reclaim_example_is_beaten_by_the_optimum() -> None:
    ns = _namespace()
    search = settings(
        parent=settings.default, max_examples=2000, database=None, deadline=None, derandomize=True
    )

    def beaten(inp: Any) -> bool:
        try:
            assert_within(inp, ns["my_reclaim"](inp))
        except NotWithinGapError:
            return True
        return False

    inp = find(reclaim_inputs(), beaten, settings=search)
    assert inp.n_reclaim >= 1
    assert len(inp.jobs) >= 1
