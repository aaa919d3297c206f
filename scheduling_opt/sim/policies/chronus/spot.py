"""Chronus' Spot cluster: best-effort leases of ``be_lease`` granted by SRTF each BE cycle (§3.3.5).

With ``be_lease`` set (the paper: 300 s, T_profile, a fourth of the SLO
lease), the GPUs the guaranteed jobs do not hold form the Spot cluster,
and the best-effort queue (best-effort jobs, unguaranteed and demoted SLO
jobs, SLO jobs whose deadlines all passed) gets BE leases at BE cycles
only, every ``be_lease`` from each SLO term's start (an SLO cycle is also
a BE cycle, §3.3.3, Fig. 4):

- the Spot cluster's size at a cycle is the main cluster's GPUs less the
  GPUs the selected guaranteed jobs still need (Eq. (6)'s round-up under
  Chronus placement): it follows the guaranteed jobs each SLO cycle
  (§3.3.4), and a guaranteed job that ends inside its SLO lease yields its
  GPUs to Spot at the next BE cycle (§3.3.5), not at once;
- the queue's jobs, by shortest remaining time (the Profiler's estimate;
  for a job not running, plus what starting it costs, ``View.start_cost``,
  as ``srtf`` counts it), get leases while their GPUs fit in the Spot cluster's size (a job that
  does not fit is passed over, the next shorter may fit); a running job
  without a renewed lease is preempted (its BE lease expired), a pending
  one with a lease starts, placed by the loop's Allocator;
- between cycles no best-effort job starts, and a job whose lease cannot
  be placed at its cycle (fragmentation) waits for the next;
- like the SLO terms, the cycles run while the loop has jobs: after a time
  with none, the next cycle opens at the loop's first call (a job handed
  to an idle loop gets its lease at once).

Choices where the paper is silent: the logical clusters are GPU budgets
over one set of servers (placement is the loop's, over the whole main
cluster); a guaranteed job that the term's selection does not hold waits
in the SLO queue for the next SLO cycle rather than running on Spot (§3.3.4:
"The rest jobs will be placed in a SLO queue for consideration at the next
SLO scheduling cycle"). O(n log n) per cycle for n queued jobs.

Counting the start's cost keeps the cycles stable under any start cost:
without it two jobs whose start costs more than a BE lease took turns,
each preempted at its lease's end before it had paid its start (two
12-GPU jobs owing 2 x (1 + log2 12) = 9.2 minutes a start against 5-minute
leases: the work left grew at every turn and the run never ended). With
it, a running job loses its lease only to a job that ends sooner even
after paying its start, which then keeps it, as in ``srtf``.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable

from scheduling_opt.sim.protocol import RUNNING, JobView

__all__ = ["SpotCycles"]

_EPS = 1e-9


class SpotCycles:
    """The BE cycles of one run: when the next comes, which jobs hold a BE lease.

    Parameters
    ----------
    length : float
        The BE lease (trace units).
    remaining : callable
        A job's remaining work as the scheduler estimates it (SRTF's key).

    Examples
    --------
    >>> spot = SpotCycles(5.0, lambda st, now: st.remaining(now))
    >>> spot.due(0.0), spot.open_now(0.0)
    (True, False)
    """

    def __init__(self, length: float, remaining: Callable[[JobView, float], float]) -> None:
        self.length = length
        self.remaining = remaining
        self.next_cycle = -math.inf
        self.cycle_at = math.nan
        #: The jobs holding a BE lease in the current cycle.
        self.leased: set[int] = set()

    def due(self, now: float) -> bool:
        """Whether a BE cycle starts at ``now``."""
        return now >= self.next_cycle - _EPS

    def open_now(self, now: float) -> bool:
        """Whether ``now`` is the instant of the current cycle (its starts happen then)."""
        return abs(now - self.cycle_at) <= _EPS

    def open(
        self,
        now: float,
        queue: Iterable[JobView],
        room: int,
        next_term: float,
        start_cost: Callable[[JobView], float] | None = None,
    ) -> list[int]:
        """Open a cycle at ``now``: lease ``room`` GPUs by SRTF; the running jobs left without one.

        Parameters
        ----------
        now : float
            The cycle's start.
        queue : iterable of JobView
            The best-effort queue's jobs, pending or running.
        room : int
            The Spot cluster's GPUs at this cycle.
        next_term : float
            The next SLO cycle (the next BE cycle is at most there).
        start_cost : callable, optional
            What starting a job not running costs (``View.start_cost`` on its
            GPUs), added to its remaining time; None: nothing.

        Returns
        -------
        list of int
            The running jobs of ``queue`` whose lease is not renewed (to preempt).
        """
        self.cycle_at = now
        self.next_cycle = min(now + self.length, next_term)

        def key(st: JobView) -> tuple[float, int]:
            rest = self.remaining(st, now)
            if start_cost is not None and st.status != RUNNING:
                rest += start_cost(st)
            return (rest, st.index)

        if room <= 0:
            # Nothing can be leased: only the running jobs' order is needed.
            queue = [st for st in queue if st.status == RUNNING]
        jobs = sorted(queue, key=key)
        leased: set[int] = set()
        for st in jobs:
            if st.job.gpus <= room:
                leased.add(st.index)
                room -= st.job.gpus
        self.leased = leased
        return [st.index for st in jobs if st.status == RUNNING and st.index not in leased]
