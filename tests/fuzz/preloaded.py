"""The CLI in a fresh process forked from one that already imported it (the simulator fuzz).

Starting ``python -m scheduling_opt.cli`` costs about 1.2 s of CPU in
imports (numpy, scipy, the policies), several times a small simulation,
so a fuzz of thousands of mutants would be mostly interpreter start. Here
a :mod:`multiprocessing` fork server imports :mod:`scheduling_opt.cli`
and the modules it imports lazily for ``simulate`` once (:data:`PRELOAD`); each run is a process forked from it (a clean interpreter: nothing
of pytest or of an earlier run) that makes itself a session leader, sets
the same 2 GB address-space cap as :func:`tests.fuzz.mutate.run_cli`,
points file descriptors 0/1/2 at ``/dev/null`` and two files, and runs
``main(argv)`` the way ``python -m scheduling_opt.cli`` does: the return
value is the exit status, an uncaught exception prints its traceback and
exits 1. The wall-time cap kills its process group (a ``--workers`` pool
with it). The run reports its own peak resident memory and CPU time (its
and its waited-for children's) in a third file, since its parent is the
fork server, not the caller.
"""

from __future__ import annotations

import contextlib
import multiprocessing
import os
import resource
import signal
import sys
import tempfile
import threading
import time
import traceback
from collections.abc import Sequence
from multiprocessing.context import ForkServerContext

from tests.fuzz.mutate import MEMORY_CAP, ROOT, TIME_CAP, Run

#: What the fork server imports: the CLI and what ``simulate`` imports lazily.
PRELOAD = (
    "csv",
    "scheduling_opt.cli",
    "scheduling_opt.bench",
    "scheduling_opt.sim.cli.simulate",
    "scheduling_opt.reproduce.command",
    "scheduling_opt.reproduce.papers",
    "tests.fuzz._preload_plots",
    "tests.fuzz.preloaded",
)

_CONTEXT: ForkServerContext | None = None
#: Starting and closing a process one thread at a time: the fuzz runs two at
#: once, and a run's pid and exit status travel on pipes whose descriptors
#: the other thread may be creating or closing.
_LOCK = threading.Lock()


def _context() -> ForkServerContext:
    global _CONTEXT
    with _LOCK:
        return _CONTEXT or _start()


def _start() -> ForkServerContext:
    global _CONTEXT
    if _CONTEXT is None:
        ctx = multiprocessing.get_context("forkserver")
        ctx.set_forkserver_preload(list(PRELOAD))
        # The server imports PRELOAD before it forks anything: a first run
        # would count those seconds against its wall-time cap.
        warm = ctx.Process(target=_nothing)
        warm.start()
        warm.join()
        warm.close()
        _CONTEXT = ctx
    return _CONTEXT


def _nothing() -> None:
    pass


def _child(argv: list[str], out: str, err: str, usage: str, memory_cap: int, cwd: str) -> None:
    os.setsid()
    resource.setrlimit(resource.RLIMIT_AS, (memory_cap, memory_cap))
    os.chdir(cwd)
    for fd, path, flags in (
        (0, os.devnull, os.O_RDONLY),
        (1, out, os.O_WRONLY),
        (2, err, os.O_WRONLY),
    ):
        opened = os.open(path, flags)
        os.dup2(opened, fd)
        os.close(opened)
    sys.stdin = open(0, closefd=False)  # noqa: SIM115
    sys.stdout = open(1, "w", encoding="utf-8", closefd=False)  # noqa: SIM115
    sys.stderr = open(2, "w", encoding="utf-8", closefd=False)  # noqa: SIM115
    code = 1
    try:
        from scheduling_opt import cli

        sys.argv = [cli.__file__, *argv]
        result = cli.main(argv)
        code = int(result or 0)
    except SystemExit as stop:
        code = stop.code if isinstance(stop.code, int) else (0 if stop.code is None else 1)
        if stop.code is not None and not isinstance(stop.code, int):
            print(stop.code, file=sys.stderr)
    except BaseException:
        traceback.print_exc()
        code = 1
    finally:
        with contextlib.suppress(Exception):
            sys.stdout.flush()
        with contextlib.suppress(Exception):
            sys.stderr.flush()
        me = resource.getrusage(resource.RUSAGE_SELF)
        kids = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu = me.ru_utime + me.ru_stime + kids.ru_utime + kids.ru_stime
        # The exit status too: multiprocessing reads it back from the fork
        # server over a pipe, and reported 255 for a run that exited 2 about
        # once in a thousand runs (two at a time); the file is the run's own word.
        with contextlib.suppress(Exception), open(usage, "w") as f:
            f.write(f"{max(me.ru_maxrss, kids.ru_maxrss)} {cpu} {code}\n")
        os._exit(code)


def _kill_group(pid: int | None) -> None:
    """Kill the run's process group (its session), never the caller's or a system one."""
    if pid is None or pid <= 1 or pid == os.getpgrp():
        return
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, signal.SIGKILL)


def _cpu_of(pid: int | None) -> float:
    """CPU seconds a live process has used (``/proc``; 0 where unreadable)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, IndexError):
        return 0.0


def run_cli_preloaded(
    args: Sequence[str],
    *,
    time_cap: float = TIME_CAP,
    memory_cap: int = MEMORY_CAP,
    cwd: str | os.PathLike[str] = ROOT,
) -> Run:
    """``main(ARGS)`` in a process forked from the preloaded server, under the caps.

    The same :class:`~tests.fuzz.mutate.Run` as :func:`tests.fuzz.mutate.run_cli`
    (a run killed at the wall-time cap has ``timed_out`` and exit status
    -9), run in ``cwd`` (``simulate`` writes ``./simulate-out`` unless
    given ``--out``), plus its CPU time in ``cpu_seconds`` (for a killed run, what it had
    used when killed: a run slowed by a busy machine shows little).
    """
    with tempfile.TemporaryDirectory() as tmp:
        out, err, usage = (os.path.join(tmp, n) for n in ("out", "err", "usage"))
        for path in (out, err):
            open(path, "wb").close()
        ctx = _context()
        proc = ctx.Process(
            target=_child, args=(list(args), out, err, usage, memory_cap, os.fspath(cwd))
        )
        start = time.perf_counter()
        with _LOCK:
            proc.start()
        proc.join(time_cap)
        timed_out = proc.exitcode is None
        cpu_at_kill = _cpu_of(proc.pid) if timed_out else 0.0
        if timed_out:
            _kill_group(proc.pid)
            proc.kill()  # in case it had not made its session yet
            proc.join()
        seconds = time.perf_counter() - start
        _kill_group(proc.pid)  # nothing of the run may outlive it
        maxrss, cpu = 0, 0.0
        code = proc.exitcode
        assert code is not None
        with contextlib.suppress(OSError, ValueError), open(usage) as f:
            rss, cpu_text, code_text = f.read().split()
            maxrss, cpu = int(rss), float(cpu_text)
            if not timed_out:
                code = int(code_text)
        cpu = cpu or cpu_at_kill
        with _LOCK:
            proc.close()
        with open(out, "rb") as f:
            stdout = f.read().decode("utf-8", "replace")
        with open(err, "rb") as f:
            stderr = f.read().decode("utf-8", "replace")
    return Run(list(args), code, stdout, stderr, seconds, maxrss, timed_out, cpu)
