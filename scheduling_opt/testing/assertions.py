"""The independent checkers as assertions, and the differential check against the optimum.

:func:`assert_valid` runs the problem's own checker (``check(inp,
solution)`` of its package, chosen by the input's type) and turns a
:class:`~scheduling_opt.errors.VerificationError` into an
:class:`InvalidSolutionError` that names the rule broken, the jobs and servers
involved, and the instance to replay. :func:`assert_within` proves the
optimum with the problem's exact method under a time limit and fails with
:class:`NotWithinGapError` when a caller's answer is further from it than
allowed. Cost: the checker's (linear) for :func:`assert_valid`; an exact
solve (exponential in the worst case, time-limited) for :func:`assert_within`.
"""

from __future__ import annotations

import importlib
import math
import re
from collections.abc import Callable, Iterable
from typing import Any, Literal

from hypothesis import reject

from scheduling_opt.errors import VerificationError
from scheduling_opt.io.instance import dumps
from scheduling_opt.registry import get_problem
from scheduling_opt.solution import Solution, Status
from scheduling_opt.testing.documents import to_instance

__all__ = [
    "InvalidSolutionError",
    "NotProvenError",
    "NotWithinGapError",
    "assert_valid",
    "assert_within",
    "problem_of",
]

#: Input type name -> (registry problem name or None, package holding ``check``).
_PACKAGES: dict[str, tuple[str | None, str]] = {
    "ReclaimInput": ("reclaim", "scheduling_opt.reclaim"),
    "PlacementInput": ("placement", "scheduling_opt.placement"),
    "LeaseInput": ("lease", "scheduling_opt.lease"),
    "BatchSizeInput": ("batch-size", "scheduling_opt.batch_size"),
    "AllocationInput": ("allocation", "scheduling_opt.allocation"),
    "Mckp": ("mckp", "scheduling_opt.mckp"),
    "Mmkp": ("mmkp", "scheduling_opt.mmkp"),
    "MemorySplitInput": ("memory-split", "scheduling_opt.memory_split"),
    "AntManState": (None, "scheduling_opt.policies.antman"),
    "EdlState": (None, "scheduling_opt.policies.edl"),
}

#: Checker wording -> the rule it enforces (first match wins).
_RULES: tuple[tuple[str, str], ...] = (
    # Lease (Chronus §3.3.4): the level claimed must be the first deadline the
    # last term meets; a last term past every deadline is a missed deadline.
    (r"meets deadline", "deadline: a job's level is the first deadline its last term meets"),
    (
        r"require_all, yet|rejected job",
        "admission: a rejected job holds no terms, none under require_all",
    ),
    # Batch size (ONES §3.1): B_j <= R_j, each local batch within the GPU's memory.
    (r"batch \d+ > limit", "batch-size limit: a job's global batch is at most its limit R_j"),
    (r"local batch", "local batch: 1..the job's largest local batch on each GPU it holds"),
    (r"GPUs > cap", "GPU cap: a job runs on at most its maximum GPUs"),
    (r"over-full|over capacity|exceeds? the|free GPUs of", "capacity: no more GPUs than there are"),
    (r"not an on-loan server", "only servers on loan can be returned"),
    (r"servers returned, \d+ requested", "return exactly N_R servers"),
    (r"over its quota", "tenant quota: guarantee jobs hold at most the tenant's GPUs"),
    (r"twice|two rows", "no duplicates"),
    (r"not usable for training", "training runs on training servers and servers on loan only"),
    (r"wrong type|needs \S+, '", "GPU type: a job bound to a type runs on that type only"),
    (r"belongs to", "one guarantee job or reservation per GPU"),
    (r"at or over M", "opportunistic jobs only on GPUs under the utilization threshold"),
    (r"workers placed|workers outside|must keep|terms, needs|GPUs, needs", "a job gets its demand"),
    (r"spans", "locality: a job spans few servers"),
    (r"preempted_jobs|scaled_in|collateral", "the reported effects follow from the decision"),
    (r"bound", "the bound lies on the right side of the objective"),
    (r"infeasible|no decision|without a", "infeasible only when proven"),
    (r"optimal claimed", "optimal only when nothing better exists"),
    (r"objective|key |reward|JCT|weight|throughput", "the objective follows from the decision"),
)

