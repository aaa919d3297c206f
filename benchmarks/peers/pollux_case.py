"""Pollux's simulator with a policy built on scheduling-opt (case study, issue 41).

Usage (in the peers' environment of ``benchmarks/peers/README.md``)::

    python benchmarks/peers/pollux_case.py POLLUX_SIM_DIR WORKLOAD
        --policy ours|optimus|tiresias|pollux [--max-rounds N] [--out FILE.json]

``POLLUX_SIM_DIR`` is the ``simulator/`` folder of petuum/adaptdl, branch
``osdi21-artifact`` (OSDI '21); ``WORKLOAD`` one of its ``workloads/*.csv``
(relative to it or absolute). The simulator's loop runs as its
``simulate()`` does (16 nodes x 4 GPUs, 60 s rounds, no autoscaling), with
the named policy; every call of ``optimize(jobs, nodes, prev_allocations,
node_template)`` is timed (CPU time of the process: the machine is shared).

``ours`` is Optimus' objective solved exactly and placed by the library:

- allocation: a multiple-choice knapsack (:func:`scheduling_opt.mckp.core`)
  with a group per job and an item per replica count ``n`` (weight ``n``
  GPUs, value ``B + remaining * (T(1) - T(n))``: Optimus' own step-time
  model ``predict_step_time`` and remaining iterations, and ``B`` larger
  than every gain so that as many jobs as possible run, as Optimus first
  gives every job one replica); Optimus climbs the same objective greedily
  by marginal gain, which is optimal only when every job's gains are
  concave;
- placement: jobs whose replica count is unchanged keep their GPUs (as
  Optimus does); the others by Chronus' local search
  (:func:`scheduling_opt.placement.chronus_local_search` on
  :meth:`~scheduling_opt.placement.PlacementInput.with_free`, the log2
  placement model: consolidated first), where Optimus fills the node with
  the most free GPUs.

The policy is a subclass of the simulator's ``OptimusPolicy`` (its cluster
then gives it Optimus' job information). Output: per round the decision
time, per run the JCTs and the makespan.
"""

from __future__ import annotations

import argparse
import collections
import contextlib
import importlib
import io
import json
import os
import sys
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from scheduling_opt.mckp import Mckp, core
from scheduling_opt.model import Cluster, GpuType, Job, Server
from scheduling_opt.placement import PlacementInput, chronus_local_search


@contextlib.contextmanager
def quiet() -> Iterator[None]:
    """The simulator's policies print; swallow it."""
    with contextlib.redirect_stdout(io.StringIO()):
        yield


def remaining_iterations(job: Any) -> float:
    """Optimus' remaining work of a job: iterations to its completion epoch (>= 1)."""
    app, bsz = job.application, job.target_batch_size
    done_at = app.get_completion_epoch(bsz)
    if done_at <= job.epoch:
        return 1.0
    return float(app.get_iteration(bsz, done_at) - app.get_iteration(bsz, job.epoch))


def allocate(gains: Sequence[Sequence[float]], capacity: int) -> tuple[list[int], float, bool]:
    """Replicas per job maximizing (jobs running, then total gain): the MCKP's choice.

    ``gains[j][n - 1]`` is job j's gain with n replicas (``gains[j][0]`` is 0).
    """
    bonus = 1.0 + sum(max(g, default=0.0) for g in gains)
    groups = [[(n + 1, bonus + float(g)) for n, g in enumerate(row)] for row in gains]
    sol = core(Mckp.from_groups(groups, capacity))
    assert sol.decision is not None
    replicas = [0 if i is None else i + 1 for i in sol.decision.choice]
    return replicas, sol.objective or 0.0, sol.status.value == "optimal"


def place(
    gpus_per_node: Sequence[int], free: Sequence[int], todo: dict[str, int]
) -> dict[str, list[int]]:
    """Nodes for each job's replicas by the library's local search (one GPU per replica)."""
    cluster = Cluster(
        (GpuType("gpu"),),
        tuple(Server(f"n{i}", "gpu", g) for i, g in enumerate(gpus_per_node)),
    )
    inp = PlacementInput.with_free(
        cluster,
        [Job(key, n, n, 1.0) for key, n in todo.items()],
        {f"n{i}": f for i, f in enumerate(free)},
    )
    sol = chronus_local_search(inp)
    assert sol.decision is not None
    out: dict[str, list[int]] = {}
    for key, server, workers in sol.decision.rows:
        out.setdefault(key, []).extend([int(server[1:])] * workers)
    return out


