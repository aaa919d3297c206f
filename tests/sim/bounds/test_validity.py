"""bound <= exact optimum <= every policy's simulated value, on tiny traces (issue 42).

The optimum is the best slot schedule (tests/sim/bounds/exact.py: a MILP
and a brute force that agree, and a replay through the engine that gives
the same numbers), so a bound above it is invalid: the simulator produces
that schedule. The policies are run by the registry, each bounded with
the speed envelope of its own class.
"""

from __future__ import annotations

from collections.abc import Sequence

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from scheduling_opt.sim import ClusterSpec, SimJob, Workload, make_policy, simulate, summarize
from scheduling_opt.sim.bounds import Bounds, envelope_of, offline_bounds
from scheduling_opt.sim.registry import policy_names
from tests.sim.bounds import exact

#: Cluster shapes of the tiny traces: (servers, GPUs per server).
SHAPES = ((1, 1), (1, 2), (1, 4), (2, 2), (2, 4))
#: Policies whose schedules change only at integer times on integer traces
#: (arrivals and completions): the best slot schedule is at most their value.
INTEGER_EVENTS = ("fifo", "sjf", "edf", "edf-np", "srtf", "yarn-cs")
#: Policies that run on any tiny trace (ONES needs its own workload; Aryl its
#: inference servers: tests/sim/bounds/test_envelope.py runs those).
RUNNABLE = tuple(
    p
    for p in policy_names()
    if p not in ("ones", "ones-exact", "fixed-batch", "3sigma")
    and not p.startswith("aryl")
    and p not in ("afs", "fifo-no-loan")
)
TOL = 1e-9


@st.composite
def tiny(draw: st.DrawFn, max_jobs: int = 4, whole: bool = False) -> tuple[Workload, ClusterSpec]:
    """1 to ``max_jobs`` rigid jobs with integer times on one of :data:`SHAPES`.

    ``whole``: every job fits one server (AntMan's adapter cuts a job into
    workers of up to 8 GPUs: on smaller servers it leaves a larger job
    unfinished, a limit of the adapter, not of the bounds).
    """
    servers, per = draw(st.sampled_from(SHAPES))
    total = servers * per
    n = draw(st.integers(1, max_jobs))
    jobs = []
    for i in range(n):
        submit = float(draw(st.integers(0, 3)))
        work = float(draw(st.integers(1, 3)))
        gpus = draw(st.integers(1, per if whole else total))
        kind = draw(st.sampled_from(("best", "strict", "soft")))
        d = submit + work + draw(st.integers(-1, 3))  # -1: out of reach
        steps: tuple[tuple[float, float], ...] = ()
        if kind == "strict":
            steps = ((d, 100.0),)
        elif kind == "soft":
            steps = ((d, 100.0), (d + 1, 80.0), (d + 2, 50.0), (d + 4, 20.0))
        tenant = draw(st.sampled_from(("a", "b")))
        jobs.append(
            SimJob(str(i), submit, gpus, work, tenant=tenant, deadlines=steps, job_type=kind)
        )
    return Workload.of(jobs, "tiny"), ClusterSpec.uniform(servers, per)


def bounds_for(w: Workload, c: ClusterSpec, policies: Sequence[str] = ("srtf",)) -> Bounds:
    return offline_bounds(w, c, envelope_of([(p, {}) for p in policies]))


def optimum(w: Workload, c: ClusterSpec, objective: str) -> tuple[float, list[set[int]]]:
    return exact.milp(list(w.jobs), c.total_gpus, objective)


FAST = settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
MANY = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def check_exact_solvers(w: Workload, c: ClusterSpec) -> None:
    for objective in ("jct", "makespan", "wdmr"):
        value, slots = optimum(w, c, objective)
        assert value == pytest.approx(exact.brute_force(list(w.jobs), c.total_gpus, objective))
        out = simulate(w, c, exact.Replay(slots))
        m = summarize(out)
        key = {"jct": "jct_mean", "makespan": "makespan", "wdmr": "wdmr"}[objective]
        assert m[key] == pytest.approx(value), "the replay is not the slot schedule"


@FAST
@given(tiny(max_jobs=3))
def test_the_milp_the_brute_force_and_the_replay_agree(case: tuple[Workload, ClusterSpec]) -> None:
    check_exact_solvers(*case)


