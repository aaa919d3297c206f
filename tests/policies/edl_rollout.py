"""Rounds of an EDL step on its own output (shared by the EDL equivalence tests)."""

from __future__ import annotations

from collections.abc import Callable

from scheduling_opt.policies import edl as el

Step = Callable[[el.EdlState], tuple[el.EdlDecision, float]]


def library_step(state: el.EdlState) -> tuple[el.EdlDecision, float]:
    """:func:`~scheduling_opt.policies.edl.elastic_tiresias_step`'s decision and objective."""
    sol = el.elastic_tiresias_step(state)
    assert sol.decision is not None
    assert sol.objective is not None
    return sol.decision, sol.objective


def rollout(
    state: el.EdlState, rounds: list[tuple[float, int]], step: Step = library_step
) -> list[tuple[el.EdlDecision, float, tuple[object, ...]]]:
    """Each round: decide, advance ``seconds``, finish the ``done``-th running job (mod count).

    Returns every round's decision, objective and placement rows (Placement
    equality compares the rows too, but the tuple says so).
    """
    out = []
    s = state
    for seconds, done in rounds:
        decision, objective = step(s)
        out.append((decision, objective, decision.placement.rows))
        s = el.advance(s, decision, seconds)
        running = s.placement.jobs()
        if running:
            s = el.finish(s, [running[done % len(running)]])
    return out
