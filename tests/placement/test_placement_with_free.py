"""PlacementInput.with_free: servers partly used by jobs the caller does not describe."""

from __future__ import annotations

import itertools

import pytest

from scheduling_opt.errors import InvalidInstanceError
from scheduling_opt.model import Cluster, GpuType, Job, Server
from scheduling_opt.placement import (
    IN_USE,
    PlacementInput,
    chronus_local_search,
    exact_cpsat,
)


def _cluster(n: int = 3) -> Cluster:
    return Cluster((GpuType("V100"),), tuple(Server(f"n{i}", "V100", 8) for i in range(n)))


def test_free_counts_and_true_server_sizes() -> None:
    inp = PlacementInput.with_free(_cluster(), [Job("a", 6, 6, 60.0)], {"n0": 3, "n2": 0})
    # Written out: n0 has 5 of 8 GPUs used, n1 is untouched, n2 is full.
    assert inp.free == (3, 8, 0)
    assert inp.cap == (8, 8, 8)
    # Only the caller's job is to place; 6 GPUs fit one 8-GPU server: k* = 1.
    assert inp.job_ids == ("a",)
    assert inp.k_star == (1,)


def test_answers_stay_within_the_free_gpus() -> None:
    free = {"n0": 3, "n1": 5, "n2": 2}
    jobs = [Job("a", 4, 4, 60.0), Job("b", 3, 3, 60.0), Job("c", 2, 2, 60.0)]
    inp = PlacementInput.with_free(_cluster(), jobs, free)
    for method in (chronus_local_search, exact_cpsat):
        sol = method(inp)
        assert sol.decision is not None
        used: dict[str, int] = {}
        for job, server, workers in sol.decision.rows:
            assert not job.startswith(IN_USE)
            used[server] = used.get(server, 0) + workers
        assert all(used.get(s, 0) <= n for s, n in free.items())


def test_exact_reward_equals_brute_force() -> None:
    # 10 free GPUs split 3 + 5 + 2; jobs of 4 and 6 GPUs cannot both sit on one
    # server each. Brute force over each job's split: the best total reward
    # (log2 model: a job on k > k* servers earns G * speed(k) / speed(k*)).
    free = {"n0": 3, "n1": 5, "n2": 2}
    jobs = [Job("a", 4, 4, 60.0), Job("b", 6, 6, 60.0)]
    inp = PlacementInput.with_free(_cluster(), jobs, free)
    caps = [3, 5, 2]
    best = 0.0
    for split_a in itertools.product(range(5), repeat=3):
        if sum(split_a) not in (0, 4):
            continue
        for split_b in itertools.product(range(7), repeat=3):
            if sum(split_b) not in (0, 6):
                continue
            if any(x + y > c for x, y, c in zip(split_a, split_b, caps, strict=True)):
                continue
            total = 0.0
            for j, split in enumerate((split_a, split_b)):
                k = sum(1 for w in split if w)
                if k:
                    total += inp.rw[j][k]
            best = max(best, total)
    sol = exact_cpsat(inp)
    assert sol.objective == pytest.approx(best)


@pytest.mark.parametrize(
    ("free", "path"),
    [({"n9": 1}, "free.n9"), ({"n0": 9}, "free.n0"), ({"n0": -1}, "free.n0")],
)
def test_bad_free_counts_name_the_server(free: dict[str, int], path: str) -> None:
    with pytest.raises(InvalidInstanceError) as err:
        PlacementInput.with_free(_cluster(), [Job("a", 1, 1, 1.0)], free)
    assert err.value.path == path


def test_a_job_id_with_the_stand_in_prefix_is_refused() -> None:
    with pytest.raises(InvalidInstanceError) as err:
        PlacementInput.with_free(_cluster(), [Job(f"{IN_USE}x", 1, 1, 1.0)], {"n0": 4})
    assert err.value.path == "jobs[0].id"
