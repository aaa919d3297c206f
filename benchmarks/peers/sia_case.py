"""Sia's simulator with its round MIP solved by scheduling-opt (case study, issue 41).

Usage (in the peers' environment of ``benchmarks/peers/README.md``)::

    python benchmarks/peers/sia_case.py run SIA_DIR WORKLOAD --cluster homogeneous|default
        [--solver cvxpy|ours] [--shadow] [--dump DIR] [--max-rounds N]
        [--cluster-scale K] [--mmkp-method NAME] [--out FILE.json]
    python benchmarks/peers/sia_case.py replay DUMP_DIR SIA_DIR [--limit N] [--out FILE.json]
        [--largest N] [--replicate K]
        (--limit N: the last N dumped rounds; --largest N: the N with the most
        jobs; --replicate K: each round as the scale workloads build theirs,
        every job K times on K x the nodes)

``SIA_DIR`` is a checkout of ``sia-simulator/`` (public repository
siasosp23/artifacts); ``WORKLOAD`` a CSV of its ``workloads/`` (relative to
``SIA_DIR`` or absolute). ``run`` builds Sia's policy and cluster as its
``multi_simulator.py`` does, with the options of its ``run_experiment.sh``
(``p = -0.5``, ``lambda_a = 0.01``, ``lambda_n = 1.1``, 60 s rounds,
``--project_throughputs --share_max_replicas``), and replaces
``SiaPolicy.__solve_mip_rescaled`` (name-mangled
``_SiaPolicy__solve_mip_rescaled``):

- ``--solver cvxpy``: Sia's own solve (cvxpy + CBC, one thread, not verbose);
  with ``--shadow`` the library also solves every round's problem first (on
  copies, changing nothing) and the round's objectives and times are
  recorded side by side;
- ``--solver ours``: the library decides (:mod:`sia_knapsack` maps the round;
  one GPU type: :func:`scheduling_opt.mckp.core`; several:
  ``scheduling_opt.mmkp``, method ``--mmkp-method``, default ``exact``),
  and Sia's own bookkeeping (previous allocations,
  objective values, effective GPUs) is updated as its method does.

``--dump DIR`` pickles each round's inputs (the arrays, the policy's
previous allocations and its configuration table); ``replay`` solves the
dumped rounds again with both solvers and times them (for the ``scale``
workloads, whose full simulation is long). The JSON output holds per round
the objectives (cvxpy's ``problem.value`` convention), their gap and both
times, and per run the JCTs and the makespan.
"""

from __future__ import annotations

import argparse
import contextlib
import copy
import importlib
import io
import json
import math
import os
import pickle
import signal
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from sia_knapsack import SiaRound, build_round, total_gain, used_gpus

from scheduling_opt.mckp import Mckp, core
from scheduling_opt.solution import Status

CLUSTERS = {"homogeneous": {"aws": 16}, "default": {"aws": 6, "dgx-ext": 2, "rtx": 3}}
SIA_ARGS = {"p": -0.5, "lambda_a": 0.01, "lambda_n": 1.1, "interval": 60}
MANGLED = "_SiaPolicy__solve_mip_rescaled"
#: Objectives closer than this are equal: Sia's objectives are whole hundredths
#: (A has two decimals, lambda_n = 1.1), and cvxpy reports CBC's float sum.
TIE = 1e-4


@contextlib.contextmanager
def quiet() -> Iterator[None]:
    """Sia prints every round (tables, factors): swallow it."""
    with contextlib.redirect_stdout(io.StringIO()):
        yield


def load_sia(sia_dir: Path, nodes: dict[str, int], scale: int | None) -> dict[str, Any]:
    """Sia's modules, imported from its checkout with the cluster and solver options set."""
    os.chdir(sia_dir)  # its applications read traces/ relative to the working directory
    sys.path.insert(0, str(sia_dir))
    cfg: Any = importlib.import_module("simulator_config")
    cfg.cluster_nnodes = {k: v * (scale or 1) for k, v in nodes.items()}
    cfg.sia_solver_num_threads = 1
    cfg.sia_solver_verbose = False
    with quiet():
        sia: Any = importlib.import_module("sia")
        cluster: Any = importlib.import_module("cluster")
    return {"cfg": cfg, "sia": sia, "cluster": cluster}


