"""Instance documents: a typed input written back as a file, and the file reader.

:func:`to_instance` writes a problem's typed input as its instance (so a
failing example can be saved and replayed with ``scheduling-opt solve``);
:func:`read_document` is the file reader end to end (JSON text, common
sections, the problem's own reader). Format: docs/instance-format.md.
Linear in the document size.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from typing import Any

from scheduling_opt.io.instance import Instance, loads
from scheduling_opt.model import Cluster, GpuType, Placement, PlacementRow, Server
from scheduling_opt.registry import get_problem

__all__ = ["read_document", "to_instance"]


def _reclaim(inp: Any) -> Instance:
    params = {"servers_to_reclaim": inp.n_reclaim}
    return Instance("reclaim", inp.cluster, inp.jobs, inp.placement, params)


def _placement(inp: Any) -> Instance:
    from scheduling_opt.placement import DEFAULT_SEARCH_SPACE
    from scheduling_opt.scaling import Log2Model

    if inp.speed != Log2Model():
        raise ValueError("to_instance writes placement inputs with the default speed model only")
    params: dict[str, Any] = {}
    if inp.workers:
        params["workers"] = dict(inp.workers)
    if inp.models:
        params["models"] = dict(inp.models)
    if inp.search_space != DEFAULT_SEARCH_SPACE:
        params["search_space"] = inp.search_space
    return Instance("placement", inp.cluster, inp.jobs, inp.placement, params)


def _lease(inp: Any) -> Instance:
    params: dict[str, Any] = {"lease_length": inp.lease_length, "gpus": inp.capacity}
    if inp.require_all:
        params["require_all"] = True
    if inp.round_up:
        params["round_up"] = True
    if inp.max_terms is not None:
        params["max_terms"] = inp.max_terms
    return Instance("lease", None, inp.jobs, params=params)


def _throughput(model: Any) -> dict[str, float]:
    from scheduling_opt.batch_size import AnalyticThroughput

    if not isinstance(model, AnalyticThroughput):
        raise ValueError(f"to_instance writes analytic throughput models only, got {model!r}")
    return {
        "overhead": model.overhead,
        "per_sample": model.per_sample,
        "comm": model.comm,
        "cross_node": model.cross_node,
    }


def _batch_size(inp: Any) -> Instance:
    from scheduling_opt.batch_size import DEFAULT_MODEL

    c = inp.config
    params: dict[str, Any] = {
        "population": c.population,
        "generations": c.generations,
        "mutation_rate": c.mutation_rate,
        "sample_progress": c.sample_progress,
        "greedy_start": c.greedy_start,
    }
    if inp.throughput != DEFAULT_MODEL:
        params["throughput"] = _throughput(inp.throughput)
    for key, value in (("wait_penalty", inp.wait_penalty), ("idle_penalty", inp.idle_penalty)):
        if value is not None:
            params[key] = value
    per_job: dict[str, Any] = {}
    for job_id, state in inp.states.items():
        entry: dict[str, Any] = {"beta": state.beta}
        if state.throughput is not None and state.throughput != inp.throughput:
            entry["throughput"] = _throughput(state.throughput)
        if state.processed_time:
            entry["processed_time"] = state.processed_time
        if state.warmup:
            entry["warmup"] = True
        per_job[job_id] = entry
    params["jobs"] = per_job
    return Instance("batch-size", inp.cluster, inp.jobs, params=params)


def _allocation(inp: Any) -> Instance:
    params: dict[str, Any] = {"capacity": inp.capacity}
    if inp.scaling.exponent != 1.0:
        params["scaling"] = {"exponent": inp.scaling.exponent}
    if not inp.running:
        return Instance("allocation", None, inp.jobs, params=params)
    # Running jobs need placement rows, hence a server: one holding exactly their GPUs
    # (``params.capacity`` still says how many GPUs are free).
    by_id = {j.id: j for j in inp.jobs}
    held = sum(k * by_id[j].gpus_per_worker for j, k in inp.running.items())
    cluster = Cluster((GpuType("V100"),), (Server("running", "V100", held),))
    rows = tuple(
        PlacementRow(j.id, "running", inp.running[j.id]) for j in inp.jobs if j.id in inp.running
    )
    return Instance("allocation", cluster, inp.jobs, Placement(rows), params)


def _number(x: float) -> float | int:
    # Integral values as JSON integers, as the package writers do.
    return int(x) if float(x).is_integer() and abs(x) < 2**53 else float(x)


def _mckp(inp: Any) -> Instance:
    groups = []
    for g in range(inp.n_groups):
        weights, values = inp.group(g)
        groups.append(
            [
                {"weight": int(w), "value": _number(float(v))}
                for w, v in zip(weights, values, strict=True)
            ]
        )
    return Instance("mckp", data={"capacity": inp.capacity, "groups": groups})


def _mmkp(inp: Any) -> Instance:
    weights, values, offsets = inp.weights.tolist(), inp.values.tolist(), inp.offsets.tolist()
    groups = [
        [
            {"weight": weights[i], "value": _number(values[i])}
            for i in range(offsets[g], offsets[g + 1])
        ]
        for g in range(inp.n_groups)
    ]
    data = {
        "resources": list(inp.resources),
        "capacity": inp.capacity.tolist(),
        "groups": groups,
        "none": [_number(x) for x in inp.none.tolist()],
    }
    return Instance("mmkp", data=data)


def _memory_split(inp: Any) -> Instance:
    gpu = {"memory_gb": inp.memory_gb, "guarantee_gb": inp.guarantee_gb, "chunk_gb": inp.chunk_gb}
    jobs = [
        {"id": j.id, "peak_gb": j.peak_gb, "curve": [list(point) for point in j.curve]}
        for j in inp.jobs
    ]
    return Instance("memory-split", data={"gpu": gpu, "opportunistic": jobs})


_WRITERS: dict[str, Callable[[Any], Instance]] = {
    "ReclaimInput": _reclaim,
    "PlacementInput": _placement,
    "LeaseInput": _lease,
    "BatchSizeInput": _batch_size,
    "AllocationInput": _allocation,
    "Mckp": _mckp,
    "Mmkp": _mmkp,
    "MemorySplitInput": _memory_split,
}


def to_instance(problem_input: Any) -> Instance:
    """The instance (the file's in-memory form) of a problem's typed input.

    Parameters
    ----------
    problem_input : Any
        A ``ReclaimInput``, ``PlacementInput``, ``LeaseInput``,
        ``BatchSizeInput``, ``AllocationInput``, ``Mckp``, ``Mmkp`` or
        ``MemorySplitInput``.

    Returns
    -------
    Instance
        An instance the problem's reader turns back into an equivalent input
        (``dumps`` it to save it as a file).

    Raises
    ------
    TypeError
        For another type (the policies' states have no instance file).
    ValueError
        For a part the format cannot hold (a custom speed model).

    Examples
    --------
    >>> from scheduling_opt.io.instance import dumps
    >>> from scheduling_opt.mckp import Mckp
    >>> print(dumps(to_instance(Mckp.from_groups([[(1, 2.0)]], 3)), indent=None).strip())
    {"format": "scheduling-opt/v1", "problem": "mckp", "capacity": 3, "groups": [[{"weight": 1, \
"value": 2}]]}
    """
    writer = _WRITERS.get(type(problem_input).__name__)
    if writer is None:
        raise TypeError(f"no instance format for {type(problem_input).__name__}")
    return writer(problem_input)


def read_document(document: Mapping[str, Any] | str) -> Any:
    """The file reader end to end: JSON text, common sections, then the problem's reader.

    Parameters
    ----------
    document : mapping or str
        An instance document (a JSON object as a dict, or its text).

    Returns
    -------
    Any
        The problem's typed input.

    Raises
    ------
    InvalidInstanceError
        Naming the JSON path of the first error.
    UnknownProblemError
        When the document names no known problem.

    Examples
    --------
    >>> doc = {"format": "scheduling-opt/v1", "problem": "mckp", "capacity": -1, "groups": []}
    >>> read_document(doc)
    Traceback (most recent call last):
    ...
    scheduling_opt.errors.InvalidInstanceError: capacity: must be >= 0, got -1
    """
    text = document if isinstance(document, str) else json.dumps(document)
    instance = loads(text)
    return get_problem(instance.problem).parse(instance)
