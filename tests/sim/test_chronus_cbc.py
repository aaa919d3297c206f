"""The Chronus artifact's selection MILP solved by CBC (``sim/policies/chronus/artifact/cbc.py``).

Each case runs on both solvers of the model: PuLP's CBC binary
(``chronus_cbc.select``) and python-mip's CBC library
(``chronus_mip.select``, the artifact's build; skipped when the ``parity``
extra is not installed). Expected values are computed by hand in the
comments, or by a brute force written here from the model's statement
(every step choice and every set of terms), not from the modules.
"""

from __future__ import annotations

import itertools
import sys
from collections.abc import Callable
from types import SimpleNamespace

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from scheduling_opt.lease import LeaseInput
from scheduling_opt.model import Job, RewardStep
from scheduling_opt.sim import SimJob
from scheduling_opt.sim.policies.chronus.artifact import cbc as chronus_cbc
from scheduling_opt.sim.policies.chronus.artifact import mip as chronus_mip
from scheduling_opt.sim.policies.chronus.artifact import selection as artifact_selection
from scheduling_opt.sim.policies.chronus.artifact.cbc import Row, Selection
from scheduling_opt.sim.policies.chronus.policy import Chronus

_MIP = pytest.mark.skipif(
    not chronus_mip.mip_available(),
    reason="python-mip is not installed (the 'parity' extra, Python < 3.12)",
)
Solver = Callable[..., Selection | None]
SOLVERS = [
    pytest.param(chronus_cbc.select, id="pulp-cbc"),
    pytest.param(chronus_mip.select, id="mip-cbc", marks=_MIP),
]


@pytest.mark.parametrize("select", SOLVERS)
def test_a_near_deadline_takes_the_first_term(select: Solver) -> None:
    # Two terms of 2 GPUs. b (2 GPUs, one term, window 1) can only hold term 0;
    # a (2 GPUs, one term, window 2) then only term 1. Objective 10 + 10, and
    # term 0 holds b's 2 of at most 2 GPUs: + 2 / 2 = 21.
    sel = select(
        [Row("a", 2, 1, 2, 10.0, 0), Row("b", 2, 1, 1, 10.0, 0)], [2, 2], minimize_first=False
    )
    assert sel is not None
    assert (sel.terms, sel.steps, sel.objective, sel.optimal) == (
        {"a": (1,), "b": (0,)},
        {"a": 0, "b": 0},
        21.0,
        True,
    )


@pytest.mark.parametrize("select", SOLVERS)
@pytest.mark.parametrize(("minimize", "first"), [(False, True), (True, False)])
def test_the_adaptive_objective_fills_or_empties_term_0(
    select: Solver, minimize: bool, first: bool
) -> None:
    # One job, one term of work, window 3, 4 GPUs free per term: maximizing
    # term 0's GPUs puts it there (10 + 1/4); minimizing puts it later (10 - 0).
    sel = select([Row("a", 1, 1, 3, 10.0, 0)], [4, 4, 4], minimize_first=minimize)
    assert sel is not None
    assert (0 in sel.terms["a"]) is first
    assert len(sel.terms["a"]) == 1
    assert sel.objective == (10.25 if first else 10.0)


@pytest.mark.parametrize("select", SOLVERS)
def test_a_step_out_of_reach_gives_way_to_a_later_one(select: Solver) -> None:
    # a needs 2 terms: its step 0 (window 1, value 10) cannot hold them, its
    # step 1 (window 3, value 8) can: 8, and 2 terms among 0-2.
    rows = [Row("a", 1, 2, 1, 10.0, 0), Row("a", 1, 2, 3, 8.0, 1)]
    sel = select(rows, [1, 1, 1], minimize_first=True)
    assert sel is not None
    assert sel.steps == {"a": 1}
    assert len(sel.terms["a"]) == 2
    assert set(sel.terms["a"]) <= {0, 1, 2}


