"""The packing search (``lease.packing.pack``) and the levels stage's fixing, against oracles.

Oracles: brute force over every choice of terms (tiny cases), HiGHS on the
packing MILP without presolve (``exact._pack``) on level choices of generated
instances, the whole MILP (``two_stage=False``) for the fixing of the levels
stage, and the optimum of synth-p4-6 proven by the old path (HiGHS packings
and confirmations, 87 s of CPU; docs/lease.md).
"""

from __future__ import annotations

import importlib
import itertools
import random

import numpy as np
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from scheduling_opt import lease
from scheduling_opt.lease import LeaseInput, ModelConfig
from scheduling_opt.lease.formulation import Row, build, build_levels
from scheduling_opt.lease.io import generate, generate_lease, read
from scheduling_opt.lease.packing import Verdict, pack
from scheduling_opt.solution import Status

exact_module = importlib.import_module("scheduling_opt.lease.exact")
choice_module = importlib.import_module("scheduling_opt.lease._choice")
levels_module = importlib.import_module("scheduling_opt.lease._levels")

Jobs = list[tuple[int, int, int]]


def brute_force_packs(jobs: Jobs, capacity: int) -> bool:
    """Every combination of RL_i distinct terms below DL_i per job; some within M?"""
    options = [list(itertools.combinations(range(dl), rl)) for _, rl, dl in jobs]
    for combo in itertools.product(*options):
        load: dict[int, int] = {}
        for (g, _, _), held in zip(jobs, combo, strict=True):
            for t in held:
                load[t] = load.get(t, 0) + g
        if all(v <= capacity for v in load.values()):
            return True
    return False


def assert_valid(jobs: Jobs, capacity: int, terms: list[list[int]] | None) -> None:
    """An independent check of a packing: distinct terms, in the window, within M."""
    assert terms is not None
    assert len(terms) == len(jobs)
    load: dict[int, int] = {}
    for (g, rl, dl), held in zip(jobs, terms, strict=True):
        assert len(held) == len(set(held)) == rl
        assert all(0 <= t < dl for t in held)
        for t in held:
            load[t] = load.get(t, 0) + g
    assert all(v <= capacity for v in load.values())


@st.composite
def tiny_packings(draw: st.DrawFn, few_sizes: bool) -> tuple[Jobs, int]:
    capacity = draw(st.integers(1, 10))
    horizon = draw(st.integers(1, 4))
    if few_sizes:  # many jobs of the same size: the counting per size is exercised
        sizes = draw(st.lists(st.integers(1, capacity), min_size=1, max_size=2))
    else:
        sizes = list(range(1, capacity + 2))  # G up to M + 1 (a job too large to run)
    n = draw(st.integers(1, 7 if few_sizes else 5))
    jobs = []
    for _ in range(n):
        dl = draw(st.integers(1, horizon))
        jobs.append((draw(st.sampled_from(sizes)), draw(st.integers(0, dl)), dl))
    return jobs, capacity


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.booleans().flatmap(tiny_packings))
def test_search_equals_brute_force(case: tuple[Jobs, int]) -> None:
    jobs, capacity = case
    terms, verdict = pack(jobs, capacity, 60.0)
    assert verdict is not Verdict.UNKNOWN
    assert (verdict is Verdict.PACKED) == brute_force_packs(jobs, capacity)
    if verdict is Verdict.PACKED:
        assert_valid(jobs, capacity, terms)
    else:
        assert terms is None


def test_hand_cases() -> None:
    # Three jobs of 2 GPUs, one term each before term 2, M = 3: one per term,
    # so two terms hold two of them; fractionally all three fit (3 x 2 x 1/2).
    assert pack([(2, 1, 2)] * 3, 3, 1.0) == (None, Verdict.UNPACKABLE)
    # 6 + 5 + 5 in two terms of 10 GPUs, the 6 needing both terms: neither 5
    # fits beside it (11 > 10) in either term: unpackable.
    assert pack([(6, 2, 2), (5, 1, 2), (5, 1, 2)], 10, 1.0)[1] is Verdict.UNPACKABLE
    # With the 6 needing one term: {6}, {5, 5}.
    terms, verdict = pack([(6, 1, 2), (5, 1, 2), (5, 1, 2)], 10, 1.0)
    assert verdict is Verdict.PACKED
    assert_valid([(6, 1, 2), (5, 1, 2), (5, 1, 2)], 10, terms)
    # Degenerate inputs: nothing to run, a job larger than M, RL > DL.
    assert pack([], 5, 1.0) == ([], Verdict.PACKED)
    assert pack([(3, 0, 1)], 2, 1.0) == ([[]], Verdict.PACKED)
    assert pack([(3, 1, 1)], 2, 1.0) == (None, Verdict.UNPACKABLE)
    assert pack([(1, 3, 2)], 2, 1.0) == (None, Verdict.UNPACKABLE)


