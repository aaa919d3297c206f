"""Chronus lease-based selection of guaranteed SLO jobs, and admission control.

Given M GPUs, a lease length T_l and SLO jobs (G_i GPUs, R_i seconds left,
reward steps (D_p, V_p)), choose for each job a deadline to meet (or reject
it) and the lease terms it holds, at most M GPUs per term, maximizing the
total reward. Paper: Chronus (SoCC '21) §3.3.2 (admission control), §3.3.4
(the MILP, Eqs. 1-6), §4.3 (EDF baseline). NP-hard (a one-term instance is a
knapsack problem).

Methods (N jobs, P steps each, H terms):

- ``exact``: the tightened MILP of :mod:`~scheduling_opt.solvers.lease_exact`
  on HiGHS (fastest in docs/lease.md's study); a warm-start hint becomes the
  fallback incumbent (scipy's HiGHS takes no start).
- ``exact-cpsat``: the same model on CP-SAT (8 workers), with the hint.
- ``exact-pulp``: the paper's formulation written independently (PuLP/CBC).
- ``greedy``: best of three job orders, as late as possible, O(N P H log N).
- ``edf``: earliest deadline first, as early as possible, O(N H + N log N).

Every schedule is finally compacted towards now (terms only move earlier),
so ``run_now`` lists the jobs to start this cycle.
"""

from __future__ import annotations

import math
import time
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np

from scheduling_opt.errors import InvalidInstanceError, VerificationError
from scheduling_opt.instance import Instance
from scheduling_opt.jsonpath import check_keys, read_array, read_bool, read_int, read_number
from scheduling_opt.model import Cluster, GpuType, Job, RewardStep, Server
from scheduling_opt.result import Result, SolveOptions, Status
from scheduling_opt.solvers import lease_exact as _exact
from scheduling_opt.solvers import lease_heuristic as _heur
from scheduling_opt.solvers.lease_model import (
    LeaseInput,
    LeaseResult,
    Schedule,
    compact,
    hint_terms,
    make_input,
    make_result,
    round_up_gpus,
)
from scheduling_opt.solvers.registry import Method, Problem

__all__ = [
    "Admission",
    "LeaseInput",
    "LeaseResult",
    "admission_control",
    "admit",
    "admit_jobs",
    "check_lease",
    "generate_lease",
    "hint_terms",
    "lease_edf",
    "lease_exact",
    "lease_exact_pulp",
    "lease_greedy",
    "make_input",
    "parse",
    "round_up_gpus",
    "select_leases",
]

Hint = Mapping[str, Sequence[int]]
_PARAMS = ("lease_length", "gpus", "require_all", "round_up", "max_terms", "jobs")

# --------------------------------------------------------------------------- parsing


def _selection(instance: Instance) -> list[int]:
    """Indices (in ``instance.jobs``) of the SLO jobs to schedule."""
    if "jobs" not in instance.params:
        return list(range(len(instance.jobs)))
    ids = read_array(instance.params["jobs"], "params.jobs")
    index = {job.id: i for i, job in enumerate(instance.jobs)}
    out: list[int] = []
    for n, job_id in enumerate(ids):
        if job_id not in index:
            raise InvalidInstanceError(f"params.jobs[{n}]", f"unknown job {job_id!r}")
        if index[job_id] in out:
            raise InvalidInstanceError(f"params.jobs[{n}]", f"job {job_id!r} listed twice")
        out.append(index[job_id])
    return out


def _capacity(instance: Instance, selected: Sequence[int]) -> int:
    """``params.gpus``, else training GPUs minus those held by placed jobs not selected."""
    if "gpus" in instance.params:
        return read_int(instance.params["gpus"], "params.gpus", 0)
    cluster = instance.require_cluster()
    total = sum(s.gpus for s in cluster.servers if s.usable_for_training)
    chosen = {instance.jobs[i].id for i in selected}
    held = sum(
        row.workers * instance.jobs_by_id[row.job].gpus_per_worker
        for row in instance.placement.rows
        if row.job not in chosen
    )
    return max(total - held, 0)


