"""The Chronus artifact with its selection MILP and placement solved by scheduling-opt.

Usage (in the artifact's environment of ``benchmarks/peers/README.md``, from
a writable copy of the artifact's ``code/`` with the traces in
``data/exp/``)::

    python benchmarks/peers/chronus_case.py CODE_DIR --variant artifact|ours
        [--shadow] [--until MINUTES] [--out DIR]

Runs the artifact's ``main.py`` unchanged, with the arguments of its
P_MIX2 command (README of the shared copy, from its ``batch_run.sh``), after
replacing, for ``--variant ours``:

- ``MIPSolver.job_selection`` by :func:`chronus_adapter.select`, the
  library's exact lease method (:func:`scheduling_opt.lease.exact`) on the
  same model (the adapter's docstring lists how each of the artifact's
  rows, windows and per-term GPUs maps onto
  :class:`~scheduling_opt.lease.LeaseInput`);
- ``LocalSearchPlaceMent.place_jobs`` (its greedy over split policies, for
  jobs of at most 8 GPUs; larger ones keep its consolidation) by the
  library's local search (:func:`scheduling_opt.placement.chronus_local_search`
  on :meth:`~scheduling_opt.placement.PlacementInput.with_free`, reward
  from the artifact's ``model_info.json``), each job's split then given to
  the artifact's own ``PolicyPlaceMent`` node by node.

``--variant artifact`` runs it as released (CBC through python-mip, 5 s
cap). ``--shadow`` (with ``ours``) also solves every selection with the
artifact's CBC on the same arguments, recording both objectives (nothing
of CBC's answer is used). ``--until M`` keeps the trace's jobs submitted
before minute M (1440: the first day). Like the shared copy's
``tools/run_instrumented.py``, it saves per-minute GPU use and each call's
time, so ``tools/metrics.py RUN_DIR TRACE`` computes the metrics; the
selection and placement calls' times and counts go to
``RUN_DIR/peer_case.json``.
"""

from __future__ import annotations

import argparse
import csv
import importlib
import json
import os
import runpy
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from chronus_adapter import SelectionStats, model_objective, select

from scheduling_opt.model import Cluster, GpuType, Job, Server
from scheduling_opt.placement import PlacementInput, chronus_local_search
from scheduling_opt.scaling import TableModel

ARTIFACT_ARGS = [
    "--schedule=time-aware-with-lease",
    "--aggressive=True",
    "--mip_objective=adaptive",
    "--placement=local_search",
    "--profile=True",
    "--check_time_interval=1",
    "--disable_turn_off=True",
    "--num_node_p_switch=120",
    "--lease_term_interval=20",
    "--name_list=data/philly/name.lst",
]


def load_table(path: Path) -> TableModel:
    """The artifact's ``model_info.json`` as the library's speed table."""
    raw = json.loads(path.read_text(encoding="utf-8"))
    return TableModel(
        {
            m: {int(n): {int(k): float(v) for k, v in row.items()} for n, row in by_n.items()}
            for m, by_n in raw.items()
        }
    )


def place(
    free: Sequence[int], jobs: Sequence[tuple[str, int, str | None]], table: TableModel
) -> tuple[dict[str, list[tuple[int, int]]], float]:
    """Our local search over 8-GPU nodes with ``free`` GPUs: per job its (node, GPUs) pairs."""
    cluster = Cluster((GpuType("gpu"),), tuple(Server(f"n{i}", "gpu", 8) for i in range(len(free))))
    models = {jid: m for jid, _, m in jobs if m is not None and table.knows(m)}
    inp = PlacementInput.with_free(
        cluster,
        [Job(jid, g, g, 1.0) for jid, g, _ in jobs],
        {f"n{i}": f for i, f in enumerate(free)},
        models=models,
        speed=table,
    )
    sol = chronus_local_search(inp)
    assert sol.decision is not None
    out: dict[str, list[tuple[int, int]]] = {}
    for jid, server, workers in sol.decision.rows:
        out.setdefault(jid, []).append((int(server[1:]), workers))
    return out, sol.objective or 0.0


