"""A griffe extension for the docs site: Sphinx roles in docstrings become cross-references.

The package's numpydoc docstrings name other objects with Sphinx roles
(``:func:`~scheduling_opt.allocation.free_capacity```), which mkdocstrings
would show as raw text. This extension, loaded by ``mkdocs.yml``, rewrites
each role into a mkdocs-autorefs reference before rendering:

- a relative (``.edl``) or short (``run_config``) target is first qualified
  against the object's module;
- a target that exists in the package becomes an optional reference: a link
  when a reference page renders it, code otherwise (a private module's
  helper has no page);
- a target that exists nowhere (a typo, a renamed or removed object)
  becomes a plain reference, which ``mkdocs build --strict`` fails on: a
  missing reference breaks the build;
- ``~`` shows the last part of the name only, as in Sphinx.
"""

from __future__ import annotations

import re
from typing import Any

import griffe

ROLE = re.compile(r":(?:func|class|mod|data|meth|attr|exc|obj):`(~?)([\w.]+)`")


def _module_path(obj: Any) -> str:
    while obj is not None and not getattr(obj, "is_module", False):
        obj = obj.parent
    return str(obj.path) if obj is not None else ""


def _qualify(target: str, obj: Any) -> str | None:
    """The full path of a relative or short target, or None when it cannot be found."""
    module = _module_path(obj)
    if target.startswith("."):
        # Relative to the package: the module's own when it is an __init__.
        init = getattr(_find(module), "is_init_module", False) or module == _PACKAGE.path
        return (module if init else module.rpartition(".")[0]) + target
    for scope in (getattr(obj, "path", ""), module, module.rpartition(".")[0]):
        if scope and _find(f"{scope}.{target}") is not None:
            return f"{scope}.{target}"
    return None


_PACKAGE: Any = None


def _find(path: str) -> Any:
    if _PACKAGE is None or not path.startswith(_PACKAGE.path):
        return None
    try:
        return _PACKAGE[path[len(_PACKAGE.path) + 1 :]] if path != _PACKAGE.path else _PACKAGE
    except (KeyError, griffe.AliasResolutionError, griffe.CyclicAliasError):
        return None


def _rewrite(text: str, obj: Any) -> str:
    def link(match: re.Match[str]) -> str:
        short, target = match[1] == "~", match[2]
        title = f"<code>{target.rpartition('.')[2] if short else target.lstrip('.')}</code>"
        full = target if target.startswith("scheduling_opt.") else _qualify(target, obj)
        if full is None or _find(full) is None:
            return f"[{title}][{full or target}]"
        return f'<autoref identifier="{full}" optional>{title}</autoref>'

    return ROLE.sub(link, text)


class SphinxRoles(griffe.Extension):
    """Rewrite the Sphinx roles of every docstring of the package as cross-references."""

    def on_package(self, *, pkg: griffe.Module, **kwargs: Any) -> None:
        global _PACKAGE
        _PACKAGE = pkg
        self._walk(pkg, set())

    def _walk(self, obj: Any, seen: set[str]) -> None:
        if obj.is_alias or obj.path in seen:
            return
        seen.add(obj.path)
        if obj.docstring is not None:
            obj.docstring.value = _rewrite(obj.docstring.value, obj)
        for member in obj.members.values():
            self._walk(member, seen)