def parse(instance: Instance) -> LeaseInput:
    """Validate a lease instance's params and jobs; precompute the lease terms."""
    instance.require_no_other_sections()
    params = instance.params
    check_keys(params, "params", _PARAMS, ("lease_length",))
    lease_length = read_number(params["lease_length"], "params.lease_length")
    if not lease_length > 0:
        raise InvalidInstanceError(
            "params.lease_length", f"must be > 0 seconds, got {lease_length}"
        )
    max_terms = (
        read_int(params["max_terms"], "params.max_terms", 1) if "max_terms" in params else None
    )
    selected = _selection(instance)
    capacity = _capacity(instance, selected)
    jobs = [instance.jobs[i] for i in selected]
    try:
        return make_input(
            jobs,
            capacity,
            lease_length,
            require_all=read_bool(params.get("require_all", False), "params.require_all"),
            round_up=read_bool(params.get("round_up", False), "params.round_up"),
            max_terms=max_terms,
        )
    except InvalidInstanceError as e:
        if e.path.startswith("jobs["):  # renumber to the instance's job index
            n = int(e.path[5 : e.path.index("]")])
            raise InvalidInstanceError(
                f"jobs[{selected[n]}]{e.path[e.path.index(']') + 1 :]}", e.reason
            ) from None
        raise


# --------------------------------------------------------------------------- methods


def _finish(
    inp: LeaseInput, schedule: Schedule | None, status: Status, start: float, method: str
) -> LeaseResult:
    final = None if schedule is None else compact(inp, schedule)
    return make_result(inp, final, status, time.perf_counter() - start, method)


def _heuristic(inp: LeaseInput, run: Callable[[], Schedule], method: str) -> LeaseResult:
    """A heuristic's answer; under ``require_all`` an incomplete one is no answer.

    A heuristic proves nothing: when it cannot give every job a level it
    returns no answer with status ``time_limit`` ("stopped without a proof"),
    and ``infeasible`` only when some job alone cannot meet any deadline.
    """
    start = time.perf_counter()
    if inp.require_all and inp.hopeless:
        return _finish(inp, None, Status.INFEASIBLE, start, method)
    schedule = run()
    if inp.require_all and not schedule.complete():
        return _finish(inp, None, Status.TIME_LIMIT, start, method)
    return _finish(inp, schedule, Status.FEASIBLE, start, method)


def lease_greedy(inp: LeaseInput, hint: Hint | None = None) -> LeaseResult:
    """Best of three job orders, as late as possible (then compacted); from ``hint`` if given."""
    if hint is not None:
        return _heuristic(inp, lambda: _heur.repair(inp, hint), "greedy")
    return _heuristic(inp, lambda: _heur.greedy(inp), "greedy")


def lease_edf(inp: LeaseInput) -> LeaseResult:
    """Earliest deadline first (Chronus' EDF baseline)."""
    return _heuristic(inp, lambda: _heur.edf(inp), "edf")


def _best(inp: LeaseInput, candidates: Sequence[Schedule | None]) -> Schedule | None:
    ok = [c for c in candidates if c is not None and (c.complete() or not inp.require_all)]
    return max(ok, key=lambda c: c.reward(inp), default=None)


def _exact_run(
    inp: LeaseInput,
    solve: Callable[[Schedule | None], _exact.ExactOutcome],
    hint: Hint | None,
    method: str,
) -> LeaseResult:
    start = time.perf_counter()
    if inp.require_all and inp.hopeless:
        return _finish(inp, None, Status.INFEASIBLE, start, method)
    warm = _heur.repair(inp, hint) if hint is not None else None
    out = solve(warm)
    if out.status is Status.OPTIMAL:
        return _finish(inp, out.schedule, Status.OPTIMAL, start, method)
    if out.status is Status.INFEASIBLE:
        return _finish(inp, None, Status.INFEASIBLE, start, method)
    fallback = _best(inp, [out.schedule, warm, _heur.greedy(inp)])
    return _finish(inp, fallback, Status.TIME_LIMIT, start, method)


