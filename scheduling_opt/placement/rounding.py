"""Chronus RoundUp and Proposition 1's construction, on plain GPU counts.

A job of R GPUs is consolidated when it spans ceil(R/8) 8-GPU nodes;
rounding R up to {1, 2, 4, 8n} makes every demand consolidation-friendly,
and friendly demands summing to at most the free whole nodes' GPUs always
have a consolidated placement (Proposition 1), found by a buddy-style
construction (Chronus §3.4.1). These functions know nothing of jobs or
servers, so the lease selection (Eq. 6) uses them too.

Any node size: a node of S GPUs splits into power-of-two parts (6 = 4 + 2,
§3.4.1); RoundUp(R) is the next power of two if it fits the largest part,
else a multiple of S (8: {1, 2, 4, 8n}; 6: {1, 2, 4, 6n}).

Complexity: :func:`round_up` O(1); :func:`buddy_pack` O(D (log D + S)) for
D demands and S servers.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from scheduling_opt.errors import InvalidInstanceError
from scheduling_opt.jsonpath import plain


def _check_size(value: object, name: str) -> int:
    if type(value) is int and value >= 1:  # the common case, checked as below
        return value
    value = plain(value)  # a numpy integer counts as an int
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise InvalidInstanceError(name, f"must be an integer >= 1, got {value!r}")
    return value


def largest_part(node_size: int) -> int:
    """The largest power of two <= ``node_size``: the biggest single-node demand.

    Parameters
    ----------
    node_size : int
        GPUs per node (>= 1).

    Returns
    -------
    int
        The largest power of two not above ``node_size``.

    Raises
    ------
    InvalidInstanceError
        If ``node_size`` is not an integer >= 1.

    Examples
    --------
    >>> largest_part(8), largest_part(6), largest_part(1)
    (8, 4, 1)

    References
    ----------
    Chronus §3.4.1 (a 6-GPU node is 4 + 2).
    """
    node_size = _check_size(node_size, "node_size")
    return 1 << (node_size.bit_length() - 1)


def node_parts(node_size: int) -> tuple[int, ...]:
    """Power-of-two parts of a node, largest first.

    Parameters
    ----------
    node_size : int
        GPUs per node (>= 1).

    Returns
    -------
    tuple of int
        The binary decomposition of ``node_size``, largest part first.

    Raises
    ------
    InvalidInstanceError
        If ``node_size`` is not an integer >= 1.

    Examples
    --------
    >>> node_parts(6), node_parts(8), node_parts(12)
    ((4, 2), (8,), (8, 4))

    References
    ----------
    Chronus §3.4.1.
    """
    node_size = _check_size(node_size, "node_size")
    return tuple(1 << b for b in reversed(range(node_size.bit_length())) if node_size >> b & 1)


def round_up(gpus: int, node_size: int = 8) -> int:
    """Chronus RoundUp: to {1, 2, 4, 8n} on 8-GPU nodes; any node size.

    Parameters
    ----------
    gpus : int
        The job's GPU demand R (>= 1).
    node_size : int, default 8
        GPUs per node S (>= 1).

    Returns
    -------
    int
        The next power of two if it fits the largest power-of-two part of a
        node, else the next multiple of ``node_size``.

    Raises
    ------
    InvalidInstanceError
        If ``gpus`` or ``node_size`` is not an integer >= 1 (the error names it).

    Examples
    --------
    >>> [round_up(g) for g in (1, 3, 5, 9, 17)]
    [1, 4, 8, 16, 24]
    >>> round_up(5, node_size=6)
    6

    References
    ----------
    Chronus §3.4.1 (RoundUp).
    """
    gpus = _check_size(gpus, "gpus")
    power = 1 << (gpus - 1).bit_length()
    if power <= largest_part(node_size):
        return power
    return node_size * math.ceil(gpus / node_size)


def is_consolidation_friendly(gpus: int, node_size: int = 8) -> bool:
    """Whether RoundUp leaves ``gpus`` unchanged (1, 2, 4, 8n on 8-GPU nodes).

    Parameters
    ----------
    gpus : int
        A GPU demand (>= 1).
    node_size : int, default 8
        GPUs per node (>= 1).

    Returns
    -------
    bool
        ``round_up(gpus, node_size) == gpus``.

    Raises
    ------
    InvalidInstanceError
        If an argument is not an integer >= 1.

    Examples
    --------
    >>> is_consolidation_friendly(16), is_consolidation_friendly(12)
    (True, False)

    References
    ----------
    Chronus §3.4.1.
    """
    return round_up(gpus, node_size) == gpus


def rounded_demand(demands: Sequence[int], node_size: int = 8) -> int:
    """Left-hand side of Eq. (6): the GPUs a set of jobs takes once rounded up.

    The lease selection's capacity constraint is ``rounded_demand(jobs
    holding lease k) <= M`` instead of Constraint (3).

    Parameters
    ----------
    demands : sequence of int
        GPU demands (each >= 1).
    node_size : int, default 8
        GPUs per node.

    Returns
    -------
    int
        The sum of the rounded demands.

    Raises
    ------
    InvalidInstanceError
        If a demand or ``node_size`` is not an integer >= 1.

    Examples
    --------
    >>> rounded_demand([3, 5, 12, 1])
    29

    References
    ----------
    Chronus §3.4.1, Eq. (6).
    """
    return sum(round_up(g, node_size) for g in demands)


def fits_rounded(demands: Sequence[int], free_nodes: int, node_size: int = 8) -> bool:
    """Eq. (6) for ``free_nodes`` whole free nodes: a consolidated placement exists.

    For power-of-two node sizes this is exactly ``rounded_demand <= M`` with
    M = ``free_nodes * node_size`` (Proposition 1). For other sizes the GPU
    sum is not enough (three 4-GPU jobs do not fit two 6-GPU nodes), so the
    constructive placement is run instead.

    Parameters
    ----------
    demands : sequence of int
        GPU demands (each >= 1).
    free_nodes : int
        Whole free nodes (>= 0).
    node_size : int, default 8
        GPUs per node.

    Returns
    -------
    bool
        Whether every demand has a consolidated placement.

    Raises
    ------
    InvalidInstanceError
        If ``free_nodes`` < 0, or a demand or ``node_size`` is not an integer >= 1.

    Examples
    --------
    >>> fits_rounded([3, 5, 2], 2), fits_rounded([4, 4, 4], 2, node_size=6)
    (True, False)

    References
    ----------
    Chronus §3.4.1, Proposition 1.
    """
    free_nodes = plain(free_nodes)  # type: ignore[assignment]  # numpy integers count
    if isinstance(free_nodes, bool) or not isinstance(free_nodes, int) or free_nodes < 0:
        raise InvalidInstanceError("free_nodes", f"must be an integer >= 0, got {free_nodes!r}")
    rounded = [round_up(g, node_size) for g in demands]
    if node_size == largest_part(node_size):
        return sum(rounded) <= free_nodes * node_size
    placed = buddy_pack(rounded, [node_size] * free_nodes, node_size)
    return all(p is not None for p in placed)


def whole_servers(
    avail: Sequence[int], caps: Sequence[int], servers: Sequence[int], need: int
) -> list[int]:
    """The first ``need`` of ``servers`` that are wholly free (empty: not enough)."""
    picked = [s for s in servers if avail[s] == caps[s]][:need]
    return picked if len(picked) == need else []


def best_fit(avail: Sequence[int], servers: Sequence[int], size: int) -> int:
    """The server of ``servers`` with the fewest free GPUs >= ``size`` (-1: none)."""
    best = -1
    for s in servers:
        if avail[s] >= size and (best < 0 or avail[s] < avail[best]):
            best = s
    return best


def buddy_pack(
    rounded: Sequence[int], avail: Sequence[int], node_size: int = 8
) -> list[tuple[int, ...] | None]:
    """Proposition 1's construction on servers of ``node_size`` GPUs.

    Demands go in decreasing order: a multi-node demand takes whole free
    servers (first in order), a single-node one the best fit.

    Parameters
    ----------
    rounded : sequence of int
        Consolidation-friendly demands (each >= 1).
    avail : sequence of int
        Free GPUs per server (each 0..``node_size``).
    node_size : int, default 8
        GPUs per server (>= 1).

    Returns
    -------
    list of (tuple of int or None)
        The server indices of each demand (None: not placed).

    Raises
    ------
    InvalidInstanceError
        If ``node_size`` or a demand is not an integer >= 1, or a free count
        lies outside 0..``node_size``.

    Examples
    --------
    >>> buddy_pack([8, 4, 4, 2, 1, 1], [8, 8, 8])
    [(0,), (1,), (1,), (2,), (2,), (2,)]

    References
    ----------
    Chronus §3.4.1, proof of Proposition 1.
    """
    node_size = _check_size(node_size, "node_size")
    for i, r in enumerate(rounded):
        _check_size(r, f"rounded[{i}]")
    for i, a in enumerate(avail):
        if isinstance(a, bool) or not isinstance(a, int) or not 0 <= a <= node_size:
            raise InvalidInstanceError(f"avail[{i}]", f"must be an integer in 0..{node_size}")
    caps = [node_size] * len(avail)
    free = list(avail)
    servers = range(len(avail))
    out: list[tuple[int, ...] | None] = [None] * len(rounded)
    for i in sorted(range(len(rounded)), key=lambda i: (-rounded[i], i)):
        r = rounded[i]
        if r > node_size:
            picked = whole_servers(free, caps, servers, math.ceil(r / node_size))
            for s in picked:
                free[s] = 0
            out[i] = tuple(picked) or None
        else:
            s = best_fit(free, servers, r)
            if s >= 0:
                free[s] -= r
                out[i] = (s,)
    return out
