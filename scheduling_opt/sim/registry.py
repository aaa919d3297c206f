"""The policies by name, derived from their declarations; a user's policy joins the same way.

Every name comes from a :class:`~scheduling_opt.sim.declare.PolicySpec`:
the built-in families' (:data:`scheduling_opt.sim.policies.SPECS`), those
a user registers with :func:`register_policy` (directly, from a module or
``.py`` file given to ``--plugin``: :func:`load_plugin`), and those of
installed packages that declare an entry point in the group
``scheduling_opt.policies`` (loaded on first use). A factory makes a fresh
policy per run, so two runs never share state.

``--policy NAME:key=value,key=value`` (:func:`parse_policy`) and a
configuration's ``policy_params`` (:func:`check_params`) are checked
against the declaration: an unknown key, a key the variant fixes or a bad
value is one error naming the policy, the key and what is accepted.

Examples
--------
>>> parse_policy("tiresias:promote_knob=4,thresholds=240,480")
('tiresias', (('promote_knob', 4.0), ('thresholds', (240.0, 480.0))))
>>> "chronus" in policy_names() and default_policies()[0]
'fifo'
"""

from __future__ import annotations

import importlib
import importlib.util
import inspect
import sys
import typing
import warnings
from collections.abc import Iterable, Mapping
from pathlib import Path
from types import ModuleType
from typing import Any

from scheduling_opt.errors import InvalidInstanceError
from scheduling_opt.jsonpath import show
from scheduling_opt.sim import provenance
from scheduling_opt.sim.cluster import ClusterSpec
from scheduling_opt.sim.declare import Factory, Kind, Param, PolicySpec, Semantics, unknown_key
from scheduling_opt.sim.protocol import Policy
from scheduling_opt.sim.workload import Workload
from scheduling_opt.suggest import close_matches

__all__ = [
    "ENTRY_POINT_GROUP",
    "check_params",
    "default_policies",
    "load_plugin",
    "make_policy",
    "parse_policy",
    "policy_names",
    "policy_spec",
    "register_policy",
    "run_cluster",
    "run_workload",
    "semantics",
]

#: The entry-point group an installed package declares its policies in.
ENTRY_POINT_GROUP = "scheduling_opt.policies"

_specs: dict[str, PolicySpec] = {}
_builtin: set[str] = set()
_loaded = {"builtins": False, "entry_points": False}
_plugins: dict[str, ModuleType] = {}


def _catalog() -> dict[str, PolicySpec]:
    """Every known name, the built-ins first (imported on first use), then entry points."""
    if not _loaded["builtins"]:
        _loaded["builtins"] = True
        from scheduling_opt.sim.policies import SPECS

        for spec in SPECS:
            _specs.setdefault(spec.name, spec)
            _builtin.add(spec.name)
    if not _loaded["entry_points"]:
        _loaded["entry_points"] = True
        _load_entry_points()
    return _specs


def policy_names(family: str | None = None) -> tuple[str, ...]:
    """The registered names in report order (a family's alone with ``family``).

    Examples
    --------
    >>> policy_names("baselines")[:3]
    ('fifo', 'sjf', 'edf')
    """
    return tuple(n for n, s in _catalog().items() if family is None or s.family == family)


def default_policies() -> tuple[str, ...]:
    """``scheduling-opt simulate``'s default policies (declared ``default_run``)."""
    return tuple(n for n, s in _catalog().items() if s.default_run)


def policy_spec(name: object, option: str = "policy") -> PolicySpec:
    """The declaration of ``name``, or an error naming the closest known names.

    Examples
    --------
    >>> policy_spec("tiresais")
    Traceback (most recent call last):
    ...
    scheduling_opt.errors.InvalidInstanceError: policy: unknown policy 'tiresais' (did you mean 'tiresias' or 'edl-tiresias'?); 'scheduling-opt policies' lists them
    """
    catalog = _catalog()
    spec = catalog.get(name) if isinstance(name, str) else None
    if spec is None:
        close = close_matches(name, catalog) if isinstance(name, str) else []
        hint = f" (did you mean {' or '.join(repr(c) for c in close)}?)" if close else ""
        raise InvalidInstanceError(
            option,
            f"unknown policy {show(name)}{hint}; 'scheduling-opt policies' lists them",
        )
    return spec


