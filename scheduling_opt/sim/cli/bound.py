"""``scheduling-opt bound``: the offline bounds of a workload on a cluster.

With no arguments: the bundled excerpt (P_MIX2's first day) on its busy
size (:data:`~scheduling_opt.sim.cli.busy.BUNDLED_BUSY_SERVERS` x 8 GPUs), the
bounds covering every registered policy that runs one job per GPU at
speed 1 at most (``--policy`` names others: GPU sharing, batch-model
speeds). A trace file or the synthetic workload is bounded on Chronus'
120 x 8 GPUs unless ``--servers`` says otherwise, as ``simulate`` runs
them. ``--json`` prints one object (docs/bounds.md, "Output").
"""

from __future__ import annotations

import argparse
import json

from scheduling_opt.sim import limits, registry
from scheduling_opt.sim.bounds.envelope import envelope_of, one_job_per_gpu
from scheduling_opt.sim.bounds.solve import Bound, Bounds, offline_bounds
from scheduling_opt.sim.cli.busy import BUNDLED_BUSY_SERVERS
from scheduling_opt.sim.cli.options import TRACE_SERVERS, add_source, as_options, preload_trace
from scheduling_opt.sim.cluster import ClusterSpec
from scheduling_opt.sim.synthetic import SyntheticSpec, generate
from scheduling_opt.sim.workload import BUNDLED, Workload, bundled

TIME_UNIT = "minutes"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The ``bound`` options."""
    add_source(parser)
    parser.add_argument(
        "--servers",
        type=int,
        help=f"servers (default {BUNDLED_BUSY_SERVERS} for the bundled excerpt, its busy size; "
        f"{TRACE_SERVERS} otherwise)",
    )
    parser.add_argument("--gpus-per-server", type=int, default=8, help="GPUs per server (8)")
    parser.add_argument(
        "--policy",
        action="append",
        metavar="P",
        help="a policy the bounds must cover (repeatable; default: every policy that runs "
        "one job per GPU at speed <= 1)",
    )
    parser.add_argument("--skip", type=float, default=0.0, help="leave the first fraction out")
    parser.add_argument(
        "--no-placement-table",
        action="store_true",
        help="runs without model_info.json (no spread speed-up to allow for)",
    )
    parser.add_argument("--synthetic-jobs", type=int, default=1000, help="synthetic size")
    parser.add_argument(
        "--time-limit",
        type=float,
        metavar="S",
        help="seconds per iterative bound (still valid when it stops them; default: "
        "their fixed step budgets, the same answer on any machine)",
    )
    parser.add_argument("--json", action="store_true", help="print one JSON object")


def _workload(args: argparse.Namespace) -> Workload:
    if args.trace is not None:
        return preload_trace(args.trace)
    if args.workload == "synthetic":
        with as_options({"jobs": "--synthetic-jobs"}):
            return generate(SyntheticSpec(jobs=args.synthetic_jobs), 0)
    return bundled()


def _policies(args: argparse.Namespace) -> list[tuple[str, tuple[tuple[str, object], ...]]]:
    if not args.policy:
        return [(p, ()) for p in sorted(one_job_per_gpu(registry.policy_names()))]
    chosen = [registry.parse_policy(p) for p in args.policy]
    return list(dict.fromkeys(chosen))


def compute(args: argparse.Namespace) -> tuple[Workload, ClusterSpec, Bounds]:
    """The workload, the cluster and the bounds the options ask for (every option checked)."""
    bundled_run = args.trace is None and args.workload in (None, BUNDLED)
    servers = args.servers
    if servers is None:
        servers = BUNDLED_BUSY_SERVERS if bundled_run else TRACE_SERVERS
    skip = limits.fraction(args.skip, "--skip")
    if args.time_limit is not None:
        limits.clock(args.time_limit, "--time-limit", positive=True)
    with as_options():
        cluster = ClusterSpec.uniform(servers, args.gpus_per_server)
    env = envelope_of(
        [(p, dict(params)) for p, params in _policies(args)],
        placement_table=not args.no_placement_table,
    )
    workload = _workload(args)
    bounds = offline_bounds(workload, cluster, env, skip=skip, time_limit=args.time_limit)
    return workload, cluster, bounds


def _covers(bounds: Bounds, default: bool) -> str:
    env = bounds.envelope
    if default:
        plain = set(one_job_per_gpu(registry.policy_names()))
        others = sorted(p for p in registry.policy_names() if p not in plain)
        return (
            f"covers every policy that runs one job per GPU at speed <= 1 per GPU "
            f"({len(env.covered)} policies); --policy NAME for {', '.join(others)}"
        )
    return env.describe()


def _line(name: str, b: Bound, shown: str, seconds: float) -> str:
    others = ", ".join(f"{k} {v:.4g}" for k, v in b.candidates.items() if k != b.method)
    how = f"{b.method} ({others})" if others else b.method
    return f"| {name} | {shown} | {how} | {seconds:.2f} |"


def run(args: argparse.Namespace) -> int:
    """Run the ``bound`` command; print the bounds; return the exit code (0)."""
    workload, cluster, b = compute(args)
    servers = len(cluster.servers)
    if args.json:
        record = {
            "workload": workload.name,
            "workload_hash": workload.digest,
            "servers": servers,
            "gpus_per_server": args.gpus_per_server,
            "time_unit": TIME_UNIT,
            **b.as_dict(),
        }
        print(json.dumps(record, allow_nan=False, sort_keys=True))
        return 0
    s = b.seconds
    print(
        f"workload {workload.name} ({b.jobs} jobs, {b.counted} counted), {servers} x "
        f"{args.gpus_per_server} GPUs; times in {TIME_UNIT}"
    )
    print(_covers(b, not args.policy) + ".")
    print("| bound | value | method (others) | CPU s |")
    print("|---|---|---|---|")
    print(
        _line(
            "mean JCT >=",
            b.jct_mean_lower,
            f"{b.jct_mean_lower.value:.1f}",
            s["jct_simple"] + s["jct_lagrangian"],
        )
    )
    print(_line("makespan >=", b.makespan_lower, f"{b.makespan_lower.value:.0f}", s["makespan"]))
    print(_line("utilization <=", b.utilization_upper, f"{b.utilization_upper.value:.3f}", 0.0))
    print(_line("wDMR >=", b.wdmr_lower, f"{b.wdmr_lower.value:.4f}", s["wdmr"]))
    print(
        "Valid for every schedule of the covered policies (docs/bounds.md); the "
        "utilization bound for runs busy no longer than the work's GPU time at speed 1."
    )
    return 0