def make_policy(mods: dict[str, Any]) -> Any:
    """Sia's policy as its run_experiment.sh configures it."""
    cfg = mods["cfg"]
    with quiet():
        policy = mods["sia"].SiaPolicy(
            p_fairness=SIA_ARGS["p"],
            restart_penalty=30,
            lambda_a=SIA_ARGS["lambda_a"],
            lambda_n=SIA_ARGS["lambda_n"],
            project_throughputs=True,
            share_max_replicas=True,
            enable_bsz_tuning=True,
        )
        ngpus = {k: cfg.cluster_ngpus_per_node[k] for k in cfg.cluster_nnodes}
        policy.populate_valid_configs(cfg.cluster_nnodes, ngpus, cfg.cluster_max_physical_nnodes)
    return policy


# --------------------------------------------------------------------------- the round


def round_of(policy: Any, optim_params: Any, job_weights: Any, non_preemptible: Any) -> SiaRound:
    """The knapsack of the round Sia is about to solve (its arrays are not changed)."""
    rigid_jobs, rigid_speedup, rigid_replicas, rigid_factors = optim_params["rigid"]
    adaptive_jobs, adaptive_speedup, adaptive_factors = optim_params["adaptive"]
    prev = policy.prev_allocs_v2
    reduce = np.asarray(policy.adaptive_reduce_matrix)
    forced = {j: int(prev["rigid"][j]) for j in non_preemptible["rigid"]}
    forced.update({j: int(prev["adaptive"][j]) for j in non_preemptible["adaptive"]})
    return build_round(
        rigid_jobs=list(rigid_jobs),
        rigid_speedup=np.asarray(rigid_speedup, dtype=np.float64).reshape(
            len(rigid_jobs), len(policy.cluster_ordering)
        ),
        rigid_replicas=[int(r) for r in np.asarray(rigid_replicas).reshape(-1)],
        rigid_factors=[float(f) for f in np.asarray(rigid_factors).reshape(-1)],
        rigid_prev=[prev["rigid"].get(j) for j in rigid_jobs],
        adaptive_jobs=list(adaptive_jobs),
        adaptive_speedup=np.asarray(adaptive_speedup, dtype=np.float64),
        adaptive_factors=[float(f) for f in adaptive_factors],
        adaptive_prev=[prev["adaptive"].get(j) for j in adaptive_jobs],
        config_type=reduce.argmax(axis=1).tolist(),
        config_gpus=reduce.max(axis=1).tolist(),
        type_gpus=[int(g) for g in policy.cluster_total_gpus_ndarray],
        weights=[float(w) for w in np.asarray(job_weights).reshape(-1)],
        forced=forced,
        p=float(policy.p_fairness),
        lambda_n=float(policy.lambda_n if policy.lambda_n else -1),
        clip=float(importlib.import_module("simulator_config").sia_goodput_clip_val),
    )


def solve_round(rnd: SiaRound) -> tuple[list[int | None], bool]:
    """The library's optimal choice per job (item index in its group), and whether proven."""
    if any(c < 0 for c in rnd.capacity):
        raise RuntimeError(f"jobs kept in checkpoint-restore exceed a type's GPUs: {rnd.capacity}")
    if len(rnd.capacity) == 1:
        values = rnd.hundredths.astype(np.float64) if rnd.integral else rnd.gain
        sol = core(Mckp(rnd.capacity[0], rnd.gpus, values, rnd.offsets))
        assert sol.decision is not None
        return list(sol.decision.choice), sol.status is Status.OPTIMAL
    return solve_types(rnd)


#: The per-type knapsack's method for several GPU types (``--mmkp-method``).
MMKP_METHOD = {"name": "exact"}


def solve_types(rnd: SiaRound) -> tuple[list[int | None], bool]:
    """Several GPU types: the multiple-choice knapsack with a capacity per type (``mmkp``)."""
    mmkp: Any = importlib.import_module("scheduling_opt.mmkp")
    weights = np.zeros((len(rnd.gain), len(rnd.capacity)), np.int64)
    weights[np.arange(len(rnd.gain)), rnd.gpu_type] = rnd.gpus
    values = rnd.hundredths.astype(np.float64) if rnd.integral else rnd.gain
    inp = mmkp.Mmkp(np.asarray(rnd.capacity, np.int64), weights, values, rnd.offsets)
    sol = getattr(mmkp, MMKP_METHOD["name"])(inp)
    assert sol.decision is not None
    return list(sol.decision.choice), sol.status is Status.OPTIMAL


