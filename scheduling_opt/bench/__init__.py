"""The benchmark runner behind ``scheduling-opt bench``.

For each selected problem it builds the suite's instances (the problem's
seeded generator at each size of the suite, ``--seeds`` seeds each, plus the
curated instance files of that problem found in ``--instances``), runs every
method on each, verifies every answer with the problem's independent checker
and records objective, status, gap to the best proven optimum, the method's
own bound and certified gap, and wall time.

Modules: :mod:`~scheduling_opt.bench.runner` (tasks, rows, running and
verifying), :mod:`~scheduling_opt.bench.gaps` (the gap rules),
:mod:`~scheduling_opt.bench.executors` (this process, local
processes, dask; the progress bar), :mod:`~scheduling_opt.bench.report`
(summaries, the Pareto marking, CSV/JSON/Markdown),
:mod:`~scheduling_opt.bench.plots` (matplotlib, optional) and
:mod:`~scheduling_opt.bench.command` (the subcommand).

Outputs in ``--out``: ``results.csv`` and ``results.json`` (one row per
instance x method), ``report.md`` (a table per problem) and, when matplotlib is
installed, ``<problem>.png`` (gap and time vs size). Same suite and seeds give
the same instances and the same heuristic results; times of course vary.
The gap rules are in docs/benchmarks.md.
"""

from scheduling_opt.bench.command import add_bench_arguments, run_bench_command
from scheduling_opt.bench.executors import progress_bar, run_tasks
from scheduling_opt.bench.gaps import GAP_TOLERANCE, objective_gap, tie_gap
from scheduling_opt.bench.report import (
    REFERENCE_METHOD,
    Summary,
    dominated,
    format_table,
    problem_section,
    status_notes,
    summarize,
    write_outputs,
)
from scheduling_opt.bench.runner import (
    DEFAULT_SEEDS,
    SUITE_TIME_LIMITS,
    SUITES,
    Row,
    Task,
    build_tasks,
    curated_size,
    run_task,
)

__all__ = [
    "DEFAULT_SEEDS",
    "GAP_TOLERANCE",
    "REFERENCE_METHOD",
    "SUITES",
    "SUITE_TIME_LIMITS",
    "Row",
    "Summary",
    "Task",
    "add_bench_arguments",
    "build_tasks",
    "curated_size",
    "dominated",
    "format_table",
    "objective_gap",
    "problem_section",
    "progress_bar",
    "run_bench_command",
    "run_task",
    "run_tasks",
    "status_notes",
    "summarize",
    "tie_gap",
    "write_outputs",
]