class Calls:
    """Times and counts of the replaced calls (each selection also appended to a JSONL file)."""

    def add(self, rec: dict[str, Any]) -> None:
        """Keep a selection's record, and write it out at once (a long run may be stopped)."""
        self.milp.append(rec)
        if self.log is not None:
            with self.log.open("a") as f:
                f.write(json.dumps(rec) + "\n")

    def __init__(self, log: Path | None = None) -> None:
        self.selection = SelectionStats()
        self.milp: list[dict[str, Any]] = []
        self.log = log
        self.placement_seconds: list[float] = []
        self.placed_jobs = 0
        self.unplaced_jobs = 0


def patch(variant: str, shadow: bool, table: TableModel, calls: Calls) -> None:
    """Replace (ours) or time (artifact) the selection and the placement."""
    ls_mod: Any = importlib.import_module("alg.placement.local_search")  # the artifact's
    solver_mod: Any = importlib.import_module("alg.scheduler.solver")

    original = solver_mod.MIPSolver.job_selection

    def job_selection(
        self: Any,
        soft_list: Any,
        value_list: Any,
        soft_id_list: Any,
        required_resource_list: Any,
        required_block_list: Any,
        maximum_block_list: Any,
        resource_num_list: Any,
        objective: Any,
        max_seconds: Any = 5,
    ) -> Any:
        args = (
            soft_list,
            value_list,
            soft_id_list,
            required_resource_list,
            required_block_list,
            maximum_block_list,
            resource_num_list,
            objective,
        )
        rec: dict[str, Any] = {"rows": len(required_resource_list)}
        if variant == "ours":
            t0 = time.process_time()
            ans = select(
                value_list,
                soft_id_list,
                required_resource_list,
                required_block_list,
                maximum_block_list,
                resource_num_list,
                objective,
                time_limit=float(max_seconds),
                stats=calls.selection,
            )
            rec["t"] = time.process_time() - t0
            rec["ours"] = [ans.value, ans.objective]
            if shadow:
                t0 = time.process_time()
                sm, soft = original(self, *args, max_seconds=max_seconds)
                rec["t_cbc"] = time.process_time() - t0
                got = model_objective(
                    value_list, required_resource_list, resource_num_list, objective, sm, soft
                )
                rec["cbc"] = list(got) if got is not None else None
            calls.add(rec)
            return ans.solution_matrix, ans.soft_matrix
        t0 = time.process_time()
        sm, soft = original(self, *args, max_seconds=max_seconds)
        rec["t"] = time.process_time() - t0
        got = model_objective(
            value_list, required_resource_list, resource_num_list, objective, sm, soft
        )
        rec["cbc"] = list(got) if got is not None else None
        calls.add(rec)
        return sm, soft

    solver_mod.MIPSolver.job_selection = job_selection
    original_place = ls_mod.LocalSearchPlaceMent.place_jobs

    def place_jobs(self: Any, all_job_list: Any, logger: Any) -> bool:
        t0 = time.process_time()
        if variant != "ours":
            ok = bool(original_place(self, all_job_list, logger))
            calls.placement_seconds.append(time.process_time() - t0)
            return ok
        small = []
        for job in all_job_list:
            if job.required_gpu_num <= 8:
                small.append(job)
            else:
                assert self.consolidate_placement.place_jobs(job)
        if small:
            nodes = [n["node"].check_free_gpus() for n in self.all_node_list]
            todo = [(str(j["job_id"]), int(j.required_gpu_num), j.get("model_name")) for j in small]
            layout, _ = place(nodes, todo, table)
            for job in small:
                parts = layout.get(str(job["job_id"]))
                if not parts:
                    calls.unplaced_jobs += 1
                    continue
                policy = [
                    {"required_gpu_num": w, "resource": self.all_node_list[s]}
                    for s, w in sorted(parts, key=lambda p: -p[1])
                ]
                assert self.policy_placement.place_jobs(job, specified_policy=policy)
                calls.placed_jobs += 1
        calls.placement_seconds.append(time.process_time() - t0)
        return True

    ls_mod.LocalSearchPlaceMent.place_jobs = place_jobs