def check_params(name: str, params: Mapping[str, object]) -> tuple[tuple[str, object], ...]:
    """``params`` of policy ``name`` checked against its declaration, normalized, in order."""
    spec = policy_spec(name)
    resolved = spec.resolve(params)
    return tuple((k, resolved[k]) for k in params)


def make_policy(
    name: str,
    workload: Workload,
    cluster: ClusterSpec,
    params: Mapping[str, object] | None = None,
) -> Policy:
    """A fresh policy ``name`` for one run, its parameters checked against its declaration.

    Examples
    --------
    >>> from scheduling_opt.sim.workload import SimJob
    >>> w = Workload.of([SimJob("0", 0.0, 1, 1.0)], "demo")
    >>> make_policy("edf", w, ClusterSpec.uniform(1, 8)).name
    'edf'
    """
    return policy_spec(name, "name").make(workload, cluster, dict(params or {}))


def run_cluster(name: str, cluster: ClusterSpec, params: Mapping[str, object]) -> ClusterSpec:
    """``cluster`` with what policy ``name`` adds to it (its declared ``cluster`` hook)."""
    spec = policy_spec(name)
    return cluster if spec.cluster is None else spec.cluster(cluster, spec.resolve(params))


def run_workload(name: str, workload: Workload, params: Mapping[str, object]) -> Workload:
    """``workload`` as policy ``name``'s scenario has it (its declared ``workload`` hook).

    The hook gets every parameter, the variant's fixed ones included (a
    variant may fix a scenario). The same object when the policy declares
    no hook, so every other policy's run is unchanged.

    Examples
    --------
    >>> from scheduling_opt.sim.workload import SimJob
    >>> w = Workload.of([SimJob("0", 0.0, 1, 1.0)], "demo")
    >>> run_workload("fifo", w, {}) is w
    True
    """
    spec = policy_spec(name)
    if spec.workload is None:
        return workload
    return spec.workload(workload, {**spec.resolve(params), **spec.fixed})


def semantics(name: str | None = None) -> tuple[Semantics, ...]:
    """The named semantics the families declare (the one ``name``, or all, each once)."""
    seen: dict[str, Semantics] = {}
    for spec in _catalog().values():
        for s in spec.semantics:
            seen.setdefault(s.name, s)
    return tuple(s for n, s in seen.items() if name is None or n == name)


def parse_policy(text: str, option: str = "--policy") -> tuple[str, tuple[tuple[str, object], ...]]:
    """``NAME`` or ``NAME:key=value,key=value`` as the policy's name and checked parameters.

    A part without ``=`` continues the value before it, so a list value
    keeps its commas (``thresholds=240,480``).

    Examples
    --------
    >>> parse_policy("chronus:lease_length=15")
    ('chronus', (('lease_length', 15.0),))
    >>> parse_policy("chronus:lease_lenght=15")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    scheduling_opt.errors.InvalidInstanceError: --policy: chronus: unknown parameter 'lease_lenght' (did you mean 'lease_length'?); accepted: ...
    """
    name, sep, rest = text.partition(":")
    spec = policy_spec(name.strip(), option)
    if not sep:
        return spec.name, ()
    pairs: list[list[str]] = []
    for part in rest.split(","):
        key, eq, value = part.partition("=")
        if eq:
            pairs.append([key.strip(), value])
        elif pairs:
            pairs[-1][1] += "," + part
        elif part.strip():
            raise InvalidInstanceError(
                option, f"{spec.name}: expected key=value after ':', got {part!r}"
            )
    out: dict[str, object] = {}
    try:
        for key, value in pairs:
            param = spec.param(key)
            if param is None:
                raise InvalidInstanceError(option, f"{spec.name}: {unknown_key(spec, key)}")
            if key in out:
                raise InvalidInstanceError(option, f"{spec.name}: {key!r} given twice")
            out[key] = param.parse(value, spec.name)
    except InvalidInstanceError as e:
        raise InvalidInstanceError(option, e.reason) from None
    return spec.name, tuple(out.items())