_MAX_INSTANCE_CHARS = 4000


class InvalidSolutionError(AssertionError):
    """A solution broke its problem's rules.

    Attributes
    ----------
    problem : str
        The problem (registry name, or the policy's).
    rule : str
        The rule broken, in words.
    jobs, servers : tuple of str
        The jobs and servers involved.
    detail : str
        The checker's own words.
    """

    def __init__(
        self,
        problem: str,
        rule: str,
        jobs: tuple[str, ...],
        servers: tuple[str, ...],
        detail: str,
        text: str,
    ) -> None:
        super().__init__(text)
        self.problem, self.rule, self.jobs, self.servers, self.detail = (
            problem,
            rule,
            jobs,
            servers,
            detail,
        )


class NotWithinGapError(AssertionError):
    """A valid solution is further from the proven optimum than the gap allows.

    Raised by :func:`assert_within`; the message shows the objective, the
    optimum, both decisions and the instance.
    """


class NotProvenError(RuntimeError):
    """The exact method did not prove the optimum within its time limit.

    Raised by :func:`assert_within` (``unproven="raise"``); the message names
    the method, the limit, its status and the instance.
    """


def problem_of(problem_input: Any) -> str:
    """The name of the problem an input belongs to.

    Parameters
    ----------
    problem_input : Any
        A typed input (``ReclaimInput``...) or a policy state (``AntManState``, ``EdlState``).

    Returns
    -------
    str
        The registry name (``reclaim``) or ``antman`` / ``edl``.

    Raises
    ------
    TypeError
        For a type the kit does not know.

    Examples
    --------
    >>> from scheduling_opt.mckp import Mckp
    >>> problem_of(Mckp.from_groups([], 0))
    'mckp'
    """
    name = type(problem_input).__name__
    if name not in _PACKAGES:
        raise TypeError(f"no problem takes a {name} (known: {', '.join(sorted(_PACKAGES))})")
    registry_name, package = _PACKAGES[name]
    return registry_name or package.rsplit(".", 1)[-1]


def _checker(problem_input: Any) -> Callable[[Any, Solution[Any]], None]:
    problem_of(problem_input)
    check: Callable[[Any, Solution[Any]], None] = importlib.import_module(
        _PACKAGES[type(problem_input).__name__][1]
    ).check
    return check


def _ids(items: Iterable[Any]) -> set[str]:
    out = set()
    for item in items:
        value = getattr(item, "id", None) or getattr(getattr(item, "job", None), "id", None)
        if isinstance(value, str):
            out.add(value)
    return out


def _involved(
    problem_input: Any, decision: Any, detail: str
) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """Jobs and servers a checker message names, with the jobs on a named server or tenant."""
    quoted = re.findall(r"'([^']*)'", detail)
    jobs = _ids(getattr(problem_input, "jobs", ()))
    cluster = getattr(problem_input, "cluster", None)
    servers = {s.id for s in cluster.servers} if cluster is not None else set()
    named_servers = [q for q in dict.fromkeys(quoted) if q in servers]
    named_jobs = [q for q in dict.fromkeys(quoted) if q in jobs]
    if not named_jobs and named_servers:
        rows = getattr(decision, "rows", ())
        named_jobs = list(
            dict.fromkeys(r[0] for r in rows if len(r) == 3 and r[1] in named_servers)
        )
    tenants = {q for q in quoted if q not in jobs and q not in servers}
    if not named_jobs and tenants:
        by_tenant = {
            j.id
            for j in getattr(problem_input, "jobs", ())
            if getattr(j, "tenant", None) in tenants
        }
        for field in ("launched", "reserved"):
            named_jobs += [k for k in getattr(decision, field, {}) if k in by_tenant]
    return tuple(dict.fromkeys(named_jobs)), tuple(named_servers)


