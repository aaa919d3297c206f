"""Problem name -> its reader, methods, checker, decision encoder and generator.

The CLI (``scheduling-opt solve``) and the benchmark runner dispatch through
this table only. Each problem package defines one ``PROBLEM`` (a
:class:`Problem`) in its ``io`` module, the only module of the package that
knows files; the built-in ``io`` modules are imported lazily, on first use of
their problem, so ``import scheduling_opt`` stays fast. A user can add a
problem of their own with :func:`register`.

Flow of a solve: ``Problem.read(instance)`` validates the problem-specific
parts and returns the typed input ``I``; a method (an algorithm function
``fn(inp, *, seed=None, time_limit=None) -> Solution[D]``, registered as is,
with no adapter) returns a :class:`~scheduling_opt.solution.Solution`;
``Problem.check(inp, solution)`` verifies it independently and raises
:class:`~scheduling_opt.errors.VerificationError` when it does not hold;
``Problem.encode(decision)`` gives the JSON decision the CLI prints.
"""

from __future__ import annotations

import importlib
import importlib.util
import warnings
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Generic, Literal, Protocol, TypeVar

from scheduling_opt.errors import InvalidInstanceError, UnknownMethodError, UnknownProblemError
from scheduling_opt.io.instance import Instance, load
from scheduling_opt.solution import Seed, Solution
from scheduling_opt.suggest import did_you_mean

I = TypeVar("I")  # noqa: E741  (the problem's typed input)
D = TypeVar("D")  # the problem's typed decision
I_contra = TypeVar("I_contra", contravariant=True)


class Algorithm(Protocol[I_contra, D]):
    """The one calling convention of every algorithm in the library."""

    def __call__(
        self, inp: I_contra, /, *, seed: Seed = None, time_limit: float | None = None
    ) -> Solution[D]: ...


@dataclass(frozen=True, slots=True)
class Method(Generic[I, D]):
    """One way to solve a problem: an algorithm function under a registry name.

    ``exact``: it proves optimality (or says it did not). ``summary``: one
    line for ``scheduling-opt list`` (default: the function's first
    docstring line).
    """

    name: str
    fn: Algorithm[I, D]
    exact: bool = False
    summary: str = ""

    def __post_init__(self) -> None:
        if not self.summary:
            doc = (getattr(self.fn, "__doc__", None) or "").strip()
            object.__setattr__(self, "summary", doc.splitlines()[0] if doc else "")

    def run(self, inp: I, *, seed: Seed = None, time_limit: float | None = None) -> Solution[D]:
        """Run the algorithm; the solution carries this method's registry name."""
        return self.fn(inp, seed=seed, time_limit=time_limit).with_(method=self.name)


