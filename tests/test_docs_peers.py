"""Every Python block of docs/use-from-your-scheduler.md runs as written and its assertions hold."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PAGE = ROOT / "docs" / "use-from-your-scheduler.md"
BLOCKS = re.findall(r"```python\n(.*?)```", PAGE.read_text(), flags=re.S)


def test_page_has_a_block_per_case() -> None:
    assert len(BLOCKS) >= 3


@pytest.mark.parametrize("block", BLOCKS, ids=[b.splitlines()[0][:50] for b in BLOCKS])
def test_peer_block_runs(block: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)
    exec(compile(block, "docs/use-from-your-scheduler.md", "exec"), {})
