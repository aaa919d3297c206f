"""``scheduling-opt reproduce PAPER``: a paper's policies x workloads x seeds, beside its numbers.

``--quick`` runs the set on the bundled excerpt (P_MIX2's first day); the
default runs the full setup: for a paper whose full workloads are the
Chronus-Philly trace files, on those found under ``--traces DIR``, which is
then required (a missing trace is skipped with a note in the report); a
paper whose full workloads are generated needs no ``--traces``.
Writes ``report.md``, the raw results and plots under ``--out`` (default
``reproduce-PAPER`` or ``reproduce-PAPER-quick``), and caches each run under
``DIR/cache``, so a rerun only computes what changed. ``--from-cache``
writes the report from the runs already cached there and computes none (a
long grid stopped, or still running in another process); the report then
says it is partial and names every run it lacks; ``--no-cache`` runs every
configuration again.

``--policy NAME[:key=value,...]`` (repeatable) adds a policy to the
paper's set: it runs at every point of the set, beside the paper's own
policies, and its metrics are in every table (the claims compare the
paper's policies only). ``--plugin MODULE_OR_FILE`` imports a module or a
``.py`` file that registers a policy of the user's own first.

Every run pays the paper's restart costs (``PaperSet.costs``,
reproduce/costs.py: Chronus' artifact start overhead, Aryl's 63 s, EDL's
and ONES' checkpoint restart against their cheap scaling, AntMan's
documented choice), baselines included; ``--zero-costs`` runs the set
without them (the algorithm-only reading), ``--start-overhead T`` sets
the start overhead of every run. A set with a ``cost_sweep`` re-judges its
claims at those costs too (the report's "Restart costs" section,
reproduce/cost_sweep.py).

A paper's microbenchmarks (``PaperSet.scenarios``: a few jobs on one
server) run in every mode, ``--from-cache`` included, and get their own
section of the report with their verdicts.
"""

from __future__ import annotations

import argparse
from collections.abc import Iterable, Sequence
from dataclasses import replace
from pathlib import Path

from scheduling_opt.errors import InvalidInstanceError
from scheduling_opt.reproduce.cost_sweep import cost_section
from scheduling_opt.reproduce.costs import Costs
from scheduling_opt.reproduce.grid import Judged, evaluate, judged_points, points
from scheduling_opt.reproduce.microbench import scenario_section
from scheduling_opt.reproduce.papers import PAPERS, PaperSet, PolicyRun, paper
from scheduling_opt.reproduce.report import by_workload, claims_table, verdict_table, write_report
from scheduling_opt.reproduce.workloads import MAX_DENSITY
from scheduling_opt.sim import limits, registry
from scheduling_opt.sim.cli.options import as_options, output_folder
from scheduling_opt.sim.cli.output import cache_note
from scheduling_opt.sim.cli.progress import progress_bar
from scheduling_opt.sim.cli.simulate import add_plugin_argument, load_plugins
from scheduling_opt.sim.sweep import RunConfig, RunResult, cached_results, run_sweep

