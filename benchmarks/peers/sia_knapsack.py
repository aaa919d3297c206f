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
taking (leaving the job out is as good), nor one that a configuration of
the same type with fewer GPUs matches, so both are dropped; a forced job's
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
IntArray = NDArray[np.int64]

#: Gains are hundredths when A is rounded to two decimals, lambda_n has two
#: and every job weight is 1: scaled by this they are integers.
SCALE = 100


@dataclass(frozen=True, slots=True, eq=False)
class SiaRound:
    """One round's MIP as a knapsack: flat item arrays grouped by job, capacities per type.

    Group ``g`` (job ``jobs[g]``, free jobs only) holds items
    ``offsets[g]:offsets[g+1]``: its worthwhile configurations, each with
    its ``column`` (configuration index for an adaptive job, GPU type index
    for a rigid one), ``gpu_type``, ``gpus`` and ``gain``. ``forced`` maps
    a job in a checkpoint-restore to the column it keeps; ``capacity[t]`` is
    type ``t``'s GPUs left after the forced jobs; ``base`` is Sia's
    objective when nothing else is allocated (``lambda_n N`` plus the
    forced part), ``sign`` -1 for its minimization (``p < 0``), +1 for its
    maximization; ``integral`` tells whether the gains are whole multiples
    of ``1 / SCALE`` (then ``hundredths`` holds them as integers).
    """

    jobs: tuple[str, ...]
    column: IntArray
    gpu_type: IntArray
    gpus: IntArray
    gain: FloatArray
    hundredths: IntArray
    offsets: IntArray
    forced: Mapping[str, int]
    capacity: tuple[int, ...]
    base: float
    sign: int
    integral: bool

    def sia_objective(self, gain: float) -> float:
        """Sia's objective (cvxpy's ``problem.value``) of a selection of total ``gain``."""
        return self.base - gain if self.sign < 0 else self.base + gain

    def items(self, choice: Sequence[int | None]) -> IntArray:
        """Flat indices of the chosen items (one per group that chose)."""
        idx = [int(self.offsets[g]) + i for g, i in enumerate(choice) if i is not None]
        return np.asarray(idx, dtype=np.int64)


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
    keeps. O(N K) numpy work for N jobs and K configurations.
    """
    sign = -1 if p < 0 else 1
    n_adapt, n_rigid = len(adaptive_jobs), len(rigid_jobs)
    n_types = len(type_gpus)
    w = np.asarray(weights, dtype=np.float64).reshape(-1)
    a_adapt = power_up(rescale(adaptive_speedup, adaptive_factors, adaptive_prev), p, clip)
    a_rigid = power_up(rescale(rigid_speedup, rigid_factors, rigid_prev), p, clip)
    n_cfg = a_adapt.shape[1] if n_adapt else len(config_gpus)
    # One row per job (adaptive, then rigid), one column per configuration or type.
    g_adapt = (
        (lambda_n - w[:n_adapt, None] * a_adapt)
        if sign < 0
        else (w[:n_adapt, None] * a_adapt - lambda_n)
    )
    g_rigid = (
        (lambda_n - w[n_adapt:, None] * a_rigid)
        if sign < 0
        else (w[n_adapt:, None] * a_rigid - lambda_n)
    )
    g_kept = g_adapt  # a forced job keeps its configuration, dominated or not
    g_adapt = undominated(g_adapt, np.asarray(config_type, np.int64), np.asarray(config_gpus))
    col_adapt = np.broadcast_to(np.arange(n_cfg), (n_adapt, n_cfg))
    typ_adapt = np.broadcast_to(np.asarray(config_type, np.int64), (n_adapt, n_cfg))
    gpu_adapt = np.broadcast_to(np.asarray(config_gpus, np.int64), (n_adapt, n_cfg))
    col_rigid = np.broadcast_to(np.arange(n_types), (n_rigid, n_types))
    reps = np.asarray(rigid_replicas, np.int64).reshape(-1, 1)
    gpu_rigid = np.broadcast_to(reps, (n_rigid, n_types))
    capacity = [int(c) for c in type_gpus]
    base = lambda_n * (n_adapt + n_rigid)
    names = [*adaptive_jobs, *rigid_jobs]
    free_rows: list[int] = []
    for r, name in enumerate(names):
        keep = forced.get(name)
        if keep is None:
            free_rows.append(r)
            continue
        if r < n_adapt:
            t, g, gain = int(config_type[keep]), int(config_gpus[keep]), float(g_kept[r, keep])
        else:
            t, g, gain = keep, int(reps[r - n_adapt, 0]), float(g_rigid[r - n_adapt, keep])
        capacity[t] -= g
        base += -gain if sign < 0 else gain
    adapt_rows = [r for r in free_rows if r < n_adapt]
    rigid_rows = [r - n_adapt for r in free_rows if r >= n_adapt]
    parts = [
        (g_adapt[adapt_rows], col_adapt[adapt_rows], typ_adapt[adapt_rows], gpu_adapt[adapt_rows]),
        (g_rigid[rigid_rows], col_rigid[rigid_rows], col_rigid[rigid_rows], gpu_rigid[rigid_rows]),
    ]
    gain_l, col_l, typ_l, gpu_l, count_l = [], [], [], [], []
    for gain_m, col_m, typ_m, gpu_m in parts:
        keep_m = gain_m > 1e-9  # an item of gain <= 0 never beats leaving the job out
        gain_l.append(gain_m[keep_m])
        col_l.append(col_m[keep_m])
        typ_l.append(typ_m[keep_m])
        gpu_l.append(gpu_m[keep_m])
        count_l.append(keep_m.sum(axis=1))
    gain_v = np.concatenate(gain_l).astype(np.float64)
    offsets = np.zeros(len(free_rows) + 1, np.int64)
    offsets[1:] = np.cumsum(np.concatenate(count_l))
    integral = abs(lambda_n * SCALE - round(lambda_n * SCALE)) < 1e-9 and bool(np.all(w == 1.0))
    hundredths = np.rint(gain_v * SCALE).astype(np.int64)
    return SiaRound(
        tuple(names[r] for r in free_rows),
        np.concatenate(col_l).astype(np.int64),
        np.concatenate(typ_l).astype(np.int64),
        np.concatenate(gpu_l).astype(np.int64),
        gain_v,
        hundredths,
        offsets,
        dict(forced),
        tuple(capacity),
        base,
        sign,
        integral,
    )


def undominated(gains: FloatArray, types: IntArray, gpus: NDArray[np.generic]) -> FloatArray:
    """Gains with every dominated configuration's set to -inf (then dropped as worthless).

    A configuration is dominated when one of the same GPU type with fewer
    GPUs gains at least as much: no optimum needs it (swap in the lighter
    one). Exact; O(N K) per type with a running maximum.
    """
    out = np.array(gains, dtype=np.float64, copy=True)
    if out.size == 0:
        return out
    for t in np.unique(types):
        cols = np.flatnonzero(types == t)
        cols = cols[np.argsort(np.asarray(gpus)[cols], kind="stable")]
        block = out[:, cols]
        best_before = np.maximum.accumulate(block, axis=1)
        best_before = np.hstack([np.full((len(block), 1), -np.inf), best_before[:, :-1]])
        block[block <= best_before] = -np.inf
        out[:, cols] = block
    return out


def total_gain(rnd: SiaRound, choice: Sequence[int | None]) -> float:
    """The gain of a choice (item index per group, or None), summed exactly when integral."""
    idx = rnd.items(choice)
    if rnd.integral:
        return int(rnd.hundredths[idx].sum()) / SCALE
    return math.fsum(rnd.gain[idx].tolist())


def used_gpus(rnd: SiaRound, choice: Sequence[int | None]) -> list[int]:
    """GPUs per type a choice takes (the forced jobs' excluded)."""
    idx = rnd.items(choice)
    used = np.zeros(len(rnd.capacity), np.int64)
    np.add.at(used, rnd.gpu_type[idx], rnd.gpus[idx])
    return [int(u) for u in used]