def columns_of(rnd: SiaRound, choice: Sequence[int | None]) -> dict[str, int | None]:
    """Per job the chosen column (configuration or type index; None: no allocation)."""
    out: dict[str, int | None] = dict(rnd.forced)
    for g, name in enumerate(rnd.jobs):
        i = choice[g]
        out[name] = None if i is None else int(rnd.column[int(rnd.offsets[g]) + i])
    return out


def apply(policy: Any, optim_params: Any, rnd: SiaRound, choice: Sequence[int | None]) -> Any:
    """Sia's bookkeeping and return value for the library's choice (as its method does)."""
    chosen = columns_of(rnd, choice)
    rigid_jobs, rigid_speedup, rigid_replicas, _ = optim_params["rigid"]
    adaptive_jobs, adaptive_speedup, _ = optim_params["adaptive"]
    rigid_speedup = np.asarray(rigid_speedup).reshape(len(rigid_jobs), len(policy.cluster_ordering))
    replicas = np.asarray(rigid_replicas).reshape(-1)
    job_allocs: dict[str, Any] = {}
    cluster_allocs: dict[str, dict[str, tuple[int, int]]] = {}
    effective: dict[str, float] = {}
    for i, name in enumerate(rigid_jobs):
        t = chosen[name]
        if t is None:
            job_allocs[name] = None
            effective[name] = 0
        else:
            cname = policy.cluster_ordering[t]
            n = int(replicas[i])
            nodes = math.ceil(n / policy.cluster_ngpus_per_node[cname])
            job_allocs[name] = (cname, (nodes, n))
            cluster_allocs.setdefault(cname, {})[name] = (nodes, n)
            effective[name] = rigid_speedup[i, t]
        policy.prev_allocs_v2["rigid"][name] = t
    for i, name in enumerate(adaptive_jobs):
        c = chosen[name]
        if c is None:
            job_allocs[name] = None
            effective[name] = 0
        else:
            cname, nodes, n = policy.idx_to_config_map[c]
            job_allocs[name] = (cname, (nodes, n))
            cluster_allocs.setdefault(cname, {})[name] = (nodes, n)
            effective[name] = adaptive_speedup[i, c]
        policy.prev_allocs_v2["adaptive"][name] = c
    policy.objective_values.append(rnd.sia_objective(total_gain(rnd, choice)))
    policy.effective_gpus.append(effective)
    active = set(rigid_jobs) | set(adaptive_jobs)
    for kind in ("rigid", "adaptive"):
        policy.prev_allocs_v2[kind] = {
            k: v for k, v in policy.prev_allocs_v2[kind].items() if k in active
        }
    return job_allocs, cluster_allocs


def ours(policy: Any, optim_params: Any, job_weights: Any, non_preemptible: Any) -> Any:
    """The replacement of ``__solve_mip_rescaled``: map, solve, apply."""
    rnd = round_of(policy, optim_params, job_weights, non_preemptible)
    choice, _ = solve_round(rnd)
    return apply(policy, optim_params, rnd, choice)


# --------------------------------------------------------------------------- the run


