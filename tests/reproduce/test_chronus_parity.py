"""The ``chronus`` options of the artifact's semantics, on hand-computed workloads.

Each option is one rule of the Chronus authors' simulator
(``sim/policies/chronus/artifact/rules.py`` names its functions); each test runs a
few jobs on one 8-GPU server with 20-minute terms and checks what the rule
decides against values computed by hand in the comments, beside what our
default does.
"""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from scheduling_opt.sim import ClusterSpec, EngineParams, SimJob, Workload, simulate
from scheduling_opt.sim.policies.chronus.artifact.rules import bins, estimate
from scheduling_opt.sim.policies.chronus.artifact.selection import frozen_jobs
from scheduling_opt.sim.policies.chronus.policy import Chronus
from tests.sim.helpers import by_id


def _slo(name: str, gpus: int, work: float, deadline: float, submit: float = 0.0) -> SimJob:
    return SimJob(name, submit, gpus, work, deadlines=((deadline, 100.0),), job_type="strict")


def _run(
    jobs: list[SimJob], policy: Chronus, **engine: float
) -> dict[str, tuple[float, float, int]]:
    out = simulate(
        Workload.of(jobs, "t"), ClusterSpec.uniform(1, 8), policy, params=EngineParams(**engine)
    )
    return by_id(out)


def _verdicts(policy: Chronus) -> tuple[int, int]:
    """The SLO jobs the policy's admission admitted and rejected."""
    return policy.ledger.counts["admitted"], policy.ledger.counts["rejected"]


def test_bins_and_estimate_by_hand() -> None:
    # convert_to_bin: 3, 4 -> 4; 5..7 -> 8; above 8 unchanged.
    assert [bins(g) for g in range(1, 13)] == [1, 2, 4, 4, 8, 8, 8, 8, 9, 10, 11, 12]
    # duration x (1 + (1 + log2 g) x 0.5 / 20) x 1.1, truncated:
    # 19 x 1.025 x 1.1 = 21.42 -> 21; 10 x (1 + 2.585 x 0.025) x 1.1 = 11.71 -> 11;
    # 100 x (1 + 4 x 0.025) x 1.1 = 121.0 -> 121.
    assert estimate(19.0, 1, 20.0) == 21
    assert estimate(10.0, 3, 20.0) == 11
    assert estimate(100.0, 8, 20.0) == 121


def test_reserved_admission_refuses_the_rest_of_a_batch() -> None:
    # All submitted at 0 (one batch, terms from 0). A: 8 GPUs, one term, due
    # by term 2 -> its latest term with room, term 1. B: 8 GPUs due by term 1
    # -> term 0. C: 8 GPUs due by term 2: terms 0 and 1 are full -> refused.
    # D (1 GPU, due at 100) would fit, but follows C in the batch -> refused.
    jobs = [_slo("A", 8, 20.0, 40.0), _slo("B", 8, 20.0, 20.0), _slo("C", 8, 20.0, 40.0)]
    jobs.append(_slo("D", 1, 10.0, 100.0))
    reserved = Chronus(mode="greedy", admission_check="reserved")
    _run(jobs, reserved)
    assert _verdicts(reserved) == (2, 2)
    # Ours re-solves every guaranteed job: C is refused (three 8-GPU terms before
    # term 2 do not exist), D is admitted.
    ours = Chronus(mode="greedy")
    _run(jobs, ours)
    assert _verdicts(ours) == (3, 1)


def test_the_estimate_and_the_bins_charge_more() -> None:
    # E (3 GPUs) and F (5 GPUs), 10 minutes, due by the end of term 0, best-fit
    # placement (no Eq. 6): charged 3 + 5 = 8 they share term 0; the artifact
    # charges bins 4 + 8 > 8 and refuses F. G (1 GPU, 19 minutes, due at 20):
    # one term by the trace, but its estimate 21 needs two -> refused.
    pair = [_slo("E", 3, 10.0, 20.0), _slo("F", 5, 10.0, 20.0)]
    g = [_slo("G", 1, 19.0, 20.0)]
    for jobs, ours_admits, artifact_admits in ((pair, 2, 1), (g, 1, 0)):
        ours = Chronus(mode="greedy", placement="best-fit", admission_check="reserved")
        _run(jobs, ours)
        art = Chronus(
            mode="greedy", placement="best-fit", admission_check="reserved", estimate="artifact"
        )
        _run(jobs, art)
        assert ours.ledger.counts["admitted"] == ours_admits
        assert art.ledger.counts["admitted"] == artifact_admits