def lease_exact(
    inp: LeaseInput,
    *,
    time_limit: float = 60.0,
    hint: Hint | None = None,
    config: _exact.ModelConfig | None = None,
    seed: int = 0,
) -> LeaseResult:
    """The proven-optimal selection (``time_limit``: best incumbent, honestly labelled).

    ``hint`` (job id -> terms, e.g. :func:`hint_terms` of the previous cycle)
    is repaired into a feasible schedule: a CP-SAT hint, a CBC start, and on
    HiGHS (no start through scipy) the fallback incumbent on timeout.
    """
    cfg = config or _exact.ModelConfig()
    name = "exact" if cfg.backend == "highs" else f"exact-{cfg.backend}"
    return _exact_run(
        inp,
        lambda warm: _exact.solve(inp, time_limit=time_limit, config=cfg, hint=warm, seed=seed),
        hint,
        name,
    )


def lease_exact_pulp(
    inp: LeaseInput, *, time_limit: float = 60.0, hint: Hint | None = None
) -> LeaseResult:
    """The paper's formulation, written independently in PuLP and solved by CBC."""
    return _exact_run(
        inp,
        lambda warm: _exact.solve_pulp_model(inp, time_limit=time_limit, hint=warm),
        hint,
        "exact-pulp",
    )


LeaseMethod = Literal["exact", "exact-cpsat", "exact-pulp", "greedy", "edf"]


def select_leases(
    jobs: Sequence[Job],
    gpus: int,
    lease_length: float,
    *,
    method: LeaseMethod = "exact",
    require_all: bool = False,
    round_up: bool = False,
    max_terms: int | None = None,
    time_limit: float = 60.0,
    hint: Hint | None = None,
) -> LeaseResult:
    """One SLO scheduling cycle: which jobs hold which lease terms (seconds in, terms out)."""
    inp = make_input(
        jobs, gpus, lease_length, require_all=require_all, round_up=round_up, max_terms=max_terms
    )
    if method == "exact":
        return lease_exact(inp, time_limit=time_limit, hint=hint)
    if method == "exact-cpsat":
        cfg = _exact.ModelConfig(backend="cpsat")
        return lease_exact(inp, time_limit=time_limit, hint=hint, config=cfg)
    if method == "exact-pulp":
        return lease_exact_pulp(inp, time_limit=time_limit, hint=hint)
    if method == "greedy":
        return lease_greedy(inp, hint)
    if method == "edf":
        return lease_edf(inp)
    raise InvalidInstanceError("method", f"unknown lease method {method!r}")


# --------------------------------------------------------------------------- admission


@dataclass(frozen=True, slots=True)
class Admission:
    """Whether a new SLO job can be guaranteed along with every guaranteed one.

    ``status``: ``feasible`` (admitted; ``schedule`` guarantees them all),
    ``infeasible`` (proven impossible) or ``time_limit`` (undecided in time:
    not admitted, the conservative answer).
    """

    admitted: bool
    status: Status
    schedule: LeaseResult | None
    seconds: float


