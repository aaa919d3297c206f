"""Benchmark of Chronus lease selection at C120: exact backends, formulation study, greedy gap.

Usage::

    python benchmarks/bench_lease.py [--trace PATH] [--repeats 3] [--time-limit 60]

Instances (M = 960 GPUs, T_l = 20 minutes, horizon capped at 72 terms):

- ``trace-all-k``: from the Chronus Philly MIX2 trace (default
  ``../shared/traces/chronus-philly/trace_job_Philly_MIX2.csv`` next to the
  repository; skipped cleanly when absent), SLO jobs (strict and soft, GPUs
  >= 1) in submission order from row ``k * 10000``: the first 200 whose first
  deadline lies ahead of "now" (= the last one's submission) by at most 72
  terms (24 h: decidable within the horizon); remaining time
  = the whole duration (none has run yet), deadlines relative to now.
- ``trace-gpu4-k``: the same with only jobs of >= 4 GPUs (the ones that
  contend for a guaranteed cluster: 200 Philly SLO jobs of any size ask for
  ~300 GPUs, which never fills 960).
- ``synth-pP-s``: ``generate_lease(120, 200, s, pressure=P)``.

Every answer passes ``lease.check``; times are medians over ``--repeats``
runs (the 2 cores are shared). ``--two-stage`` prints only the issue-16 table:
``exact`` (levels, then packing) against the whole MILP at once
(``two_stage=False``), wall and CPU seconds (``time.process_time``), on the
synthetic instances. The methods table also gives each exact
method's certified gap (from its own bound) and the LP-relaxation bound
(``lease.upper_bound``) with its time next to the greedy's. The study table
runs the formulation steps (docs/lease.md) on each backend.
"""

from __future__ import annotations

import argparse
import functools
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

from scheduling_opt import lease
from scheduling_opt.io.traces import iter_trace, to_job
from scheduling_opt.lease import LeaseDecision, LeaseInput, ModelConfig, model_size
from scheduling_opt.lease.io import generate_lease, read
from scheduling_opt.solution import DEFAULT_TIME_LIMIT, Solution, Status

Result = Solution[LeaseDecision]
Backend = Callable[..., Result]

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_TRACE = ROOT.parent / "shared" / "traces" / "chronus-philly" / "trace_job_Philly_MIX2.csv"
GPUS, LEASE, TERMS, JOBS = 960, 1200.0, 72, 200
HORIZON = TERMS * LEASE

STUDY: tuple[tuple[str, Backend, ModelConfig], ...] = (
    ("paper Eq. 4 linearized (HiGHS)", lease.exact, ModelConfig(tight=False, symmetry=False)),
    ("+ tight linking", lease.exact, ModelConfig(symmetry=False)),
    (
        "+ symmetry, whole MILP at once",
        functools.partial(lease.exact, two_stage=False),
        ModelConfig(),
    ),
    ("+ symmetry, levels then packing (final)", lease.exact, ModelConfig()),
    ("+ tail aggregation", lease.exact, ModelConfig(aggregate=True)),
    ("tight only, CP-SAT", lease.exact_cpsat, ModelConfig(symmetry=False)),
    ("final on CP-SAT (8 workers)", lease.exact_cpsat, ModelConfig()),
    ("paper, CBC", lease.exact_cbc, ModelConfig(tight=False, symmetry=False)),
    ("final on CBC", lease.exact_cbc, ModelConfig()),
)


def log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def trace_instance(path: Path, offset: int, min_gpus: int) -> LeaseInput:
    """200 SLO jobs from ``offset`` in submission order (see the module docstring)."""
    rows = sorted(
        (r for r in iter_trace(path) if r.slo and r.num_gpu >= min_gpus),
        key=lambda r: (r.submit_time, int(r.job_id)),
    )[offset:]
    for size in range(JOBS, len(rows) + 1):
        now = rows[size - 1].submit_time
        jobs = [to_job(r, now) for r in rows[:size]]
        live = [j for j in jobs if j is not None and j.deadlines and j.deadlines[0].time <= HORIZON]
        if len(live) >= JOBS:
            return LeaseInput(tuple(live[:JOBS]), GPUS, LEASE, max_terms=TERMS)
    raise SystemExit(f"fewer than {JOBS} usable jobs after row {offset}")


def median_run(run: Callable[[], Result], inp: LeaseInput, repeats: int) -> Result:
    results = [run() for _ in range(repeats)]
    for r in results:
        lease.check(inp, r)
    return results[0].with_(seconds=statistics.median(r.seconds for r in results))


def fmt(r: Result) -> str:
    """Seconds, and the status with the certified gap when not proven optimal."""
    if r.status is Status.OPTIMAL:
        return f"{r.seconds:.2f}"
    gap = "" if r.gap is None else f", gap {r.gap:.2%}"
    return f"{r.seconds:.2f} ({r.status.value}{gap})"


def timed_bound(inp: LeaseInput, repeats: int) -> tuple[float, float]:
    """The LP bound and its median time."""
    times = []
    value = 0.0
    for _ in range(repeats):
        start = time.perf_counter()
        value = lease.upper_bound(inp)
        times.append(time.perf_counter() - start)
    return value, statistics.median(times)


def instances(trace: Path | None, seeds: int = 3) -> list[tuple[str, LeaseInput]]:
    out: list[tuple[str, LeaseInput]] = []
    if trace is not None:
        for k in range(3):
            out.append((f"trace-all-{k}", trace_instance(trace, 10000 * k, 1)))
        for k in range(3):
            out.append((f"trace-gpu4-{k}", trace_instance(trace, 600 * k, 4)))
    for p in (3.0, 4.0):
        for s in range(1, seeds + 1):
            inst = generate_lease(120, JOBS, s, pressure=p)
            out.append((f"synth-p{p:g}-{s}", read(inst)))
    return out


