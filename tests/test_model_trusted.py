"""The trusted constructors build what the public ones build (issue 25).

``Job._trusted`` and ``RewardStep._trusted`` skip validation for simulator
adapters that rebuild validated jobs at every event; from checked values
they must give objects equal, field by field and in type, to the public
construction.
"""

from __future__ import annotations

import dataclasses

from scheduling_opt.model import Job, RewardStep


def test_trusted_reward_step_equals_public() -> None:
    for time, reward in ((0.5, 100.0), (1200.0, 80), (3.0, 0.0)):
        a, b = RewardStep._trusted(time, reward), RewardStep(time, reward)
        assert a == b
        assert type(a.time) is type(b.time)
        assert type(a.reward) is type(b.reward)


def test_trusted_job_equals_public() -> None:
    steps = (RewardStep(10.0, 100.0), RewardStep(40.0, 80.0))
    a = Job._trusted("7", 4, 12.5, steps)
    b = Job("7", 4, 4, 12.5, deadlines=steps)
    assert a == b
    for f in dataclasses.fields(Job):
        assert type(getattr(a, f.name)) is type(getattr(b, f.name)), f.name
    assert (a.max_gpus, a.elastic, a.work) == (4, False, 50.0)
