"""Aryl server reclaiming: which N_R on-loan servers to give back to inference.

The inference cluster takes back N_R of the servers it lent to training; we
choose which, so that as few training jobs as possible are preempted, then
as few GPUs as possible are vacated on the kept servers (Aryl, EuroSys '22,
§4, §5.3, §7.3, Appendix B; NP-hard). Build a :class:`ReclaimInput` from
model objects and call any method; each returns a
:class:`~scheduling_opt.solution.Solution` of a :class:`ReclaimDecision`.

Examples
--------
>>> from scheduling_opt.model import Cluster, GpuType, Job, Placement, PlacementRow, Server
>>> from scheduling_opt.reclaim import ReclaimInput, aryl_plus, exact
>>> servers = tuple(Server(f"i{k}", "T4", 8, "inference", True) for k in (1, 2, 3))
>>> rows = (PlacementRow("a", "i1", 2), PlacementRow("a", "i2", 2))
>>> rows += (PlacementRow("b", "i1", 2), PlacementRow("b", "i3", 4))
>>> jobs = (Job("a", 4, 4, 3600.0), Job("b", 2, 6, 3600.0))
>>> inp = ReclaimInput(Cluster((GpuType("T4"),), servers), jobs, Placement(rows), 1)
>>> sol = aryl_plus(inp, seed=0)
>>> sol.decision.servers, sol.decision.scaled_in, sol.objective
(('i3',), (('b', 4),), 0.0)
>>> exact(inp).key
(0.0, 0.0)
"""

from scheduling_opt.reclaim.aryl import aryl
from scheduling_opt.reclaim.aryl_dp import aryl_dp
from scheduling_opt.reclaim.aryl_plus import aryl_plus
from scheduling_opt.reclaim.auto import auto
from scheduling_opt.reclaim.baselines import random_servers, scf
from scheduling_opt.reclaim.bounds import fraction_bound, lower_bound
from scheduling_opt.reclaim.check import check
from scheduling_opt.reclaim.exact import exact
from scheduling_opt.reclaim.exact_pulp import exact_pulp
from scheduling_opt.reclaim.frontier import frontier_dp
from scheduling_opt.reclaim.milp import ModelConfig, model_size
from scheduling_opt.reclaim.model import ReclaimDecision, ReclaimInput
from scheduling_opt.reclaim.two_stage import exact_two_stage

__all__ = [
    "ModelConfig",
    "ReclaimDecision",
    "ReclaimInput",
    "aryl",
    "aryl_dp",
    "aryl_plus",
    "auto",
    "check",
    "exact",
    "exact_pulp",
    "exact_two_stage",
    "fraction_bound",
    "frontier_dp",
    "lower_bound",
    "model_size",
    "random_servers",
    "scf",
]
