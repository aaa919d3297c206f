"""Aryl's set (EuroSys '22 §7.1-§7.3): its policies, cluster sizes, job shapes and Table 5's numbers.

Cluster sizes (Aryl §7.1: 3,544 training GPUs, 4,160 inference GPUs):

- training servers: the trace's offered load (GPU-time submitted per unit of
  time over its submission span) at the 82% average utilization the paper
  reports for its training cluster (§2.1, Figure 2), in 8-GPU servers:
  P_MIX2 offers 1,128.5 GPUs, so round(1,128.5 / (0.82 x 8)) = 172 servers. The
  same rule on the one-day excerpt gives 223 servers, on which FIFO barely
  queues (its long jobs run on for days after the day they were submitted),
  so ``--quick`` uses 80 training servers, where FIFO's queueing is two
  thirds of its JCT: a loaded cluster on which loaning has work to do;
- inference servers: the paper's ratio of inference to training GPUs,
  round(T x 4,160 / 3,544): 202 for 172, 94 for 80. Each lends as 2 GPUs:
  Aryl §5.2 normalizes on-loan GPUs to training GPUs, and 8 T4s are 2 V100s
  (T4 = 0.25 V100, Appendix A).

Elastic jobs: 5% of the jobs, by a hash of the id (§7: "~5% of the jobs
being elastic" in the Basic scenario), from half to twice their GPUs,
scaling linearly (§5: the paper's assumption). Restart cost 63 s (§7.5).
"""

from __future__ import annotations

from scheduling_opt.reproduce.costs import Costs
from scheduling_opt.reproduce.papers.paper_set import (
    TRACE_FILES,
    Claim,
    LoadTarget,
    PaperSet,
    PolicyRun,
    Sweep,
)
from scheduling_opt.reproduce.workloads import (
    ElasticRule,
)

#: The Basic scenario's elastic jobs (§7.1).
ARYL_ELASTIC = ElasticRule(share=0.05, min_fraction=0.5, max_factor=2.0, serial=0.0)
#: Training and inference servers for the full trace and for ``--quick``: the
#: training servers the offered load (1,128.46 GPUs) keeps 82% busy,
#: round(1128.46 / (0.82 x 8)) = 172, and inference servers at the paper's
#: 4,160 / 3,544 GPU ratio, round(172 x 4160 / 3544) = 202 (80 -> 94).
FULL_SIZES = (172, 202)
QUICK_SIZES = (80, 94)
#: Aryl §7.5: 63 s per preemption or resize, in the trace's minutes.
RESTART_COST = 63.0 / 60.0

#: The policies, baselines first.
ARYL_POLICIES = (
    "fifo-no-loan",
    "afs",
    "aryl",
    "aryl-loan-only",
    "aryl-scale-only",
    "aryl-scf",
    "aryl-random",
    "aryl-plus",
    "aryl-exact",
    "aryl-fifo",
    "aryl-oracle",
    "gandiva-scale",
)
#: Policies run only at the judged load (their claims are point claims; the load sweep
#: leaves them out to save the runs: reclaim variants differ in preemptions, not load).
ARYL_JUDGED_ONLY = ("aryl-scf", "aryl-random", "aryl-plus", "aryl-exact")
#: Aryl §7.1 Table 5, Baseline's training GPU usage: the load the claims are judged at.
BASELINE_USAGE = 0.72

