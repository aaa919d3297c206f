"""``exact-two-stage``: proven-optimal reclaiming by a two-stage lexicographic MILP on HiGHS.

Stage 1 minimizes the preempted-job count over the reduced model of
:mod:`scheduling_opt.reclaim.milp`, stage 2 the collateral GPUs at that
count (Aryl §4; the optimum §7.3 finds by exhaustive search). NP-hard:
exponential in the worst case; 0.6-0.75 s of CPU at 500 on-loan servers.
It is the fallback of ``exact`` (the frontier DP) when the DP's frontier
is too wide, and its independent cross-check.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from typing import Any

from scheduling_opt.errors import SolverError
from scheduling_opt.reclaim.aryl_dp import aryl_dp_order
from scheduling_opt.reclaim.bounds import fraction_bound
from scheduling_opt.reclaim.milp import ModelConfig, build, reduce, solve_rows
from scheduling_opt.reclaim.model import ReclaimDecision, ReclaimInput, solution_of
from scheduling_opt.solution import Seed, Solution, Status, named, time_limit_of


@dataclass(frozen=True, slots=True)
class ExactOutcome:
    """Chosen server indices (None: none found in time), what was proved, the count bound."""

    status: Status
    chosen: list[int] | None
    bound: float | None
    message: str = ""
    stats: dict[str, Any] = field(default_factory=dict)


def _count_bound(raw: float | None, weight: int) -> float | None:
    """A lower bound on the count from a dual bound of ``weight * count + collateral``.

    Collateral is in 0..weight-1 (weight = BIG) or absent (weight = 1), so
    count >= (bound - weight + 1) / weight, rounded up; 1e-6 absorbs the
    solver's tolerance.
    """
    if raw is None or not math.isfinite(raw):
        return None
    slack = 0 if weight == 1 else weight - 1
    return float(max(0, math.ceil((raw - slack) / weight - 1e-6)))


def solve_two_stage(
    inp: ReclaimInput, *, time_limit: float, config: ModelConfig | None = None
) -> ExactOutcome:
    """Solve the reclaim MILP; ``optimal`` only when every stage proved optimality."""
    cfg = config or ModelConfig()
    start = time.perf_counter()
    red = reduce(inp, cfg)
    stats: dict[str, Any] = {"jobs": len(red.jobs), "classes": len(red.classes)}
    if inp.n_reclaim == 0 or not red.jobs:
        return ExactOutcome(Status.OPTIMAL, list(range(inp.n_reclaim)), 0.0, stats=stats)
    if not cfg.lexicographic:
        out = solve_rows(build(inp, red, cfg, 0, 0), cfg.backend, time_limit)
        chosen = None if out.x is None else red.unmerge(out.x)
        return ExactOutcome(out.status, chosen, _count_bound(out.bound, inp.big), stats=stats)
    first = solve_rows(build(inp, red, cfg, 1, 0), cfg.backend, time_limit)
    stats["stage1"] = time.perf_counter() - start
    bound = _count_bound(first.bound, 1)
    if first.x is None or first.status is not Status.OPTIMAL:
        chosen = None if first.x is None else red.unmerge(first.x)
        return ExactOutcome(first.status, chosen, bound, "stage 1 (count) not proven", stats)
    count = red.count(first.x)
    left = max(time_limit - (time.perf_counter() - start), 1e-3)
    second = solve_rows(build(inp, red, cfg, 2, count), cfg.backend, left)
    stats["stage2"] = time.perf_counter() - start - stats["stage1"]
    if second.x is None or second.status is not Status.OPTIMAL:
        # The count is proven; only the collateral tie-break is not.
        chosen = red.unmerge(first.x if second.x is None else second.x)
        return ExactOutcome(Status.TIME_LIMIT, chosen, float(count), "stage 2 not proven", stats)
    return ExactOutcome(Status.OPTIMAL, red.unmerge(second.x), float(count), stats=stats)


@named("exact-two-stage")
def exact_two_stage(
    inp: ReclaimInput,
    *,
    seed: Seed = None,
    time_limit: float | None = None,
    config: ModelConfig | None = None,
) -> Solution[ReclaimDecision]:
    """Proven-optimal servers by the two-stage MILP (HiGHS).

    Stage 1 minimizes the preempted jobs, stage 2 the collateral GPUs at
    that count. ``status`` is ``optimal`` only when both stages proved
    optimality; otherwise ``time_limit`` with the better of the solver's
    incumbent and ``aryl-dp``'s component DP, and ``bound`` the first stage's dual bound
    (a proven lower bound on the preempted-job count; never below
    :func:`~scheduling_opt.reclaim.fraction_bound`).

    Parameters
    ----------
    inp : ReclaimInput
        The servers, jobs, placement and N_R.
    seed : int, numpy Generator or None
        Unused (HiGHS is deterministic); accepted for the calling convention.
    time_limit : float or None
        Seconds for both stages together (None: the library default).
    config : ModelConfig or None
        Model variant and backend (None: the default model on HiGHS); for
        the study in ``benchmarks/bench_reclaim.py``.

    Returns
    -------
    Solution[ReclaimDecision]
        ``objective`` = preempted jobs, ``key`` = (preempted, collateral GPUs),
        ``bound`` = proven lower bound on the preempted jobs.

    Raises
    ------
    ValueError
        If ``time_limit`` is not a positive number of seconds.
    SolverError
        If the backend fails (not a status: a crash or an invalid model).

    Examples
    --------
    >>> from scheduling_opt.model import Cluster, GpuType, Job, Placement, PlacementRow, Server
    >>> servers = tuple(Server(f"i{k}", "T4", 8, "inference", True) for k in (1, 2, 3))
    >>> rows = [PlacementRow("a", "i1", 1), PlacementRow("a", "i2", 1)]
    >>> rows += [PlacementRow("b", "i2", 1), PlacementRow("b", "i3", 2)]
    >>> jobs = (Job("a", 2, 2, 60.0), Job("b", 3, 3, 60.0, gpus_per_worker=2))
    >>> inp = ReclaimInput(Cluster((GpuType("T4"),), servers), jobs, Placement(tuple(rows)), 1)
    >>> sol = exact_two_stage(inp)  # i1 leaves a's 1 GPU on i2, i3 leaves b's 2 GPUs
    >>> sol.status.value, sol.decision.servers, sol.key, sol.bound
    ('optimal', ('i1',), (1.0, 1.0), 1.0)

    References
    ----------
    Aryl (Li et al., EuroSys '22), §4 and §7.3; the model and the measured
    effect of each reduction are in docs/reclaim.md.
    """
    start = time.perf_counter()
    limit = time_limit_of(time_limit)
    out = solve_two_stage(inp, time_limit=limit, config=config)
    return answer(inp, out, start)


def answer(inp: ReclaimInput, out: ExactOutcome, start: float) -> Solution[ReclaimDecision]:
    """The solution of an exact run: its incumbent or the component DP's, and the best bound.

    Shared by ``exact-two-stage`` and ``exact`` (for a DP stopped by the
    time limit). Not proven: ``time_limit`` with the better of the run's
    incumbent and ``aryl-dp``'s component DP, and the larger of the run's
    count bound and :func:`~scheduling_opt.reclaim.fraction_bound`.

    Parameters
    ----------
    inp : ReclaimInput
        The reclaim problem.
    out : ExactOutcome
        What the run proved, its incumbent (or None) and its count bound.
    start : float
        The call's ``time.perf_counter()`` at its start.

    Returns
    -------
    Solution[ReclaimDecision]
        ``optimal`` or ``time_limit``, never ``infeasible``.

    Raises
    ------
    SolverError
        If ``out`` claims infeasibility (every N_R-subset is feasible).

    Examples
    --------
    >>> from scheduling_opt.model import Cluster, GpuType, Job, Placement, PlacementRow, Server
    >>> servers = tuple(Server(f"i{k}", "T4", 8, "inference", True) for k in (1, 2, 3))
    >>> rows = (PlacementRow("a", "i1", 1), PlacementRow("a", "i2", 1), PlacementRow("b", "i3", 1))
    >>> jobs = (Job("a", 2, 2, 1.0), Job("b", 1, 1, 1.0))
    >>> inp = ReclaimInput(Cluster((GpuType("T4"),), servers), jobs, Placement(rows), 2)
    >>> sol = answer(inp, ExactOutcome(Status.TIME_LIMIT, None, None, "stopped"), 0.0)
    >>> sol.status.value, sol.decision.servers, sol.bound, sol.message
    ('time_limit', ('i1', 'i2'), 1.0, 'stopped')
    """
    cheap = float(fraction_bound(inp))
    bound = cheap if out.bound is None else max(out.bound, cheap)
    if out.status is Status.OPTIMAL and out.chosen is not None:
        return solution_of(inp, out.chosen, Status.OPTIMAL, start, bound=bound)
    if out.status is Status.INFEASIBLE:
        # N_R never exceeds the on-loan servers (checked at construction),
        # so every N_R-subset is a solution: an infeasible claim is a bug.
        raise SolverError("the reclaim MILP reported infeasible, but every N_R-subset is feasible")
    chosen = aryl_dp_order(inp)
    if out.chosen is not None and inp.cost(out.chosen) <= inp.cost(chosen):
        chosen = out.chosen
    message = out.message or "time limit reached"
    return solution_of(inp, chosen, Status.TIME_LIMIT, start, bound=bound, message=message)