def admit_jobs(
    guaranteed: Sequence[Job],
    job: Job,
    gpus: int,
    lease_length: float,
    *,
    round_up: bool = False,
    max_terms: int | None = None,
    time_limit: float = 60.0,
) -> Admission:
    """Admission control (Chronus §3.3.2): greedy first, then a feasibility MILP."""
    if any(g.id == job.id for g in guaranteed):
        raise InvalidInstanceError("job.id", f"job {job.id!r} is already guaranteed")
    start = time.perf_counter()
    inp = make_input(
        [*guaranteed, job],
        gpus,
        lease_length,
        require_all=True,
        round_up=round_up,
        max_terms=max_terms,
    )
    if inp.hopeless:
        return Admission(False, Status.INFEASIBLE, None, time.perf_counter() - start)
    for run in (_heur.greedy, _heur.edf):
        found = run(inp)
        if found.complete():
            result = _finish(inp, found, Status.FEASIBLE, start, "admit")
            return Admission(True, Status.FEASIBLE, result, result.seconds)
    cfg = _exact.ModelConfig(feasibility=True)
    result = lease_exact(inp, time_limit=time_limit, config=cfg)
    seconds = time.perf_counter() - start
    if result.objective is not None:
        return Admission(True, Status.FEASIBLE, result, seconds)
    return Admission(False, result.status, None, seconds)


def admit(source: Instance | LeaseInput, job: Job, *, time_limit: float = 60.0) -> Admission:
    """Can ``job`` join the instance's guaranteed SLO jobs with every deadline still met?"""
    inp = parse(source) if isinstance(source, Instance) else source
    return admit_jobs(
        inp.source,
        job,
        inp.capacity,
        inp.lease_length,
        round_up=inp.round_up,
        max_terms=inp.max_terms,
        time_limit=time_limit,
    )


def admission_control(
    guaranteed: Sequence[Job],
    candidates: Sequence[Job],
    gpus: int,
    lease_length: float,
    *,
    round_up: bool = False,
    max_terms: int | None = None,
    time_limit: float = 60.0,
) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """Label profiled SLO jobs in order: (guaranteed ids, unguaranteed ids).

    Each admitted job joins the guaranteed set before the next is tried;
    an undecided check (time limit) counts as unguaranteed.
    """
    current = list(guaranteed)
    admitted: list[str] = []
    rejected: list[str] = []
    for job in candidates:
        verdict = admit_jobs(
            current,
            job,
            gpus,
            lease_length,
            round_up=round_up,
            max_terms=max_terms,
            time_limit=time_limit,
        )
        (admitted if verdict.admitted else rejected).append(job.id)
        if verdict.admitted:
            current.append(job)
    return tuple(admitted), tuple(rejected)


# --------------------------------------------------------------------------- checker


def _friendly(gpus: int) -> int:
    """Eq. (6) round-up, computed independently of the solvers' helper."""
    if gpus <= 4:
        return 1 << (gpus - 1).bit_length()
    return math.ceil(gpus / 8) * 8


def _due(inp: LeaseInput, step: RewardStep) -> int:
    due = math.floor(step.time / inp.lease_length)
    return due if inp.max_terms is None else min(due, inp.max_terms)


def _check_no_answer(inp: LeaseInput, result: Result, levels: Mapping[str, Any]) -> None:
    if any(v is not None for v in levels.values()):
        raise VerificationError("no objective, yet some jobs have levels")
    if result.status not in (Status.INFEASIBLE, Status.TIME_LIMIT):
        raise VerificationError(f"status {result.status} without an answer")
    if result.status is Status.INFEASIBLE and not inp.require_all:
        raise VerificationError("infeasible without require_all (rejecting all is feasible)")


