"""Byte-level fingerprints of simulator runs: proof that a refactor or a speed-up changed nothing.

Usage::

    python benchmarks/sim_fingerprints.py [--set fast|all|full] [--traces DIR]
        [--only TEXT] [--record FILE | --check FILE]

Each case is one :class:`~scheduling_opt.sim.sweep.RunConfig` (every
baseline on the bundled excerpt, each paper policy on its ``--quick``
workload or a small synthetic one); its fingerprint is a SHA-256 over the
exact ``repr`` of every per-job output array (first start, end,
preemptions, GPU time), the busy and capacity areas, the timeline of
changes, and the event and call counts. Two runs with the same fingerprint
made the same decisions at the same times (a float differing in its last
bit changes the hash). ``--record`` writes ``case -> fingerprint``;
``--check`` compares with a recorded file and exits 1 on any difference.
The fast set (a few minutes) runs every registered policy
(``test_every_policy_has_a_fast_case`` in tests/sim checks it) and covers every engine feature: capacity
changes (Aryl), speed factors (ONES), GPU sharing and upgrades (AntMan),
resizes (EDL), preemption (Tiresias, SRTF, Chronus' terms). The full set
(tens of minutes: run it niced) is each paper's full mode except Chronus'
(``reproduce edl|antman|ones|aryl``; without a judged load ``ones-exact``,
which runs only at it, is not among them) and
every baseline on the full P_MIX2 trace: the runs ``benchmarks/bench_sim.py``
times. It needs ``--traces DIR`` (the Chronus-Philly trace folder; default
``../shared/traces/chronus-philly`` beside the project). ``--record`` writes
after every case, so an interrupted run keeps what it computed.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
import time
from dataclasses import replace
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from scheduling_opt.reproduce.papers import PAPERS  # noqa: E402
from scheduling_opt.reproduce.papers.antman import CONSTANTS  # noqa: E402
from scheduling_opt.reproduce.workloads import ElasticRule, PaperWorkload  # noqa: E402
from scheduling_opt.sim.engine import RunOutput  # noqa: E402
from scheduling_opt.sim.registry import policy_names  # noqa: E402

BASELINES = policy_names("baselines")
from scheduling_opt.sim.semantics import with_semantics  # noqa: E402
from scheduling_opt.sim.sweep import RunConfig, WorkloadSpec, run_config  # noqa: E402
from scheduling_opt.sim.synthetic import SyntheticSpec  # noqa: E402


def fingerprint(out: RunOutput) -> str:
    """SHA-256 of a run's exact outputs (floats by ``repr``, bit-exact)."""
    h = hashlib.sha256()
    for part in (
        out.first_start,
        out.end,
        out.preemptions,
        out.gpu_time,
        out.busy_area,
        out.capacity_area,
        out.changes,
        out.events,
        out.calls,
    ):
        h.update(repr(part).encode())
        h.update(b"|")
    return h.hexdigest()


def _synthetic(jobs: int, elastic: ElasticRule | None = None) -> WorkloadSpec:
    spec = SyntheticSpec(jobs=jobs)
    if elastic is None:
        return WorkloadSpec("synthetic", synthetic=spec)
    return PaperWorkload("synthetic", synthetic=spec, elastic=elastic, label=f"syn-{jobs}-el")


DEFAULT_TRACES = ROOT.parent / "shared" / "traces" / "chronus-philly"


def full_cases(traces: Path) -> dict[str, RunConfig]:
    """The full-mode runs: the papers' full sets (not Chronus') and the baselines on P_MIX2."""
    out: dict[str, RunConfig] = {}
    for name in ("edl", "antman", "ones", "aryl"):
        for c in PAPERS[name].configs(quick=False, traces=traces):
            out[f"{c.policy}/{name}-full-s{c.seed}"] = c
    mix2 = WorkloadSpec("trace", str((traces / "trace_job_Philly_MIX2.csv").resolve()))
    for p in BASELINES:
        out[f"{p}/P_MIX2-120x8"] = RunConfig(p, mix2)
    return out


