"""``scheduling-opt simulate``: run policies on a workload and compare them side by side.

With no arguments: the bundled excerpt (P_MIX2's first day) under the
default baselines (:func:`~scheduling_opt.sim.registry.default_policies`) on its busy size (:data:`~scheduling_opt.sim.cli.busy.BUNDLED_BUSY_SERVERS`
x 8 GPUs, the largest cluster at which each of them misses at least 5% of
the deadlines: :mod:`scheduling_opt.sim.cli.busy`), the table printed with a
one-line reading under it. Files go to ``--out DIR`` (default
``simulate-out``): jobs.csv, timeline.csv, summary.json, report.md and
plots, and each run is cached under ``DIR/cache`` by a key that covers its
configuration, its data and its code (a rerun only computes what changed;
the table marks the runs read from the cache; ``--no-cache`` runs them
all). A trace file or the synthetic workload runs on Chronus' 120 x 8 GPUs
unless ``--servers`` says otherwise.

``--policy NAME:key=value,key=value`` sets a policy's parameters, checked
against its declaration (``scheduling-opt policies NAME`` lists them);
``--plugin MODULE_OR_FILE`` imports a module or a ``.py`` file that
registers a policy of the user's own
(:func:`~scheduling_opt.sim.registry.register_policy`).
"""

from __future__ import annotations

import argparse
from dataclasses import replace
from pathlib import Path
from typing import Any

from scheduling_opt.errors import InvalidInstanceError
from scheduling_opt.sim import limits, registry
from scheduling_opt.sim.bounds.outputs import bound_table
from scheduling_opt.sim.cli.busy import BUNDLED_BUSY_SERVERS, BUSY_MISS_RATIO
from scheduling_opt.sim.cli.options import (
    TRACE_SERVERS,
    add_source,
    as_options,
    output_folder,
    preload_trace,
)
from scheduling_opt.sim.cli.output import (
    TIME_UNIT,
    cache_note,
    profiler_note,
    reading,
    table,
    write_all,
)
from scheduling_opt.sim.cli.progress import progress_bar
from scheduling_opt.sim.semantics import DEFAULT, with_semantics
from scheduling_opt.sim.sweep import RunConfig, WorkloadSpec, run_sweep
from scheduling_opt.sim.synthetic import SyntheticSpec
from scheduling_opt.sim.workload import BUNDLED, BUNDLED_JOBS

