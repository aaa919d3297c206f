"""The engine options of the Chronus artifact's semantics, on hand-computed schedules (issue 23).

``EngineParams.start_overhead``: each start from pending, the first
included, adds ``overhead x (1 + log2 g)`` of work (the artifact's 0.1 + 0.4
minutes of checkpoint and resume, ``time_aware_with_lease.py`` 35-36,
398-402); ``EngineParams.arrival_step``: the policy sees a job at the first
multiple of the step at or after its submission (1192-1193), its JCT still
counting from the submission.
"""

from __future__ import annotations

import pytest

from scheduling_opt.sim import (
    ClusterSpec,
    Decision,
    EngineParams,
    PolicyError,
    SimJob,
    StartTerms,
    View,
    Workload,
    simulate,
)
from scheduling_opt.sim.engine import arrival_time
from scheduling_opt.sim.results import summarize

from .helpers import by_id, job, run


class Script:
    """Each planned decision once, at its time; in between, a timer to the next one."""

    name = "script"

    def __init__(self, plan: dict[float, Decision]) -> None:
        self.plan = dict(plan)

    def decide(self, view: View) -> Decision:
        got = self.plan.pop(view.now, None)
        later = [t for t in self.plan if t > view.now]
        wake = min(later) if later else None
        if got is None:
            return Decision(wake_at=wake)
        return Decision(
            starts=got.starts,
            preempt=got.preempt,
            resize=got.resize,
            wake_at=wake,
            terms=got.terms,
        )


def test_a_4_gpu_job_started_three_times_owes_three_overheads() -> None:
    # Work 10 on 4 GPUs; each start owes 0.5 x (1 + log2 4) = 1.5 minutes.
    # Runs [0, 2) and [3, 5): 4 done; from 6 it owes 10 + 3 x 1.5 - 4 = 10.5,
    # so it ends at 16.5 (two resumes: 2 x 1.5 = 3 on top of the first start's 1.5).
    plan = {
        0.0: Decision(starts=((0, ((0, 4),)),)),
        2.0: Decision(preempt=(0,)),
        3.0: Decision(starts=((0, ((0, 4),)),)),
        5.0: Decision(preempt=(0,)),
        6.0: Decision(starts=((0, ((0, 4),)),)),
    }
    out = run([job(0, 0.0, 4, 10.0)], Script(plan), gpus=4, params=EngineParams(start_overhead=0.5))
    assert by_id(out)["0"] == (0.0, 16.5, 2)


@pytest.mark.parametrize(("gpus", "end"), [(1, 10.5), (2, 11.0), (8, 12.0)])
def test_the_first_start_pays_by_the_gpu_count(gpus: int, end: float) -> None:
    # 0.5 x (1 + log2 g): 0.5 for 1 GPU, 1.0 for 2, 2.0 for 8.
    out = run([job(0, 0.0, gpus, 10.0)], "fifo", params=EngineParams(start_overhead=0.5))
    assert by_id(out)["0"] == (0.0, end, 0)


def test_a_migration_pays_no_start_overhead() -> None:
    # Moved to server 1 at t=2 (a resize): no new overhead, end = 10 + 1.5.
    plan = {
        0.0: Decision(starts=((0, ((0, 4),)),)),
        2.0: Decision(resize=((0, ((1, 4),)),)),
    }
    out = run(
        [job(0, 0.0, 4, 10.0)],
        Script(plan),
        servers=2,
        gpus=4,
        params=EngineParams(start_overhead=0.5),
    )
    assert by_id(out)["0"] == (0.0, 11.5, 0)


def test_a_free_start_owes_no_overhead() -> None:
    # As above, three starts of a 4-GPU job of work 10, but the second's terms
    # waive the overhead (the artifact's odd-minute fill): 2 x 1.5 owed, 10 + 3
    # - 4 = 9 left at 6, ending at 15.
    plan = {
        0.0: Decision(starts=((0, ((0, 4),)),)),
        2.0: Decision(preempt=(0,)),
        3.0: Decision(starts=((0, ((0, 4),)),), terms=((0, StartTerms(overhead=False)),)),
        5.0: Decision(preempt=(0,)),
        6.0: Decision(starts=((0, ((0, 4),)),)),
    }
    out = run([job(0, 0.0, 4, 10.0)], Script(plan), gpus=4, params=EngineParams(start_overhead=0.5))
    assert by_id(out)["0"] == (0.0, 15.0, 2)