#: Table 5's numbers: (what, metric, kind, paper, baseline, policy).
ARYL_CLAIMS: tuple[tuple[str, str, str, float, str, str], ...] = (
    ("mean queueing, x lower", "queueing_mean", "ratio", 3072 / 2008, "fifo-no-loan", "aryl"),
    ("mean JCT, x lower", "jct_mean", "ratio", 16610 / 11089, "fifo-no-loan", "aryl"),
    ("training GPU usage, baseline", "utilization", "value", 0.72, "-", "fifo-no-loan"),
    ("training GPU usage, Aryl", "utilization", "value", 0.86, "fifo-no-loan", "aryl"),
    ("preemption ratio, Aryl", "preemption_ratio", "value", 0.1020, "aryl-scf", "aryl"),
    ("preemption ratio, SCF reclaim", "preemption_ratio", "value", 0.1874, "-", "aryl-scf"),
    ("preemption ratio, random reclaim", "preemption_ratio", "value", 0.2089, "-", "aryl-random"),
    (
        "preemption ratio, exact reclaim (paper: Aryl's, = optimal below 60 servers)",
        "preemption_ratio",
        "value",
        0.1020,
        "-",
        "aryl-exact",
    ),
    (
        "mean JCT, loaning only, x lower",
        "jct_mean",
        "ratio",
        16610 / 12414,
        "fifo-no-loan",
        "aryl-loan-only",
    ),
    (
        "mean JCT, scaling only, x lower",
        "jct_mean",
        "ratio",
        16610 / 12048,
        "fifo-no-loan",
        "aryl-scale-only",
    ),
    (
        "mean JCT, scaling only vs AFS, x lower",
        "jct_mean",
        "ratio",
        15045 / 12048,
        "afs",
        "aryl-scale-only",
    ),
    (
        "mean JCT, Aryl in FIFO order (ours; paper: Aryl's 1.50x)",
        "jct_mean",
        "ratio",
        16610 / 11089,
        "fifo-no-loan",
        "aryl-fifo",
    ),
    (
        "mean JCT, Aryl with the trace's durations (oracle, ours; paper: Aryl's)",
        "jct_mean",
        "ratio",
        16610 / 11089,
        "fifo-no-loan",
        "aryl-oracle",
    ),
    (
        "mean queueing, Aryl with the trace's durations (oracle, ours), x lower",
        "queueing_mean",
        "ratio",
        3072 / 2008,
        "fifo-no-loan",
        "aryl-oracle",
    ),
    (
        "mean JCT, Gandiva vs Baseline, x lower",
        "jct_mean",
        "ratio",
        16610 / 15912,
        "fifo-no-loan",
        "gandiva-scale",
    ),
    (
        "mean JCT, scaling only vs Gandiva, x lower",
        "jct_mean",
        "ratio",
        15912 / 12048,
        "gandiva-scale",
        "aryl-scale-only",
    ),
    (
        "mean queueing, scaling only vs Gandiva, x lower",
        "queueing_mean",
        "ratio",
        3035 / 2275,
        "gandiva-scale",
        "aryl-scale-only",
    ),
    ("training GPU usage, Gandiva", "utilization", "value", 0.79, "fifo-no-loan", "gandiva-scale"),
)

#: The paper's level of the baseline of a level claim (Table 5), by the claim's ``what``:
#: the claim's direction. Aryl's usage 0.86 and Gandiva's 0.79 are above the
#: Baseline's 0.72; Aryl's preemption ratio 10.2% is below SCF reclaim's 18.74%.
LEVELS: dict[str, float] = {
    "training GPU usage, Aryl": 0.72,
    "preemption ratio, Aryl": 0.1874,
    "training GPU usage, Gandiva": 0.72,
}

SETUP = (
    "15-day production trace, 50,390 jobs, 3,544 V100 training GPUs (443 x 8) and 4,160 T4 "
    "inference GPUs with their utilization trace; ~5% of the jobs elastic (Basic), linear "
    "scaling, 63 s per preemption; Baseline FIFO without loaning or scaling"
)

