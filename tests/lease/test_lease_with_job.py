"""``LeaseInput.with_job`` builds what the constructor builds; admission gives the same verdicts.

The admission of a candidate against a guaranteed set reuses the set's
lease view (issue 25); the reference is the constructor over all the jobs.
"""

from __future__ import annotations

import numpy as np
import pytest

from scheduling_opt.errors import InvalidInstanceError
from scheduling_opt.lease import LeaseInput, admit_jobs
from scheduling_opt.lease.io import generate_lease, read
from scheduling_opt.model import Job, RewardStep


@pytest.mark.parametrize("seed", range(8))
def test_with_job_equals_the_constructor(seed: int) -> None:
    base = read(generate_lease(6, 30, seed, pressure=2.0))
    *rest, last = base.jobs
    for require_all, round_up in ((False, False), (True, True)):
        head = LeaseInput(
            rest,
            base.capacity,
            base.lease_length,
            require_all=require_all,
            round_up=round_up,
            max_terms=base.max_terms,
        )
        whole = LeaseInput(
            base.jobs,
            base.capacity,
            base.lease_length,
            require_all=require_all,
            round_up=round_up,
            max_terms=base.max_terms,
        )
        got = head.with_job(last)
        assert got == whole
        assert got.lease_jobs == whole.lease_jobs
        assert np.array_equal(got.gpus, whole.gpus)
        assert got.gpus.dtype == whole.gpus.dtype
        assert got.horizon == whole.horizon
        assert got.hopeless == whole.hopeless


def test_with_job_refuses_what_the_constructor_refuses() -> None:
    a = Job("a", 2, 2, 10.0, deadlines=(RewardStep(20.0, 100),))
    inp = LeaseInput([a], capacity=4, lease_length=10.0)
    with pytest.raises(InvalidInstanceError, match=r"jobs\[1\]\.id"):
        inp.with_job(Job("a", 1, 1, 10.0, deadlines=(RewardStep(20.0, 1),)))
    with pytest.raises(InvalidInstanceError, match=r"jobs\[1\]"):
        inp.with_job(Job("big", 8, 8, 10.0, deadlines=(RewardStep(20.0, 1),)))
    with pytest.raises(InvalidInstanceError, match=r"jobs\[1\]\.deadlines"):
        inp.with_job(Job("b", 1, 1, 10.0))


@pytest.mark.parametrize("seed", range(6))
def test_admission_against_an_input_equals_against_the_jobs(seed: int) -> None:
    inp = read(generate_lease(4, 24, seed, pressure=1.5))
    *guaranteed, candidate = inp.jobs
    base = LeaseInput(
        guaranteed, inp.capacity, inp.lease_length, require_all=True, max_terms=inp.max_terms
    )
    a = admit_jobs(
        guaranteed, candidate, inp.capacity, inp.lease_length, max_terms=inp.max_terms, prove=False
    )
    b = admit_jobs(
        base, candidate, inp.capacity, inp.lease_length, max_terms=inp.max_terms, prove=False
    )
    assert (a.admitted, a.status) == (b.admitted, b.status)
    assert (a.schedule is None) == (b.schedule is None)
    if a.schedule is not None and b.schedule is not None:
        assert a.schedule.decision == b.schedule.decision
