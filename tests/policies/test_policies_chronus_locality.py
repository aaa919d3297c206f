"""SRTF and the Chronus profiler (Chronus §3.2, §3.3.5), server choice under a locality limit."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from scheduling_opt.errors import InvalidInstanceError
from scheduling_opt.model import Cluster, GpuType, Job, Server
from scheduling_opt.policies import (
    SrtfInput,
    SrtfSelection,
    Submission,
    estimate_runtime,
    iteration_time,
    locality_limit,
    pick_servers,
    profiling_capacity,
    srtf,
    srtf_select,
    submission_control,
)
from scheduling_opt.solution import Status

JOBS = (
    Job("long", 1, 1, 900.0),
    Job("big", 4, 4, 100.0),
    Job("short", 2, 2, 50.0),
    Job("tiny", 1, 1, 300.0),
)

# --------------------------------------------------------------------------- SRTF


def test_srtf_solution_shape_and_backfilling() -> None:
    # By remaining time: short (2 GPUs), big (4: does not fit the 2 left), tiny (1), long (1).
    sol = srtf(SrtfInput(JOBS, 4))
    assert sol.status is Status.FEASIBLE
    assert sol.decision == SrtfSelection(("short", "tiny", "long"), ("big",), 4)
    assert sol.objective == 4.0
    assert sol.bound is None
    assert sol.seconds >= 0.0
    strict = srtf(SrtfInput(JOBS, 4, backfill=False)).decision
    assert strict == SrtfSelection(("short",), ("big", "tiny", "long"), 2)


def test_srtf_arguments_are_validated() -> None:
    with pytest.raises(InvalidInstanceError, match=r"^gpus: must be an integer"):
        SrtfInput(JOBS, 4.5)  # type: ignore[arg-type]
    with pytest.raises(InvalidInstanceError, match=r"^gpus: must be >= 0"):
        srtf_select(JOBS, -1)
    with pytest.raises(InvalidInstanceError, match=r"^jobs\[1\]: duplicate id 'a'"):
        SrtfInput((Job("a", 1, 1, 1.0), Job("a", 1, 1, 2.0)), 4)
    with pytest.raises(InvalidInstanceError, match=r"^jobs\[0\]: must be a Job"):
        SrtfInput(("a",), 4)  # type: ignore[arg-type]
    assert srtf_select(JOBS, np.int64(3)).selected == ("short", "tiny")


@settings(max_examples=60, deadline=None)
@given(
    st.lists(st.tuples(st.integers(1, 4), st.integers(1, 50)), min_size=1, max_size=6),
    st.integers(0, 10),
)
def test_srtf_backfilling_is_the_greedy_in_remaining_time_order(
    specs: list[tuple[int, int]], gpus: int
) -> None:
    # Independent reading of §3.3.5: walk jobs by (remaining, GPUs, id), take each that fits.
    jobs = [Job(f"j{i}", g, g, float(t)) for i, (g, t) in enumerate(specs)]
    picked = srtf_select(jobs, gpus)
    left, expect = gpus, []
    for remaining, g, name in sorted((j.duration, j.max_gpus, j.id) for j in jobs):
        del remaining
        if g <= left:
            expect.append(name)
            left -= g
    assert list(picked.selected) == expect
    assert picked.used_gpus == gpus - left
    assert sorted([*picked.selected, *picked.waiting]) == sorted(j.id for j in jobs)


# --------------------------------------------------------------------------- profiler


def test_profiler_estimates_by_hand() -> None:
    # t_n = t_1 + log2(n)(t_2 - t_1) with t_1 = 0.2, t_2 = 0.25: t_8 = 0.2 + 3 * 0.05 = 0.35.
    assert iteration_time(0.2, 0.25, 8) == pytest.approx(0.35)
    assert estimate_runtime(0.2, 0.25, np.int64(8), 1000) == pytest.approx(350.0)
    # 12 submissions of 2 GPUs in the last hour: lambda = 24/3600, C >= 24 * 300 / 3600 = 2.
    subs = [Submission(f"j{i}", "u", 300.0 * i, 2) for i in range(12)]
    assert profiling_capacity(subs, now=3300.0) == 2
    # Old ones fall out of the window: (3600, 7200] holds none.
    assert profiling_capacity(subs, now=7200.0) == 0


def test_submission_control_by_hand() -> None:
    # limit 24 per 300 s: u's 16 + 16 cannot share an interval; v is another user;
    # d (8) joins b's interval (16 + 8 = 24); e (40 > limit) gets an interval alone.
    release = submission_control(
        [
            Submission("a", "u", 0, 16),
            Submission("b", "u", 10, 16),
            Submission("c", "v", 20, 16),
            Submission("d", "u", 30, 8),
            Submission("e", "u", 40, 40),
        ],
        limit=24,
        interval=300,
    )
    assert release == {"a": 0.0, "b": 300.0, "c": 20.0, "d": 300.0, "e": 600.0}


def test_profiler_arguments_are_validated() -> None:
    with pytest.raises(InvalidInstanceError, match=r"^nodes: must be an integer"):
        iteration_time(0.2, 0.25, 1.5)  # type: ignore[arg-type]
    with pytest.raises(InvalidInstanceError, match=r"^nodes: must be >= 1"):
        iteration_time(0.2, 0.25, 0)
    with pytest.raises(InvalidInstanceError, match=r"^t1"):
        iteration_time(0.0, 0.25, 2)
    with pytest.raises(InvalidInstanceError, match=r"^iterations: must be an integer"):
        estimate_runtime(0.2, 0.25, 2, 10.5)  # type: ignore[arg-type]
    with pytest.raises(InvalidInstanceError, match=r"^gpus: must be >= 1"):
        Submission("a", "u", 0.0, 0)
    with pytest.raises(InvalidInstanceError, match=r"^user: must be a non-empty string"):
        Submission("a", "", 0.0, 1)
    with pytest.raises(InvalidInstanceError, match=r"^submissions\[1\]: duplicate id"):
        submission_control([Submission("a", "u", 0.0, 1), Submission("a", "v", 1.0, 1)])
    with pytest.raises(InvalidInstanceError, match=r"^limit: must be an integer"):
        submission_control([], limit=2.5)  # type: ignore[arg-type]
    with pytest.raises(InvalidInstanceError, match=r"^window"):
        profiling_capacity([], 0.0, window=0.0)


# --------------------------------------------------------------------------- locality


def cluster(*sizes: int) -> Cluster:
    return Cluster(
        (GpuType("V100"),), tuple(Server(f"s{i}", "V100", n) for i, n in enumerate(sizes))
    )


def test_locality_limit_uses_the_largest_fitting_server() -> None:
    c = Cluster(
        (GpuType("V100"), GpuType("T4")),
        (Server("v", "V100", 4), Server("t", "T4", 8)),
    )
    assert locality_limit(c, Job("any", 1, 12, 1.0)) == 2  # ceil(12 / 8)
    assert locality_limit(c, Job("v100", 1, 12, 1.0, gpu_type="V100")) == 3  # ceil(12 / 4)
    assert locality_limit(c, Job("a100", 1, 2, 1.0, gpu_type="A100")) == 0  # nothing fits
    assert locality_limit(c, Job("any", 1, 12, 1.0), np.int64(9)) == 2
    with pytest.raises(InvalidInstanceError, match=r"^gpus: must be an integer"):
        locality_limit(c, Job("any", 1, 12, 1.0), 2.5)  # type: ignore[arg-type]


def test_pick_servers_best_fit_completion_and_validation() -> None:
    rank = {"a": 0, "b": 1, "c": 2}
    # Largest first (a: 8), then the smallest that completes the 2 left: c.
    assert pick_servers({"a": 8, "b": 4, "c": 2}, 10, 2, rank) == ["a", "c"]
    # Only one server allowed: the smallest that covers 3 is b.
    assert pick_servers({"a": 8, "b": 4, "c": 2}, 3, 1, rank) == ["b"]
    # Ties in size go to the preferred server, then rank.
    assert pick_servers({"a": 4, "b": 4}, 8, 1, rank, {"b": 1}) == ["b"]
    with pytest.raises(InvalidInstanceError, match=r"^need: must be >= 0"):
        pick_servers({"a": 1}, -1, 1, rank)
    with pytest.raises(InvalidInstanceError, match=r"^rank: no rank"):
        pick_servers({"z": 1}, 1, 1, rank)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(0, 8), min_size=1, max_size=5), st.integers(0, 20), st.integers(0, 3))
def test_pick_servers_covers_need_when_some_choice_within_the_limit_does(
    sizes: list[int], need: int, limit: int
) -> None:
    usable = {f"s{i}": n for i, n in enumerate(sizes)}
    rank = {s: i for i, s in enumerate(usable)}
    chosen = pick_servers(usable, need, limit, rank)
    assert len(chosen) <= limit
    assert len(set(chosen)) == len(chosen)
    possible = any(
        sum(usable[s] for s in combo) >= need
        for k in range(limit + 1)
        for combo in itertools.combinations(usable, min(k, len(usable)))
    )
    assert (sum(usable[s] for s in chosen) >= need) == possible
