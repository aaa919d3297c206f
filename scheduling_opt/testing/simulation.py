"""Strategies for the trace-driven simulator: workloads of jobs with SLOs and tenants.

:func:`sim_workloads` draws 1-12 simulator jobs (submit times, GPU
demands from 1 to 16, work, an optional strict deadline, tenant ``a`` or
``b``) for invariant tests of the engine and its baseline policies
(docs/simulation.md). Drawing is linear in the drawn size.
"""

from __future__ import annotations

from hypothesis import strategies as st

from scheduling_opt.sim import SimJob

__all__ = ["sim_workloads"]


def _job(
    i: int, submit: float, gpus: int, work: float, deadline: float | None, tenant: str
) -> SimJob:
    steps = ((deadline, 100.0),) if deadline is not None else ()
    return SimJob(
        str(i),
        submit,
        gpus,
        work,
        tenant=tenant,
        deadlines=steps,
        job_type="strict" if steps else "best",
    )


@st.composite
def sim_workloads(draw: st.DrawFn, step: int = 1) -> list[SimJob]:
    """1-12 simulator jobs ``"0", "1", ...`` on a grid of ``step`` time units.

    Parameters
    ----------
    step : int, optional
        Submit times, work and deadlines are multiples of it.

    Returns
    -------
    SearchStrategy of list of SimJob
        Jobs submitted at 0-20 steps, of 1-16 GPUs, 1-15 steps of work, half
        of them with a strict deadline (one step of reward 100) at 5-60 steps.

    Examples
    --------
    >>> from hypothesis import find
    >>> w = find(sim_workloads(step=5), lambda w: len(w) == 2)
    >>> [j.id for j in w], all(j.submit % 5 == 0 and j.work % 5 == 0 for j in w)
    (['0', '1'], True)

    References
    ----------
    Chronus (SoCC '21) §5 (trace-driven evaluation).
    """
    out = []
    for i in range(draw(st.integers(1, 12))):
        out.append(
            _job(
                i,
                step * draw(st.integers(0, 20)),
                draw(st.sampled_from([1, 1, 2, 4, 8, 12, 16])),
                step * draw(st.integers(1, 15)),
                deadline=None if draw(st.booleans()) else float(step * draw(st.integers(5, 60))),
                tenant=draw(st.sampled_from(["a", "b"])),
            )
        )
    return out