#: Seeds a reproduction may ask for (each is a run of every policy at every point).
MAX_SEEDS = 100


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The ``reproduce`` options."""
    parser.add_argument("paper", metavar="PAPER", help=f"one of {', '.join(PAPERS)}")
    parser.add_argument("--quick", action="store_true", help="the bundled excerpt only")
    parser.add_argument("--out", metavar="DIR", help="output folder (reproduce-PAPER[-quick])")
    parser.add_argument("--workers", type=int, default=1, help="parallel runs (1)")
    parser.add_argument("--executor", choices=("local", "dask"), default="local")
    parser.add_argument(
        "--traces",
        metavar="DIR",
        help="folder of the Chronus-Philly CSVs (required in full mode by the papers that "
        "replay them)",
    )
    parser.add_argument(
        "--density",
        metavar="D[,D...]",
        help="job densities to run instead of the paper's sweep (e.g. 1 or 0.8,1.2; "
        "1 is the workload as it is)",
    )
    parser.add_argument("--seeds", type=int, metavar="N", help="seeds per run (the paper's own)")
    parser.add_argument("--quiet", action="store_true", help="no progress bar")
    parser.add_argument(
        "--start-overhead",
        type=float,
        default=0.0,
        metavar="T",
        help="every run's jobs owe T x (1 + log2 GPUs) of work at each start, "
        "resumes included (default: the paper's; the Chronus artifact: 0.5 min)",
    )
    parser.add_argument(
        "--zero-costs",
        action="store_true",
        help="no restart, resize, preemption or start cost for any run (default: the paper's)",
    )
    parser.add_argument(
        "--from-cache",
        action="store_true",
        help="report on the runs already in --out's cache, computing none (the report "
        "names the runs it lacks)",
    )
    parser.add_argument(
        "--no-cache", action="store_true", help="run every configuration again (cache rewritten)"
    )
    parser.add_argument(
        "--policy",
        action="append",
        default=[],
        metavar="NAME[:KEY=VALUE,...]",
        help="a policy to run beside the paper's, at every point (repeatable; "
        "'scheduling-opt policies' lists them)",
    )
    add_plugin_argument(parser)


def with_extra(chosen: PaperSet, texts: Sequence[str]) -> PaperSet:
    """``chosen`` with the ``--policy`` runs added (each at every point, named as given).

    Examples
    --------
    >>> s = with_extra(PAPERS["edl"], ["srtf", "tiresias:promote_knob=4"])
    >>> [p.name for p in s.policies[-2:]]
    ['srtf', 'tiresias:promote_knob=4']
    """
    extra = []
    names = {p.name for p in chosen.policies}
    for text in texts:
        name, params = registry.parse_policy(text)
        label = text if params else ""
        if (label or name) in names:
            raise InvalidInstanceError(
                "--policy", f"{text!r} is already in {chosen.name}'s set or given twice"
            )
        names.add(label or name)
        extra.append(PolicyRun(name, params, label=label))
    return replace(chosen, policies=(*chosen.policies, *extra))


def parse_densities(text: str | None) -> tuple[float, ...] | None:
    """``--density``'s comma-separated values (None: the paper's sweep).

    Examples
    --------
    >>> parse_densities("0.8, 1,1.2"), parse_densities(None)
    ((0.8, 1.0, 1.2), None)
    """
    if text is None:
        return None
    out: list[float] = []
    for part in text.split(","):
        try:
            d = float(part)
        except ValueError:
            raise InvalidInstanceError("--density", f"not a number: {part.strip()!r}") from None
        if not 0.0 < d <= MAX_DENSITY:
            raise InvalidInstanceError("--density", f"must be in (0, {MAX_DENSITY:g}], got {d!r}")
        if d not in out:
            out.append(d)
    return tuple(sorted(out))


def overhead(configs: list[RunConfig], args: argparse.Namespace) -> list[RunConfig]:
    """``configs`` without costs (``--zero-costs``), then with ``--start-overhead`` (checked as the option)."""
    with as_options():
        if args.zero_costs:
            configs = [Costs().apply(c) for c in configs]
        if args.start_overhead:
            configs = [replace(c, start_overhead=args.start_overhead) for c in configs]
    return configs


def costs_note(chosen: PaperSet, zero: bool) -> str:
    """The report's header line on the restart costs every run pays.

    Examples
    --------
    >>> from scheduling_opt.reproduce.papers import PAPERS
    >>> costs_note(PAPERS["aryl"], False)[:62]
    'Restart costs, every policy: 1.05 minutes stall per resume. Ar'
    >>> costs_note(PAPERS["aryl"], True)[:48]
    'Restart costs: none (--zero-costs; the paper: 1.'
    """
    said = chosen.costs.describe(chosen.unit)
    if zero:
        return f"Restart costs: none (--zero-costs; the paper: {said})."
    return f"Restart costs, every policy: {said}. {chosen.costs.source}."


def overhead_note(per_start: float, unit: str) -> str:
    """The report's header line for ``--start-overhead``.

    Examples
    --------
    >>> overhead_note(0.5, "minutes")[:73]
    'Every policy pays a start overhead (--start-overhead): 0.5 x (1 + log2 g)'
    """
    return (
        f"Every policy pays a start overhead (--start-overhead): {per_start:g} x (1 + log2 g) "
        f"{unit} of work at each start of a g-GPU job, resumes included (the default run "
        "charges none)."
    )


def partial_note(missing: Iterable[RunConfig], runs: int) -> str:
    """The report's header line for a report written from the cache (``--from-cache``).

    Examples
    --------
    >>> partial_note([], 3)
    'Written from the cache (--from-cache): all 3 runs found.'
    >>> note = partial_note([RunConfig("fifo", seed=2)], 3)
    >>> note.split(": ")[1:]
    ['1 of 3 runs not made', 'fifo on philly-mix2-day1 seed 2']
    """
    lacking = [f"{c.name} on {c.workload.name} seed {c.seed}" for c in missing]
    if not lacking:
        return f"Written from the cache (--from-cache): all {runs} runs found."
    return (
        f"PARTIAL, written from the cache (--from-cache): {len(lacking)} of {runs} runs "
        f"not made: {', '.join(lacking)}"
    )


def run(args: argparse.Namespace) -> int:
    """Run the ``reproduce`` command; print the claims tables; return the exit code.

    Parameters
    ----------
    args : argparse.Namespace
        Parsed by a parser given :func:`add_arguments`.

    Returns
    -------
    int
        0 (errors raise).

    Raises
    ------
    InvalidInstanceError
        An unknown paper, ``--workers`` < 1, no ``--traces`` in full mode
        for a paper that replays trace files, no trace found there, or an
        ``--out`` folder that cannot be created (the CLI prints it in one
        line, exit status 2).
    """
    from scheduling_opt import __version__

    chosen = paper(args.paper)
    plugins = load_plugins(args.plugin)
    chosen = with_extra(chosen, args.policy)
    limits.count(args.workers, "--workers", 2**53)
    if args.seeds is not None and not 1 <= args.seeds <= MAX_SEEDS:
        raise InvalidInstanceError("--seeds", f"must be in 1..{MAX_SEEDS}, got {args.seeds}")
    densities = parse_densities(args.density)
    if not args.quick and chosen.needs_traces and args.traces is None:
        # The library names its argument (traces=); the command names the fix.
        raise InvalidInstanceError(
            "--traces",
            f"full mode of {chosen.name} replays the Chronus-Philly trace files: "
            "give --traces DIR (the folder holding them) or run --quick",
        )
    traces = Path(args.traces) if args.traces is not None else None
    with as_options():
        _, notes = chosen.workloads(args.quick, traces)
        configs = overhead(chosen.configs(args.quick, traces, densities, args.seeds), args)
        configs = [replace(c, plugins=plugins) for c in configs] if plugins else configs
    notes = [*notes, costs_note(chosen, args.zero_costs)]
    if args.start_overhead:
        notes = [*notes, overhead_note(args.start_overhead, chosen.unit)]
    if not configs:
        raise InvalidInstanceError("--traces", f"no trace of {chosen.name} found: {notes}")
    out_dir = output_folder(args.out or f"reproduce-{chosen.name}{'-quick' if args.quick else ''}")

    missing: dict[str, RunConfig] = {}
    made: dict[str, RunResult] = {}  # the runs this invocation made (--no-cache: not again)

    def sweep(todo: list[RunConfig]) -> list[RunResult]:
        if args.from_cache:
            found, lacking = cached_results(todo, out_dir / "cache")
            missing.update((c.digest(), c) for c in lacking)
            return found
        fresh = [c for c in todo if c.digest() not in made]
        with as_options():
            new = run_sweep(
                fresh,
                workers=args.workers,
                executor=args.executor,
                cache_dir=out_dir / "cache",
                progress=progress_bar(args.quiet),
                job_progress=progress_bar(args.quiet, "job"),
                refresh=args.no_cache,
            )
        made.update((r.config.digest(), r) for r in new)
        return [made[c.digest()] for c in todo]

    results = sweep(configs)
    target = chosen.sweep.target if chosen.sweep is not None else None
    if target is not None and any(not p.everywhere for p in chosen.policies):
        # Stage two: the runs made only at the judged density, which the
        # target's runs of stage one chose (the cache keeps stage one's runs).
        chosen_points = judged_points(chosen, points(results), quick=args.quick)
        judged = {j.point.workload: j.point.density for j in chosen_points}
        if not args.quiet:
            print(judged_sentence(chosen_points))
        with as_options():
            stage_two = chosen.configs(args.quick, traces, densities, args.seeds, judged)
            if plugins:
                stage_two = [replace(c, plugins=plugins) for c in stage_two]
        results = sweep(overhead(stage_two, args))
    if args.from_cache:
        notes = [*notes, partial_note(missing.values(), len(missing) + len(results))]
        if not args.quiet:
            print(notes[-1])
    else:
        cached = cache_note(results)
        if cached:
            notes = [*notes, cached]
            print(cached)
    for name, group in by_workload(results).items():
        print(f"{chosen.source}, workload {name}:")
        print(claims_table(chosen, group))
    print("Verdicts:")
    print(verdict_table(evaluate(chosen, results, quick=args.quick)))
    micro = scenario_section(chosen)  # a few jobs each: run in every mode, never cached
    if not (args.zero_costs or args.start_overhead):
        costs = cost_section(chosen, results, sweep, quick=args.quick)
        if costs:
            # Printed once, with the microbenchmarks below.
            micro = costs + ("\n" + micro if micro else "")
    if micro:
        print(micro)
    path = write_report(
        out_dir,
        chosen,
        results,
        quick=args.quick,
        notes=notes,
        version=__version__,
        microbenchmarks=micro,
    )
    print(f"wrote {path}")
    return 0


def judged_sentence(judged: Sequence[Judged]) -> str:
    """The line that says where the claims are judged, and why (before stage two runs there).

    Examples
    --------
    >>> from scheduling_opt.reproduce.grid import Point
    >>> j = Judged(Point("excerpt", 1.6, ()), "the Baseline's usage 0.652 (paper 0.72)")
    >>> print(judged_sentence([j]))
    Claims judged at excerpt x1.6 (the Baseline's usage 0.652 (paper 0.72)); running the judged-load policies there.
    """
    if not judged:
        return "No judged load found (a run is missing): the judged-load policies are not run."
    where = "; ".join(f"{j.point.label} ({j.why})" for j in judged)
    return f"Claims judged at {where}; running the judged-load policies there."


def main(argv: list[str] | None = None) -> int:
    """Stand-alone entry (the CLI wires :func:`add_arguments` and :func:`run`)."""
    parser = argparse.ArgumentParser(prog="scheduling-opt reproduce", description=__doc__)
    add_arguments(parser)
    return run(parser.parse_args(argv))