def test_every_term_releases_the_running_jobs() -> None:
    # A best-effort job of 4 GPUs and 50 minutes, 0.5 x (1 + 2) = 1.5 minutes per
    # start. Released and restarted at 20 and 40: 50 + 3 x 1.5 = 54.5, ending at
    # 54.5 with 2 preemptions; kept running, 50 + 1.5 = 51.5.
    x = [SimJob("X", 0.0, 4, 50.0)]
    assert _run(x, Chronus(mode="greedy", term_release="all"), start_overhead=0.5)["X"] == (
        0.0,
        54.5,
        2,
    )
    assert _run(x, Chronus(mode="greedy"), start_overhead=0.5)["X"] == (0.0, 51.5, 0)


@pytest.mark.parametrize("placement", ["pool", "best-fit"])
def test_pool_placement_never_leaves_a_job_waiting_while_gpus_are_free(placement: str) -> None:
    # Two servers; shortest first: P (5 GPUs, 10 min) on server 0, Q (5, 30 min)
    # on server 1; R (6 GPUs, 40 min) fits only split 3 + 3: pool starts it at 0,
    # best fit waits for P to end (10).
    jobs = [SimJob("P", 0.0, 5, 10.0), SimJob("Q", 0.0, 5, 30.0), SimJob("R", 0.0, 6, 40.0)]
    policy = Chronus(mode="greedy", placement=placement, placement_table=False)
    out = simulate(Workload.of(jobs, "t"), ClusterSpec.uniform(2, 8), policy)
    start = by_id(out)["R"][0]
    assert start == (0.0 if placement == "pool" else 10.0)


def _artifact(**options: object) -> Chronus:
    settings: dict[str, object] = {"admission_check": "reserved", **options}
    return Chronus(
        mode="greedy",
        placement="pool",
        placement_table=False,
        queue="artifact",
        **settings,  # type: ignore[arg-type]
    )


def test_the_5_minute_pass_serves_the_smallest_remaining_gpu_time_first() -> None:
    # Best effort, all at 0. Estimates (x (1 + (1 + log2 g) / 40) x 1.1, truncated):
    # b (4 GPUs, 100 min) 118 -> 472 GPU-min; c (8, 10) 12 -> 96; d (2, 40) 46 -> 92.
    # The pass takes d (2 GPUs), skips c (8 > 6 free), takes b (4): d ends at 40, b at
    # 100, then c runs 100-110. Our default (shortest remaining first) runs c first.
    jobs = [SimJob("b", 0.0, 4, 100.0), SimJob("c", 0.0, 8, 10.0), SimJob("d", 0.0, 2, 40.0)]
    assert _run(jobs, _artifact()) == {
        "b": (0.0, 100.0, 0),
        "c": (100.0, 110.0, 0),
        "d": (0.0, 40.0, 0),
    }
    ours = _run(jobs, Chronus(mode="greedy", placement="pool", placement_table=False))
    assert ours == {"b": (10.0, 110.0, 0), "c": (0.0, 10.0, 0), "d": (10.0, 50.0, 0)}


def test_the_odd_minute_fill_serves_the_largest_first() -> None:
    # x (8 GPUs, 6 min) runs 0-6. b1 (6 GPUs, 100 min, estimate 119 -> 714 GPU-min)
    # and b2 (6 GPUs, 10 min, estimate 11 -> 66) arrive at 1, join the queue at the
    # pass of minute 5 (no room). At 6 nothing runs (even minute); the fill of
    # minute 7 sorts ascending: b1 first (7-107), b2 when b1 ends (107, odd: 107-117).
    jobs = [SimJob("x", 0.0, 8, 6.0), SimJob("b1", 1.0, 6, 100.0), SimJob("b2", 1.0, 6, 10.0)]
    assert _run(jobs, _artifact()) == {
        "x": (0.0, 6.0, 0),
        "b1": (7.0, 107.0, 0),
        "b2": (107.0, 117.0, 0),
    }


