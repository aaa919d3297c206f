"""Chronus lease-based selection of guaranteed SLO jobs, and admission control.

Given M GPUs, a lease length T_l and SLO jobs (G_i GPUs, R_i seconds left,
reward steps (D_p, V_p)), choose for each job a deadline to meet (or reject
it) and the lease terms it holds, at most M GPUs per term, maximizing the
total reward (Chronus §3.3.2, §3.3.4, §4.3). Build a :class:`LeaseInput` from
model jobs, call any method; each returns a
:class:`~scheduling_opt.solution.Solution` whose decision is a
:class:`LeaseDecision`.

Methods: :func:`exact` (``exact``, HiGHS, the default), :func:`exact_cpsat`
(``exact-cpsat``), :func:`exact_pulp` (``exact-pulp``, the paper's model on
CBC), :func:`greedy` (``greedy``), :func:`edf` (``edf``, the paper's
baseline); :func:`upper_bound` (LP relaxation); admission control with
:func:`admit_jobs`, :func:`admit` and :func:`admission_control`.

Examples
--------
>>> from scheduling_opt.model import Job, RewardStep
>>> from scheduling_opt.lease import LeaseInput, exact
>>> jobs = [Job("a", 2, 2, 1800.0, deadlines=(RewardStep(3600.0, 100),)),
...         Job("b", 4, 4, 1200.0, deadlines=(RewardStep(1200.0, 50),))]
>>> sol = exact(LeaseInput(jobs, capacity=4, lease_length=1200.0))
>>> sol.objective, sol.decision.terms
(150.0, {'a': (1, 2), 'b': (0,)})
"""

from scheduling_opt.lease._schedule import hint_terms
from scheduling_opt.lease.admission import Admission, admission_control, admit, admit_jobs
from scheduling_opt.lease.bounds import upper_bound
from scheduling_opt.lease.check import check
from scheduling_opt.lease.edf import edf
from scheduling_opt.lease.exact import exact
from scheduling_opt.lease.exact_cbc import exact_cbc
from scheduling_opt.lease.exact_cpsat import exact_cpsat
from scheduling_opt.lease.exact_pulp import exact_pulp
from scheduling_opt.lease.formulation import ModelConfig, model_size
from scheduling_opt.lease.greedy import Hint, greedy
from scheduling_opt.lease.model import (
    MAX_HORIZON,
    LeaseDecision,
    LeaseInput,
    LeaseJob,
    Level,
    round_up_gpus,
)

__all__ = [
    "MAX_HORIZON",
    "Admission",
    "Hint",
    "LeaseDecision",
    "LeaseInput",
    "LeaseJob",
    "Level",
    "ModelConfig",
    "admission_control",
    "admit",
    "admit_jobs",
    "check",
    "edf",
    "exact",
    "exact_cbc",
    "exact_cpsat",
    "exact_pulp",
    "greedy",
    "hint_terms",
    "model_size",
    "round_up_gpus",
    "upper_bound",
]