def make_ours(optimus_cls: Any) -> Any:
    """The library-backed policy as a subclass of the simulator's OptimusPolicy."""

    class LibraryPolicy(optimus_cls):  # type: ignore[misc]
        """Optimus' objective, solved exactly; placement by local search."""

        def __init__(self) -> None:
            super().__init__()
            self.step_times: dict[tuple[str, int, int], float] = {}
            #: CPU seconds of the library's calls (knapsack and placement) per round.
            self.solve_seconds: list[float] = []

        def step_time(self, job: Any, n: int) -> float:
            """Optimus' predicted step time, kept per (application, batch size, replicas)."""
            key = (job.application.name, int(job.target_batch_size), n)
            got = self.step_times.get(key)
            if got is None:
                got = self.step_times[key] = float(self.predict_step_time(job, n))
            return got

        def optimize(self, jobs: Any, nodes: Any, prev_allocations: Any, node_template: Any) -> Any:
            keys = list(jobs)
            total = int(sum(node.resources["nvidia.com/gpu"] for node in nodes.values()))
            gains: list[list[float]] = []
            for key in keys:
                job = jobs[key]
                rem = remaining_iterations(job)
                top = max(1, min(int(job.max_replicas), total))
                base = self.step_time(job, 1)
                gains.append([rem * (base - self.step_time(job, n)) for n in range(1, top + 1)])
            t0 = time.process_time()
            replicas, _, _ = allocate(gains, total)
            want = dict(zip(keys, replicas, strict=True))
            kept = {
                k: v for k, v in prev_allocations.items() if k in jobs and len(v) == want[k] > 0
            }
            idx = sorted(nodes)
            size = [int(nodes[i].resources["nvidia.com/gpu"]) for i in idx]
            used = collections.Counter(n for alloc in kept.values() for n in alloc)
            free = [size[p] - used.get(i, 0) for p, i in enumerate(idx)]
            todo = {k: n for k, n in want.items() if n > 0 and k not in kept}
            allocations = dict(kept)
            if todo:
                for key, where in place(size, free, todo).items():
                    allocations[key] = [idx[p] for p in where]
            self.solve_seconds.append(time.process_time() - t0)
            return allocations, len(nodes)

    return LibraryPolicy


def run(args: argparse.Namespace) -> dict[str, Any]:
    """One simulation; per-round decision times and the run's JCTs and makespan."""
    sim_dir = Path(args.sim_dir).resolve()
    workload = Path(args.workload)
    workload = workload if workload.is_absolute() else sim_dir / workload
    os.chdir(sim_dir)
    sys.path.insert(0, str(sim_dir))
    pandas: Any = importlib.import_module("pandas")
    with quiet():
        sim: Any = importlib.import_module("simulator")
    holder: dict[str, Any] = {}
    if args.policy == "tiresias":
        policy = sim.TiresiasPolicy(lambda: holder["cluster"].current_time)
    elif args.policy == "optimus":
        policy = sim.OptimusPolicy()
    elif args.policy == "pollux":
        policy = sim.PolluxPolicy()
    else:
        policy = make_ours(sim.OptimusPolicy)()
    times: list[float] = []
    sizes: list[int] = []
    inner = policy.optimize

    def timed(jobs: Any, nodes: Any, prev: Any, template: Any) -> Any:
        # CPU time: the machine is shared, and the wall clock counts the others' work.
        t0 = time.process_time()
        out = inner(jobs, nodes, prev, template)
        times.append(time.process_time() - t0)
        sizes.append(len(jobs))
        return out

    policy.optimize = timed
    cluster = sim.Cluster(pandas.read_csv(workload), policy, 16, num_gpus=4)
    holder["cluster"] = cluster
    started = time.process_time()
    rounds = 0
    with quiet():
        while not cluster.all_complete() and (args.max_rounds is None or rounds < args.max_rounds):
            cluster.step(60)
            rounds += 1
    jcts = cluster.get_jcts()
    done = [v for v in cluster.logs[-1]["submitted_jobs"] if v["completion_time"] is not None]
    ms = np.array(times) * 1e3
    return {
        "workload": str(args.workload),
        "policy": args.policy,
        "rounds": rounds,
        "complete": bool(cluster.all_complete()),
        "jobs_done": len(done),
        "avg_jct_s": sum(jcts.values()) / len(jcts) if jcts else None,
        "makespan_s": max((v["completion_time"] for v in done), default=None),
        "decision_cpu_ms_mean": float(ms.mean()) if len(ms) else None,
        "decision_cpu_ms_p95": float(np.percentile(ms, 95)) if len(ms) else None,
        "decision_cpu_ms_max": float(ms.max()) if len(ms) else None,
        "max_jobs": max(sizes, default=0),
        "library_cpu_ms_mean": (
            float(np.mean(policy.solve_seconds)) * 1e3 if args.policy == "ours" else None
        ),
        "library_cpu_ms_max": (
            float(np.max(policy.solve_seconds)) * 1e3 if args.policy == "ours" else None
        ),
        "cpu_s": time.process_time() - started,
        "jcts": jcts,
    }


def main(argv: Sequence[str] | None = None) -> int:
    """Parse, run, write the JSON and print a summary line."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("sim_dir")
    parser.add_argument("workload")
    parser.add_argument(
        "--policy", choices=("ours", "optimus", "tiresias", "pollux"), required=True
    )
    parser.add_argument("--max-rounds", type=int)
    parser.add_argument("--out")
    args = parser.parse_args(argv)
    out = Path(args.out).resolve() if args.out else None
    result = run(args)
    if out is not None:
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(json.dumps(result, indent=1, default=float))
    print(json.dumps({k: v for k, v in result.items() if k != "jcts"}, default=float))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