def test_a_short_unguaranteed_job_is_forced_in_before_the_term_ends() -> None:
    # y (best effort, 8 GPUs, 100 min) runs from 0. U (4 GPUs, 5 min, due at 11)
    # arrives at 5: refused (its deadline lies before the next term, 20), but it
    # can finish by 20: forced in at 5, preempting y; y resumes at the pass of 10
    # (95 minutes left: ends at 105). Without the option U waits for y: 100-105.
    jobs = [SimJob("y", 0.0, 8, 100.0), _slo("U", 4, 5.0, 11.0, submit=5.0)]
    assert _run(jobs, _artifact(force_short=True)) == {
        "y": (0.0, 105.0, 1),
        "U": (5.0, 10.0, 0),
    }
    assert _run(jobs, _artifact()) == {"y": (0.0, 100.0, 0), "U": (100.0, 105.0, 0)}


def test_terms_lie_late_while_an_unguaranteed_job_waits() -> None:
    # All at 0, terms counted from 20. A (8 GPUs, 20 min, due at 100): its latest
    # free term, term 3 -> admitted. U (due at 25) cannot finish a term by 25 ->
    # refused, and U2 (due at 45) after it in the batch -> refused. The pass of 0
    # runs U (unguaranteed before guaranteed). At 20 U2 waits, so the artifact's
    # selection moves A's term 0 to its latest free term: U2 runs 20-40, A 40-60.
    # The reward selection runs A at once (20-40) and U2 after (40-60).
    jobs = [_slo("A", 8, 20.0, 100.0), _slo("U", 8, 20.0, 25.0), _slo("U2", 8, 20.0, 45.0)]
    late = _run(jobs, _artifact(selection="artifact"))
    early = _run(jobs, _artifact())
    assert (late["U"], late["U2"], late["A"]) == ((0.0, 20.0, 0), (20.0, 40.0, 0), (40.0, 60.0, 0))
    assert (early["A"], early["U2"]) == ((20.0, 40.0, 0), (40.0, 60.0, 0))


def _soft(name: str, gpus: int, work: float, steps: tuple[float, ...]) -> SimJob:
    deadlines = tuple(zip(steps, (100.0, 50.0, 20.0)[: len(steps)], strict=True))
    return SimJob(name, 0.0, gpus, work, deadlines=deadlines, job_type="soft")


@pytest.mark.parametrize(("soft", "admitted"), [(False, 3), (True, 2)])
def test_batch_admission_keeps_a_refused_job_in_the_rest_of_its_batch(
    soft: bool, admitted: int
) -> None:
    # One batch at 0; windows count terms from 20. Each job: 8 GPUs, 10 min,
    # estimate int(10 x 1.1 x 1.1) = 12 -> one term. A due at 60 (window 2),
    # B at 40 (window 1), C at 40, D at 100 (window 4). Packing, most GPUs, least
    # slack first, latest terms first: B takes term 0, C finds term 0 full:
    # refused. A strict C stays in the batch at the window the binary search
    # finds: 2 fails (B, A take terms 0, 1), 3 packs; D then packs (B 0, A 1,
    # C 2, D 3): admitted. A soft C stays at its first deadline, where it fails
    # again: D is refused. The "reserved" check refuses D in both cases.
    c = _soft("C", 8, 10.0, (40.0, 60.0)) if soft else _slo("C", 8, 10.0, 40.0)
    jobs = [_slo("A", 8, 10.0, 60.0), _slo("B", 8, 10.0, 40.0), c, _slo("D", 8, 10.0, 100.0)]
    batch = _artifact(admission_check="batch", estimate="artifact")
    _run(jobs, batch)
    assert _verdicts(batch) == (admitted, 4 - admitted)
    reserved = _artifact(estimate="artifact")
    _run(jobs, reserved)
    assert _verdicts(reserved) == (2, 2)


