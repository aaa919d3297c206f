"""Lease instance files <-> :class:`LeaseInput`, decisions -> JSON, the generator, ``PROBLEM``.

The only module of :mod:`scheduling_opt.lease` that knows instance files and
the registry. Params (docs/lease.md): ``lease_length`` (required), ``gpus``
(M; default: training GPUs minus those held by placed jobs not selected),
``jobs`` (the selection), ``require_all``, ``round_up``, ``max_terms``.
Chronus §3.3 (problem) and §4.1 (the generator's deadline steps).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from scheduling_opt.errors import InvalidInstanceError
from scheduling_opt.io.instance import Instance
from scheduling_opt.io.sizes import check_count, size_number
from scheduling_opt.jsonpath import (
    check_keys,
    read_array,
    read_bool,
    read_int,
    read_number,
    read_string,
)
from scheduling_opt.lease.check import check
from scheduling_opt.lease.edf import edf
from scheduling_opt.lease.exact import exact
from scheduling_opt.lease.exact_cpsat import exact_cpsat
from scheduling_opt.lease.exact_pulp import exact_pulp
from scheduling_opt.lease.greedy import greedy
from scheduling_opt.lease.model import LeaseDecision, LeaseInput
from scheduling_opt.model import Cluster, GpuType, Job, RewardStep, Server
from scheduling_opt.registry import Method, Problem

__all__ = ["PROBLEM", "encode", "generate", "generate_lease", "read"]

_PARAMS = ("lease_length", "gpus", "require_all", "round_up", "max_terms", "jobs")


def _selection(instance: Instance) -> list[int]:
    """Indices (in ``instance.jobs``) of the SLO jobs to schedule."""
    if "jobs" not in instance.params:
        return list(range(len(instance.jobs)))
    ids = read_array(instance.params["jobs"], "params.jobs")
    index = {job.id: i for i, job in enumerate(instance.jobs)}
    out: list[int] = []
    for n, raw in enumerate(ids):
        # An id must be a string: a list or object there is no id (and unhashable).
        job_id = read_string(raw, f"params.jobs[{n}]")
        if job_id not in index:
            raise InvalidInstanceError(f"params.jobs[{n}]", f"unknown job {job_id!r}")
        if index[job_id] in out:
            raise InvalidInstanceError(f"params.jobs[{n}]", f"job {job_id!r} listed twice")
        out.append(index[job_id])
    return out


def _capacity(instance: Instance, selected: Sequence[int]) -> int:
    """``params.gpus``, else training GPUs minus those held by placed jobs not selected."""
    if "gpus" in instance.params:
        return read_int(instance.params["gpus"], "params.gpus", 0)
    cluster = instance.require_cluster()
    total = sum(s.gpus for s in cluster.servers if s.usable_for_training)
    chosen = {instance.jobs[i].id for i in selected}
    held = sum(
        row.workers * instance.jobs_by_id[row.job].gpus_per_worker
        for row in instance.placement.rows
        if row.job not in chosen
    )
    return max(total - held, 0)


def read(instance: Instance) -> LeaseInput:
    """Validate a lease instance's params and jobs; the typed input.

    Parameters
    ----------
    instance : Instance
        A loaded instance of problem ``lease``.

    Returns
    -------
    LeaseInput
        The SLO jobs selected by ``params.jobs`` (default: all), M and T_l.

    Raises
    ------
    InvalidInstanceError
        Naming the JSON path (``params.jobs[0]``, ``jobs[2].deadlines``,
        with ``jobs[i]`` numbered as in the file).

    Examples
    --------
    >>> from scheduling_opt.io.instance import load
    >>> inp = read(load("instances/lease-example.json"))
    >>> inp.capacity, inp.lease_length, [j.id for j in inp.jobs]
    (8, 1200.0, ['a', 'b', 'c'])

    References
    ----------
    Chronus (SoCC '21) §3.3.4; docs/instance-format.md.
    """
    instance.require_no_other_sections()
    params = instance.params
    check_keys(params, "params", _PARAMS, ("lease_length",))
    lease_length = read_number(params["lease_length"], "params.lease_length")
    if not lease_length > 0:
        raise InvalidInstanceError(
            "params.lease_length", f"must be > 0 seconds, got {lease_length}"
        )
    max_terms = (
        read_int(params["max_terms"], "params.max_terms", 1) if "max_terms" in params else None
    )
    require_all = read_bool(params.get("require_all", False), "params.require_all")
    round_up = read_bool(params.get("round_up", False), "params.round_up")
    selected = _selection(instance)
    capacity = _capacity(instance, selected)
    try:
        return LeaseInput(
            tuple(instance.jobs[i] for i in selected),
            capacity,
            lease_length,
            require_all=require_all,
            round_up=round_up,
            max_terms=max_terms,
        )
    except InvalidInstanceError as e:
        if e.path.startswith("jobs["):  # renumber to the instance's job index
            n = int(e.path[5 : e.path.index("]")])
            raise InvalidInstanceError(
                f"jobs[{selected[n]}]{e.path[e.path.index(']') + 1 :]}", e.reason
            ) from None
        raise


def encode(decision: LeaseDecision) -> dict[str, Any]:
    """The JSON decision: ``levels``, ``terms``, ``run_now``, ``objective``.

    Parameters
    ----------
    decision : LeaseDecision
        Any method's decision.

    Returns
    -------
    dict
        ``levels`` (job id -> deadline index or None), ``terms`` (job id ->
        list of term indices), ``run_now`` (jobs holding term 0),
        ``objective`` (the total reward).

    Raises
    ------
    SchedulingOptError
        Never: every decision encodes.

    Examples
    --------
    >>> from scheduling_opt.lease import LeaseDecision
    >>> encode(LeaseDecision({"a": 0, "b": None}, {"a": (0, 1), "b": ()}, 100.0))
    {'levels': {'a': 0, 'b': None}, 'terms': {'a': [0, 1], 'b': []}, 'run_now': ['a'], \
'objective': 100.0}

    References
    ----------
    docs/lease.md (decision keys).
    """
    return {
        "levels": dict(decision.levels),
        "terms": {job: list(held) for job, held in decision.terms.items()},
        "run_now": list(decision.run_now),
        "objective": decision.reward,
    }


# --------------------------------------------------------------------------- generator

_GPU_SIZES = (1, 2, 4, 8, 16, 32, 3, 12)
_GPU_P = (0.40, 0.14, 0.16, 0.14, 0.08, 0.03, 0.03, 0.02)


def _steps(rng: np.random.Generator, remaining: float) -> tuple[RewardStep, ...]:
    """§4.1: D1 in [1.2 R, 2 R]; a third strict (100), the rest soft (100/80/50/20)."""
    d1 = float(rng.uniform(1.2, 2.0)) * remaining
    if rng.random() < 1 / 3:
        return (RewardStep(round(d1), 100),)
    return tuple(
        RewardStep(round(f * d1), v)
        for f, v in zip((1.0, 1.1, 1.2, 1.5), (100, 80, 50, 20), strict=True)
    )


#: Most servers, and jobs, a generated instance may have (about 35 MB of JSON
#: at 100,000 jobs).
MAX_SERVERS = 100_000
MAX_JOBS = 100_000

#: The sizes :func:`generate` accepts (``scheduling-opt list`` shows it).
SIZE_GRAMMAR = (
    f"j<jobs> (one 4-GPU server) or c<servers>-j<jobs> (8-GPU servers); "
    f"servers 1..{MAX_SERVERS:,}, jobs 1..{MAX_JOBS:,}"
)


def generate_lease(
    servers: int,
    n_jobs: int,
    seed: int,
    *,
    gpus_per_server: int = 8,
    lease_length: float = 1200.0,
    max_terms: int | None = 72,
    max_need: int = 40,
    pressure: float = 3.0,
) -> Instance:
    """A seeded instance: ``n_jobs`` SLO jobs on ``servers`` servers of ``gpus_per_server``.

    GPUs per job from a Philly-like mix, scaled up (when needed) so that the
    jobs together ask for about ``pressure`` x M GPUs (each job must run
    about 60% of its window and many cannot start at once), capped at M; RL_i
    lognormal (median 5 terms, at most ``max_need``); remaining time within
    its last term; deadline steps as in Chronus §4.1.

    Parameters
    ----------
    servers, n_jobs : int
        Cluster size (servers of ``gpus_per_server`` GPUs) and job count.
    seed : int
        The numpy seed.
    gpus_per_server : int
        GPUs per server.
    lease_length : float
        T_l in seconds.
    max_terms : int or None
        ``params.max_terms`` (None: not set).
    max_need : int
        Most terms a job needs.
    pressure : float
        Total GPU demand as a multiple of M.

    Returns
    -------
    Instance
        A lease instance (``params.lease_length``, ``params.max_terms``).

    Raises
    ------
    InvalidInstanceError
        With servers outside 1..:data:`MAX_SERVERS` or jobs outside
        1..:data:`MAX_JOBS`.

    Examples
    --------
    >>> inst = generate_lease(1, 3, 0, gpus_per_server=4)
    >>> len(inst.jobs), inst.params["lease_length"]
    (3, 1200.0)

    References
    ----------
    Chronus (SoCC '21) §4.1 (deadline steps).
    """
    check_count(servers, "servers", 1, MAX_SERVERS)
    check_count(n_jobs, "jobs", 1, MAX_JOBS)
    rng = np.random.default_rng(seed)
    total = servers * gpus_per_server
    mean = sum(g * p for g, p in zip(_GPU_SIZES, _GPU_P, strict=True))
    scale = max(1.0, pressure * total / (n_jobs * mean))
    jobs: list[Job] = []
    for n in range(n_jobs):
        gpus = min(max(1, round(int(rng.choice(_GPU_SIZES, p=_GPU_P)) * scale)), total)
        need = int(np.clip(round(float(np.exp(rng.normal(1.6, 0.9)))), 1, max_need))
        remaining = round((need - 1 + float(rng.uniform(0.05, 1.0))) * lease_length)
        jobs.append(
            Job(f"j{n + 1}", gpus, gpus, float(remaining), deadlines=_steps(rng, remaining))
        )
    cluster = Cluster(
        (GpuType("V100"),),
        tuple(Server(f"s{k + 1}", "V100", gpus_per_server) for k in range(servers)),
    )
    params: dict[str, Any] = {"lease_length": lease_length}
    if max_terms is not None:
        params["max_terms"] = max_terms
    return Instance("lease", cluster, tuple(jobs), params=params)


def generate(size: str, seed: int) -> Instance:
    """A seeded instance of a named size.

    Parameters
    ----------
    size : str
        ``j<N>``: N short jobs on one 4-GPU server (tiny, brute-forceable);
        ``c<S>-j<N>``: N jobs on S 8-GPU servers (``c120-j200``: Chronus' C120).
    seed : int
        The numpy seed.

    Returns
    -------
    Instance
        As :func:`generate_lease`.

    Raises
    ------
    InvalidInstanceError
        For a size outside :data:`SIZE_GRAMMAR` (the message names the limit).

    Examples
    --------
    >>> len(generate("c2-j12", 7).jobs)
    12

    References
    ----------
    Chronus (SoCC '21) §4.1.
    """
    if size.startswith("j"):
        n_jobs = size_number(size[1:], "jobs", 1, MAX_JOBS)
        return generate_lease(1, n_jobs, seed, gpus_per_server=4, max_need=3)
    parts = size.split("-")
    if len(parts) == 2 and parts[0].startswith("c") and parts[1].startswith("j"):
        servers = size_number(parts[0][1:], "servers", 1, MAX_SERVERS)
        return generate_lease(servers, size_number(parts[1][1:], "jobs", 1, MAX_JOBS), seed)
    raise InvalidInstanceError("size", f"expected {SIZE_GRAMMAR}, got {size!r}")


PROBLEM: Problem[LeaseInput, LeaseDecision] = Problem(
    name="lease",
    summary="Chronus SLO lease selection: which jobs hold which lease terms, max reward",
    sense="max",
    read=read,
    encode=encode,
    methods=(
        Method("exact", exact, exact=True, summary="tightened MILP, levels then packing (HiGHS)"),
        Method("exact-cpsat", exact_cpsat, exact=True, summary="same model on CP-SAT"),
        Method("exact-pulp", exact_pulp, exact=True, summary="paper's MILP, independent (CBC)"),
        Method("greedy", greedy, summary="best of 3 orders, as late as possible"),
        Method("edf", edf, summary="earliest deadline first (paper's baseline)"),
    ),
    default="exact",
    check=check,
    generate=generate,
    size_grammar=SIZE_GRAMMAR,
    sizes={
        "quick": ("j4", "j6", "c1-j6"),
        "standard": ("c1-j10", "c4-j24", "c16-j60"),
        "paper": ("c60-j100", "c120-j200"),
    },
)
