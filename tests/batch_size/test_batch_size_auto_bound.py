"""The exact DPs behind ``auto`` (issue 16): the integer knapsack relaxation and the server DP.

Expected values come from brute force over all (J + 1)^G genomes, from
CP-SAT (``exact``, an independent model) and from one case computed by hand;
never from the DPs themselves.
"""

from __future__ import annotations

import importlib
import json

import numpy as np
import pytest
from hypothesis import assume, given, settings
from numpy.typing import NDArray

from scheduling_opt.batch_size import (
    AnalyticThroughput,
    BatchSizeInput,
    JobState,
    auto,
    brute_force,
    check,
    exact,
    lower_bound,
)
from scheduling_opt.batch_size.dp import knapsack_relaxation, place, server_dp, server_dp_work
from scheduling_opt.batch_size.evaluate import objective
from scheduling_opt.batch_size.io import encode, generate, read
from scheduling_opt.model import BatchInfo, Job
from scheduling_opt.solution import Status
from scheduling_opt.testing import batch_size_cases, cluster_of, seeded_batch_size_input

auto_module = importlib.import_module("scheduling_opt.batch_size.auto")

REL = 1e-9
FloatArray = NDArray[np.float64]


def _f(inp: BatchSizeInput, genes: NDArray[np.int64]) -> float:
    return float(objective(inp, genes[None, :])[0])


class _Table:
    """Throughput that depends on (GPUs, spread) only: rate[c][s] samples per second."""

    def __init__(self, rate: dict[int, tuple[float, float]]) -> None:
        self.rate = rate

    def throughput(
        self, batch: FloatArray, local: FloatArray, gpus: FloatArray, spread: FloatArray
    ) -> FloatArray:
        c = np.asarray(gpus, np.int64)
        packed = np.vectorize(lambda k: self.rate[int(k)][0])(c)
        spans = np.vectorize(lambda k: self.rate[int(k)][1])(c)
        return np.asarray(np.where(np.asarray(spread) > 0, spans, packed), np.float64)


class _SpreadFaster:
    """A custom model where spanning servers is *faster* (spread cost below packed)."""

    def __init__(self, base: AnalyticThroughput) -> None:
        self.base = base

    def throughput(
        self, batch: FloatArray, local: FloatArray, gpus: FloatArray, spread: FloatArray
    ) -> FloatArray:
        b = self.base
        step = b.overhead * (1 - 0.3 * np.asarray(spread)) + b.per_sample * local
        return np.asarray(batch / (step + b.comm * np.log2(gpus)), np.float64)


def _tight_servers(seed: int, spread_faster: bool = False) -> BatchSizeInput:
    """Servers of 3 GPUs (and one odd one), jobs of at most 2-3 GPUs, a strong cross-node cost.

    Many of these make the placement-relaxed knapsack loose: three jobs
    that each want 2 packed GPUs do not fit two 3-GPU servers.
    """
    rng = np.random.default_rng(seed)
    nodes = [(3, 3), (3, 3, 3), (3, 1), (3, 3, 1)][seed % 4]
    jobs, states = [], {}
    for i in range(int(rng.integers(3, 5))):
        model = AnalyticThroughput(
            float(rng.uniform(0.05, 0.1)),
            float(rng.uniform(0.0005, 0.002)),
            float(rng.uniform(0.0, 0.01)),
            0.5 if rng.random() < 0.8 else 0.02,
        )
        jobs.append(
            Job(f"j{i}", 1, int(rng.choice([2, 2, 2, 3])), 3600.0, batch=BatchInfo(5000, 256, 32))
        )
        states[f"j{i}"] = JobState(
            float(rng.uniform(1, 20)), _SpreadFaster(model) if spread_faster else model
        )
    return BatchSizeInput(cluster_of(nodes), jobs, states)


def _small_cases() -> list[BatchSizeInput]:
    """Seeded inputs of every kind the brute force can check (<= 2e5 genomes)."""
    out = []
    for seed in range(40):
        nodes = [(2, 2), (3, 2), (2, 2, 2), (4,), (1, 3), (3, 3)][seed % 6]
        penalties = {"idle_penalty": 0.0, "wait_penalty": 3.0} if seed % 5 == 4 else {}
        out.append(
            seeded_batch_size_input(
                seed, nodes, 2 + seed % 3, cross_node=seed % 7 != 0, **penalties
            )
        )
        out.append(_tight_servers(seed))
    return [inp for inp in out if (inp.n_jobs + 1) ** inp.n_gpus <= 200_000]


CASES = _small_cases()


@pytest.fixture
def no_dp(monkeypatch: pytest.MonkeyPatch) -> None:
    """``auto`` without its DPs (the greedy certificate and CP-SAT branch alone)."""
    monkeypatch.setattr(auto_module, "knapsack_relaxation", lambda inp, deadline: None)
    monkeypatch.setattr(auto_module, "SERVER_DP_MAX_WORK", -1)


