"""The ``mmkp`` problem's files: instance <-> :class:`Mmkp`, decision -> JSON, generator.

An ``mmkp`` instance file holds ``capacity`` (one integer per resource),
``groups`` (lists of ``{"weight": [one integer per resource], "value"}``)
and, optionally, ``none`` (per group the value of taking no item, default
0) and ``resources`` (their names); see docs/instance-format.md. The
generator draws Sia-like rounds and two random classes
(:mod:`scheduling_opt.mmkp.instances`). The only module of the package that
knows files and the registry.
"""

from __future__ import annotations

import re
from typing import Any

import numpy as np

from scheduling_opt.errors import InvalidInstanceError
from scheduling_opt.io.instance import FORMAT, Instance, from_dict
from scheduling_opt.io.sizes import size_number
from scheduling_opt.jsonpath import (
    check_keys,
    read_array,
    read_int,
    read_number,
    read_object,
    read_string,
)
from scheduling_opt.mmkp._highs import exact
from scheduling_opt.mmkp._lagrange import lagrange
from scheduling_opt.mmkp._pulp import exact_pulp
from scheduling_opt.mmkp.checker import check
from scheduling_opt.mmkp.instances import random_mmkp, sia_round
from scheduling_opt.mmkp.model import Mmkp, MmkpDecision
from scheduling_opt.registry import Method, Problem

_SECTIONS = ("capacity", "groups", "none", "resources")


def read(instance: Instance) -> Mmkp:
    """Validate an ``mmkp`` instance's ``capacity``, ``groups``, ``none`` and ``resources``.

    Parameters
    ----------
    instance : Instance
        A loaded ``mmkp`` instance file.

    Returns
    -------
    Mmkp

    Raises
    ------
    InvalidInstanceError
        Naming the JSON path (``groups[3][1].weight[2]``, ``none[4]``).

    Examples
    --------
    >>> from scheduling_opt import load
    >>> read(load("instances/mmkp-example.json")).capacity.tolist()
    [4, 2]

    References
    ----------
    docs/instance-format.md; Sia (SOSP '23) §3.3.
    """
    data = instance.data
    check_keys(data, "", _SECTIONS, ("capacity", "groups"))
    raw_capacity = read_array(data["capacity"], "capacity")
    if not raw_capacity:
        raise InvalidInstanceError("capacity", "needs at least one resource")
    capacity = [read_int(c, f"capacity[{r}]", 0) for r, c in enumerate(raw_capacity)]
    n_res = len(capacity)
    weights: list[list[int]] = []
    values: list[float] = []
    offsets = [0]
    for g, group in enumerate(read_array(data["groups"], "groups")):
        for i, item in enumerate(read_array(group, f"groups[{g}]")):
            p = f"groups[{g}][{i}]"
            obj = read_object(item, p)
            check_keys(obj, p, ("weight", "value"), ("weight", "value"))
            w = read_array(obj["weight"], f"{p}.weight")
            if len(w) != n_res:
                raise InvalidInstanceError(
                    f"{p}.weight", f"must list {n_res} weights (one per resource), got {len(w)}"
                )
            weights.append([read_int(x, f"{p}.weight[{r}]", 0) for r, x in enumerate(w)])
            values.append(float(read_number(obj["value"], f"{p}.value")))
        offsets.append(len(weights))
    n = len(offsets) - 1
    none = None
    if "none" in data:
        raw_none = read_array(data["none"], "none")
        if len(raw_none) != n:
            raise InvalidInstanceError(
                "none", f"must hold one value per group ({n}), got {len(raw_none)}"
            )
        none = np.array([read_number(x, f"none[{g}]") for g, x in enumerate(raw_none)], float)
    names: tuple[str, ...] = ()
    if "resources" in data:
        raw_names = read_array(data["resources"], "resources")
        names = tuple(read_string(x, f"resources[{r}]") for r, x in enumerate(raw_names))
    return Mmkp(
        np.array(capacity, np.int64),
        np.array(weights, np.int64).reshape(len(weights), n_res),
        np.array(values),
        np.array(offsets),
        none,
        names,
    )


def encode(decision: MmkpDecision) -> dict[str, Any]:
    """The JSON decision: ``choice`` (item index or null per group), ``objective``, ``weight``.

    Parameters
    ----------
    decision : MmkpDecision

    Returns
    -------
    dict

    Examples
    --------
    >>> encode(MmkpDecision((0, None), (3, 1), 5.0))
    {'choice': [0, None], 'objective': 5.0, 'weight': [3, 1]}
    """
    return {
        "choice": list(decision.choice),
        "objective": decision.value,
        "weight": list(decision.weight),
    }


def _json_num(x: float) -> float | int:
    return int(x) if x.is_integer() and abs(x) < 2**53 else x


