"""Sia's per-round MIP as a multiple-choice knapsack (one capacity per GPU type).

Sia (SOSP '23; ``sia-simulator/sia.py``, ``SiaPolicy.__solve_mip_rescaled``)
chooses, every round, at most one configuration per job. Read from its code
(not copied), the model is:

- a rigid job ``i`` may run on any GPU type ``t`` with its fixed
  ``replicas[i]`` GPUs (binary ``Xr[i, t]``); an adaptive job on any
  configuration ``c`` = (type, nodes, GPUs) of the policy's table
  (binary ``Xa[i, c]``); at most one per job;
- *rescaling*: a job that held configuration (or type) ``prev`` last round
  keeps its speedup there; every other entry of its row is multiplied by its
  re-allocation factor (< 1 after restarts);
- ``A = round(speedup ** p, 2)``, clipped at ``sia_goodput_clip_val``
  (3,000; a zero speedup gives ``inf`` and so the clip);
- objective, for ``p < 0`` (Sia's runs use ``p = -0.5``): minimize
  ``sum w_i A[i, c] X[i, c] + lambda_n (N - sum X)``, i.e. each allocated
  job gains ``lambda_n - w_i A[i, c]`` over leaving it out (the penalty
  ``lambda_n = 1.1`` for an unallocated job); for ``p > 0`` maximize, each
  allocation gaining ``w_i A[i, c] - lambda_n``;
- capacity: the GPUs of each type, summed over the chosen configurations,
  at most the type's *total* GPUs (``cluster_total_gpus``);
- jobs in a checkpoint-restore (``scaling_underway``) keep their previous
  configuration: ``X[i, prev] = 1`` (their rigid rows are zeroed first,
  except the kept type, and their factor set to 1 by the caller).

``lambda_a`` is printed but not in this model: re-allocation is priced
only through the factors. The variables are integers in [0, 1] (binaries).
So each job is a group, each (job, configuration) an item of weight its
GPUs on one type and value its gain; an item of gain <= 0 is never worth
taking (leaving the job out is as good), so it is dropped; a forced job's
item is taken before the solve (its GPUs off its type's capacity). With one
GPU type this is exactly :class:`scheduling_opt.mckp.Mckp`; with several,
a multiple-choice knapsack with a capacity per type. When every ``w_i`` is
1 and ``lambda_n`` has two decimals, the gains are whole hundredths and are
solved as integers (exact; no float ties).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

FloatArray = NDArray[np.float64]

#: Gains are hundredths when A is rounded to two decimals, lambda_n has two
#: and every job weight is 1: scaled by this they are integers.
SCALE = 100


@dataclass(frozen=True, slots=True)
class Item:
    """One (job, configuration) choice: its GPU type, GPUs and gain."""

    column: int  # the configuration (adaptive) or GPU type (rigid) index
    gpu_type: int
    gpus: int
    gain: float


@dataclass(frozen=True, slots=True)
class SiaRound:
    """One round's MIP as a knapsack: groups of items per job, capacities per type.

    ``groups[g]`` lists the worthwhile items of job ``jobs[g]`` (free jobs
    only); ``forced`` maps a job to the column it keeps; ``capacity[t]``
    is type ``t``'s GPUs left after the forced jobs; ``base`` is the
    objective of the forced part plus ``lambda_n N`` (what Sia's objective
    is when nothing else is allocated), ``sign`` -1 for Sia's minimization
    (``p < 0``) and +1 for its maximization; ``integral`` tells whether
    the gains are whole multiples of ``1 / SCALE``.
    """

    jobs: tuple[str, ...]
    rigid: tuple[bool, ...]
    groups: tuple[tuple[Item, ...], ...]
    forced: Mapping[str, int]
    capacity: tuple[int, ...]
    base: float
    sign: int
    integral: bool

    def sia_objective(self, gain: float) -> float:
        """Sia's objective (cvxpy's ``problem.value``) of a selection of total ``gain``."""
        return self.base - gain if self.sign < 0 else self.base + gain


def rescale(
    speedup: FloatArray, factors: Sequence[float], prev: Sequence[int | None]
) -> FloatArray:
    """Each row times its re-allocation factor, except its previous column (a copy)."""
    out = np.array(speedup, dtype=np.float64, copy=True)
    for i, keep in enumerate(prev):
        if keep is None:
            continue
        kept = out[i, keep]
        out[i, :] *= factors[i]
        out[i, keep] = kept
    return out


def power_up(speedup: FloatArray, p: float, clip: float) -> FloatArray:
    """``round(speedup ** p, 2)`` clipped at ``clip`` (a zero speedup with p < 0: the clip)."""
    with np.errstate(divide="ignore", over="ignore", invalid="ignore"):
        a = np.round(np.power(speedup, p), decimals=2)
    a[~np.isfinite(a) | (a > clip)] = clip
    return np.asarray(a, dtype=np.float64)


def build_round(
    *,
    rigid_jobs: Sequence[str],
    rigid_speedup: FloatArray,
    rigid_replicas: Sequence[int],
    rigid_factors: Sequence[float],
    rigid_prev: Sequence[int | None],
    adaptive_jobs: Sequence[str],
    adaptive_speedup: FloatArray,
    adaptive_factors: Sequence[float],
    adaptive_prev: Sequence[int | None],
    config_type: Sequence[int],
    config_gpus: Sequence[int],
    type_gpus: Sequence[int],
    weights: Sequence[float],
    forced: Mapping[str, int],
    p: float,
    lambda_n: float,
    clip: float,
) -> SiaRound:
    """The knapsack of one of Sia's rounds (the module docstring's model).

    Rows of ``weights`` are in Sia's order: adaptive jobs first, then rigid
    jobs. ``forced`` maps a job in a checkpoint-restore to the column it
    keeps. O(N K) for N jobs and K configurations.
    """
    sign = -1 if p < 0 else 1
    a_rigid = power_up(rescale(rigid_speedup, rigid_factors, rigid_prev), p, clip)
    a_adapt = power_up(rescale(adaptive_speedup, adaptive_factors, adaptive_prev), p, clip)
    n_adapt = len(adaptive_jobs)
    capacity = [int(c) for c in type_gpus]
    jobs: list[str] = []
    rigid: list[bool] = []
    groups: list[tuple[Item, ...]] = []
    base = lambda_n * (len(adaptive_jobs) + len(rigid_jobs))
    integral = abs(lambda_n * SCALE - round(lambda_n * SCALE)) < 1e-9 and all(
        w == 1.0 for w in weights
    )

    def add(name: str, is_rigid: bool, items: list[Item]) -> None:
        nonlocal base
        keep = forced.get(name)
        if keep is not None:
            item = next(it for it in items if it.column == keep)
            capacity[item.gpu_type] -= item.gpus
            base += -item.gain if sign < 0 else item.gain
            return
        jobs.append(name)
        rigid.append(is_rigid)
        groups.append(tuple(it for it in items if it.gain > 1e-9))

    for i, name in enumerate(adaptive_jobs):
        w = float(weights[i])
        row = [
            Item(
                c, int(config_type[c]), int(config_gpus[c]), _gain(w, a_adapt[i, c], lambda_n, sign)
            )
            for c in range(a_adapt.shape[1])
        ]
        add(name, False, row)
    for i, name in enumerate(rigid_jobs):
        w = float(weights[n_adapt + i])
        row = [
            Item(t, t, int(rigid_replicas[i]), _gain(w, a_rigid[i, t], lambda_n, sign))
            for t in range(a_rigid.shape[1])
        ]
        add(name, True, row)
    if integral:
        groups = [
            tuple(Item(it.column, it.gpu_type, it.gpus, round(it.gain * SCALE) / SCALE) for it in g)
            for g in groups
        ]
    return SiaRound(
        tuple(jobs),
        tuple(rigid),
        tuple(groups),
        dict(forced),
        tuple(capacity),
        base,
        sign,
        integral,
    )


def _gain(weight: float, a: float, lambda_n: float, sign: int) -> float:
    """What allocating this item adds to Sia's objective's improvement."""
    return lambda_n - weight * float(a) if sign < 0 else weight * float(a) - lambda_n


def integer_gains(rnd: SiaRound) -> list[list[int]]:
    """Per group its gains in hundredths (requires ``rnd.integral``)."""
    return [[round(it.gain * SCALE) for it in g] for g in rnd.groups]


def total_gain(rnd: SiaRound, choice: Sequence[int | None]) -> float:
    """The gain of a choice (item index per group, or None), summed exactly when integral."""
    if rnd.integral:
        hundredths = sum(
            round(rnd.groups[g][i].gain * SCALE) for g, i in enumerate(choice) if i is not None
        )
        return hundredths / SCALE
    return math.fsum(rnd.groups[g][i].gain for g, i in enumerate(choice) if i is not None)


def used_gpus(rnd: SiaRound, choice: Sequence[int | None]) -> list[int]:
    """GPUs per type a choice takes (the forced jobs' excluded)."""
    used = [0] * len(rnd.capacity)
    for g, i in enumerate(choice):
        if i is not None:
            item = rnd.groups[g][i]
            used[item.gpu_type] += item.gpus
    return used
