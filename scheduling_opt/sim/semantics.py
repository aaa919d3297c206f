"""Named simulator semantics: ours (``default``) and the Chronus authors' simulator's (``artifact``).

Our simulator and the simulator released with Chronus (SoCC '21,
``../shared/peers/chronus-artifact``) differ in rules that move the results
(docs/reproduction.md, "Parity with the authors' simulator"). Each rule of
the artifact is a named option, of the engine (:class:`~scheduling_opt.sim.sweep.RunConfig`:
``placement_table``, ``start_overhead``, ``arrival_step``, ``round_length``)
or of the ``chronus`` policies
(:data:`~scheduling_opt.sim.policies.chronus_artifact.ARTIFACT_POLICY`, documented
in :mod:`~scheduling_opt.sim.policies.chronus_artifact`); :func:`with_semantics`
sets all of them at once. Lines are in the artifact's
``code/alg/scheduler/time_aware_with_lease.py``:

- ``placement_table=False``: no placement slowdown (``compute_progress``
  returns 1.0, lines 58-59);
- ``start_overhead=0.5``: each start, the first included, adds 0.5 x
  (1 + log2 g) minutes of work (lines 35-36, 398-402, 1005-1011), but
  the odd-minute fill's (``chronus``'s ``fill_overhead=False`` names them
  in ``Decision.free_starts``: the fill counts no resume, 1137-1155), and
  the fill's and the term selection's starts are credited the minutes
  since the last 5-minute pass (``start_credit=True``, ``Decision.credit``);
- ``arrival_step=5``: arrivals are taken every 5 minutes (1192-1193);
- ``round_length=1``: time advances a minute at a time (1158-1211).

``artifact-mip`` is ``artifact`` with the artifact's selection MILP as its
code runs it: at most ``MAX_SEARCH_JOB`` rows (400 for 20-minute terms,
the jobs beyond frozen on their reservations: ``search_rows``), built and
solved by python-mip's CBC, the artifact's solver build
(``selection="artifact-mip"``; the optional extra ``parity``). It is the
semantics that reproduces the artifact job by job (docs/reproduction.md);
``artifact`` needs no extra and solves the selection with the library's
own MILP.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from scheduling_opt.errors import InvalidInstanceError
from scheduling_opt.sim.policies.chronus_artifact import ARTIFACT_POLICY, search_rows
from scheduling_opt.sim.policies.chronus_mip import require_mip
from scheduling_opt.sim.sweep import RunConfig

__all__ = ["ARTIFACT_ENGINE", "SEMANTICS", "with_semantics"]

#: The engine options of the artifact's semantics (RunConfig fields).
ARTIFACT_ENGINE: dict[str, Any] = {
    "placement_table": False,
    "start_overhead": 0.5,
    "arrival_step": 5.0,
    "round_length": 1.0,
}
#: The known semantics.
SEMANTICS = ("default", "artifact", "artifact-mip")


def with_semantics(config: RunConfig, semantics: str) -> RunConfig:
    """``config`` under the named semantics (``default``: unchanged).

    ``artifact`` sets the engine options above and, for a ``chronus*``
    policy, the policy options of
    :data:`~scheduling_opt.sim.policies.chronus_artifact.ARTIFACT_POLICY`;
    ``artifact-mip`` also the artifact's row cap for the policy's
    ``lease_length`` and ``selection="artifact-mip"`` (an
    :class:`~scheduling_opt.errors.InvalidInstanceError` naming the
    ``parity`` extra when python-mip is missing); parameters the
    configuration already names win over the preset's.

    Examples
    --------
    >>> c = with_semantics(RunConfig("chronus"), "artifact")
    >>> c.start_overhead, c.arrival_step, dict(c.policy_params)["queue"]
    (0.5, 5.0, 'artifact')
    >>> with_semantics(RunConfig("edf"), "artifact").policy_params
    ()
    """
    if semantics == "default":
        return config
    if semantics not in SEMANTICS:
        raise InvalidInstanceError(
            "--semantics", f"must be one of {', '.join(SEMANTICS)}, got {semantics!r}"
        )
    params = dict(config.policy_params)
    if config.policy.startswith("chronus"):
        preset = dict(ARTIFACT_POLICY)
        if semantics == "artifact-mip":
            try:
                require_mip()
            except ImportError as e:
                raise InvalidInstanceError("--semantics", f"'artifact-mip': {e}") from None
            length = params.get("lease_length", 20.0)
            if isinstance(length, (int, float)) and not isinstance(length, bool):
                preset["search_rows"] = search_rows(float(length))
            preset["selection"] = "artifact-mip"
        params = {**preset, **params}
    return replace(config, **ARTIFACT_ENGINE, policy_params=tuple(sorted(params.items())))