def check_bounds_below_optimum(w: Workload, c: ClusterSpec, b: Bounds) -> None:
    jct, _ = optimum(w, c, "jct")
    makespan, slots = optimum(w, c, "makespan")
    wdmr, _ = optimum(w, c, "wdmr")
    assert b.jct_mean_lower.value <= jct + TOL
    assert b.makespan_lower.value <= makespan + TOL
    assert b.wdmr_lower.value <= wdmr + TOL
    # The makespan-optimal slot schedule is busy exactly the work's GPU time.
    util = summarize(simulate(w, c, exact.Replay(slots)))["utilization"]
    assert util <= b.utilization_upper.value + TOL


@FAST
@given(tiny())
def test_every_bound_is_at_most_the_optimum(case: tuple[Workload, ClusterSpec]) -> None:
    w, c = case
    check_bounds_below_optimum(w, c, bounds_for(w, c))


@pytest.mark.slow
@MANY
@given(tiny(max_jobs=5))
def test_every_bound_is_at_most_the_optimum_many(case: tuple[Workload, ClusterSpec]) -> None:
    w, c = case
    check_bounds_below_optimum(w, c, bounds_for(w, c))


@FAST
@given(tiny())
def test_the_optimum_is_at_most_the_integer_event_policies(
    case: tuple[Workload, ClusterSpec],
) -> None:
    w, c = case
    best = {o: optimum(w, c, o)[0] for o in ("jct", "makespan", "wdmr")}
    for p in INTEGER_EVENTS:
        m = summarize(simulate(w, c, make_policy(p, w, c)))
        assert best["jct"] <= m["jct_mean"] + TOL, p
        assert best["makespan"] <= m["makespan"] + TOL, p
        assert best["wdmr"] <= m["wdmr"] + TOL, p


def check_policies(w: Workload, c: ClusterSpec, policies: Sequence[str]) -> None:
    for p in policies:
        b = bounds_for(w, c, (p,))
        out = simulate(w, c, make_policy(p, w, c))
        m = summarize(out)
        assert b.jct_mean_lower.value <= m["jct_mean"] + TOL, p
        assert b.makespan_lower.value <= m["makespan"] + TOL, p
        assert b.wdmr_lower.value <= m["wdmr"] + TOL, p
        if out.busy_area <= b.nominal * (1 + 1e-9):
            assert m["utilization"] <= b.utilization_upper.value + TOL, p


@FAST
@given(tiny())
def test_every_bound_is_at_most_every_baseline(case: tuple[Workload, ClusterSpec]) -> None:
    check_policies(*case, ("fifo", "sjf", "edf", "srtf", "tiresias", "yarn-cs", "themis"))


@pytest.mark.slow
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(tiny(whole=True))
def test_every_bound_is_at_most_every_policy(case: tuple[Workload, ClusterSpec]) -> None:
    check_policies(*case, RUNNABLE)


#: Hand-picked tiny traces on which the bounds are tight: one job alone (every
#: bound exact), two jobs on one GPU (SRPT's order: ends 1 and 3, mean 2; the
#: makespan 3), two strict jobs due at 2 on one GPU (one must miss: wDMR 0.5).
TIGHT = (
    ([SimJob("0", 0.0, 1, 3.0)], (1, 1)),
    ([SimJob("0", 0.0, 1, 2.0), SimJob("1", 0.0, 1, 1.0)], (1, 1)),
    (
        [
            SimJob("0", 0.0, 1, 2.0, deadlines=((2.0, 100.0),), job_type="strict"),
            SimJob("1", 0.0, 1, 2.0, deadlines=((2.0, 100.0),), job_type="strict"),
        ],
        (1, 1),
    ),
)


def test_the_bounds_are_valid_and_within_5_percent_on_hand_picked_traces() -> None:
    # Valid on each; and for each bound some trace where it is within 5% of the
    # optimum, so a bound tightened 5% past its value fails the first check.
    close = {"jct": False, "makespan": False, "wdmr": False}
    for jobs, (servers, per) in TIGHT:
        w, c = Workload.of(jobs, "tight"), ClusterSpec.uniform(servers, per)
        b = bounds_for(w, c)
        got = {
            "jct": b.jct_mean_lower.value,
            "makespan": b.makespan_lower.value,
            "wdmr": b.wdmr_lower.value,
        }
        for key, value in got.items():
            best = optimum(w, c, key)[0]
            assert value <= best + TOL, (key, value, best)
            close[key] |= best > 0 and 1.05 * value > best + TOL
    assert all(close.values()), close
