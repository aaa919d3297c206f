"""ONES: choose each job's GPUs and global batch size by online evolutionary search.

Every GPU of a homogeneous cluster runs at most one job with a local batch;
a job's global batch B_j (<= its limit R_j) and GPU count c_j follow (Eq. 2),
and the schedule minimizes the predicted GPU-time still needed, penalizing
waiting jobs and idle GPUs (objective in :mod:`ones_problem`). ONES,
Bian et al., SC 2021: §3.2 (search, Algorithm 1, Eq. 2-8) and §3.3.2 (limits).

This module is the registry adapter and the instance generator; the parts
live in small modules a scheduler can call directly:

- :mod:`ones_model`: throughput model X_j(B, c), its least-squares fit, the
  best-batch table;
- :mod:`ones_progress`: Beta progress prediction, its MLE fit, the bounded
  training history;
- :mod:`ones_limits`: batch-size limit policies (start, resume, scale-up/down);
- :mod:`ones_problem`: the input, objective, result and checker;
- :mod:`ones_search`: the operators and the pure online step
  :func:`~ones_search.ones_step` (previous population + new job states ->
  best schedule + new population);
- :mod:`ones_exact`: knapsack DP (separable case), CP-SAT (cross-node
  penalty), brute force.

Complexity: ``ones`` O(generations * K * (G log G + J * servers)); ``greedy``
O(G * J); ``exact`` pseudo-polynomial O(J G^2) when separable, else CP-SAT
(exponential worst case, time-limited).
"""

from __future__ import annotations

import re
from typing import Any

import numpy as np

from scheduling_opt.errors import InvalidInstanceError
from scheduling_opt.instance import FORMAT, Instance, from_dict
from scheduling_opt.result import SolveOptions, Status, timed
from scheduling_opt.solvers.ones_exact import solve_exact
from scheduling_opt.solvers.ones_problem import (
    BatchSizeInput,
    BatchSizeResult,
    check,
    make_result,
    parse,
)
from scheduling_opt.solvers.ones_search import greedy, ones_step
from scheduling_opt.solvers.registry import Method, Problem

#: GPUs per server in generated clusters (the ONES evaluation: 16 servers of 4).
GPUS_PER_SERVER = 4


def _run_ones(problem: BatchSizeInput, options: SolveOptions) -> BatchSizeResult:
    # The generation budget alone bounds the search: a time budget would make
    # the answer depend on the machine's load (the bench always passes a time
    # limit, meant for exact methods). ones_step(seconds=...) offers one.
    step, seconds = timed(lambda: ones_step(problem, None, seed=options.seed))
    return make_result(problem, step.genes, Status.FEASIBLE, seconds, "ones", step.generations)


def _run_greedy(problem: BatchSizeInput, options: SolveOptions) -> BatchSizeResult:
    genes, seconds = timed(lambda: greedy(problem))
    return make_result(problem, genes, Status.FEASIBLE, seconds, "greedy")


def _run_exact(problem: BatchSizeInput, options: SolveOptions) -> BatchSizeResult:
    return solve_exact(problem, options.limit, options.seed)


def _size(size: str) -> tuple[int, int]:
    """``g<gpus>`` or ``g<gpus>-n<jobs>`` -> (gpus, jobs); default jobs = 3/4 gpus."""
    match = re.fullmatch(r"g(\d+)(?:-n(\d+))?", size)
    if not match or int(match[1]) < 1 or int(match[1]) % GPUS_PER_SERVER:
        raise InvalidInstanceError(
            "size", f"expected g<gpus, a multiple of {GPUS_PER_SERVER}>[-n<jobs>], got {size!r}"
        )
    gpus = int(match[1])
    jobs = int(match[2]) if match[2] else max(1, 3 * gpus // 4)
    return gpus, jobs


def generate(size: str, seed: int) -> Instance:
    """A seeded instance: servers of 4 GPUs, jobs with random models and progress.

    Jobs: epoch size, memory-bound local batch 32-256, limit R = local x
    1..16 (15% in warm-up: one GPU), 0-20 epochs done, beta ~ U(2, 30)
    epochs to go, analytic throughput with a cross-node penalty.
    Population = GPUs (ONES' suggestion), 100 generations.
    """
    gpus, n = _size(size)
    rng = np.random.default_rng(seed)
    servers = [
        {"id": f"s{i}", "gpu_type": "V100", "gpus": GPUS_PER_SERVER}
        for i in range(gpus // GPUS_PER_SERVER)
    ]
    jobs: list[dict[str, Any]] = []
    per_job: dict[str, Any] = {}
    for i in range(n):
        epoch = int(rng.choice([10_000, 50_000, 60_000, 128_000]))
        local = int(rng.choice([32, 64, 128, 256]))
        warm = bool(rng.random() < 0.15)
        limit = local if warm else local * int(rng.choice([1, 2, 4, 8, 16]))
        done = 0 if warm else int(rng.uniform(0, 20) * epoch)
        jobs.append(
            {
                "id": f"j{i}",
                "min_workers": 1,
                "max_workers": int(min(gpus, rng.choice([2, 4, 8, 16]))),
                "duration": 3600.0,
                "submit_time": round(float(rng.uniform(0, 3600)), 1),
                "batch": {
                    "epoch_size": epoch,
                    "batch_limit": limit,
                    "max_local_batch": local,
                    "processed_samples": done,
                },
            }
        )
        per_job[f"j{i}"] = {
            "beta": round(float(rng.uniform(2, 30)), 3),
            "processed_time": 0.0 if warm else round(float(rng.uniform(0, 7200)), 1),
            "warmup": warm,
            "throughput": {
                "overhead": round(float(rng.uniform(0.01, 0.08)), 4),
                "per_sample": round(float(rng.uniform(0.0005, 0.004)), 5),
                "comm": round(float(rng.uniform(0.005, 0.05)), 4),
                "cross_node": round(float(rng.uniform(0.02, 0.15)), 4),
            },
        }
    return from_dict(
        {
            "format": FORMAT,
            "problem": "batch-size",
            "cluster": {"gpu_types": [{"name": "V100"}], "servers": servers},
            "jobs": jobs,
            "params": {"population": max(8, gpus), "generations": 100, "jobs": per_job},
        }
    )


PROBLEM = Problem(
    name="batch-size",
    summary="ONES: GPUs and batch sizes per job, min predicted GPU-time (ONES §3.2)",
    sense="min",
    parse=parse,
    methods=(
        Method("ones", _run_ones, summary="online evolutionary search (seeded)"),
        Method("greedy", _run_greedy, summary="greedy fill by utilization gain"),
        Method(
            "exact",
            _run_exact,
            exact=True,
            summary="knapsack DP if separable, else CP-SAT with the cross-node penalty",
        ),
    ),
    default="ones",
    check=check,
    generate=generate,
    sizes={
        "quick": ("g8", "g16"),
        "standard": ("g8", "g16", "g16-n24", "g64"),
        "paper": ("g64", "g64-n96"),
    },
)
