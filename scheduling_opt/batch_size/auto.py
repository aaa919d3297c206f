"""The ``auto`` portfolio of ``batch-size`` (the default method): exact where it proves fast.

First a certificate: the greedy fill (O(G (G + J))) is returned as
``optimal`` when it meets the relaxation bound
(:func:`~scheduling_opt.batch_size.lower_bound`, a proven lower bound) to a
relative 1e-8, as on every generated instance with more jobs than GPUs.
Then a size test picks the branch: separable inputs and clusters of at most
:data:`AUTO_EXACT_GPUS` GPUs run :func:`~scheduling_opt.batch_size.exact`
(the knapsack DP, or CP-SAT with one worker up to :data:`SINGLE_WORKER_GPUS`
GPUs, eight above) under a budget of :data:`AUTO_EXACT_BUDGET` seconds; an
unproven run, or a larger cluster, gets the ONES search
(:func:`~scheduling_opt.batch_size.ones`). Measured on the generated
instances (docs/batch-size.md): CP-SAT proves every 8-64-GPU instance in
0.01-0.5 s, faster than the search, and proves none at 128-512 GPUs within
1 s. ONES, Bian et al., SC 2021, §3.2. Complexity: the exact branch's (CP-SAT:
exponential worst case, budgeted) plus the search's.
"""

from __future__ import annotations

import time

from scheduling_opt.batch_size.exact import (
    CPSAT_WORKERS,
    MAX_CPSAT_VARIABLES,
    ROUNDING_TOLERANCE,
    cpsat_variables,
    exact,
    exact_cpsat,
)
from scheduling_opt.batch_size.greedy import greedy
from scheduling_opt.batch_size.model import BatchSizeInput, Schedule
from scheduling_opt.batch_size.search import ones
from scheduling_opt.errors import InstanceTooLargeError
from scheduling_opt.solution import Seed, Solution, Status, time_limit_of

#: Largest cluster (GPUs) on which ``auto`` tries the exact model first: the
#: generated 64-GPU instances are proved in 0.3-0.5 s, the 128-GPU ones not in 1 s.
AUTO_EXACT_GPUS = 64
#: Seconds the exact branch may take before the search gets the rest of the limit.
AUTO_EXACT_BUDGET = 2.0
#: Up to this many GPUs CP-SAT runs one worker (twice as fast as eight at 8-16
#: GPUs on two cores; eight are three times faster at 64).
SINGLE_WORKER_GPUS = 32


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
    fits = cpsat_variables(inp) <= MAX_CPSAT_VARIABLES
    if inp.separable or (inp.n_gpus <= AUTO_EXACT_GPUS and fits):
        budget = min(limit, AUTO_EXACT_BUDGET)
        workers = 1 if inp.n_gpus <= SINGLE_WORKER_GPUS else CPSAT_WORKERS
        try:
            if inp.separable:
                proving = exact(inp, seed=seed, time_limit=budget)
            else:
                proving = exact_cpsat(inp, seed=seed, time_limit=budget, workers=workers)
        except InstanceTooLargeError:  # a separable input the DP left to a too-large model
            proving = None
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