def test_batch_admission_frees_the_terms_of_a_finished_job() -> None:
    # J (8 GPUs, 2 min, due at 100) is admitted at 0 into its latest term
    # (window 4: terms 20-100, the last 80-100), runs at once and ends at 2.
    # K (8 GPUs, 60 min, estimate int(60 x 1.21) = 72 -> 4 terms, due at 100)
    # arrives at 5: it needs every term of 20-100. The artifact packs the jobs
    # guaranteed since the last selection again, J no longer among them: K is
    # admitted. The "reserved" check still holds J's term: K is refused.
    jobs = [_slo("J", 8, 2.0, 100.0), _slo("K", 8, 60.0, 100.0, submit=5.0)]
    batch = _artifact(admission_check="batch", estimate="artifact")
    _run(jobs, batch)
    assert _verdicts(batch) == (2, 0)
    reserved = _artifact(estimate="artifact")
    _run(jobs, reserved)
    assert _verdicts(reserved) == (1, 1)


@pytest.mark.parametrize(
    ("fill_overhead", "ends"), [(False, (109.0, 119.0)), (True, (111.0, 123.0))]
)
def test_the_odd_minute_fill_owes_no_start_overhead(
    fill_overhead: bool, ends: tuple[float, float]
) -> None:
    # 8-GPU jobs owe 0.5 x (1 + 3) = 2 minutes a start. x (6 min) starts in the
    # pass of 0: 0-8. b1 (100 min) and b2 (10 min) arrive at 1; the fill of 9
    # starts b1 (ascending emergence: -121 x 8 before -12 x 8), free of the
    # overhead: 9-109; b2 in the fill of 109: 109-119. Charged at every start:
    # b1 9-111, b2 in the fill of 111: 111-123.
    jobs = [SimJob("x", 0.0, 8, 6.0), SimJob("b1", 1.0, 8, 100.0), SimJob("b2", 1.0, 8, 10.0)]
    got = _run(jobs, _artifact(fill_overhead=fill_overhead), start_overhead=0.5)
    assert got["x"] == (0.0, 8.0, 0)
    assert (got["b1"][:2], got["b2"][:2]) == ((9.0, ends[0]), (ends[0], ends[1]))


@pytest.mark.parametrize(
    ("start_credit", "b1", "b2"),
    [(True, (9.0, 105.0), (105.0, 117.0)), (False, (9.0, 109.0), (109.0, 119.0))],
)
def test_the_odd_minute_fill_counts_progress_from_the_last_pass(
    start_credit: bool, b1: tuple[float, float], b2: tuple[float, float]
) -> None:
    # As above (fill starts owe no overhead). The pass of 5 updated b1 while it
    # waited; the fill of 9 starts it without updating it, so its progress
    # counts from 5: 4 minutes it did not run, 100 - 4 = 96 left, ends at 105.
    # At 105, a pass minute, the pass starts b2 with the overhead: 105 + 10 + 2
    # = 117. Without the credit: b1 9-109, b2 in the fill of 109 (free): 119.
    jobs = [SimJob("x", 0.0, 8, 6.0), SimJob("b1", 1.0, 8, 100.0), SimJob("b2", 1.0, 8, 10.0)]
    policy = _artifact(fill_overhead=False, start_credit=start_credit)
    got = _run(jobs, policy, start_overhead=0.5)
    assert (got["b1"][:2], got["b2"][:2]) == (b1, b2)


