"""Aryl without the oracle: the duration predictor and SJF on its predictions, by hand."""

from __future__ import annotations

import pytest

from scheduling_opt.sim import ClusterSpec, SimJob, Workload, simulate
from scheduling_opt.sim.policies.aryl.policy import ArylPolicy
from scheduling_opt.sim.policies.aryl.predict import MIN_HISTORY, DurationPredictor
from scheduling_opt.sim.registry import make_policy
from tests.sim.helpers import by_id


def _job(i: str, user: str, work: float, gpus: int = 1, submit: float = 0.0) -> SimJob:
    return SimJob(i, submit, gpus, work, tenant=user)


def test_the_fallback_chain_by_hand() -> None:
    p = DurationPredictor()
    assert MIN_HISTORY == 3
    assert p.predict(_job("x", "u", 9.0)) == 0.0  # nothing finished: 0
    p.observe(_job("1", "u", 10.0))
    p.observe(_job("2", "u", 40.0))
    # u has 2 one-GPU jobs (< 3), the GPU count too: the median of all, (10 + 40) / 2.
    assert p.predict(_job("x", "u", 9.0)) == 25.0
    p.observe(_job("3", "v", 70.0))
    # (u, 1 GPU): 2 jobs; 1 GPU: 10, 40, 70 -> 40.
    assert p.predict(_job("x", "u", 9.0)) == 40.0
    p.observe(_job("4", "u", 20.0))
    # (u, 1 GPU): 10, 20, 40 -> 20.
    assert p.predict(_job("x", "u", 9.0)) == 20.0
    # A 4-GPU job: no (u, 4) or 4-GPU history: all four, 10 20 40 70 -> 30.
    assert p.predict(_job("y", "u", 9.0, gpus=4)) == 30.0
    # The job's own work never enters its prediction.
    assert p.predict(_job("z", "u", 1e6)) == 20.0


def _jobs() -> list[SimJob]:
    # One GPU. At 0: a1, a2, a3 (user a, 6 each) and b1..b4 (user b, 1 each);
    # at 21.5: p (user a, 0.5) and q (user z, 5), while the GPU is busy.
    jobs = [_job(f"a{k}", "a", 6.0) for k in (1, 2, 3)]
    jobs += [_job(f"b{k}", "b", 1.0) for k in (1, 2, 3, 4)]
    jobs += [_job("p", "a", 0.5, submit=21.5), _job("q", "z", 5.0, submit=21.5)]
    return jobs


def test_sjf_on_predicted_durations_by_hand() -> None:
    # Predicted: at 0 nothing has finished, every key is 0, ties go in submit
    # order (then id): a1 0-6, a2 6-12, a3 12-18, b1 18-19, b2 19-20, b3
    # 20-21, b4 21-22. At 21.5 a1-a3 and b1-b3 have finished: p (user a, 3
    # one-GPU jobs of 6) is predicted 6; q (user z, no history) gets the
    # one-GPU median of 1 1 1 6 6 6 = 3.5. At 22: q first (3.5 < 6) 22-27,
    # then p 27-27.5.
    policy = ArylPolicy(loan=False, scale=False)
    got = by_id(simulate(Workload.of(_jobs(), "t"), ClusterSpec.uniform(1, 1), policy))
    assert [got[f"a{k}"][:2] for k in (1, 2, 3)] == [(0.0, 6.0), (6.0, 12.0), (12.0, 18.0)]
    assert [got[f"b{k}"][:2] for k in (1, 2, 3, 4)] == [
        (18.0, 19.0),
        (19.0, 20.0),
        (20.0, 21.0),
        (21.0, 22.0),
    ]
    assert got["q"][:2] == (22.0, 27.0)
    assert got["p"][:2] == (27.0, 27.5)


def test_sjf_on_the_oracle_by_hand() -> None:
    # The trace's durations: at 0 b1..b4 (1) before a1..a3 (6): b 0-4, a1
    # 4-10, a2 10-16, a3 16-22; at 22 p (0.5) 22-22.5, then q 22.5-27.5.
    policy = make_policy("aryl-oracle", Workload.of(_jobs(), "t"), ClusterSpec.uniform(1, 1))
    assert isinstance(policy, ArylPolicy)
    assert policy.predictor is None
    policy.jobs.loan = False  # one training GPU, nothing to lend
    got = by_id(simulate(Workload.of(_jobs(), "t"), ClusterSpec.uniform(1, 1), policy))
    assert [got[f"b{k}"][1] for k in (1, 2, 3, 4)] == [1.0, 2.0, 3.0, 4.0]
    assert got["a3"][:2] == (16.0, 22.0)
    assert got["p"][:2] == (22.0, 22.5)
    assert got["q"][:2] == (22.5, 27.5)


def test_a_preempted_job_keeps_its_prediction_less_its_work() -> None:
    # The key of a job queued again is its prediction at submission minus the
    # work it has done (at least 0), never a new prediction.
    from scheduling_opt.sim.policies.aryl.jobs import JobScheduler

    class Seen:
        index = 7
        job = _job("7", "u", 100.0)

        def attained(self, now: float) -> float:
            return 30.0

    p = DurationPredictor()
    for k, w in enumerate((40.0, 50.0, 60.0)):
        p.observe(_job(str(k), "u", w))
    js = JobScheduler(
        loan=False, scale=False, allocation="two-phase", order="sjf", any_gpu_share=0.0, predictor=p
    )
    js.enqueue(Seen(), 0.0)  # type: ignore[arg-type]
    assert js.queue == [(50.0 - 30.0, 7)]
    p.observe(_job("9", "u", 1000.0))  # later history does not change it
    js.queue.clear()
    js.enqueue(Seen(), 5.0)  # type: ignore[arg-type]
    assert js.queue == [(20.0, 7)]


@pytest.mark.parametrize("bad", ["exact", ""])
def test_an_unknown_durations_option_is_refused(bad: str) -> None:
    with pytest.raises(ValueError, match="durations"):
        ArylPolicy(durations=bad)