def to_data(inp: Mmkp) -> dict[str, Any]:
    """The ``resources``, ``capacity``, ``groups`` and ``none`` sections of an instance file.

    ``none`` is written only when some group's is not 0.

    Parameters
    ----------
    inp : Mmkp

    Returns
    -------
    dict

    Examples
    --------
    >>> to_data(Mmkp.from_groups([[((1, 0), 2.0)]], (3, 1)))
    {'resources': ['r0', 'r1'], 'capacity': [3, 1], 'groups': [[{'weight': [1, 0], 'value': 2}]]}
    """
    assert inp.none is not None
    weights, values, offsets = inp.weights.tolist(), inp.values.tolist(), inp.offsets.tolist()
    out: dict[str, Any] = {
        "resources": list(inp.resources),
        "capacity": inp.capacity.tolist(),
        "groups": [
            [
                {"weight": weights[i], "value": _json_num(values[i])}
                for i in range(offsets[g], offsets[g + 1])
            ]
            for g in range(inp.n_groups)
        ],
    }
    if np.any(inp.none != 0):
        out["none"] = [_json_num(x) for x in inp.none.tolist()]
    return out


#: Most groups, resources and Sia scale a generated instance may have.
MAX_GROUPS = 20_000
MAX_RESOURCES = 10
MAX_SCALE = 64

#: The sizes :func:`generate` accepts (``scheduling-opt list`` shows it).
SIZE_GRAMMAR = (
    f"n<groups>[-r<resources>][-uncorrelated|correlated] (groups 0..{MAX_GROUPS:,}, 8 items each, "
    f"resources 1..{MAX_RESOURCES}, default 3) or sia<scale>[-j<jobs>] (a Sia-like round on its "
    f"cluster x scale, scale 1..{MAX_SCALE}, jobs 0..{MAX_GROUPS:,}, default 25 x scale)"
)


def _size(size: str, seed: int) -> Mmkp:
    """Parse a size of :data:`SIZE_GRAMMAR` and draw its instance."""
    sia = re.fullmatch(r"sia([^-]*)(?:-j(.*))?", size)
    if sia:
        scale = size_number(sia.group(1), "scale", 1, MAX_SCALE)
        jobs = None if sia.group(2) is None else size_number(sia.group(2), "jobs", 0, MAX_GROUPS)
        return sia_round(scale, seed, jobs)
    parts = size.split("-")
    rest = parts[1:]
    resources_part = rest.pop(0) if rest and rest[0].startswith("r") else None
    kind = rest[0] if rest else "uncorrelated"
    if not parts[0].startswith("n") or len(rest) > 1 or kind not in ("uncorrelated", "correlated"):
        raise InvalidInstanceError("size", f"expected {SIZE_GRAMMAR}, got {size!r}")
    n = size_number(parts[0][1:], "groups", 0, MAX_GROUPS)
    resources = 3
    if resources_part is not None:
        resources = size_number(resources_part[1:], "resources", 1, MAX_RESOURCES)
    return random_mmkp(n, 8, resources, kind, seed)


def generate(size: str, seed: int) -> Instance:
    """A seeded ``mmkp`` instance (:data:`SIZE_GRAMMAR`).

    Parameters
    ----------
    size : str
        ``n<groups>[-r<resources>][-uncorrelated|correlated]`` or
        ``sia<scale>[-j<jobs>]``.
    seed : int

    Returns
    -------
    Instance

    Raises
    ------
    InvalidInstanceError
        A malformed ``size``, or a number out of its range.

    Examples
    --------
    >>> generate("sia2", 0).data["capacity"]
    [48, 32, 48]
    >>> len(generate("n5-r2", 0).data["groups"])
    5
    """
    inp = _size(size, seed)
    return from_dict({"format": FORMAT, "problem": "mmkp", **to_data(inp)})


PROBLEM: Problem[Mmkp, MmkpDecision] = Problem(
    name="mmkp",
    summary="Multiple-choice knapsack, one capacity per resource (GPU type): Sia's round (SOSP '23)",
    sense="max",
    read=read,
    encode=encode,
    methods=(
        Method(
            "exact",
            exact,
            exact=True,
            summary="Lagrangian bound and reduced-cost fixing, then HiGHS on what is left",
        ),
        Method("exact-pulp", exact_pulp, exact=True, summary="MILP, PuLP/CBC, full model"),
        Method(
            "lagrange",
            lagrange,
            summary="Lagrangian relaxation + repair, MCKP-core bounds (proven bound)",
        ),
    ),
    default="exact",
    check=check,
    generate=generate,
    size_grammar=SIZE_GRAMMAR,
    sizes={
        "quick": ("sia1", "sia2", "n20-r2"),
        "standard": ("sia1", "sia4", "sia8", "n50-r3", "n50-r2-correlated"),
        "paper": ("sia1", "sia2", "sia4", "sia8", "sia16", "sia32"),
    },
)