@pytest.mark.parametrize(
    ("start_credit", "g_end", "y_end"), [(True, 57.0, 147.0), (False, 62.0, 153.0)]
)
def test_a_job_the_selection_starts_counts_progress_from_the_last_pass(
    start_credit: bool, g_end: float, y_end: float
) -> None:
    # 8-GPU jobs owe 2 minutes a start (0.5 x (1 + 3)); fill starts owe none.
    # y (best effort, 100 min) starts in the pass of 0. G (SLO, 40 min, due 201)
    # arrives at 1 and is admitted at 5 (estimate 40 x 1.1 x 1.1 = 48: three
    # terms from 20 before its window of 9); it waits while y runs. At 20 the
    # selection (no job refused: term 0 maximized) starts G and releases y.
    # The selection sets no progress time, so G counts from the pass of 15:
    # 40 + 2 - 5 = 37 more minutes, 20-57 (kept at 40: selected again). y then
    # restarts in the fill of 57 (free; credited 2 minutes since the pass of
    # 55) and at each boundary's pass from 60 to 140 (5 restarts): work
    # 100 + 6 x 2 = 112, of which 20 by 20 and 5 by 60 (3 run + 2 credited),
    # so it ends at 60 + 87 = 147. Without the credit G runs 20-62, y restarts
    # in the fill of 63 (free) and at 80-140 (4): 100 + 5 x 2 = 110, of which
    # 20 by 20 and 17 by 80: ends at 80 + 73 = 153.
    g = SimJob("G", 1.0, 8, 40.0, deadlines=((201.0, 100.0),), job_type="strict")
    policy = _artifact(
        term_release="all",
        start_credit=start_credit,
        fill_overhead=False,
        admission_check="batch",
        estimate="artifact",
    )
    got = _run([SimJob("y", 0.0, 8, 100.0), g], policy, start_overhead=0.5)
    assert got["G"][:2] == (20.0, g_end)
    assert got["y"][1] == y_end


def test_the_pass_serves_the_earlier_submission_first_among_equals() -> None:
    # Two best-effort jobs of 8 GPUs and 10 minutes (the same emergence), e
    # submitted at 1, l at 3. The pass of 5 starts e (best_func sorts minus the
    # submit time descending): 5-15; l in the fill of 15: 15-25.
    jobs = [SimJob("e", 1.0, 8, 10.0), SimJob("l", 3.0, 8, 10.0)]
    assert _run(jobs, _artifact()) == {"e": (5.0, 15.0, 0), "l": (15.0, 25.0, 0)}


@pytest.mark.parametrize(("submit", "guaranteed"), [(12.0, False), (20.0, True)])
def test_a_forced_job_is_guaranteed_only_if_submitted_in_this_term(
    submit: float, guaranteed: bool
) -> None:
    # y (best effort, 8 GPUs, 100 min) runs from 0. U (4 GPUs, 10 min, due 15
    # after its submission) is refused (no whole term before its deadline).
    # Submitted at 12: at the pass of 15 it cannot finish by 20 (10 > 5); at 20
    # y is released and U forced in: submitted in the last term, it stays
    # unguaranteed. Submitted at 20: forced in at 20, in this term: guaranteed.
    u = SimJob("U", submit, 4, 10.0, deadlines=((submit + 15.0, 100.0),), job_type="strict")
    policy = _artifact(force_short=True, term_release="all")
    got = _run([SimJob("y", 0.0, 8, 100.0), u], policy)
    assert got["U"][:2] == (20.0, 30.0)
    assert (1 in policy.queue.force_accepted) is guaranteed


@pytest.mark.parametrize(("layout", "admitted"), [("selected", 1), ("late", 2)])
def test_late_layout_leaves_the_near_terms_to_new_jobs(layout: str, admitted: int) -> None:
    # y (best effort, 8 GPUs) runs from 0 (the pass serves best effort before
    # guaranteed jobs). A (8 GPUs, 30 min: estimate int(30 x 1.21) = 36, two
    # terms; due at 200) is admitted at 0. At 20 the selection gives A terms
    # 20-40 and 40-60 (the earliest: "selected"); "late" keeps 20-40 and moves
    # the other to the last term before 200, 180-200. B (8 GPUs, 10 min: one
    # term; due at 60) arrives at 25: its one term, 40-60, is A's under
    # "selected" (refused), free under "late" (admitted).
    jobs = [
        SimJob("y", 0.0, 8, 500.0),
        _slo("A", 8, 30.0, 200.0),
        _slo("B", 8, 10.0, 60.0, submit=25.0),
    ]
    policy = _artifact(
        admission_check="batch", estimate="artifact", term_release="all", cache_layout=layout
    )
    _run(jobs, policy)
    assert _verdicts(policy) == (admitted, 2 - admitted)


