"""Several opportunistic jobs per GPU (``Stacking``) and stalls (``Decision.stall``) in the engine.

Every expected time is computed by hand in the comments, with the
interference model of sim/sharing.py: while a GPU holds jobs of both
layers, each opportunistic job runs at 1 - a and the exclusive one at 1 - b;
opportunistic jobs are not partners of one another.
"""

from __future__ import annotations

import numpy as np
import pytest

from scheduling_opt.sim import ClusterSpec, EngineParams, PolicyError, Workload, simulate
from scheduling_opt.sim.protocol import Decision, View
from tests.sim.helpers import Script, by_id, job

A, B = 0.5, 0.2
PARAMS = EngineParams(share_slowdown=A, host_slowdown=B)


class Stacked(Script):
    """A :class:`~tests.sim.helpers.Script` with ``guests_per_gpu`` slots, recording speeds."""

    name = "stacked"

    def __init__(self, steps: list[tuple[float, Decision]], guests: int = 2) -> None:
        super().__init__(steps, lambda st: (st.opportunistic, st.shared, st.speed))
        self.guests_per_gpu = guests


def _run(jobs: list, steps: list[tuple[float, Decision]], gpus: int = 1, guests: int = 2) -> tuple:
    policy = Stacked(steps, guests)
    out = simulate(Workload.of(jobs, "t"), ClusterSpec.uniform(1, gpus), policy, params=PARAMS)
    return by_id(out), out, policy


GPU0 = ((0, 1),)


def test_two_guests_beside_a_host_each_slowed_and_freed_when_it_leaves() -> None:
    # One GPU. G exclusive (work 4), O1 and O2 opportunistic (work 3 each)
    # from 0: G at 0.8 ends at 5; O1, O2 at 0.5 did 2.5 each by 5, then 0.5
    # alone at speed 1 (guests do not slow each other): end at 5.5.
    res, out, _ = _run(
        [job(0, 0.0, 1, 4.0), job(1, 0.0, 1, 3.0), job(2, 0.0, 1, 3.0)],
        [(0.0, Decision(starts=((0, GPU0),), share=((1, GPU0), (2, GPU0))))],
    )
    assert res["0"][1] == pytest.approx(5.0)
    assert res["1"][1] == pytest.approx(5.5)
    assert res["2"][1] == pytest.approx(5.5)
    # The GPU is busy once while it holds three jobs: 0..5.5.
    assert out.busy_area == pytest.approx(5.5)


def test_a_third_guest_exceeds_two_slots() -> None:
    with pytest.raises(PolicyError, match="exceeds the free GPUs"):
        _run(
            [job(0, 0.0, 1, 3.0), job(1, 0.0, 1, 3.0), job(2, 0.0, 1, 3.0)],
            [(0.0, Decision(share=((0, GPU0), (1, GPU0), (2, GPU0))))],
        )


def test_a_gang_needs_distinct_gpus_even_with_free_slots() -> None:
    # Two GPUs, two slots each: O1 (2 GPUs) takes one slot on each; O2 (2 GPUs) the
    # other slot on each; a third 2-GPU job finds 0 free slots.
    res, _, _ = _run(
        [job(0, 0.0, 2, 1.0), job(1, 0.0, 2, 1.0)],
        [(0.0, Decision(share=((0, ((0, 2),)), (1, ((0, 2),)))))],
        gpus=2,
    )
    assert res["0"][1] == pytest.approx(1.0)
    assert res["1"][1] == pytest.approx(1.0)
    # Naming one GPU twice for a 2-GPU gang is refused.
    with pytest.raises(PolicyError, match="do not match placement"):
        _run(
            [job(0, 0.0, 2, 1.0)],
            [(0.0, Decision(share=((0, ((0, 2),)),), gpus=((0, ((0, 0), (0, 0))),)))],
            gpus=2,
        )


