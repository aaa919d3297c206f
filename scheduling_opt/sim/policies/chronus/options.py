"""The options of one Chronus run: a frozen, validated value the policy's parts read.

:class:`ChronusOptions` holds the 31 settings of
:class:`~scheduling_opt.sim.policies.chronus.policy.Chronus` (the declared
parameters of the ``chronus`` family plus the variant's ``mode``,
``admission`` and ``placement``) and the few values derived from them
once: the policy's name, whether an admission runs the feasibility MILP,
and what the lease charges a job's GPUs. The options that make the policy
run by the Chronus authors' simulator's rules are explained in
:mod:`~scheduling_opt.sim.policies.chronus.artifact.rules`.

Validation raises a ValueError naming the option and what it accepts (the
declaration's :class:`~scheduling_opt.sim.declare.Param` checks the same
values first when a run comes from the command line or a configuration).
O(1).
"""

from __future__ import annotations

from dataclasses import dataclass, field

__all__ = ["MODES", "ChronusOptions"]

#: The lease selection's modes and the policy name each gives.
MODES = {"budget": "chronus", "greedy": "chronus-greedy", "exact": "chronus-exact"}

_CHOICES: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("placement", ("chronus", "best-fit", "pool")),
    ("estimate", ("oracle", "artifact")),
    ("admission_check", ("resolve", "reserved", "batch")),
    ("term_release", ("selected", "all")),
    ("selection", ("reward", "artifact", "artifact-cbc", "artifact-mip")),
    ("queue", ("chronus", "artifact")),
    ("cache_layout", ("selected", "late")),
    ("profiler_scaling", ("backlog", "hourly")),
)
_PLACEMENT_SUFFIX = {"chronus": "", "best-fit": "-best-fit", "pool": "-pool"}


def _positive_int_or_none(name: str, value: object) -> None:
    if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value < 1):
        raise ValueError(f"{name} must be an int >= 1 or None, got {value!r}")


def _positive_time(name: str, value: object) -> None:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 < value < 1e9:
        raise ValueError(f"{name} must be a number > 0, got {value!r}")


@dataclass(frozen=True, slots=True)
class ChronusOptions:
    """The settings of one Chronus run (the parameters of :class:`Chronus`).

    The fields are the constructor's keywords, documented there; the last
    four are derived: ``name`` (``chronus``, ``chronus-greedy``, ...,
    with ``-no-admission``, ``-best-fit`` or ``-pool``), ``prove`` (an
    admission runs the feasibility MILP: ``admission_prove``, or None for
    ``exact`` mode alone), ``round_up`` (Chronus placement promises Eq. (6)'s
    rounded-up consolidation) and ``lease_round_up`` (the lease charges
    that round-up: under the oracle estimate only, the artifact's estimate
    bins the job's GPUs instead).

    Examples
    --------
    >>> o = ChronusOptions(mode="greedy", placement="best-fit")
    >>> o.name, o.prove, o.lease_round_up
    ('chronus-greedy-best-fit', False, False)
    >>> ChronusOptions(queue="minute")
    Traceback (most recent call last):
    ...
    ValueError: queue must be one of chronus, artifact, got 'minute'
    """

    mode: str = "budget"
    lease_length: float = 20.0
    time_limit: float = 10.0
    max_terms: int | None = 72
    admission: bool = True
    admission_time_limit: float = 1.0
    admission_prove: bool | None = None
    placement: str = "chronus"
    search_space: int = 100_000
    placement_time_limit: float = 0.5
    placement_table: bool = True
    estimate: str = "oracle"
    admission_check: str = "resolve"
    term_release: str = "selected"
    selection: str = "reward"
    queue: str = "chronus"
    force_short: bool = False
    fill_overhead: bool = True
    start_credit: bool = False
    cache_layout: str = "selected"
    search_rows: int | None = None
    cbc_nodes: int | None = None
    artifact_stops: bool = False
    profiler: bool = True
    t_profile: float = 5.0
    profiler_gpus: int | None = None
    profiler_scaling: str = "backlog"
    submission_cap: int | None = 24
    runtime_noise: float = 0.0
    noise_seed: int = 0
    be_lease: float | None = 5.0
    name: str = field(init=False)
    prove: bool = field(init=False)
    round_up: bool = field(init=False)
    lease_round_up: bool = field(init=False)

    def __post_init__(self) -> None:
        if self.mode not in MODES:
            raise ValueError(f"mode must be budget, greedy or exact, got {self.mode!r}")
        for name, allowed in _CHOICES:
            value = getattr(self, name)
            if value not in allowed:
                raise ValueError(f"{name} must be one of {', '.join(allowed)}, got {value!r}")
        if self.max_terms is not None and (
            not isinstance(self.max_terms, int) or self.max_terms < 1
        ):
            raise ValueError(f"max_terms must be an int >= 1 or None, got {self.max_terms!r}")
        _positive_int_or_none("search_rows", self.search_rows)
        _positive_int_or_none("cbc_nodes", self.cbc_nodes)
        _positive_int_or_none("profiler_gpus", self.profiler_gpus)
        _positive_int_or_none("submission_cap", self.submission_cap)
        _positive_time("t_profile", self.t_profile)
        if self.be_lease is not None:
            _positive_time("be_lease", self.be_lease)
            ratio = self.lease_length / self.be_lease
            if abs(ratio - round(ratio)) > 1e-9 or round(ratio) < 1:
                raise ValueError(
                    f"be_lease must divide lease_length ({self.lease_length}), got {self.be_lease!r}"
                )
        noise = self.runtime_noise
        if isinstance(noise, bool) or not isinstance(noise, (int, float)) or not 0 <= noise < 10:
            raise ValueError(f"runtime_noise must be a number in [0, 10), got {noise!r}")
        for name in ("start_credit", "artifact_stops"):
            if not isinstance(getattr(self, name), bool):
                raise ValueError(f"{name} must be True or False, got {getattr(self, name)!r}")
        name = (
            MODES[self.mode]
            + ("" if self.admission else "-no-admission")
            + _PLACEMENT_SUFFIX[self.placement]
        )
        prove = self.mode == "exact" if self.admission_prove is None else self.admission_prove
        round_up = self.placement == "chronus"
        object.__setattr__(self, "name", name)
        object.__setattr__(self, "prove", prove)
        object.__setattr__(self, "round_up", round_up)
        object.__setattr__(self, "lease_round_up", round_up and self.estimate == "oracle")

    def cap(self, terms: int) -> int:
        """``terms`` capped at ``max_terms`` (deadlines beyond count as met there).

        Examples
        --------
        >>> ChronusOptions(max_terms=4).cap(9), ChronusOptions(max_terms=None).cap(9)
        (4, 9)
        """
        return terms if self.max_terms is None else min(terms, self.max_terms)