@pytest.mark.parametrize(("credit", "end"), [(0.0, 12.0), (3.0, 9.0), (50.0, 2.0)])
def test_a_credit_counts_work_done_at_the_start(credit: float, end: float) -> None:
    # Work 10 on 1 GPU: [0, 1) runs 1; restarted at 2 with `credit` counted
    # done and 0.5 owed for the restart (the first start's 0.5 too): 10 + 1 -
    # 1 - credit left, ending at 12 - credit; a credit beyond what is left
    # ends it at once.
    plan = {
        0.0: Decision(starts=((0, ((0, 1),)),)),
        1.0: Decision(preempt=(0,)),
        2.0: Decision(
            starts=((0, ((0, 1),)),),
            terms=((0, StartTerms(credit=credit)),) if credit else (),
        ),
    }
    out = run([job(0, 0.0, 1, 10.0)], Script(plan), gpus=1, params=EngineParams(start_overhead=0.5))
    assert by_id(out)["0"] == (0.0, end, 1)


@pytest.mark.parametrize(
    ("terms", "match"),
    [
        (((1, StartTerms(credit=1.0)),), "terms: not started"),
        (((1, StartTerms(overhead=False)),), "terms: not started"),
        (((0, StartTerms(credit=-1.0)),), "not >= 0"),
        (((0, StartTerms(credit=float("nan"))),), "not >= 0"),
        (((0, StartTerms()), (0, StartTerms())), "given twice"),
        (((0, 1.0),), "must be StartTerms"),
    ],
)
def test_bad_start_terms_are_refused(terms: tuple[tuple[int, object], ...], match: str) -> None:
    plan = {0.0: Decision(starts=((0, ((0, 1),)),), terms=terms)}  # type: ignore[arg-type]
    with pytest.raises(PolicyError, match=match):
        run([job(0, 0.0, 1, 1.0), job(1, 0.0, 1, 1.0)], Script(plan), gpus=4)


def test_an_arrival_at_7_3_is_handled_at_10() -> None:
    jobs = [job(0, 7.3, 1, 2.0), job(1, 10.0, 1, 2.0), job(2, 0.0, 1, 2.0)]
    out = run(jobs, "fifo", params=EngineParams(arrival_step=5.0))
    got = by_id(out)
    assert got["0"] == (10.0, 12.0, 0)
    assert got["1"] == (10.0, 12.0, 0)  # a submission on the step is seen at once
    assert got["2"] == (0.0, 2.0, 0)
    # JCT from the submission: (12 - 7.3 + 12 - 10 + 2 - 0) / 3.
    assert summarize(out)["jct_mean"] == pytest.approx((4.7 + 2.0 + 2.0) / 3)


def test_arrival_time_rounds_up_to_the_step() -> None:
    assert [arrival_time(t, 5.0) for t in (0.0, 0.1, 4.9, 5.0, 5.1, 7.3)] == [
        0.0,
        5.0,
        5.0,
        5.0,
        10.0,
        10.0,
    ]
    assert arrival_time(0.3, 0.1) >= 0.3  # float division never moves an arrival earlier
    assert arrival_time(3.0, None) == 3.0


def test_default_engine_is_unchanged_by_the_new_fields() -> None:
    w = Workload.of([SimJob("a", 1.3, 2, 5.0), SimJob("b", 2.0, 8, 3.0)], "t")
    c = ClusterSpec.uniform(1, 8)
    from scheduling_opt.sim import make_policy

    a = simulate(w, c, make_policy("fifo", w, c))
    b = simulate(w, c, make_policy("fifo", w, c), params=EngineParams(start_overhead=0.0))
    assert (a.first_start, a.end) == (b.first_start, b.end) == ((1.3, 6.3), (6.3, 9.3))