@pytest.mark.parametrize("select", SOLVERS)
def test_capacity_pushes_a_job_to_its_lower_step(select: Solver) -> None:
    # One GPU per term. a (window 1) must hold term 0. b's step 0 (window 1,
    # 10) would need term 0 too: b takes step 1 (window 2, 5) in term 1.
    # Objective 10 + 5 + a's GPU in term 0 (1/1) = 16.
    rows = [Row("a", 1, 1, 1, 10.0, 0), Row("b", 1, 1, 1, 10.0, 0), Row("b", 1, 1, 2, 5.0, 1)]
    sel = select(rows, [1, 1], minimize_first=False)
    assert sel is not None
    assert (sel.steps, sel.terms, sel.objective) == ({"a": 0, "b": 1}, {"a": (0,), "b": (1,)}, 16.0)


@pytest.mark.parametrize("select", SOLVERS)
def test_no_selection_when_every_job_cannot_keep_a_step(select: Solver) -> None:
    rows = [Row("a", 1, 1, 1, 10.0, 0), Row("b", 1, 1, 1, 10.0, 0)]
    assert select(rows, [1, 5], minimize_first=False) is None
    assert select(rows, [0, 0], minimize_first=False) is None


@pytest.mark.parametrize("select", SOLVERS)
@pytest.mark.parametrize(("passed", "feasible"), [(-1, False), (0, True)])
def test_a_passed_step_reaches_into_the_previous_row(
    select: Solver, passed: int, feasible: bool
) -> None:
    # Three terms (W = 3), GPUs free 1, 0, 1. a: 1 GPU, one term, window 3:
    # term 0 or 2. b: its step 0 has passed (window -1 or 0), step 1 has window
    # 1, so b holds term 0 and a must take term 2 (flat X index 2). b's step-0
    # row is row 1; the artifact's "nothing past the window" range is flat
    # [1 x 3 + window, 6): with window -1 it starts at 2 and forbids a's term
    # 2 (solver.py 384-385): no selection. With window 0 it starts at 3: a in
    # term 2, b in term 0.
    rows = [Row("a", 1, 1, 3, 10.0, 0), Row("b", 1, 1, passed, 10.0, 0), Row("b", 1, 1, 1, 5.0, 1)]
    sel = select(rows, [1, 0, 1], minimize_first=False)
    if feasible:
        assert sel is not None
        assert sel.terms == {"a": (2,), "b": (0,)}
    else:
        assert sel is None


@pytest.mark.parametrize("select", SOLVERS)
def test_a_passed_first_row_wraps_to_the_last_rows_terms(select: Solver) -> None:
    # Two terms (W = 2) of 2 GPUs, rows: a step 0 (passed: window -1), a step
    # 1 (window 2, value 5), b step 0 (window 2, value 10); 6 flat X indices.
    # Row 0's "past the window" range is range(-1, 2): X[-1], Python's last
    # index 5 (b's term 1), then row 0's own terms. So b must hold term 0,
    # and a (its step 1) takes term 1 to keep term 0 light: minimizing term
    # 0's GPUs, 5 + 10 - 1/2 = 14.5. Without the wrap both would take term 1
    # and score 15.
    rows = [Row("a", 1, 1, -1, 10.0, 0), Row("a", 1, 1, 2, 5.0, 1), Row("b", 1, 1, 2, 10.0, 0)]
    sel = select(rows, [2, 2], minimize_first=True)
    assert sel is not None
    assert (sel.steps, sel.terms, sel.objective) == ({"a": 1, "b": 0}, {"a": (1,), "b": (0,)}, 14.5)


@pytest.mark.parametrize("select", SOLVERS)
@pytest.mark.parametrize(
    ("rows", "free", "match"),
    [
        ([], [1], "at least one row"),
        ([Row("a", 0, 1, 1, 1.0, 0)], [1], "gpus and need"),
        ([Row("a", 1, 0, 1, 1.0, 0)], [1], "gpus and need"),
        ([Row("a", 1, 1, 1, 1.0, 1)], [1], "start at step 0"),
        ([Row("a", 1, 1, 3, 1.0, 0)], [1, 1], "shorter than the largest window"),
    ],
)
def test_bad_rows_are_named(select: Solver, rows: list[Row], free: list[int], match: str) -> None:
    with pytest.raises(ValueError, match=match):
        select(rows, free, minimize_first=False)