def instrument(calls: Calls, extra: dict[str, Any]) -> None:
    """Save what the shared copy's tools/metrics.py reads, plus this script's counts."""
    import numpy as np

    tawl: Any = importlib.import_module("alg.scheduler.time_aware_with_lease")

    original = tawl.TimeAwareWithLeaseScheduler.schedule_summary

    def summary(self: Any) -> Any:
        d = self.save_dir
        per_minute = [
            self.full_resource_list,
            self.free_resource_list,
            self.pending_job_num_list,
            self.running_job_num_list,
        ]
        np.save(os.path.join(d, "peer_per_minute.npy"), np.array(per_minute))
        # The answer the run used: ours (its value None when infeasible) or CBC's.
        milp = [
            {
                "t": m["t"],
                "n_rows": m["rows"],
                "has_none": (m["ours"][0] is None) if "ours" in m else m.get("cbc") is None,
                "err": None,
            }
            for m in calls.milp
        ]
        Path(d, "peer_milp_calls.json").write_text(json.dumps(milp))
        stats = calls.selection
        out = {
            **extra,
            "selection": {k: v for k, v in vars(stats).items() if k != "seconds"},
            "milp": calls.milp,
            "placement_calls": len(calls.placement_seconds),
            "placement_cpu_s": sum(calls.placement_seconds),
            "placed_jobs": calls.placed_jobs,
            "unplaced_jobs": calls.unplaced_jobs,
            "cpu_s": time.process_time(),
        }
        Path(d, "peer_case.json").write_text(json.dumps(out, default=float))
        return original(self)

    tawl.TimeAwareWithLeaseScheduler.schedule_summary = summary


def first_rows(trace: Path, until: int, out: Path) -> Path:
    """The trace's jobs submitted before minute ``until`` (the first day: 1440)."""
    with trace.open(newline="") as src, out.open("w", newline="") as dst:
        reader = csv.DictReader(src)
        writer = csv.DictWriter(dst, fieldnames=list(reader.fieldnames or []))
        writer.writeheader()
        for row in reader:
            if int(row["submit_time"]) < until:
                writer.writerow(row)
    return out


def main(argv: Sequence[str] | None = None) -> int:
    """Parse, patch, run the artifact's main.py."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("code_dir")
    parser.add_argument("--variant", choices=("artifact", "ours"), required=True)
    parser.add_argument("--shadow", action="store_true")
    parser.add_argument("--until", type=int)
    parser.add_argument("--trace", default="data/exp/trace_job_Philly_MIX2.csv")
    parser.add_argument("--out", default="out")
    args = parser.parse_args(argv)
    code = Path(args.code_dir).resolve()
    os.chdir(code)
    sys.path.insert(0, str(code))
    trace = Path(args.trace)
    if args.until is not None:
        trace = first_rows(trace, args.until, Path(f"data/exp/first_{args.until}.csv"))
    Path(args.out).mkdir(parents=True, exist_ok=True)
    journal = Path(args.out) / "peer_calls.jsonl"
    journal.unlink(missing_ok=True)
    calls = Calls(journal)
    table = load_table(code / "data/exp/model_info.json")
    patch(args.variant, args.shadow, table, calls)
    instrument(calls, {"variant": args.variant, "trace": str(trace), "until": args.until})
    ident = f"{args.variant}{'' if args.until is None else f'-{args.until}'}"
    sys.argv = [
        "main.py",
        f"--trace={trace}",
        f"--save_log_dir={args.out}",
        f"--ident={ident}",
        *ARTIFACT_ARGS,
    ]
    runpy.run_path("main.py", run_name="__main__")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
