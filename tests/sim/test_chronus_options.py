"""Chronus' options: one set of defaults, checked values, the names the variants get.

The constructor's keywords, :class:`ChronusOptions`' fields and the family's
declared parameters (``chronus/__init__.py``) are three spellings of the
same settings; these tests keep them one.
"""

from __future__ import annotations

import dataclasses
import inspect

import pytest

from scheduling_opt.sim.policies import chronus
from scheduling_opt.sim.policies.chronus.options import ChronusOptions
from scheduling_opt.sim.policies.chronus.policy import Chronus

DERIVED = {"name", "prove", "round_up", "lease_round_up"}


def _constructor_defaults() -> dict[str, object]:
    params = inspect.signature(Chronus.__init__).parameters.values()
    return {p.name: p.default for p in params if p.name != "self"}


def test_the_constructor_and_the_options_have_the_same_keywords_and_defaults() -> None:
    fields = {f.name: f.default for f in dataclasses.fields(ChronusOptions) if f.init}
    assert set(fields) | DERIVED == {f.name for f in dataclasses.fields(ChronusOptions)}
    assert _constructor_defaults() == fields


def test_every_declared_parameter_is_an_option_with_the_declared_default() -> None:
    defaults = _constructor_defaults()
    declared = {p.name: p.default for p in chronus.PARAMS}
    assert {name: defaults[name] for name in declared} == declared
    # The variants fix the rest: the lease mode, admission control, placement.
    assert set(defaults) - set(declared) == {"mode", "admission"}
    fixed = {key for _, settings in chronus.VARIANTS.values() for key in settings}
    assert fixed == {"mode", "admission", "placement"}


@pytest.mark.parametrize(
    ("options", "name"),
    [
        ({}, "chronus"),
        ({"mode": "greedy"}, "chronus-greedy"),
        ({"mode": "exact"}, "chronus-exact"),
        ({"admission": False}, "chronus-no-admission"),
        ({"placement": "best-fit"}, "chronus-best-fit"),
        (
            {"mode": "greedy", "admission": False, "placement": "pool"},
            "chronus-greedy-no-admission-pool",
        ),
    ],
)
def test_each_variant_gets_its_registry_name(options: dict[str, object], name: str) -> None:
    assert Chronus(**options).name == name  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("mode", "given", "prove"),
    [
        ("budget", None, False),
        ("greedy", None, False),
        ("exact", None, True),
        ("exact", False, False),
        ("greedy", True, True),
    ],
)
def test_admission_proves_only_in_exact_mode_unless_told(
    mode: str, given: bool | None, prove: bool
) -> None:
    assert ChronusOptions(mode=mode, admission_prove=given).prove is prove


@pytest.mark.parametrize(
    ("placement", "estimate", "round_up", "lease_round_up"),
    [
        ("chronus", "oracle", True, True),
        ("chronus", "artifact", True, False),  # the artifact's bins instead
        ("best-fit", "oracle", False, False),
        ("pool", "artifact", False, False),
    ],
)
def test_the_lease_charges_the_round_up_only_under_chronus_placement_and_the_oracle(
    placement: str, estimate: str, round_up: bool, lease_round_up: bool
) -> None:
    o = ChronusOptions(placement=placement, estimate=estimate)
    assert (o.round_up, o.lease_round_up) == (round_up, lease_round_up)


@pytest.mark.parametrize(
    ("key", "bad"),
    [
        ("mode", "fast"),
        ("placement", "random"),
        ("estimate", "guess"),
        ("admission_check", "none"),
        ("term_release", "some"),
        ("queue", "fifo"),
        ("cache_layout", "early"),
        ("max_terms", 0),
        ("max_terms", 2.5),
        ("search_rows", True),
        ("cbc_nodes", -1),
        ("start_credit", "yes"),
        ("artifact_stops", 0),
    ],
)
def test_a_bad_option_is_named(key: str, bad: object) -> None:
    with pytest.raises(ValueError, match=rf"^{key} must be"):
        ChronusOptions(**{key: bad})  # type: ignore[arg-type]


def test_options_are_frozen() -> None:
    o = ChronusOptions()
    with pytest.raises(dataclasses.FrozenInstanceError):
        o.lease_length = 10.0  # type: ignore[misc]
