"""The proven-optimal lease selection: the tightened MILP on HiGHS (the ``exact`` method).

The model of :mod:`~scheduling_opt.lease.formulation` (tight linking and
symmetry rows over the paper's Eqs. (1)-(5)) solved by HiGHS through
``scipy.optimize.milp``; the fastest of HiGHS, CP-SAT and CBC in docs/lease.md's
study. Chronus §3.3.4. NP-hard; O(N (P + H)) variables and rows.

Two stages from :data:`TWO_STAGE_MIN_JOBS` jobs on (smaller
instances, and ``two_stage=False``, solve the whole MILP at once, the old
model, kept as a cross-check):

1. *Levels*: :func:`~scheduling_opt.lease.formulation.build_levels`, the
   level binaries s under one energy row per term t (the work that must
   fall before t fits in M t GPU-terms): exactly the choices whose terms
   can be held *fractionally*, so a relaxation, whose proven optimum is an
   upper bound; ~450 binaries and ~290 rows at C120 instead of ~3,000
   columns (synth-p4-1: 32 s CPU for the whole MILP, 0.95 s for both stages).
2. *Packing*: the levels fixed, integral terms, decided first by a
   dedicated search (:func:`~scheduling_opt.lease.packing.pack`, whose
   "unpackable" is a proof), then HiGHS (:func:`~scheduling_opt.lease._choice.decide`). A packing
   reaching the stage-1 bound is a proven optimum. A choice that does not
   pack (often when jobs are large against M; 3 of 20 hard C120
   instances) is cut off with every choice containing it or tighter
   deadlines, and the levels are solved again (:class:`~scheduling_opt.lease._levels.Levels`: only the
   columns that reduced-cost fixing below the last bound leaves free), up
   to :data:`PACKING_ROUNDS` packings; a choice that holds an unpackable
   one up to relabelling (:func:`~scheduling_opt.lease._choice.dominates`: same GPUs and terms, the same
   or earlier deadlines) is cut without a packing. Then (or after a packing
   slower than :data:`PACKING_SECONDS`) the whole MILP runs on the time
   left, its bound capped by the levels stage's; a packing found below the
   bound stays the incumbent. Synth-p4-6 (17140) is proven in ~1.7 s of CPU
   (before the search: ~90 s, its unpackable choices taking HiGHS 1-9 s
   each to prove and 1-20 s to confirm without presolve; docs/lease.md).

Modules: this one holds the two-stage loop and the whole MILP;
:mod:`~scheduling_opt.lease._levels` the levels stage,
:mod:`~scheduling_opt.lease._choice` the packing of a choice and its cuts,
:mod:`~scheduling_opt.lease._highs` the HiGHS runner.
"""

from __future__ import annotations

import time
from collections.abc import Callable

import numpy as np
from numpy.typing import NDArray

from scheduling_opt.lease._choice import (
    Shape,
    confirm,
    decide,
    dominates,
    no_good,
    shape_of,
)
from scheduling_opt.lease._highs import solve_model
from scheduling_opt.lease._levels import Levels
from scheduling_opt.lease._schedule import Schedule
from scheduling_opt.lease.formulation import (
    ExactOutcome,
    Model,
    ModelConfig,
    Row,
    build,
    build_levels,
    run_exact,
)
from scheduling_opt.lease.greedy import Hint
from scheduling_opt.lease.model import LeaseDecision, LeaseInput
from scheduling_opt.solution import Seed, Solution, Status, named, time_limit_of

__all__ = ["PACKING_ROUNDS", "PACKING_SECONDS", "TWO_STAGE_MIN_JOBS", "exact", "solve_highs"]

#: Jobs (that can meet a deadline) from which ``exact`` solves in two stages.
#: 20 until the packing search; since, wall ms median of 8 seeds
#: (docs/lease.md), two stages with the search against the whole MILP: j6
#: 18 vs 9, c1-j10 35 vs 111, c2-j12 39 vs 97. Where the levels never pack
#: (2 of 8 at c1-j10 and c2-j12) two stages cost about 2x the whole MILP.
TWO_STAGE_MIN_JOBS = 10
#: Packings tried (each unpackable choice cut off) before the whole MILP runs;
#: choices cut by :func:`dominates` need no packing and do not count (at most
#: ``5 * PACKING_ROUNDS`` levels solves in all).
PACKING_ROUNDS = 10
#: Seconds a packing may take (or a quarter of the time left, if more) before
#: the whole MILP takes over: proving a choice unpackable took 1-12 s on
#: synth-p4-6 (generate_lease(120, 200, 6, pressure=4)).
PACKING_SECONDS = 2.0


