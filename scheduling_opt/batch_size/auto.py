"""The ``auto`` portfolio of ``batch-size`` (the default method): exact where it proves fast.

First a certificate: the greedy fill (O(G (G + J))) is returned as
``optimal`` when it meets the relaxation bound
(:func:`~scheduling_opt.batch_size.lower_bound`, a proven lower bound) to a
relative 1e-8, as on every generated instance with more jobs than GPUs.
Then the exact branch: a separable input runs the knapsack DP
(:func:`~scheduling_opt.batch_size.exact_separable`); an input the DP did
not prove, separable or of at most :data:`AUTO_EXACT_GPUS` GPUs, runs
:func:`~scheduling_opt.batch_size.exact_cpsat` (8 workers, deterministic)
under a budget of :data:`AUTO_EXACT_WORK` units of CP-SAT's deterministic
time, so that whether it proves does not depend on the machine's load. An
unproven run, or a larger cluster, gets the ONES search
(:func:`~scheduling_opt.batch_size.ones`) with the time left. Measured on
the generated instances (docs/batch-size.md): CP-SAT proves every 8-64-GPU
instance within 0.8 units (0.004-1.1 s of CPU), faster than the search, and
none at 128-512 GPUs within 1 s. ONES, Bian et al., SC 2021, §3.2.
Complexity: the exact branch's (CP-SAT: exponential worst case, budgeted)
plus the search's.
"""

from __future__ import annotations

import time

import numpy as np

from scheduling_opt.batch_size.exact import (
    MAX_CPSAT_VARIABLES,
    ROUNDING_TOLERANCE,
    cpsat_variables,
    exact_cpsat,
    exact_separable,
)
from scheduling_opt.batch_size.greedy import greedy
from scheduling_opt.batch_size.model import BatchSizeInput, Schedule
from scheduling_opt.batch_size.search import ones
from scheduling_opt.errors import InstanceTooLargeError
from scheduling_opt.solution import Seed, Solution, Status, time_limit_of

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


def auto(
    inp: BatchSizeInput, *, seed: Seed = None, time_limit: float | None = None
) -> Solution[Schedule]:
    """Exact when a size test says it proves fast, else (or if unproven) the ONES search.

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
        ``optimal`` only when proven: the greedy fill meets the relaxation
        bound (``message`` says ``auto: greedy meets the bound``) or the
        exact branch proved it (``auto: exact``); otherwise ``feasible``: the better of the exact
        incumbent and the search's schedule, with the best proven lower bound
        of both (``message`` says ``auto: ones``).

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
    ('optimal', (2, 2), 0.0, 'auto: exact')

    References
    ----------
    ONES (Bian et al., SC 2021), §3.2 (the search) and §3.2.1 (the objective
    the exact branch proves).
    """
    start = time.perf_counter()
    limit = time_limit_of(time_limit)
    # A certificate first: the greedy fill often meets the relaxation bound
    # (every generated instance with more jobs than GPUs), which proves it.
    fill = greedy(inp, seed=seed, time_limit=limit)
    if (
        fill.objective is not None
        and fill.bound is not None
        and fill.objective - fill.bound <= ROUNDING_TOLERANCE * max(abs(fill.bound), 1.0)
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
    bounds = [s.bound for s in (found, proving, fill) if s is not None and s.bound is not None]
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
        bound=max(bounds) if bounds else None,
        seconds=time.perf_counter() - start,
        message="auto: ones" + (f" ({found.message})" if found.message else ""),
    )