def _instance_text(problem_input: Any) -> str:
    try:
        text = dumps(to_instance(problem_input), indent=None).strip()
    except (TypeError, ValueError):
        return repr(problem_input)[:_MAX_INSTANCE_CHARS]
    return text if len(text) <= _MAX_INSTANCE_CHARS else text[: _MAX_INSTANCE_CHARS - 3] + "..."


def _shown(solution: Solution[Any]) -> str:
    return (
        f"status={solution.status.value} objective={solution.objective!r} "
        f"decision={solution.decision!r}"
    )


def assert_valid(problem_input: Any, solution: Solution[Any]) -> None:
    """Assert that ``solution`` obeys every rule of its problem (the independent checker).

    Parameters
    ----------
    problem_input : Any
        The typed input (``ReclaimInput``, ``PlacementInput``, ``LeaseInput``,
        ``BatchSizeInput``, ``AllocationInput``, ``Mckp``,
        ``MemorySplitInput``) or policy state (``AntManState``, ``EdlState``).
    solution : Solution
        The answer to check (status, objective, decision, bound).

    Returns
    -------
    None
        When every rule holds.

    Raises
    ------
    InvalidSolutionError
        An ``AssertionError`` naming the problem, the rule broken, the jobs
        and servers involved, the checker's words, the solution and the
        instance (a JSON document to save and replay).
    TypeError
        For an input type no problem takes.

    Examples
    --------
    >>> from scheduling_opt.mckp import Mckp, MckpDecision
    >>> from scheduling_opt.solution import Solution, Status
    >>> inp = Mckp.from_groups([[(3, 5.0)]], 2)
    >>> bad = Solution(Status.FEASIBLE, 5.0, MckpDecision((0,), 3, 5.0))
    >>> assert_valid(inp, bad)
    Traceback (most recent call last):
    ...
    scheduling_opt.testing.assertions.InvalidSolutionError: mckp: the solution breaks the rule \
"capacity: no more GPUs than there are"
      checker:   weight 3 exceeds the capacity 2
      solution:  status=feasible objective=5.0 decision=MckpDecision(choice=(0,), weight=3, \
value=5.0)
      instance:  {"format": "scheduling-opt/v1", "problem": "mckp", "capacity": 2, "groups": \
[[{"weight": 3, "value": 5}]]}

    References
    ----------
    Each problem's ``check`` (docs/<problem>.md).
    """
    check = _checker(problem_input)
    try:
        check(problem_input, solution)
        return
    except VerificationError as e:
        detail = str(e)
    except Exception as e:  # a malformed decision can trip any lookup
        detail = f"the checker cannot read the solution: {type(e).__name__}: {e}"
    problem = problem_of(problem_input)
    rule = next((r for pattern, r in _RULES if re.search(pattern, detail)), "checker rule")
    jobs, servers = _involved(problem_input, solution.decision, detail)
    lines = [f'{problem}: the solution breaks the rule "{rule}"']
    if jobs:
        lines.append(f"  job(s):    {', '.join(map(repr, jobs))}")
    if servers:
        lines.append(f"  server(s): {', '.join(map(repr, servers))}")
    lines += [
        f"  checker:   {detail}",
        f"  solution:  {_shown(solution)}",
        f"  instance:  {_instance_text(problem_input)}",
    ]
    raise InvalidSolutionError(problem, rule, jobs, servers, detail, "\n".join(lines)) from None


