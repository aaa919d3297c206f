"""``scheduling-opt policies [NAME]``: every policy the simulator knows, or one policy's parameters.

Read from the declarations (:mod:`scheduling_opt.sim.registry`): the
built-in families, the policies of installed packages' entry points and
those a ``--plugin`` registers. With a name, the parameters ``--policy
NAME:key=value`` accepts, each with its type, range, default and help,
and the settings the variant fixes.
"""

from __future__ import annotations

import argparse

from scheduling_opt.sim import registry
from scheduling_opt.sim.cli.simulate import add_plugin_argument, load_plugins
from scheduling_opt.sim.declare import PolicySpec


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The ``policies`` options."""
    parser.add_argument("name", nargs="?", help="a policy: show its parameters")
    add_plugin_argument(parser)


def listing() -> str:
    """Every policy by family: its name, one line of help, and its parameters' names.

    Examples
    --------
    >>> print(listing().splitlines()[0])
    baselines:
    """
    lines: list[str] = []
    family = None
    names = registry.policy_names()
    width = max((len(n) for n in names), default=0)
    for name in names:
        spec = registry.policy_spec(name)
        if spec.family != family:
            family = spec.family
            lines.append(f"{'' if not lines else chr(10)}{family}:")
        lines.append(f"  {name:<{width}}  {spec.summary}")
    defaults = ", ".join(registry.default_policies())
    lines.append(f"\nsimulate's default policies: {defaults}")
    lines.append("'scheduling-opt policies NAME' shows a policy's parameters.")
    return "\n".join(lines)


def details(spec: PolicySpec) -> str:
    """One policy's declaration in words: its parameters and what its variant fixes.

    Examples
    --------
    >>> print(details(registry.policy_spec("tiresias")).splitlines()[2])
      thresholds    numbers separated by commas (default (54.166666666666664,))
    """
    lines = [f"{spec.name}: {spec.summary}", f"family {spec.family}"]
    settable = [p for p in spec.params if p.name not in spec.fixed]
    width = max((len(p.name) for p in settable), default=0)
    for p in settable:
        lines.append(f"  {p.name:<{width}}  {p.describe()}")
        if p.help:
            lines.append(f"  {'':<{width}}    {p.help}")
    if not settable:
        lines.append("  (no parameters)")
    if spec.fixed:
        fixed = ", ".join(f"{k}={v!r}" for k, v in spec.fixed.items())
        lines.append(f"fixed by this variant: {fixed}")
    if spec.semantics:
        lines.append(f"semantics: default, {', '.join(s.name for s in spec.semantics)}")
    example = next((p for p in settable if p.kind not in ("any", "path")), None)
    if example is not None:
        value = example.default
        text = (
            ",".join(repr(v) for v in value)
            if isinstance(value, tuple)
            else str(value).lower()
            if isinstance(value, bool) or value is None
            else str(value)
        )
        lines.append(f"example: --policy {spec.name}:{example.name}={text}")
    return "\n".join(lines)


def run(args: argparse.Namespace) -> int:
    """Print the listing, or one policy's details; return the exit code (0)."""
    load_plugins(args.plugin)
    if args.name:
        print(details(registry.policy_spec(args.name, "policies")))
    else:
        print(listing())
    return 0
