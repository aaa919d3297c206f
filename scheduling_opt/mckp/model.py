"""The multiple-choice knapsack's typed input (:class:`Mckp`) and decision.

Items come in groups; pick at most one item per group so that the total
(integer, >= 0) weight stays within the capacity and the total (real) value is
largest (Aryl §5.2, Appendix D). The input is kept as flat read-only numpy
arrays, converted and validated once here.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike, NDArray

from scheduling_opt.errors import InvalidInstanceError
from scheduling_opt.jsonpath import MAX_INT

IntArray = NDArray[np.int64]
FloatArray = NDArray[np.float64]

#: Relative tolerance of value comparisons (checker, reduced-cost fixing).
TOLERANCE = 1e-9


@dataclass(frozen=True, slots=True, eq=False)
class Mckp:
    """An MCKP instance as flat read-only arrays.

    Group ``g`` holds items ``offsets[g]:offsets[g+1]`` of ``weights``
    (integers >= 0) and ``values`` (finite reals, whose absolute sum must be
    finite so that no algorithm overflows). Build it with :meth:`from_groups`
    or :meth:`from_arrays`.

    Parameters
    ----------
    capacity : int
        The knapsack capacity (>= 0).
    weights, values, offsets : array_like
        Flat item weights and values, and the group boundaries.

    Raises
    ------
    InvalidInstanceError
        Naming the field: ``capacity``, ``offsets``, ``groups[g][i].weight``,
        ``groups[g][i].value`` or ``values`` (an absolute sum that overflows).

    Examples
    --------
    >>> p = Mckp.from_groups([[(1, 2.0), (2, 3.0)], [(1, 1.5)]], capacity=2)
    >>> p.n_groups, p.capacity, p.sizes().tolist()
    (2, 2, [2, 1])

    References
    ----------
    Aryl (EuroSys '22) §5.2 and Appendix D.
    """

    capacity: int
    weights: IntArray
    values: FloatArray
    offsets: IntArray

    def __post_init__(self) -> None:
        if isinstance(self.capacity, bool) or not isinstance(self.capacity, (int, np.integer)):
            raise InvalidInstanceError("capacity", f"must be an integer, got {self.capacity!r}")
        if self.capacity < 0:
            raise InvalidInstanceError("capacity", f"must be >= 0, got {self.capacity}")
        object.__setattr__(self, "capacity", int(self.capacity))
        w = np.array(self.weights, dtype=np.int64).reshape(-1)
        v = np.array(self.values, dtype=np.float64).reshape(-1)
        off = np.array(self.offsets, dtype=np.int64).reshape(-1)
        if len(off) == 0 or off[0] != 0 or off[-1] != len(w) or len(w) != len(v):
            raise InvalidInstanceError("offsets", "must run from 0 to the item count")
        if np.any(np.diff(off) < 0):
            raise InvalidInstanceError("offsets", "must be non-decreasing")
        self._check_items(w, v, off)
        for a in (w, v, off):
            a.setflags(write=False)
        object.__setattr__(self, "weights", w)
        object.__setattr__(self, "values", v)
        object.__setattr__(self, "offsets", off)

    @staticmethod
    def _check_items(w: IntArray, v: FloatArray, off: IntArray) -> None:
        bad = np.flatnonzero((w < 0) | (w > MAX_INT) | ~np.isfinite(v))
        if len(bad):
            i = int(bad[0])
            g = int(np.searchsorted(off, i, side="right")) - 1
            path = f"groups[{g}][{i - int(off[g])}]"
            if not 0 <= w[i] <= MAX_INT:
                raise InvalidInstanceError(
                    f"{path}.weight", f"must be in 0..2**53, got {int(w[i])}"
                )
            raise InvalidInstanceError(f"{path}.value", f"must be finite, got {float(v[i])!r}")
        # A DP row or an LP bound adds up values: refuse inputs whose sum overflows
        # instead of returning inf or nan later.
        with np.errstate(over="ignore"):
            total = float(np.abs(v).sum())
        if not math.isfinite(total):
            raise InvalidInstanceError("values", "their absolute sum overflows a float")

    @classmethod
    def from_groups(cls, groups: Iterable[Iterable[tuple[int, float]]], capacity: int) -> Mckp:
        """From ``[[(weight, value), ...], ...]`` (plain Python items).

        Examples
        --------
        >>> Mckp.from_groups([[(3, 5.0)], []], 4).sizes().tolist()
        [1, 0]
        """
        weights: list[int] = []
        values: list[float] = []
        offsets = [0]
        for g, group in enumerate(groups):
            for i, item in enumerate(group):
                try:
                    w, v = item
                except (TypeError, ValueError):
                    raise InvalidInstanceError(
                        f"groups[{g}][{i}]", f"must be a (weight, value) pair, got {item!r}"
                    ) from None
                if isinstance(w, bool) or not isinstance(w, (int, np.integer)):
                    raise InvalidInstanceError(
                        f"groups[{g}][{i}].weight", f"must be an integer, got {w!r}"
                    )
                if not 0 <= int(w) <= MAX_INT:
                    raise InvalidInstanceError(
                        f"groups[{g}][{i}].weight", f"must be in 0..2**53, got {int(w)}"
                    )
                if isinstance(v, bool) or not isinstance(v, (int, float, np.integer, np.floating)):
                    raise InvalidInstanceError(
                        f"groups[{g}][{i}].value", f"must be a number, got {v!r}"
                    )
                weights.append(int(w))
                values.append(float(v))
            offsets.append(len(weights))
        return cls(capacity, np.array(weights, np.int64), np.array(values), np.array(offsets))

    @classmethod
    def from_arrays(
        cls, weights: Sequence[ArrayLike], values: Sequence[ArrayLike], capacity: int
    ) -> Mckp:
        """From one weight array and one value array per group.

        Examples
        --------
        >>> Mckp.from_arrays([[1, 2], [3]], [[1.0, 2.5], [4.0]], 3).n_groups
        2
        """
        if len(weights) != len(values):
            raise InvalidInstanceError("groups", "need one value array per weight array")
        ws = [np.asarray(w).reshape(-1) for w in weights]
        vs = [np.asarray(v, dtype=np.float64).reshape(-1) for v in values]
        for g, (w, v) in enumerate(zip(ws, vs, strict=True)):
            if len(w) != len(v):
                raise InvalidInstanceError(f"groups[{g}]", "weights and values differ in length")
            if len(w) and not np.issubdtype(w.dtype, np.integer):
                raise InvalidInstanceError(f"groups[{g}]", "weights must be integers")
        offsets = np.zeros(len(ws) + 1, np.int64)
        offsets[1:] = np.cumsum([len(w) for w in ws])
        flat_w = np.concatenate(ws).astype(np.int64) if ws else np.zeros(0, np.int64)
        flat_v = np.concatenate(vs) if vs else np.zeros(0)
        return cls(capacity, flat_w, flat_v, offsets)

    @property
    def n_groups(self) -> int:
        """The number of groups."""
        return len(self.offsets) - 1

    def group(self, g: int) -> tuple[IntArray, FloatArray]:
        """Weights and values of group ``g``."""
        a, b = int(self.offsets[g]), int(self.offsets[g + 1])
        return self.weights[a:b], self.values[a:b]

    def sizes(self) -> IntArray:
        """The item count of each group."""
        return np.diff(self.offsets)

    def with_capacity(self, capacity: int) -> Mckp:
        """The same items under another capacity."""
        return Mckp(capacity, self.weights, self.values, self.offsets)


@dataclass(frozen=True, slots=True)
class MckpDecision:
    """A choice per group (the chosen item's index in its group, or None).

    Attributes
    ----------
    choice : tuple of (int or None)
        One entry per group.
    weight : int
        The total weight of the chosen items.
    value : float
        Their total value (the objective; kept here because the JSON decision
        has always carried it).
    """

    choice: tuple[int | None, ...]
    weight: int
    value: float


GroupsLike = Mckp | Sequence[Sequence[tuple[int, float]]]


def as_mckp(groups: GroupsLike, capacity: int | None = None) -> Mckp:
    """An :class:`Mckp` from an instance (``capacity`` overrides) or plain groups.

    Parameters
    ----------
    groups : Mckp or sequence of sequences of (weight, value)
        The instance, or its groups as plain pairs.
    capacity : int, optional
        Required with plain groups; with an :class:`Mckp`, replaces its capacity.

    Returns
    -------
    Mckp

    Raises
    ------
    InvalidInstanceError
        ``capacity`` missing for plain groups, or any field invalid.

    Examples
    --------
    >>> as_mckp([[(1, 2.0)]], 3).capacity
    3
    >>> as_mckp(as_mckp([[(1, 2.0)]], 3), 5).capacity
    5

    References
    ----------
    Aryl (EuroSys '22) Appendix D.
    """
    if isinstance(groups, Mckp):
        return (
            groups
            if capacity is None or capacity == groups.capacity
            else groups.with_capacity(capacity)
        )
    if capacity is None:
        raise InvalidInstanceError("capacity", "missing (plain groups need a capacity)")
    return Mckp.from_groups(groups, capacity)


def evaluate(inp: Mckp, choice: Sequence[int | None]) -> tuple[float, int]:
    """Total value and weight of ``choice`` (no feasibility check).

    Parameters
    ----------
    inp : Mckp
    choice : sequence of (int or None)
        Per group the chosen item index, or None.

    Returns
    -------
    (float, int)
        The total value and the total weight.

    Raises
    ------
    InvalidInstanceError
        ``choice`` of the wrong length, or an entry that is not None nor an
        item index of its group (``choice[g]``).

    Examples
    --------
    >>> evaluate(Mckp.from_groups([[(1, 2.0), (2, 3.0)], [(1, 1.5)]], 2), [1, None])
    (3.0, 2)

    References
    ----------
    Aryl (EuroSys '22) Appendix D.
    """
    if len(choice) != inp.n_groups:
        raise InvalidInstanceError(
            "choice", f"must list {inp.n_groups} groups (None: nothing), got {len(choice)}"
        )
    idx = []
    for g, i in enumerate(choice):
        if i is None:
            continue
        size = int(inp.offsets[g + 1] - inp.offsets[g])
        # A negative index would silently pick from the end of the group.
        if isinstance(i, bool) or not isinstance(i, (int, np.integer)) or not 0 <= i < size:
            raise InvalidInstanceError(
                f"choice[{g}]", f"must be None or an item index in 0..{size - 1}, got {i!r}"
            )
        idx.append(int(inp.offsets[g]) + int(i))
    return float(inp.values[idx].sum()), int(inp.weights[idx].sum())


def decision_of(inp: Mckp, choice: Sequence[int | None]) -> MckpDecision:
    """The :class:`MckpDecision` of a solver's ``choice`` (value and weight recomputed).

    The choice comes from a solver, not from a caller: it is not validated
    again (:func:`evaluate` does that for callers), which keeps this O(n)
    loop cheap on 10^4 groups; the checker verifies every answer anyway.
    """
    offsets = inp.offsets.tolist()
    idx = [offsets[g] + i for g, i in enumerate(choice) if i is not None]
    value, weight = float(inp.values[idx].sum()), int(inp.weights[idx].sum())
    return MckpDecision(tuple(choice), weight, value)