def test_default_guest_gpu_prefers_idle_then_fewer_guests() -> None:
    # Two GPUs, 3 slots each. G exclusive on GPU 0 (starts come first); O1
    # goes to idle GPU 1; O2 and O3 too: GPU 1 holds no exclusive job, which
    # comes before fewer guests. The guests do not slow each other and G is
    # alone on GPU 0: every job at speed 1.
    res, _, policy = _run(
        [job(0, 0.0, 1, 2.0), job(1, 0.0, 1, 1.0), job(2, 0.0, 1, 1.0), job(3, 0.0, 1, 1.0)],
        [(0.0, Decision(starts=((0, GPU0),), share=((1, GPU0), (2, GPU0), (3, GPU0))))],
        gpus=2,
        guests=3,
    )
    assert [res[k][1] for k in "0123"] == pytest.approx([2.0, 1.0, 1.0, 1.0])
    at_half = next(s for t, s in policy.seen if t == 1.0)  # the guests' completions
    assert at_half[0] == (False, False, 1.0)


def test_upgrade_with_another_guest_left_makes_it_a_partner() -> None:
    # One GPU, O1 (work 4) and O2 (work 4) from 0 at speed 1 (guests only).
    # At 1 O1 is upgraded: now exclusive, O2 beside it: O1 at 0.8, O2 at 0.5.
    # O1 has 3 left: ends at 1 + 3 / 0.8 = 4.75; O2 did 1 + 0.5 x 3.75 =
    # 2.875 by then, 1.125 alone: ends at 5.875.
    res, _, policy = _run(
        [job(0, 0.0, 1, 4.0), job(1, 0.0, 1, 4.0)],
        [
            (0.0, Decision(share=((0, GPU0), (1, GPU0)))),
            (1.0, Decision(upgrade=(0,))),
            (2.0, Decision()),  # a look at the state
        ],
    )
    assert res["0"][1] == pytest.approx(4.75)
    assert res["1"][1] == pytest.approx(5.875)
    at2 = next(s for t, s in policy.seen if t == 2.0)
    assert at2[0] == (False, True, pytest.approx(0.8))
    assert at2[1] == (True, True, pytest.approx(0.5))


def test_stall_delays_a_running_job_and_adds_to_a_stall_in_progress() -> None:
    # J (work 10) from 0; at 2 it stalls 0.5 and again at 2.25 for 0.25 more
    # (the second counted from the end of the first, 2.5): it ends at 10.75.
    res, _, _ = _run(
        [job(0, 0.0, 1, 10.0)],
        [
            (0.0, Decision(starts=((0, GPU0),))),
            (2.0, Decision(stall=((0, 0.5),))),
            (2.25, Decision(stall=((0, 0.25),))),
        ],
    )
    assert res["0"][1] == pytest.approx(10.75)


def test_a_job_started_and_stalled_in_one_decision_starts_late() -> None:
    res, _, _ = _run(
        [job(0, 0.0, 1, 2.0)], [(0.0, Decision(starts=((0, GPU0),), stall=((0, 0.3),)))]
    )
    assert res["0"][1] == pytest.approx(2.3)


@pytest.mark.parametrize(
    ("stall", "message"),
    [
        (((1, 0.5),), "stalled but not running"),
        (((0, -1.0),), "is not a time"),
        (((0, float("nan")),), "is not a time"),
        (((0, True),), "is not a time"),
        (((0, 0.1), (0, 0.1)), "given twice"),
        (((7, 0.1),), "no job with index 7"),
    ],
)
def test_bad_stalls_are_refused(stall: tuple, message: str) -> None:
    with pytest.raises(PolicyError, match=message):
        _run(
            [job(0, 0.0, 1, 2.0), job(1, 5.0, 1, 1.0)],
            [(0.0, Decision(starts=((0, GPU0),), stall=stall))],
        )


@pytest.mark.parametrize("guests", [0, 17, 1.5])
def test_engine_refuses_a_bad_slot_count(guests: object) -> None:
    with pytest.raises(PolicyError, match="guests_per_gpu"):
        _run([job(0, 0.0, 1, 1.0)], [], guests=guests)  # type: ignore[arg-type]


