"""The one-shape API of ``batch-size``: inputs from model objects, Solution fields, bounds."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import assume, given, settings

from scheduling_opt.batch_size import (
    BatchSizeInput,
    JobState,
    OnesConfig,
    Schedule,
    brute_force,
    check,
    exact,
    exact_cpsat,
    greedy,
    lower_bound,
    ones,
)
from scheduling_opt.batch_size.evaluate import local_batches
from scheduling_opt.batch_size.io import encode, generate, read
from scheduling_opt.batch_size.model import MAX_GPUS, MAX_TABLE_CELLS
from scheduling_opt.batch_size.throughput import split_batch
from scheduling_opt.errors import InstanceTooLargeError, InvalidInstanceError, VerificationError
from scheduling_opt.model import BatchInfo, Cluster, GpuType, Job, Server
from scheduling_opt.solution import Status
from scheduling_opt.testing import batch_size_cases, cluster_of, seeded_batch_size_input

METHODS = (ones, greedy, exact)


class ZeroThroughput:
    """A broken user model: no sample ever gets processed."""

    def throughput(
        self, batch: np.ndarray, local: np.ndarray, gpus: np.ndarray, spread: np.ndarray
    ) -> np.ndarray:
        return np.zeros_like(batch)


def two_jobs() -> tuple[Cluster, list[Job], dict[str, JobState]]:
    jobs = [
        Job("a", 1, 4, 3600.0, batch=BatchInfo(1000, 128, 64)),
        Job("b", 1, 2, 3600.0, batch=BatchInfo(5000, 64, 32)),
    ]
    return cluster_of((4,)), jobs, {"a": JobState(5.0), "b": JobState(2.0)}


def test_input_from_model_objects_only_and_its_hand_computed_tables() -> None:
    cluster, jobs, states = two_jobs()
    inp = BatchSizeInput(cluster, jobs, states)
    assert inp.gpu_ids == ("n0/0", "n0/1", "n0/2", "n0/3")
    assert inp.max_gpus.tolist() == [4, 2]
    # Y_j = epoch size x beta; one GPU of a: B = 64, time = 0.05 + 0.002 * 64 = 0.178 s.
    assert inp.work.tolist() == [5000.0, 10000.0]
    assert inp.batch[0, 1, 0] == 64
    assert inp.cost[0, 1, 0] == pytest.approx(0.178 / 64)
    assert inp.separable  # one server
    assert not inp.may_idle  # default penalties: every usable GPU is filled


@pytest.mark.parametrize("method", METHODS, ids=lambda m: m.__name__)
def test_every_method_returns_a_full_solution(method: object) -> None:
    inp = read(generate("g16", 2))
    sol = method(inp, seed=1, time_limit=30)  # type: ignore[operator]
    assert sol.status in (Status.OPTIMAL, Status.FEASIBLE)
    assert isinstance(sol.decision, Schedule)
    assert sol.objective is not None
    assert math.isfinite(sol.objective)
    assert sol.bound is not None
    assert sol.bound <= sol.objective * (1 + 1e-12)
    assert sol.gap is not None
    assert sol.gap >= 0
    assert sol.seconds > 0
    check(inp, sol)
    jobs = encode(sol.decision)["jobs"]
    assert [jobs[j]["gpus"] for j in inp.job_ids] == list(sol.decision.gpus)


def test_exact_is_optimal_with_zero_gap_and_bounds_the_heuristics() -> None:
    inp = read(generate("g8", 3))
    best = exact(inp)
    assert best.status is Status.OPTIMAL
    assert best.gap == 0.0
    assert best.bound == best.objective
    for method in (ones, greedy):
        sol = method(inp)
        assert sol.bound is not None
        assert sol.objective is not None
        assert best.objective is not None
        # A heuristic's bound is a lower bound on the optimum, not only on its own answer.
        assert sol.bound <= best.objective * (1 + 1e-9)
        assert sol.objective >= best.objective * (1 - 1e-6)


@settings(max_examples=20, deadline=None)
@given(batch_size_cases(max_jobs=3))
def test_lower_bound_never_exceeds_the_brute_force_optimum(inp: BatchSizeInput) -> None:
    assume((inp.n_jobs + 1) ** inp.n_gpus <= 50_000)
    optimum = brute_force(inp).objective
    assert optimum is not None
    assert lower_bound(inp) <= optimum + 1e-9 * max(abs(optimum), 1.0)


def test_exact_under_a_tiny_time_limit_reports_its_bound_honestly() -> None:
    inp = read(generate("g64-n96", 1))
    rushed = exact_cpsat(inp, time_limit=0.001)
    proved = exact(inp, time_limit=60)
    assert proved.status is Status.OPTIMAL
    assert proved.objective is not None
    assert rushed.status in (Status.TIME_LIMIT, Status.OPTIMAL)
    assert rushed.bound is not None
    assert rushed.objective is not None
    assert rushed.bound <= proved.objective * (1 + 1e-9)
    assert rushed.objective >= proved.objective * (1 - 1e-6)
    if rushed.status is Status.TIME_LIMIT:
        assert rushed.gap is not None
    check(inp, rushed)


def test_bad_constructor_arguments_name_the_field() -> None:
    cluster, jobs, states = two_jobs()
    cases = {
        "states.zz": lambda: BatchSizeInput(cluster, jobs, {**states, "zz": JobState(2.0)}),
        "states.b": lambda: BatchSizeInput(cluster, jobs, {"a": states["a"]}),
        "jobs[1].batch": lambda: BatchSizeInput(cluster, [jobs[0], Job("b", 1, 2, 3600.0)], states),
        "jobs[0].min_workers": lambda: BatchSizeInput(
            cluster, [Job("a", 2, 4, 3600.0, batch=BatchInfo(1000, 128, 64)), jobs[1]], states
        ),
        "cluster.gpu_types": lambda: BatchSizeInput(
            Cluster(
                (GpuType("V100"), GpuType("T4", 0.25)),
                (Server("s0", "V100", 2), Server("s1", "T4", 2)),
            ),
            jobs,
            states,
        ),
        "beta": lambda: JobState(float("nan")),
        "processed_time": lambda: JobState(2.0, processed_time=-1.0),
        "population": lambda: OnesConfig(population=1),
        "generations": lambda: OnesConfig(generations=2_000_000),
        "mutation_rate": lambda: OnesConfig(mutation_rate=1.5),
        "wait_penalty": lambda: BatchSizeInput(cluster, jobs, states, wait_penalty=-1.0),
        "states.b.throughput": lambda: BatchSizeInput(
            cluster, jobs, {"a": states["a"], "b": JobState(2.0, ZeroThroughput())}
        ),
    }
    for path, build in cases.items():
        with pytest.raises(InvalidInstanceError) as err:
            build()
        assert err.value.path.startswith(path), (path, str(err.value))


def test_sizes_are_refused_before_anything_is_allocated() -> None:
    _, jobs, states = two_jobs()
    huge = Cluster((GpuType("V100"),), (Server("s0", "V100", 10**9),))
    with pytest.raises(InstanceTooLargeError, match=f"at most {MAX_GPUS}") as err:
        BatchSizeInput(huge, jobs, states)
    assert err.value.path == "cluster.servers"
    wide = [Job("w", 1, 4096, 3600.0, batch=BatchInfo(10**6, 10**9, 10**9))]
    with pytest.raises(InstanceTooLargeError, match=str(MAX_TABLE_CELLS)) as err:
        BatchSizeInput(cluster_of((2048, 2048)), wide, {"w": JobState(2.0)})
    assert err.value.path == "jobs"


def test_schedule_counts_and_validation() -> None:
    s = Schedule(("a", "b"), ("g0", "g1", "g2"), (1, -1, 1), (3, 0, 2))
    assert s.gpus == (0, 2)
    assert s.batch == (0, 5)
    assert s.job_on("g0") == "b"
    assert s.job_on("g1") is None
    with pytest.raises(InvalidInstanceError, match="assignment"):
        Schedule(("a",), ("g0",), (1,), (3,))
    with pytest.raises(InvalidInstanceError, match="local_batch"):
        Schedule(("a",), ("g0",), (-1,), (3,))


@settings(max_examples=30, deadline=None)
@given(batch_size_cases())
def test_vectorized_local_batches_match_the_even_split(inp: BatchSizeInput) -> None:
    rng = np.random.default_rng(inp.n_gpus * 31 + inp.n_jobs)
    genes = rng.integers(-1, max(inp.n_jobs, 1), (5, inp.n_gpus)) if inp.n_jobs else None
    assume(genes is not None)
    assert genes is not None
    from scheduling_opt.batch_size.operators import repair

    genes = repair(inp, genes)
    got = local_batches(inp, genes)
    for row, local in zip(genes, got, strict=True):
        for j in set(row[row >= 0].tolist()):
            mine = np.flatnonzero(row == j)
            total = int(local[mine].sum())
            assert local[mine].tolist() == split_batch(total, len(mine))
        assert np.all(local[row < 0] == 0)


def test_checker_refuses_false_claims() -> None:
    inp = seeded_batch_size_input(4, nodes=(2, 2), jobs=3)
    good = greedy(inp)
    assert good.objective is not None
    for bad, match in (
        (good.with_(objective=float("nan")), "objective"),
        (good.with_(objective=float("inf")), "objective"),
        (good.with_(status=Status.INFEASIBLE), "infeasible"),
        (good.with_(bound=good.objective * 2 + 1), "bound"),
        (good.with_(decision=None), "without a schedule"),
    ):
        with pytest.raises(VerificationError, match=match):
            check(inp, bad)
    # "optimal" for a schedule the greedy one beats: leave every GPU idle.
    empty = Schedule(inp.job_ids, inp.gpu_ids, (-1,) * inp.n_gpus, (0,) * inp.n_gpus)
    idle = inp.wait * inp.n_jobs + inp.idle * inp.n_gpus
    lazy = good.with_(status=Status.OPTIMAL, decision=empty, objective=idle, bound=idle)
    with pytest.raises(VerificationError, match="optimal claimed"):
        check(inp, lazy)
    check(inp, good.with_(decision=None, objective=None, status=Status.TIME_LIMIT, bound=None))
