"""The commands' default output folders are ignored by git (a run in a checkout leaves it clean)."""

from __future__ import annotations

import fnmatch
from pathlib import Path

from scheduling_opt.sim.cli.simulate import DEFAULT_OUT

ROOT = Path(__file__).resolve().parent.parent
PATTERNS = [
    line.strip().rstrip("/")
    for line in (ROOT / ".gitignore").read_text(encoding="utf-8").splitlines()
    if line.strip() and not line.startswith("#")
]


def _ignored(folder: str) -> bool:
    return any(fnmatch.fnmatch(folder, pattern) for pattern in PATTERNS)


def test_every_default_output_folder_is_ignored() -> None:
    from scheduling_opt.reproduce import PAPERS

    folders = [str(DEFAULT_OUT), "bench-out", "parity"]
    folders += [f"reproduce-{name}{tail}" for name in PAPERS for tail in ("", "-quick")]
    assert [f for f in folders if not _ignored(f)] == []
    assert not _ignored("scheduling_opt")  # the patterns are not too wide
    assert not _ignored("instances")
