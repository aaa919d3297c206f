"""LeaseInput.from_terms: a lease input from jobs counted in terms, as the Chronus artifact counts."""

from __future__ import annotations

import itertools

import pytest

from scheduling_opt.errors import InvalidInstanceError
from scheduling_opt.lease import LeaseInput, exact
from scheduling_opt.model import Job, RewardStep

T = 1200.0  # a lease term in seconds, for the same jobs written in seconds


def _brute(jobs: list[tuple[str, int, int, list[tuple[int, float]]]], capacity: int) -> float:
    """Best total reward over every choice of held terms (each job: a set of `need` terms or none)."""
    horizon = max(due for *_, steps in jobs for due, _ in steps)
    options = []
    for _, gpus, need, steps in jobs:
        mine: list[tuple[float, tuple[int, ...], int]] = [(0.0, (), gpus)]
        for held in itertools.combinations(range(horizon), need):
            last = held[-1]
            reward = next((r for due, r in steps if last < due), None)
            if reward is not None:
                mine.append((reward, held, gpus))
        options.append(mine)
    best = 0.0
    for pick in itertools.product(*options):
        use = [0] * horizon
        for _, held, gpus in pick:
            for t in held:
                use[t] += gpus
        if max(use) <= capacity:
            best = max(best, sum(r for r, _, _ in pick))
    return best


def test_the_same_input_as_in_seconds() -> None:
    terms = LeaseInput.from_terms(
        [("a", 4, 2, [(2, 10.0), (3, 8.0)]), ("b", 2, 1, [(1, 10.0)])], capacity=4
    )
    seconds = LeaseInput(
        [
            Job("a", 4, 4, 2 * T, deadlines=(RewardStep(2 * T, 10.0), RewardStep(3 * T, 8.0))),
            Job("b", 2, 2, T, deadlines=(RewardStep(T, 10.0),)),
        ],
        capacity=4,
        lease_length=T,
    )
    assert terms.lease_jobs == seconds.lease_jobs
    assert exact(terms).objective == exact(seconds).objective


def test_worked_example() -> None:
    # 4 GPUs a term. b (2 GPUs, 1 term) must hold term 0 for its only step;
    # a (4 GPUs, 2 terms) then holds terms 1-2 and meets its second step (8).
    jobs = [("a", 4, 2, [(2, 10.0), (3, 8.0)]), ("b", 2, 1, [(1, 10.0)])]
    sol = exact(LeaseInput.from_terms(jobs, capacity=4, require_all=True))
    assert sol.objective == 18.0
    assert sol.decision is not None
    assert sol.decision.terms == {"a": (1, 2), "b": (0,)}
    assert _brute(jobs, 4) == 18.0


@pytest.mark.parametrize("capacity", [2, 3, 4, 6])
def test_exact_equals_brute_force(capacity: int) -> None:
    jobs = [
        ("a", 2, 2, [(2, 10.0), (4, 5.0)]),
        ("b", 2, 1, [(1, 10.0), (3, 2.0)]),
        ("c", 1, 3, [(3, 10.0), (4, 8.0)]),
        ("d", 2, 2, [(3, 10.0)]),
    ]
    assert exact(LeaseInput.from_terms(jobs, capacity)).objective == _brute(jobs, capacity)


@pytest.mark.parametrize(
    ("job", "path"),
    [
        (("a", 0, 1, [(1, 1.0)]), "jobs[0].gpus"),
        (("a", 1, 0, [(1, 1.0)]), "jobs[0].terms"),
        (("a", 1, 1, [(0, 1.0)]), "jobs[0].deadlines[0].due"),
        (("a", 1, 1, [(2, 1.0), (1, 1.0)]), "jobs[0].deadlines[1].time"),
        (("a", 1, 1, [(1, float("nan"))]), "jobs[0].deadlines[0].reward"),
        (("a", 1), "jobs[0]"),
    ],
)
def test_bad_jobs_name_the_field(job: tuple[object, ...], path: str) -> None:
    with pytest.raises(InvalidInstanceError) as err:
        LeaseInput.from_terms([job], capacity=4)  # type: ignore[list-item]
    assert err.value.path == path