def test_capacity_cut_evicts_the_guests_of_a_server() -> None:
    # Two GPUs, 2 slots: O1 and O2 share GPU 0 (named). At 1 the server
    # drops to 0 GPUs: both evicted; it gets 2 back at 2 (a scripted
    # capacity change) and they restart alone there: done 1 each, 1 left.
    res, _, _ = _run(
        [job(0, 0.0, 1, 2.0), job(1, 0.0, 1, 2.0)],
        [
            (
                0.0,
                Decision(share=((0, GPU0), (1, GPU0)), gpus=((0, ((0, 0),)), (1, ((0, 0),)))),
            ),
            (1.0, Decision(capacity=((0, 0),))),
            (2.0, Decision(capacity=((0, 2),), share=((0, GPU0), (1, GPU0)))),
        ],
        gpus=2,
    )
    assert res["0"] == (0.0, pytest.approx(3.0), 1)
    assert res["1"] == (0.0, pytest.approx(3.0), 1)


class RandomStacker:
    """Random starts in either layer on random GPUs, upgrades, stalls; checks slot invariants."""

    name = "random-stacker"
    guests_per_gpu = 3

    def __init__(self, seed: int) -> None:
        self.rng = np.random.default_rng(seed)

    def _check(self, view: View) -> None:
        host: dict[tuple[int, int], int] = {}
        guests: dict[tuple[int, int], list[int]] = {}
        for i, st in view.running.items():
            assert len(set(st.gpus)) == len(st.gpus) == sum(g for _, g in st.placement)
            for g in st.gpus:
                if st.opportunistic:
                    guests.setdefault(g, []).append(i)
                else:
                    assert g not in host
                    host[g] = i
        assert all(len(v) <= self.guests_per_gpu for v in guests.values())
        for st in view.running.values():
            other = guests if not st.opportunistic else {g: [host[g]] for g in host}
            assert st.shared == any(g in other for g in st.gpus)
            slow = (1 - A if st.opportunistic else 1 - B) if st.shared else 1.0
            assert st.speed == pytest.approx(view.speed(st.job, st.placement) * slow)
        slots = [0] * len(view.capacity)
        for (s, _), v in guests.items():
            slots[s] += len(v)
        assert [f + n for f, n in zip(view.share_free, slots, strict=True)] == [
            c * self.guests_per_gpu for c in view.capacity
        ]

    def decide(self, view: View) -> Decision:
        self._check(view)
        rng = self.rng
        plan, shared = view.plan(), view.plan_shared()
        upgrade = []
        taken: set[tuple[int, int]] = set()  # GPUs an upgrade of this decision made exclusive
        for i, st in sorted(view.running.items()):
            if st.opportunistic and not st.shared and rng.random() < 0.2:
                if taken.intersection(st.gpus):
                    continue
                taken.update(st.gpus)
                upgrade.append(i)
                shared.give(st.placement)
                plan.take(st.placement)
        stall = tuple(
            (i, float(rng.uniform(0, 0.5))) for i in sorted(view.running) if rng.random() < 0.1
        )
        starts, share = [], []
        for i in rng.permutation(sorted(view.pending)):
            g = view.pending[int(i)].job.gpus
            if rng.random() < 0.5:
                p = plan.place(g)
                if p is not None:
                    plan.take(p)
                    starts.append((int(i), p))
            elif g <= 1:  # a 1-GPU guest: any free slot is a distinct GPU
                p = shared.place(g)
                if p is not None:
                    shared.take(p)
                    share.append((int(i), p))
        return Decision(
            starts=tuple(starts), share=tuple(share), upgrade=tuple(upgrade), stall=stall
        )


@pytest.mark.parametrize("seed", range(4))
def test_random_stacking_keeps_the_engine_invariants(seed: int) -> None:
    rng = np.random.default_rng(seed)
    jobs = [
        job(
            i,
            float(rng.integers(0, 30)),
            int(rng.choice([1, 1, 1, 2, 4])),
            float(rng.integers(1, 20)),
        )
        for i in range(40)
    ]
    policy = RandomStacker(seed)
    out = simulate(Workload.of(jobs, "r"), ClusterSpec.uniform(2, 4), policy, params=PARAMS)
    for j, s, e in zip(out.jobs, out.first_start, out.end, strict=True):
        assert e - s >= j.work - 1e-9
    assert out.busy_area <= out.capacity_area + 1e-9
