"""The multiple-choice multi-dimensional knapsack's typed input (:class:`Mmkp`) and decision.

Items come in groups (jobs); an item (a configuration) has a value and one
integer weight per resource (GPU type). Pick at most one item per group so
that, for every resource, the chosen weights stay within its capacity; a
group that takes no item earns its ``none`` value (default 0: Sia's
``lambda_n`` penalty for leaving a job unallocated is a negative ``none``).
Maximize the total value. The input is kept as flat read-only numpy arrays,
converted and validated once here.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike, NDArray

from scheduling_opt.errors import InvalidInstanceError
from scheduling_opt.jsonpath import MAX_INT
from scheduling_opt.mckp import Mckp

IntArray = NDArray[np.int64]
FloatArray = NDArray[np.float64]

#: Relative tolerance of value comparisons (checker, optimality proofs).
TOLERANCE = 1e-9


def _int_vector(value: ArrayLike, path: str) -> IntArray:
    """A 1-d int64 array of integers in 0..2**53 (booleans and fractions refused)."""
    raw = np.asarray(value)
    if raw.dtype == np.bool_ or not (
        np.issubdtype(raw.dtype, np.integer) or (raw.size == 0 and raw.dtype == np.float64)
    ):
        raise InvalidInstanceError(path, f"must hold integers, got dtype {raw.dtype}")
    out = raw.astype(np.int64).reshape(-1)
    bad = np.flatnonzero((out < 0) | (out > MAX_INT))
    if len(bad):
        raise InvalidInstanceError(f"{path}[{int(bad[0])}]", "must be in 0..2**53")
    return out


@dataclass(frozen=True, slots=True, eq=False)
class Mmkp:
    """An MMKP instance as flat read-only arrays.

    Group ``g`` holds items ``offsets[g]:offsets[g+1]``; item ``i`` has value
    ``values[i]`` (finite) and weight ``weights[i, r]`` (integer >= 0) on
    resource ``r``, whose capacity is ``capacity[r]``. ``none[g]`` is what
    group ``g`` earns when it takes no item. Build it with
    :meth:`from_groups` or :func:`as_mmkp`.

    Parameters
    ----------
    capacity : array_like of int
        One capacity (>= 0) per resource; at least one resource.
    weights : array_like of int, shape (items, resources)
    values : array_like of float, shape (items,)
    offsets : array_like of int, shape (groups + 1,)
        Group boundaries.
    none : array_like of float, shape (groups,), optional
        Per group the value of taking no item (default all 0).
    resources : sequence of str, optional
        Resource names (default ``r0``, ``r1``, ...).

    Raises
    ------
    InvalidInstanceError
        Naming the field: ``capacity`` / ``capacity[r]``, ``offsets``,
        ``groups[g][i].weight[r]``, ``groups[g][i].value``, ``none`` /
        ``none[g]``, ``resources`` / ``resources[r]``, ``values`` (an
        absolute sum that overflows).

    Examples
    --------
    >>> p = Mmkp.from_groups([[((1, 0), 2.0), ((0, 2), 3.0)], [((1, 1), 1.5)]], (1, 2))
    >>> p.n_groups, p.n_resources, p.capacity.tolist(), p.sizes().tolist()
    (2, 2, [1, 2], [2, 1])

    References
    ----------
    Sia (SOSP '23) §3.3 (one configuration per job under a capacity per GPU
    type); Khan et al., "Solving the knapsack problem for adaptive multimedia
    systems", Studia Informatica Universalis 2 (2002) (the MMKP).
    """

    capacity: IntArray
    weights: IntArray
    values: FloatArray
    offsets: IntArray
    none: FloatArray | None = None
    resources: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if isinstance(self.capacity, (int, np.integer)) and not isinstance(self.capacity, bool):
            cap = _int_vector([self.capacity], "capacity")
        else:
            cap = _int_vector(self.capacity, "capacity")
        if len(cap) == 0:
            raise InvalidInstanceError("capacity", "needs at least one resource")
        r = len(cap)
        v = np.array(self.values, dtype=np.float64).reshape(-1)
        w = np.asarray(self.weights)
        if w.size == 0:
            w = np.zeros((0, r), np.int64)
        if w.ndim != 2 or w.shape != (len(v), r):
            raise InvalidInstanceError(
                "weights", f"must have shape (items, resources) = ({len(v)}, {r}), got {w.shape}"
            )
        off = np.array(self.offsets, dtype=np.int64).reshape(-1)
        if len(off) == 0 or off[0] != 0 or off[-1] != len(v):
            raise InvalidInstanceError("offsets", "must run from 0 to the item count")
        if np.any(np.diff(off) < 0):
            raise InvalidInstanceError("offsets", "must be non-decreasing")
        n = len(off) - 1
        w = self._check_items(w, v, off)
        none = np.zeros(n) if self.none is None else np.array(self.none, np.float64).reshape(-1)
        if len(none) != n:
            raise InvalidInstanceError(
                "none", f"must hold one value per group ({n}), got {len(none)}"
            )
        bad = np.flatnonzero(~np.isfinite(none))
        if len(bad):
            raise InvalidInstanceError(f"none[{int(bad[0])}]", "must be finite")
        with np.errstate(over="ignore"):
            total = float(np.abs(v).sum()) + float(np.abs(none).sum())
        if not math.isfinite(total):
            raise InvalidInstanceError("values", "their absolute sum overflows a float")
        names = tuple(self.resources) if self.resources else tuple(f"r{k}" for k in range(r))
        if len(names) != r:
            raise InvalidInstanceError("resources", f"must name {r} resources, got {len(names)}")
        for k, name in enumerate(names):
            if not isinstance(name, str) or not name:
                raise InvalidInstanceError(
                    f"resources[{k}]", f"must be a non-empty string, got {name!r}"
                )
        if len(set(names)) != r:
            raise InvalidInstanceError("resources", f"duplicate resource names {list(names)}")
        for a in (cap, w, v, off, none):
            a.setflags(write=False)
        for name, value in (
            ("capacity", cap),
            ("weights", w),
            ("values", v),
            ("offsets", off),
            ("none", none),
            ("resources", names),
        ):
            object.__setattr__(self, name, value)

    @staticmethod
    def _check_items(raw: NDArray[np.generic], v: FloatArray, off: IntArray) -> IntArray:
        def path(i: int) -> str:
            g = int(np.searchsorted(off, i, side="right")) - 1
            return f"groups[{g}][{i - int(off[g])}]"

        if raw.size and (raw.dtype == np.bool_ or not np.issubdtype(raw.dtype, np.integer)):
            raise InvalidInstanceError("weights", f"must hold integers, got dtype {raw.dtype}")
        w: IntArray = raw.astype(np.int64)
        bad_w = np.argwhere((w < 0) | (w > MAX_INT))
        if len(bad_w):
            i, k = int(bad_w[0][0]), int(bad_w[0][1])
            raise InvalidInstanceError(
                f"{path(i)}.weight[{k}]", f"must be in 0..2**53, got {int(w[i, k])}"
            )
        bad_v = np.flatnonzero(~np.isfinite(v))
        if len(bad_v):
            i = int(bad_v[0])
            raise InvalidInstanceError(f"{path(i)}.value", f"must be finite, got {float(v[i])!r}")
        return w

    @classmethod
    def from_groups(
        cls,
        groups: Iterable[Iterable[tuple[Sequence[int], float]]],
        capacity: Sequence[int],
        none: Sequence[float] | None = None,
        resources: Sequence[str] = (),
    ) -> Mmkp:
        """From ``[[(weight vector, value), ...], ...]`` (plain Python items).

        Examples
        --------
        >>> Mmkp.from_groups([[((3, 1), 5.0)], []], (4, 1), none=(0.0, -1.0)).none.tolist()
        [0.0, -1.0]
        """
        r = len(capacity)
        weights: list[list[int]] = []
        values: list[float] = []
        offsets = [0]
        for g, group in enumerate(groups):
            for i, item in enumerate(group):
                p = f"groups[{g}][{i}]"
                try:
                    w, v = item
                    vector = list(w)
                except (TypeError, ValueError):
                    raise InvalidInstanceError(
                        p, f"must be a (weight vector, value) pair, got {item!r}"
                    ) from None
                if len(vector) != r:
                    raise InvalidInstanceError(
                        f"{p}.weight",
                        f"must list {r} weights (one per resource), got {len(vector)}",
                    )
                for k, x in enumerate(vector):
                    if isinstance(x, bool) or not isinstance(x, (int, np.integer)):
                        raise InvalidInstanceError(
                            f"{p}.weight[{k}]", f"must be an integer, got {x!r}"
                        )
                    if not 0 <= int(x) <= MAX_INT:
                        raise InvalidInstanceError(
                            f"{p}.weight[{k}]", f"must be in 0..2**53, got {int(x)}"
                        )
                if isinstance(v, bool) or not isinstance(v, (int, float, np.integer, np.floating)):
                    raise InvalidInstanceError(f"{p}.value", f"must be a number, got {v!r}")
                weights.append([int(x) for x in vector])
                values.append(float(v))
            offsets.append(len(weights))
        return cls(
            np.asarray(capacity),
            np.array(weights, np.int64).reshape(len(weights), r),
            np.array(values),
            np.array(offsets),
            None if none is None else np.asarray(none, np.float64),
            tuple(resources),
        )

    @property
    def n_groups(self) -> int:
        """The number of groups."""
        return len(self.offsets) - 1

    @property
    def n_resources(self) -> int:
        """The number of resources (capacities)."""
        return len(self.capacity)

    def sizes(self) -> IntArray:
        """The item count of each group."""
        return np.diff(self.offsets)

    def group_of_items(self) -> IntArray:
        """The group of every item."""
        return np.repeat(np.arange(self.n_groups, dtype=np.int64), self.sizes())

    def gains(self) -> FloatArray:
        """Every item's value over its group's ``none`` value (what choosing it adds)."""
        assert self.none is not None
        return self.values - self.none[self.group_of_items()]

    @property
    def base(self) -> float:
        """The objective of choosing nothing: the sum of the ``none`` values."""
        assert self.none is not None
        return float(self.none.sum())

    def with_capacity(self, capacity: Sequence[int] | IntArray) -> Mmkp:
        """The same items under other capacities."""
        cap = np.asarray(capacity)
        return Mmkp(cap, self.weights, self.values, self.offsets, self.none, self.resources)


@dataclass(frozen=True, slots=True)
class MmkpDecision:
    """A choice per group (the chosen item's index in its group, or None).

    Attributes
    ----------
    choice : tuple of (int or None)
        One entry per group.
    weight : tuple of int
        The total weight of the chosen items on each resource.
    value : float
        The objective: the chosen items' values plus the ``none`` values of
        the groups that chose nothing.
    """

    choice: tuple[int | None, ...]
    weight: tuple[int, ...]
    value: float


GroupsLike = Mmkp | Sequence[Sequence[tuple[Sequence[int], float]]]


def as_mmkp(
    groups: GroupsLike,
    capacity: Sequence[int] | None = None,
    none: Sequence[float] | None = None,
) -> Mmkp:
    """An :class:`Mmkp` from an instance (``capacity`` overrides) or plain groups.

    Parameters
    ----------
    groups : Mmkp or sequence of sequences of (weight vector, value)
        The instance, or its groups as plain pairs.
    capacity : sequence of int, optional
        Required with plain groups; with an :class:`Mmkp`, replaces its capacities.
    none : sequence of float, optional
        With plain groups, the value of each group taking no item (default 0).

    Returns
    -------
    Mmkp

    Raises
    ------
    InvalidInstanceError
        ``capacity`` missing for plain groups, or any field invalid.

    Examples
    --------
    >>> as_mmkp([[((1, 1), 2.0)]], (3, 1)).capacity.tolist()
    [3, 1]
    """
    if isinstance(groups, Mmkp):
        return groups if capacity is None else groups.with_capacity(capacity)
    if capacity is None:
        raise InvalidInstanceError("capacity", "missing (plain groups need one per resource)")
    return Mmkp.from_groups(groups, capacity, none)


def evaluate(inp: Mmkp, choice: Sequence[int | None]) -> tuple[float, tuple[int, ...]]:
    """Objective and weight per resource of ``choice`` (no feasibility check).

    Parameters
    ----------
    inp : Mmkp
    choice : sequence of (int or None)
        Per group the chosen item index, or None.

    Returns
    -------
    (float, tuple of int)
        The objective (``none`` values included) and the weight per resource.

    Raises
    ------
    InvalidInstanceError
        ``choice`` of the wrong length, or an entry that is not None nor an
        item index of its group (``choice[g]``).

    Examples
    --------
    >>> p = Mmkp.from_groups([[((1, 0), 2.0)], [((0, 1), 1.5)]], (1, 1), none=(0.0, -1.0))
    >>> evaluate(p, [0, None])
    (1.0, (1, 0))
    """
    if len(choice) != inp.n_groups:
        raise InvalidInstanceError(
            "choice", f"must list {inp.n_groups} groups (None: nothing), got {len(choice)}"
        )
    for g, i in enumerate(choice):
        size = int(inp.offsets[g + 1] - inp.offsets[g])
        if i is not None and (
            isinstance(i, bool) or not isinstance(i, (int, np.integer)) or not 0 <= i < size
        ):
            raise InvalidInstanceError(
                f"choice[{g}]", f"must be None or an item index in 0..{size - 1}, got {i!r}"
            )
    decision = decision_of(inp, [None if i is None else int(i) for i in choice])
    return decision.value, decision.weight


def decision_of(inp: Mmkp, choice: Sequence[int | None]) -> MmkpDecision:
    """The :class:`MmkpDecision` of a solver's ``choice`` (value and weights recomputed).

    The choice comes from a solver and is not validated again (the checker
    verifies every answer). O(groups + resources).
    """
    assert inp.none is not None
    offsets = inp.offsets.tolist()
    idx = [offsets[g] + i for g, i in enumerate(choice) if i is not None]
    empty = [g for g, i in enumerate(choice) if i is None]
    value = float(inp.values[idx].sum()) + float(inp.none[empty].sum())
    weight = tuple(int(x) for x in inp.weights[idx].sum(axis=0)) if idx else (0,) * inp.n_resources
    return MmkpDecision(tuple(choice), weight, value)


def to_mckp(inp: Mmkp) -> Mckp:
    """The one-resource instance as an :class:`~scheduling_opt.mckp.Mckp` (values: gains).

    Each item's value becomes its gain over its group's ``none`` value; the
    MCKP's objective plus :attr:`Mmkp.base` is the MMKP's.

    Raises
    ------
    InvalidInstanceError
        More than one resource (``capacity``).

    Examples
    --------
    >>> to_mckp(Mmkp.from_groups([[((2,), 3.0)]], (2,), none=(1.0,))).values.tolist()
    [2.0]
    """
    if inp.n_resources != 1:
        raise InvalidInstanceError(
            "capacity", f"an MCKP has one resource, this instance has {inp.n_resources}"
        )
    return Mckp(int(inp.capacity[0]), inp.weights[:, 0], inp.gains(), inp.offsets)
