"""Library calls validate at the public boundary with the file reader's rules (issue 17 item 18).

A scheduler passes whatever its state holds. Numpy integers are accepted
wherever plain ints are, and stored as plain ints (int64 arithmetic wraps
silently); booleans and fractions are refused where a count is expected;
a repeated, negative or out-of-range index, a short list, a NaN is an
``InvalidInstanceError`` naming the argument, never an IndexError or a
silent wrap-around. The mckp and allocation calls are pinned in
``test_resource_limits.py``; the policies in ``tests/policies``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

from scheduling_opt.errors import InvalidInstanceError
from scheduling_opt.model import (
    BatchInfo,
    Cluster,
    GpuType,
    Job,
    Placement,
    PlacementRow,
    RewardStep,
    Server,
)

I64 = np.int64
V100 = (GpuType("V100"),)
NODES = Cluster(V100, (Server("n0", "V100", 8), Server("n1", "V100", 8)))
LOANED = Cluster(
    (GpuType("T4"),), tuple(Server(f"i{k}", "T4", 8, "inference", True) for k in range(4))
)


def _reclaim(n: object = 3) -> Any:
    from scheduling_opt.reclaim import ReclaimInput

    rows = Placement((PlacementRow("a", "i0", 2), PlacementRow("a", "i1", 2)))
    return ReclaimInput(LOANED, (Job("a", 1, 4, 60.0),), rows, n)


def _placement() -> Any:
    from scheduling_opt.placement import PlacementInput

    return PlacementInput(NODES, [Job("a", 4, 4, 60.0), Job("b", 6, 6, 60.0)])


# --------------------------------------------------------------------------- numpy integers


def _numpy_cases() -> list[tuple[str, Callable[[], object], object]]:
    from scheduling_opt.batch_size import resume_limit, scale_up, start_limit
    from scheduling_opt.lease import LeaseInput
    from scheduling_opt.placement import (
        PlacementInput,
        consolidated_span,
        place_span,
        potential,
        reward_table,
    )
    from scheduling_opt.scaling import Log2Model

    lease_job = Job("a", 2, 2, 600.0, deadlines=(RewardStep(1200.0, 10),))
    return [
        ("Job.max_workers", lambda: Job("a", I64(1), I64(3), np.float64(60.0)).max_workers, 3),
        ("Server.gpus", lambda: Server("s", "V100", I64(8)).gpus, 8),
        ("PlacementRow.workers", lambda: PlacementRow("a", "s", I64(2)).workers, 2),
        ("BatchInfo.epoch_size", lambda: BatchInfo(I64(100), 8, 4).epoch_size, 100),
        ("ReclaimInput.n_reclaim", lambda: _reclaim(I64(2)).n_reclaim, 2),
        (
            "PlacementInput.workers",
            lambda: PlacementInput(NODES, [Job("e", 1, 4, 60.0)], workers={"e": I64(2)}).workers[
                "e"
            ],
            2,
        ),
        (
            "PlacementInput.search_space",
            lambda: PlacementInput(NODES, [Job("e", 1, 4, 60.0)], search_space=I64(9)).search_space,
            9,
        ),
        ("LeaseInput.capacity", lambda: LeaseInput([lease_job], I64(4), 600.0).capacity, 4),
        ("consolidated_span", lambda: consolidated_span(I64(12), I64(1), np.array([8, 8])), 2),
        (
            "place_span",
            lambda: place_span([(I64(2), 0), (I64(3), 1)], I64(4), I64(2)),
            ((0, 2), (1, 2)),
        ),
        ("reward_table", lambda: reward_table(Log2Model(), None, I64(2), I64(1), I64(1))[1], 2.0),
        ("potential", lambda: potential(_placement(), I64(0)), 4 - 4 / 1.5),
        ("start_limit", lambda: start_limit(I64(512), I64(128)), 128),
        ("scale_up", lambda: scale_up(I64(64), I64(100)), 100),
        ("resume_limit", lambda: resume_limit(I64(64), np.bool_(True)), 32),
    ]


@pytest.mark.parametrize(("name", "call", "expected"), _numpy_cases(), ids=lambda x: str(x)[:30])
def test_numpy_integers_are_accepted_and_stored_as_plain_numbers(
    name: str, call: Callable[[], object], expected: object
) -> None:
    got = call()
    assert got == pytest.approx(expected) if isinstance(expected, float) else got == expected
    if isinstance(expected, int):
        assert type(got) is int, name  # no numpy scalar reaches the solvers


# --------------------------------------------------------------------------- refusals


def _refusals() -> list[tuple[str, Callable[[], object], str]]:
    from scheduling_opt.batch_size import after_epoch, job_points, resume_limit, scale_down
    from scheduling_opt.lease import admit_jobs, hint_terms
    from scheduling_opt.mckp import value_scale
    from scheduling_opt.placement import decide, potential, reward_table, total_rw
    from scheduling_opt.reclaim.local_search import swap_search
    from scheduling_opt.scaling import Log2Model

    lease_job = Job("a", 2, 2, 600.0, deadlines=(RewardStep(1200.0, 10),))
    return [
        # numpy fractions and bools are no counts
        (
            "Job np 1.5",
            lambda: Job("a", np.float64(1.5), 2, 60.0),
            r"^min_workers: must be an integer",
        ),
        (
            "Server np bool",
            lambda: Server("s", "V100", np.bool_(True)),
            r"^gpus: must be an integer",
        ),
        ("n_reclaim 1.5", lambda: _reclaim(np.float64(1.5)), r"^n_reclaim: must be an integer"),
        ("n_reclaim True", lambda: _reclaim(True), r"^n_reclaim: must be an integer"),
        # reclaim: a start that is not a returned set of N_R servers
        ("swap repeated", lambda: swap_search(_reclaim(), [0, 0, 1]), r"^start\[1\]: .* repeated"),
        ("swap -1", lambda: swap_search(_reclaim(), [-1, 0, 1]), r"^start\[0\]: must be >= 0"),
        ("swap 9", lambda: swap_search(_reclaim(), [9, 0, 1]), r"^start\[0\]: server index 9"),
        ("swap short", lambda: swap_search(_reclaim(), [0]), r"^start: must hold n_reclaim = 3"),
        ("swap moves", lambda: swap_search(_reclaim(), [0, 1, 2], -1), r"^max_moves: must be >= 0"),
        # placement: job indices and assignment lists
        ("potential -1", lambda: potential(_placement(), -1), r"^j: must be >= 0"),
        ("potential 5", lambda: potential(_placement(), 5), r"^j: job index 5 is not in 0\.\.1"),
        ("decide short", lambda: decide(_placement(), [None]), r"^assign: must have one entry"),
        ("decide server", lambda: decide(_placement(), [((9, 4),), None]), r"^assign\[0\]\[0\]"),
        ("total_rw -1", lambda: total_rw(_placement(), [((-1, 4),), None]), r"^assign\[0\]\[0\]"),
        (
            "decide repeated",
            lambda: decide(_placement(), [((0, 2), (0, 2)), None]),
            r"^assign\[0\]\[1\]: server index 0 is repeated",
        ),
        ("reward_table k*", lambda: reward_table(Log2Model(), None, 4, 1, 0), r"^k_star: must be"),
        (
            "reward_table -1",
            lambda: reward_table(Log2Model(), None, -1, 1, 1),
            r"^workers: must be",
        ),
        # mckp, lease, batch-size helpers
        ("value_scale nan", lambda: value_scale(np.array([np.nan])), r"^values: must be finite"),
        ("hint elapsed", lambda: hint_terms({"a": [0, 1]}, -1), r"^elapsed: must be >= 0"),
        ("hint 1.5", lambda: hint_terms({"a": [1.5]}, 1), r"^terms\.a\[0\]: must be an integer"),
        ("admit -4", lambda: admit_jobs([], lease_job, -4, 600.0), r"^gpus: must be >= 0"),
        ("admit nan", lambda: admit_jobs([], lease_job, 1, float("nan")), r"^lease_length"),
        ("limit 0", lambda: scale_down(0, 1.0, 0.5), r"^limit: must be >= 1"),
        ("limit -1", lambda: after_epoch(-1, 1.0, 0.5), r"^limit: must be >= 1"),
        ("rejected", lambda: resume_limit(8, 1), r"^rejected: must be true or false"),
        ("points nan", lambda: job_points([[np.nan]], [1], 100, 1.0), r"^points: .*finite"),
        ("points epoch", lambda: job_points([[1.0]], [1], 0, 1.0), r"^epoch_size: must be >= 1"),
    ]


@pytest.mark.parametrize(("name", "call", "pattern"), _refusals(), ids=lambda x: str(x)[:30])
def test_bad_arguments_are_one_clear_error(
    name: str, call: Callable[[], object], pattern: str
) -> None:
    with pytest.raises(InvalidInstanceError, match=pattern):
        call()


def test_swap_search_still_improves_from_a_valid_start() -> None:
    from scheduling_opt.reclaim.local_search import swap_search

    # i0 and i1 hold a's 4 workers (min 1): returning i0, i1 and i2 preempts a;
    # returning i0, i2, i3 keeps 2 of its workers. By hand: the swap i1 -> i3.
    inp = _reclaim()
    assert inp.cost([0, 1, 2]) > inp.cost([0, 2, 3]) == 0
    assert swap_search(inp, [np.int64(0), 1, 2]) in ([0, 2, 3], [1, 2, 3])
