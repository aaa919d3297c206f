"""ONES: each job's GPUs and global batch size by online evolutionary search (``batch-size``).

Every GPU of a homogeneous cluster runs at most one job with a local batch;
a job's global batch B_j (<= its limit R_j) and GPU count c_j follow, and the
schedule minimizes the predicted GPU-time still needed, with penalties for
waiting jobs and idle GPUs. ONES, Bian et al., SC 2021: §3.2 (search,
Algorithm 1, Eq. 2-8) and §3.3.2 (limits).

Every method is ``fn(inp: BatchSizeInput, *, seed=None, time_limit=None) ->
Solution[Schedule]``: :func:`auto` (the default: exact when a size test
says it proves fast, else the search), :func:`ones` (the search),
:func:`greedy` (the fill phase alone) and :func:`exact` (knapsack DP if
separable, else CP-SAT). :func:`ones_step` is the online step a scheduler calls every round:
it takes the previous population and returns a ``Solution[Step]`` (the
schedule and the population to carry). Complexity: ``ones`` O(generations *
K * (G log G + J * servers)); ``greedy`` O(G * (G + J)); ``exact``
pseudo-polynomial O(J G^2) when separable, else CP-SAT (exponential worst
case, time-limited).

Examples
--------
>>> from scheduling_opt.model import BatchInfo, Cluster, GpuType, Job, Server
>>> from scheduling_opt.batch_size import BatchSizeInput, JobState, exact, ones
>>> cluster = Cluster((GpuType("V100"),), (Server("s0", "V100", 4),))
>>> jobs = [Job("a", 1, 4, 3600.0, batch=BatchInfo(1000, 128, 64)),
...         Job("b", 1, 2, 3600.0, batch=BatchInfo(5000, 64, 32))]
>>> inp = BatchSizeInput(cluster, jobs, {"a": JobState(beta=5.0), "b": JobState(beta=2.0)})
>>> sol = ones(inp, seed=0)
>>> sol.decision.gpus, sol.decision.batch, sol.objective == exact(inp).objective
((3, 1), (128, 32), True)
"""

from scheduling_opt.batch_size.auto import auto
from scheduling_opt.batch_size.bounds import lower_bound
from scheduling_opt.batch_size.check import check
from scheduling_opt.batch_size.evaluate import objective, schedule_of
from scheduling_opt.batch_size.exact import brute_force, exact, exact_cpsat, exact_separable
from scheduling_opt.batch_size.greedy import greedy
from scheduling_opt.batch_size.limits import (
    after_epoch,
    resume_limit,
    scale_down,
    scale_up,
    start_limit,
)
from scheduling_opt.batch_size.model import (
    DEFAULT_MODEL,
    BatchSizeInput,
    JobState,
    OnesConfig,
    Schedule,
)
from scheduling_opt.batch_size.operators import Population
from scheduling_opt.batch_size.progress import (
    History,
    ProgressModel,
    add_points,
    fit_progress,
    job_points,
)
from scheduling_opt.batch_size.search import Step, ones, ones_step, probability_sampling
from scheduling_opt.batch_size.throughput import AnalyticThroughput, ThroughputModel, fit_analytic

__all__ = [
    "DEFAULT_MODEL",
    "AnalyticThroughput",
    "BatchSizeInput",
    "History",
    "JobState",
    "OnesConfig",
    "Population",
    "ProgressModel",
    "Schedule",
    "Step",
    "ThroughputModel",
    "add_points",
    "after_epoch",
    "auto",
    "brute_force",
    "check",
    "exact",
    "exact_cpsat",
    "exact_separable",
    "fit_analytic",
    "fit_progress",
    "greedy",
    "job_points",
    "lower_bound",
    "objective",
    "ones",
    "ones_step",
    "probability_sampling",
    "resume_limit",
    "scale_down",
    "scale_up",
    "schedule_of",
    "start_limit",
]
