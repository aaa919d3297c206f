"""The ``scheduling-opt`` command: solve, validate, generate, list, bench, simulate, bound, reproduce.

Each subcommand is one ``_run_<name>`` function behind :func:`_dispatch`;
``bench`` and ``simulate`` take their options from their own packages
(:mod:`scheduling_opt.bench.command`, :mod:`scheduling_opt.sim.cli.simulate`). The
CLI dispatches through :mod:`scheduling_opt.registry` only; it knows no
problem.

Exit status: 0 success; 2 bad input of any kind (malformed or inconsistent
instance, unknown problem or method, bad option), printed as one line on
stderr; 1 a ``--verify`` failure or an internal error (also one line).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
import warnings
from collections.abc import Sequence
from pathlib import Path
from typing import Any, NoReturn

from scheduling_opt import __version__
from scheduling_opt.errors import InvalidInstanceError, SchedulingOptError, VerificationError
from scheduling_opt.io.instance import dumps, load
from scheduling_opt.jsonpath import show
from scheduling_opt.registry import Problem, get_problem, problem_names, validate
from scheduling_opt.solution import DEFAULT_TIME_LIMIT, Solution
from scheduling_opt.suggest import close_matches, did_you_mean

PROG = "scheduling-opt"
EXIT_BAD_INPUT = 2
EXIT_FAILED = 1


class UsageError(SchedulingOptError):
    """A command-line usage mistake (argparse's, reported in one line)."""


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        raise UsageError(f"{message} (see '{self.prog} --help')")


def _positive(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    if not (math.isfinite(value) and value > 0):
        raise argparse.ArgumentTypeError(f"must be a positive number of seconds, got {text!r}")
    return value


def _seed(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not an integer: {text!r}") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"must be >= 0, got {value}")
    return value


def _unrecognized(parser: argparse.ArgumentParser, command: str, extras: Sequence[str]) -> str:
    """The error for arguments ``command`` does not take: the closest option, its own help.

    Examples
    --------
    >>> print(_unrecognized(_build_parser(), "simulate", ["--polcy", "x"]))
    unrecognized arguments: --polcy x; did you mean '--policy'? (see 'scheduling-opt simulate --help')
    """
    sub = _subcommand(parser, command)
    options = [o for action in sub._actions for o in action.option_strings] if sub else []
    first = next((e.split("=", 1)[0] for e in extras if e.startswith("-")), "")
    # Compared without the dashes, which every option shares.
    bare = {o.lstrip("-"): o for o in options if o.startswith("--")}
    close = close_matches(first.lstrip("-"), bare) if first else []
    hint = did_you_mean(first, [bare[c] for c in close]) if close else ""
    return f"unrecognized arguments: {' '.join(extras)}{hint} (see '{PROG} {command} --help')"


def _subcommand(parser: argparse.ArgumentParser, command: str) -> argparse.ArgumentParser | None:
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            found = action.choices.get(command)
            return found if isinstance(found, argparse.ArgumentParser) else None
    return None


def _build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog=PROG, description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--version", action="version", version=f"{PROG} {__version__}")
    sub = parser.add_subparsers(dest="command", parser_class=_Parser, metavar="COMMAND")
    sub.required = True

    solve = sub.add_parser("solve", help="solve an instance file (the problem comes from the file)")
    solve.add_argument("file", type=Path)
    solve.add_argument("--method", "-m", help="method name (default: the problem's default)")
    solve.add_argument("--json", action="store_true", help="print one JSON object")
    solve.add_argument("--verify", action="store_true", help="check the answer independently")
    solve.add_argument("--seed", type=_seed, default=0, help="random seed >= 0 (default 0)")
    solve.add_argument(
        "--time-limit",
        type=_positive,
        help=f"seconds for exact methods (default {DEFAULT_TIME_LIMIT:g})",
    )

    validate = sub.add_parser("validate", help="check an instance file; print 'ok'")
    validate.add_argument("file", type=Path)

    generate = sub.add_parser("generate", help="write a seeded instance of a problem and size")
    generate.add_argument("problem")
    generate.add_argument(
        "--size", required=True, help="any size the problem's grammar accepts (see 'list')"
    )
    generate.add_argument("--seed", type=_seed, default=0, help="seed >= 0 (default 0)")
    generate.add_argument("--out", "-o", type=Path, help="file to write (default: stdout)")

    sub.add_parser("list", help="list problems, their methods and the sizes generate accepts")

    from scheduling_opt.bench import add_bench_arguments

    bench = sub.add_parser("bench", help="run every method against the exact baselines")
    add_bench_arguments(bench)

    from scheduling_opt.sim.cli import policies as policies_command
    from scheduling_opt.sim.cli import simulate as sim_command

    simulate = sub.add_parser(
        "simulate",
        help="run scheduling policies on a trace (default: the bundled excerpt, every baseline)",
    )
    sim_command.add_arguments(simulate)
    policies = sub.add_parser(
        "policies", help="list the simulator's policies, or one policy's parameters"
    )
    policies_command.add_arguments(policies)

    from scheduling_opt.sim.cli import bound as bound_command

    bound = sub.add_parser(
        "bound", help="proven offline bounds of a workload on a cluster (default: the bundled day)"
    )
    bound_command.add_arguments(bound)

    from scheduling_opt.reproduce import command as reproduce_command

    reproduce = sub.add_parser(
        "reproduce", help="run a paper's policies against its baselines, numbers side by side"
    )
    reproduce_command.add_arguments(reproduce)
    return parser


def _run_solve(args: argparse.Namespace) -> int:
    instance = load(args.file)
    problem = get_problem(instance.problem)
    # An old method name still runs for one release: the warning is printed,
    # not left to Python's filters (which hide it outside __main__).
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", DeprecationWarning)
        method = problem.method(args.method)
    for w in caught:
        print(f"{PROG}: warning: {w.message}", file=sys.stderr)
    inp = problem.parse(instance)
    solution = method.run(inp, seed=args.seed, time_limit=args.time_limit)
    if args.verify:
        problem.check(inp, solution)
    _print_result(problem, method.name, solution, as_json=args.json, verified=args.verify)
    return 0


def _finite(value: float | None) -> float | None:
    return value if value is not None and math.isfinite(value) else None


def result_record(
    problem: Problem[Any, Any], method: str, solution: Solution[Any]
) -> dict[str, Any]:
    """The record ``solve`` prints: the run's summary, then the decision's keys.

    The keys ``problem``, ``method``, ``status``, ``objective`` and
    ``seconds`` come first, then the problem's decision keys
    (``problem.encode``); a decision key never overrides a summary key.
    """
    record: dict[str, Any] = {
        "problem": problem.name,
        "method": method,
        "status": solution.status.value,
        "objective": solution.objective,
        "seconds": solution.seconds,
    }
    if solution.decision is not None:
        for key, value in problem.encode(solution.decision).items():
            record.setdefault(key, value)
    return record


def _print_result(
    problem: Problem[Any, Any],
    method: str,
    solution: Solution[Any],
    *,
    as_json: bool,
    verified: bool,
) -> None:
    record = result_record(problem, method, solution)
    if as_json:
        # The proven bound and the gap it certifies (null where unknown); the
        # text output keeps its historical lines.
        record["bound"] = _finite(solution.bound)
        record["gap"] = solution.gap
        if verified:
            record["verified"] = True
        print(json.dumps(record, allow_nan=False))
        return
    width = max(len(k) for k in record)
    for key, value in record.items():
        shown = (
            value if isinstance(value, (str, int, float)) or value is None else json.dumps(value)
        )
        print(f"{key:<{width}}  {shown}")
    if verified:
        print(f"{'verified':<{width}}  yes")


def _run_generate(args: argparse.Namespace) -> int:
    problem = get_problem(args.problem)
    if problem.generate is None:
        raise UsageError(f"problem {problem.name!r} has no generator")
    try:
        instance = problem.generate(args.size, args.seed)
    except InvalidInstanceError as e:
        # The generator names what is wrong; the grammar says what would do.
        grammar = problem.size_grammar
        accepted = f"; accepted: {grammar}" if grammar and grammar not in e.reason else ""
        reason = e.reason if len(e.reason) <= 300 else e.reason[:297] + "..."
        named = [size for sizes in problem.sizes.values() for size in sizes]
        hint = did_you_mean(args.size, named).removeprefix("; ")
        hint = f" ({hint})" if hint else ""
        raise UsageError(
            f"bad size {show(args.size)} for problem {problem.name!r}{hint}: {reason}{accepted}"
        ) from None
    text = dumps(instance)
    if args.out is None:
        sys.stdout.write(text)
    else:
        args.out.write_text(text, encoding="utf-8")
    return 0


def _run_list() -> int:
    for name in problem_names():
        problem = get_problem(name)
        print(f"{name}: {problem.summary}")
        for m in problem.methods:
            tags = ", ".join(
                t for t, on in (("default", m.name == problem.default), ("exact", m.exact)) if on
            )
            print(f"  {m.name}{f' ({tags})' if tags else ''}: {m.summary}")
        for old, new in problem.renamed.items():
            print(f"  {old}: renamed {new} (the old name warns, and goes in the next release)")
        if problem.size_grammar:
            print(f"  sizes: {problem.size_grammar}")
        for suite, sizes in problem.sizes.items():
            print(f"  {suite} sizes: {', '.join(sizes)}")
    return 0


def _dispatch(args: argparse.Namespace) -> int:
    if args.command == "solve":
        return _run_solve(args)
    if args.command == "validate":
        validate(args.file)
        print("ok")
        return 0
    if args.command == "generate":
        return _run_generate(args)
    if args.command == "list":
        return _run_list()
    if args.command == "bench":
        from scheduling_opt.bench import run_bench_command

        return run_bench_command(args)
    if args.command == "simulate":
        from scheduling_opt.sim.cli import simulate as sim_command

        return sim_command.run(args)
    if args.command == "policies":
        from scheduling_opt.sim.cli import policies as policies_command

        return policies_command.run(args)
    if args.command == "bound":
        from scheduling_opt.sim.cli import bound as bound_command

        return bound_command.run(args)
    if args.command == "reproduce":
        from scheduling_opt.reproduce import command as reproduce_command

        return reproduce_command.run(args)
    raise UsageError(f"unknown command {args.command!r}")


def _one_line(error: BaseException) -> str:
    """The error's message with line breaks escaped: the CLI promises one line."""
    return str(error).replace("\r", "\\r").replace("\n", "\\n")


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point; returns the exit status (see the module docstring)."""
    try:
        parser = _build_parser()
        args, extras = parser.parse_known_args(argv)
        if extras:
            # Argparse names the top-level help; the subcommand's is the one to read.
            raise UsageError(_unrecognized(parser, args.command, extras))
        return _dispatch(args)
    except VerificationError as e:
        print(f"{PROG}: verification failed: {_one_line(e)}", file=sys.stderr)
        return EXIT_FAILED
    except SchedulingOptError as e:
        print(f"{PROG}: error: {_one_line(e)}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except BrokenPipeError:
        # stdout closed early (``| head``): nothing left to say, and Python must
        # not complain about flushing it at exit.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return EXIT_FAILED
    except OSError as e:  # an output file or folder that cannot be written
        print(f"{PROG}: error: {_one_line(e)}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except KeyboardInterrupt:
        print(f"{PROG}: interrupted", file=sys.stderr)
        return 130
    except Exception as e:  # a bug, not bad input: still one line, never a traceback dump
        print(f"{PROG}: internal error: {type(e).__name__}: {_one_line(e)}", file=sys.stderr)
        return EXIT_FAILED


if __name__ == "__main__":
    sys.exit(main())
