"""The ``allocation`` problem's files: instance <-> input, decision -> JSON, generator.

Queued jobs are the jobs with no placement rows, running elastic jobs those
with rows; ``params`` holds ``capacity`` and ``scaling`` (docs/allocation.md).
The only module of the package that knows files and the registry.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from scheduling_opt.allocation.afs import afs
from scheduling_opt.allocation.auto import auto
from scheduling_opt.allocation.capacity import free_capacity
from scheduling_opt.allocation.check import check
from scheduling_opt.allocation.exact import exact
from scheduling_opt.allocation.fifo import fifo
from scheduling_opt.allocation.max_elastic import max_elastic
from scheduling_opt.allocation.model import LINEAR, AllocationDecision, AllocationInput, Scaling
from scheduling_opt.allocation.two_phase import two_phase
from scheduling_opt.errors import InvalidInstanceError
from scheduling_opt.io.instance import FORMAT, Instance, from_dict, parse_throughputs
from scheduling_opt.io.sizes import size_number
from scheduling_opt.jsonpath import check_keys, read_int, read_number, read_object
from scheduling_opt.registry import Method, Problem


def _scaling(value: object) -> Scaling:
    if value == "linear":
        return LINEAR
    obj = read_object(value, "params.scaling")
    check_keys(obj, "params.scaling", ("exponent",), ("exponent",))
    exponent = read_number(obj["exponent"], "params.scaling.exponent")
    if not 0 < exponent <= 1:
        raise InvalidInstanceError(
            "params.scaling.exponent", f"must be in (0, 1], got {exponent!r}"
        )
    return Scaling(exponent)


def read(instance: Instance) -> AllocationInput:
    """Queued jobs (no placement rows) and running elastic jobs (rows) with the free GPUs.

    ``params``: ``capacity`` (free GPUs, overrides the cluster's count) and
    ``scaling`` (``"linear"`` or ``{"exponent": a}``, 0 < a <= 1). Running
    inelastic jobs only hold GPUs. Without a cluster, ``capacity`` is required.
    The optional section ``throughputs`` (``{job: {GPU type: value}}``, a row
    per job and a column per GPU type of the cluster) weighs running jobs'
    flexible GPUs by their own speed (:func:`~scheduling_opt.allocation.free_capacity`).

    Parameters
    ----------
    instance : Instance
        A loaded ``allocation`` instance file.

    Returns
    -------
    AllocationInput

    Raises
    ------
    InvalidInstanceError
        Naming the JSON path (``params.capacity``, ``jobs[0].min_workers``).

    Examples
    --------
    >>> from scheduling_opt import load
    >>> read(load("instances/allocation-aryl-table4.json")).capacity
    8

    References
    ----------
    docs/instance-format.md; Aryl (EuroSys '22) §5.2.
    """
    params = instance.params
    check_keys(params, "params", ("capacity", "scaling"), ())
    instance.require_no_other_sections(("throughputs",))
    scaling = _scaling(params.get("scaling", "linear"))
    throughputs = None
    if "throughputs" in instance.data:
        throughputs = parse_throughputs(instance.data["throughputs"])
        if instance.cluster is None:
            raise InvalidInstanceError("throughputs", "needs a cluster (its GPU types)")
        throughputs.check(instance.cluster, (j.id for j in instance.jobs))
    placed = set(instance.placement.jobs())
    if "capacity" in params:
        capacity = read_int(params["capacity"], "params.capacity", 0)
    elif instance.cluster is None:
        raise InvalidInstanceError("params.capacity", "missing (needed when there is no cluster)")
    else:
        capacity = free_capacity(
            instance.cluster, instance.jobs_by_id, instance.placement, throughputs
        )
    jobs = tuple(j for j in instance.jobs if j.id not in placed or j.elastic)
    running = {j: instance.placement.workers_of(j) for j in placed if instance.job(j).elastic}
    # Located with the file's job index (the input's own check counts only its jobs).
    total = capacity + sum(instance.job(j).min_gpus for j in running)
    for i, job in enumerate(instance.jobs):
        if job.id not in placed and job.min_gpus > total:
            raise InvalidInstanceError(
                f"jobs[{i}].min_workers",
                f"job {job.id!r} needs {job.min_gpus} GPUs at base demand, "
                f"only {total} can ever be free",
            )
    return AllocationInput(jobs, capacity, running, scaling)


def encode(decision: AllocationDecision) -> dict[str, Any]:
    """The JSON decision: ``workers``, ``start_now``, ``average_jct``, ``jct`` (+ ``knapsack_value``).

    Parameters
    ----------
    decision : AllocationDecision

    Returns
    -------
    dict
        The keys the CLI has always printed (``knapsack_value``: two-phase only).

    Examples
    --------
    >>> encode(AllocationDecision({"a": 1}, ("a",), {"a": 10.0}, 10.0))
    {'workers': {'a': 1}, 'start_now': ['a'], 'average_jct': 10.0, 'jct': {'a': 10.0}}
    """
    out: dict[str, Any] = {
        "workers": dict(decision.workers),
        "start_now": list(decision.start_now),
        "average_jct": decision.average_jct,
        "jct": dict(decision.jct),
    }
    if decision.knapsack_value is not None:
        out["knapsack_value"] = decision.knapsack_value
    return out


#: Most jobs a generated instance may have (about 16 MB of JSON).
MAX_JOBS = 100_000

#: The sizes :func:`generate` accepts (``scheduling-opt list`` shows it).
SIZE_GRAMMAR = f"n<jobs> (1..{MAX_JOBS:,})"


def generate(size: str, seed: int) -> Instance:
    """``n<jobs>``: V100 training servers, one on-loan T4 server, mixed jobs.

    About half the jobs are elastic; a quarter of the elastic ones already
    run (one server each); there are GPUs for roughly half the base demand
    at maximum, so allocation matters.

    Parameters
    ----------
    size : str
        ``n<jobs>``, 1..:data:`MAX_JOBS` jobs (:data:`SIZE_GRAMMAR`).
    seed : int

    Returns
    -------
    Instance

    Raises
    ------
    InvalidInstanceError
        A malformed ``size``, or a number out of its range.

    Examples
    --------
    >>> len(generate("n4", 0).jobs)
    4
    """
    if not size.startswith("n"):
        raise InvalidInstanceError("size", f"expected {SIZE_GRAMMAR}, got {size!r}")
    n = size_number(size[1:], "jobs", 1, MAX_JOBS)
    rng = np.random.default_rng(seed)
    jobs: list[dict[str, Any]] = []
    placement: list[dict[str, Any]] = []
    servers = [{"id": "t4-0", "gpu_type": "T4", "gpus": 8, "pool": "inference", "on_loan": True}]
    for i in range(n):
        d = int(rng.choice([1, 1, 2]))
        lo = int(rng.integers(1, 4))
        hi = lo + (int(rng.integers(1, 4)) if rng.random() < 0.5 else 0)
        job = {
            "id": f"j{i}",
            "gpus_per_worker": d,
            "min_workers": lo,
            "max_workers": hi,
            "duration": float(np.round(rng.uniform(10, 200), 1)),
        }
        jobs.append(job)
        if hi > lo and rng.random() < 0.25 and hi * d <= 8:
            server = f"v{len(servers)}"
            servers.append({"id": server, "gpu_type": "V100", "gpus": 8, "pool": "training"})
            placement.append(
                {"job": job["id"], "server": server, "workers": int(rng.integers(lo, hi + 1))}
            )
    demand = sum(int(j["min_workers"]) * int(j["gpus_per_worker"]) for j in jobs)
    for _ in range(max(1, demand // 16)):
        servers.append(
            {"id": f"v{len(servers)}", "gpu_type": "V100", "gpus": 8, "pool": "training"}
        )
    doc = {
        "format": FORMAT,
        "problem": "allocation",
        "cluster": {
            "gpu_types": [
                {"name": "V100", "compute": 1.0},
                {"name": "T4", "compute": 0.25, "memory_gb": 16},
            ],
            "servers": servers,
        },
        "jobs": jobs,
        "placement": placement,
    }
    return from_dict(doc)


PROBLEM: Problem[AllocationInput, AllocationDecision] = Problem(
    name="allocation",
    summary="Aryl two-phase allocation of queued and running elastic jobs (avg JCT)",
    sense="min",
    read=read,
    encode=encode,
    methods=(
        Method("auto", auto, summary="exact if <= 256 allocations, else two-phase or max-elastic"),
        Method("two-phase", two_phase, summary="SJF on base demand + MCKP (Aryl)"),
        Method("fifo", fifo, summary="queue order, full demand, no elasticity"),
        Method("afs", afs, summary="base demand, then best throughput gain per GPU"),
        Method("max-elastic", max_elastic, summary="SJF, elastic jobs at max"),
        Method("exact", exact, exact=True, summary="enumerate initial allocations (small n)"),
    ),
    default="auto",
    check=check,
    generate=generate,
    size_grammar=SIZE_GRAMMAR,
    sizes={
        "quick": ("n4",),
        "standard": ("n4", "n5", "n6", "n40"),
        "paper": ("n6", "n200", "n1000"),
    },
)
