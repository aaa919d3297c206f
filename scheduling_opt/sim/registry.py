"""The policies by name: a factory per name, a fresh policy object per run.

A factory takes the workload, the cluster and keyword parameters (the
configuration's ``policy_params``) and returns a new policy, so that a run
never shares state with another. Paper policies register the same way.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from scheduling_opt.errors import InvalidInstanceError
from scheduling_opt.sim.baselines import (
    EdfNp,
    Fifo,
    Sjf,
    YarnCs,
    class_quotas,
    proportional_quotas,
)
from scheduling_opt.sim.cluster import ClusterSpec
from scheduling_opt.sim.deadline import Edf, Genie
from scheduling_opt.sim.policy import Policy
from scheduling_opt.sim.preemptive import Srtf, Tiresias
from scheduling_opt.sim.themis import Themis
from scheduling_opt.sim.workload import Workload

Factory = Callable[..., Policy]


def _yarn_cs(workload: Workload, cluster: ClusterSpec, **params: Any) -> Policy:
    quotas = params.pop("quotas", None)
    _no_params("yarn-cs", params)
    return YarnCs(
        quotas if quotas is not None else proportional_quotas(workload, cluster.total_gpus)
    )


def _yarn_cs_slo(workload: Workload, cluster: ClusterSpec, **params: Any) -> Policy:
    quotas = params.pop("quotas", None)
    _no_params("yarn-cs-slo", params)
    chosen = quotas if quotas is not None else class_quotas(workload, cluster.total_gpus)
    return YarnCs(chosen, by="class")


def _genie(workload: Workload, cluster: ClusterSpec, **params: Any) -> Policy:
    kwargs = {k: params.pop(k) for k in ("spread",) if k in params}
    _no_params("genie", params)
    return Genie(**kwargs)


def _themis(workload: Workload, cluster: ClusterSpec, **params: Any) -> Policy:
    kwargs = {k: params.pop(k) for k in ("round_length",) if k in params}
    _no_params("themis", params)
    return Themis(**kwargs)


def _three_sigma(workload: Workload, cluster: ClusterSpec, **params: Any) -> Policy:
    # Imported here: the MILP pulls in scipy's solver.
    from scheduling_opt.sim.three_sigma import ThreeSigma

    known = ("cycle", "window", "slots", "node_limit", "time_limit", "slo_value")
    kwargs = {k: params.pop(k) for k in known if k in params}
    _no_params("3sigma", params)
    return ThreeSigma(**kwargs)


def _tiresias(workload: Workload, cluster: ClusterSpec, **params: Any) -> Policy:
    kwargs = {k: params.pop(k) for k in ("thresholds", "promote_knob") if k in params}
    _no_params("tiresias", params)
    if "thresholds" in kwargs:
        kwargs["thresholds"] = tuple(kwargs["thresholds"])
    return Tiresias(**kwargs)


def _no_params(name: str, params: Mapping[str, Any]) -> None:
    if params:
        raise InvalidInstanceError(f"policy {name}", f"unknown parameters {sorted(params)}")


def _plain(cls: Callable[[], Policy], name: str) -> Factory:
    def make(workload: Workload, cluster: ClusterSpec, **params: Any) -> Policy:
        _no_params(name, params)
        return cls()

    return make


#: The baselines, in report order. ``edf`` is Chronus §4.3's (SLO jobs preempt
#: best-effort jobs); ``edf-np`` the simulator's earlier, non-preemptive EDF.
BASELINES: dict[str, Factory] = {
    "fifo": _plain(Fifo, "fifo"),
    "sjf": _plain(Sjf, "sjf"),
    "edf": _plain(Edf, "edf"),
    "edf-np": _plain(EdfNp, "edf-np"),
    "srtf": _plain(Srtf, "srtf"),
    "tiresias": _tiresias,
    "yarn-cs": _yarn_cs,
    "yarn-cs-slo": _yarn_cs_slo,
    "genie": _genie,
    "themis": _themis,
    "3sigma": _three_sigma,
}

#: ``scheduling-opt simulate``'s default policies and the busy rule's
#: (:mod:`~scheduling_opt.sim.busy`): the simulator's general baselines. Chronus
#: §4.3's others (``edf-np``, ``yarn-cs-slo``, ``genie``, ``themis``, ``3sigma``)
#: run by name; ``3sigma`` alone would take several times the six's CPU time.
DEFAULT_BASELINES = ("fifo", "sjf", "edf", "srtf", "tiresias", "yarn-cs")


def _edl(elastic: bool) -> Factory:
    def make(workload: Workload, cluster: ClusterSpec, **params: Any) -> Policy:
        # Imported here: the paper adapters pull in the solver packages.
        from scheduling_opt.sim.policies.elastic_tiresias import EdlTiresias

        known = ("unit_seconds", "thresholds", "starvation", "compaction", "qos", "promote_knob")
        kwargs = {k: params.pop(k) for k in known if k in params}
        _no_params("elastic-tiresias" if elastic else "edl-tiresias", params)
        if "thresholds" in kwargs:
            kwargs["thresholds"] = tuple(kwargs["thresholds"])
        return EdlTiresias(elastic=elastic, **kwargs)

    return make


def _chronus(mode: str, **fixed: Any) -> Factory:
    name = {"budget": "chronus", "greedy": "chronus-greedy", "exact": "chronus-exact"}[mode]
    name += "".join(
        f"-{v}" for k, v in (("admission", "no-admission"), ("placement", "best-fit")) if k in fixed
    )

    def make(workload: Workload, cluster: ClusterSpec, **params: Any) -> Policy:
        from scheduling_opt.sim.policies.chronus import Chronus

        known = (
            "lease_length",
            "time_limit",
            "max_terms",
            "admission_time_limit",
            "admission_prove",
            "search_space",
            "placement_time_limit",
            "placement_table",
            "placement",
            "estimate",
            "admission_check",
            "term_release",
            "selection",
            "queue",
            "force_short",
            "fill_overhead",
            "start_credit",
            "cache_layout",
            "search_rows",
            "cbc_nodes",
            "artifact_stops",
        )
        kwargs = {k: params.pop(k) for k in known if k in params}
        _no_params(name, params)
        return Chronus(mode=mode, **{**fixed, **kwargs})

    return make


def _ones(method: str) -> Factory:
    name = {"ones": "ones", "exact": "ones-exact", "fixed": "fixed-batch"}[method]

    def make(workload: Workload, cluster: ClusterSpec, **params: Any) -> Policy:
        from scheduling_opt.sim.policies.ones import FixedBatch, Ones

        if method == "fixed":
            fixed: dict[str, Any] = {k: params.pop(k) for k in ("interval", "sigma") if k in params}
            _no_params(name, params)
            return FixedBatch(**fixed)
        known = (
            "interval",
            "generations",
            "population",
            "time_limit",
            "work_limit",
            "sigma",
            "seed",
        )
        kwargs = {k: params.pop(k) for k in known if k in params}
        _no_params(name, params)
        return Ones(method=method, **kwargs)

    return make


def _antman(workload: Workload, cluster: ClusterSpec, **params: Any) -> Policy:
    from scheduling_opt.sim.policies.antman import AntMan

    quotas = params.pop("quotas", None)
    known = ("max_utilization", "demote_after", "unit_seconds", "memory")
    kwargs = {k: params.pop(k) for k in known if k in params}
    _no_params("antman", params)
    return AntMan(
        dict(quotas) if quotas is not None else proportional_quotas(workload, cluster.total_gpus),
        **kwargs,
    )


def _gandiva(mode: str) -> Factory:
    name = "gandiva" if mode == "full" else "gandiva-pack"

    def make(workload: Workload, cluster: ClusterSpec, **params: Any) -> Policy:
        from scheduling_opt.sim.policies.gandiva import Gandiva

        known = ("pack_slowdown", "slice_overhead", "memory")
        kwargs = {k: params.pop(k) for k in known if k in params}
        _no_params(name, params)
        return Gandiva(mode=mode, **kwargs)

    return make


def _gandiva_scale(workload: Workload, cluster: ClusterSpec, **params: Any) -> Policy:
    from scheduling_opt.sim.policies.gandiva_scale import GandivaScale

    _no_params("gandiva-scale", params)
    return GandivaScale()


def _aryl(variant: str) -> Factory:
    def make(workload: Workload, cluster: ClusterSpec, **params: Any) -> Policy:
        from scheduling_opt.sim.policies.aryl import VARIANTS, ArylPolicy

        known = ("curve", "interval", "any_gpu_share", "time_limit", "seed")
        kwargs = {k: params.pop(k) for k in known if k in params}
        _no_params(variant, params)
        return ArylPolicy(name=variant, **VARIANTS[variant], **kwargs)

    return make


#: The papers' policies (adapters in :mod:`scheduling_opt.sim.policies`), in report order.
PAPER_POLICIES: dict[str, Factory] = {
    "elastic-tiresias": _edl(True),
    "edl-tiresias": _edl(False),
    "chronus": _chronus("budget"),
    "chronus-greedy": _chronus("greedy"),
    "chronus-exact": _chronus("exact"),
    "chronus-no-admission": _chronus("budget", admission=False),
    "chronus-best-fit": _chronus("budget", placement="best-fit"),
    **{
        v: _aryl(v)
        for v in (
            "aryl",
            "aryl-scf",
            "aryl-random",
            "aryl-plus",
            "aryl-exact",
            "aryl-loan-only",
            "aryl-scale-only",
            "aryl-fifo",
            "aryl-oracle",
            "fifo-no-loan",
            "afs",
        )
    },
    "antman": _antman,
    "gandiva": _gandiva("full"),
    "gandiva-pack": _gandiva("pack"),
    "gandiva-scale": _gandiva_scale,
    "ones": _ones("ones"),
    "ones-exact": _ones("exact"),
    "fixed-batch": _ones("fixed"),
}

#: Every policy the simulator can run by name.
POLICIES: dict[str, Factory] = {**BASELINES, **PAPER_POLICIES}


def make_policy(
    name: str,
    workload: Workload,
    cluster: ClusterSpec,
    params: Mapping[str, Any] | None = None,
    *,
    factories: Mapping[str, Factory] = POLICIES,
) -> Policy:
    """A fresh policy ``name`` for one run.

    Examples
    --------
    >>> from scheduling_opt.sim.workload import SimJob, Workload
    >>> w = Workload.of([SimJob("0", 0.0, 1, 1.0)], "demo")
    >>> make_policy("edf", w, ClusterSpec.uniform(1, 8)).name
    'edf'
    """
    factory = factories.get(name) if isinstance(name, str) else None
    if factory is None:
        raise InvalidInstanceError("name", f"unknown policy {name!r}; known: {sorted(factories)}")
    return factory(workload, cluster, **dict(params or {}))
