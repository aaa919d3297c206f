"""The frontier DP (new ``exact``) and ``auto``: brute force, the old MILP, budgets, honesty."""

from __future__ import annotations

import itertools
import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from scheduling_opt.io.instance import Instance
from scheduling_opt.model import Cluster, GpuType, Job, Placement, PlacementRow, Server
from scheduling_opt.reclaim import (
    ReclaimInput,
    aryl_dp,
    auto,
    check,
    exact,
    exact_two_stage,
    frontier_dp,
)
from scheduling_opt.reclaim.aryl_dp import components
from scheduling_opt.reclaim.frontier import Budget, _advance, _steps, server_order
from scheduling_opt.reclaim.io import generate, read
from scheduling_opt.solution import Status
from scheduling_opt.testing import brute_force_reclaim_instances as small_instances


def brute_force(inp: ReclaimInput) -> tuple[int, int]:
    """The best (preempted, collateral) over every N_R-subset of on-loan servers."""
    keys = [inp.decide(c).key for c in itertools.combinations(range(inp.n_servers), inp.n_reclaim)]
    return min(keys)


def _input(
    rows: list[tuple[str, str, int]], jobs: tuple[Job, ...], n: int, n_r: int
) -> ReclaimInput:
    servers = (Server("t1", "T4", 8),)
    servers += tuple(Server(f"i{k}", "T4", 8, "inference", True) for k in range(1, n + 1))
    placement = Placement(tuple(PlacementRow(j, s, w) for j, s, w in rows))
    return ReclaimInput(Cluster((GpuType("T4"),), servers), jobs, placement, n_r)


def _chain() -> ReclaimInput:
    # a (inelastic) on i1+i2, b (min 2 of 3) on i2+i3+i4, c (inelastic, 2 GPUs
    # per worker, one worker on t1) on i4+i5, d alone on i5; N_R = 2.
    rows = [("a", "i1", 1), ("a", "i2", 1), ("b", "i2", 1), ("b", "i3", 1), ("b", "i4", 1)]
    rows += [("c", "i4", 1), ("c", "i5", 1), ("c", "t1", 1), ("d", "i5", 1)]
    jobs = (
        Job("a", 2, 2, 1.0),
        Job("b", 2, 3, 1.0),
        Job("c", 3, 3, 1.0, gpus_per_worker=2),
        Job("d", 1, 1, 1.0),
    )
    return _input(rows, jobs, 5, 2)


def test_chain_by_hand() -> None:
    # By hand, N_R = 2 of i1..i5: {i1, i2} preempts a only (b loses 1 of its
    # slack 1), collateral 0. Every other pair preempts >= 1 job: {i3, i4}
    # preempts b and c (b loses 2 > 1), {i1, i3} preempts a (1 GPU left on
    # i2), ... so (1, 0) is the optimum, and it is unique.
    inp = _chain()
    found = frontier_dp(inp)
    assert found is not None
    assert found.chosen == [0, 1]
    assert found.cost == inp.big * 1 + 0
    assert brute_force(inp) == (1, 0)
    sol = exact(inp)
    assert sol.status is Status.OPTIMAL
    assert sol.decision is not None
    assert sol.decision.servers == ("i1", "i2")
    assert sol.decision.scaled_in == (("b", 1),)


def _curve_by_brute_force(inp: ReclaimInput, members: list[int], width: int) -> list[int]:
    """min cost over r-subsets of one component, for r = 0..width (other servers kept)."""
    return [min(inp.cost(c) for c in itertools.combinations(members, r)) for r in range(width + 1)]


@settings(max_examples=80, deadline=None)
@given(small_instances(max_servers=9), st.randoms(use_true_random=False))
def test_every_order_gives_the_brute_force_curve(inst: Instance, rng: random.Random) -> None:
    # The DP is exact along any order (the order only changes its size):
    # a shuffled order's curve must equal brute force for every r.
    inp = read(inst)
    live = [inp.can_preempt(j) for j in range(inp.n_jobs)]
    for members in components(inp):
        order = list(members)
        rng.shuffle(order)
        width = min(len(members), inp.n_reclaim)
        run = _advance(_steps(inp, order, live), width, Budget(10**9, 10**12))
        assert run is not None
        _, final = run
        assert final.shape[0] == 1  # every job has left the frontier
        assert final[0].tolist() == _curve_by_brute_force(inp, members, width)


@settings(max_examples=120, deadline=None)
@given(small_instances(max_servers=10))
def test_exact_and_auto_equal_brute_force(inst: Instance) -> None:
    inp = read(inst)
    best = brute_force(inp)
    for method in (exact, auto):
        sol = method(inp)
        check(inp, sol)
        assert sol.status is Status.OPTIMAL
        assert sol.key == best
        assert sol.bound == best[0]


@pytest.mark.parametrize(
    "size",
    [
        "8",
        "12",
        "20",
        pytest.param("60", marks=pytest.mark.slow),
        pytest.param("150", marks=pytest.mark.slow),
    ],
)
def test_exact_equals_the_two_stage_milp_on_generated(size: str) -> None:
    for seed in range(5):
        inp = read(generate(size, seed))
        new, old = exact(inp), exact_two_stage(inp, time_limit=60)
        assert new.status is Status.OPTIMAL
        assert old.status is Status.OPTIMAL
        assert new.key == old.key, seed
        check(inp, new)