class Recorder:
    """Wraps the policy's round solve: times it, compares, dumps."""

    def __init__(
        self, original: Callable[..., Any], solver: str, shadow: bool, dump: Path | None
    ) -> None:
        self.original, self.solver, self.shadow, self.dump = original, solver, shadow, dump
        self.rounds: list[dict[str, Any]] = []
        #: Each round's record is also appended here at once (a long run may be stopped).
        self.journal: Path | None = None

    def __call__(
        self, policy: Any, optim_params: Any, free_gpus: Any, job_weights: Any, non_pre: Any
    ) -> Any:
        k = len(self.rounds)
        rec: dict[str, Any] = {"round": k}
        if self.dump is not None:
            self.dump.mkdir(parents=True, exist_ok=True)
            with (self.dump / f"round-{k:05d}.pkl").open("wb") as f:
                pickle.dump(snapshot(policy, optim_params, job_weights, non_pre), f)
        if self.solver == "ours":
            t0, c0 = time.perf_counter(), time.process_time()
            out = ours(policy, optim_params, job_weights, non_pre)
            rec["ours_ms"] = (time.perf_counter() - t0) * 1e3
            rec["ours_cpu_ms"] = (time.process_time() - c0) * 1e3
            rec["ours_obj"] = policy.objective_values[-1]
        else:
            if self.shadow:
                t0, c0 = time.perf_counter(), time.process_time()
                rnd = round_of(policy, optim_params, job_weights, non_pre)
                choice, proven = solve_round(rnd)
                rec["ours_ms"] = (time.perf_counter() - t0) * 1e3
                rec["ours_cpu_ms"] = (time.process_time() - c0) * 1e3
                rec["ours_obj"] = rnd.sia_objective(total_gain(rnd, choice))
                rec["ours_proven"] = proven
                mine = columns_of(rnd, choice)
                rec["jobs"], rec["items"] = len(rnd.jobs), len(rnd.gain)
                rec["types"] = len(rnd.capacity)
                rec["used"] = used_gpus(rnd, choice)
            params = copy.deepcopy(optim_params)
            t0, c0 = time.perf_counter(), time.process_time()
            with quiet():
                out = self.original(policy, params, free_gpus, job_weights, non_pre)
            rec["cvxpy_ms"] = (time.perf_counter() - t0) * 1e3
            rec["cvxpy_cpu_ms"] = (time.process_time() - c0) * 1e3
            rec["cvxpy_obj"] = policy.objective_values[-1]
            if self.shadow:
                theirs = {**policy.prev_allocs_v2["rigid"], **policy.prev_allocs_v2["adaptive"]}
                rec["same_choice"] = all(theirs.get(j) == c for j, c in mine.items())
        self.rounds.append(rec)
        if self.journal is not None:
            with self.journal.open("a") as f:
                f.write(json.dumps(rec, default=float) + "\n")
        return out


def snapshot(policy: Any, optim_params: Any, job_weights: Any, non_pre: Any) -> dict[str, Any]:
    """What a replay needs to rebuild the round: inputs and the policy's state."""
    return {
        "optim_params": copy.deepcopy(optim_params),
        "job_weights": np.array(job_weights),
        "non_preemptible": copy.deepcopy(non_pre),
        "prev_allocs_v2": copy.deepcopy(policy.prev_allocs_v2),
        "cluster_nnodes": dict(policy.cluster_num_nodes),
        "ngpus_per_node": dict(policy.cluster_ngpus_per_node),
    }


def run(args: argparse.Namespace) -> dict[str, Any]:
    """One simulation of a workload; returns the per-round records and the run's metrics."""
    pandas: Any = importlib.import_module("pandas")  # the peers' environment only

    sia_dir = Path(args.sia_dir).resolve()
    workload = Path(args.workload)
    workload = workload if workload.is_absolute() else sia_dir / workload
    dump = Path(args.dump).resolve() if args.dump else None
    mods = load_sia(sia_dir, CLUSTERS[args.cluster], args.cluster_scale)
    cfg, policy_cls = mods["cfg"], mods["sia"].SiaPolicy
    original = getattr(policy_cls, MANGLED)
    recorder = Recorder(original, args.solver, args.shadow, dump)
    if args.out:
        recorder.journal = Path(args.out).resolve().with_suffix(".rounds.jsonl")
        recorder.journal.parent.mkdir(parents=True, exist_ok=True)
        recorder.journal.unlink(missing_ok=True)
    setattr(policy_cls, MANGLED, lambda self, *a: recorder(self, *a))
    policy = make_policy(mods)
    ngpus = {k: cfg.cluster_ngpus_per_node[k] for k in cfg.cluster_nnodes}
    started = time.process_time()
    with quiet():
        cluster = mods["cluster"].Cluster(
            pandas.read_csv(workload),
            policy,
            cfg.cluster_nnodes,
            ngpus,
            max_physical_nodes=cfg.cluster_max_physical_nnodes,
        )
        for job in cluster.jobs:
            if job.category == "rigid":
                job.seed_profiles_rigid(ngpus)
        steps = 0
        stop: list[int] = []
        # SIGTERM ends the run after the current round, with its results written.
        signal.signal(signal.SIGTERM, lambda signum, frame: stop.append(signum))
        while (
            not cluster.all_complete()
            and (args.max_rounds is None or steps < args.max_rounds)
            and not stop
        ):
            cluster.step(SIA_ARGS["interval"])
            steps += 1
    cpu = time.process_time() - started
    jcts = cluster.get_jcts()
    done = [v for v in cluster.logs[-1]["submitted_jobs"] if v["completion_time"] is not None]
    return {
        "workload": str(args.workload),
        "cluster": cfg.cluster_nnodes,
        "solver": args.solver,
        "rounds": recorder.rounds,
        "steps": steps,
        "complete": bool(cluster.all_complete()),
        "stopped": bool(stop),
        "jobs_done": len(done),
        "avg_jct_s": sum(jcts.values()) / len(jcts) if jcts else None,
        "jcts": jcts,
        "makespan_s": max((v["completion_time"] for v in done), default=None),
        "cpu_s": cpu,
    }


