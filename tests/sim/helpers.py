"""Small builders shared by the simulator tests."""

from __future__ import annotations

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
