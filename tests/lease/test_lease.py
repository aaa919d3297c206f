"""Lease selection (Chronus §3.3): exact methods vs brute force, heuristics, admission, SRTF."""

from __future__ import annotations

import itertools
import math
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from scheduling_opt import lease
from scheduling_opt.errors import InvalidInstanceError, VerificationError
from scheduling_opt.io.instance import Instance, from_dict, load
from scheduling_opt.lease import LeaseDecision, LeaseInput, ModelConfig, hint_terms
from scheduling_opt.lease.io import PROBLEM, encode, generate, generate_lease, read
from scheduling_opt.model import Job, RewardStep
from scheduling_opt.policies import srtf_select
from scheduling_opt.policies.profiler import (
    Submission,
    estimate_runtime,
    iteration_time,
    profiling_capacity,
    submission_control,
)
from scheduling_opt.solution import Solution, Status
from scheduling_opt.testing import tiny_lease_cases

ROOT = Path(__file__).resolve().parent.parent.parent
EXACT = ("exact", "exact-cpsat", "exact-pulp")
LIMIT = 30.0
Result = Solution[LeaseDecision]


def job(jid: str, gpus: int, terms: float, steps: list[tuple[float, float]]) -> Job:
    """A job in lease-length units (T_l = 1 s): ``terms`` seconds, steps (time, reward)."""
    return Job(jid, gpus, gpus, float(terms), deadlines=tuple(RewardStep(t, v) for t, v in steps))


def brute_force(
    jobs: list[Job], gpus: int, length: float, require_all: bool = False
) -> float | None:
    """Best reward over every job's rejection or term set (None: no complete schedule)."""
    options: list[list[tuple[float, tuple[int, ...]]]] = []
    for j in jobs:
        need = math.ceil(j.duration / length)
        horizon = max(math.floor(s.time / length) for s in j.deadlines)
        opts = [] if require_all else [(0.0, ())]
        if j.max_gpus <= gpus:
            for terms in itertools.combinations(range(horizon), need):
                met = [s for s in j.deadlines if terms[-1] < math.floor(s.time / length)]
                if met:
                    opts.append((met[0].reward, terms))
        options.append(opts)
    best: float | None = None
    horizon = max((max(math.floor(s.time / length) for s in j.deadlines) for j in jobs), default=0)

    def dfs(i: int, load: list[int], total: float) -> None:
        nonlocal best
        if i == len(jobs):
            best = total if best is None else max(best, total)
            return
        for reward, terms in options[i]:
            if all(load[k] + jobs[i].max_gpus <= gpus for k in terms):
                for k in terms:
                    load[k] += jobs[i].max_gpus
                dfs(i + 1, load, total + reward)
                for k in terms:
                    load[k] -= jobs[i].max_gpus

    dfs(0, [0] * max(horizon, 1), 0.0)
    return best


def run_all(inp: LeaseInput) -> dict[str, Result]:
    out = {}
    for m in PROBLEM.methods:
        result = m.run(inp, time_limit=LIMIT)
        lease.check(inp, result)
        out[m.name] = result
    return out


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(tiny_lease_cases())
def test_exact_methods_agree_with_brute_force(case: tuple[list[Job], int]) -> None:
    jobs, gpus = case
    inp = LeaseInput(jobs, gpus, 1.0)
    results = run_all(inp)
    expected = brute_force(jobs, gpus, 1.0)
    for name in EXACT:
        assert results[name].status is Status.OPTIMAL
        assert results[name].objective == pytest.approx(expected)
    for name in ("greedy", "edf"):
        assert results[name].status is Status.FEASIBLE
        assert results[name].objective is not None
        assert results[name].objective <= expected + 1e-9  # type: ignore[operator]
    assert expected is not None
    assert lease.upper_bound(inp) >= expected - 1e-6


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(tiny_lease_cases(max_jobs=3, max_horizon=5))
def test_require_all_matches_brute_force(case: tuple[list[Job], int]) -> None:
    jobs, gpus = case
    inp = LeaseInput(jobs, gpus, 1.0, require_all=True)
    expected = brute_force(jobs, gpus, 1.0, require_all=True)
    results = run_all(inp)
    for name in EXACT:
        if expected is None:
            assert results[name].status is Status.INFEASIBLE
            assert results[name].objective is None
        else:
            assert results[name].status is Status.OPTIMAL
            assert results[name].objective == pytest.approx(expected)
    verdict = lease.admit_jobs(jobs[:-1], jobs[-1], gpus, 1.0)
    assert verdict.admitted == (expected is not None)
    if verdict.schedule is not None:
        lease.check(LeaseInput(jobs, gpus, 1.0, require_all=True), verdict.schedule)


