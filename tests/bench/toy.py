"""A toy problem registered by the tests: a 0-1 knapsack with honest and broken methods.

A real test double of a problem package: a typed input and decision, an
exact brute-force method (every optimum in the tests comes from enumeration,
independent of the runner), a greedy heuristic with the fractional (Dantzig)
upper bound, an independent checker, a decision encoder and a seeded
generator, registered through :func:`scheduling_opt.registry.register`.
"""

from __future__ import annotations

import itertools
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import numpy as np

from scheduling_opt import registry
from scheduling_opt.errors import InstanceTooLargeError, VerificationError
from scheduling_opt.io.instance import Instance
from scheduling_opt.registry import Method, Problem
from scheduling_opt.solution import Seed, Solution, Status

NAME = "toy-knapsack"


@dataclass(frozen=True)
class ToyInput:
    weights: tuple[int, ...]
    values: tuple[int, ...]
    capacity: int


@dataclass(frozen=True)
class ToyDecision:
    chosen: tuple[int, ...]


def read(inst: Instance) -> ToyInput:
    return ToyInput(tuple(inst.data["weights"]), tuple(inst.data["values"]), inst.data["capacity"])


def encode(d: ToyDecision) -> dict[str, Any]:
    return {"chosen": list(d.chosen)}


def brute_force(d: ToyInput) -> tuple[int, tuple[int, ...]]:
    """The optimum by enumeration (the tests' independent reference)."""
    best: tuple[int, tuple[int, ...]] = (0, ())
    for r in range(len(d.weights) + 1):
        for combo in itertools.combinations(range(len(d.weights)), r):
            if sum(d.weights[i] for i in combo) <= d.capacity:
                best = max(best, (sum(d.values[i] for i in combo), combo))
    return best


def fractional_bound(d: ToyInput) -> float:
    """Dantzig's bound: fill by value/weight, the last item fractionally."""
    left, total = float(d.capacity), 0.0
    for i in sorted(range(len(d.weights)), key=lambda i: -d.values[i] / d.weights[i]):
        take = min(1.0, left / d.weights[i])
        total += take * d.values[i]
        left -= take * d.weights[i]
        if left <= 0:
            break
    return total


def exact(
    d: ToyInput, *, seed: Seed = None, time_limit: float | None = None
) -> Solution[ToyDecision]:
    """Brute force."""
    start = time.perf_counter()
    value, combo = brute_force(d)
    return Solution(
        Status.OPTIMAL, float(value), ToyDecision(combo), seconds=time.perf_counter() - start
    )


def greedy(
    d: ToyInput, *, seed: Seed = None, time_limit: float | None = None
) -> Solution[ToyDecision]:
    """Best value/weight first, with the fractional bound."""
    start = time.perf_counter()
    order = sorted(range(len(d.weights)), key=lambda i: -d.values[i] / d.weights[i])
    used, chosen = 0, []
    for i in order:
        if used + d.weights[i] <= d.capacity:
            used += d.weights[i]
            chosen.append(i)
    value = float(sum(d.values[i] for i in chosen))
    return Solution(
        Status.FEASIBLE,
        value,
        ToyDecision(tuple(chosen)),
        bound=fractional_bound(d),
        seconds=time.perf_counter() - start,
    )


def broken(
    d: ToyInput, *, seed: Seed = None, time_limit: float | None = None
) -> Solution[ToyDecision]:
    """Raises."""
    raise RuntimeError("solver bug")


def liar(
    d: ToyInput, *, seed: Seed = None, time_limit: float | None = None
) -> Solution[ToyDecision]:
    """Takes everything (over capacity)."""
    everything = tuple(range(len(d.weights)))
    return Solution(Status.FEASIBLE, float(sum(d.values)), ToyDecision(everything), seconds=1e-4)


def bad_bound(
    d: ToyInput, *, seed: Seed = None, time_limit: float | None = None
) -> Solution[ToyDecision]:
    """A valid empty answer claiming the upper bound 0.5 (below a positive optimum)."""
    return Solution(Status.FEASIBLE, 0.0, ToyDecision(()), bound=0.5, seconds=1e-4)


def refuses_large(
    d: ToyInput, *, seed: Seed = None, time_limit: float | None = None
) -> Solution[ToyDecision]:
    """Brute force, refused above 6 items (as an enumeration refuses beyond its limit)."""
    if len(d.weights) > 6:
        raise InstanceTooLargeError("items", f"{2 ** len(d.weights)} subsets, limit 64")
    return exact(d)


def stops_early(
    d: ToyInput, *, seed: Seed = None, time_limit: float | None = None
) -> Solution[ToyDecision]:
    """The empty answer, stopped by the limit before any proof (with the solver's word)."""
    return Solution(
        Status.TIME_LIMIT,
        0.0,
        ToyDecision(()),
        bound=float(sum(d.values)),
        seconds=1e-4,
        message="no proof after 12 nodes",
    )


def check(d: ToyInput, sol: Solution[ToyDecision]) -> None:
    if sol.decision is None:
        raise VerificationError("no decision")
    chosen = sol.decision.chosen
    if sum(d.weights[i] for i in chosen) > d.capacity:
        raise VerificationError("over capacity")
    if sum(d.values[i] for i in chosen) != sol.objective:
        raise VerificationError("objective mismatch")


def generate(size: str, seed: int) -> Instance:
    n = int(size[1:])
    rng = np.random.default_rng(seed)
    weights = rng.integers(1, 20, n).tolist()
    values = rng.integers(1, 30, n).tolist()
    return Instance(
        NAME, data={"weights": weights, "values": values, "capacity": sum(weights) // 2}
    )


TOY: Problem[ToyInput, ToyDecision] = Problem(
    name=NAME,
    summary="0-1 knapsack (test toy)",
    sense="max",
    read=read,
    encode=encode,
    methods=(
        Method("exact", exact, exact=True),
        Method("greedy", greedy),
        Method("broken", broken),
        Method("liar", liar),
        Method("bad-bound", bad_bound),
        Method("refuses-large", refuses_large, exact=True),
        Method("stops-early", stops_early, exact=True),
    ),
    default="exact",
    check=check,
    generate=generate,
    sizes={"quick": ("n4", "n8")},
)


@contextmanager
def registered() -> Iterator[Problem[ToyInput, ToyDecision]]:
    """The toy problem in the registry for the duration of a test."""
    registry.register(TOY)
    try:
        yield TOY
    finally:
        registry._registered.pop(NAME, None)
