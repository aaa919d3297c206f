"""Placement at scale (issue 25): the count completions, Algorithm 1's search on counts, the moves.

Expected values come from independent models written here or elsewhere:
the server-by-server quasi-consolidation (:func:`quasi_into`) for the count
pass, a plain enumeration of every combination (no pruning, no memory, no
counts) for Algorithm 1, and the free GPUs of the instance itself for the
swap-out moves at 443 servers (every GPU used by a consolidated job: the
fractional-knapsack bound, reached).
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from scheduling_opt.errors import InvalidInstanceError
from scheduling_opt.model import Cluster, GpuType, Job, Placement, PlacementRow, Server
from scheduling_opt.placement import (
    Assignment,
    PlacementDecision,
    PlacementInput,
    check,
    chronus_local_search,
    decide,
    local_search,
    search_assign,
    total_rw,
    upper_bound,
)
from scheduling_opt.placement import counts as cnt
from scheduling_opt.placement.improve import improve
from scheduling_opt.placement.io import generate, generate_placement, read
from scheduling_opt.placement.local_search import search_prefix
from scheduling_opt.placement.quasi import _place_span, apply, potential_order, quasi_into, rooms_of
from scheduling_opt.scaling import Log2Model, Log2Times
from scheduling_opt.solution import Solution, Status

TYPES = (GpuType("V100", 1.0, 32.0), GpuType("T4", 0.25, 16.0))
SPEED = Log2Model(models={"slow": Log2Times(1.0, 2.0), "fast": Log2Times(1.0, 1.1)})


@st.composite
def mixed_inputs(draw: st.DrawFn, servers: int = 12, jobs: int = 14) -> PlacementInput:
    """Two GPU types, servers of 4-10 GPUs partly busy, jobs of 1-3 GPUs per worker, some typed."""
    cluster_servers, rows, running = [], [], []
    for i in range(draw(st.integers(1, servers))):
        size = draw(st.sampled_from([4, 6, 8, 10]))
        cluster_servers.append(Server(f"s{i}", draw(st.sampled_from(["V100", "T4"])), size))
        busy = draw(st.integers(0, size))
        if busy:
            running.append(Job(f"old{i}", busy, busy, 60.0))
            rows.append(PlacementRow(f"old{i}", f"s{i}", busy))
    cluster = Cluster(TYPES, tuple(cluster_servers))
    todo, models = [], {}
    for i in range(draw(st.integers(1, jobs))):
        gpw = draw(st.sampled_from([1, 1, 2, 3]))
        gtype = draw(st.sampled_from([None, None, "V100", "T4"]))
        fits = [s.gpus // gpw for s in cluster_servers if gtype in (None, s.gpu_type)]
        if sum(fits) < 1:
            continue
        n = draw(st.integers(1, min(sum(fits), 12)))
        todo.append(Job(f"j{i}", n, n, 60.0, gpw, gpu_type=gtype))
        models[f"j{i}"] = draw(st.sampled_from(["slow", "fast", "none"]))
    if not todo:
        todo.append(Job("one", 1, 1, 60.0))  # every server holds one GPU
    models = {j: m for j, m in models.items() if m != "none"}
    return PlacementInput(
        cluster, [*running, *todo], Placement(tuple(rows)), models=models, speed=SPEED
    )


def _counts_after(inp: PlacementInput, shape: cnt.CountShape, free: Sequence[int]) -> list[int]:
    return cnt.counts_of(inp, shape, free)


# --------------------------------------------------------------------------- counts


@pytest.mark.parametrize(
    ("size", "seed"), [(s, k) for s in ("6", "16", "96", "443") for k in (0, 1)]
)
def test_count_pass_equals_the_server_pass_on_generated_instances(size: str, seed: int) -> None:
    inp = read(generate(size, seed))
    order = potential_order(inp, range(inp.n_jobs))
    free = list(inp.free)
    _, expected = quasi_into(inp, order, free)
    shape = cnt.shape_of(inp)
    assert shape is not None
    counts = cnt.counts_of(inp, shape, inp.free)
    value, examined = cnt.pass_value(cnt.pass_plan(inp, shape, order), counts)
    assert value == expected  # the same additions in the same order
    assert counts == _counts_after(inp, shape, free)
    assert 0 < examined <= inp.n_jobs


@settings(max_examples=60, deadline=None)
@given(inp=mixed_inputs(), data=st.data())
def test_count_pass_equals_the_server_pass(inp: PlacementInput, data: st.DataObject) -> None:
    order = data.draw(st.permutations(range(inp.n_jobs)))
    free = list(inp.free)
    _, expected = quasi_into(inp, order, free)
    shape = cnt.shape_of(inp)
    assert shape is not None
    counts = cnt.counts_of(inp, shape, inp.free)
    value, _ = cnt.pass_value(cnt.pass_plan(inp, shape, order), counts)
    assert value == expected
    assert counts == _counts_after(inp, shape, free)


@settings(max_examples=80, deadline=None)
@given(inp=mixed_inputs(), data=st.data())
def test_take_is_the_k_server_best_fit_on_counts(inp: PlacementInput, data: st.DataObject) -> None:
    j = data.draw(st.integers(0, inp.n_jobs - 1))
    k = data.draw(st.integers(1, inp.job_workers[j] + 1))
    shape = cnt.shape_of(inp)
    assert shape is not None
    counts = cnt.counts_of(inp, shape, inp.free)
    by_type = cnt.free_by_type(shape, counts)
    placed = cnt.take(counts, by_type, cnt.job_cells(inp, shape, j), k, shape.types)
    free = list(inp.free)
    assign = _place_span(rooms_of(inp, j, free), inp.job_workers[j], k)
    assert placed == (assign is not None)
    if assign is not None:
        apply(inp, j, assign, free, 1)
    assert counts == _counts_after(inp, shape, free)
    assert by_type == cnt.free_by_type(shape, counts)


def test_identical_jobs_repeat_a_full_single_cell_move() -> None:
    # Six 8-GPU servers, three 16-GPU jobs: each takes two whole servers; the
    # second and third repeat the first move without a search (pass_value).
    inp = PlacementInput(
        Cluster(TYPES, tuple(Server(f"n{i}", "V100", 8) for i in range(6))),
        [Job(f"j{i}", 16, 16, 60.0) for i in range(3)],
    )
    shape = cnt.shape_of(inp)
    assert shape is not None
    plan = cnt.pass_plan(inp, shape, range(3))
    assert plan.run == (3, 2, 1)
    counts = cnt.counts_of(inp, shape, inp.free)
    value, examined = cnt.pass_value(plan, counts)
    assert value == 48.0  # each consolidated on 2 servers: RW = G
    assert examined == 3
    assert counts[0] == 6  # every server full (type 0, 0 free)


def test_pass_gives_up_below_its_floor() -> None:
    inp = read(generate("16", 0))
    order = potential_order(inp, range(inp.n_jobs))
    shape = cnt.shape_of(inp)
    assert shape is not None
    plan = cnt.pass_plan(inp, shape, order)
    full, _ = cnt.pass_value(plan, cnt.counts_of(inp, shape, inp.free))
    assert full is not None
    assert cnt.pass_value(plan, cnt.counts_of(inp, shape, inp.free), floor=full - 1e-6)[0] == full
    # No pass reaches the bound of every GPU: it gives up once that is clear.
    gave_up, _ = cnt.pass_value(
        plan, cnt.counts_of(inp, shape, inp.free), floor=upper_bound(inp) + 1.0
    )
    assert gave_up is None


# --------------------------------------------------------------------------- Algorithm 1


def algorithm_1(inp: PlacementInput, search_space: int) -> list[Assignment | None]:
    """Chronus Algorithm 1 written plainly: every combination of the top K, server by server.

    Lines 1-4: potential order, K from |S|; lines 6-12: for every
    combination of spans (ascending, then the job left out) the rest by
    quasi-consolidation; the first combination with the largest total wins
    (rewards within 1e-9 tie).
    """
    order = potential_order(inp, range(inp.n_jobs))
    k = search_prefix(inp, order, search_space)
    top, rest = order[:k], order[k:]
    best, best_assign = -1.0, {}
    for combo in itertools.product(*([*inp.spans(j), 0] for j in top)):
        free = list(inp.free)
        placed: dict[int, Assignment] = {}
        reward = 0.0
        for j, span in zip(top, combo, strict=True):
            assign = _place_span(rooms_of(inp, j, free), inp.job_workers[j], span) if span else ()
            if assign is None:
                break  # no such combination: this span does not fit here
            if assign:
                apply(inp, j, assign, free, 1)
                placed[j] = assign
                reward += inp.rw[j][span]
        else:
            done, tail = quasi_into(inp, rest, free)
            if reward + tail > best + 1e-9:
                best, best_assign = reward + tail, placed | done
    return [best_assign.get(j) for j in range(inp.n_jobs)]


@settings(max_examples=60, deadline=None)
@given(
    inp=mixed_inputs(servers=8, jobs=8),
    space=st.sampled_from([1, 10, 200, 5000]),
    counts=st.booleans(),
)
def test_search_equals_the_plain_enumeration(inp: PlacementInput, space: int, counts: bool) -> None:
    with pytest.MonkeyPatch.context() as patch:
        # Both representations, whatever the cluster's size would pick.
        patch.setattr(local_search, "on_counts", lambda inp: counts)
        assign, stopped = search_assign(inp, space)
    assert not stopped
    expected = algorithm_1(inp, space)
    assert total_rw(inp, assign) == pytest.approx(total_rw(inp, expected), abs=1e-9)
    assert decide(inp, assign) == decide(inp, expected)


@pytest.mark.parametrize(("size", "seed"), [("8", 0), ("16", 1), ("16", 3), ("96", 4)])
def test_search_equals_the_plain_enumeration_on_generated_instances(size: str, seed: int) -> None:
    inp = read(generate(size, seed))
    space = 3000  # the plain enumeration visits every combination
    assign, _ = search_assign(inp, space)
    assert decide(inp, assign) == decide(inp, algorithm_1(inp, space))


@pytest.mark.parametrize("size", ["16", "96"])
def test_search_on_counts_and_on_servers_agree(size: str) -> None:
    inp = read(generate(size, 2))
    found = []
    for counts in (True, False):
        with pytest.MonkeyPatch.context() as patch:
            patch.setattr(local_search, "on_counts", lambda inp, counts=counts: counts)
            found.append(search_assign(inp, 3000)[0])
    assert found[0] == found[1] == algorithm_1(inp, 3000)


def test_servers_of_very_many_gpus_are_searched_on_servers() -> None:
    cluster = Cluster(TYPES, tuple(Server(f"n{i}", "V100", 5000) for i in range(3)))
    inp = PlacementInput(cluster, [Job(f"j{i}", 3000, 3000, 60.0) for i in range(4)])
    assert cnt.shape_of(inp) is None  # 5,001 free levels: no count vector
    assert not local_search.on_counts(inp)
    assign, _ = search_assign(inp)
    assert total_rw(inp, assign) == pytest.approx(total_rw(inp, algorithm_1(inp, 100_000)))


def test_work_limit_is_deterministic_and_monotone() -> None:
    inp = read(generate_placement(443, 0, n_jobs=300))
    full, stopped = search_assign(inp)
    assert not stopped
    small_a, stopped_a = search_assign(inp, work_limit=2_000)
    small_b, stopped_b = search_assign(inp, work_limit=2_000)
    assert stopped_a
    assert stopped_b
    assert small_a == small_b
    larger, _ = search_assign(inp, work_limit=20_000)
    # The same depth-first order explores a superset: never a worse incumbent.
    assert total_rw(inp, small_a) <= total_rw(inp, larger) + 1e-9
    assert total_rw(inp, larger) <= total_rw(inp, full) + 1e-9


@pytest.mark.parametrize("bad", [0, -1.0, float("nan"), True, "10"])
def test_work_limit_must_be_positive(bad: object) -> None:
    inp = read(generate("6", 0))
    with pytest.raises(InvalidInstanceError, match="work_limit"):
        search_assign(inp, work_limit=bad)  # type: ignore[arg-type]


# --------------------------------------------------------------------------- moves


@settings(max_examples=40, deadline=None)
@given(inp=mixed_inputs())
def test_local_search_answers_are_valid_deterministic_and_never_below_algorithm_1(
    inp: PlacementInput,
) -> None:
    sol = chronus_local_search(inp)
    check(inp, sol)  # the independent checker: capacities, types, rewards, bound
    assert sol.objective is not None
    assert sol.bound is not None
    alone = chronus_local_search(inp, improve_moves=False)
    assert alone.objective is not None
    assert sol.objective >= alone.objective - 1e-9  # the moves never lose reward
    assert sol.objective <= upper_bound(inp) + 1e-9
    assert chronus_local_search(inp).decision == sol.decision


def test_swap_out_trades_a_spread_job_for_waiting_ones() -> None:
    # Two 8-GPU servers with 4 GPUs busy each: b (8 GPUs) spread 4 + 4 earns
    # 8 / 1.5; c and d (4 each) waiting fit one server each: 4 + 4 = 8.
    cluster = Cluster(TYPES, (Server("n0", "V100", 8), Server("n1", "V100", 8)))
    running = [Job("x", 4, 4, 60.0), Job("y", 4, 4, 60.0)]
    rows = (PlacementRow("x", "n0", 4), PlacementRow("y", "n1", 4))
    todo = [Job("b", 8, 8, 60.0), Job("c", 4, 4, 60.0), Job("d", 4, 4, 60.0)]
    inp = PlacementInput(cluster, [*running, *todo], Placement(rows))
    start: list[Assignment | None] = [((0, 4), (1, 4)), None, None]
    assert total_rw(inp, start) == pytest.approx(8 / 1.5)
    better = improve(inp, start)
    check(inp, Solution(Status.FEASIBLE, total_rw(inp, better), decide(inp, better)))
    assert total_rw(inp, better) == 8.0
    assert better[0] is None


@pytest.mark.slow
@pytest.mark.parametrize("seed", [0, 7])
def test_local_search_uses_every_free_gpu_at_443_servers(seed: int) -> None:
    # 1,000 jobs ask for about four times the free GPUs, of every size from
    # 1 to 16: a placement of consolidated jobs on every free GPU exists,
    # and nothing earns more than one per GPU (the cheap bound).
    inp = read(generate("443", seed))
    sol = chronus_local_search(inp)
    check(inp, sol)
    assert sol.objective == pytest.approx(sum(inp.free))
    assert sol.gap == pytest.approx(0.0, abs=1e-12)
    assert isinstance(sol.decision, PlacementDecision)


def test_improve_is_bounded_by_work() -> None:
    inp = read(generate("120", 1))
    start, _ = search_assign(inp)
    # The moves are the same sequence whatever the limit: a smaller one stops earlier.
    rewards = [total_rw(inp, improve(inp, start, work_limit=w)) for w in (1, 50, 1e9)]
    assert total_rw(inp, start) <= rewards[0] <= rewards[1] <= rewards[2]
    assert rewards[0] < rewards[2]
    assert improve(inp, start, work_limit=50) == improve(inp, start, work_limit=50)