@pytest.mark.slow
@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.integers(0, 10_000), st.sampled_from(["j6", "c1-j8", "c1-j10"]))
def test_generated_answers_pass_the_checker(seed: int, size: str) -> None:
    inp = read(generate(size, seed))
    results = run_all(inp)
    opt = results["exact"].objective
    assert results["exact"].status is Status.OPTIMAL
    assert opt is not None
    for name in ("exact-cpsat", "exact-pulp"):
        assert results[name].objective == pytest.approx(opt)
    for name in ("greedy", "edf"):
        assert results[name].objective is not None
        assert results[name].objective <= opt + 1e-9  # type: ignore[operator]


def test_model_variants_agree() -> None:
    inp = read(generate("c2-j12", 7))
    values = {
        cfg: lease.exact(inp, config=cfg).objective
        for cfg in (
            ModelConfig(),
            ModelConfig(tight=False, symmetry=False, aggregate=False),
            ModelConfig(aggregate=False),
            ModelConfig(symmetry=False),
            ModelConfig(aggregate=True),
        )
    }
    values[ModelConfig(aggregate=True, symmetry=False)] = lease.exact_cpsat(
        inp, config=ModelConfig(aggregate=True)
    ).objective
    values[ModelConfig(tight=False)] = lease.exact_cbc(inp).objective
    assert len(set(values.values())) == 1


def test_hand_example() -> None:
    inst = load(ROOT / "instances" / "lease-example.json")
    inp = read(inst)
    assert inp.capacity == 8
    results = run_all(inp)
    # 8 GPUs, 20-minute terms. b (4 GPUs, 1 term) earns 100 only in term 0;
    # c (4 GPUs, 3 terms by term 3) and a (8 GPUs, 2 terms by term 4) cannot
    # both run: b + a = 200 beats b + c = 190, which EDF and greedy pick.
    assert results["exact"].objective == 200
    decision = results["exact"].decision
    assert decision is not None
    assert encode(decision)["levels"] == {"a": 0, "b": 0, "c": None}
    assert encode(decision)["terms"] == {"a": [1, 2], "b": [0], "c": []}
    assert encode(decision)["run_now"] == ["b"]
    assert results["edf"].objective == 190
    assert results["greedy"].objective == 190


def test_require_all_infeasible_is_reported_honestly() -> None:
    jobs = [job("a", 4, 1, [(1, 100)]), job("b", 4, 1, [(1, 100)])]
    inp = LeaseInput(jobs, 4, 1.0, require_all=True)
    results = run_all(inp)
    for name in EXACT:
        assert results[name].status is Status.INFEASIBLE
        assert results[name].decision is None  # no decision (the old one rejected every job)
    assert results["greedy"].status is Status.TIME_LIMIT  # gave up, no proof
    assert results["greedy"].objective is None
    loose = LeaseInput(jobs, 4, 1.0)
    assert lease.exact(loose).objective == 100
    # a job that alone cannot meet its deadline (2 terms, due by 1)
    hopeless = LeaseInput([job("c", 1, 2, [(1, 100)])], 4, 1.0, require_all=True)
    for name in ("exact", "greedy", "edf"):
        assert PROBLEM.method(name).run(hopeless, time_limit=LIMIT).status is Status.INFEASIBLE


def test_admission_control() -> None:
    guaranteed = [job("a", 4, 2, [(2, 100)])]
    verdict = lease.admit_jobs(guaranteed, job("b", 4, 1, [(2, 100)]), 4, 1.0)
    assert not verdict.admitted
    assert verdict.status is Status.INFEASIBLE
    verdict = lease.admit_jobs(guaranteed, job("b", 4, 1, [(3, 100)]), 4, 1.0)
    assert verdict.admitted
    assert verdict.schedule is not None
    assert verdict.schedule.decision is not None
    assert encode(verdict.schedule.decision)["terms"] == {"a": [0, 1], "b": [2]}
    admitted, rejected = lease.admission_control(
        guaranteed,
        [job("b", 4, 1, [(3, 100)]), job("c", 2, 1, [(3, 100)]), job("d", 1, 1, [(9, 50)])],
        4,
        1.0,
    )
    assert admitted == ("b", "d")
    assert rejected == ("c",)
    inst = load(ROOT / "instances" / "lease-example.json")
    assert not lease.admit(
        read(inst), Job("x", 8, 8, 3600.0, deadlines=(RewardStep(3600, 1),))
    ).admitted
    with pytest.raises(InvalidInstanceError, match="already guaranteed"):
        lease.admit_jobs(guaranteed, guaranteed[0], 4, 1.0)


