"""What a simulator policy declares about itself, once: names, parameters, cluster, semantics.

A policy family (a package of :mod:`scheduling_opt.sim.policies`, or a
user's module) describes each policy name it offers as a
:class:`PolicySpec`: the factory that makes a fresh policy for one run,
the parameters a run may set (:class:`Param`: type, default, range, one
line of help), the settings its variant fixes, what it adds to the
cluster, what its scenario makes of the jobs, and the named semantics it
takes part in (:class:`Semantics`).
Everything else is derived from these declarations by
:mod:`scheduling_opt.sim.registry`: the names ``--policy`` accepts, its
help, the check of ``--policy NAME:key=value`` and of a configuration's
``policy_params``, and the presets of ``--semantics``.

The declarations are plain data with no import of the policy's code: a
factory imports its module when it is called, so listing the policies
costs nothing.

Examples
--------
>>> p = Param("lease_length", "float", 20.0, "term length", low=0.0, low_open=True)
>>> p.parse("15", "chronus")
15.0
>>> p.describe()
'float > 0 (default 20.0)'
>>> p.parse("-1", "chronus")
Traceback (most recent call last):
...
scheduling_opt.errors.InvalidInstanceError: policy_params: chronus: lease_length: must be > 0, got -1.0
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from scheduling_opt.errors import InvalidInstanceError
from scheduling_opt.jsonpath import plain, read_int, read_number, show
from scheduling_opt.sim.cluster import ClusterSpec
from scheduling_opt.suggest import close_matches

if TYPE_CHECKING:
    from scheduling_opt.sim.protocol import Policy
    from scheduling_opt.sim.workload import Workload

#: The value types a parameter may have. ``floats``: a tuple of numbers
#: (``240,480`` on the command line); ``path``: a file (its absolute path
#: from the command line; a library call may give an object that stands for
#: the file's contents); ``any``: a value only a library call can give (a
#: mapping of quotas), refused on the command line.
Kind = Literal["bool", "int", "float", "str", "floats", "path", "any"]

#: ``factory(workload, cluster, **params) -> Policy``: a fresh policy for one run.
Factory = Callable[..., "Policy"]
#: ``throughput(params, share_slowdown, host_slowdown)``: the most speed-1 work one
#: GPU carries under the policy (1 for one job per GPU at speed at most 1 per GPU;
#: more when it shares GPUs), or a sentence saying why no offline bound covers its
#: runs; ``share_slowdown`` and ``host_slowdown`` are the engine's interference.
Throughput = Callable[[Mapping[str, object], float, float], "float | str"]


def one_job_per_gpu(params: Mapping[str, object], share: float, host: float) -> float:
    """The throughput of a policy that never shares a GPU nor speeds a job past 1 per GPU.

    Examples
    --------
    >>> one_job_per_gpu({}, 0.43, 0.034)
    1.0
    """
    return 1.0


_TRUE = ("true", "yes", "on", "1")
_FALSE = ("false", "no", "off", "0")


#: The library argument a parameter's error names (``--policy`` on the command
#: line: :data:`scheduling_opt.sim.cli.options.OPTIONS`).
WHERE = "policy_params"


@dataclass(frozen=True, slots=True)
class Param:
    """One parameter a policy accepts: its type, default, range and one line of help.

    ``low``/``high`` bound a number (``low_open``: strictly above ``low``);
    ``choices`` the values of a string; ``optional``: None is accepted too
    (``none`` on the command line). :meth:`check` validates a value from a
    library call, :meth:`parse` a value from the command line; both raise
    an :class:`~scheduling_opt.errors.InvalidInstanceError` that names the
    policy, the parameter and what it accepts.
    """

    name: str
    kind: Kind
    default: object
    help: str
    choices: tuple[str, ...] = ()
    low: float | None = None
    high: float | None = None
    low_open: bool = False
    optional: bool = False

    def describe(self) -> str:
        """What the parameter accepts and its default, in a few words.

        Examples
        --------
        >>> Param("queue", "str", "chronus", "", choices=("chronus", "artifact")).describe()
        "one of chronus, artifact (default 'chronus')"
        >>> Param("max_terms", "int", 72, "", low=1, optional=True).describe()
        'int >= 1 or none (default 72)'
        """
        if self.kind == "str" and self.choices:
            what = f"one of {', '.join(self.choices)}"
        elif self.kind == "floats":
            what = "numbers separated by commas"
        elif self.kind == "any":
            what = "a value from a library call only"
        elif self.kind == "path":
            what = "a file"
        else:
            what = self.kind
            if self.low is not None:
                what += f" {'>' if self.low_open else '>='} {_number(self.low)}"
            if self.high is not None:
                what += f"{',' if self.low is not None else ''} <= {_number(self.high)}"
        if self.optional:
            what += " or none"
        return f"{what} (default {self.default!r})"

    def _fail(self, policy: str, reason: str) -> InvalidInstanceError:
        return InvalidInstanceError(WHERE, f"{policy}: {self.name}: {reason}")

    def check(self, value: object, policy: str) -> object:
        """``value`` normalized (numpy scalars to Python, an int to a float where a float goes).

        Examples
        --------
        >>> Param("knob", "float", 8.0, "", low=0.0).check(4, "tiresias")
        4.0
        >>> Param("knob", "float", 8.0, "", low=0.0).check(True, "tiresias")
        Traceback (most recent call last):
        ...
        scheduling_opt.errors.InvalidInstanceError: policy_params: tiresias: knob: must be a number, got True
        """
        value = plain(value)
        if value is None:
            if self.optional:
                return None
            raise self._fail(policy, f"must be {self.describe()}, got None")
        if self.kind == "any":
            return value
        if self.kind == "path":
            if isinstance(value, str) and not value:
                raise self._fail(policy, "must be a file, got ''")
            return value
        if self.kind == "bool":
            if not isinstance(value, bool):
                raise self._fail(policy, f"must be true or false, got {show(value)}")
            return value
        if self.kind == "str":
            if not isinstance(value, str) or (self.choices and value not in self.choices):
                raise self._fail(policy, f"must be {self.describe()}, got {show(value)}")
            return value
        if self.kind == "floats":
            if isinstance(value, (str, bytes)) or not isinstance(value, (tuple, list)):
                raise self._fail(policy, f"must be a tuple of numbers, got {show(value)}")
            return tuple(self._number(v, policy) for v in value)
        return self._number(value, policy)

    def _number(self, value: object, policy: str) -> int | float:
        try:
            number: int | float = (
                read_int(value, self.name)
                if self.kind == "int"
                else float(read_number(value, self.name))
            )
        except InvalidInstanceError as e:
            raise self._fail(policy, e.reason) from None
        if self.low is not None and (number <= self.low if self.low_open else number < self.low):
            sign = ">" if self.low_open else ">="
            raise self._fail(policy, f"must be {sign} {_number(self.low)}, got {number!r}")
        if self.high is not None and number > self.high:
            raise self._fail(policy, f"must be <= {_number(self.high)}, got {number!r}")
        return number

    def parse(self, text: str, policy: str) -> object:
        """The value of ``text`` from the command line, checked (:meth:`check`).

        Examples
        --------
        >>> Param("thresholds", "floats", (500.0,), "").parse("500,10000", "edl")
        (500.0, 10000.0)
        >>> Param("admission", "bool", True, "").parse("no", "chronus")
        False
        """
        raw = text.strip()
        if self.optional and raw.lower() in ("none", "null"):
            return None
        value: object
        if self.kind == "any":
            raise self._fail(policy, "is set from a library call only, not on the command line")
        if self.kind == "bool":
            if raw.lower() not in _TRUE + _FALSE:
                raise self._fail(policy, f"must be true or false, got {raw!r}")
            value = raw.lower() in _TRUE
        elif self.kind == "str":
            value = raw
        elif self.kind == "path":
            path = Path(raw).expanduser()
            if not path.is_file():
                raise self._fail(policy, f"no such file {raw!r}")
            value = str(path.resolve())
        elif self.kind == "floats":
            value = tuple(_text_number(part, self, policy) for part in raw.split(",") if part)
        else:
            value = _text_number(raw, self, policy)
        return self.check(value, policy)


def _number(x: float) -> str:
    return str(int(x)) if float(x).is_integer() else repr(x)


def _text_number(text: str, param: Param, policy: str) -> int | float:
    raw = text.strip()
    try:
        return int(raw) if param.kind == "int" else float(raw)
    except ValueError:
        what = "an integer" if param.kind == "int" else "a number"
        raise InvalidInstanceError(
            WHERE, f"{policy}: {param.name}: must be {what}, got {raw!r}"
        ) from None


@dataclass(frozen=True, slots=True)
class Semantics:
    """A named set of simulator rules (``--semantics NAME``) a policy family declares.

    ``engine``: the :class:`~scheduling_opt.sim.sweep.RunConfig` fields it
    sets for every run (so the baselines of a comparison run under the same
    rules); ``preset(params)``: the declaring family's policy parameters under
    it, given those the run names (which win over the preset's). ``check``:
    called before a run is made, raises an
    :class:`~scheduling_opt.errors.InvalidInstanceError` when the semantics
    cannot run here (an optional extra missing).
    """

    name: str
    help: str
    engine: Mapping[str, object]
    preset: Callable[[Mapping[str, object]], Mapping[str, object]] = lambda params: {}
    check: Callable[[], None] = lambda: None


@dataclass(frozen=True, slots=True)
class PolicySpec:
    """One policy name as its family declares it.

    Parameters
    ----------
    name : str
        The registry name (``--policy NAME``).
    summary : str
        One line of help.
    factory : callable
        ``factory(workload, cluster, **params) -> Policy``: a fresh policy
        for one run; gets :attr:`fixed` and every parameter (defaults
        filled in).
    params : tuple of Param
        What a run may set.
    fixed : mapping
        The settings this name fixes (a variant of the family's policy):
        passed to the factory, not settable.
    family : str
        The family's package (``chronus``), or the module of a user's policy:
        the code a cached run's key covers.
    default_run : bool
        One of ``scheduling-opt simulate``'s default policies.
    cluster : callable or None
        ``cluster(cluster, params) -> ClusterSpec``: what the policy adds to
        the run's cluster (Aryl's inference servers, which it lends).
    workload : callable or None
        ``workload(workload, params) -> Workload``: the run's jobs as the
        policy's scenario has them (Aryl's Ideal scenario: every job
        elastic; its imperfect scaling: the jobs' scaling curves); None:
        the jobs as given.
    semantics : tuple of Semantics
        The named semantics the family takes part in.
    throughput : callable or None
        The policy's speed envelope for the offline bounds (:data:`Throughput`;
        None: not declared, so no bound covers its runs).
    batch_speeds : bool
        Its ``Decision.rate`` follows the jobs' batch model (ONES): a job may
        run faster than its GPU count's share, up to its largest batch.
    """

    name: str
    summary: str
    factory: Factory
    params: tuple[Param, ...] = ()
    fixed: Mapping[str, object] = field(default_factory=dict)
    family: str = ""
    default_run: bool = False
    cluster: Callable[[ClusterSpec, Mapping[str, object]], ClusterSpec] | None = None
    semantics: tuple[Semantics, ...] = ()
    workload: Callable[[Workload, Mapping[str, object]], Workload] | None = None
    throughput: Throughput | None = None
    batch_speeds: bool = False

    def param(self, name: str) -> Param | None:
        """The declared parameter ``name`` a run may set (None: not declared, or fixed)."""
        if name in self.fixed:
            return None
        return next((p for p in self.params if p.name == name), None)

    def resolve(self, given: Mapping[str, object]) -> dict[str, object]:
        """Every settable parameter's value: ``given`` checked, the others at their defaults.

        Raises
        ------
        InvalidInstanceError
            Naming the policy and the key: an unknown key (with what is
            accepted), a key the variant fixes, a bad value.
        """
        out: dict[str, object] = {}
        for key, value in given.items():
            p = self.param(key)
            if p is None:
                raise InvalidInstanceError(WHERE, f"{self.name}: {unknown_key(self, key)}")
            out[key] = p.check(value, self.name)
        defaults = {p.name: p.default for p in self.params if p.name not in self.fixed}
        return {**defaults, **out}

    def make(self, workload: Workload, cluster: ClusterSpec, given: Mapping[str, object]) -> Policy:
        """A fresh policy for one run (parameters resolved by :meth:`PolicySpec.resolve`, then the fixed)."""
        return self.factory(workload, cluster, **{**self.resolve(given), **self.fixed})


def unknown_key(spec: PolicySpec, key: str) -> str:
    """The message for a parameter ``key`` that ``spec`` does not declare."""
    if key in spec.fixed:
        return f"{key!r} is fixed by this variant ({key}={spec.fixed[key]!r})"
    names = [p.name for p in spec.params if p.name not in spec.fixed]
    if not names:
        return f"unknown parameter {key!r}: this policy takes none"
    close = close_matches(key, names)[:1]
    hint = f" (did you mean {close[0]!r}?)" if close else ""
    return f"unknown parameter {key!r}{hint}; accepted: {', '.join(names)}"


__all__ = [
    "Factory",
    "Kind",
    "Param",
    "PolicySpec",
    "Semantics",
    "Throughput",
    "one_job_per_gpu",
    "unknown_key",
]