def _brute(rows: list[Row], free: list[int], minimize: bool) -> float | None:
    """The best objective over every step choice and term set, or None (the model by enumeration)."""
    width = max(max(r.window for r in rows), 1)
    jobs: dict[str, list[int]] = {}
    for i, r in enumerate(rows):
        jobs.setdefault(r.job, []).append(i)
    # Flat X index f = i * width + k is forced to 0 by row i's own window
    # (k >= window) or by a later row r whose window is negative and whose
    # flat "past the window" range starts at r * width + window <= f. A
    # range starting below 0 also covers the last flat indices, from
    # n * width + start on (Python's negative indexing).
    total = len(rows) * width
    forbidden = {
        i * width + k
        for i, r in enumerate(rows)
        for k in range(width)
        if k >= r.window
        or any(
            q.window < 0 and j * width + q.window <= i * width + k
            for j, q in enumerate(rows)
            if j > i
        )
    }
    for j, q in enumerate(rows):
        if j * width + q.window < 0:
            forbidden.update(range(total + j * width + q.window, total))
    best: float | None = None
    for picks in itertools.product(*jobs.values()):
        options = []
        for i in picks:
            r = rows[i]
            allowed = [k for k in range(width) if i * width + k not in forbidden]
            options.append([(i, terms) for terms in itertools.combinations(allowed, r.need)])
        for choice in itertools.product(*options):
            load = [0] * width
            for i, terms in choice:
                for k in terms:
                    load[k] += rows[i].gpus
            if any(load[k] > free[k] for k in range(width)):
                continue
            value = sum(rows[i].value for i, _ in choice)
            value += (-1 if minimize else 1) * load[0] / max(free)
            best = value if best is None else max(best, value)
    return best


@st.composite
def _instances(draw: st.DrawFn) -> tuple[list[Row], list[int], bool]:
    rows: list[Row] = []
    for j in range(draw(st.integers(1, 3))):
        gpus, need = draw(st.sampled_from([1, 2, 4])), draw(st.integers(1, 2))
        for step in range(draw(st.integers(1, 2))):
            rows.append(Row(f"j{j}", gpus, need, draw(st.integers(-2, 3)), (10.0, 5.0)[step], step))
    width = max(max(r.window for r in rows), 1)
    free = draw(st.lists(st.integers(0, 5), min_size=width, max_size=width))
    return rows, free, draw(st.booleans())


@pytest.mark.parametrize("select", SOLVERS)
@settings(max_examples=60, deadline=None)
@given(_instances())
def test_cbc_agrees_with_brute_force(
    select: Solver, case: tuple[list[Row], list[int], bool]
) -> None:
    rows, free, minimize = case
    best = _brute(rows, free, minimize)
    sel = select(rows, free, minimize_first=minimize)
    if best is None:
        assert sel is None
        return
    assert sel is not None
    assert sel.optimal
    assert sel.objective == pytest.approx(best, abs=1e-9)
    again = select(rows, free, minimize_first=minimize)
    assert again == sel  # deterministic: no wall-clock stop


@pytest.mark.parametrize("select", SOLVERS)
def test_a_node_limit_still_answers_a_feasible_selection_or_none(select: Solver) -> None:
    rows = [Row(f"j{j}", 1 + j % 3, 1 + j % 2, 4 + j % 3, 10.0, 0) for j in range(12)]
    sel = select(rows, [6] * 6, minimize_first=True, max_nodes=1)
    if sel is not None:
        load = [0] * 6
        for j, terms in sel.terms.items():
            row = rows[int(j[1:])]
            assert len(terms) == row.need
            assert max(terms) < row.window
            for k in terms:
                load[k] += row.gpus
        assert max(load) <= 6