def cases(which: str, traces: Path = DEFAULT_TRACES) -> dict[str, RunConfig]:
    """The named configurations of set ``which`` (``fast``, ``all`` or ``full``)."""
    if which == "full":
        return full_cases(traces)
    out: dict[str, RunConfig] = {}
    small = _synthetic(300)
    elastic = _synthetic(300, ElasticRule(share=0.5, min_fraction=0.5))
    for p in BASELINES:
        out[f"{p}/syn300-8x8"] = RunConfig(p, small, servers=8, gpus_per_server=8)
        out[f"{p}/syn300-8x8-round"] = RunConfig(
            p, small, servers=8, gpus_per_server=8, round_length=5.0, restart_cost=0.5
        )
    for p in ("elastic-tiresias", "edl-tiresias"):
        out[f"{p}/syn300-el-8x8"] = RunConfig(p, elastic, servers=8, gpus_per_server=8)
    for p in ("chronus", "chronus-greedy", "chronus-best-fit", "chronus-no-admission"):
        out[f"{p}/syn300-8x8"] = RunConfig(p, small, servers=8, gpus_per_server=8)
    # Every term proven within its limit on these 100 jobs: reproducible.
    out["chronus-exact/syn100-8x8"] = RunConfig(
        "chronus-exact", _synthetic(100), servers=8, gpus_per_server=8
    )
    # The artifact's semantics: the start terms, the arrival step, the minute
    # clock and the artifact's admission, queue keys and row order.
    out["chronus/syn200-16x8-artifact"] = with_semantics(
        RunConfig("chronus", _synthetic(200), servers=16, gpus_per_server=8), "artifact"
    )
    # ones-exact (full mode only) runs here on ONES' quick workload: since issue
    # 25 its CP-SAT step stops at a work budget, not the clock, so it is
    # reproducible byte for byte (before, its 1-s limit per call left it out).
    for name in ("antman", "ones", "aryl"):
        paper = PAPERS[name]
        seen: set[str] = set()
        # The first quick density, where the policies run only at the judged
        # load (Aryl's reclaim variants) are made as if it were the judged one.
        first = paper.densities(True)[0]
        judged = {w.base_name: first for w in paper.workloads(True)[0]}
        for c in paper.configs(quick=True, judged=judged):
            if c.seed != 0 or c.policy in seen or c.policy == "ones-exact":
                continue
            if not isinstance(c.workload, PaperWorkload) or c.workload.density != first:
                continue
            seen.add(c.policy)
            out[f"{c.policy}/{name}-quick"] = c
    out["ones-exact/ones-quick"] = replace(out["ones/ones-quick"], policy="ones-exact")
    # AntMan's named variant without its local coordinator: the model before it
    # (its fingerprint is the one antman/antman-quick had then).
    antman = out["antman/antman-quick"]
    out["antman-constants/antman-quick"] = replace(
        antman, policy_params=(*antman.policy_params, *CONSTANTS), label="antman-constants"
    )
    # aryl-ideal and aryl-plus are left out of Aryl's --quick (its CPU budget):
    # their cases here are the same configuration as the set's other judged-only runs.
    for p in ("aryl-ideal", "aryl-plus"):
        out[f"{p}/aryl-quick"] = replace(out["aryl-advanced/aryl-quick"], policy=p)
    if which == "all":
        for p in BASELINES:
            out[f"{p}/excerpt-120x8"] = RunConfig(p)
        for c in PAPERS["edl"].configs(quick=True):
            out[f"{c.policy}/edl-quick"] = c
        out["chronus/excerpt-120x8"] = RunConfig("chronus")
        out["chronus/excerpt-120x8-artifact"] = with_semantics(RunConfig("chronus"), "artifact")
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--set", choices=("fast", "all", "full"), default="fast")
    parser.add_argument("--traces", type=Path, default=DEFAULT_TRACES)
    parser.add_argument("--only", help="run the cases whose name contains this text")
    group = parser.add_mutually_exclusive_group()
    group.add_argument("--record", type=Path, help="write the fingerprints here (JSON)")
    group.add_argument("--check", type=Path, help="compare with a recorded file")
    args = parser.parse_args()

    chosen = cases(args.set, args.traces)
    if args.only:
        chosen = {k: v for k, v in chosen.items() if args.only in k}
    recorded = json.loads(args.check.read_text()) if args.check else {}
    got: dict[str, str] = {}
    bad = 0
    for name, config in chosen.items():
        t0 = time.process_time()
        fp = fingerprint(run_config(config).output)
        got[name] = fp
        verdict = ""
        if args.check:
            want = recorded.get(name)
            verdict = "same" if want == fp else ("NEW" if want is None else "DIFFERENT")
            bad += verdict == "DIFFERENT"
        print(f"{name:42s} {fp[:16]} {time.process_time() - t0:7.1f} s CPU {verdict}", flush=True)
        if args.record:
            old = json.loads(args.record.read_text()) if args.record.exists() else {}
            old[name] = fp
            args.record.write_text(json.dumps(old, indent=1, sort_keys=True) + "\n")
    if bad:
        print(f"{bad} case(s) differ", file=sys.stderr)
    return 1 if bad else 0


if __name__ == "__main__":
    raise SystemExit(main())
