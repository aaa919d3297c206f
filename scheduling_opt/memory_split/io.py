"""The ``memory-split`` problem's files: instance <-> input, decision -> JSON, generator.

A ``memory-split`` instance holds a ``gpu`` (``memory_gb``, ``guarantee_gb``,
``chunk_gb``) and its ``opportunistic`` jobs (``id``, ``peak_gb``, ``curve``:
a preset name or [fraction, speed] points); see docs/sharing.md. The only
module of the package that knows files and the registry.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from scheduling_opt.errors import InvalidInstanceError
from scheduling_opt.io.instance import FORMAT, Instance, from_dict
from scheduling_opt.io.sizes import size_number
from scheduling_opt.jsonpath import check_keys, read_array, read_number, read_object, read_string
from scheduling_opt.memory_split.check import check
from scheduling_opt.memory_split.exact import exact
from scheduling_opt.memory_split.exact_highs import exact_highs
from scheduling_opt.memory_split.exact_pulp import exact_pulp
from scheduling_opt.memory_split.greedy import greedy
from scheduling_opt.memory_split.model import (
    PRESETS,
    Curve,
    MemorySplitDecision,
    MemorySplitInput,
    OpportunisticJob,
    check_curve,
)
from scheduling_opt.registry import Method, Problem


def _curve(value: object, path: str) -> Curve:
    if isinstance(value, str):
        if value not in PRESETS:
            raise InvalidInstanceError(path, f"unknown preset {value!r} (known: {sorted(PRESETS)})")
        return PRESETS[value]
    points = []
    for i, point in enumerate(read_array(value, path)):
        p = f"{path}[{i}]"
        pair = read_array(point, p)
        if len(pair) != 2:
            raise InvalidInstanceError(p, "must be [fraction, speed]")
        points.append((read_number(pair[0], f"{p}[0]"), read_number(pair[1], f"{p}[1]")))
    return check_curve(points, path)


def read(instance: Instance) -> MemorySplitInput:
    """Validate the ``gpu`` and ``opportunistic`` sections of a ``memory-split`` instance.

    Parameters
    ----------
    instance : Instance
        A loaded ``memory-split`` instance file.

    Returns
    -------
    MemorySplitInput

    Raises
    ------
    InvalidInstanceError
        Naming the JSON path (``opportunistic[0].curve[1]``).

    Examples
    --------
    >>> from scheduling_opt import load
    >>> [j.id for j in read(load("instances/memory-split-antman-fig10.json")).jobs]
    ['sr', 'vgg', 'resnet']

    References
    ----------
    docs/sharing.md; AntMan (OSDI '20) §3.3.
    """
    data = instance.data
    check_keys(data, "", ("gpu", "opportunistic"), ("gpu", "opportunistic"))
    gpu = read_object(data["gpu"], "gpu")
    check_keys(gpu, "gpu", ("memory_gb", "guarantee_gb", "chunk_gb"), ("memory_gb",))
    memory = read_number(gpu["memory_gb"], "gpu.memory_gb", 0)
    guarantee = read_number(gpu.get("guarantee_gb", 0.0), "gpu.guarantee_gb", 0)
    chunk = read_number(gpu.get("chunk_gb", 0.25), "gpu.chunk_gb", 0)
    jobs = []
    for i, item in enumerate(read_array(data["opportunistic"], "opportunistic")):
        p = f"opportunistic[{i}]"
        obj = read_object(item, p)
        check_keys(obj, p, ("id", "peak_gb", "curve"), ("id", "peak_gb", "curve"))
        job_id = read_string(obj["id"], f"{p}.id")
        peak = read_number(obj["peak_gb"], f"{p}.peak_gb", 0)
        curve = _curve(obj["curve"], f"{p}.curve")
        try:
            jobs.append(OpportunisticJob(job_id, float(peak), curve))
        except InvalidInstanceError as e:
            raise e.at(p) from None
    try:
        return MemorySplitInput(float(memory), tuple(jobs), float(guarantee), float(chunk))
    except InvalidInstanceError as e:
        raise e.at("gpu" if e.path != "jobs" else "opportunistic") from None


def encode(decision: MemorySplitDecision | None) -> dict[str, Any]:
    """The JSON decision: ``chunks``, ``memory_gb`` and ``speed`` per job id.

    An infeasible answer has no decision: every map is empty.

    Parameters
    ----------
    decision : MemorySplitDecision or None

    Returns
    -------
    dict
        The keys the CLI has always printed.

    Examples
    --------
    >>> encode(None)
    {'chunks': {}, 'memory_gb': {}, 'speed': {}}

    References
    ----------
    docs/sharing.md.
    """
    if decision is None:
        return {"chunks": {}, "memory_gb": {}, "speed": {}}
    return {
        "chunks": dict(decision.chunks),
        "memory_gb": dict(decision.memory_gb),
        "speed": dict(decision.speed),
    }


def random_input(n: int, seed: int = 0, chunk_gb: float = 0.25) -> MemorySplitInput:
    """Seeded contended GPU: n jobs (presets and random concave/convex curves).

    Peaks ~ U(2, 20) GB; the spare memory covers every minimum plus 30-70% of
    the rest, so the split always matters and is always feasible.

    Parameters
    ----------
    n : int
        Jobs.
    seed : int
    chunk_gb : float

    Returns
    -------
    MemorySplitInput

    Examples
    --------
    >>> random_input(3, seed=1).minimums_fit()
    True

    References
    ----------
    AntMan (OSDI '20) Figure 10 (the presets).
    """
    rng = np.random.default_rng(seed)
    names = sorted(PRESETS)
    jobs = []
    for i in range(n):
        peak = float(np.round(rng.uniform(2, 20), 2))
        if rng.random() < 0.5:
            curve = PRESETS[names[int(rng.integers(len(names)))]]
        else:
            lo = float(np.round(rng.uniform(0.05, 0.5), 2))
            mid = float(np.round(rng.uniform(lo + 0.01, 0.95), 2))
            s0 = float(np.round(rng.uniform(0.05, 0.8), 3))
            s1 = float(np.round(rng.uniform(s0, 1.0), 3))
            curve = ((lo, s0), (mid, s1), (1.0, 1.0))
        jobs.append(OpportunisticJob(f"o{i}", peak, curve))
    # Chunk counts per job do not depend on the GPU's memory: any that holds all.
    probe = MemorySplitInput(sum(j.peak_gb for j in jobs) + chunk_gb, tuple(jobs), 0.0, chunk_gb)
    need = sum(probe.min_chunks(j) for j in jobs) * chunk_gb
    full = sum(probe.max_chunks(j) for j in jobs) * chunk_gb
    guarantee = float(np.round(rng.uniform(0, 8), 1))
    spare = need + rng.uniform(0.3, 0.7) * (full - need)
    memory = float(math.ceil((guarantee + spare) / chunk_gb) * chunk_gb)
    return MemorySplitInput(memory, tuple(jobs), guarantee, chunk_gb)


def to_instance(inp: MemorySplitInput) -> Instance:
    """The ``memory-split`` instance file of ``inp`` (curves by preset name when one matches).

    Parameters
    ----------
    inp : MemorySplitInput

    Returns
    -------
    Instance

    Examples
    --------
    >>> read(to_instance(random_input(2, seed=0))) == random_input(2, seed=0)
    True
    """
    jobs = []
    for j in inp.jobs:
        preset = next((name for name, c in PRESETS.items() if c == j.curve), None)
        curve: object = preset if preset is not None else [list(p) for p in j.curve]
        jobs.append({"id": j.id, "peak_gb": j.peak_gb, "curve": curve})
    gpu = {"memory_gb": inp.memory_gb, "guarantee_gb": inp.guarantee_gb, "chunk_gb": inp.chunk_gb}
    doc = {"format": FORMAT, "problem": "memory-split", "gpu": gpu, "opportunistic": jobs}
    return from_dict(doc)


#: Most jobs on the one GPU of a generated instance, and the largest chunk (MB).
MAX_JOBS = 1_000
MAX_CHUNK_MB = 100_000

#: The sizes :func:`generate` accepts (``scheduling-opt list`` shows it).
SIZE_GRAMMAR = (
    f"n<jobs>[-c<chunk MB>] (jobs 0..{MAX_JOBS:,} on one GPU; chunk 1..{MAX_CHUNK_MB:,} MB, "
    "default 250; at most 100,000 chunks of memory)"
)


def generate(size: str, seed: int) -> Instance:
    """A seeded ``memory-split`` instance: ``n<jobs>`` (0.25 GB chunks) or ``n<jobs>-c<chunk MB>``.

    Parameters
    ----------
    size : str
    seed : int

    Returns
    -------
    Instance

    Raises
    ------
    InvalidInstanceError
        A malformed ``size``, a number out of its range, or more than
        ``MAX_CHUNKS`` chunks of memory (:data:`SIZE_GRAMMAR`).

    Examples
    --------
    >>> generate("n4-c50", 0).data["gpu"]["chunk_gb"]
    0.05
    """
    parts = size.split("-")
    if (
        not parts[0].startswith("n")
        or len(parts) > 2
        or (len(parts) == 2 and not parts[1].startswith("c"))
    ):
        raise InvalidInstanceError("size", f"expected {SIZE_GRAMMAR}, got {size!r}")
    n = size_number(parts[0][1:], "jobs", 0, MAX_JOBS)
    chunk = 0.25
    if len(parts) == 2:
        chunk = size_number(parts[1][1:], "chunk MB", 1, MAX_CHUNK_MB) / 1000
    return to_instance(random_input(n, seed, chunk))


PROBLEM: Problem[MemorySplitInput, MemorySplitDecision] = Problem(
    name="memory-split",
    summary="AntMan GPU-memory split among co-located opportunistic jobs (AntMan §3.3, Fig. 10)",
    sense="max",
    read=read,
    encode=encode,
    methods=(
        Method("exact", exact, exact=True, summary="MCKP over memory chunks, knapsack DP"),
        Method("exact-highs", exact_highs, exact=True, summary="the same MCKP, HiGHS via scipy"),
        Method(
            "exact-pulp",
            exact_pulp,
            exact=True,
            summary="independent MILP (chunk counts, piecewise-linear curves), PuLP/CBC",
        ),
        Method("greedy", greedy, summary="AntMan trial-and-error: best marginal chunk"),
    ),
    default="exact",
    renamed={"exact-milp": "exact-highs"},
    check=check,
    generate=generate,
    size_grammar=SIZE_GRAMMAR,
    sizes={
        "quick": ("n3", "n4", "n8"),
        "standard": ("n4-c50", "n8-c50", "n16", "n32"),
        "paper": ("n8-c10", "n32-c50", "n64", "n128"),
    },
)
