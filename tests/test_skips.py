"""Every skip explains itself: a reason in the test, shown by ``-rs`` in every run.

The test install (``pip install -e ".[test,dev]"``, the README's) brings
matplotlib, so the plots' tests run; what can still skip (python-mip, the
docs' griffe, dask) says which extra it needs.
"""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
# Read as text: tomllib is Python 3.11+, the project supports 3.10.
PYPROJECT = (ROOT / "pyproject.toml").read_text(encoding="utf-8")


def _calls(source: str, name: str) -> list[str]:
    """The argument text of every ``name(...)`` call (balanced parentheses)."""
    found = []
    for match in re.finditer(re.escape(name) + r"\(", source):
        depth, i = 1, match.end()
        while depth:
            depth += {"(": 1, ")": -1}.get(source[i], 0)
            i += 1
        found.append(source[match.end() : i - 1])
    return found


def test_every_skip_in_the_tests_gives_its_reason() -> None:
    calls = []
    for path in sorted((ROOT / "tests").rglob("*.py")):
        if path.name == "test_skips.py":
            continue
        source = path.read_text(encoding="utf-8")
        for name in ("pytest.importorskip", "pytest.mark.skipif", "pytest.skip"):
            calls += [(path.name, name, args) for args in _calls(source, name)]
    assert len(calls) >= 8  # the skips there are (written with this test)
    unexplained = [
        (file, name)
        for file, name, args in calls
        if "reason=" not in args and not (name == "pytest.skip" and args.strip())
    ]
    assert unexplained == []


def test_the_test_install_draws_plots_and_the_summary_lists_skips() -> None:
    test_extra = re.search(r"^test = \[(.*?)^\]", PYPROJECT, re.M | re.S)
    assert test_extra is not None
    assert '"matplotlib>=' in test_extra.group(1)
    addopts = re.search(r'^addopts = "(.*)"$', PYPROJECT, re.M)
    assert addopts is not None
    assert "-rs" in addopts.group(1).split()