def replicate(snap: dict[str, Any], k: int) -> dict[str, Any]:
    """A dumped round as the ``scale`` workloads build theirs: every job k times, k x the nodes.

    Sia's ``workloads/scale/scale_Kx`` issue each job of a Saturn trace K
    times (names ``-1`` ... ``-K``) on a cluster K times as large; a round
    of such a run before the copies diverge is this: the same rows K times
    (same speedups, factors, previous configuration) and K x each type's
    nodes. Valid only when the configuration table does not change with
    the nodes (each type already at its physical cap, Sia's
    ``cluster_max_physical_nnodes``: the homogeneous 16 x aws, and the
    default cluster from 4x on); :func:`replay` checks it.
    """
    if k == 1:
        return snap
    rigid_names, rigid_speedup, rigid_replicas, rigid_factors = snap["optim_params"]["rigid"]
    names, speedup, factors = snap["optim_params"]["adaptive"]

    def many(xs: Sequence[str]) -> list[str]:
        return [f"{x}~{c}" for c in range(k) for x in xs]

    rs, rr = np.asarray(rigid_speedup), np.asarray(rigid_replicas)
    weights = np.asarray(snap["job_weights"]).reshape(1, -1)
    n_a = len(names)
    prev = snap["prev_allocs_v2"]
    return {
        "optim_params": {
            "rigid": (
                many(rigid_names),
                np.vstack([rs] * k) if rs.size else rs,
                np.vstack([rr.reshape(-1, 1)] * k) if rr.size else rr,
                np.concatenate([np.asarray(rigid_factors)] * k),
            ),
            "adaptive": (many(names), np.vstack([np.asarray(speedup)] * k), list(factors) * k),
        },
        "job_weights": np.hstack([weights[:, :n_a]] * k + [weights[:, n_a:]] * k),
        "non_preemptible": {key: many(v) for key, v in snap["non_preemptible"].items()},
        "prev_allocs_v2": {
            key: {f"{j}~{c}": v for c in range(k) for j, v in d.items()} for key, d in prev.items()
        },
        "cluster_nnodes": {t: n * k for t, n in snap["cluster_nnodes"].items()},
        "ngpus_per_node": snap["ngpus_per_node"],
    }


def replay(args: argparse.Namespace) -> dict[str, Any]:
    """Solve dumped rounds again with Sia's cvxpy+CBC and with the library; time both."""
    files = sorted(Path(args.dump_dir).resolve().glob("round-*.pkl"))
    if args.largest:
        sizes = []
        for path in files:
            snap = pickle.loads(path.read_bytes())
            sizes.append(
                len(snap["optim_params"]["adaptive"][0]) + len(snap["optim_params"]["rigid"][0])
            )
        order = sorted(range(len(files)), key=lambda i: (-sizes[i], i))[: args.largest]
        files = [files[i] for i in sorted(order)]
    elif args.limit:
        files = files[-args.limit :]  # the last rounds: the most jobs have arrived
    k = args.replicate
    first = replicate(pickle.loads(files[0].read_bytes()), k)
    mods = load_sia(Path(args.sia_dir).resolve(), first["cluster_nnodes"], None)
    original = getattr(mods["sia"].SiaPolicy, MANGLED)
    policy = make_policy(mods)
    width = np.asarray(first["optim_params"]["adaptive"][1]).shape[1]
    if k > 1 and width != policy.total_num_configs:
        raise SystemExit(
            f"--replicate {k}: the scaled cluster has {policy.total_num_configs} configurations, "
            f"the dumped rounds {width} (a type below its physical node cap): capture at a "
            "scale where every type is at its cap"
        )
    rows = []
    for path in files:
        snap = replicate(pickle.loads(path.read_bytes()), k)
        rec: dict[str, Any] = {"round": path.stem, "replicate": k}
        policy.prev_allocs_v2 = copy.deepcopy(snap["prev_allocs_v2"])
        t0, c0 = time.perf_counter(), time.process_time()
        rnd = round_of(policy, snap["optim_params"], snap["job_weights"], snap["non_preemptible"])
        choice, proven = solve_round(rnd)
        rec["ours_ms"] = (time.perf_counter() - t0) * 1e3
        rec["ours_cpu_ms"] = (time.process_time() - c0) * 1e3
        rec["ours_obj"] = rnd.sia_objective(total_gain(rnd, choice))
        rec["ours_proven"] = proven
        rec["jobs"], rec["items"] = len(rnd.jobs), len(rnd.gain)
        params = copy.deepcopy(snap["optim_params"])
        t0, c0 = time.perf_counter(), time.process_time()
        with quiet():
            original(policy, params, None, snap["job_weights"], snap["non_preemptible"])
        rec["cvxpy_ms"] = (time.perf_counter() - t0) * 1e3
        rec["cvxpy_cpu_ms"] = (time.process_time() - c0) * 1e3
        rec["cvxpy_obj"] = policy.objective_values[-1]
        rows.append(rec)
    return {"dump": str(args.dump_dir), "replicate": k, "rounds": rows}


