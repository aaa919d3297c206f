"""The engine's slow-livelock guard: a policy that keeps changing the schedule and gets no work done.

The one-instant guard (``MAX_FOLLOW_UPS``) stops a policy that preempts
again and again at one time; these runs loop across instants instead, on
their own timers, and must fail with an error naming the policy rather
than run for ever. A run that only waits (a long restart stall) must not.
"""

from __future__ import annotations

import pytest

from scheduling_opt.sim import ClusterSpec, Decision, EngineParams, PolicyError, View, Workload
from scheduling_opt.sim import simulate as run_sim
from scheduling_opt.sim.engine import STALL_CALLS
from tests.sim.helpers import job


class Alternate:
    """Swaps two 1-GPU jobs on one GPU every minute (the follow-up call at an instant only waits)."""

    name = "alternate"

    def __init__(self) -> None:
        self.last = -1.0

    def decide(self, view: View) -> Decision:
        now = view.now
        if now == self.last:
            return Decision(wake_at=now + 1.0)  # the follow-up call after a preemption
        self.last = now
        on = next(iter(view.running), None)
        off = next(i for i in view.pending if i != on)
        place = ((0, 1),)
        preempt = () if on is None else (on,)
        return Decision(starts=((off, place),), preempt=preempt, wake_at=now + 1.0)


class Idle:
    """Never starts anything and wakes every minute: waits for ever."""

    name = "idle"

    def decide(self, view: View) -> Decision:
        return Decision(wake_at=view.now + 1.0)


class RestartOnce:
    """Starts job 0, restarts it at 1 (paying a long restart stall), then wakes every minute."""

    name = "restart-once"

    def decide(self, view: View) -> Decision:
        now = view.now
        place = ((0, 1),)
        if now == 0.0:
            return Decision(starts=((0, place),), wake_at=1.0)
        if now == 1.0 and 0 in view.running:
            return Decision(preempt=(0,))
        if 0 in view.pending:
            return Decision(starts=((0, place),), wake_at=now + 1.0)
        return Decision(wake_at=now + 1.0)


def test_the_guard_reads_progress_every_thousand_timer_calls() -> None:
    assert STALL_CALLS == 1_000


def test_a_policy_undoing_its_starts_across_instants_is_stopped() -> None:
    # Two jobs of 10 on one GPU, restart cost 2. t=0: J0 starts (called for
    # the arrivals). t=1: J1 starts (its first start: no stall), J0 is
    # preempted with 1 done. t=2: J0 resumes (stall 2 until 4), J1 preempted
    # with 1 done; from then on every start is preempted 1 minute into its
    # 2-minute stall: the useful work stays 1 + 1 = 2 for ever. Calls woken by
    # timers alone: t = 1, 2, ...; the guard reads the work at the 1,000th
    # (t = 1000: 2) and at the 2,000th (t = 2000: still 2, the schedule
    # changed in between): it stops the run there.
    w = Workload.of([job(0, 0, 1, 10), job(1, 0, 1, 10)], "t")
    with pytest.raises(PolicyError) as err:
        run_sim(w, ClusterSpec.uniform(1, 1), Alternate(), params=EngineParams(restart_cost=2.0))
    message = str(err.value)
    assert message.startswith("policy 'alternate' at t=2000:")
    assert "no work was done from t=1000" in message
    assert "changing the schedule: a livelock" in message


def test_a_policy_that_waits_for_nothing_is_stopped() -> None:
    # Nothing runs, nothing will arrive: t = 1..2000 are timer calls alone.
    w = Workload.of([job(0, 0, 1, 10)], "t")
    with pytest.raises(PolicyError, match=r"at t=2000: .* running nothing: a livelock"):
        run_sim(w, ClusterSpec.uniform(1, 1), Idle())


def test_a_long_restart_stall_is_waited_for() -> None:
    # J0 (work 10) runs 0..1 (1 done), is preempted and resumes at 1 with a
    # stall of 5,000: 5,000 timer calls without work and without a change.
    # It ends at 1 + 5000 + 9 = 5010.
    w = Workload.of([job(0, 0, 1, 10)], "t")
    params = EngineParams(restart_cost=5000.0)
    out = run_sim(w, ClusterSpec.uniform(1, 1), RestartOnce(), params=params)
    assert out.end == (5010.0,)
    assert out.preemptions == (1,)


def test_a_run_waiting_for_an_arrival_is_not_stopped_before_it() -> None:
    # Idle again, with a second job arriving at 3,000. Its readings at t =
    # 1000 and 2000 see an arrival still to come and do not judge; the
    # arrival at 3,000 starts the count again: readings at 4000 and 5000.
    w = Workload.of([job(0, 0, 1, 10), job(1, 3000, 1, 10)], "t")
    with pytest.raises(PolicyError, match="running nothing: a livelock") as err:
        run_sim(w, ClusterSpec.uniform(1, 1), Idle())
    assert str(err.value).startswith("policy 'idle' at t=5000:")
    assert "from t=4000" in str(err.value)
