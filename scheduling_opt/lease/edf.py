"""Earliest-deadline-first lease selection: the Chronus paper's baseline.

Jobs by first reachable deadline; each takes the earliest RL_i terms with room
before its last deadline and earns the first deadline it meets. Chronus §4.3.
O(N log N + N H) for N jobs and H terms.
"""

from __future__ import annotations

import time

from scheduling_opt.lease._schedule import fit, heuristic_solution, load_of, relevel
from scheduling_opt.lease.greedy import deadline_order
from scheduling_opt.lease.model import LeaseDecision, LeaseInput
from scheduling_opt.solution import Seed, Solution, named

__all__ = ["edf"]


@named("edf")
def edf(
    inp: LeaseInput, *, seed: Seed = None, time_limit: float | None = None
) -> Solution[LeaseDecision]:
    """Earliest deadline first, each job as early as possible (the paper's baseline).

    Parameters
    ----------
    inp : LeaseInput
        The jobs, M and T_l.
    seed : int, numpy Generator or None
        Unused (deterministic); accepted for the common calling convention.
    time_limit : float or None
        Unused: one pass over the jobs.

    Returns
    -------
    Solution[LeaseDecision]
        ``feasible`` with the schedule (under ``require_all``: ``infeasible``
        when a job alone cannot meet any deadline, ``time_limit`` with no
        decision when EDF cannot place every job). ``bound`` is None.

    Raises
    ------
    SchedulingOptError
        Never for a built input (it was validated at construction).

    Examples
    --------
    >>> from scheduling_opt.model import Job, RewardStep
    >>> jobs = [Job("a", 4, 4, 1200.0, deadlines=(RewardStep(2400.0, 100),)),
    ...         Job("b", 4, 4, 2400.0, deadlines=(RewardStep(2400.0, 150),))]
    >>> sol = edf(LeaseInput(jobs, capacity=4, lease_length=1200.0))
    >>> sol.objective, sol.decision.selected
    (100.0, ('a',))

    References
    ----------
    Chronus (SoCC '21) §4.3 (EDF baseline).
    """
    start = time.perf_counter()
    held: list[list[int]] = [[] for _ in inp.lease_jobs]
    load = load_of(inp, held)
    for i in deadline_order(inp):
        job = inp.lease_jobs[i]
        pick = fit(inp, i, job.last_due, load, late=False)
        if pick is not None:
            load[pick] += job.gpus
            held[i] = [int(k) for k in pick]
    return heuristic_solution(inp, relevel(inp, held), start)