def methods_table(cases: list[tuple[str, LeaseInput]], repeats: int, limit: float) -> None:
    print(
        "| instance | hopeless | vars x rows | HiGHS s | CP-SAT s | CP-SAT racing s | CBC s "
        "| optimum "
        "| greedy gap | greedy s | LP bound | LP s | EDF gap |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for name, inp in cases:
        log(f"methods: {name}")
        ex = median_run(functools.partial(lease.exact, inp, time_limit=limit), inp, repeats)
        cp = median_run(functools.partial(lease.exact_cpsat, inp, time_limit=limit), inp, 1)
        race = median_run(
            functools.partial(lease.exact_cpsat, inp, time_limit=limit, deterministic=False), inp, 1
        )
        cbc = median_run(functools.partial(lease.exact_pulp, inp, time_limit=limit), inp, 1)
        gr = median_run(functools.partial(lease.greedy, inp), inp, repeats)
        edf = median_run(functools.partial(lease.edf, inp), inp, repeats)
        lp, lp_s = timed_bound(inp, repeats)
        opt = ex.objective or 0.0
        gap = (opt - (gr.objective or 0.0)) / max(opt, 1.0)
        egap = (opt - (edf.objective or 0.0)) / max(opt, 1.0)
        v, r = model_size(inp)
        print(
            f"| {name} | {len(inp.hopeless)} | {v} x {r} | {fmt(ex)} | {fmt(cp)} | {fmt(race)} "
            f"| {fmt(cbc)} "
            f"| {opt:g} | {gap:.2%} | {gr.seconds:.3f} | {lp:.1f} | {lp_s:.3f} | {egap:.2%} |",
            flush=True,
        )


def two_stage_table(
    cases: list[tuple[str, LeaseInput]], repeats: int, limit: float, *, whole: bool = True
) -> None:
    """Issue 16: the two-stage ``exact`` against the whole MILP, wall and CPU seconds (medians).

    ``whole=False`` leaves the whole MILP out (its cells "-"): it takes minutes.
    """
    print(
        "| instance | whole MILP s | whole MILP CPU s | two-stage s | two-stage CPU s "
        "| optimum | statuses | last message |"
    )
    print("|---|---|---|---|---|---|---|---|")
    for name, inp in cases:
        log(f"two-stage: {name}")
        cells: list[str] = []
        statuses: list[str] = []
        objective: float | str | None = None
        message = ""
        if not whole:
            cells += ["-", "-"]
        for two in (False, True) if whole else (True,):
            walls, cpus = [], []
            for _ in range(repeats):
                cpu = time.process_time()
                r = lease.exact(inp, time_limit=limit, two_stage=two)
                cpus.append(time.process_time() - cpu)
                walls.append(r.seconds)
                lease.check(inp, r)
                statuses.append(r.status.value)
                if r.status is Status.OPTIMAL:
                    objective = r.objective
                elif objective is None:  # unproven: best found / bound
                    objective = f"{r.objective} / {r.bound}"
                message = r.message
            cells += [f"{statistics.median(walls):.2f}", f"{statistics.median(cpus):.2f}"]
        kinds = ", ".join(f"{n} {k}" for k, n in sorted(_count(statuses).items()))
        print(
            f"| {name} | " + " | ".join(cells) + f" | {objective} | {kinds} | {message} |",
            flush=True,
        )


def _count(items: list[str]) -> dict[str, int]:
    out: dict[str, int] = {}
    for item in items:
        out[item] = out.get(item, 0) + 1
    return out


def study_table(cases: list[tuple[str, LeaseInput]], limit: float) -> None:
    print("\n| model | " + " | ".join(n for n, _ in cases) + " |")
    print("|---|" + "---|" * len(cases))
    for label, backend, cfg in STUDY:
        cells = []
        for name, inp in cases:
            log(f"study: {label} on {name}")
            r = backend(inp, time_limit=limit, config=cfg)
            lease.check(inp, r)
            cells.append(fmt(r))
        print(f"| {label} | " + " | ".join(cells) + " |", flush=True)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--trace", type=Path, default=DEFAULT_TRACE)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--time-limit", type=float, default=DEFAULT_TIME_LIMIT)
    parser.add_argument("--no-study", action="store_true")
    parser.add_argument("--synthetic-only", action="store_true")
    parser.add_argument("--two-stage", action="store_true", help="only the issue-16 table")
    parser.add_argument("--seeds", type=int, default=3, help="synthetic seeds 1..N per pressure")
    parser.add_argument(
        "--no-whole", action="store_true", help="two-stage table: skip the whole MILP"
    )
    args = parser.parse_args(argv)
    if args.two_stage:
        cases = instances(None, args.seeds)
        two_stage_table(cases, args.repeats, args.time_limit, whole=not args.no_whole)
        return 0
    trace: Path | None = args.trace
    if args.synthetic_only:
        trace = None
    elif trace is not None and not trace.is_file():
        log(f"trace {trace} not found: trace rows skipped")
        trace = None
    cases = instances(trace, args.seeds)
    methods_table(cases, args.repeats, args.time_limit)
    if not args.no_study:
        hard = [c for c in cases if c[0] in ("synth-p4-1", "synth-p4-2", "trace-all-0")]
        study_table(hard, args.time_limit)
    return 0


if __name__ == "__main__":
    sys.exit(main())