def test_exact_equals_the_two_stage_milp_at_500() -> None:
    inp = read(generate("500", 0))
    new = exact(inp)
    assert new.status is Status.OPTIMAL
    # The MILP's optimum on this seed, measured once (docs/reclaim.md):
    assert new.key == (149.0, 168.0)
    assert exact_two_stage(inp, time_limit=60).key == new.key


def test_over_budget_falls_back_to_the_milp_and_aryl_dp() -> None:
    inp = read(generate("60", 3))
    assert frontier_dp(inp, max_cells=10) is None
    assert frontier_dp(inp, max_states=10) is None
    best = exact(inp)
    fallback = exact(inp, max_states=10)
    assert fallback.status is Status.OPTIMAL
    assert fallback.key == best.key
    quick = auto(inp)
    assert quick.status is Status.OPTIMAL
    assert quick.key == best.key


def test_auto_falls_back_to_aryl_dp_when_the_frontier_is_wide(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import importlib

    auto_module = importlib.import_module("scheduling_opt.reclaim.auto")
    monkeypatch.setattr(auto_module, "AUTO_STATES_PER_SERVER", 0)
    inp = read(generate("60", 1))
    sol = auto(inp)
    check(inp, sol)
    assert sol.status is Status.FEASIBLE
    assert sol.key == aryl_dp(inp).key
    assert "aryl-dp" in sol.message


def test_exact_honours_a_tiny_time_limit() -> None:
    inp = read(generate("500", 1))
    rushed = exact(inp, time_limit=1e-6)
    check(inp, rushed)
    assert rushed.status is Status.TIME_LIMIT
    assert rushed.message
    assert rushed.bound is not None
    assert rushed.bound <= 151  # the proven optimum's count on this seed
    assert rushed.objective >= 151


def test_exact_is_deterministic() -> None:
    inp = read(generate("150", 4))
    first, second = exact(inp), exact(inp)
    assert first.decision == second.decision
    assert first.status is Status.OPTIMAL


def test_server_order_handles_a_wrapping_chain() -> None:
    # Jobs link i5-i1 (wrapping) and i1-i2: the file order started after the
    # largest gap (i2 -> i5) keeps every job's servers adjacent.
    rows = [("a", "i5", 1), ("a", "i1", 1), ("b", "i1", 1), ("b", "i2", 1)]
    inp = _input(rows, (Job("a", 2, 2, 1.0), Job("b", 2, 2, 1.0)), 5, 2)
    live = [True, True]
    assert server_order(inp, [0, 1, 4], live) == [4, 0, 1]
    assert exact(inp).key == brute_force(inp)


def test_zero_and_all_servers() -> None:
    inp = _chain()
    import dataclasses

    none = frontier_dp(dataclasses.replace(inp, n_reclaim=0))
    assert none is not None
    assert none.chosen == []
    assert none.cost == 0
    every = frontier_dp(dataclasses.replace(inp, n_reclaim=5))
    assert every is not None
    assert every.chosen == [0, 1, 2, 3, 4]
    assert every.cost == inp.cost(range(5))


def _random_spans(n: int, seed: int) -> ReclaimInput:
    """Jobs on 1-4 servers drawn uniformly: no locality, a wide frontier."""
    rng = random.Random(seed)
    free = dict.fromkeys(range(1, n + 1), 8)
    rows: list[tuple[str, str, int]] = []
    jobs: list[Job] = []
    for k in range(2 * n):
        span = [s for s in rng.sample(range(1, n + 1), rng.randint(1, 4)) if free[s]]
        for s in span:
            free[s] -= 1
            rows.append((f"j{k}", f"i{s}", 1))
        if span:
            slack = rng.randint(0, len(span) // 2) if rng.random() < 0.3 else 0
            jobs.append(Job(f"j{k}", len(span) - slack, len(span), 1.0))
    return _input(rows, tuple(jobs), n, n // 4)


def test_a_wide_frontier_gives_up_early_and_the_milp_answers() -> None:
    inp = _random_spans(40, 0)
    assert frontier_dp(inp) is None  # estimated ~1e8 states: not even started
    sol = exact(inp, time_limit=60)
    check(inp, sol)
    assert sol.status is Status.OPTIMAL
    assert sol.key == exact_two_stage(inp, time_limit=60).key
    quick = auto(inp)
    check(inp, quick)
    assert quick.status is Status.FEASIBLE
    assert quick.key == aryl_dp(inp).key


def test_a_frontier_of_thousands_of_jobs_is_hopeless_not_an_overflow() -> None:
    # 2,400 servers: job j_k on servers k and k + 1,200, chain job c_k on k and
    # k + 1: one component whose frontier holds ~1,200 jobs at the middle
    # (an estimate of 2 ** 1200 states, past a float). The DP must give up
    # cleanly and auto fall back to aryl-dp.
    n = 2400
    rows = [(f"j{k}", f"i{k + 1}", 1) for k in range(n // 2)]
    rows += [(f"j{k}", f"i{k + 1 + n // 2}", 1) for k in range(n // 2)]
    rows += [(f"c{k}", f"i{k + 1}", 1) for k in range(n - 1)]
    rows += [(f"c{k}", f"i{k + 2}", 1) for k in range(n - 1)]
    jobs = tuple(Job(f"j{k}", 2, 2, 1.0) for k in range(n // 2))
    jobs += tuple(Job(f"c{k}", 2, 2, 1.0) for k in range(n - 1))
    inp = _input(rows, jobs, n, 3)
    assert frontier_dp(inp) is None
    sol = auto(inp)
    check(inp, sol)
    assert sol.status is Status.FEASIBLE