def test_round_up_charges_consolidation_friendly_sizes() -> None:
    assert [lease.round_up_gpus(g) for g in (1, 2, 3, 4, 5, 8, 12, 20)] == [
        1,
        2,
        4,
        4,
        8,
        8,
        16,
        24,
    ]
    jobs = [job("a", 3, 1, [(1, 100)]), job("b", 3, 1, [(1, 90)])]
    assert lease.exact(LeaseInput(jobs, 6, 1.0)).objective == 190
    rounded = LeaseInput(jobs, 6, 1.0, round_up=True)
    result = lease.exact(rounded)
    assert result.objective == 100
    lease.check(rounded, result)


def test_lease_units_and_term_numbering() -> None:
    # 20-minute leases: 50 minutes need 3 terms; a 60-minute deadline is met by terms 0-2.
    a = Job("a", 1, 1, 50 * 60.0, deadlines=(RewardStep(60 * 60.0, 100), RewardStep(79 * 60, 80)))
    inp = LeaseInput([a], 1, 1200.0)
    assert inp.lease_jobs[0].terms == 3
    assert [(lv.index, lv.due) for lv in inp.lease_jobs[0].levels] == [(0, 3)]  # 79 min: due 3
    result = lease.exact(LeaseInput([a], 1, 1200.0))
    assert result.decision is not None
    assert encode(result.decision)["terms"] == {"a": [0, 1, 2]}
    assert result.decision.run_now == ("a",)


def test_warm_start_and_time_limit() -> None:
    inp = read(generate("c4-j24", 3))
    first = lease.exact(inp)
    assert first.decision is not None
    hint = hint_terms(first.decision, elapsed=0)
    for method in (lease.exact, lease.exact_cpsat, lease.exact_pulp, lease.greedy):
        again = method(inp, hint=hint, time_limit=LIMIT)
        lease.check(inp, again)
        if method is not lease.greedy:
            assert again.objective == pytest.approx(first.objective)
        else:
            assert again.objective == pytest.approx(first.objective)  # repaired hint is optimal
    shifted = hint_terms(encode(first.decision)["terms"], elapsed=1)
    assert all(k >= 0 for terms in shifted.values() for k in terms)
    hard = read(generate_lease(120, 200, 1, pressure=4.0))
    warm = lease.greedy(hard).decision
    assert warm is not None
    quick = lease.exact(hard, time_limit=0.05, hint=hint_terms(warm, 0))
    assert quick.status in (Status.TIME_LIMIT, Status.OPTIMAL)
    assert quick.objective is not None
    lease.check(hard, quick)


def test_checker_rejects_bad_answers() -> None:
    jobs = [job("a", 2, 2, [(2, 100)]), job("b", 2, 1, [(2, 50)])]
    inp = LeaseInput(jobs, 3, 1.0)
    good = lease.exact(inp)
    lease.check(inp, good)

    def answer(status: Status, objective: float | None, levels: Any, terms: Any) -> Result:
        decision = None
        if objective is not None:
            decision = LeaseDecision(dict(levels), dict(terms), objective)
        return Solution(status, objective, decision)

    bad = [
        answer(Status.FEASIBLE, 150.0, (("a", 0), ("b", 0)), (("a", (0, 1)), ("b", (0,)))),
        answer(Status.FEASIBLE, 100.0, (("a", 0), ("b", None)), (("a", (0,)), ("b", ()))),
        answer(Status.FEASIBLE, 100.0, (("a", 0), ("b", None)), (("a", (1, 2)), ("b", ()))),
        answer(Status.FEASIBLE, 999.0, (("a", 0), ("b", None)), (("a", (0, 1)), ("b", ()))),
        answer(Status.INFEASIBLE, None, (("a", None), ("b", None)), (("a", ()), ("b", ()))),
    ]
    for result in bad:
        with pytest.raises(VerificationError):
            lease.check(inp, result)


