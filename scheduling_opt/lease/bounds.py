"""An upper bound on the best total reward: the LP relaxation of the tightened lease MILP.

The model of :mod:`~scheduling_opt.lease.formulation` with every variable
continuous, solved by HiGHS. Its tight linking rows make it much closer to
the optimum than Eq. (4)'s relaxation. Chronus §3.3.4. One LP of
O(N (P + H)) variables and rows: polynomial, but on Chronus' C120 scale
several times the greedy's time (docs/lease.md), so ``greedy`` does not fill
its ``bound`` with it; call it when a certified gap is worth the LP.
"""

from __future__ import annotations

from scheduling_opt.errors import SolverError
from scheduling_opt.lease.exact import solve_highs
from scheduling_opt.lease.formulation import ModelConfig
from scheduling_opt.lease.model import LeaseInput
from scheduling_opt.solution import Status, time_limit_of

__all__ = ["upper_bound"]


def upper_bound(inp: LeaseInput, *, time_limit: float | None = None) -> float:
    """The LP-relaxation bound: no schedule of ``inp`` earns more reward.

    Parameters
    ----------
    inp : LeaseInput
        The jobs, M and T_l.
    time_limit : float or None
        Seconds for the LP (None: the library default).

    Returns
    -------
    float
        An upper bound on the optimal total reward (``-inf`` when even the
        relaxation of a ``require_all`` input is infeasible).

    Raises
    ------
    SolverError
        When HiGHS stops before solving the LP (time limit).

    Examples
    --------
    >>> from scheduling_opt.model import Job, RewardStep
    >>> jobs = [Job(j, 4, 4, 1200.0, deadlines=(RewardStep(2400.0, v),)) for j, v in
    ...         (("a", 100), ("b", 90), ("c", 80))]
    >>> upper_bound(LeaseInput(jobs, capacity=4, lease_length=1200.0))
    190.0

    References
    ----------
    Chronus (SoCC '21) §3.3.4, Eqs. (1)-(5).
    """
    out = solve_highs(inp, ModelConfig(), time_limit_of(time_limit), relax=True)
    if out.status is Status.INFEASIBLE:
        return float("-inf")
    if out.status is not Status.OPTIMAL or out.bound is None:
        raise SolverError("the lease LP relaxation was not solved in time")
    return out.bound