class _Whole:
    """The whole model, built on first use: a choice of levels that packs at once never needs it.

    Its columns are the levels model's (:func:`build_levels` keeps
    :func:`build`'s layout), so the levels model serves every use that reads
    the layout only (shapes, cuts, the packing search, schedules).
    """

    def __init__(self, inp: LeaseInput, config: ModelConfig) -> None:
        self.inp, self.config = inp, config
        self.model: Model | None = None

    def __call__(self) -> Model:
        if self.model is None:
            self.model = build(self.inp, self.config)
        return self.model


def _two_stage(
    inp: LeaseInput, levels: Model, whole: Callable[[], Model], limit: float
) -> ExactOutcome:
    """Levels under the energy rows (a relaxation: the bound), then their integral packing.

    A choice of levels that does not pack is cut off (:func:`no_good`) and
    the levels solved again, at most :data:`PACKING_ROUNDS` times. The first
    round's bound needs no cut; a packing that reaches it is proven at once.
    A later round's bound holds only if its cuts removed unpackable choices,
    so the presolved "infeasible" verdicts behind them are confirmed without
    presolve before such a bound is used.
    """
    start = time.perf_counter()

    def left() -> float:
        return limit - (time.perf_counter() - start)

    stage = Levels(levels)
    model = levels  # the layout, shared with the whole model
    cuts: list[Row] = []
    unconfirmed: list[NDArray[np.float64]] = []  # choices behind cuts, presolve's word only
    unpackable: list[Shape] = []  # of every choice proven (or presolve-said) not to pack
    first: float | None = None
    bound: float | None = None
    packings = rounds = 0
    best: Schedule | None = None  # a packing below the bound, kept if nothing better is proven
    # Cuts without a packing are cheap but not free (a levels solve each): capped too.
    while packings < PACKING_ROUNDS and rounds < 5 * PACKING_ROUNDS:
        rounds += 1
        if left() <= 0:
            break
        status, x, found = stage.solve(cuts, bound, left())
        if status is Status.INFEASIBLE:
            if cuts and not confirm(inp, whole, unconfirmed, left()):
                break
            message = "no choice of levels packs" if cuts else ""
            return ExactOutcome(Status.INFEASIBLE, None, None, message)
        if status is not Status.OPTIMAL or x is None:
            if unconfirmed or found is None:
                return ExactOutcome(status, best, first)
            return ExactOutcome(status, best, found)
        bound = found
        first = found if first is None else first
        shape = shape_of(inp, model, x)
        if any(dominates(shape, u) for u in unpackable):
            # Unpackable as surely as the choice it holds (whose verdict, if
            # presolve's only, is still in ``unconfirmed``): cut without packing.
            cuts.append(no_good(model, x))
            continue
        packings += 1
        # A packing that is slow to decide hands over to the whole MILP early.
        share = min(left(), max(PACKING_SECONDS, 0.25 * left()))
        schedule, verdict, proof = decide(inp, model, x, share, whole)
        if schedule is not None:
            reward = schedule.reward(inp)
            proven = first if unconfirmed else bound
            if proven is not None and reward < proven - 1e-6 * max(1.0, abs(proven)):
                best = _better(inp, best, schedule)
                if not confirm(inp, whole, unconfirmed, left()):
                    break
                unconfirmed.clear()
                proven = bound
            if proven is None or reward >= proven - 1e-6 * max(1.0, abs(proven)):
                message = f"levels packed after {len(cuts)} cut(s)" if cuts else ""
                return ExactOutcome(Status.OPTIMAL, schedule, proven, message)
            break
        if verdict is not Status.INFEASIBLE:
            break
        cuts.append(no_good(model, x))
        if not proof:
            unconfirmed.append(x)
        unpackable.append(shape)
    if unconfirmed:
        bound = first
    if left() <= 0:
        message = "levels found; packing timed out" if bound is not None else ""
        return ExactOutcome(Status.TIME_LIMIT, best, bound, message)
    milp = _one_stage(inp, whole(), left())
    capped = (
        bound if milp.bound is None else milp.bound if bound is None else min(milp.bound, bound)
    )
    message = "levels did not pack: whole MILP"
    if milp.status is Status.OPTIMAL or best is None:
        return ExactOutcome(milp.status, milp.schedule, capped, message)
    best = _better(inp, best, milp.schedule)
    # A packing exists, so an "infeasible" from the whole MILP proves nothing.
    status = Status.TIME_LIMIT if milp.status is Status.INFEASIBLE else milp.status
    return ExactOutcome(status, best, capped, message)


