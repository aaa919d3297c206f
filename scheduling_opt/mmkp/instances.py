"""Seeded MMKP instances: Sia-like scheduling rounds and two random classes.

``sia``: a round of Sia's policy (SOSP '23 §3.3, its simulator's
``__solve_mip_rescaled``) on its default heterogeneous cluster, scaled by
``s`` as its scalability study does (Fig. 9: ``s`` times the nodes and the
jobs, configurations capped by the profiled node counts). Three GPU types
(4-GPU nodes: 6 s, up to 16 per configuration; 8-GPU nodes: 2 s, up to 2;
8-GPU nodes: 3 s, up to 3), 19 configurations at 1x and 29 from 3x on,
25 s jobs. Job goodputs are synthetic (per-type speeds, sublinear scaling,
a multi-node factor, half the jobs with a previous configuration whose
others are discounted by a re-allocation factor), normalized as Sia does
(each job's smallest valid goodput is 1) and powered by Sia's ``p = -0.5``,
rounded to 2 decimals; a configuration's value is ``-A``, taking none is
worth ``-1.1`` (Sia's ``lambda_n``): the MMKP's objective is minus Sia's.
Invalid configurations stay in the groups, as in Sia's dense matrix, with
the huge ``A`` Sia gives them.

``uncorrelated`` / ``correlated``: every item weighs on every resource,
w ~ U{1..R}, v ~ U{1..R} or v = sum of weights / resources + R / 10 (Khan
et al.'s classes), capacities about half the sum of the groups' mean weights.

The only randomness is a numpy ``Generator`` seeded by the caller.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import NDArray

from scheduling_opt.errors import InvalidInstanceError
from scheduling_opt.mmkp.model import Mmkp

KINDS = ("sia", "uncorrelated", "correlated")

#: Sia's default heterogeneous cluster: (name, GPUs per node, nodes at 1x,
#: most nodes a profiled configuration spans), from its ``simulator_config.py``.
SIA_TYPES = (("aws", 4, 6, 16), ("dgx-ext", 8, 2, 2), ("rtx", 8, 3, 3))
#: Sia's ``lambda_n`` (the penalty of an unallocated job) and ``p``.
SIA_LAMBDA_N = 1.1
SIA_P = -0.5
#: Sia's goodput of an invalid configuration, and its clip of ``A``.
SIA_ZERO_GAIN = 1e-4
SIA_CLIP = 3000.0


def sia_configs(scale: int = 1) -> list[tuple[str, int, int]]:
    """Sia's configurations at ``scale``: (GPU type, nodes, GPUs), in its order.

    Examples
    --------
    >>> len(sia_configs(1)), len(sia_configs(2)), len(sia_configs(32))
    (19, 25, 29)
    >>> sia_configs(1)[:4]
    [('aws', 1, 1), ('aws', 1, 2), ('aws', 1, 4), ('aws', 2, 8)]
    """
    out = []
    for name, per_node, nodes, most in SIA_TYPES:
        limit = min(nodes * scale, most)
        singles = [1, 2, 4] if per_node == 4 else [1, 2, 4, 8]
        out += [(name, 1, g) for g in singles]
        out += [(name, k, k * per_node) for k in range(2, limit + 1)]
    return out


def sia_round(scale: int = 1, seed: int = 0, jobs: int | None = None) -> Mmkp:
    """One Sia-like scheduling round on the default cluster times ``scale``.

    Parameters
    ----------
    scale : int
        Cluster and job count multiplier (Sia's Fig. 9 uses 1-32).
    seed : int
    jobs : int, optional
        Active jobs (default 25 x scale).

    Returns
    -------
    Mmkp
        Three resources (``aws``, ``dgx-ext``, ``rtx``), one group per job
        with every configuration, ``none`` = -1.1.

    Examples
    --------
    >>> p = sia_round(1, seed=0)
    >>> p.n_groups, p.n_resources, p.capacity.tolist(), int(p.sizes()[0])
    (25, 3, [24, 16, 24], 19)

    References
    ----------
    Sia (SOSP '23) §3.3 and its simulator (``sia.py``, ``simulator_config.py``).
    """
    rng = np.random.default_rng(seed)
    n = 25 * scale if jobs is None else jobs
    configs = sia_configs(scale)
    names = [t[0] for t in SIA_TYPES]
    kind = np.array([names.index(c[0]) for c in configs])
    nodes = np.array([c[1] for c in configs])
    gpus = np.array([c[2] for c in configs])
    # Per job: per-GPU speed on each type (T4 = 1), scaling, multi-node factor.
    speed = np.column_stack([np.ones(n), rng.uniform(2.5, 5.0, n), rng.uniform(1.2, 2.0, n)])
    alpha = rng.uniform(0.6, 0.95, n)
    spread = rng.uniform(0.7, 1.0, n)
    most = rng.choice([4, 8, 16, 24, 32, 48, 64], n)
    rigid = rng.random(n) < 0.2
    fixed = rng.choice([1, 2, 4, 8], n)
    goodput = speed[:, kind] * gpus[None, :] ** alpha[:, None]
    goodput *= np.where(nodes[None, :] > 1, spread[:, None], 1.0)
    valid = np.where(
        rigid[:, None], gpus[None, :] == fixed[:, None], gpus[None, :] <= most[:, None]
    )
    goodput = np.where(valid, goodput, SIA_ZERO_GAIN)
    lowest = np.where(valid, goodput, np.inf).min(axis=1)
    goodput = np.where(valid, goodput / lowest[:, None], SIA_ZERO_GAIN)
    # Half the jobs ran last round: other configurations lose a re-allocation factor.
    previous = np.where(rng.random(n) < 0.5, -1, 0)
    for j in range(n):
        if previous[j] == 0:
            choices = np.flatnonzero(valid[j])
            keep = int(rng.choice(choices))
            factor = rng.uniform(0.5, 1.0)
            kept = goodput[j, keep]
            goodput[j, valid[j]] *= factor
            goodput[j, keep] = kept
    a = np.minimum(np.round(goodput**SIA_P, 2), SIA_CLIP)
    weights = np.zeros((n * len(configs), len(SIA_TYPES)), np.int64)
    rows = np.arange(n * len(configs))
    weights[rows, np.tile(kind, n)] = np.tile(gpus, n)
    capacity = [per_node * nodes_1x * scale for _, per_node, nodes_1x, _ in SIA_TYPES]
    return Mmkp(
        np.array(capacity),
        weights,
        -a.reshape(-1),
        np.arange(n + 1) * len(configs),
        np.full(n, -SIA_LAMBDA_N),
        tuple(names),
    )


def random_mmkp(
    n: int, items: int, resources: int, kind: str = "uncorrelated", seed: int = 0
) -> Mmkp:
    """A seeded random instance (``uncorrelated`` or ``correlated``; ``sia``: :func:`sia_round`).

    w ~ U{1..R} on every resource with R = 100; ``uncorrelated``: v ~ U{1..R};
    ``correlated``: v = mean weight + R / 10. Capacities: half the sum over
    groups of the mean item weight per resource.

    Parameters
    ----------
    n, items, resources : int
        Groups, items per group, resources.
    kind : str
        One of :data:`KINDS`; ``sia`` takes ``n`` as the scale and ignores
        ``items`` and ``resources``.
    seed : int

    Returns
    -------
    Mmkp

    Raises
    ------
    InvalidInstanceError
        An unknown ``kind``.

    Examples
    --------
    >>> p = random_mmkp(4, 3, 2, "correlated", seed=1)
    >>> p.n_groups, p.n_resources, p.sizes().tolist()
    (4, 2, [3, 3, 3, 3])

    References
    ----------
    Khan et al., Studia Informatica Universalis 2 (2002) (the classes).
    """
    if kind not in KINDS:
        raise InvalidInstanceError("kind", f"must be one of {list(KINDS)}, got {kind!r}")
    if kind == "sia":
        return sia_round(n, seed)
    rng = np.random.default_rng(seed)
    r_max = 100
    w = rng.integers(1, r_max + 1, (n, items, resources))
    v: NDArray[Any]
    if kind == "uncorrelated":
        v = rng.integers(1, r_max + 1, (n, items)).astype(float)
    else:
        v = w.mean(axis=2) + r_max / 10
    capacity = (w.mean(axis=1).sum(axis=0) // 2).astype(np.int64)
    offsets = np.arange(n + 1) * items
    return Mmkp(capacity, w.reshape(-1, resources), v.reshape(-1), offsets)