def _check_job(
    inp: LeaseInput, job: Job, level: object, held: Sequence[object], usage: Counter[int]
) -> float:
    """One job's terms and level; returns its reward."""
    if level is None:
        if held:
            raise VerificationError(f"rejected job {job.id!r} holds terms {list(held)}")
        if inp.require_all:
            raise VerificationError(f"require_all, yet job {job.id!r} is rejected")
        return 0.0
    if not isinstance(level, int) or not 0 <= level < len(job.deadlines):
        raise VerificationError(f"job {job.id!r}: bad level {level!r}")
    terms = [k for k in held if isinstance(k, int) and not isinstance(k, bool) and k >= 0]
    if len(terms) != len(held) or len(set(terms)) != len(terms):
        raise VerificationError(f"job {job.id!r}: terms must be distinct indices >= 0")
    need = math.ceil(job.duration / inp.lease_length)
    if len(terms) != need:
        raise VerificationError(f"job {job.id!r} holds {len(terms)} terms, needs {need}")
    met = [p for p, step in enumerate(job.deadlines) if max(terms) < _due(inp, step)]
    if not met or met[0] != level:
        raise VerificationError(
            f"job {job.id!r}: last term {max(terms)} meets deadline "
            f"{met[0] if met else None}, decision says {level}"
        )
    gpus = job.max_workers * job.gpus_per_worker
    for k in terms:
        usage[k] += _friendly(gpus) if inp.round_up else gpus
    return job.deadlines[level].reward


def check_lease(source: Instance | LeaseInput, result: Result) -> None:
    """Recompute a decision's feasibility and reward from the jobs; raise if it fails.

    Works from the model's jobs and the raw parameters (not the solvers'
    level lists): RL_i terms, distinct, all before the chosen deadline's DL
    (and that deadline the first one the last term meets), at most M GPUs
    per term, run_now and the total reward.
    """
    inp = source if isinstance(source, LeaseInput) else parse(source)
    decision = result.decision()
    levels, terms = decision["levels"], decision["terms"]
    ids = [job.id for job in inp.source]
    if sorted(levels) != sorted(ids):
        raise VerificationError(f"levels must name every job exactly: {sorted(levels)}")
    if result.objective is None:
        _check_no_answer(inp, result, levels)
        return
    if result.status is Status.INFEASIBLE:
        raise VerificationError("infeasible, yet an answer")
    usage: Counter[int] = Counter()
    total = sum(
        _check_job(inp, job, levels[job.id], terms.get(job.id, []), usage) for job in inp.source
    )
    over = {k: u for k, u in usage.items() if u > inp.capacity}
    if over:
        raise VerificationError(f"terms over capacity {inp.capacity}: {over}")
    now = {job for job, held in terms.items() if 0 in held}
    if set(decision["run_now"]) != now:
        raise VerificationError(f"run_now {decision['run_now']} != jobs holding term 0")
    for got in (result.objective, decision["objective"]):
        if got is None or not math.isclose(got, total, rel_tol=1e-9, abs_tol=1e-6):
            raise VerificationError(f"objective {got!r} != recomputed reward {total}")


# --------------------------------------------------------------------------- generator

_GPU_SIZES = (1, 2, 4, 8, 16, 32, 3, 12)
_GPU_P = (0.40, 0.14, 0.16, 0.14, 0.08, 0.03, 0.03, 0.02)


def _steps(rng: np.random.Generator, remaining: float) -> tuple[RewardStep, ...]:
    """§4.1: D1 in [1.2 R, 2 R]; a third strict (100), the rest soft (100/80/50/20)."""
    d1 = float(rng.uniform(1.2, 2.0)) * remaining
    if rng.random() < 1 / 3:
        return (RewardStep(round(d1), 100),)
    return tuple(
        RewardStep(round(f * d1), v)
        for f, v in zip((1.0, 1.1, 1.2, 1.5), (100, 80, 50, 20), strict=True)
    )


