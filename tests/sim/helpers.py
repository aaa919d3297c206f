"""Small builders shared by the simulator tests."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import TYPE_CHECKING

from scheduling_opt.sim import (
    ClusterSpec,
    EngineParams,
    Policy,
    RunOutput,
    SimJob,
    Workload,
    make_policy,
    simulate,
)
from scheduling_opt.sim.protocol import NOTHING, Decision, JobView, View

if TYPE_CHECKING:
    from hypothesis.strategies import SearchStrategy


def job(
    i: int,
    submit: float,
    gpus: int,
    work: float,
    *,
    deadline: float | None = None,
    tenant: str | None = None,
    model: str | None = None,
) -> SimJob:
    """Job ``str(i)``; ``deadline`` is absolute (one strict step)."""
    steps = ((deadline, 100.0),) if deadline is not None else ()
    return SimJob(
        str(i),
        submit,
        gpus,
        work,
        model=model,
        tenant=tenant,
        deadlines=steps,
        job_type="strict" if steps else "best",
    )


def run(
    jobs: list[SimJob],
    policy: str | Policy,
    servers: int = 1,
    gpus: int = 8,
    params: EngineParams | None = None,
    **policy_params: object,
) -> RunOutput:
    """Simulate ``jobs`` on ``servers`` x ``gpus`` under ``policy`` (a name or an object)."""
    w = Workload.of(jobs, "test")
    c = ClusterSpec.uniform(servers, gpus)
    p = make_policy(policy, w, c, policy_params) if isinstance(policy, str) else policy
    return simulate(w, c, p, params=params or EngineParams())


def by_id(out: RunOutput) -> dict[str, tuple[float, float, int]]:
    """``id -> (first start, end, preemptions)``."""
    return {
        j.id: (s, e, p)
        for j, s, e, p in zip(out.jobs, out.first_start, out.end, out.preemptions, strict=True)
    }


def workloads_for(name: str) -> SearchStrategy[list[SimJob]]:
    """Generated jobs policy ``name`` can run: ONES' family needs jobs of ONES' tasks."""
    from hypothesis import strategies as st

    from scheduling_opt.sim import policy_names
    from scheduling_opt.sim.ones_workload import OnesSpec
    from scheduling_opt.sim.ones_workload import generate as generate_ones
    from scheduling_opt.testing import sim_workloads

    if name in policy_names("ones"):
        return st.builds(
            lambda n, seed: list(generate_ones(OnesSpec(jobs=n), seed).jobs),
            st.integers(1, 8),
            st.integers(0, 2**16),
        )
    return sim_workloads()


class Script:
    """Scripted decisions: each ``(time, decision)`` once, at the first call at or after its time.

    Each step's decision is returned with a wake-up at the next step's time
    (when later than now). Every call records ``(now, {index: probe(job)})``
    of the running jobs in ``seen``; the default probe is ``(opportunistic,
    shared, gpus)``.
    """

    name = "script"

    def __init__(
        self,
        steps: list[tuple[float, Decision]],
        probe: Callable[[JobView], tuple[object, ...]] | None = None,
    ) -> None:
        self.steps = list(steps)
        self.probe = probe or (lambda st: (st.opportunistic, st.shared, st.gpus))
        self.seen: list[tuple[float, dict[int, tuple[object, ...]]]] = []

    def decide(self, view: View) -> Decision:
        self.seen.append((view.now, {i: self.probe(st) for i, st in view.running.items()}))
        if self.steps and self.steps[0][0] <= view.now:
            _, d = self.steps.pop(0)
            nxt = self.steps[0][0] if self.steps else None
            return replace(d, wake_at=nxt if nxt is not None and nxt > view.now else None)
        return NOTHING
