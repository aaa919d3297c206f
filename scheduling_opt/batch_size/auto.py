"""The ``auto`` portfolio of ``batch-size`` (the default method): exact where it proves fast.

First two exact dynamic programs (:mod:`~scheduling_opt.batch_size.dp`):
the integer knapsack over GPU counts with the
placement relaxed (O(J cap G)); when its own choice places (every job that
took a packed cost on one server, best-fit decreasing) the placed schedule
meets the proven bound and is returned as ``optimal``: on every generated
instance from 8 to 1,024 GPUs, in 0.6-72 ms of CPU. Else, on small clusters
(:data:`~scheduling_opt.batch_size.dp.SERVER_DP_MAX_WORK`), the server DP
(multisets of per-server loads) proves it. Then a certificate: the greedy
fill (O(G (G + J))) is returned as ``optimal`` when it meets the best
proven bound (the relaxations') to a relative 1e-8.
Then the exact branch: a separable input runs the knapsack DP
(:func:`~scheduling_opt.batch_size.exact_separable`); an input the DP did
not prove, separable or of at most :data:`AUTO_EXACT_GPUS` GPUs, runs
:func:`~scheduling_opt.batch_size.exact_cpsat` (8 workers, deterministic)
under a budget of :data:`AUTO_EXACT_WORK` units of CP-SAT's deterministic
time, so that whether it proves does not depend on the machine's load. An
unproven run, or a larger cluster, gets the ONES search
(:func:`~scheduling_opt.batch_size.ones`) with the time left. ONES, Bian
et al., SC 2021, §3.2. Complexity: O(J cap G) for the relaxation, the
server DP's O(J S G cap) when it runs, then the exact branch's (CP-SAT:
exponential worst case, budgeted) plus the search's.
"""

from __future__ import annotations

import time

import numpy as np

from scheduling_opt.batch_size.cpsat_terms import ROUNDING_TOLERANCE
from scheduling_opt.batch_size.dp import (
    SERVER_DP_MAX_WORK,
    knapsack_relaxation,
    place,
    server_dp,
    server_dp_work,
)
from scheduling_opt.batch_size.evaluate import objective, solution_of
from scheduling_opt.batch_size.exact import (
    MAX_CPSAT_VARIABLES,
    cpsat_variables,
    exact_cpsat,
    exact_separable,
)
from scheduling_opt.batch_size.greedy import greedy
from scheduling_opt.batch_size.model import BatchSizeInput, IntArray, Schedule
from scheduling_opt.batch_size.search import ones
from scheduling_opt.errors import InstanceTooLargeError
from scheduling_opt.solution import Seed, Solution, Status, named, time_limit_of

#: Largest cluster (GPUs) on which ``auto`` tries the CP-SAT model first: the
#: generated 64-GPU instances are proved in 0.06-0.8 units of work (0.2-1.1 s
#: of CPU), the 128-GPU ones in 4 units at best (6 s of CPU).
AUTO_EXACT_GPUS = 64
#: CP-SAT's deterministic time (``max_deterministic_time``) the exact branch
#: may spend before the search runs: 2.5x the most a generated 8-64-GPU
#: instance needed (0.77 units, 1.1 s of CPU). A wall-clock budget (2 s
#: before) let a loaded machine cut proofs short: at least 3 of 5 g64 seeds
#: fell to the search in the 2026-11-24 bench at load 14-22 (1.7x its time).
AUTO_EXACT_WORK = 2.0
#: Share of the time limit the exact branch may take in wall-clock time (the
#: search keeps the rest when the machine is too slow for the work budget).
AUTO_EXACT_SHARE = 0.5


