"""The ``mckp`` problem's files: instance <-> :class:`Mckp`, decision -> JSON, generator.

An ``mckp`` instance file holds ``capacity`` and ``groups`` (lists of
``{"weight", "value"}``); see docs/instance-format.md. The generator draws
Pisinger's uncorrelated / weakly / strongly correlated classes and
Aryl-shaped groups (Aryl §5.2). The only module of the package that knows
files and the registry.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import NDArray

from scheduling_opt.errors import InvalidInstanceError
from scheduling_opt.io.instance import FORMAT, Instance, from_dict
from scheduling_opt.io.sizes import size_number
from scheduling_opt.jsonpath import check_keys, read_array, read_int, read_number, read_object
from scheduling_opt.mckp.check import check
from scheduling_opt.mckp.core import core
from scheduling_opt.mckp.dp import dp
from scheduling_opt.mckp.exact import exact
from scheduling_opt.mckp.exact_cpsat import exact_cpsat
from scheduling_opt.mckp.exact_pulp import exact_pulp
from scheduling_opt.mckp.greedy import greedy
from scheduling_opt.mckp.model import Mckp, MckpDecision
from scheduling_opt.registry import Method, Problem


def read(instance: Instance) -> Mckp:
    """Validate an ``mckp`` instance's ``capacity`` and ``groups`` sections.

    Parameters
    ----------
    instance : Instance
        A loaded ``mckp`` instance file.

    Returns
    -------
    Mckp

    Raises
    ------
    InvalidInstanceError
        Naming the JSON path (``groups[3][1].weight``).

    Examples
    --------
    >>> from scheduling_opt import load
    >>> read(load("instances/mckp-aryl-table3.json")).n_groups
    2

    References
    ----------
    docs/instance-format.md; Aryl (EuroSys '22) §5.2.
    """
    data = instance.data
    check_keys(data, "", ("capacity", "groups"), ("capacity", "groups"))
    capacity = read_int(data["capacity"], "capacity", 0)
    groups = read_array(data["groups"], "groups")
    weights: list[int] = []
    values: list[float] = []
    offsets = [0]
    for g, group in enumerate(groups):
        for i, item in enumerate(read_array(group, f"groups[{g}]")):
            p = f"groups[{g}][{i}]"
            obj = read_object(item, p)
            check_keys(obj, p, ("weight", "value"), ("weight", "value"))
            weights.append(read_int(obj["weight"], f"{p}.weight", 0))
            values.append(float(read_number(obj["value"], f"{p}.value")))
        offsets.append(len(weights))
    return Mckp(capacity, np.array(weights, np.int64), np.array(values), np.array(offsets))


def encode(decision: MckpDecision) -> dict[str, Any]:
    """The JSON decision: ``choice`` (item index or null per group), ``objective``, ``weight``.

    Parameters
    ----------
    decision : MckpDecision

    Returns
    -------
    dict
        The keys the CLI has always printed.

    Examples
    --------
    >>> encode(MckpDecision((0, None), 3, 5.0))
    {'choice': [0, None], 'objective': 5.0, 'weight': 3}
    """
    return {"choice": list(decision.choice), "objective": decision.value, "weight": decision.weight}


def _json_num(x: float) -> float | int:
    return int(x) if x.is_integer() and abs(x) < 2**53 else x


def to_data(inp: Mckp) -> dict[str, Any]:
    """The ``capacity`` and ``groups`` sections of an instance file.

    Parameters
    ----------
    inp : Mckp

    Returns
    -------
    dict

    Examples
    --------
    >>> to_data(Mckp.from_groups([[(1, 2.0)]], 3))
    {'capacity': 3, 'groups': [[{'weight': 1, 'value': 2}]]}
    """
    return {
        "capacity": inp.capacity,
        "groups": [
            [
                {"weight": int(w), "value": _json_num(float(v))}
                for w, v in zip(*inp.group(g), strict=True)
            ]
            for g in range(inp.n_groups)
        ],
    }


KINDS = ("uncorrelated", "weak", "strong", "aryl")


def random_mckp(
    n: int, items: int, capacity: int, kind: str = "uncorrelated", seed: int = 0
) -> Mckp:
    """A seeded random instance (Pisinger's classes, plus Aryl-shaped groups).

    ``uncorrelated``: w ~ U{1..R}, v ~ U{1..R}; ``weak``: v ~ w + U{-R/10..R/10}
    (at least 1); ``strong``: v = w + R/10; R = max(2, 4 C / n) so that about
    half the groups' heaviest items fit. ``aryl``: a job per group with
    min_workers m ~ U{1..8}, D ~ {1, 2, 4, 8} GPUs per worker, base running
    time T ~ U(10, 1000); item w: weight w * D, value T * w / (w + m).

    Parameters
    ----------
    n, items, capacity : int
        Groups, items per group, capacity.
    kind : str
        One of :data:`KINDS`.
    seed : int

    Returns
    -------
    Mckp

    Raises
    ------
    InvalidInstanceError
        An unknown ``kind``.

    Examples
    --------
    >>> random_mckp(3, 4, 10, "strong", seed=1).sizes().tolist()
    [4, 4, 4]

    References
    ----------
    Pisinger, "A minimal algorithm for the multiple-choice knapsack problem",
    EJOR 1995 (the classes); Aryl (EuroSys '22) §5.2.
    """
    rng = np.random.default_rng(seed)
    if kind not in KINDS:
        raise InvalidInstanceError("kind", f"must be one of {list(KINDS)}, got {kind!r}")
    if kind == "aryl":
        steps = np.arange(1, items + 1)
        m = rng.integers(1, 9, n)[:, None]
        d = rng.choice([1, 2, 4, 8], n)[:, None]
        t = rng.uniform(10, 1000, n)[:, None]
        w = steps[None, :] * d
        v: NDArray[Any] = np.round(t * steps / (steps + m), 6)
    else:
        r = max(2, 4 * capacity // max(n, 1))
        w = rng.integers(1, r + 1, (n, items))
        if kind == "uncorrelated":
            v = rng.integers(1, r + 1, (n, items))
        elif kind == "weak":
            v = np.maximum(1, w + rng.integers(-(r // 10), r // 10 + 1, (n, items)))
        else:
            v = w + max(1, r // 10)
    offsets = np.arange(n + 1) * items
    return Mckp(capacity, w.reshape(-1), np.asarray(v, float).reshape(-1), offsets)


#: Most groups, and the largest capacity, a generated instance may have.
MAX_GROUPS = 50_000
MAX_CAPACITY = 10**9

#: The sizes :func:`generate` accepts (``scheduling-opt list`` shows it).
SIZE_GRAMMAR = (
    f"n<groups>[-c<capacity>][-{'|'.join(KINDS)}] (groups 0..{MAX_GROUPS:,}, 16 items each; "
    f"capacity 0..{MAX_CAPACITY:,}, default 4 x groups)"
)


def _size(size: str) -> tuple[int, int, int, str]:
    """``n1000`` / ``n1000-strong`` / ``n2000-c10000-aryl`` -> (n, items, C, kind)."""
    parts = size.split("-")
    rest = parts[1:]
    capacity_part = rest.pop(0) if rest and rest[0].startswith("c") else None
    kind = rest[0] if rest else "uncorrelated"
    if not parts[0].startswith("n") or len(rest) > 1 or kind not in KINDS:
        raise InvalidInstanceError("size", f"expected {SIZE_GRAMMAR}, got {size!r}")
    n = size_number(parts[0][1:], "groups", 0, MAX_GROUPS)
    capacity = 4 * n
    if capacity_part is not None:
        capacity = size_number(capacity_part[1:], "capacity", 0, MAX_CAPACITY)
    return n, 16, capacity, kind


def generate(size: str, seed: int) -> Instance:
    """A seeded ``mckp`` instance: 16 items per group, C = 4 n unless given.

    Parameters
    ----------
    size : str
        ``n<groups>[-c<capacity>][-uncorrelated|weak|strong|aryl]``
        (:data:`SIZE_GRAMMAR`).
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
    >>> generate("n3-c10-aryl", 0).data["capacity"]
    10
    """
    n, items, capacity, kind = _size(size)
    inp = random_mckp(n, items, capacity, kind, seed)
    return from_dict({"format": FORMAT, "problem": "mckp", **to_data(inp)})


PROBLEM: Problem[Mckp, MckpDecision] = Problem(
    name="mckp",
    summary="Multiple-choice knapsack: at most one item per group, max value (Aryl §5.2)",
    sense="max",
    read=read,
    encode=encode,
    methods=(
        Method(
            "core",
            core,
            exact=True,
            summary="LP on upper hulls, then DP over a core of groups (Pisinger 1995)",
        ),
        Method("dp", dp, exact=True, summary="exact DP over capacity (numpy)"),
        Method("exact", exact, exact=True, summary="MILP, HiGHS via scipy"),
        Method("exact-pulp", exact_pulp, exact=True, summary="MILP, PuLP/CBC"),
        Method("exact-cpsat", exact_cpsat, exact=True, summary="CP-SAT, values scaled to integers"),
        Method("greedy", greedy, summary="LP-relaxation greedy on upper hulls"),
    ),
    default="core",
    check=check,
    generate=generate,
    size_grammar=SIZE_GRAMMAR,
    sizes={
        "quick": ("n20", "n50-strong", "n30-aryl"),
        "standard": ("n200", "n200-weak", "n200-strong", "n200-aryl", "n1000", "n1000-aryl"),
        "paper": (
            "n1000",
            "n1000-weak",
            "n1000-strong",
            "n1000-aryl",
            "n2000-c10000",
            "n2000-c10000-aryl",
        ),
    },
)
