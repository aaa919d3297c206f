"""The documentation site covers every package and every page (issue 26 item 4).

``mkdocs build --strict`` (in ``.ci/run``, with the ``docs`` extra) renders
it; these checks need no mkdocs: every public package and module of
``scheduling_opt`` has a reference directive, and every page of ``docs/`` is
in the navigation.
"""

from __future__ import annotations

import importlib.util
import pkgutil
import re
from pathlib import Path

import pytest

import scheduling_opt

ROOT = Path(__file__).resolve().parent.parent
REFERENCE = ROOT / "docs" / "reference"

#: Top-level names with no reference page, and why.
NOT_REFERENCED = {
    "cli": "the command line: README.md and `scheduling-opt --help` document it",
    "io": "a namespace of file modules: each module has its own directive",
}


def _directives() -> set[str]:
    found: set[str] = set()
    for page in REFERENCE.glob("*.md"):
        found |= set(re.findall(r"^::: (\S+)$", page.read_text(encoding="utf-8"), re.M))
    return found


def test_every_top_level_package_and_module_has_a_reference_directive() -> None:
    directives = _directives()
    names = [m.name for m in pkgutil.iter_modules(scheduling_opt.__path__)]
    assert len(names) >= 20
    missing = [
        n
        for n in names
        if n not in NOT_REFERENCED
        and not any(
            d == f"scheduling_opt.{n}" or d.startswith(f"scheduling_opt.{n}.") for d in directives
        )
    ]
    assert missing == []
    assert "scheduling_opt" in directives
    # The modules of io are each referenced.
    io_modules = [m.name for m in pkgutil.iter_modules(scheduling_opt.io.__path__)]
    assert {f"scheduling_opt.io.{m}" for m in io_modules} <= directives


def test_every_docs_page_is_in_the_navigation() -> None:
    nav = (ROOT / "mkdocs.yml").read_text(encoding="utf-8")
    pages = [p.relative_to(ROOT / "docs").as_posix() for p in (ROOT / "docs").rglob("*.md")]
    assert len(pages) >= 20
    assert [p for p in pages if p not in nav] == []


def test_sphinx_roles_become_references_and_a_missing_target_a_strict_one() -> None:
    griffe = pytest.importorskip(
        "griffe", reason="griffe is not installed (the 'docs' extra: mkdocstrings-python)"
    )
    spec = importlib.util.spec_from_file_location(
        "roles", ROOT / "tools" / "griffe_sphinx_roles.py"
    )
    assert spec is not None
    assert spec.loader is not None
    roles = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(roles)
    package = griffe.load("scheduling_opt", search_paths=[str(ROOT)])
    roles.SphinxRoles().on_package(pkg=package)
    obj = package["sim.cli.busy"]
    text = (
        ":func:`~scheduling_opt.sim.sweep.run_config` and :data:`BUSY_MISS_RATIO`, :mod:`.output`"
    )
    assert roles._rewrite(text, obj) == (
        '<autoref identifier="scheduling_opt.sim.sweep.run_config" optional>'
        "<code>run_config</code></autoref> and "
        '<autoref identifier="scheduling_opt.sim.cli.busy.BUSY_MISS_RATIO" optional>'
        "<code>BUSY_MISS_RATIO</code></autoref>, "
        '<autoref identifier="scheduling_opt.sim.cli.output" optional><code>output</code></autoref>'
    )
    # A target that exists nowhere stays a plain reference: --strict fails on it.
    assert roles._rewrite(":func:`~scheduling_opt.sim.nosuch`", obj) == (
        "[<code>nosuch</code>][scheduling_opt.sim.nosuch]"
    )