def _better(inp: LeaseInput, a: Schedule | None, b: Schedule | None) -> Schedule | None:
    """The one of higher reward (``a`` on a tie; None counts as nothing)."""
    if a is None or (b is not None and b.reward(inp) > a.reward(inp)):
        return b
    return a


def _one_stage(inp: LeaseInput, model: Model, limit: float) -> ExactOutcome:
    """The whole MILP at once (every column integral)."""
    status, x, bound = solve_model(model, limit, np.ones(model.lay.size, dtype=np.int_))
    schedule = None if x is None else model.schedule(inp, list(x))
    return ExactOutcome(status, schedule, bound)


def solve_highs(
    inp: LeaseInput,
    config: ModelConfig,
    time_limit: float,
    *,
    relax: bool = False,
    two_stage: bool = False,
) -> ExactOutcome:
    """Build the model and solve it on HiGHS; the bound is HiGHS' MIP dual bound.

    ``relax``: solve the LP relaxation instead (its optimum is the bound;
    the fractional solution gives no schedule). ``two_stage``: levels first,
    then their packing (the module docstring).
    """
    if two_stage and not relax:
        levels = build_levels(inp, config)
        if levels.lay.size == 0:
            return ExactOutcome(Status.OPTIMAL, Schedule.empty(len(inp.jobs)), 0.0)
        return _two_stage(inp, levels, _Whole(inp, config), time_limit)
    model = build(inp, config)
    if model.lay.size == 0:
        return ExactOutcome(Status.OPTIMAL, Schedule.empty(len(inp.jobs)), 0.0)
    if relax:
        status, _, bound = solve_model(model, time_limit, np.zeros(model.lay.size, dtype=np.int_))
        return ExactOutcome(status, None, bound if status is Status.OPTIMAL else None)
    return _one_stage(inp, model, time_limit)


@named("exact")
def exact(
    inp: LeaseInput,
    *,
    seed: Seed = None,
    time_limit: float | None = None,
    hint: Hint | None = None,
    config: ModelConfig | None = None,
    two_stage: bool | None = None,
) -> Solution[LeaseDecision]:
    """The reward-maximal selection, proven on HiGHS (``time_limit``: best incumbent and bound).

    Parameters
    ----------
    inp : LeaseInput
        The jobs, M and T_l.
    seed : int, numpy Generator or None
        Unused (HiGHS runs deterministically); accepted for the common convention.
    time_limit : float or None
        Seconds for HiGHS (None: the library default).
    hint : Mapping[str, Sequence[int]] or None
        A warm start (job id -> terms), repaired into a feasible schedule;
        scipy's HiGHS takes no start, so it is the fallback incumbent on a
        time limit.
    config : ModelConfig or None
        Formulation switches (docs/lease.md's study); None: the final model.
    two_stage : bool or None
        True: levels first (terms fractional), then their integral packing
        (the module docstring); False: the whole MILP at once (the old
        model, a cross-check); None: two stages from
        :data:`TWO_STAGE_MIN_JOBS` jobs that can meet a deadline on.

    Returns
    -------
    Solution[LeaseDecision]
        ``optimal``; ``time_limit`` with the best of HiGHS' incumbent, the
        hint and the greedy, and HiGHS' dual bound (an upper bound on the
        reward); ``infeasible`` (only under ``require_all``) when proven.

    Raises
    ------
    ValueError
        When ``time_limit`` is not a positive number.

    Examples
    --------
    >>> from scheduling_opt.model import Job, RewardStep
    >>> jobs = [Job("a", 8, 8, 2400.0, deadlines=(RewardStep(4800.0, 100),)),
    ...         Job("b", 4, 4, 1200.0, deadlines=(RewardStep(1200.0, 100),)),
    ...         Job("c", 4, 4, 3600.0, deadlines=(RewardStep(3600.0, 90),))]
    >>> sol = exact(LeaseInput(jobs, capacity=8, lease_length=1200.0))
    >>> sol.status.value, sol.objective, sol.bound, sol.decision.run_now
    ('optimal', 200.0, 200.0, ('b',))

    References
    ----------
    Chronus (SoCC '21) §3.3.4, Eqs. (1)-(6).
    """
    cfg = config or ModelConfig()
    limit = time_limit_of(time_limit)
    if two_stage is None:
        two_stage = sum(1 for j in inp.lease_jobs if j.levels) >= TWO_STAGE_MIN_JOBS
    return run_exact(
        inp,
        lambda _warm: solve_highs(inp, cfg, limit, two_stage=two_stage),
        hint,
        feasibility=cfg.feasibility,
        warm_start=False,  # scipy's HiGHS takes no start: repair only for a fallback
    )