# ---------------------------------------------------------------- users' policies


def register_policy(
    name: str | PolicySpec,
    factory: Factory | None = None,
    *,
    params: Iterable[Param] | None = None,
    summary: str = "",
    replace: bool = False,
) -> PolicySpec:
    """Register a policy under ``name``: ``factory(workload, cluster, **params) -> Policy``.

    ``params`` declares what a run may set; by default they are read from
    the factory's keyword parameters with defaults (their annotation, or
    the default's type, gives the kind: bool, int, float, str, a tuple of
    floats; anything else is a library-only value). A
    :class:`~scheduling_opt.sim.declare.PolicySpec` may be given whole
    instead. A name already registered is refused unless ``replace`` (a
    built-in name always is).

    Parameters
    ----------
    name : str or PolicySpec
        The name ``--policy`` takes, or a whole declaration.
    factory : callable
        Makes a fresh policy for one run.
    params : iterable of Param, optional
        The parameters; default: from the factory's signature.
    summary : str
        One line of help (default: the factory's docstring's first line).
    replace : bool
        Replace an earlier registration of the same (non built-in) name.

    Returns
    -------
    PolicySpec
        The declaration registered.

    Examples
    --------
    >>> from scheduling_opt.sim import Decision
    >>> class Idle:
    ...     name = "idle"
    ...     def decide(self, view):
    ...         return Decision()
    >>> def make_idle(workload, cluster, *, patience: float = 1.0):
    ...     "Starts nothing."
    ...     return Idle()
    >>> spec = register_policy("idle-example", make_idle, replace=True)
    >>> [(p.name, p.kind, p.default) for p in spec.params], spec.summary
    ([('patience', 'float', 1.0)], 'Starts nothing.')
    """
    if isinstance(name, PolicySpec):
        spec = name
    else:
        if not isinstance(name, str) or not name or ":" in name or "," in name:
            raise InvalidInstanceError(
                "name", f"must be a name without ':' or ',', got {show(name)}"
            )
        if factory is None or not callable(factory):
            raise InvalidInstanceError("factory", f"must be callable, got {show(factory)}")
        declared = tuple(params) if params is not None else params_of(factory)
        doc = (inspect.getdoc(factory) or "").strip().splitlines()
        spec = PolicySpec(
            name,
            summary or (doc[0] if doc else ""),
            factory,
            declared,
            family=getattr(factory, "__module__", "") or "",
        )
    catalog = _catalog()
    if spec.name in _builtin:
        raise InvalidInstanceError("name", f"{spec.name!r} is a built-in policy")
    if spec.name in catalog and not replace:
        raise InvalidInstanceError(
            "name", f"{spec.name!r} is already registered (replace=True replaces it)"
        )
    catalog[spec.name] = spec
    return spec


_KINDS: dict[object, Kind] = {bool: "bool", int: "int", float: "float", str: "str"}


def params_of(factory: Factory) -> tuple[Param, ...]:
    """The parameters a factory's signature declares: keyword parameters after the first two.

    Examples
    --------
    >>> def make(workload, cluster, *, knob: int = 3, name="x"): ...
    >>> [(p.name, p.kind, p.default) for p in params_of(make)]
    [('knob', 'int', 3), ('name', 'str', 'x')]
    """
    try:
        signature = inspect.signature(factory)
    except (TypeError, ValueError):
        return ()
    try:
        hints = typing.get_type_hints(factory)
    except Exception:  # an annotation that does not resolve: fall back on the defaults
        hints = {}
    out = []
    for i, p in enumerate(signature.parameters.values()):
        if i < 2 and p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD):
            continue  # workload, cluster
        if p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD):
            continue
        if p.default is p.empty:
            raise InvalidInstanceError(
                "factory", f"parameter {p.name!r} needs a default (a run may leave it out)"
            )
        out.append(Param(p.name, _kind(hints.get(p.name), p.default), p.default, ""))
    return tuple(out)