DEFAULT_OUT = "simulate-out"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The ``simulate`` options."""
    add_source(parser)
    parser.add_argument(
        "--policy",
        action="append",
        metavar="NAME[:KEY=VALUE,...]",
        help="a policy and its parameters (repeatable; default the baselines fifo, sjf, edf, "
        "srtf, tiresias, yarn-cs); 'scheduling-opt policies' lists every policy, "
        "'scheduling-opt policies NAME' its parameters",
    )
    add_plugin_argument(parser)
    parser.add_argument(
        "--servers",
        type=int,
        help=f"servers (default {BUNDLED_BUSY_SERVERS} for the bundled excerpt, its busy size; "
        f"{TRACE_SERVERS} otherwise)",
    )
    parser.add_argument("--gpus-per-server", type=int, default=8, help="GPUs per server (8)")
    parser.add_argument("--seeds", type=int, default=1, help="seeds 0..N-1 per policy (1)")
    parser.add_argument("--workers", type=int, default=1, help="parallel runs (1)")
    parser.add_argument("--executor", choices=("local", "dask"), default="local")
    parser.add_argument("--scheduler", help="with --executor dask: a running scheduler's address")
    parser.add_argument(
        "--out", metavar="DIR", default=DEFAULT_OUT, help=f"results, report, plots ({DEFAULT_OUT})"
    )
    parser.add_argument("--synthetic-jobs", type=int, default=1000, help="synthetic size")
    parser.add_argument("--round", type=float, metavar="T", help="round mode: decide every T")
    parser.add_argument("--restart-cost", type=float, default=0.0, help="stall per resume")
    parser.add_argument("--preemption-cost", type=float, default=0.0, help="work lost per stop")
    parser.add_argument(
        "--resize-cost",
        type=float,
        metavar="T",
        help="stall per resize or migration (the restart cost unless given)",
    )
    parser.add_argument("--skip", type=float, default=0.0, help="leave the first fraction out")
    parser.add_argument(
        "--no-placement-table",
        action="store_true",
        help="ignore model_info.json (a spread placement runs at full speed)",
    )
    parser.add_argument(
        "--start-overhead",
        type=float,
        default=0.0,
        help="work added at each start, x (1 + log2 GPUs) (the Chronus artifact: 0.5 min)",
    )
    parser.add_argument(
        "--arrival-step",
        type=float,
        metavar="T",
        help="policies see arrivals at multiples of T (the Chronus artifact: 5 min)",
    )
    parser.add_argument(
        "--semantics",
        default=DEFAULT,
        help="the simulator's rules: 'default', 'artifact' (the Chronus authors' simulator's), "
        "'artifact-mip' (also its selection MILP as it runs it; needs the 'parity' extra); "
        "docs/simulation.md",
    )
    parser.add_argument(
        "--no-cache", action="store_true", help="run every policy again (the cache is rewritten)"
    )
    parser.add_argument("--timeline-step", type=float, default=60.0, help="timeline sampling")
    parser.add_argument("--quiet", action="store_true", help="no progress bar")


def _configs(args: argparse.Namespace) -> list[RunConfig]:
    """The runs the options ask for, every option checked (and the sweep's size) before any run.

    The checks are the library's (sim/limits.py), shown under the option's
    name (:func:`~scheduling_opt.sim.cli.options.as_options`).
    """
    plugins = load_plugins(args.plugin)
    texts = args.policy or list(registry.default_policies())
    chosen = []
    for i, text in enumerate(texts):
        if text in texts[:i]:
            raise InvalidInstanceError("--policy", f"{text!r} given twice")
        name, params = registry.parse_policy(text)
        chosen.append((text, name, params))
    seeds = limits.count(args.seeds, "--seeds", limits.MAX_RUNS, why="runs per sweep")
    limits.count(args.workers, "--workers", 2**53)
    limits.clock(args.timeline_step, "--timeline-step", positive=True)
    if args.trace is not None:
        workload = preload_trace(args.trace)
        spec = WorkloadSpec("trace", str(Path(args.trace).resolve()))
        jobs = len(workload.jobs)
        if args.round is not None:
            limits.check_rounds([(j.submit, j.work) for j in workload.jobs], args.round, "--round")
    elif args.workload == "synthetic":
        with as_options({"jobs": "--synthetic-jobs"}):
            spec = WorkloadSpec("synthetic", synthetic=SyntheticSpec(jobs=args.synthetic_jobs))
        jobs = args.synthetic_jobs
    else:
        spec = WorkloadSpec("bundled")
        jobs = BUNDLED_JOBS
    limits.check_sweep(len(chosen) * seeds, jobs, "--seeds")
    with as_options():
        first = RunConfig(
            policy=chosen[0][1],
            workload=spec,
            servers=args.servers,
            gpus_per_server=args.gpus_per_server,
            restart_cost=args.restart_cost,
            preemption_cost=args.preemption_cost,
            round_length=args.round,
            placement_table=not args.no_placement_table,
            skip=args.skip,
            start_overhead=args.start_overhead,
            arrival_step=args.arrival_step,
            plugins=plugins,
            resize_cost=args.resize_cost,
        )
    return [
        with_semantics(
            replace(
                first,
                policy=name,
                policy_params=params,
                label=text if params else "",
                seed=seed,
            ),
            args.semantics,
        )
        for text, name, params in chosen
        for seed in range(seeds)
    ]


def add_plugin_argument(parser: argparse.ArgumentParser) -> None:
    """``--plugin MODULE_OR_FILE`` (repeatable), shared with ``reproduce``."""
    parser.add_argument(
        "--plugin",
        action="append",
        default=[],
        metavar="MODULE_OR_FILE",
        help="import a module or a .py file that registers policies (repeatable; "
        "docs/write-a-policy.md)",
    )


def load_plugins(texts: list[str]) -> tuple[str, ...]:
    """Load each ``--plugin`` once, in order; their keys for the runs' configurations."""
    keys: list[str] = []
    for text in texts:
        registry.load_plugin(text)
        key = registry.plugin_key(text)
        if key not in keys:
            keys.append(key)
    return tuple(keys)


def run(args: argparse.Namespace) -> int:
    """Run the ``simulate`` command; print the table; return the exit code (0)."""
    from scheduling_opt import __version__

    bundled = args.trace is None and args.workload in (None, BUNDLED)
    # The busy size was found at 8 GPUs per server: only then does the header claim it.
    busy = bundled and args.servers is None and args.gpus_per_server == 8
    if args.servers is None:
        args.servers = BUNDLED_BUSY_SERVERS if bundled else TRACE_SERVERS
    configs = _configs(args)
    out_dir = output_folder(args.out) if args.out else None
    client = None
    if args.scheduler:
        if args.executor != "dask":
            raise InvalidInstanceError("--scheduler", "goes with --executor dask")
        client = _dask_client(args.scheduler)
    with as_options():
        results = run_sweep(
            configs,
            workers=args.workers,
            executor=args.executor,
            cache_dir=out_dir / "cache" if out_dir else None,
            progress=progress_bar(args.quiet),
            dask_client=client,
            job_progress=progress_bar(args.quiet, "job"),
            refresh=args.no_cache,
        )
    first = results[0]
    size = (
        f" (the bundled day's busy size: every baseline misses >= {BUSY_MISS_RATIO:.0%} "
        "of the deadlines)"
        if busy
        else ""
    )
    print(
        f"workload {first.workload_name} ({int(first.metrics['jobs'])} jobs), "
        f"{args.servers} x {args.gpus_per_server} GPUs{size}; times in {TIME_UNIT}; "
        f"{cost_words(first.config)}"
    )
    print(table(results), end="")
    print(reading(results))
    profiled = profiler_note(results)
    if profiled:
        print(profiled)
    print("\n" + bound_table(results), end="")
    cached = cache_note(results)
    if cached:
        print(cached)
    if out_dir is not None:
        with as_options():
            plots = write_all(out_dir, results, __version__, args.timeline_step)
        print(f"wrote {out_dir / 'report.md'}, jobs.csv, timeline.csv, summary.json")
        if plots:
            print(f"plots: {', '.join(str(out_dir / p) for p in plots)}")
        else:
            print("plots: none (matplotlib is not installed: pip install 'scheduling-opt[bench]')")
    return 0


def cost_words(config: RunConfig) -> str:
    """The header's statement of the run's restart costs (0 unless an option or preset sets one).

    Examples
    --------
    >>> cost_words(RunConfig("fifo"))
    'restart costs: none (the default; --restart-cost, --preemption-cost, --start-overhead)'
    >>> cost_words(RunConfig("fifo", restart_cost=1.05, start_overhead=0.5))
    'restart costs: 1.05 stall per resume, 0.5 x (1 + log2 g) work per start'
    """
    parts = []
    if config.restart_cost:
        parts.append(f"{config.restart_cost:g} stall per resume")
    if config.resize_cost is not None and config.resize_cost != config.restart_cost:
        parts.append(f"{config.resize_cost:g} stall per resize")
    if config.preemption_cost:
        parts.append(f"{config.preemption_cost:g} work lost per preemption")
    if config.start_overhead:
        parts.append(f"{config.start_overhead:g} x (1 + log2 g) work per start")
    if not parts:
        return (
            "restart costs: none (the default; --restart-cost, --preemption-cost, --start-overhead)"
        )
    return "restart costs: " + ", ".join(parts)


def _dask_client(address: str) -> Any:
    try:
        from distributed import Client
    except ImportError:
        raise InvalidInstanceError(
            "--scheduler", "dask needs the 'dask' extra: pip install 'scheduling-opt[dask]'"
        ) from None
    try:
        return Client(address, timeout=10)
    except (OSError, ValueError, TypeError) as e:
        raise InvalidInstanceError("--scheduler", f"cannot connect to {address!r}: {e}") from None


def main(argv: list[str] | None = None) -> int:
    """Stand-alone entry (the CLI wires :func:`add_arguments` and :func:`run`)."""
    parser = argparse.ArgumentParser(prog="scheduling-opt simulate", description=__doc__)
    add_arguments(parser)
    return run(parser.parse_args(argv))