def test_the_relaxation_bound_is_proven_and_at_least_the_lp_bound() -> None:
    loose = 0
    for inp in CASES:
        optimum = brute_force(inp).objective
        assert optimum is not None
        relaxed = knapsack_relaxation(inp)
        assert relaxed is not None
        assert relaxed.bound <= optimum + REL * abs(optimum)
        assert relaxed.bound >= lower_bound(inp) - REL * abs(optimum)
        loose += relaxed.bound < optimum - REL * abs(optimum)
        genes = place(inp, relaxed.gpus, relaxed.packed)
        if genes is not None:
            assert np.array_equal(
                np.bincount(genes[genes >= 0], minlength=inp.n_jobs), relaxed.gpus
            )
    # The cases must include loose relaxations, or the next tests prove nothing.
    assert loose >= 5


def test_the_server_dp_finds_the_brute_force_optimum() -> None:
    for inp in CASES:
        optimum = brute_force(inp).objective
        assert optimum is not None
        found = server_dp(inp)
        assert found is not None
        bound, genes = found
        assert bound == pytest.approx(optimum, rel=REL)
        assert _f(inp, genes) == pytest.approx(optimum, rel=REL)
        assert np.all(np.bincount(genes[genes >= 0], minlength=inp.n_jobs) <= inp.max_gpus)


@settings(max_examples=40, deadline=None)
@given(batch_size_cases(max_jobs=4))
def test_both_dps_against_brute_force_on_hypothesis_inputs(inp: BatchSizeInput) -> None:
    assume((inp.n_jobs + 1) ** inp.n_gpus <= 100_000)
    optimum = brute_force(inp).objective
    assert optimum is not None
    relaxed = knapsack_relaxation(inp)
    assert relaxed is not None
    assert relaxed.bound <= optimum + REL * max(abs(optimum), 1.0)
    found = server_dp(inp)
    assert found is not None
    assert found[0] == pytest.approx(optimum, rel=REL, abs=REL)
    assert _f(inp, found[1]) == pytest.approx(optimum, rel=REL, abs=REL)


def _three_pairs() -> BatchSizeInput:
    # Two servers of 3 GPUs, three identical jobs of at most 2 GPUs; 2 GPUs
    # run 1.9x one GPU's rate on one server and only 1x across servers.
    model = _Table({1: (1.0, 1.0), 2: (1.9, 1.0)})
    jobs = [Job(f"j{i}", 1, 2, 3600.0, batch=BatchInfo(1000, 64, 32)) for i in range(3)]
    states = {f"j{i}": JobState(5.0, model) for i in range(3)}
    return BatchSizeInput(cluster_of((3, 3)), jobs, states)


def test_hand_computed_case_where_the_relaxation_is_loose() -> None:
    inp = _three_pairs()
    y = float(inp.work[0])  # the same remaining work Y for every job
    # u(c, s) = c Y / rate: u(1) = Y, u(2, packed) = 2Y/1.9, u(2, spread) = 2Y.
    # Idle (2U = 4Y) and waiting (4U) cost more than any of these, so every
    # job runs and every GPU is used: 6 GPUs for three jobs of <= 2 GPUs.
    # Relaxation: all three packed on 2 GPUs, 3 * 2Y/1.9 (three 2s do not
    # fit two 3-GPU servers). Optimum: two packed pairs, the third pair
    # spread over the servers' leftover GPU each: 2 * 2Y/1.9 + 2Y.
    relaxed_by_hand = 3 * 2 * y / 1.9
    optimum_by_hand = 2 * 2 * y / 1.9 + 2 * y
    assert brute_force(inp).objective == pytest.approx(optimum_by_hand, rel=REL)
    relaxed = knapsack_relaxation(inp)
    assert relaxed is not None
    assert relaxed.bound == pytest.approx(relaxed_by_hand, rel=REL)
    assert relaxed.gpus.tolist() == [2, 2, 2]
    assert relaxed.packed.tolist() == [True, True, True]
    assert place(inp, relaxed.gpus, relaxed.packed) is None
    sol = auto(inp, seed=0)
    assert sol.status is Status.OPTIMAL
    assert sol.message == "auto: server DP"
    assert sol.objective == pytest.approx(optimum_by_hand, rel=REL)
    check(inp, sol)


