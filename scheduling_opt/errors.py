"""The library's exceptions: one small hierarchy.

Every error a user can cause (a malformed instance, an impossible demand, an
unknown problem or method) is a :class:`SchedulingOptError`, so a caller (and
the CLI) can catch one type and print one line.
"""

from __future__ import annotations

#: Longest path, and longest whole message, an InvalidInstanceError shows.
MAX_PATH_CHARS = 120
MAX_MESSAGE_CHARS = 400


def _cut(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 3] + "..."


class SchedulingOptError(Exception):
    """Base class of every error this library raises on purpose."""


class InvalidInstanceError(SchedulingOptError, ValueError):
    """An instance, or one of the model's values, is malformed or inconsistent.

    ``path`` names where the problem is: a dataclass field (``min_workers``)
    when raised by a constructor, a JSON path (``jobs[2].min_workers``) when
    raised while loading a file. ``str(error)`` is ``"<path>: <reason>"``.
    """

    def __init__(self, path: str, reason: str) -> None:
        self.path = path
        self.reason = reason
        # A file can hold a 100 KB key or value; the message (one CLI line)
        # shows the start of each, the attributes keep them whole.
        shown = f"{_cut(path, MAX_PATH_CHARS)}: {reason}" if path else reason
        super().__init__(_cut(shown.replace("\n", " "), MAX_MESSAGE_CHARS))

    def __reduce__(self) -> tuple[type[InvalidInstanceError], tuple[str, str]]:
        # Pickled by its two arguments: an error raised in a worker process
        # (a simulator sweep's process pool) must reach the parent as itself,
        # not break the pool with a TypeError while unpickling.
        return (type(self), (self.path, self.reason))

    def at(self, prefix: str) -> InvalidInstanceError:
        """The same error, located under ``prefix`` (``jobs[2]`` + ``min_workers``)."""
        if not prefix:
            return self
        if not self.path:
            return InvalidInstanceError(prefix, self.reason)
        sep = "" if self.path.startswith("[") else "."
        return InvalidInstanceError(f"{prefix}{sep}{self.path}", self.reason)


class InstanceTooLargeError(InvalidInstanceError):
    """A method refuses an instance beyond its documented size limit.

    Raised by enumeration-based exact methods instead of running for hours;
    the benchmark records such a run as ``skipped``, not as a failure.
    """


class UnknownProblemError(SchedulingOptError, KeyError):
    """No solver is registered under this problem name."""

    def __str__(self) -> str:
        return str(self.args[0]) if self.args else "unknown problem"


class UnknownMethodError(SchedulingOptError, KeyError):
    """The problem has no method of this name."""

    def __str__(self) -> str:
        return str(self.args[0]) if self.args else "unknown method"


class VerificationError(SchedulingOptError, AssertionError):
    """A solver's answer failed the problem's independent checker."""


class SolverError(SchedulingOptError, RuntimeError):
    """A backend failed in a way that is not a status (invalid model, crash)."""