def summary(rows: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """Agreement and time ratios over the rounds that both solved."""
    both = [r for r in rows if "cvxpy_obj" in r and "ours_obj" in r]
    if not both:
        return {}
    gaps = [r["ours_obj"] - r["cvxpy_obj"] for r in both]
    # CPU time when recorded (the machine is shared), else wall time.
    unit = "cpu_ms" if all("cvxpy_cpu_ms" in r for r in both) else "ms"
    cvx = np.array([r[f"cvxpy_{unit}"] for r in both])
    mine = np.array([r[f"ours_{unit}"] for r in both])
    return {
        "rounds": len(both),
        "time_unit": unit,
        "equal_objective": sum(abs(g) <= TIE for g in gaps),
        "ours_lower": sum(g < -TIE for g in gaps),
        "ours_higher": sum(g > TIE for g in gaps),
        "max_abs_gap": max(abs(g) for g in gaps),
        "same_choice": sum(bool(r.get("same_choice")) for r in both),
        "cvxpy_ms_mean": float(cvx.mean()),
        "cvxpy_ms_p95": float(np.percentile(cvx, 95)),
        "ours_ms_mean": float(mine.mean()),
        "ours_ms_p95": float(np.percentile(mine, 95)),
        "time_ratio": float(cvx.sum() / mine.sum()),
        "max_jobs": max(r.get("jobs", 0) for r in both),
    }


def main(argv: Sequence[str] | None = None) -> int:
    """Parse the command line, run, write the JSON and print a summary line."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = parser.add_subparsers(dest="cmd", required=True)
    p_run = sub.add_parser("run")
    p_run.add_argument("sia_dir")
    p_run.add_argument("workload")
    p_run.add_argument("--cluster", choices=sorted(CLUSTERS), default="homogeneous")
    p_run.add_argument("--solver", choices=("cvxpy", "ours"), default="cvxpy")
    p_run.add_argument("--shadow", action="store_true")
    p_run.add_argument("--dump")
    p_run.add_argument("--max-rounds", type=int)
    p_run.add_argument("--cluster-scale", type=int)
    p_run.add_argument("--out")
    p_run.add_argument("--mmkp-method", default="exact")
    p_rep = sub.add_parser("replay")
    p_rep.add_argument("dump_dir")
    p_rep.add_argument("sia_dir")
    p_rep.add_argument("--limit", type=int)
    p_rep.add_argument("--largest", type=int)
    p_rep.add_argument("--replicate", type=int, default=1)
    p_rep.add_argument("--out")
    p_rep.add_argument("--mmkp-method", default="exact")
    args = parser.parse_args(argv)
    MMKP_METHOD["name"] = args.mmkp_method
    out_path = Path(args.out).resolve() if args.out else None
    args.out = str(out_path) if out_path is not None else None  # Sia's loader changes directory
    result = run(args) if args.cmd == "run" else replay(args)
    result["summary"] = summary(result["rounds"])
    if out_path is not None:
        out_path.parent.mkdir(parents=True, exist_ok=True)
        out_path.write_text(json.dumps(result, indent=1, default=float))
    brief = {k: v for k, v in result.items() if k not in ("rounds", "jcts")}
    print(json.dumps(brief, default=float))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
