"""Aryl's reclaiming in the simulator: on-loan servers and their jobs -> a reclaim solver -> preemptions and scale-ins.

When the inference cluster wants N_R of its lent servers back, the jobs
running on the on-loan pool and their placement become a
:class:`~scheduling_opt.reclaim.ReclaimInput` (each job's range is its
elastic range when the policy scales, its current size otherwise; its
remaining work at its current size is the value's time), a
:mod:`scheduling_opt.reclaim` solver chooses the servers (Algorithm 1 by
default), and :func:`reclaim_servers` translates the answer back: the jobs
to preempt, and for each scaled-in elastic job its placement without the
returned servers. Aryl (EuroSys '22) §4, Algorithm 1, §5.3.

Cost: O(J + S) to build the input for J on-loan jobs and S lent servers,
plus the solver.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from scheduling_opt.model import Cluster, GpuType, Job, Placement, PlacementRow, Server
from scheduling_opt.reclaim import (
    ReclaimDecision,
    ReclaimInput,
    aryl,
    aryl_plus,
    exact,
    random_servers,
    scf,
)
from scheduling_opt.sim.cluster import Placement as SimPlacement
from scheduling_opt.sim.policies.aryl.pools import held
from scheduling_opt.sim.protocol import View
from scheduling_opt.solution import Solution, Status

Reclaimer = Callable[..., Solution[ReclaimDecision]]
#: The reclaim solvers by method name.
RECLAIM_METHODS: dict[str, Reclaimer] = {
    "aryl": aryl,
    "scf": scf,
    "random": random_servers,
    "aryl-plus": aryl_plus,
    "exact": exact,
}


@dataclass(frozen=True, slots=True)
class ReclaimOutcome:
    """What one reclaim decided, in the engine's terms.

    ``returned``: the server indices given back (ascending); ``preempt``:
    job indices to stop (ascending); ``resize``: scaled-in jobs and the
    placement they keep; ``collateral_gpus``, ``proven`` (the solver proved
    its choice optimal) and ``seconds`` (the solver's wall time) for the
    policy's counters.
    """

    returned: tuple[int, ...]
    preempt: tuple[int, ...]
    resize: tuple[tuple[int, SimPlacement], ...]
    collateral_gpus: int
    proven: bool
    seconds: float


def reclaim_servers(
    view: View,
    lent: list[int],
    on_loan_jobs: list[int],
    sizes: list[int],
    n_reclaim: int,
    *,
    scale: bool,
    reclaimer: Reclaimer,
    rng: np.random.Generator,
    time_limit: float,
) -> ReclaimOutcome:
    """Choose ``n_reclaim`` of the ``lent`` servers; the jobs to preempt and to scale in.

    Parameters
    ----------
    view : View
        The engine's view (the running jobs' placements and remaining work).
    lent : list of int
        The on-loan servers (indices).
    on_loan_jobs : list of int
        The running jobs with workers on the on-loan pool (a heterogeneous
        job's training servers join the input as training servers: its
        workers there are kept, and freed as collateral if it is preempted).
    sizes : list of int
        GPUs per server (by index).
    n_reclaim : int
        Servers to give back (at most ``len(lent)``).
    scale : bool
        Whether jobs may be scaled in to their minimum (else a job is its size).
    reclaimer : callable
        A :mod:`scheduling_opt.reclaim` solver.
    rng : numpy Generator
        Its seed (``random``, ``aryl-plus``).
    time_limit : float
        Its seconds.

    Returns
    -------
    ReclaimOutcome
        The returned servers, preemptions and scale-ins.
    """
    rows: list[PlacementRow] = []
    jobs: list[Job] = []
    on_loan = set(lent)
    training: set[int] = set()  # training servers of heterogeneous jobs (their kept workers)
    for index in on_loan_jobs:
        st = view.running[index]
        n = held(st.placement)
        low, high = (st.job.min_gpus, st.job.max_gpus) if scale else (n, n)
        jobs.append(Job(str(index), low, max(high, n), max(st.remaining(view.now), 1e-9)))
        rows += [PlacementRow(str(index), f"s{s}", g) for s, g in st.placement]
        training.update(s for s, _ in st.placement if s not in on_loan)
    servers = tuple(Server(f"s{s}", "T4", sizes[s], "inference", True) for s in lent)
    types: tuple[GpuType, ...] = (GpuType("T4", 0.25, 16.0),)
    if training:
        servers += tuple(Server(f"s{s}", "V100", sizes[s]) for s in sorted(training))
        types += (GpuType("V100", 1.0, 32.0),)
    inp = ReclaimInput(
        Cluster(types, servers),
        tuple(jobs),
        Placement(tuple(rows)),
        n_reclaim,
    )
    started = time.perf_counter()
    sol = reclaimer(inp, seed=rng, time_limit=time_limit)
    if sol.decision is None:  # an exact solver out of time with no incumbent
        sol = aryl(inp)
    seconds = time.perf_counter() - started
    decision = sol.decision
    assert decision is not None
    returned = {int(s[1:]) for s in decision.servers}
    resize: list[tuple[int, SimPlacement]] = []
    for job_id, _ in decision.scaled_in:
        index = int(job_id)
        kept = tuple((s, g) for s, g in view.running[index].placement if s not in returned)
        resize.append((index, kept))
    return ReclaimOutcome(
        returned=tuple(sorted(returned)),
        preempt=tuple(sorted(int(j) for j in decision.preempted_jobs)),
        resize=tuple(resize),
        collateral_gpus=decision.collateral_gpus,
        proven=sol.status is Status.OPTIMAL,
        seconds=seconds,
    )