def _view(
    specs: list[tuple[str, int, float, float]],
    cache: dict[int, list[int]],
    selection: str = "artifact-cbc",
) -> tuple[Chronus, SimpleNamespace, LeaseInput]:
    pending = {}
    jobs = []
    for index, (tid, gpus, work, due) in enumerate(specs):
        job = SimJob(tid, 0.0, gpus, work, deadlines=((due, 100.0),), job_type="strict")
        pending[index] = SimpleNamespace(index=index, job=job, remaining=lambda now, w=work: w)
        jobs.append(Job(str(index), gpus, gpus, work, deadlines=(RewardStep(due, 100.0),)))
    view = SimpleNamespace(now=0.0, pending=pending, running={}, capacity=(8,))
    policy = Chronus(mode="greedy", selection=selection, search_rows=1, admission_check="batch")
    policy.ledger.guaranteed = set(pending)
    policy.ledger.cache = cache
    return policy, view, LeaseInput(jobs, 8, 20.0, require_all=True)


def _select_by_rows(policy: Chronus, view: SimpleNamespace, inp: LeaseInput) -> bool:
    """The artifact's MILP selects the term (False: CBC found no feasible selection)."""
    decision = policy.selection.rows.select(view, inp, policy.model.remaining)  # type: ignore[arg-type]
    return decision is not None


@pytest.mark.parametrize("selection", ["artifact-cbc", pytest.param("artifact-mip", marks=_MIP)])
@pytest.mark.parametrize("reserved", [0, 3])
def test_a_frozen_job_keeps_its_reservation_and_the_rest_fit_around_it(
    reserved: int, selection: str
) -> None:
    # At minute 0, 20-minute terms, one 8-GPU server. Job 0 ("10": 8 GPUs, one
    # term of work, due 100: window 5) holds term `reserved` from the last
    # selection; job 1 ("11": 8 GPUs, two terms, due 60: window 3) holds none.
    # Two rows, one allowed: job 0 is visited first (same GPUs, later window)
    # and frozen. The MILP sees job 1 alone, with term `reserved` full.
    # reserved 0: job 0 runs now; job 1 takes terms 1 and 2 (its only room).
    # reserved 3: job 0 waits; job 1 takes term 0 (maximized: no unguaranteed
    # job waits) and one of terms 1, 2.
    policy, view, inp = _view(
        [("10", 8, 20.0, 100.0), ("11", 8, 40.0, 60.0)], {0: [reserved]}, selection
    )
    assert _select_by_rows(policy, view, inp)
    ledger = policy.ledger
    assert ledger.cache[0] == [reserved]
    if reserved == 0:
        assert ledger.selected == {0}
        assert ledger.cache[1] == [1, 2]
    else:
        assert ledger.selected == {1}
        assert ledger.cache[1][0] == 0
        assert len(ledger.cache[1]) == 2
        assert ledger.cache[1][1] in (1, 2)
    assert ledger.counts["frozen"] == 1


def _lists_view(
    search_rows: int | None,
) -> tuple[Chronus, SimpleNamespace, LeaseInput]:
    # A boundary at minute 0: five guaranteed 1-GPU jobs on 8 GPUs, one row
    # each (20 minutes of work, due 100: window 5). Pending: index 0 ("30",
    # emergence -50, submitted at 2), 3 ("40", -80, at 0), 4 ("5", -50, at 1).
    # Running: index 1 ("10", started 8th), 2 ("20", started 4th).
    specs = {0: ("30", 2.0, False), 1: ("10", 0.0, True), 2: ("20", 0.0, True)}
    specs |= {3: ("40", 0.0, False), 4: ("5", 1.0, False)}
    pending, running, jobs = {}, {}, []
    for index, (tid, submit, runs) in specs.items():
        job = SimJob(tid, submit, 1, 20.0, deadlines=((100.0, 100.0),), job_type="strict")
        st = SimpleNamespace(index=index, job=job, remaining=lambda now: 20.0)
        (running if runs else pending)[index] = st
        jobs.append(Job(str(index), 1, 1, 20.0, deadlines=(RewardStep(100.0, 100.0),)))
    view = SimpleNamespace(now=0.0, pending=pending, running=running, capacity=(8,))
    policy = Chronus(
        mode="greedy",
        selection="artifact-cbc",
        search_rows=search_rows,
        admission_check="batch",
        queue="artifact",
    )
    policy.ledger.guaranteed = set(specs)
    policy.queue.emergence = {0: -50.0, 3: -80.0, 4: -50.0}
    policy.queue.start_seq = {1: 7, 2: 3}
    return policy, view, LeaseInput(jobs, 8, 20.0, require_all=True)


