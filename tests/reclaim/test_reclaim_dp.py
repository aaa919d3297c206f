"""aryl-dp: components, the budget DP, numpy swap deltas, and the faster exact model."""

from __future__ import annotations

import itertools

from hypothesis import given, settings
from hypothesis import strategies as st

from scheduling_opt.model import Cluster, GpuType, Job, Placement, PlacementRow, Server
from scheduling_opt.reclaim import (
    ModelConfig,
    ReclaimInput,
    aryl,
    aryl_dp,
    check,
    exact,
    exact_pulp,
    exact_two_stage,
)
from scheduling_opt.reclaim.aryl_dp import components, split_budget
from scheduling_opt.reclaim.delta_swap import DeltaSwap
from scheduling_opt.reclaim.io import generate, read
from scheduling_opt.reclaim.milp import build, reduce
from scheduling_opt.solution import Status
from scheduling_opt.testing import brute_force_reclaim_instances as small_instances


def _input(
    rows: list[tuple[str, str, int]], jobs: tuple[Job, ...], n: int, n_r: int
) -> ReclaimInput:
    servers = (Server("t1", "T4", 8),)
    servers += tuple(Server(f"i{k}", "T4", 8, "inference", True) for k in range(1, n + 1))
    placement = Placement(tuple(PlacementRow(j, s, w) for j, s, w in rows))
    return ReclaimInput(Cluster((GpuType("T4"),), servers), jobs, placement, n_r)


def test_components_by_hand() -> None:
    # a links i1-i2, b links i2-i3, c links i4-i5 (min 1 of 2: losing both
    # preempts it), d sits on i5 alone, i6 is empty.
    rows = [("a", "i1", 1), ("a", "i2", 1), ("b", "i2", 1), ("b", "i3", 1)]
    rows += [("c", "i4", 1), ("c", "i5", 1), ("d", "i5", 1)]
    jobs = (Job("a", 2, 2, 1.0), Job("b", 2, 2, 1.0), Job("c", 1, 2, 1.0), Job("d", 1, 1, 1.0))
    inp = _input(rows, jobs, 6, 2)
    assert sorted(map(sorted, components(inp))) == [[0, 1, 2], [3, 4], [5]]
    # With 2 more workers on the training server and min 2, c survives the
    # loss of both on-loan workers: no choice preempts it, it links nothing.
    jobs = (Job("a", 2, 2, 1.0), Job("b", 2, 2, 1.0), Job("c", 2, 4, 1.0), Job("d", 1, 1, 1.0))
    inp = _input([*rows, ("c", "t1", 2)], jobs, 6, 2)
    assert sorted(map(sorted, components(inp))) == [[0, 1, 2], [3], [4], [5]]


@settings(max_examples=60, deadline=None)
@given(
    st.lists(st.lists(st.integers(0, 30), min_size=1, max_size=4), min_size=1, max_size=4),
    st.integers(0, 6),
)
def test_split_budget_matches_enumeration(raw: list[list[int]], budget: int) -> None:
    curves = [[0, *c] for c in raw]  # taking nothing costs nothing
    if sum(len(c) - 1 for c in curves) < budget:
        budget = sum(len(c) - 1 for c in curves)
    take = split_budget(curves, budget)
    assert sum(take) == budget
    assert all(0 <= t < len(c) for t, c in zip(take, curves, strict=True))
    best = min(
        sum(c[t] for c, t in zip(curves, ts, strict=True))
        for ts in itertools.product(*(range(len(c)) for c in curves))
        if sum(ts) == budget
    )
    assert sum(c[t] for c, t in zip(curves, take, strict=True)) == best


@settings(max_examples=60, deadline=None)
@given(small_instances(max_servers=8))
def test_delta_swap_ends_in_a_true_swap_local_optimum(inst: object) -> None:
    inp = read(inst)  # type: ignore[arg-type]
    if inp.n_reclaim in (0, inp.n_servers):
        return
    start = list(range(inp.n_reclaim))
    chosen, finished = DeltaSwap(inp).search(start, max_moves=100)
    assert finished
    assert len(set(chosen)) == inp.n_reclaim
    cost = inp.cost(chosen)
    assert cost <= inp.cost(start)
    # No 1-1 swap improves, by direct recomputation of the cost.
    outside = [s for s in range(inp.n_servers) if s not in chosen]
    for r in chosen:
        for a in outside:
            assert inp.cost([a if s == r else s for s in chosen]) >= cost