def _random_choice(inp: LeaseInput, rng: random.Random) -> list[int | None]:
    """A random level (or none) per job, kept only while the energy rows hold.

    Choices that fit fractionally are the ones the levels stage proposes and
    the only ones where packing is in doubt.
    """
    horizon = max(inp.horizon, 1)
    must = [0] * (horizon + 1)  # GPU-terms due before t
    pos: list[int | None] = [None] * len(inp.lease_jobs)
    order = list(range(len(inp.lease_jobs)))
    rng.shuffle(order)
    for i in order:
        job = inp.lease_jobs[i]
        if not job.levels or rng.random() < 0.15:
            continue
        p = rng.randrange(len(job.levels))
        due = job.levels[p].due
        add = [job.gpus * max(0, job.terms - max(0, due - t)) for t in range(horizon + 1)]
        if all(must[t] + add[t] <= inp.capacity * t for t in range(horizon + 1)):
            must = [a + b for a, b in zip(must, add, strict=True)]
            pos[i] = p
    return pos


@pytest.mark.slow
@pytest.mark.parametrize("size", ["c1-j8", "c2-j12", "c4-j24"])
def test_search_agrees_with_highs_on_level_choices(size: str) -> None:
    # Verdicts against HiGHS without presolve (a proof either way); every
    # packing found is checked by exact._packs and by assert_valid.
    rng = random.Random(size)
    verdicts = {Verdict.PACKED: 0, Verdict.UNPACKABLE: 0}
    for seed in range(12):
        inp = read(generate(size, seed))
        # No symmetry rows: they order identical jobs' levels, which a random
        # choice need not respect (the packing itself does not care).
        model = build(inp, ModelConfig(symmetry=False))
        for _ in range(4):
            pos = _random_choice(inp, rng)
            x = np.zeros(model.lay.size)
            jobs: Jobs = []
            for i, p in enumerate(pos):
                if p is not None:
                    x[model.lay.s[i][p]] = 1.0
                    job = inp.lease_jobs[i]
                    jobs.append((job.gpus, job.terms, job.levels[p].due))
            terms, verdict = pack(jobs, inp.capacity, 60.0)
            _schedule, status = choice_module.pack_highs(inp, model, x, 60.0, presolve=False)
            assert verdict is not Verdict.UNKNOWN
            assert status in (Status.OPTIMAL, Status.INFEASIBLE)
            assert (verdict is Verdict.PACKED) == (status is Status.OPTIMAL), (size, seed, pos)
            if verdict is Verdict.PACKED:
                assert_valid(jobs, inp.capacity, terms)
                found, _ = choice_module.pack_search(inp, model, x, 60.0, None)
                assert found is not None
                assert choice_module.packs(inp, found)
            verdicts[verdict] += 1
    assert verdicts[Verdict.PACKED] > 0


def test_node_limit_gives_unknown_and_answers_repeat() -> None:
    # Two 1-GPU jobs of one term before term 3: the search enters terms 0, 1,
    # 2 and the end (4 nodes); with a budget of 1 it must give up, not guess.
    jobs: Jobs = [(1, 1, 3), (1, 1, 3)]
    assert pack(jobs, 5, 60.0, node_limit=1) == (None, Verdict.UNKNOWN)
    assert pack(jobs, 5, 60.0, node_limit=4)[1] is Verdict.PACKED
    # The clock is read at every node (every 256 before: 500 terms and 255
    # jobs of 40 sizes ran 0.26-0.31 s past a 0.05-0.5 s limit, fuzz 2026-11-26):
    # even a 4-node search stops at once under a limit of 0.
    assert pack(jobs, 5, 0.0) == (None, Verdict.UNKNOWN)
    # Deterministic: the same answer twice, byte for byte, on a larger choice.
    inp = read(generate("c4-j24", 5))
    rng = random.Random(5)
    pos = _random_choice(inp, rng)
    big: Jobs = [
        (j.gpus, j.terms, j.levels[p].due)
        for j, p in zip(inp.lease_jobs, pos, strict=True)
        if p is not None
    ]
    assert pack(big, inp.capacity, 60.0) == pack(big, inp.capacity, 60.0)


def test_granularity() -> None:
    gran = levels_module.granularity
    assert gran(np.array([0.0, 20.0, 30.0, 100.0])) == 10.0
    assert gran(np.array([0.0, 20.0, 30.5])) is None
    assert gran(np.zeros(3)) is None