@pytest.mark.parametrize(
    ("search_rows", "frozen"),
    [(None, set()), (5, set()), (3, {"0"}), (2, {"0", "3"}), (1, {"0", "3", "2"})],
)
def test_search_rows_freezes_the_biggest_latest_cached_jobs(
    search_rows: int | None, frozen: set[str]
) -> None:
    # The artifact's selection (time_aware_with_lease.py, flush_lease_jobs's
    # lease_info_collection) keeps at most MAX_SEARCH_JOB rows (job x reward step); the rows
    # are visited by most binned GPUs, then the latest window (terms to the
    # step's deadline), then the job id; a job with a reservation (cache) is
    # frozen, all its rows out, until the excess rows are out. At minute 0,
    # 20-minute terms, index: trace id, GPUs (binned), steps -> windows, cache:
    #   0: "10", 8, (100, 200) -> 5, 10, cached     rows 2
    #   1: "11", 8, (400,)     -> 20,    not cached  rows 1
    #   2: "12", 1, (60,)      -> 3,     cached      rows 1
    #   3: "13", 3 (4), (300,) -> 15,    cached      rows 1
    # Five rows, visited: 11 (w 20), 10 (w 10), 10 (w 5), 13 (w 15), 12 (w 3).
    # 3 rows kept (excess 2): 11 has no cache and stays; 10 is frozen (2 rows).
    # 2 kept (excess 3): also 13. 1 kept (excess 4): also 12; 11 never is.
    specs = [
        ("10", 8, (100.0, 200.0)),
        ("11", 8, (400.0,)),
        ("12", 1, (60.0,)),
        ("13", 3, (300.0,)),
    ]
    pending = {}
    for index, (tid, gpus, due) in enumerate(specs):
        job = SimJob(tid, 0.0, gpus, 10.0, deadlines=tuple((t, 100.0) for t in due))
        pending[index] = SimpleNamespace(index=index, job=job)
    view = SimpleNamespace(now=0.0, pending=pending, running={})
    cache = {0: [1], 2: [1], 3: [2]}
    lease_jobs = [SimpleNamespace(id=str(i)) for i in pending]
    got = frozen_jobs(view, lease_jobs, cache, search_rows, 20.0)  # type: ignore[arg-type]
    assert set(got) == frozen


@pytest.mark.parametrize("bad", [0, -3, True, 2.5])
def test_search_rows_must_be_a_positive_int(bad: object) -> None:
    with pytest.raises(ValueError, match="search_rows"):
        Chronus(search_rows=bad)  # type: ignore[arg-type]


def test_the_term_0_sign_follows_the_artifacts_count_of_unguaranteed_jobs() -> None:
    # number_of_accepted (time_aware_with_lease.py: flush_lease_jobs and
    # flush_event_jobs_with_cache_solution): at a selection's end, the jobs of the unguaranteed class; then +1 per SLO
    # arrival refused. Jobs: 0 guaranteed, 1 an SLO job that arrived since the
    # last pass (not in the queue yet), 2 lowest, 3 best effort. None counts:
    # the next selection maximizes term 0 (counting job 1 would minimize it).
    jobs = {
        i: SimpleNamespace(index=i, job=SimJob(str(i), 0.0, 1, 10.0, deadlines=d))
        for i, d in enumerate((((50.0, 100.0),), ((50.0, 100.0),), ((50.0, 100.0),), ()))
    }
    view = SimpleNamespace(now=20.0, pending=jobs, running={})
    policy = _artifact(selection="artifact")
    queue, ledger = policy.queue, policy.ledger
    ledger.guaranteed, queue.lowest, queue.arriving = {0}, {2}, [jobs[1]]
    queue.count_unaccepted(view)  # type: ignore[arg-type]
    assert ledger.unaccepted == 0
    assert not queue.minimize_first(view)  # type: ignore[arg-type]
    assert queue.unguaranteed_wait(view)  # type: ignore[arg-type]
    # Job 1 enters the queue refused: one unguaranteed job, the next minimizes.
    queue.arriving = []
    queue.count_unaccepted(view)  # type: ignore[arg-type]
    assert ledger.unaccepted == 1
    assert queue.minimize_first(view)  # type: ignore[arg-type]
    # A job that overran its estimate joins the class too (flush_running_jobs).
    queue.overran = {3}
    queue.count_unaccepted(view)  # type: ignore[arg-type]
    assert ledger.unaccepted == 2