@pytest.mark.parametrize(
    ("search_rows", "order"),
    [(None, ["40", "5", "30", "20", "10"]), (4, ["5", "10", "20", "30", "40"])],
)
def test_an_uncapped_milp_takes_the_artifacts_list_order(
    monkeypatch: pytest.MonkeyPatch, search_rows: int | None, order: list[str]
) -> None:
    # abstract_lease_list reads pending_jobs + running_jobs after the release.
    # The pending list, last sorted by the fill (emergence ascending) over the
    # pass's order (earlier submission first): "40" (-80), "5" (-50, at 1),
    # "30" (-50, at 2); then the running list in start order: "20", "10".
    # Over the cap (5 rows > 4) the rows are sorted by id instead: 5, 10, ...
    # No job holds a reservation, so none is frozen. All five fit term 0 and
    # the objective maximizes it, so all start, in row order.
    policy, view, inp = _lists_view(search_rows)
    seen: list[list[str]] = []
    values: set[float] = set()
    real = artifact_selection.select_rows

    def spy(rows: list[Row], free: list[int], **options: object) -> Selection | None:
        seen.append([view_ids[row.job] for row in rows])
        values.update(row.value for row in rows)
        return real(rows, free, **options)  # type: ignore[arg-type]

    view_ids = {str(i): st.job.id for i, st in {**view.pending, **view.running}.items()}
    monkeypatch.setattr(artifact_selection, "select_rows", spy)
    assert _select_by_rows(policy, view, inp)
    assert seen == [order]
    assert [view_ids[str(i)] for i in policy.ledger.select_order] == order
    # Each job's reward of 100 is the trace's 10 as our loader scales it: the
    # MILP takes the artifact's 10 (its weight against the term-0 term moves
    # CBC's layout: at minute 6,700 of P_MIX2, 87 jobs' terms).
    assert values == {10.0}


def test_artifact_cbc_and_cbc_nodes_are_checked() -> None:
    with pytest.raises(ValueError, match="selection"):
        Chronus(selection="cbc")
    with pytest.raises(ValueError, match="start_credit"):
        Chronus(start_credit=1)  # type: ignore[arg-type]
    for flag in (1, "yes", None):
        with pytest.raises(ValueError, match="artifact_stops"):
            Chronus(selection="artifact-mip", artifact_stops=flag)  # type: ignore[arg-type]
    for bad in (0, True, 1.5):
        with pytest.raises(ValueError, match="cbc_nodes"):
            Chronus(cbc_nodes=bad)  # type: ignore[arg-type]


@_MIP
def test_the_artifacts_stops_still_answer_an_optimal_small_selection() -> None:
    # The near-deadline case again: CBC proves it at once, far inside 1 s.
    rows = [Row("a", 2, 1, 2, 10.0, 0), Row("b", 2, 1, 1, 10.0, 0)]
    sel = chronus_mip.select(rows, [2, 2], minimize_first=False, artifact_stops=True)
    assert sel is not None
    assert (sel.terms, sel.objective, sel.optimal) == ({"a": (1,), "b": (0,)}, 21.0, True)


def test_artifact_mip_without_python_mip_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    # A None entry in sys.modules makes `import mip` fail, installed or not.
    monkeypatch.setitem(sys.modules, "mip", None)
    assert not chronus_mip.mip_available()
    with pytest.raises(ImportError, match=r"scheduling-opt\[parity\]"):
        Chronus(selection="artifact-mip")
    Chronus(selection="artifact-cbc")  # the other selections never need it