@pytest.mark.slow
@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.integers(0, 10_000), st.sampled_from(["c2-j12", "c4-j24"]))
def test_levels_with_fixing_equal_levels_without(seed: int, size: str) -> None:
    # The reduced-cost fixing below a floor keeps every choice worth the floor
    # or more: with the same cuts, the fixed solve's optimum equals the plain
    # one's. Cuts: no-goods of the successive optima (as _two_stage adds them).
    inp = read(generate(size, seed))
    model = build(inp)
    stage = levels_module.Levels(build_levels(inp))
    cuts: list[Row] = []
    status, x, bound = stage.solve(cuts, None, 60.0)
    for _ in range(3):
        if status is not Status.OPTIMAL or x is None or bound is None:
            return
        cuts.append(choice_module.no_good(model, x))
        plain = stage.solve(cuts, None, 60.0)
        status, x, fixed_bound = stage.solve(cuts, bound, 60.0)
        assert status is plain[0]
        if status is Status.OPTIMAL:
            assert plain[2] is not None
            assert fixed_bound is not None
            assert x is not None
            assert fixed_bound == pytest.approx(plain[2], abs=1e-6)
            assert float(stage.full.c @ x) == pytest.approx(plain[2], abs=1e-6)
        bound = fixed_bound


@pytest.mark.slow
@settings(max_examples=6, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.integers(0, 10_000), st.sampled_from(["c4-j24", "c16-j60"]))
def test_two_stage_with_the_search_equals_the_whole_milp(seed: int, size: str) -> None:
    inp = read(generate(size, seed))
    assume(sum(1 for j in inp.lease_jobs if j.levels) >= choice_module.SEARCH_MIN_JOBS)
    two = lease.exact(inp, time_limit=120.0, two_stage=True)
    one = lease.exact(inp, time_limit=120.0, two_stage=False)
    for sol in (two, one):
        lease.check(inp, sol)
    assert two.status is one.status is Status.OPTIMAL
    assert two.objective == pytest.approx(one.objective)


@pytest.mark.slow
def test_synth_p4_6_is_proven() -> None:
    # The last hard C120 instance (docs/lease.md): 17140, proven before only
    # by the old path in 87 s of CPU (HiGHS packings and confirmations).
    inp = read(generate_lease(120, 200, 6, pressure=4))
    sol = lease.exact(inp, time_limit=120.0)
    lease.check(inp, sol)
    assert (sol.status, sol.objective) == (Status.OPTIMAL, 17140.0)
    assert sol.bound == pytest.approx(17140.0)


@pytest.mark.slow
def test_a_long_horizon_is_left_to_highs_not_a_recursion_error() -> None:
    # The search recursed once per term: a deadline ~1,200 terms ahead (allowed
    # up to MAX_HORIZON without max_terms) raised RecursionError, through
    # lease.exact too. Above MAX_SEARCH_HORIZON it now answers unknown at once.
    from scheduling_opt.lease.packing import MAX_SEARCH_HORIZON
    from scheduling_opt.model import Job, RewardStep

    far = MAX_SEARCH_HORIZON + 700
    assert pack([(1, 1, far)], 1, 1.0) == (None, Verdict.UNKNOWN)
    # A generous limit: the verdict, not the speed, is under test (1 s flaked on a
    # loaded machine).
    assert pack([(1, 1, MAX_SEARCH_HORIZON)], 1, 60.0)[1] is Verdict.PACKED
    # 20 jobs of 2 GPUs needing one 1-s term each, M = 8, deadlines ~1,200
    # terms ahead: by hand, 4 jobs per term fill 5 terms, so every job meets
    # its deadline and the optimum is the sum of the rewards, 20 x 10 = 200.
    jobs = [
        Job(f"j{i}", 2, 2, 1.0, deadlines=(RewardStep(float(far + i), 10.0),)) for i in range(20)
    ]
    inp = LeaseInput(jobs, capacity=8, lease_length=1.0)
    assert sum(1 for j in inp.lease_jobs if j.levels) >= choice_module.SEARCH_MIN_JOBS
    sol = lease.exact(inp, time_limit=60.0, two_stage=True)
    lease.check(inp, sol)
    assert (sol.status, sol.objective) == (Status.OPTIMAL, 200.0)


def test_the_search_threshold_is_the_two_stage_threshold() -> None:
    # Two constants of one rule in two modules: packings of a two-stage solve
    # go to the search first (docs/lease.md).
    assert choice_module.SEARCH_MIN_JOBS == exact_module.TWO_STAGE_MIN_JOBS
