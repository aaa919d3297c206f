"""The simulator's built-in policies: one package per family, each declaring its names once.

A family's ``__init__`` holds its declarations (``SPECS``, each a
:class:`~scheduling_opt.sim.declare.PolicySpec`: names, variants,
parameters, what it adds to the cluster, the semantics it takes part in)
and imports its policy code only when a run makes one. The engine knows
none of them; :mod:`scheduling_opt.sim.registry` derives every name from
:data:`SPECS`. A new family is a package here and one line below.

- :mod:`.baselines`: FIFO, SJF, EDF, SRTF, Tiresias, YARN-CS and Chronus
  §4.3's (EDF without preemption, YARN-CS with class quotas, Genie,
  Themis, 3Sigma);
- :mod:`.edl`: EDL's Elastic-Tiresias (§5.1) and its plain-Tiresias ablation;
- :mod:`.chronus`: Chronus' admission, lease terms and placement (§3.3-§3.4),
  with the Chronus authors' simulator's rules as options;
- :mod:`.aryl`: Aryl's loaning and elastic scaling, its variants and §7.1's
  baselines;
- :mod:`.antman`: AntMan's guarantee and opportunistic jobs, and Gandiva;
- :mod:`.ones`: ONES' batch-size search and its fixed-batch baseline.
"""

from scheduling_opt.sim.declare import PolicySpec
from scheduling_opt.sim.policies import antman, aryl, baselines, chronus, edl, ones

#: Every built-in policy, in report order.
SPECS: tuple[PolicySpec, ...] = (
    *baselines.SPECS,
    *edl.SPECS,
    *chronus.SPECS,
    *aryl.SPECS,
    *antman.SPECS,
    *ones.SPECS,
)

__all__ = ["SPECS"]