def generate_lease(
    servers: int,
    n_jobs: int,
    seed: int,
    *,
    gpus_per_server: int = 8,
    lease_length: float = 1200.0,
    max_terms: int | None = 72,
    max_need: int = 40,
    pressure: float = 3.0,
) -> Instance:
    """A seeded instance: ``n_jobs`` SLO jobs on ``servers`` servers of ``gpus_per_server``.

    GPUs per job from a Philly-like mix, scaled up (when needed) so that the
    jobs together ask for about ``pressure`` x M GPUs (each job must run
    about 60% of its window and many cannot start at once), capped at M; RL_i
    lognormal (median 5 terms, at most ``max_need``); remaining time within
    its last term; deadline steps as in Chronus §4.1.
    """
    if servers < 1 or n_jobs < 1:
        raise InvalidInstanceError("size", "needs >= 1 server and >= 1 job")
    rng = np.random.default_rng(seed)
    total = servers * gpus_per_server
    mean = sum(g * p for g, p in zip(_GPU_SIZES, _GPU_P, strict=True))
    scale = max(1.0, pressure * total / (n_jobs * mean))
    jobs: list[Job] = []
    for n in range(n_jobs):
        gpus = min(max(1, round(int(rng.choice(_GPU_SIZES, p=_GPU_P)) * scale)), total)
        need = int(np.clip(round(float(np.exp(rng.normal(1.6, 0.9)))), 1, max_need))
        remaining = round((need - 1 + float(rng.uniform(0.05, 1.0))) * lease_length)
        jobs.append(
            Job(f"j{n + 1}", gpus, gpus, float(remaining), deadlines=_steps(rng, remaining))
        )
    cluster = Cluster(
        (GpuType("V100"),),
        tuple(Server(f"s{k + 1}", "V100", gpus_per_server) for k in range(servers)),
    )
    params: dict[str, Any] = {"lease_length": lease_length}
    if max_terms is not None:
        params["max_terms"] = max_terms
    return Instance("lease", cluster, tuple(jobs), params=params)


def generate(size: str, seed: int) -> Instance:
    """``j<N>``: N short jobs on one 4-GPU server (tiny, brute-forceable);
    ``c<S>-j<N>``: N jobs on S 8-GPU servers (``c120-j200``: Chronus' C120)."""
    try:
        if size.startswith("j"):
            return generate_lease(1, int(size[1:]), seed, gpus_per_server=4, max_need=3)
        servers, jobs = size.split("-")
        if servers.startswith("c") and jobs.startswith("j"):
            return generate_lease(int(servers[1:]), int(jobs[1:]), seed)
    except ValueError:
        pass
    raise InvalidInstanceError("size", f"unknown size {size!r} (j<N> or c<S>-j<N>)")


# --------------------------------------------------------------------------- registry


def _run_exact(inp: LeaseInput, options: SolveOptions) -> LeaseResult:
    return lease_exact(inp, time_limit=options.limit, seed=options.seed)


def _run_cpsat(inp: LeaseInput, options: SolveOptions) -> LeaseResult:
    cfg = _exact.ModelConfig(backend="cpsat")
    return lease_exact(inp, time_limit=options.limit, config=cfg, seed=options.seed)


def _run_pulp(inp: LeaseInput, options: SolveOptions) -> LeaseResult:
    return lease_exact_pulp(inp, time_limit=options.limit)


def _run_greedy(inp: LeaseInput, options: SolveOptions) -> LeaseResult:
    return lease_greedy(inp)


def _run_edf(inp: LeaseInput, options: SolveOptions) -> LeaseResult:
    return lease_edf(inp)


PROBLEM = Problem(
    name="lease",
    summary="Chronus SLO lease selection: which jobs hold which lease terms, max reward",
    sense="max",
    parse=parse,
    methods=(
        Method("exact", _run_exact, exact=True, summary="tightened MILP (HiGHS)"),
        Method("exact-cpsat", _run_cpsat, exact=True, summary="same model on CP-SAT"),
        Method("exact-pulp", _run_pulp, exact=True, summary="paper's MILP, independent (CBC)"),
        Method("greedy", _run_greedy, summary="best of 3 orders, as late as possible"),
        Method("edf", _run_edf, summary="earliest deadline first (paper's baseline)"),
    ),
    default="exact",
    check=check_lease,
    generate=generate,
    sizes={
        "quick": ("j4", "j6", "c1-j6"),
        "standard": ("c1-j10", "c4-j24", "c16-j60"),
        "paper": ("c60-j100", "c120-j200"),
    },
)
