"""Chronus (SoCC '21): admission control, lease terms, round-up and local-search placement.

The declarations of the ``chronus`` family (its variants, parameters and
the named semantics ``artifact`` and ``artifact-mip``); the policy's code,
imported when a run makes one:

- :mod:`.policy`: :class:`~.policy.Chronus`, the policy object, which holds
  one run's parts and hands the engine's calls to its scheduling loop;
- :mod:`.options`: the run's settings, frozen and validated;
- :mod:`.ledger`: what the parts share (guaranteed and selected jobs,
  reservations, counters);
- :mod:`.lease_model`: each SLO job as the lease solvers see it, the
  guaranteed schedule's load per term and the quick admission fit;
- :mod:`.admission`: admission control on arrival (§3.3.2);
- :mod:`.selection`: each term's selection by the library's lease solvers
  (§3.3.3-§3.3.4, :mod:`scheduling_opt.lease`);
- :mod:`.placement`: round-up consolidation and local search (§3.4) over
  :mod:`scheduling_opt.placement`, and the migration of spread jobs;
- :mod:`.loop`: the paper's scheduling loop;
- :mod:`.profiling`: the Profiler and its cluster (§3.2), in front of the
  loop, which sees the main cluster through :mod:`.main_view`;
- :mod:`.spot`: the Spot cluster's BE leases (§3.3.5);
- :mod:`.artifact`: the rules of the simulator the Chronus authors
  released, as options of the same policy: its batch admission, its
  selection MILP, its queue classes and minute loop.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from scheduling_opt.sim.declare import Param, PolicySpec, Semantics
from scheduling_opt.sim.policies.chronus.artifact.rules import (
    ARTIFACT_ENGINE,
    ARTIFACT_POLICY,
    search_rows,
)

if TYPE_CHECKING:
    from scheduling_opt.sim.cluster import ClusterSpec
    from scheduling_opt.sim.protocol import Policy
    from scheduling_opt.sim.workload import Workload

FAMILY = "chronus"


def _chronus(workload: Workload, cluster: ClusterSpec, **params: Any) -> Policy:
    # Imported when made: the lease and placement solvers.
    from scheduling_opt.sim.policies.chronus.policy import Chronus

    return Chronus(**params)


def _positive(name: str, default: float, help: str) -> Param:
    return Param(name, "float", default, help, low=0.0, low_open=True)


def _choice(name: str, default: str, choices: tuple[str, ...], help: str) -> Param:
    return Param(name, "str", default, help, choices=choices)


PARAMS = (
    _positive("lease_length", 20.0, "lease term length (trace units; §5: 20 minutes)"),
    _positive("time_limit", 10.0, "solver seconds per term"),
    Param(
        "max_terms",
        "int",
        72,
        "deadlines beyond this many terms count as met there (none: the whole horizon)",
        low=1,
        optional=True,
    ),
    _positive("admission_time_limit", 1.0, "seconds of one admission's feasibility MILP"),
    Param(
        "admission_prove",
        "bool",
        None,
        "run the feasibility MILP when the greedy and EDF find no schedule (none: exact mode)",
        optional=True,
    ),
    Param("search_space", "int", 100_000, "local search's |S| per call (§3.4.2)", low=1),
    _positive("placement_time_limit", 0.5, "seconds per local-search call"),
    Param("placement_table", "bool", True, "local search reads model_info.json's sensitivity"),
    _choice(
        "placement",
        "chronus",
        ("chronus", "best-fit", "pool"),
        "round-up + local search, the simulator's best fit, or any free GPUs",
    ),
    _choice("estimate", "oracle", ("oracle", "artifact"), "the lease's remaining work"),
    _choice(
        "admission_check",
        "resolve",
        ("resolve", "reserved", "batch"),
        "how an arriving SLO job is admitted",
    ),
    _choice("term_release", "selected", ("selected", "all"), "running jobs a term releases"),
    _choice(
        "selection",
        "reward",
        ("reward", "artifact", "artifact-cbc", "artifact-mip"),
        "the term selection's model and solver",
    ),
    _choice("queue", "chronus", ("chronus", "artifact"), "the scheduling loop and its queues"),
    Param("force_short", "bool", False, "unguaranteed jobs that fit the term run at once"),
    Param("fill_overhead", "bool", True, "the odd-minute fill's starts owe the start overhead"),
    Param("start_credit", "bool", False, "starts credited the minutes since the last pass"),
    _choice("cache_layout", "selected", ("selected", "late"), "reserved terms' layout"),
    Param(
        "search_rows",
        "int",
        None,
        "the selection MILP's row cap (none: no cap)",
        low=1,
        optional=True,
    ),
    Param("cbc_nodes", "int", None, "CBC's node limit (none: to optimality)", low=1, optional=True),
    Param("artifact_stops", "bool", False, "the artifact's wall-clock stops on CBC"),
    Param("profiler", "bool", True, "every job passes through the Profiler first (§3.2)"),
    _positive("t_profile", 5.0, "profiling time per job (trace units; §3.2: 300 s)"),
    Param(
        "profiler_gpus",
        "int",
        None,
        "a fixed Profiling cluster of this many GPUs (none: resized, §3.2.3)",
        low=1,
        optional=True,
    ),
    _choice(
        "profiler_scaling",
        "backlog",
        ("backlog", "hourly"),
        "the Profiling cluster's re-sizing: the hourly bound lambda T_profile plus the"
        " queued GPUs every T_profile, or the bound alone every hour (§3.2.3)",
    ),
    Param(
        "submission_cap",
        "int",
        24,
        "GPUs per user per T_profile entering profiling (§3.2.1; none: no control)",
        low=1,
        optional=True,
    ),
    Param(
        "runtime_noise",
        "float",
        0.0,
        "std of the Profiler estimate's relative Gaussian error (Fig. 6(d))",
        low=0.0,
        high=9.99,
    ),
    Param("noise_seed", "int", 0, "seed of the estimate's noise", low=0),
    Param(
        "be_lease",
        "float",
        5.0,
        "the Spot cluster's BE lease, SRTF per cycle (§3.3.5; none: SRTF at every event)",
        low=0.0,
        low_open=True,
        optional=True,
    ),
)


def _throughput(params: Mapping[str, object], share: float, host: float) -> float | str:
    # The artifact's start credit counts progress a job did not run: a run
    # under it may beat any schedule of the workload (docs/bounds.md).
    if params.get("start_credit"):
        return "credits work a job did not run (start_credit: the artifact semantics)"
    return 1.0


def _artifact_preset(params: Mapping[str, object]) -> Mapping[str, object]:
    return dict(ARTIFACT_POLICY)


def _artifact_mip_preset(params: Mapping[str, object]) -> Mapping[str, object]:
    preset = dict(ARTIFACT_POLICY)
    length = params.get("lease_length", 20.0)
    if isinstance(length, (int, float)) and not isinstance(length, bool):
        preset["search_rows"] = search_rows(float(length))
    preset["selection"] = "artifact-mip"
    return preset


def _require_mip() -> None:
    from scheduling_opt.errors import InvalidInstanceError
    from scheduling_opt.sim.policies.chronus.artifact.mip import require_mip

    try:
        require_mip()
    except ImportError as e:
        raise InvalidInstanceError("--semantics", f"'artifact-mip': {e}") from None


SEMANTICS = (
    Semantics(
        "artifact",
        "the Chronus authors' simulator's rules (docs/simulation.md)",
        ARTIFACT_ENGINE,
        _artifact_preset,
    ),
    Semantics(
        "artifact-mip",
        "'artifact' with the selection MILP as its code runs it (needs the 'parity' extra)",
        ARTIFACT_ENGINE,
        _artifact_mip_preset,
        _require_mip,
    ),
)

#: The variants: name -> (summary, the settings each fixes).
VARIANTS: dict[str, tuple[str, dict[str, object]]] = {
    "chronus": (
        "Chronus: admission control, lease terms (exact within a budget), §3.4 placement",
        {"mode": "budget"},
    ),
    "chronus-greedy": ("Chronus with the greedy lease selection alone", {"mode": "greedy"}),
    "chronus-exact": ("Chronus with the exact lease selection, no fallback", {"mode": "exact"}),
    "chronus-no-admission": (
        "Chronus with every SLO job in each term's selection (no admission control)",
        {"mode": "budget", "admission": False},
    ),
    "chronus-best-fit": (
        "Chronus with the simulator's best-fit placement instead of §3.4's",
        {"mode": "budget", "placement": "best-fit"},
    ),
}

SPECS: tuple[PolicySpec, ...] = tuple(
    PolicySpec(
        name,
        summary,
        _chronus,
        tuple(p for p in PARAMS if p.name not in fixed),
        fixed=fixed,
        family=FAMILY,
        throughput=_throughput,
        semantics=SEMANTICS,
    )
    for name, (summary, fixed) in VARIANTS.items()
)