def assert_within(
    problem_input: Any,
    solution: Solution[Any],
    gap: float = 0.0,
    *,
    time_limit: float = 10.0,
    method: str | None = None,
    unproven: Literal["raise", "reject"] = "raise",
) -> Solution[Any]:
    """Assert that a valid ``solution`` is within ``gap`` of the proven optimum.

    The problem's exact method (its default if exact, else its first exact
    one, or ``method``) solves the input under ``time_limit``; the relative
    shortfall ``(worse - better) / max(|optimum|, 1)`` in the problem's
    sense must not exceed ``gap``. Use it on instances small enough to
    prove quickly. Reclaim compares the preempted-job count (``objective``).

    Parameters
    ----------
    problem_input : Any
        A registry problem's typed input (not a policy state).
    solution : Solution
        The caller's answer (checked with :func:`assert_valid` first).
    gap : float, optional
        The largest relative shortfall allowed (0: optimal).
    time_limit : float, optional
        Seconds the exact method may take.
    method : str, optional
        The exact method's registry name.
    unproven : {"raise", "reject"}, optional
        When the optimum is not proven in time: raise :class:`NotProvenError`,
        or ``hypothesis.reject()`` the example (inside ``@given`` only).

    Returns
    -------
    Solution
        The exact method's (proven) solution.

    Raises
    ------
    InvalidSolutionError
        If ``solution`` breaks a rule.
    NotWithinGapError
        If it is further than ``gap`` from the optimum (the message shows
        both and the instance).
    NotProvenError
        If the optimum is not proven in time (``unproven="raise"``).
    TypeError, ValueError
        For a policy state, or a ``method`` that is not exact.

    Examples
    --------
    >>> from scheduling_opt.mckp import Mckp, greedy
    >>> inp = Mckp.from_groups([[(1, 1.0), (2, 3.0)], [(1, 2.5)]], 2)
    >>> assert_within(inp, greedy(inp), gap=0.0)
    Traceback (most recent call last):
    ...
    scheduling_opt.testing.assertions.NotWithinGapError: mckp (max): objective 3.0 is 0.1429 short \
of the proven optimum 3.5 (allowed gap 0)
      yours:     MckpDecision(choice=(1, None), weight=2, value=3.0)
      optimum:   MckpDecision(choice=(0, 0), weight=2, value=3.5)
      instance:  {"format": "scheduling-opt/v1", "problem": "mckp", "capacity": 2, "groups": \
[[{"weight": 1, "value": 1}, {"weight": 2, "value": 3}], [{"weight": 1, "value": 2.5}]]}
    >>> assert_within(inp, greedy(inp), gap=0.2).objective
    3.5
    """
    name = problem_of(problem_input)
    if _PACKAGES[type(problem_input).__name__][0] is None:
        raise TypeError(f"{name} is an online policy: it has no proven optimum")
    assert_valid(problem_input, solution)
    problem = get_problem(name)
    exact = problem.method(method) if method else problem.method(None)
    if not exact.exact:
        if method:
            raise ValueError(f"method {method!r} of {name!r} proves nothing (not exact)")
        exact = problem.exact_methods[0]
    best = exact.run(problem_input, time_limit=time_limit)
    instance = _instance_text(problem_input)
    if best.status is Status.INFEASIBLE and solution.decision is None:
        return best
    if best.status is not Status.OPTIMAL or best.objective is None:
        message = (
            f"{name}: {exact.name} did not prove the optimum in {time_limit} s "
            f"(status {best.status.value}); instance: {instance}"
        )
        if unproven == "reject":
            reject()
        raise NotProvenError(message)
    optimum = best.objective
    got = solution.objective
    if got is None or not math.isfinite(got):
        shortfall = math.inf
    else:
        shortfall = (got - optimum) if problem.sense == "min" else (optimum - got)
        shortfall /= max(abs(optimum), 1.0)
    if shortfall > gap + 1e-9:
        word = "above" if problem.sense == "min" else "short of"
        raise NotWithinGapError(
            f"{name} ({problem.sense}): objective {got!r} is {shortfall:.4g} {word} the proven "
            f"optimum {optimum!r} (allowed gap {gap:g})\n"
            f"  yours:     {solution.decision!r}\n"
            f"  optimum:   {best.decision!r}\n"
            f"  instance:  {instance}"
        )
    return best
