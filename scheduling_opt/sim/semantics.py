"""Named simulator semantics (``--semantics NAME``), derived from the policies' declarations.

``default`` is the simulator's own. A policy family may declare others
(:class:`~scheduling_opt.sim.declare.Semantics`): the engine options it
sets for every run of a comparison (so the baselines run under the same
rules) and the family's own policy parameters under it. The ``chronus``
family declares ``artifact`` and ``artifact-mip``, the rules of the
simulator the Chronus authors released (docs/simulation.md, "Parity with
the authors' simulator").
"""

from __future__ import annotations

from dataclasses import replace

from scheduling_opt.errors import InvalidInstanceError
from scheduling_opt.sim import registry
from scheduling_opt.sim.sweep import RunConfig

__all__ = ["DEFAULT", "semantics_names", "with_semantics"]

#: The simulator's own semantics.
DEFAULT = "default"


def semantics_names() -> tuple[str, ...]:
    """``default`` and every semantics a family declares.

    Examples
    --------
    >>> semantics_names()
    ('default', 'artifact', 'artifact-mip')
    """
    return (DEFAULT, *(s.name for s in registry.semantics()))


def with_semantics(config: RunConfig, name: str) -> RunConfig:
    """``config`` under the named semantics (``default``: unchanged).

    The semantics' engine options apply to every policy; its preset of
    policy parameters to the policies of the family that declares it
    (parameters the configuration names win, and a variant's fixed
    settings are never overridden).

    Examples
    --------
    >>> c = with_semantics(RunConfig("chronus"), "artifact")
    >>> c.start_overhead, c.arrival_step, dict(c.policy_params)["queue"]
    (0.5, 5.0, 'artifact')
    >>> with_semantics(RunConfig("edf"), "artifact").policy_params
    ()
    """
    if name == DEFAULT:
        return config
    found = registry.semantics(name)
    if not found:
        raise InvalidInstanceError(
            "--semantics", f"must be one of {', '.join(semantics_names())}, got {name!r}"
        )
    chosen = found[0]
    spec = registry.policy_spec(config.policy)
    params = dict(config.policy_params)
    if chosen in spec.semantics:
        chosen.check()
        preset = {k: v for k, v in chosen.preset(params).items() if spec.param(k) is not None}
        params = {**preset, **params}
    return replace(config, **chosen.engine, policy_params=tuple(sorted(params.items())))  # type: ignore[arg-type]