DIFFERENCES = (
    "Our jobs are Chronus-Philly P_MIX2 (30,746 jobs with GPUs over 14 days; `--quick`: its "
    "first day, 5,217 jobs), 5% of them elastic by a hash of the id (from half to twice their "
    "GPUs, linear). Clusters sized by a rule (scheduling_opt/reproduce/papers/aryl.py): "
    "172 training servers x 8 GPUs (the trace's offered load at the paper's 82% training "
    "utilization) and 202 inference servers (the paper's 4,160 / 3,544 ratio); `--quick`: "
    "80 and 94. The load is then set by Table 5: both pools are divided by a load factor d "
    "(the `cluster` rule, their ratio kept) and the claims are judged at the d where the "
    "Baseline's training GPU usage is nearest Table 5's 0.72. An inference server lends as "
    "2 training GPUs at V100 speed (§5.2 normalizes on-loan GPUs; 8 T4 = 2 V100). The "
    "inference demand is a synthetic diurnal curve (mean 0.65, peak/trough 2.2, noise 0.02; "
    "the production curve is not public); the inference side keeps the peak of the coming "
    "hour and lends the rest, every hour. Jobs that may use inference GPUs: the elastic ones "
    "and 21% of the others (§2.1's 'up to 21%'), by a hash. Aryl's phase one is Algorithm "
    "2's SJF on durations predicted at submission (the median of the finished jobs of the "
    "same user and GPU count, else of the GPU count, else of all; "
    "sim/policies/aryl/predict.py; the paper's profiler uses each job's history runs or a "
    "per-iteration model, neither in the trace); `aryl-oracle` sorts by the trace's "
    "durations instead (an oracle) and `aryl-fifo` runs loaning and scaling in the "
    "Baseline's FIFO order, to separate what SJF buys from what loaning and scaling buy. "
    "AFS gives base demand in submit order, skipping what does not fit. Gandiva "
    "(`gandiva-scale`) is the Baseline's FIFO growing elastic jobs onto their own servers "
    "while no job waits (§7.1's description). The reclaim variants (SCF, Random, Aryl+, "
    "exact) run at the judged load only. Usage is busy GPU-time over the available GPU-time "
    "from the first submission to the last completion, lent servers included "
    "(`utilization`); the overall usage of both clusters is in the policy counters "
    "(`overall_usage`). Not modelled: heterogeneous training, the base/flexible server "
    "groups across scheduling calls, Pollux."
)


ARYL = PaperSet(
    name="aryl",
    title="Aryl (EuroSys '22) §7.2: capacity loaning and elastic scaling against FIFO",
    source="Aryl Table 5",
    setup=SETUP,
    differences=DIFFERENCES,
    policies=tuple(PolicyRun(p, everywhere=p not in ARYL_JUDGED_ONLY) for p in ARYL_POLICIES),
    claims=tuple(
        Claim(
            what,
            metric,
            kind,  # type: ignore[arg-type]
            paper,
            base,
            policy,
            paper_baseline=LEVELS.get(what),
        )
        for what, metric, kind, paper, base, policy in ARYL_CLAIMS
    ),
    full=(("P_MIX2", TRACE_FILES["P_MIX2"]),),
    elastic=ARYL_ELASTIC,
    servers=FULL_SIZES[0],
    inference_servers=FULL_SIZES[1],
    quick_sizes=QUICK_SIZES,
    costs=Costs(
        restart=RESTART_COST,
        source="Aryl §7.5 measured 63 s per preemption (save the checkpoint, end the "
        "containers, launch new ones, load the checkpoint) and §7.1's simulator adds it "
        "whenever a job is preempted; here it is the stall of every resume and resize",
    ),
    metrics=("queueing_mean", "jct_mean", "utilization", "preemption_ratio"),
    sweep=Sweep(
        densities=(0.9, 1.0, 1.05, 1.1, 1.2),
        quick_densities=(1.0, 1.3, 1.6),
        at=None,
        quick_at=None,
        rule="cluster",
        target=LoadTarget(
            "fifo-no-loan", "utilization", BASELINE_USAGE, what="the Baseline's usage"
        ),
        why="the cluster size at which the Baseline's training GPU usage is Table 5's 0.72",
    ),
)
