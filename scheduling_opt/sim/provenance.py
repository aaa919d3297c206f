"""What a run's numbers depend on besides its configuration: the code and the data, as digests.

A cached run is reused only when its key covers everything that decides
its numbers (:meth:`~scheduling_opt.sim.sweep.RunConfig.digest`): the
configuration, the workload's data (a trace file's bytes, the bundled
files), the engine's code and the policy's code. The code is read from
the source files, never from version numbers bumped by hand, so editing a
policy (ours, or a user's plug-in) makes its cached runs stale at once,
and editing one policy leaves every other policy's runs cached.

:func:`code_digest` hashes a set of modules and every module of
``scheduling_opt`` they import, transitively (imports inside functions
included: a factory imports its policy lazily). The imports are read
from the files' syntax trees; nothing is executed. The engine's digest
starts from :mod:`scheduling_opt.sim.sweep` and leaves the policy
families out (each run adds its own family's); a plug-in's digest also
follows imports of modules in the plug-in's own folder. Files are hashed
once per process (a few milliseconds each, about 0.3 s for the engine's
hundred modules).
"""

from __future__ import annotations

import ast
import hashlib
from collections.abc import Iterable
from functools import cache, lru_cache
from pathlib import Path

import scheduling_opt

#: The package's root folder.
ROOT = Path(scheduling_opt.__file__).resolve().parent
#: Where the built-in policy families live (left out of the engine's digest).
FAMILIES = ROOT / "sim" / "policies"
#: The catalog of the built-in families (imports every one of them).
CATALOG = FAMILIES / "__init__.py"
#: Data files the engine reads (bundled excerpt, speed tables, load curves).
DATA = ROOT / "sim" / "data"


@cache
def _read(path: Path) -> tuple[str, tuple[str, ...]]:
    """A file's SHA-256 and the absolute module names it imports (relative ones resolved)."""
    data = path.read_bytes()
    digest = hashlib.sha256(data).hexdigest()
    try:
        tree = ast.parse(data, filename=str(path))
    except SyntaxError:
        return digest, ()
    package = _package_of(path)
    names: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.extend(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".") if package else []
                keep = len(parts) - (node.level - 1)
                base = ".".join([*parts[: max(keep, 0)], *([base] if base else [])])
            names.append(base)
            # ``from package import module`` imports a module too.
            names.extend(f"{base}.{a.name}" for a in node.names if a.name != "*")
    return digest, tuple(n for n in names if n)


def _package_of(path: Path) -> str:
    """The dotted package ``path`` belongs to, when it lies in ``scheduling_opt``."""
    try:
        rel = path.relative_to(ROOT.parent)
    except ValueError:
        return ""
    parts = list(rel.with_suffix("").parts)
    return ".".join(parts[:-1])


def _files_of(module: str, roots: tuple[Path, ...]) -> list[Path]:
    """The files importing ``module`` executes (its parents' ``__init__`` too), under ``roots``."""
    parts = module.split(".")
    out: list[Path] = []
    for root in roots:
        base = root.parent if root.name == parts[0] else root
        if not (base / parts[0]).exists() and not (base / f"{parts[0]}.py").exists():
            continue
        for k in range(1, len(parts) + 1):
            folder = base.joinpath(*parts[:k])
            init = folder / "__init__.py"
            if init.is_file():
                out.append(init)
            elif folder.with_suffix(".py").is_file():
                out.append(folder.with_suffix(".py"))
                break
    return out


def code_files(
    start: Iterable[Path], *, extra_roots: tuple[Path, ...] = (), skip: Path | None = None
) -> tuple[Path, ...]:
    """``start`` and every module of ``scheduling_opt`` (or under ``extra_roots``) they import.

    ``skip``: a folder whose modules are not followed (the policy families,
    for the engine's digest). The families' catalog
    (``sim/policies/__init__.py``, which imports every family) is never
    followed: importing one family runs it, but only what a family imports
    itself decides its runs (the families are independent, an import-linter
    contract). Sorted, each once.
    """
    roots = (ROOT, *extra_roots)
    seen: set[Path] = set()
    todo = [p.resolve() for p in start]
    while todo:
        path = todo.pop()
        if path in seen or path == CATALOG or (skip is not None and path.is_relative_to(skip)):
            continue
        seen.add(path)
        for name in _read(path)[1]:
            if name.split(".")[0] != "scheduling_opt" and not extra_roots:
                continue
            todo.extend(_files_of(name, roots))
    return tuple(sorted(seen))


def code_digest(files: Iterable[Path]) -> str:
    """One SHA-256 over the files' contents (their paths relative to their package included)."""
    h = hashlib.sha256()
    for path in sorted(files):
        h.update(_label(path).encode())
        h.update(_read(path)[0].encode())
    return h.hexdigest()[:20]


def _label(path: Path) -> str:
    try:
        return str(path.relative_to(ROOT.parent))
    except ValueError:
        return path.name


@lru_cache(maxsize=1)
def engine_digest() -> str:
    """The digest of the engine, the run function and its data files (not the policy families)."""
    files = code_files([ROOT / "sim" / "sweep.py"], skip=FAMILIES)
    data = tuple(sorted(p for p in DATA.iterdir() if p.is_file()))
    return code_digest((*files, *data))


@cache
def module_digest(module_file: str, folder: str = "") -> str:
    """The digest of a policy's code: its module (or package) and what it imports.

    ``folder``: a plug-in's own folder, whose modules it may import too.
    For a module inside a built-in family, the whole family's package.
    """
    path = Path(module_file).resolve()
    start: list[Path]
    if path.is_relative_to(FAMILIES):
        family = FAMILIES / path.relative_to(FAMILIES).parts[0]
        start = sorted(family.rglob("*.py")) if family.is_dir() else [path]
    else:
        start = [path]
    extra = (Path(folder).resolve(),) if folder else ()
    return code_digest(code_files(start, extra_roots=extra))


@lru_cache(maxsize=64)
def file_digest(path: str, size: int, mtime_ns: int) -> str:
    """A data file's SHA-256 (memoized by path, size and modification time)."""
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()[:20]


def data_digest(path: str | Path) -> str:
    """The digest of a workload file's bytes.

    Examples
    --------
    >>> import tempfile
    >>> with tempfile.NamedTemporaryFile("w", suffix=".csv", delete=False) as f:
    ...     _ = f.write("a,b\\n")
    >>> data_digest(f.name) == data_digest(f.name)
    True
    """
    p = Path(path)
    st = p.stat()
    return file_digest(str(p.resolve()), st.st_size, st.st_mtime_ns)