@dataclass(frozen=True, slots=True)
class Problem(Generic[I, D]):
    """Everything the CLI and the benchmark need to know about one problem.

    ``sense``: whether a smaller (``min``) or larger (``max``) objective is
    better. ``read(instance)`` validates an instance file's problem part and
    returns the typed input; ``encode(decision)`` gives the decision as
    JSON-ready values (the keys documented per problem);
    ``generate(size, seed)`` builds a seeded instance of any size its
    grammar accepts; ``size_grammar`` states that grammar and the ranges of
    its numbers (``scheduling-opt list`` shows it); ``sizes`` lists the size
    names per benchmark suite (``quick``, ``standard``, ``paper``).
    ``renamed``: old method names (old -> new) still accepted for one
    release, with a ``DeprecationWarning``.
    """

    name: str
    summary: str
    sense: Literal["min", "max"]
    read: Callable[[Instance], I]
    encode: Callable[[D], dict[str, Any]]
    methods: tuple[Method[I, D], ...]
    default: str
    check: Callable[[I, Solution[D]], None]
    generate: Callable[[str, int], Instance] | None = None
    sizes: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    size_grammar: str = ""
    renamed: Mapping[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        names = [m.name for m in self.methods]
        if len(set(names)) != len(names):
            raise ValueError(f"problem {self.name!r}: duplicate method names {names}")
        if self.default not in names:
            raise ValueError(f"problem {self.name!r}: default {self.default!r} not in {names}")
        for old, new in self.renamed.items():
            if old in names or new not in names:
                raise ValueError(f"problem {self.name!r}: bad rename {old!r} -> {new!r}")

    def method(self, name: str | None) -> Method[I, D]:
        """The method called ``name`` (None: the default method).

        An old name of ``renamed`` gives its new method with a
        ``DeprecationWarning``; an unknown name raises
        :class:`~scheduling_opt.errors.UnknownMethodError` with the closest
        known names.

        Examples
        --------
        >>> get_problem("reclaim").method("exact-pulpp")
        Traceback (most recent call last):
        ...
        scheduling_opt.errors.UnknownMethodError: unknown method 'exact-pulpp' for problem 'reclaim'; did you mean 'exact-pulp' or 'exact'? (known: aryl, aryl-plus, aryl-dp, scf, random, auto, exact, exact-two-stage, exact-pulp)
        """
        wanted = self.default if name is None else name
        if wanted in self.renamed:
            new = self.renamed[wanted]
            warnings.warn(
                f"method {wanted!r} of problem {self.name!r} is deprecated and will be "
                f"removed in the next release; use {new!r}",
                DeprecationWarning,
                stacklevel=2,
            )
            wanted = new
        for m in self.methods:
            if m.name == wanted:
                return m
        names = [m.name for m in self.methods]
        raise UnknownMethodError(
            f"unknown method {wanted!r} for problem {self.name!r}"
            f"{did_you_mean(wanted, [*names, *self.renamed])} (known: {', '.join(names)})"
        )

    @property
    def exact_methods(self) -> tuple[Method[I, D], ...]:
        return tuple(m for m in self.methods if m.exact)

    def parse(self, instance: Instance) -> I:
        """The typed input of ``instance``, after checking it is of this problem."""
        if instance.problem != self.name:
            raise InvalidInstanceError(
                "problem", f"expected {self.name!r}, got {instance.problem!r}"
            )
        return self.read(instance)

    def solve(
        self,
        instance: Instance,
        method: str | None = None,
        *,
        seed: Seed = None,
        time_limit: float | None = None,
    ) -> Solution[D]:
        """Parse ``instance`` and run one method on it."""
        chosen = self.method(method)
        return chosen.run(self.parse(instance), seed=seed, time_limit=time_limit)


#: Built-in problems and the ``io`` module defining each one's ``PROBLEM``.
_BUILTIN: dict[str, str] = {
    "allocation": "scheduling_opt.allocation.io",
    "batch-size": "scheduling_opt.batch_size.io",
    "lease": "scheduling_opt.lease.io",
    "mckp": "scheduling_opt.mckp.io",
    "mmkp": "scheduling_opt.mmkp.io",
    "memory-split": "scheduling_opt.memory_split.io",
    "placement": "scheduling_opt.placement.io",
    "reclaim": "scheduling_opt.reclaim.io",
}

_registered: dict[str, Problem[Any, Any]] = {}


def register(problem: Problem[Any, Any]) -> None:
    """Add (or replace) a problem in the registry."""
    _registered[problem.name] = problem


def _installed(module_name: str) -> bool:
    try:
        return importlib.util.find_spec(module_name) is not None
    except ModuleNotFoundError:
        return False


def problem_names() -> tuple[str, ...]:
    """Every known problem name, sorted (built-ins whose module is present)."""
    builtin = {name for name, module in _BUILTIN.items() if _installed(module)}
    return tuple(sorted(builtin | set(_registered)))


def get_problem(name: str) -> Problem[Any, Any]:
    """The problem called ``name``; unknown names list the known ones.

    Examples
    --------
    >>> get_problem("reclaim").default
    'auto'
    """
    if name in _registered:
        return _registered[name]
    module_name = _BUILTIN.get(name)
    if module_name is None or not _installed(module_name):
        known = problem_names()
        raise UnknownProblemError(
            f"unknown problem {name!r}{did_you_mean(name, known)} "
            f"(known: {', '.join(known) or 'none'})"
        )
    problem = importlib.import_module(module_name).PROBLEM
    if not isinstance(problem, Problem) or problem.name != name:
        raise TypeError(f"{module_name}.PROBLEM is not the Problem {name!r}")
    _registered[name] = problem
    return problem


def solve(
    instance: Instance,
    method: str | None = None,
    *,
    seed: Seed = None,
    time_limit: float | None = None,
) -> Solution[Any]:
    """Solve an instance with the named method (None: the default) of its own problem.

    Examples
    --------
    >>> from scheduling_opt import load
    >>> sol = solve(load("instances/reclaim-aryl-fig5.json"), "exact")
    >>> sol.status.value, sol.objective, sol.gap
    ('optimal', 1.0, 0.0)
    """
    return get_problem(instance.problem).solve(instance, method, seed=seed, time_limit=time_limit)


def validate(path: str | Path) -> Instance:
    """Load a file and run its problem's own validation; raise on the first error.

    The common sections are checked by :func:`~scheduling_opt.io.instance.load`;
    the problem-specific part (its params and data sections) by the problem's
    reader.
    """
    instance = load(path)
    get_problem(instance.problem).parse(instance)
    return instance
