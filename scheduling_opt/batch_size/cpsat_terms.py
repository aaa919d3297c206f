"""What the CP-SAT models of ``batch-size`` share: integer costs, their tolerance, stop reasons.

CP-SAT needs integer costs: F's terms are scaled so the largest |term|
becomes :data:`COST_SCALE` units and rounded; ``optimal`` stands only when
the rounding cannot hide a better schedule by more than
:data:`ROUNDING_TOLERANCE` (relative). A run stopped before a proof is
labelled by what stopped it (:func:`stop_message`). O(1).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from scheduling_opt.exact import CpSatOutcome

#: CP-SAT needs integer costs: the largest |cost| becomes this many units.
COST_SCALE = 1e12
ROUNDING_TOLERANCE = 1e-8
"""Relative error the cost rounding may hide for CP-SAT's ``optimal`` to stand
(ten times below the benchmark's gap tolerance of 1e-7)."""


def stop_message(outcome: CpSatOutcome, work_limit: float | None) -> str:
    """What stopped a CP-SAT run before a proof: the work budget or the clock.

    The deterministic time spent reaching ``work_limit`` means the budget
    (the same stop on any load); below it, the clock stopped the run, and
    its answer depends on the machine's load.

    Examples
    --------
    >>> from scheduling_opt.exact import CpSatOutcome
    >>> from scheduling_opt.solution import Status
    >>> stop_message(CpSatOutcome(Status.TIME_LIMIT, None, None, None, 1.0, False, 2.0), 2.0)
    "time limit: CP-SAT's work budget (2.0 units)"
    >>> stop_message(CpSatOutcome(Status.TIME_LIMIT, None, None, None, 1.0, False, 0.3), 2.0)
    "time limit: the clock (depends on the machine's load)"
    """
    if work_limit is not None and outcome.work >= work_limit:
        return f"time limit: CP-SAT's work budget ({work_limit} units)"
    return "time limit: the clock (depends on the machine's load)"
