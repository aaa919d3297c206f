"""GPU sharing in the engine: opportunistic slots, the interference model, upgrades.

Every expected time below is computed by hand in the comments, with the
interference model of sim/sharing.py: while a GPU holds one job of each
slot, the opportunistic job runs at 1 - a and the exclusive one at 1 - b.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from scheduling_opt.sim import ClusterSpec, EngineParams, PolicyError, Workload, simulate
from scheduling_opt.sim.protocol import Decision, View
from scheduling_opt.sim.sharing import Sharing
from tests.sim.helpers import Script, by_id, job

A, B = 0.5, 0.2  # easy numbers: opportunistic at 0.5, exclusive at 0.8 while shared
PARAMS = EngineParams(share_slowdown=A, host_slowdown=B)


def _run(jobs: list, steps: list[tuple[float, Decision]], gpus: int = 2) -> tuple[dict, Script]:
    w = Workload.of(jobs, "t")
    policy = Script(steps)
    out = simulate(w, ClusterSpec.uniform(1, gpus), policy, params=PARAMS)
    return {"out": out, **by_id(out)}, policy


def test_shared_gpu_slows_both_and_the_survivor_speeds_up() -> None:
    # G (exclusive, work 10) on GPU 0 and O (opportunistic, work 6) on GPU 0
    # from t=0: G at 0.8, O at 0.5. H (exclusive, work 2) arrives at 4 and
    # takes GPU 1 alone: ends at 6.
    # O ends at 6 / 0.5 = 12; G has done 0.8 x 12 = 9.6 by then and runs the
    # last 0.4 alone at speed 1: ends at 12.4.
    jobs = [job(0, 0.0, 1, 10.0), job(1, 0.0, 1, 6.0), job(2, 4.0, 1, 2.0)]
    res, _ = _run(
        jobs,
        [
            (
                0.0,
                Decision(starts=((0, ((0, 1),)),), share=((1, ((0, 1),)),), gpus=((1, ((0, 0),)),)),
            ),
            (4.0, Decision(starts=((2, ((0, 1),)),))),
        ],
    )
    assert res["0"][1] == pytest.approx(12.4)
    assert res["1"][1] == pytest.approx(12.0)
    assert res["2"][1] == pytest.approx(6.0)
    out = res["out"]
    # GPU 0 busy 0..12.4, GPU 1 busy 4..6: 14.4 of 2 x 12.4 GPU-time.
    assert out.busy_area == pytest.approx(14.4)
    assert out.capacity_area == pytest.approx(24.8)


def test_host_ending_first_leaves_the_guest_at_full_speed() -> None:
    # G (work 2) at 0.8 ends at 2.5; O (work 6) did 0.5 x 2.5 = 1.25 by then,
    # the remaining 4.75 alone: ends at 7.25 (no eviction when the host ends).
    jobs = [job(0, 0.0, 1, 2.0), job(1, 0.0, 1, 6.0)]
    res, _ = _run(
        jobs,
        [
            (
                0.0,
                Decision(starts=((0, ((0, 1),)),), share=((1, ((0, 1),)),), gpus=((1, ((0, 0),)),)),
            )
        ],
    )
    assert res["0"][1] == pytest.approx(2.5)
    assert res["1"][1] == pytest.approx(7.25)
    assert res["1"][2] == 0


def test_default_gpus_keep_jobs_apart_and_late_host_slows_guest() -> None:
    # Starts come before shares: G (exclusive, 1 GPU) takes GPU 0 of an idle
    # 2-GPU server, O (opportunistic) prefers the idle GPU 1: no sharing, both
    # at speed 1. K (exclusive, 1 GPU, work 4) at t=1 can only take GPU 1 (beside O):
    # from 1 on O runs at 0.5 and K at 0.8. O (work 3) did 1 by t=1, 2 left
    # -> 4 more time units -> ends at 5; K did 0.8 x 4 = 3.2 by t=5, the last
    # 0.8 alone -> ends at 5.8. G (work 2) ends at 2.
    jobs = [job(0, 0.0, 1, 3.0), job(1, 0.0, 1, 2.0), job(2, 1.0, 1, 4.0)]
    res, script = _run(
        jobs,
        [
            (0.0, Decision(share=((0, ((0, 1),)),), starts=((1, ((0, 1),)),))),
            (1.0, Decision(starts=((2, ((0, 1),)),))),
        ],
    )
    assert res["0"][1] == pytest.approx(5.0)
    assert res["1"][1] == pytest.approx(2.0)
    assert res["2"][1] == pytest.approx(5.8)
    # What the policy saw at t=1 before its decision: G on GPU 0, O alone on GPU 1.
    at1 = next(s for t, s in script.seen if t == 1.0)
    assert at1[0] == (True, False, ((0, 1),))
    assert at1[1] == (False, False, ((0, 0),))


def test_preempting_the_guest_restores_the_host_speed() -> None:
    # G (work 10) and O (work 100) share GPU 0 from 0; O is preempted at 2:
    # G did 1.6, then 8.4 alone -> ends at 10.4. O did 1.0 and restarts at 2
    # exclusive on GPU 1: 99 left -> ends at 101.
    jobs = [job(0, 0.0, 1, 10.0), job(1, 0.0, 1, 100.0)]
    res, _ = _run(
        jobs,
        [
            (
                0.0,
                Decision(starts=((0, ((0, 1),)),), share=((1, ((0, 1),)),), gpus=((1, ((0, 0),)),)),
            ),
            (2.0, Decision(preempt=(1,))),
            (2.0, Decision(starts=((1, ((0, 1),)),))),
        ],
    )
    assert res["0"][1] == pytest.approx(10.4)
    assert res["1"] == (0.0, pytest.approx(101.0), 1)


def test_upgrade_keeps_the_gpus_and_speed_and_blocks_exclusive_starts() -> None:
    # O (work 5) alone on GPU 0 of a 1-GPU server, upgraded at 1: it keeps
    # running at speed 1 (ends at 5), and now holds the exclusive slot, so G
    # (arrives at 1) cannot start before 5; G (work 1) ends at 6.
    jobs = [job(0, 0.0, 1, 5.0), job(1, 1.0, 1, 1.0)]
    res, _ = _run(
        jobs,
        [
            (0.0, Decision(share=((0, ((0, 1),)),))),
            (1.0, Decision(upgrade=(0,))),
            (5.0, Decision(starts=((1, ((0, 1),)),))),
        ],
        gpus=1,
    )
    assert res["0"][1] == pytest.approx(5.0)
    assert res["1"] == (5.0, pytest.approx(6.0), 0)


def test_an_exclusive_start_on_a_guest_gpu_is_not_blocked() -> None:
    # 1 GPU: O shares it, then G starts exclusive on it at once (O does not block G).
    jobs = [job(0, 0.0, 1, 5.0), job(1, 0.0, 1, 1.0)]
    res, _ = _run(jobs, [(0.0, Decision(share=((0, ((0, 1),)),), starts=((1, ((0, 1),)),)))], 1)
    # G at 0.8 ends at 1.25; O did 0.625, 4.375 left alone -> 5.625.
    assert res["1"][1] == pytest.approx(1.25)
    assert res["0"][1] == pytest.approx(5.625)


@pytest.mark.parametrize(
    ("steps", "message"),
    [
        # Two opportunistic jobs on one 1-GPU server: one slot per GPU.
        (
            [(0.0, Decision(share=((0, ((0, 1),)), (1, ((0, 1),)))))],
            "exceeds the free GPUs",
        ),
        # Upgrade of a job sharing its GPU with an exclusive job.
        (
            [
                (0.0, Decision(starts=((0, ((0, 1),)),), share=((1, ((0, 1),)),))),
                (0.5, Decision(upgrade=(1,))),
            ],
            "upgraded on GPUs held by",
        ),
        # Upgrade of an exclusive job.
        (
            [(0.0, Decision(starts=((0, ((0, 1),)),))), (0.5, Decision(upgrade=(0,)))],
            "not a running opportunistic job",
        ),
        # Exact GPUs naming a GPU that does not exist on the server.
        ([(0.0, Decision(starts=((0, ((0, 1),)),), gpus=((0, ((0, 3),)),)))], "gpus:"),
        # Exact GPUs for a job the decision does not start.
        ([(0.0, Decision(starts=((0, ((0, 1),)),), gpus=((1, ((0, 0),)),)))], "not started"),
    ],
)
def test_sharing_rules_are_checked(steps: list, message: str) -> None:
    jobs = [job(0, 0.0, 1, 5.0), job(1, 0.0, 1, 5.0)]
    with pytest.raises(PolicyError, match=message):
        _run(jobs, steps, 1)


def test_resize_of_an_opportunistic_job_is_refused() -> None:
    jobs = [job(0, 0.0, 1, 5.0)]
    steps = [(0.0, Decision(share=((0, ((0, 1),)),)))]

    class Resize(Script):
        def decide(self, view: View) -> Decision:
            if view.now == 1.0:
                return Decision(resize=((0, ((0, 1),)),))
            d = super().decide(view)
            return Decision(share=d.share, wake_at=1.0) if view.now == 0.0 else d

    w = Workload.of(jobs, "t")
    with pytest.raises(PolicyError, match="resized but opportunistic"):
        simulate(w, ClusterSpec.uniform(1, 2), Resize(steps), params=PARAMS)


def test_interference_parameters_are_validated() -> None:
    with pytest.raises(ValueError, match="share_slowdown"):
        Sharing([2], share_slowdown=1.0, host_slowdown=0.0)
    assert not math.isnan(EngineParams().share_slowdown)


class RandomSharer:
    """Starts every pending job in a random slot, upgrades and preempts at random; checks invariants."""

    name = "random-sharer"

    def __init__(self, seed: int) -> None:
        self.rng = np.random.default_rng(seed)
        self.calls = 0

    def _check(self, view: View) -> None:
        slot: dict[tuple[bool, tuple[int, int]], int] = {}
        for i, st in view.running.items():
            assert len(st.gpus) == sum(g for _, g in st.placement)
            assert sorted({s for s, _ in st.gpus}) == [s for s, _ in st.placement]
            for g in st.gpus:
                assert (st.opportunistic, g) not in slot
                slot[(st.opportunistic, g)] = i
        for st in view.running.values():
            shared = any((not st.opportunistic, g) in slot for g in st.gpus)
            assert st.shared == shared
            slow = (1 - A if st.opportunistic else 1 - B) if shared else 1.0
            assert st.speed == pytest.approx(view.speed(st.job, st.placement) * slow)
        held = [0] * len(view.capacity)
        for (opp, (s, _)), _i in slot.items():
            held[s] += opp
        assert [f + h for f, h in zip(view.share_free, held, strict=True)] == list(view.capacity)

    def decide(self, view: View) -> Decision:
        self.calls += 1
        self._check(view)
        rng = self.rng
        plan, shared = view.plan(), view.plan_shared()
        upgrade = []
        for i, st in sorted(view.running.items()):
            if st.opportunistic and not st.shared and rng.random() < 0.3:
                upgrade.append(i)
                shared.give(st.placement)
                plan.take(st.placement)
        preempt = [
            i
            for i, st in sorted(view.running.items())
            if i not in upgrade and st.preemptions < 2 and rng.random() < 0.05
        ]
        if preempt:
            return Decision(preempt=tuple(preempt))
        starts, share = [], []
        for i in rng.permutation(sorted(view.pending)):
            g = view.pending[int(i)].job.gpus
            maps = [(plan, starts), (shared, share)]
            if rng.random() < 0.5:
                maps.reverse()
            for m, out in maps:
                p = m.place(g)
                if p is not None:
                    m.take(p)
                    out.append((int(i), p))
                    break
        return Decision(starts=tuple(starts), share=tuple(share), upgrade=tuple(upgrade))


@pytest.mark.parametrize("seed", range(6))
def test_random_sharing_keeps_the_engine_invariants(seed: int) -> None:
    rng = np.random.default_rng(seed)
    jobs = [
        job(
            i,
            float(rng.integers(0, 30)),
            int(rng.choice([1, 1, 2, 4, 8])),
            float(rng.integers(1, 20)),
        )
        for i in range(40)
    ]
    w = Workload.of(jobs, "random")
    policy = RandomSharer(seed)
    out = simulate(w, ClusterSpec.uniform(2, 4), policy, params=PARAMS)
    assert policy.calls > 10
    for j, s, e in zip(out.jobs, out.first_start, out.end, strict=True):
        assert e - s >= j.work - 1e-9  # speeds never exceed 1 here
    assert out.busy_area <= out.capacity_area + 1e-9
