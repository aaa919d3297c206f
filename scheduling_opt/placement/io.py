"""Placement instance files <-> :class:`PlacementInput`, the decision's JSON, the generator.

The only module of :mod:`scheduling_opt.placement` that knows files and the
registry. Instance ``params`` (all optional): ``sensitivity`` (a speed
model, see :mod:`scheduling_opt.scaling`; default log2 with t1 = 1, t2 =
1.5), ``models`` ``{job: model name}``, ``workers`` ``{elastic job:
count}`` (default ``max_workers``), ``search_space`` (local search's |S|,
default 100,000). Jobs with placement rows are running; the others are to
place. The generator follows the Chronus artifact's workloads (§5.3).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from scheduling_opt.errors import InvalidInstanceError
from scheduling_opt.io.instance import Instance
from scheduling_opt.io.sizes import check_count, size_number
from scheduling_opt.jsonpath import check_keys, read_int, read_object
from scheduling_opt.model import Cluster, GpuType, Job, Placement, PlacementRow, Server
from scheduling_opt.placement.arcflow import exact
from scheduling_opt.placement.bfd import best_fit_decreasing
from scheduling_opt.placement.check import check
from scheduling_opt.placement.consolidation import round_up_consolidation
from scheduling_opt.placement.exact_cpsat import exact_cpsat
from scheduling_opt.placement.exact_pulp import exact_pulp
from scheduling_opt.placement.local_search import chronus_local_search
from scheduling_opt.placement.model import DEFAULT_SEARCH_SPACE, PlacementDecision, PlacementInput
from scheduling_opt.placement.quasi import quasi_consolidation
from scheduling_opt.registry import Method, Problem
from scheduling_opt.scaling import Log2Model, SpeedModel, parse_speed_model

__all__ = ["PROBLEM", "encode", "generate", "generate_placement", "read"]

_PARAMS = ("sensitivity", "models", "workers", "search_space")


def read(instance: Instance) -> PlacementInput:
    """Validate a placement instance's params and build the typed input.

    Parameters
    ----------
    instance : Instance
        A loaded instance of problem ``placement``.

    Returns
    -------
    PlacementInput
        The typed input (errors in ``params`` name their JSON path).

    Raises
    ------
    InvalidInstanceError
        On an unknown section or parameter, or a bad value.

    Examples
    --------
    >>> from scheduling_opt import load
    >>> inp = read(load("instances/placement-chronus-example.json"))
    >>> inp.n_servers, inp.n_jobs
    (2, 2)
    """
    instance.require_no_other_sections()
    cluster = instance.require_cluster()
    params = read_object(dict(instance.params), "params")
    check_keys(params, "params", _PARAMS, ())
    speed: SpeedModel = Log2Model()
    if "sensitivity" in params:
        speed = parse_speed_model(params["sensitivity"], "params.sensitivity")
    search = read_int(params.get("search_space", DEFAULT_SEARCH_SPACE), "params.search_space", 1)
    models = read_object(params.get("models", {}), "params.models")
    workers = read_object(params.get("workers", {}), "params.workers")
    try:
        return PlacementInput(
            cluster,
            instance.jobs,
            instance.placement,
            workers=workers,
            models=models,
            speed=speed,
            search_space=search,
        )
    except InvalidInstanceError as e:
        if e.path.startswith("jobs["):
            raise  # a job no server can ever hold: already the file's path
        # The instance already holds valid jobs and placement: what is left is params.
        raise e.at("params") from None


def encode(decision: PlacementDecision) -> dict[str, Any]:
    """The decision as JSON values: ``placement`` rows, ``unplaced``, ``objective``, ``nodes_spanned``.

    Examples
    --------
    >>> from scheduling_opt.placement.model import PlacementDecision
    >>> encode(PlacementDecision((("a", "n0", 2),), ("b",), 2.0, 1))
    {'placement': [{'job': 'a', 'server': 'n0', 'workers': 2}], 'unplaced': ['b'], 'objective': 2.0, 'nodes_spanned': 1}
    """
    return {
        "placement": [{"job": j, "server": s, "workers": w} for j, s, w in decision.rows],
        "unplaced": list(decision.unplaced),
        "objective": decision.reward,
        "nodes_spanned": decision.nodes_spanned,
    }


#: Log2 profiles (t1, t2) per model, read off the 8-GPU rows of the Chronus
#: artifact's model_info.json (speed on 2 nodes = t1 / t2).
PROFILES: dict[str, tuple[float, float]] = {
    "alexnet": (1.0, 1.97),
    "vgg16": (1.0, 1.75),
    "resnet101": (1.0, 1.055),
    "mobilenet_v2": (1.0, 1.075),
    "inception_v3": (1.0, 1.083),
}
FRIENDLY = (1, 2, 4, 8, 16)
HOSTILE = (3, 5, 6, 7, 12)


def _earlier(rng: np.random.Generator, caps: list[int], target: float) -> list[dict[int, int]]:
    """A random earlier workload: jobs on random servers until ``target`` is used."""
    free = list(caps)
    goal = target * sum(caps)
    jobs: list[dict[int, int]] = []
    while sum(caps) - sum(free) < goal:
        left = int(rng.choice((1, 2, 3, 4, 6, 8)))
        rows: dict[int, int] = {}
        for s in rng.permutation(len(caps)):
            take = min(left, free[s])
            if take:
                rows[int(s)] = take
                free[s] -= take
                left -= take
            if not left:
                break
        if rows:
            jobs.append(rows)
        if left:
            break
    return jobs


def _new_job(rng: np.random.Generator, k: int, hostile: float, has_loan: bool, total: int) -> Job:
    # Only sizes the whole cluster can hold: a bigger job is refused as
    # malformed (docs/architecture.md). Every size fits from 2 servers on, so
    # the filter changes no generated instance there.
    sizes = tuple(g for g in (HOSTILE if rng.random() < hostile else FRIENDLY) if g <= total)
    gpus = int(rng.choice(sizes))
    gpw = 2 if gpus % 2 == 0 and rng.random() < 0.25 else 1
    n = gpus // gpw
    lo = max(1, n // 2) if n > 1 and rng.random() < 0.15 else n
    gpu_type = "V100" if has_loan and rng.random() < 0.1 else None
    return Job(f"j{k + 1}", lo, n, float(rng.integers(600, 86_400)), gpw, gpu_type=gpu_type)


#: Most servers, and jobs, a generated instance may have (about 4 MB of JSON
#: at 10,000 servers).
MAX_SERVERS = 10_000
MAX_JOBS = 100_000

#: The sizes :func:`generate` accepts (``scheduling-opt list`` shows it).
SIZE_GRAMMAR = (
    f"<servers> (1..{MAX_SERVERS:,} of 8 GPUs; jobs ask for 90% of the free GPUs, "
    "443 has 1,000 jobs)"
)


def generate_placement(n_servers: int, seed: int, *, n_jobs: int | None = None) -> Instance:
    """A seeded placement instance on ``n_servers`` 8-GPU servers.

    One in eight servers is a T4 inference server on loan (the rest V100
    training servers); an earlier workload fills 40-70% of the GPUs at
    random; the jobs to place ask for about 90% of the free GPUs (``n_jobs``
    overrides the count), 10-40% of them consolidation-hostile (3, 5, 6, 7, 12
    GPUs), 10% bound to V100, 15% elastic; each names a log2 profile.

    Parameters
    ----------
    n_servers : int
        Servers (>= 1), all of 8 GPUs.
    seed : int
        Seed of the numpy generator.
    n_jobs : int, optional
        Jobs to place (default: enough to ask for 90% of the free GPUs).

    Returns
    -------
    Instance
        A ``placement`` instance with the earlier jobs placed.

    Raises
    ------
    InvalidInstanceError
        If ``n_servers`` is outside 1..:data:`MAX_SERVERS` or ``n_jobs``
        above :data:`MAX_JOBS`.

    Examples
    --------
    >>> inst = generate_placement(16, 0)
    >>> len(inst.cluster.servers), inst.cluster.servers[-1].on_loan
    (16, True)

    References
    ----------
    Chronus §5.3 and its artifact (model_info.json profiles); Aryl §3 (on-loan servers).
    """
    check_count(n_servers, "servers", 1, MAX_SERVERS)
    if n_jobs is not None:
        check_count(n_jobs, "jobs", 0, MAX_JOBS)
    rng = np.random.default_rng(seed)
    n_loan = n_servers // 8
    servers = [Server(f"t{i + 1}", "V100", 8) for i in range(n_servers - n_loan)]
    servers += [Server(f"i{i + 1}", "T4", 8, "inference", True) for i in range(n_loan)]
    caps = [s.gpus for s in servers]
    earlier = _earlier(rng, caps, float(rng.uniform(0.4, 0.7)))
    jobs = [
        Job(f"e{k + 1}", sum(r.values()), sum(r.values()), 3600.0) for k, r in enumerate(earlier)
    ]
    rows = [
        PlacementRow(f"e{k + 1}", servers[s].id, w)
        for k, r in enumerate(earlier)
        for s, w in r.items()
    ]
    free = sum(caps) - sum(r.workers for r in rows)
    hostile = float(rng.uniform(0.1, 0.4))
    new: list[Job] = []
    demand = 0
    while (n_jobs is None and demand < 0.9 * free) or (n_jobs is not None and len(new) < n_jobs):
        job = _new_job(rng, len(new), hostile, n_loan > 0, sum(caps))
        new.append(job)
        demand += job.max_gpus
    names = sorted(PROFILES)
    models = {job.id: names[int(rng.integers(len(names)))] for job in new}
    sensitivity = {
        "kind": "log2",
        "models": {m: {"t1": t1, "t2": t2} for m, (t1, t2) in PROFILES.items()},
    }
    cluster = Cluster((GpuType("V100", 1.0, 32.0), GpuType("T4", 0.25, 16.0)), tuple(servers))
    params = {"sensitivity": sensitivity, "models": models}
    return Instance("placement", cluster, tuple(jobs + new), Placement(tuple(rows)), params)


def generate(size: str, seed: int) -> Instance:
    """The registry's generator: ``size`` is the number of servers (``"443"``: 1,000 jobs).

    Parameters
    ----------
    size : str
        The number of servers, as text.
    seed : int
        Seed of the numpy generator.

    Returns
    -------
    Instance
        :func:`generate_placement` of that many servers.

    Raises
    ------
    InvalidInstanceError
        If ``size`` is not a whole number of servers in 1..:data:`MAX_SERVERS`
        (:data:`SIZE_GRAMMAR`).

    Examples
    --------
    >>> generate("8", 0) == generate("8", 0)
    True
    """
    n = size_number(size, "servers", 1, MAX_SERVERS)
    return generate_placement(n, seed, n_jobs=1000 if n == 443 else None)


PROBLEM: Problem[PlacementInput, PlacementDecision] = Problem(
    name="placement",
    summary="worker placement: maximize total allocation reward RW (Chronus Eq. 7)",
    sense="max",
    read=read,
    encode=encode,
    methods=(
        Method(
            "bfd", best_fit_decreasing, summary="Aryl best-fit decreasing with pool preferences"
        ),
        Method(
            "round-up",
            round_up_consolidation,
            summary="Chronus RoundUp + Proposition 1 consolidation",
        ),
        Method(
            "quasi",
            quasi_consolidation,
            summary="quasi-consolidation: fewest servers, potential order",
        ),
        Method("local-search", chronus_local_search, summary="Chronus Algorithm 1 (|S| = 100,000)"),
        Method(
            "exact",
            exact,
            exact=True,
            summary="arc-flow MILP on identical servers and jobs, HiGHS",
        ),
        Method("exact-cpsat", exact_cpsat, exact=True, summary="per-server model, CP-SAT"),
        Method("exact-pulp", exact_pulp, exact=True, summary="independent model, PuLP/CBC"),
    ),
    default="local-search",
    check=check,
    generate=generate,
    size_grammar=SIZE_GRAMMAR,
    sizes={
        "quick": ("6", "8"),
        "standard": ("16", "96", "120"),
        "paper": ("16", "96", "120"),
    },
)