def _doc(**params: Any) -> dict[str, Any]:
    return {
        "format": "scheduling-opt/v1",
        "problem": "lease",
        "cluster": {
            "gpu_types": [{"name": "V100"}],
            "servers": [{"id": "s1", "gpu_type": "V100", "gpus": 8}],
        },
        "jobs": [
            {
                "id": "a",
                "workers": 2,
                "duration": 600,
                "deadlines": [{"time": 1200, "reward": 100}],
            },
            {"id": "be", "workers": 3, "duration": 600},
        ],
        "placement": [{"job": "be", "server": "s1", "workers": 3}],
        "params": {"lease_length": 1200, "jobs": ["a"]} | params,
    }


def test_parse_capacity_and_errors() -> None:
    assert read(from_dict(_doc())).capacity == 5  # 8 minus the placed best-effort job
    assert read(from_dict(_doc(gpus=3))).capacity == 3
    cases = {
        "params.lease_length": _doc(lease_length=0),
        "params.colour": _doc(colour=1),
        "params.jobs[0]": _doc(jobs=["zz"]),
        "jobs[1].deadlines": _doc(jobs=["a", "be"]),
        "params.max_terms": _doc(max_terms=0),
        "params.require_all": _doc(require_all="yes"),
    }
    for path, doc in cases.items():
        with pytest.raises(InvalidInstanceError) as err:
            read(from_dict(doc))
        assert err.value.path == path, (path, str(err.value))
    doc = _doc()
    doc["jobs"][0]["deadlines"] = [{"time": 1200, "reward": 10}, {"time": 2400, "reward": 50}]
    with pytest.raises(InvalidInstanceError, match=r"jobs\[0\].deadlines\[1\].reward"):
        read(from_dict(doc))


def test_a_far_deadline_is_refused_unless_max_terms_caps_it() -> None:
    # 1e12 s is 8e8 terms of 20 minutes: refused before any per-term array exists.
    doc = _doc()
    doc["jobs"][0]["deadlines"] = [{"time": 1e12, "reward": 10}]
    with pytest.raises(InvalidInstanceError) as err:
        read(from_dict(doc))
    assert err.value.path == "jobs[0].deadlines[0].time"
    assert "max_terms" in str(err.value)
    doc["params"]["max_terms"] = 72
    capped = read(from_dict(doc))
    assert capped.horizon == 72
    result = lease.greedy(capped)
    assert result.objective == 10


def test_generator_is_seeded_and_curated_files_load() -> None:
    assert generate("c4-j24", 5) == generate("c4-j24", 5)
    with pytest.raises(InvalidInstanceError):
        generate("huge", 0)
    files = sorted((ROOT / "instances").glob("lease-*.json"))
    assert len(files) >= 3
    for path in files:
        inst = load(path)
        assert isinstance(inst, Instance)
        lease.check(read(inst), lease.greedy(read(inst)))


# --------------------------------------------------------------------------- SRTF, profiler


def test_srtf_picks_shortest_remaining_and_backfills() -> None:
    jobs = [
        Job("long", 1, 1, 900.0),
        Job("big", 4, 4, 100.0),
        Job("short", 2, 2, 50.0),
        Job("tiny", 1, 1, 300.0),
    ]
    picked = srtf_select(jobs, 4)
    assert picked.selected == ("short", "tiny", "long")
    assert picked.waiting == ("big",)
    assert picked.used_gpus == 4
    strict = srtf_select(jobs, 4, backfill=False)
    assert strict.selected == ("short",)
    assert strict.waiting == ("big", "tiny", "long")


def test_profiler_estimates() -> None:
    # t_n = t_1 + log2(n)(t_2 - t_1): t_c = 0.2 s, t_o = 0.05 s
    assert iteration_time(0.2, 0.25, 1) == pytest.approx(0.2)
    assert iteration_time(0.2, 0.25, 4) == pytest.approx(0.3)
    assert estimate_runtime(0.2, 0.25, 8, 1000) == pytest.approx(350.0)
    subs = [Submission(f"j{i}", "u", 60.0 * i, 4) for i in range(60)]  # 240 GPUs per hour
    assert profiling_capacity(subs, now=3540.0) == 20  # 240/3600 * 300
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
    assert release == {"a": 0, "b": 300, "c": 20, "d": 300, "e": 600}
    with pytest.raises(InvalidInstanceError):
        iteration_time(0.0, 1.0, 2)


def test_decision_keys() -> None:
    result = lease.greedy(read(generate("j4", 0)))
    assert result.decision is not None
    assert set(encode(result.decision)) == {"levels", "terms", "run_now", "objective"}
    assert np.all([isinstance(v, list) for v in encode(result.decision)["terms"].values()])
