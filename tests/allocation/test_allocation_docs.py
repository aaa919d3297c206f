"""The documented size of allocation's `auto` enumeration is the code's (docs/index.md said 128)."""

from __future__ import annotations

from pathlib import Path

from scheduling_opt.allocation.auto import AUTO_EXACT_COUNT
from scheduling_opt.registry import get_problem

ROOT = Path(__file__).resolve().parents[2]


def test_index_and_list_state_the_auto_enumeration_limit_of_the_code() -> None:
    index = (ROOT / "docs" / "index.md").read_text(encoding="utf-8")
    assert f"exact enumeration when at most {AUTO_EXACT_COUNT} allocations" in index
    summary = get_problem("allocation").method("auto").summary
    assert f"exact if <= {AUTO_EXACT_COUNT} allocations" in summary