@settings(max_examples=60, deadline=None)
@given(small_instances(max_servers=10))
def test_aryl_dp_is_valid_and_never_worse_than_aryl(inst: object) -> None:
    inp = read(inst)  # type: ignore[arg-type]
    sol = aryl_dp(inp)
    check(inp, sol)
    assert sol.status is Status.FEASIBLE
    assert sol.key <= aryl(inp).key
    assert sol.key >= exact(inp).key


def test_aryl_dp_closes_a_whole_component() -> None:
    # By hand: a on i1+i2, b alone on i3, N_R = 2: {i1, i2} preempts a only.
    rows = [("a", "i1", 1), ("a", "i2", 1), ("b", "i3", 1)]
    inp = _input(rows, (Job("a", 2, 2, 1.0), Job("b", 1, 1, 1.0)), 3, 2)
    sol = aryl_dp(inp)
    assert sol.decision is not None
    assert sol.decision.servers == ("i1", "i2")
    assert sol.key == (1.0, 0.0)


def test_aryl_dp_is_deterministic_and_honours_a_tiny_time_limit() -> None:
    inp = read(generate("150", 2))
    first = aryl_dp(inp, seed=0)
    assert first.decision == aryl_dp(inp, seed=9).decision
    rushed = aryl_dp(inp, time_limit=1e-9)
    check(inp, rushed)
    assert rushed.status is Status.FEASIBLE
    assert "time limit" in rushed.message


def test_aryl_dp_within_the_proven_optimum_on_generated() -> None:
    for seed in range(3):
        inp = read(generate("60", seed))
        best = exact(inp)
        assert best.status is Status.OPTIMAL
        sol = aryl_dp(inp)
        check(inp, sol)
        assert best.key <= sol.key <= aryl(inp).key
        assert sol.bound is not None
        assert sol.bound <= best.objective


def test_lean_model_drops_only_implied_rows_and_agrees() -> None:
    inp = read(generate("60", 1))
    red = reduce(inp, ModelConfig())
    inelastic = sum(1 for j in red.jobs if inp.slack[j] == 0)
    lean = build(inp, red, ModelConfig(), 1, 0)
    full = build(inp, red, ModelConfig(lean=False), 1, 0)
    assert full.a.shape[0] - lean.a.shape[0] == inelastic
    assert exact_two_stage(inp).key == exact_two_stage(inp, config=ModelConfig(lean=False)).key


def test_two_stage_model_agrees_with_the_independent_pulp_model_on_medium() -> None:
    for seed in (0, 1):
        inp = read(generate("20", seed))
        a, b = exact_two_stage(inp), exact_pulp(inp, time_limit=60)
        assert a.status is Status.OPTIMAL
        assert b.status is Status.OPTIMAL
        assert a.key == b.key


def test_a_job_no_choice_preempts_does_not_leak_a_server_into_another_component() -> None:
    # Component {i1, i2, i3} (a on i1+i2, e on i2+i3, f alone on i3) and {i4};
    # c runs on i1, i4 and the training server with min 2 of 4 workers: never
    # preempted, it links no component. Algorithm 1 returns i1 first (cost
    # 1/2 + 1/2, ties to the first listed), which touches i4 through c; i4 is
    # free, so a greedy pushing it into the first component's heap would pick
    # it there and then find the second component's heap empty.
    rows = [("a", "i1", 1), ("a", "i2", 1), ("e", "i2", 1), ("e", "i3", 1), ("f", "i3", 1)]
    rows += [("c", "i1", 1), ("c", "i4", 1), ("c", "t1", 2)]
    jobs = (Job("a", 2, 2, 1.0), Job("e", 2, 2, 1.0), Job("f", 1, 1, 1.0), Job("c", 2, 4, 1.0))
    inp = _input(rows, jobs, 4, 3)
    assert sorted(map(sorted, components(inp))) == [[0, 1, 2], [3]]
    sol = aryl_dp(inp)
    check(inp, sol)
    # By hand: {i1, i2, i4} preempts a and e only (e leaves 1 GPU on i3);
    # any set with i3 also preempts f.
    assert sol.decision is not None
    assert sol.decision.servers == ("i1", "i2", "i4")
    assert sol.key == exact(inp).key == (2.0, 1.0)