def _kind(hint: object, default: object) -> Kind:
    args = typing.get_args(hint)
    optional = type(None) in args
    if optional:
        rest = [a for a in args if a is not type(None)]
        hint = rest[0] if len(rest) == 1 else None
    if hint in _KINDS:
        return _KINDS[hint]
    if typing.get_origin(hint) is tuple or isinstance(default, tuple):
        values: tuple[object, ...] = default if isinstance(default, tuple) else ()
        items = typing.get_args(hint) or tuple(type(v) for v in values)
        if all(a in (float, int, Ellipsis) for a in items):
            return "floats"
    kind = _KINDS.get(type(default))
    return kind if kind is not None and not optional else "any"


def load_plugin(text: str, option: str = "--plugin") -> ModuleType:
    """Import a module by name, or a ``.py`` file by path, that registers policies (once).

    Raises
    ------
    InvalidInstanceError
        Naming ``option`` and the plug-in: not found, or its import failed
        (the exception's type and message).
    """
    key = _plugin_key(text)
    got = _plugins.get(key)
    if got is not None:
        return got
    try:
        if key.endswith(".py"):
            path = Path(key)
            if not path.is_file():
                raise InvalidInstanceError(option, f"{text}: no such file")
            spec = importlib.util.spec_from_file_location(_module_name(path), path)
            if spec is None or spec.loader is None:
                raise InvalidInstanceError(option, f"{text}: not a Python file")
            module = importlib.util.module_from_spec(spec)
            sys.modules[spec.name] = module
            try:
                spec.loader.exec_module(module)
            except BaseException:
                del sys.modules[spec.name]
                raise
        else:
            module = importlib.import_module(key)
    except InvalidInstanceError:
        raise
    except ModuleNotFoundError as e:
        raise InvalidInstanceError(option, f"{text}: {e}") from None
    except Exception as e:
        raise InvalidInstanceError(option, f"{text}: {type(e).__name__}: {e}") from None
    _plugins[key] = module
    source = getattr(module, "__file__", None)
    if source:
        # The code's digest as loaded: an edit after this point makes a new
        # process (a new key), never a run of the old code under the new key.
        provenance.module_digest(source, str(Path(source).parent))
    return module


def plugin_key(text: str) -> str:
    """How a plug-in is named in a configuration: a file's absolute path, or the module name."""
    return _plugin_key(text)


def _plugin_key(text: str) -> str:
    if text.endswith(".py") or "/" in text or "\\" in text:
        return str(Path(text).resolve())
    return text


def _module_name(path: Path) -> str:
    import hashlib

    tag = hashlib.sha256(str(path).encode()).hexdigest()[:10]
    stem = "".join(c if c.isalnum() else "_" for c in path.stem)
    return f"scheduling_opt_plugin_{stem}_{tag}"


def plugin_module(key: str) -> ModuleType | None:
    """The module of a loaded plug-in (None: not loaded)."""
    return _plugins.get(key)


def _load_entry_points() -> None:
    from importlib.metadata import entry_points

    for ep in entry_points(group=ENTRY_POINT_GROUP):
        try:
            obj: Any = ep.load()
            if isinstance(obj, PolicySpec):
                register_policy(obj, replace=True)
            elif isinstance(obj, (tuple, list)):
                for spec in obj:
                    register_policy(spec, replace=True)
            elif callable(obj) and not isinstance(obj, ModuleType):
                obj()
        except Exception as e:  # a broken installed plug-in must not stop every run
            warnings.warn(
                f"policy entry point {ep.name!r} ({ep.value}) failed: {type(e).__name__}: {e}",
                RuntimeWarning,
                stacklevel=2,
            )
