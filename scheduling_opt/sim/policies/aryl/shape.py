"""What Aryl's phase one needs of a queued job, fixed while it exists: its :class:`Shape`.

A job's base demand, whether it scales, the pools it may try (§5.3,
Table 6: an elastic job on the on-loan pool first with server groups, on
the training pool first without; an inelastic one on the training pool,
then the on-loan pool if it may use any GPU type, §2.1) and whether it may
train on both pools (§6) depend on its shape and its id alone, so the
scheduler computes them once per job (:meth:`~.jobs.JobScheduler.shape`)
rather than at every call for every queued job (two hashes of the id each
time). :func:`pool_keys` names every pools value a call can meet, so that
the call stops scanning its queue once a 1-GPU job has failed on each
(every other job would be skipped). O(1) per job.
"""

from __future__ import annotations

import hashlib
from typing import NamedTuple

from scheduling_opt.sim.workload import SimJob

#: The pools: training servers, on-loan servers (their indices in a scheduler's lists).
TRAIN, LOAN = 0, 1


def any_gpu_type(job: SimJob, share: float) -> bool:
    """Whether ``job`` may run on inference GPUs: elastic, or in ``share`` by a hash of its id.

    Examples
    --------
    >>> any_gpu_type(SimJob("1", 0.0, 1, 5.0, max_gpus=2), 0.0)
    True
    >>> any_gpu_type(SimJob("1", 0.0, 1, 5.0), 1.0), any_gpu_type(SimJob("1", 0.0, 1, 5.0), 0.0)
    (True, False)
    """
    if job.min_gpus < job.max_gpus or share >= 1.0:
        return True
    h = int.from_bytes(hashlib.sha256(f"aryl-any:{job.id}".encode()).digest()[:8], "big")
    return h / 2**64 < share


class Shape(NamedTuple):
    """What phase one needs of a queued job, fixed while it exists (cached per job).

    ``demand``: its base demand when elastic (and scaling), else its GPUs;
    ``lent_pools``: the pools it may run on while servers are on loan
    (:meth:`JobScheduler.pools_for`); ``hetero``: it may train on both pools.
    """

    demand: int
    elastic: bool
    lent_pools: tuple[int, ...]
    hetero: bool


def lent_pools(
    job: SimJob, scale: bool, groups: bool, any_share: float, hetero: bool
) -> tuple[int, ...]:
    """The pools ``job`` tries, in order, while servers are on loan (§5.3, Table 6).

    Examples
    --------
    >>> elastic = SimJob("1", 0.0, 2, 5.0, max_gpus=4)
    >>> lent_pools(elastic, True, True, 0.0, False), lent_pools(elastic, True, False, 0.0, False)
    ((1, 0), (0, 1))
    >>> lent_pools(SimJob("1", 0.0, 2, 5.0), True, True, 0.0, False)
    (0,)
    """
    if scale and job.min_gpus < job.max_gpus:
        return (LOAN, TRAIN) if groups else (TRAIN, LOAN)
    if any_gpu_type(job, any_share) or hetero:
        return (TRAIN, LOAN)
    return (TRAIN,)


def pool_keys(lending: bool, scale: bool, groups: bool) -> tuple[tuple[int, ...], ...]:
    """Every pools value :func:`lent_pools` (or, with nothing on loan, the training pool) gives.

    Examples
    --------
    >>> pool_keys(False, True, True), pool_keys(True, False, True)
    (((0,),), ((0,), (0, 1)))
    >>> pool_keys(True, True, True)
    ((0,), (0, 1), (1, 0))
    """
    if not lending:
        return ((TRAIN,),)
    if not scale:
        return ((TRAIN,), (TRAIN, LOAN))
    return ((TRAIN,), (TRAIN, LOAN), (LOAN, TRAIN) if groups else (TRAIN, LOAN))
