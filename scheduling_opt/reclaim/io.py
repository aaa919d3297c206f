"""Reclaim instance files <-> :class:`ReclaimInput`, decisions -> JSON, the generator, PROBLEM.

The only module of :mod:`scheduling_opt.reclaim` that knows instance files
and the registry (Aryl §4's server reclaiming; format v1, ``params``:
``servers_to_reclaim``). Reading is O(P) for P placement rows.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from scheduling_opt.errors import InvalidInstanceError
from scheduling_opt.io.instance import Instance
from scheduling_opt.io.sizes import check_count, size_number
from scheduling_opt.jsonpath import check_keys, read_int
from scheduling_opt.model import Cluster, GpuType, Job, Placement, PlacementRow, Server
from scheduling_opt.reclaim.aryl import aryl
from scheduling_opt.reclaim.aryl_dp import aryl_dp
from scheduling_opt.reclaim.aryl_plus import aryl_plus
from scheduling_opt.reclaim.auto import auto
from scheduling_opt.reclaim.baselines import random_servers, scf
from scheduling_opt.reclaim.check import check
from scheduling_opt.reclaim.exact import exact
from scheduling_opt.reclaim.exact_pulp import exact_pulp
from scheduling_opt.reclaim.model import ReclaimDecision, ReclaimInput
from scheduling_opt.reclaim.two_stage import exact_two_stage
from scheduling_opt.registry import Method, Problem
from scheduling_opt.solution import as_rng


def read(instance: Instance) -> ReclaimInput:
    """The reclaim input of an instance file (``params.servers_to_reclaim`` = N_R).

    Parameters
    ----------
    instance : Instance
        A loaded instance (its common sections already validated).

    Returns
    -------
    ReclaimInput
        The cluster, jobs, placement and N_R.

    Raises
    ------
    InvalidInstanceError
        Naming ``params.servers_to_reclaim`` (missing, not an integer >= 0, or
        above the on-loan server count), ``cluster`` (absent) or an unknown
        section.

    Examples
    --------
    >>> from scheduling_opt import load
    >>> read(load("instances/reclaim-aryl-fig5.json")).n_reclaim
    2

    References
    ----------
    docs/instance-format.md (format v1); Aryl (EuroSys '22) §4.
    """
    instance.require_no_other_sections()
    check_keys(instance.params, "params", ("servers_to_reclaim",), ("servers_to_reclaim",))
    cluster = instance.require_cluster()
    on_loan = cluster.on_loan_servers()
    n_reclaim = read_int(instance.params["servers_to_reclaim"], "params.servers_to_reclaim", 0)
    if n_reclaim > len(on_loan):
        raise InvalidInstanceError(
            "params.servers_to_reclaim",
            f"cannot reclaim {n_reclaim} servers: only {len(on_loan)} are on loan",
        )
    return ReclaimInput(cluster, instance.jobs, instance.placement, n_reclaim)


def encode(decision: ReclaimDecision) -> dict[str, Any]:
    """The JSON decision: ``servers``, ``preempted_jobs``, ``scaled_in``, ``objective``, ``collateral_gpus``.

    Examples
    --------
    >>> encode(ReclaimDecision(("1", "2"), ("a",), (("c", 1),), 0))["objective"]
    1
    """
    return {
        "servers": list(decision.servers),
        "preempted_jobs": list(decision.preempted_jobs),
        "scaled_in": dict(decision.scaled_in),
        "objective": len(decision.preempted_jobs),
        "collateral_gpus": decision.collateral_gpus,
    }


def _place_job(
    rng: np.random.Generator, free: list[int], span: int, gpw: int, cap: int
) -> dict[int, int]:
    """Workers per server for one job on ``span`` neighbouring servers with room.

    Neighbouring servers (a random start, then the next ones with room) as a
    best-fit placer tends to produce: chains of jobs sharing servers, the
    structure of Figure 5.
    """
    n = len(free)
    start = int(rng.integers(n))
    picked: dict[int, int] = {}
    for step in range(n):
        s = (start + step) % n
        room = free[s] // gpw
        if room:
            picked[s] = int(rng.integers(1, min(room, cap) + 1))
            if len(picked) == span:
                break
    return picked


#: Most on-loan servers a generated instance may have (about 40 MB of JSON).
MAX_SERVERS = 50_000

#: The sizes :func:`generate` accepts (``scheduling-opt list`` shows it).
SIZE_GRAMMAR = f"<on-loan servers> (1..{MAX_SERVERS:,}; about 2 jobs per server, N_R = n/4)"


def generate_reclaim(n_servers: int, seed: int, *, n_reclaim: int | None = None) -> Instance:
    """A seeded reclaim instance: ``n_servers`` on-loan 8-GPU servers, ~2x jobs.

    Jobs span 1-4 servers (neighbouring ones), 1-2 GPUs per worker; 30% are
    elastic with a slack of up to half their workers; 20% also run workers
    on one of the n/4 training servers. N_R defaults to n/4.

    Examples
    --------
    >>> inst = generate_reclaim(20, 0)
    >>> read(inst).n_servers, read(inst).n_reclaim
    (20, 5)
    """
    check_count(n_servers, "on-loan servers", 1, MAX_SERVERS)
    rng = as_rng(seed)
    n_train = max(1, n_servers // 4)
    free = [8] * n_servers
    train_free = [8] * n_train
    jobs: list[Job] = []
    rows: list[PlacementRow] = []
    for k in range(2 * n_servers):
        span = int(rng.choice([1, 2, 3, 4], p=[0.35, 0.3, 0.2, 0.15]))
        gpw = int(rng.choice([1, 2], p=[0.75, 0.25]))
        on_loan = _place_job(rng, free, span, gpw, 2 // gpw)
        if not on_loan:
            break
        placed = {f"i{s + 1}": w for s, w in on_loan.items()}
        for s, w in on_loan.items():
            free[s] -= w * gpw
        t = int(rng.integers(n_train))
        if rng.random() < 0.2 and train_free[t] >= gpw:
            w = int(rng.integers(1, train_free[t] // gpw + 1))
            train_free[t] -= w * gpw
            placed[f"t{t + 1}"] = w
        total = sum(placed.values())
        slack = int(rng.integers(1, total // 2 + 1)) if total > 1 and rng.random() < 0.3 else 0
        high = total + (int(rng.integers(1, 4)) if slack else 0)
        job_id = f"j{k + 1}"
        jobs.append(Job(job_id, total - slack, high, float(rng.integers(600, 86400)), gpw))
        rows.extend(PlacementRow(job_id, sid, w) for sid, w in placed.items())
    servers = [Server(f"t{i + 1}", "V100", 8) for i in range(n_train)]
    servers += [Server(f"i{i + 1}", "T4", 8, "inference", True) for i in range(n_servers)]
    cluster = Cluster((GpuType("V100", 1.0, 32.0), GpuType("T4", 0.25, 16.0)), tuple(servers))
    n_r = max(1, n_servers // 4) if n_reclaim is None else n_reclaim
    return Instance(
        "reclaim", cluster, tuple(jobs), Placement(tuple(rows)), {"servers_to_reclaim": n_r}
    )


def generate(size: str, seed: int) -> Instance:
    """The registry's generator: ``size`` is the number of on-loan servers (:data:`SIZE_GRAMMAR`).

    Parameters
    ----------
    size : str
        Digits: the on-loan servers, 1..:data:`MAX_SERVERS`.
    seed : int

    Returns
    -------
    Instance
        :func:`generate_reclaim` of that many servers.

    Raises
    ------
    InvalidInstanceError
        Not a whole number, or out of range (the message names the limit).

    Examples
    --------
    >>> len(generate("200", 0).cluster.on_loan_servers())
    200
    """
    return generate_reclaim(size_number(size, "on-loan servers", 1, MAX_SERVERS), seed)


PROBLEM: Problem[ReclaimInput, ReclaimDecision] = Problem(
    name="reclaim",
    summary="Aryl server reclaiming: return N_R on-loan servers, fewest preempted jobs",
    sense="min",
    read=read,
    encode=encode,
    methods=(
        Method("aryl", aryl, summary="Algorithm 1: free servers, then 1/|S_j| cost greedy"),
        Method("aryl-plus", aryl_plus, summary="ours: tie-aware greedy + swap local search"),
        Method("aryl-dp", aryl_dp, summary="ours: Algorithm 1 per component + budget DP + swaps"),
        Method("scf", scf, summary="smallest job count first (baseline)"),
        Method("random", random_servers, summary="N_R random on-loan servers (seeded baseline)"),
        Method("auto", auto, summary="frontier DP's proven optimum if cheap, else aryl-dp"),
        Method("exact", exact, exact=True, summary="frontier DP; two-stage MILP if too wide"),
        Method(
            "exact-two-stage",
            exact_two_stage,
            exact=True,
            summary="two-stage lexicographic MILP (HiGHS)",
        ),
        Method("exact-pulp", exact_pulp, exact=True, summary="independent PuLP model (CBC)"),
    ),
    # auto: the frontier DP's proven optimum (0.4-36 ms CPU up to 500 servers),
    # aryl-dp when the DP's frontier is too wide (docs/reclaim.md, "auto").
    default="auto",
    check=check,
    generate=generate,
    size_grammar=SIZE_GRAMMAR,
    sizes={
        "quick": ("8", "12"),
        "standard": ("20", "60", "150", "500"),
        "paper": ("20", "60", "150", "500", "1000"),
    },
)