@named("auto")
def auto(
    inp: BatchSizeInput, *, seed: Seed = None, time_limit: float | None = None
) -> Solution[Schedule]:
    """Exact DPs, a greedy certificate, CP-SAT where it proves fast, else the ONES search.

    Parameters
    ----------
    inp : BatchSizeInput
        The round.
    seed : int, numpy.random.Generator or None
        CP-SAT's and the search's seed: same seed, same answer (unless a time
        limit strikes).
    time_limit : float or None
        Seconds for the whole call (None: the library default).

    Returns
    -------
    Solution of Schedule
        ``optimal`` only when proven: the knapsack relaxation's choice,
        placed, meets its bound (``message`` says ``auto: knapsack
        relaxation placed``), the server DP's schedule meets its bound
        (``auto: server DP``), the greedy fill meets the best bound of
        these (``auto: greedy meets the bound``) or CP-SAT proved it
        (``auto: exact``); otherwise ``feasible``: the better of the exact
        incumbent and the search's schedule, with the best proven lower bound
        of all (``message`` says ``auto: ones``).

    Raises
    ------
    InstanceTooLargeError
        Neither branch fits: the exact model is too large and the search's
        population x GPUs too (the greedy fill is returned when only the
        search is too large).

    Examples
    --------
    >>> from scheduling_opt.batch_size.examples import tiny_input
    >>> sol = auto(tiny_input(), seed=0)
    >>> sol.status.value, sol.decision.gpus, sol.gap, sol.message
    ('optimal', (2, 2), 0.0, 'auto: knapsack relaxation placed')

    References
    ----------
    ONES (Bian et al., SC 2021), §3.2 (the search) and §3.2.1 (the objective
    the exact branches prove).
    """
    start = time.perf_counter()
    limit = time_limit_of(time_limit)
    deadline = start + limit * AUTO_EXACT_SHARE
    # Exact DPs first: a proof in O(J cap G) on every generated
    # instance, well below the greedy fill's time; each claims optimal only
    # when a placed schedule's F (recomputed by the objective) meets its bound.
    bounds: list[float] = []
    relaxed = knapsack_relaxation(inp, deadline)
    if relaxed is not None:
        bounds.append(relaxed.bound)
        genes = place(inp, relaxed.gpus, relaxed.packed)
        proof = _certified(inp, genes, relaxed.bound, start, "auto: knapsack relaxation placed")
        if proof is not None:
            return proof
    if server_dp_work(inp) <= SERVER_DP_MAX_WORK:
        found_dp = server_dp(inp, deadline)
        if found_dp is not None:
            bounds.append(found_dp[0])
            proof = _certified(inp, found_dp[1], found_dp[0], start, "auto: server DP")
            if proof is not None:
                return proof
    # A certificate next: the greedy fill may meet the best bound found so far.
    # The time left, not the whole limit: the DPs before it may have used up
    # to AUTO_EXACT_SHARE of it (g4096 at 0.5 s ran 1.2-1.8 s before).
    fill = greedy(inp, seed=seed, time_limit=max(limit - (time.perf_counter() - start), 1e-3))
    if fill.bound is not None:
        bounds.append(fill.bound)
    best = max(bounds) if bounds else None
    if (
        fill.objective is not None
        and best is not None
        and fill.objective - best <= ROUNDING_TOLERANCE * max(abs(best), 1.0)
    ):
        return fill.with_(
            status=Status.OPTIMAL,
            bound=fill.objective,
            seconds=time.perf_counter() - start,
            message="auto: greedy meets the bound",
        )
    proving: Solution[Schedule] | None = None
    if inp.separable:
        try:
            proving = exact_separable(inp, seed=seed, time_limit=limit * AUTO_EXACT_SHARE)
        except InstanceTooLargeError:
            proving = None
    fits = cpsat_variables(inp) <= MAX_CPSAT_VARIABLES
    unproven = proving is None or proving.status is not Status.OPTIMAL
    if unproven and fits and (inp.separable or inp.n_gpus <= AUTO_EXACT_GPUS):
        left = limit * AUTO_EXACT_SHARE - (time.perf_counter() - start)
        if left > 0:
            # The fill's genome is the hint exact_cpsat would compute again.
            genes = None if fill.decision is None else np.asarray(fill.decision.assignment)
            found = exact_cpsat(
                inp,
                seed=seed,
                time_limit=left,
                work_limit=AUTO_EXACT_WORK,
                start_genes=genes,
            )
            if (
                proving is None
                or found.status is Status.OPTIMAL
                or (
                    found.objective is not None
                    and (proving.objective is None or found.objective < proving.objective)
                )
            ):
                proving = found
    if proving is not None and proving.status is Status.OPTIMAL:
        return proving.with_(seconds=time.perf_counter() - start, message="auto: exact")
    left = max(limit - (time.perf_counter() - start), 1e-3)
    try:
        found = ones(inp, seed=seed, time_limit=left)
    except InstanceTooLargeError:  # population x GPUs above the search's limit
        found = fill
    bounds += [s.bound for s in (found, proving, fill) if s is not None and s.bound is not None]
    for other in (proving, fill):
        if (
            other is not None
            and other.objective is not None
            and found.objective is not None
            and other.objective < found.objective
        ):
            found = other
    return found.with_(
        status=Status.FEASIBLE,
        bound=min(max(bounds), found.objective) if bounds and found.objective is not None else None,
        seconds=time.perf_counter() - start,
        message="auto: ones" + (f" ({found.message})" if found.message else ""),
    )


def _certified(
    inp: BatchSizeInput, genes: IntArray | None, bound: float, start: float, message: str
) -> Solution[Schedule] | None:
    """The schedule of ``genes`` as ``optimal`` if its F meets the proven ``bound``, else None.

    The tolerance is ``exact``'s rounding tolerance (relative 1e-8): the
    bound is a sum of the same float terms in another order.
    """
    if genes is None:
        return None
    f = float(objective(inp, genes[None, :])[0])
    if f - bound > ROUNDING_TOLERANCE * max(abs(bound), 1.0):
        return None
    sol = solution_of(inp, genes, Status.OPTIMAL, start, message=message)
    return sol.with_(bound=sol.objective)
