"""Public names: each package's ``__all__`` is what it says, one name per exact solver.

A submodule must never stand where a function is expected (``from
scheduling_opt.placement import exact`` once gave the module ``exact.py``,
and calling it failed with ``'module' object is not callable``); every
registry method is its package's public function, an exact method's
registry name is its function's name with ``-``, every solution carries
its method's registry name on a direct call too, and the names of release
0.2 still work, with a ``DeprecationWarning``.
"""

from __future__ import annotations

import importlib
import inspect
import pkgutil
import sys
import types
import warnings
from typing import Any

import pytest

import scheduling_opt
from scheduling_opt.registry import get_problem, problem_names

#: Problem name -> the package that holds its solvers.
PACKAGES = {
    "allocation": "scheduling_opt.allocation",
    "batch-size": "scheduling_opt.batch_size",
    "lease": "scheduling_opt.lease",
    "mckp": "scheduling_opt.mckp",
    "memory-split": "scheduling_opt.memory_split",
    "mmkp": "scheduling_opt.mmkp",
    "placement": "scheduling_opt.placement",
    "reclaim": "scheduling_opt.reclaim",
}
#: Submodules a package exports on purpose (``policies.edl``, ``policies.antman``).
MODULE_EXPORTS = {("scheduling_opt.policies", "antman"), ("scheduling_opt.policies", "edl")}
#: Old name -> new name, per package (release 0.2's names, kept one release).
RENAMED = {
    "scheduling_opt.placement": {"exact_arcflow": "exact", "exact_cbc": "exact_pulp"},
    "scheduling_opt.allocation": {"exact_allocation": "exact"},
    "scheduling_opt.memory_split": {"exact_milp": "exact_highs"},
}


def _every_package() -> list[types.ModuleType]:
    """Every package of ``scheduling_opt``, after importing every module of the library.

    Importing all submodules first catches a submodule imported late (by a
    lazy import) that would rebind its package's attribute of the same name.
    """
    for info in pkgutil.walk_packages(scheduling_opt.__path__, "scheduling_opt."):
        importlib.import_module(info.name)
    return [
        module
        for name, module in sorted(sys.modules.items())
        if (name == "scheduling_opt" or name.startswith("scheduling_opt."))
        and hasattr(module, "__path__")
        and hasattr(module, "__all__")
    ]


def _kind(name: str) -> str:
    """What a public name's spelling promises: a constant, a type, or a function."""
    if name.startswith("__") or name.isupper() or (name[0].isupper() and "_" in name):
        return "constant"
    return "type" if name[0].isupper() else "function"


def test_every_public_name_is_what_its_spelling_says() -> None:
    checked = 0
    for package in _every_package():
        for name in package.__all__:
            # ``from package import name``, the way a scheduler writes it.
            namespace: dict[str, Any] = {}
            exec(f"from {package.__name__} import {name}", namespace)
            obj = namespace[name]
            where = f"{package.__name__}.{name}"
            if isinstance(obj, types.ModuleType):
                assert (package.__name__, name) in MODULE_EXPORTS, f"{where} is a module"
                continue
            kind = _kind(name)
            if kind == "function":
                assert inspect.isfunction(obj), f"{where} is {type(obj).__name__}, not a function"
                assert obj.__module__.startswith("scheduling_opt"), where
            elif kind == "type":
                assert not inspect.isfunction(obj), where
                assert not inspect.ismodule(obj), where
            else:
                assert not inspect.isfunction(obj), where
                assert not inspect.isclass(obj), where
            checked += 1
    assert checked > 300  # every package was seen (363 names when written)


@pytest.mark.parametrize("problem", sorted(PACKAGES))
def test_registry_methods_are_the_public_functions(problem: str) -> None:
    package = importlib.import_module(PACKAGES[problem])
    registered = get_problem(problem)
    names = {m.name for m in registered.methods}
    assert "exact" in names, problem  # the proven method of every problem is `exact`
    for method in registered.methods:
        fn_name = method.fn.__name__
        assert fn_name in package.__all__, (problem, method.name)
        assert getattr(package, fn_name) is method.fn, (problem, method.name)
        if method.exact:
            assert method.name == fn_name.replace("_", "-"), (problem, method.name, fn_name)
    assert package.exact is registered.method("exact").fn
    if "exact-pulp" in names:
        assert package.exact_pulp is registered.method("exact-pulp").fn


def test_every_problem_package_is_covered() -> None:
    assert set(PACKAGES) == set(problem_names())


def _small_input(problem: str) -> Any:
    registered = get_problem(problem)
    assert registered.generate is not None
    size = registered.sizes["quick"][0]
    return registered.parse(registered.generate(size, 0))


#: Problems whose methods take a second or more together (CBC's process, CP-SAT's start).
SLOW_TO_RUN = ("lease", "reclaim")


@pytest.mark.parametrize(
    "problem",
    [pytest.param(p, marks=pytest.mark.slow) if p in SLOW_TO_RUN else p for p in sorted(PACKAGES)],
)
def test_a_direct_call_names_its_method(problem: str) -> None:
    inp = _small_input(problem)
    for method in get_problem(problem).methods:
        solution = method.fn(inp, seed=0, time_limit=10)
        assert solution.method == method.name, (problem, method.name, solution.method)


def test_functions_outside_the_registry_carry_the_name_they_would_have() -> None:
    from scheduling_opt import batch_size, lease

    assert lease.exact_cbc(_small_input("lease"), time_limit=10).method == "exact-cbc"
    assert batch_size.exact_cpsat(_small_input("batch-size"), time_limit=10).method == (
        "exact-cpsat"
    )


@pytest.mark.parametrize(
    ("package", "old", "new"),
    [(p, old, new) for p, names in RENAMED.items() for old, new in names.items()],
)
def test_old_names_warn_and_give_the_new_function(package: str, old: str, new: str) -> None:
    module = importlib.import_module(package)
    namespace: dict[str, Any] = {}
    with pytest.warns(
        DeprecationWarning, match=f"{package}.{old} is deprecated.*use {package}.{new}"
    ):
        exec(f"from {package} import {old}", namespace)
    assert namespace[old] is getattr(module, new)
    assert old not in module.__all__
    with pytest.raises(AttributeError, match="no attribute 'exact_nothing'"):
        module.exact_nothing  # noqa: B018


def test_an_old_method_name_warns_and_runs_the_new_method() -> None:
    problem = get_problem("memory-split")
    with pytest.warns(DeprecationWarning, match="'exact-milp'.*use 'exact-highs'"):
        method = problem.method("exact-milp")
    assert method.name == "exact-highs"
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert problem.method("exact-highs").name == "exact-highs"
