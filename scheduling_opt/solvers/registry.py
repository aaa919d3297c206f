"""Problem name -> its parser, methods, checker and generator.

The CLI (``scheduling-opt solve``) and the benchmark runner dispatch through
this table only. Each solver module defines one ``PROBLEM`` (a
:class:`Problem`); the built-in modules are imported lazily, on first use of
their problem, so ``import scheduling_opt`` stays fast. A user can add a
problem of their own with :func:`register`.

Flow of a solve: ``Problem.parse(instance)`` validates the problem-specific
parts and returns the typed input; ``Method.run(input, options)`` returns a
:class:`~scheduling_opt.result.Result`; ``Problem.check(input, result)``
verifies it independently and raises
:class:`~scheduling_opt.errors.VerificationError` when it does not hold.
"""

from __future__ import annotations

import importlib
import importlib.util
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from scheduling_opt.errors import InvalidInstanceError, UnknownMethodError, UnknownProblemError
from scheduling_opt.instance import Instance
from scheduling_opt.result import Result, SolveOptions


@dataclass(frozen=True, slots=True)
class Method:
    """One way to solve a problem. ``exact``: it proves optimality (or says not)."""

    name: str
    run: Callable[[Any, SolveOptions], Result]
    exact: bool = False
    summary: str = ""


@dataclass(frozen=True, slots=True)
class Problem:
    """Everything the CLI and the benchmark need to know about one problem.

    ``sense``: whether a smaller (``min``) or larger (``max``) objective is
    better. ``generate(size, seed)`` builds a seeded instance of a named size;
    ``sizes`` lists the size names per benchmark suite (``quick``,
    ``standard``, ``paper``).
    """

    name: str
    summary: str
    sense: Literal["min", "max"]
    parse: Callable[[Instance], Any]
    methods: tuple[Method, ...]
    default: str
    check: Callable[[Any, Result], None]
    generate: Callable[[str, int], Instance] | None = None
    sizes: Mapping[str, tuple[str, ...]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        names = [m.name for m in self.methods]
        if len(set(names)) != len(names):
            raise ValueError(f"problem {self.name!r}: duplicate method names {names}")
        if self.default not in names:
            raise ValueError(f"problem {self.name!r}: default {self.default!r} not in {names}")

    def method(self, name: str | None) -> Method:
        """The method called ``name`` (None: the default method)."""
        wanted = self.default if name is None else name
        for m in self.methods:
            if m.name == wanted:
                return m
        raise UnknownMethodError(
            f"unknown method {wanted!r} for problem {self.name!r} "
            f"(known: {', '.join(m.name for m in self.methods)})"
        )

    @property
    def exact_methods(self) -> tuple[Method, ...]:
        return tuple(m for m in self.methods if m.exact)

    def solve(
        self, instance: Instance, method: str | None = None, options: SolveOptions | None = None
    ) -> Result:
        """Parse ``instance`` and run one method on it."""
        if instance.problem != self.name:
            raise InvalidInstanceError(
                "problem", f"expected {self.name!r}, got {instance.problem!r}"
            )
        chosen = self.method(method)
        return chosen.run(self.parse(instance), options or SolveOptions())


#: Built-in problems and the module defining each one's ``PROBLEM``.
_BUILTIN: dict[str, str] = {
    "allocation": "scheduling_opt.solvers.allocation",
    "batch-size": "scheduling_opt.solvers.evolution",
    "lease": "scheduling_opt.solvers.lease",
    "mckp": "scheduling_opt.solvers.knapsack",
    "memory-split": "scheduling_opt.solvers.memory_split",
    "placement": "scheduling_opt.solvers.placement",
    "reclaim": "scheduling_opt.solvers.reclaim",
}

_registered: dict[str, Problem] = {}


def register(problem: Problem) -> None:
    """Add (or replace) a problem in the registry."""
    _registered[problem.name] = problem


def _installed(module_name: str) -> bool:
    return importlib.util.find_spec(module_name) is not None


def problem_names() -> tuple[str, ...]:
    """Every known problem name, sorted (built-ins whose module is present)."""
    builtin = {name for name, module in _BUILTIN.items() if _installed(module)}
    return tuple(sorted(builtin | set(_registered)))


def get_problem(name: str) -> Problem:
    """The problem called ``name``; unknown names list the known ones."""
    if name in _registered:
        return _registered[name]
    module_name = _BUILTIN.get(name)
    if module_name is None or not _installed(module_name):
        raise UnknownProblemError(
            f"unknown problem {name!r} (known: {', '.join(problem_names()) or 'none'})"
        )
    problem = importlib.import_module(module_name).PROBLEM
    if not isinstance(problem, Problem) or problem.name != name:
        raise TypeError(f"{module_name}.PROBLEM is not the Problem {name!r}")
    _registered[name] = problem
    return problem


def solve(
    instance: Instance, method: str | None = None, options: SolveOptions | None = None
) -> Result:
    """Solve an instance with the named method of its own problem."""
    return get_problem(instance.problem).solve(instance, method, options)