def test_auto_never_claims_optimal_from_a_loose_relaxation(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Without the server DP, a loose relaxation must hand over to the greedy
    # certificate or CP-SAT, which still prove the brute-force optimum.
    monkeypatch.setattr(auto_module, "SERVER_DP_MAX_WORK", -1)
    seen = 0
    for inp in CASES:
        relaxed = knapsack_relaxation(inp)
        optimum = brute_force(inp).objective
        assert relaxed is not None
        assert optimum is not None
        if relaxed.bound >= optimum - REL * abs(optimum):
            continue
        seen += 1
        sol = auto(inp, seed=0, time_limit=30)
        assert sol.message in ("auto: exact", "auto: greedy meets the bound")
        assert sol.status is Status.OPTIMAL
        assert sol.objective == pytest.approx(optimum, rel=REL)
        check(inp, sol)
    assert seen >= 5


@pytest.mark.parametrize("seed", range(12))
def test_spread_cheaper_than_packed_is_never_claimed_wrongly(seed: int) -> None:
    # A custom model where spanning servers is faster: the relaxations stay
    # bounds, but a "spread" job placed on one server pays the packed cost;
    # auto and exact (CP-SAT must then really span two servers) are optimal
    # only at the brute-force optimum.
    inp = _tight_servers(seed, spread_faster=True)
    optimum = brute_force(inp).objective
    assert optimum is not None
    for sol in (auto(inp, seed=0, time_limit=30), exact(inp, seed=0, time_limit=30)):
        assert sol.objective is not None
        assert sol.objective >= optimum * (1 - REL)
        if sol.status is Status.OPTIMAL:
            assert sol.objective == pytest.approx(optimum, rel=REL)
        check(inp, sol)


@pytest.mark.parametrize("size", ["g8", "g16", "g16-n24"])
def test_auto_proves_generated_instances_by_the_relaxation(size: str) -> None:
    for seed in range(3):
        inp = read(generate(size, seed))
        sol = auto(inp, seed=seed)
        proven = exact(inp, seed=seed)  # CP-SAT: an independent model
        assert proven.status is Status.OPTIMAL
        assert sol.status is Status.OPTIMAL
        assert sol.message == "auto: knapsack relaxation placed"
        assert sol.bound == sol.objective
        assert sol.objective == pytest.approx(proven.objective, rel=1e-8)
        check(inp, sol)


def test_auto_is_deterministic_byte_for_byte() -> None:
    for inp in [read(generate("g16", 1)), _three_pairs(), CASES[3]]:
        runs = [auto(inp, seed=0) for _ in range(3)]
        texts = set()
        for sol in runs:
            assert sol.decision is not None
            texts.add(json.dumps(encode(sol.decision)) + repr(sol.objective))
        assert len(texts) == 1


def test_the_dps_give_up_at_the_deadline() -> None:
    inp = read(generate("g16", 0))
    assert knapsack_relaxation(inp, deadline=0.0) is None
    assert server_dp(inp, deadline=0.0) is None


def test_server_dp_work_grows_with_the_servers() -> None:
    # Multisets of 4-GPU server loads: C(n + 4, 4) = 15, 70, 4845 states.
    works = [server_dp_work(read(generate(size, 0))) for size in ("g8", "g16", "g64")]
    assert works[0] < works[1] < auto_module.SERVER_DP_MAX_WORK < works[2]


@pytest.mark.usefixtures("no_dp")
def test_without_the_dps_auto_keeps_its_old_branches() -> None:
    inp = read(generate("g16-n24", 0))
    sol = auto(inp, seed=0)
    assert sol.message == "auto: greedy meets the bound"
    assert sol.objective == pytest.approx(exact(inp, seed=0).objective, rel=1e-7)


def test_the_greedy_fill_gets_the_time_left_after_the_dps(monkeypatch: pytest.MonkeyPatch) -> None:
    # The DPs now run before the fill and may use up to half the limit; the
    # fill was still given the whole limit (g4096 at 0.5 s: 1.2-1.8 s in all,
    # fuzz 2026-11-26). A relaxation that takes 0.3 s of a 1 s limit leaves
    # the fill at most 0.7 s.
    import time

    from scheduling_opt.batch_size import greedy as real_greedy

    def slow_relaxation(inp: BatchSizeInput, deadline: float) -> None:
        time.sleep(0.3)

    given_limits: list[float] = []

    def recording_greedy(inp: BatchSizeInput, **kwargs: object) -> object:
        limit = kwargs["time_limit"]
        assert isinstance(limit, float)
        given_limits.append(limit)
        return real_greedy(inp, seed=0, time_limit=limit)

    monkeypatch.setattr(auto_module, "knapsack_relaxation", slow_relaxation)
    monkeypatch.setattr(auto_module, "SERVER_DP_MAX_WORK", -1)
    monkeypatch.setattr(auto_module, "greedy", recording_greedy)
    auto(seeded_batch_size_input(0, (2, 2), 3), seed=0, time_limit=1.0)
    assert len(given_limits) == 1
    assert 0.0 < given_limits[0] <= 0.7 + 1e-9
