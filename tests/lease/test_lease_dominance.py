"""Choices of levels that hold a known unpackable one are cut without a packing (issue 16).

``exact._dominates(shape, unpackable)``: every (G, RL) class of the
unpackable choice maps one to one onto jobs of the same class with the same
or earlier deadlines. Checked by hand, against brute-force packing on tiny
shapes, and end to end (fewer packings, the same optimum).
"""

from __future__ import annotations

import importlib
import itertools

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from scheduling_opt import lease
from scheduling_opt.lease import LeaseInput, ModelConfig
from scheduling_opt.lease.formulation import ExactOutcome
from scheduling_opt.model import Job, RewardStep
from scheduling_opt.solution import Status

exact_module = importlib.import_module("scheduling_opt.lease.exact")
choice_module = importlib.import_module("scheduling_opt.lease._choice")
Shape = dict[tuple[int, int], list[int]]


def test_dominance_by_hand() -> None:
    # Three 2-GPU one-term jobs due by term 2 (unpackable on 3 GPUs).
    three: Shape = {(2, 1): [2, 2, 2]}
    assert choice_module.dominates({(2, 1): [1, 2, 2, 3]}, three)  # 1 <= 2, 2 <= 2, 2 <= 2
    assert choice_module.dominates({(2, 1): [2, 2, 2], (1, 1): [1]}, three)  # plus another class
    assert not choice_module.dominates({(2, 1): [2, 2, 3]}, three)  # a later deadline: 3 > 2
    assert not choice_module.dominates({(2, 1): [2, 2]}, three)  # one job short
    assert not choice_module.dominates({(2, 2): [2, 2, 2]}, three)  # another class (RL 2)
    assert not choice_module.dominates({(3, 1): [2, 2, 2]}, three)  # another class (G 3)


def _packs(shape: Shape, gpus: int) -> bool:
    """Brute force: every job gets RL distinct terms before its deadline, <= M GPUs per term."""
    jobs = [(g, rl, due) for (g, rl), dues in shape.items() for due in dues]
    options = [list(itertools.combinations(range(due), rl)) for _, rl, due in jobs]
    for pick in itertools.product(*options):
        load = [0] * 4
        for (g, _, _), terms in zip(jobs, pick, strict=True):
            for k in terms:
                load[k] += g
        if max(load) <= gpus:
            return True
    return False


_job = st.tuples(st.integers(1, 3), st.integers(1, 2), st.integers(0, 2)).map(
    lambda t: (t[0], t[1], t[1] + min(t[2], 3 - t[1]))  # G, RL, due in [RL, 3]
)


def _shape(jobs: list[tuple[int, int, int]]) -> Shape:
    shape: Shape = {}
    for g, rl, due in jobs:
        shape.setdefault((g, rl), []).append(due)
    return {k: sorted(v) for k, v in shape.items()}


@settings(max_examples=150, deadline=None)
@given(st.lists(_job, max_size=4), st.lists(_job, max_size=3), st.integers(2, 4))
def test_a_dominating_shape_packs_only_if_the_dominated_one_does(
    small: list[tuple[int, int, int]], extra: list[tuple[int, int, int]], gpus: int
) -> None:
    # The cut's soundness: shape dominates u and shape packs => u packs.
    # ``big`` = ``small`` with deadlines moved earlier where possible, plus extra jobs.
    big = [(g, rl, max(rl, due - 1)) for g, rl, due in small] + extra
    u, shape = _shape(small), _shape(big)
    assert choice_module.dominates(shape, u)
    if _packs(shape, gpus):
        assert _packs(u, gpus)


@settings(max_examples=150, deadline=None)
@given(st.lists(_job, max_size=4), st.lists(_job, max_size=4), st.integers(2, 4))
def test_dominance_is_sound_on_any_pair(
    a: list[tuple[int, int, int]], b: list[tuple[int, int, int]], gpus: int
) -> None:
    sa, sb = _shape(a), _shape(b)
    if choice_module.dominates(sa, sb) and not _packs(sb, gpus):
        assert not _packs(sa, gpus)


def test_a_relabelled_unpackable_choice_is_cut_without_packing(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # M = 3 GPUs, two terms; a, b, c (100 each, identical) and d (99): 2 GPUs,
    # one term, due by term 2. Fractionally three fit (3 x 2 GPU-terms = 6 =
    # 2 terms x 3 GPUs), integrally one per term. Stage 1: {a, b, c} (300)
    # does not pack (packing 1); {a, b, d} (299; the symmetry rows rule out
    # {a, c, d} and {b, c, d}) has the same shape, 3 x (2 GPUs, 1 term, due
    # 2): cut without a packing; {a, b} (200) packs (packing 2).
    # Optimum 200.
    steps = {"a": 100, "b": 100, "c": 100, "d": 99}
    jobs = [Job(j, 2, 2, 1.0, deadlines=(RewardStep(2.0, v),)) for j, v in steps.items()]
    inp = LeaseInput(jobs, 3, 1.0)
    calls: list[object] = []  # presolve flag of each packing (False: a confirmation)
    real = choice_module.pack_highs

    def counting(*args: object, **kwargs: object) -> object:
        calls.append(kwargs["presolve"])
        return real(*args, **kwargs)

    monkeypatch.setattr(choice_module, "pack_highs", counting)
    sol = lease.exact(inp, two_stage=True)
    lease.check(inp, sol)
    assert (sol.status, sol.objective, sol.bound) == (Status.OPTIMAL, 200.0, 200.0)
    assert sol.message == "levels packed after 2 cut(s)"
    # Two packings, then the one unpackable verdict confirmed without presolve.
    assert calls == [True, True, False]
    # Two packings suffice even when only two are allowed.
    monkeypatch.setattr(exact_module, "PACKING_ROUNDS", 2)
    again = lease.exact(inp, two_stage=True)
    assert (again.status, again.objective, again.message) == (
        Status.OPTIMAL,
        200.0,
        "levels packed after 2 cut(s)",
    )
    # The whole MILP agrees.
    whole = lease.exact(inp, two_stage=False)
    assert (whole.status, whole.objective) == (Status.OPTIMAL, 200.0)


def test_a_packing_below_an_unconfirmed_bound_is_kept_as_the_incumbent(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # The same four jobs. {a, b} packs (200) below the first bound (300), so
    # the unpackable verdict on {a, b, c} must be confirmed without presolve;
    # when that does not finish (simulated) and the whole MILP finds nothing
    # either (simulated), the answer is the packing, unproven, with the
    # first bound 300 (not 200: the cut rests on presolve's word only).
    steps = {"a": 100, "b": 100, "c": 100, "d": 99}
    jobs = [Job(j, 2, 2, 1.0, deadlines=(RewardStep(2.0, v),)) for j, v in steps.items()]
    inp = LeaseInput(jobs, 3, 1.0)
    monkeypatch.setattr(exact_module, "confirm", lambda *args: False)
    monkeypatch.setattr(
        exact_module, "_one_stage", lambda *args: ExactOutcome(Status.TIME_LIMIT, None, None)
    )
    out = exact_module.solve_highs(inp, ModelConfig(), 60.0, two_stage=True)
    assert out.status is Status.TIME_LIMIT
    assert out.schedule is not None
    assert out.schedule.reward(inp) == pytest.approx(200.0)
    assert out.bound == pytest.approx(300.0)
    assert out.message == "levels did not pack: whole MILP"
