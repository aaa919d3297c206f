"""The Chronus artifact's admission of one batch of arrivals (``admission_check="batch"``).

The artifact admits the SLO jobs that arrived since its last 5-minute pass
together (``time_aware_with_lease.py``,
``flush_event_jobs_with_cache_solution``). The reservations of the
guaranteed jobs the last selection placed (their ``cache_solution``: its
terms after the current one, less the earliest as the job's remaining
estimate shrinks, as ``flush_running_jobs`` trims them) are taken off each
term; the guaranteed jobs admitted since then, and the batch's jobs before
this one, are packed again with it by
:func:`~scheduling_opt.sim.policies.chronus.artifact.rules.packs`, each at
its first deadline; it is admitted when all fit (``solver.py``,
``MIPSolver.batch_fast_check_if_packable``). A refused job stays in the
rest of the batch's packing (``process_unaccepted_jobs`` trims only its
own copies of the lists): at its first deadline, or, for a one-step job,
at the window the binary search of ``process_unaccepted_jobs`` leaves
(:func:`~scheduling_opt.sim.policies.chronus.artifact.rules.relaxed_window`).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from scheduling_opt.sim.policies.chronus.artifact.rules import (
    Entry,
    Estimates,
    bins,
    packs,
    relaxed_window,
)
from scheduling_opt.sim.policies.chronus.ledger import Ledger
from scheduling_opt.sim.protocol import JobView, View

__all__ = ["admit_batch"]


def admit_batch(
    view: View,
    arrived: Sequence[JobView],
    origin: float,
    ledger: Ledger,
    estimates: Estimates,
) -> None:
    """Admit or refuse the SLO jobs of ``arrived`` as the artifact's batch admission does.

    Parameters
    ----------
    view : View
        The engine's view (the guaranteed jobs' progress, the capacity).
    arrived : sequence of JobView
        The batch, admitted in index order.
    origin : float
        The next term's start (window position 0).
    ledger : Ledger
        Reads ``guaranteed`` and ``cache``; gets the admitted jobs, their
        deadlines (the last step's, down to a term boundary) and the counts.
    estimates : Estimates
        The artifact's estimate per job (its lease length is the term's).

    Notes
    -----
    O(B E (log E + W)) for B arrivals, E packed jobs and windows of W terms.
    """
    length, now = estimates.lease_length, view.now
    capacity = sum(view.capacity)
    first = round(origin / length)  # the next term: window position 0
    free: list[int] = []
    entries: list[Entry] = []
    horizon = 0
    for i in sorted(ledger.guaranteed):
        st = view.pending.get(i) or view.running.get(i)
        if st is None:
            continue
        need = max(math.ceil((estimates.of(st) - st.attained(now)) / length), 0)
        horizon = max(horizon, math.floor(st.job.deadlines[-1][0] / length) - first)
        terms = ledger.cache.get(i)
        if terms is None:
            if need >= 1:
                window = math.floor(st.job.deadlines[0][0] / length) - first
                entries.append((bins(st.job.gpus), need, window))
            continue
        held = [t - first for t in terms if t >= first]
        for k in held[len(held) - min(len(held), need) :]:
            if k >= len(free):
                free.extend([capacity] * (k + 1 - len(free)))
            # The cache counts the job's own GPUs (``abstract_lease_with_cache_solution``).
            free[k] -= st.job.gpus
    for st in sorted(arrived, key=lambda s: s.index):
        if not st.job.slo:
            continue
        gpus, need = bins(st.job.gpus), math.ceil(estimates.of(st) / length)
        window = math.floor(st.job.deadlines[0][0] / length) - first
        last = math.floor(st.job.deadlines[-1][0] / length) - first
        entry = (gpus, need, window)
        if 1 <= need <= last and packs([*entries, entry], free, capacity):
            ledger.guaranteed.add(st.index)
            ledger.counts["admitted"] += 1
            # The artifact's deadline of an admitted job: the last step's, down to a term boundary.
            ledger.deadline[st.index] = (first + last) * length
        else:
            ledger.counts["rejected"] += 1
            ledger.unaccepted += 1
            if len(st.job.deadlines) == 1:
                high = max(horizon, window, *(w for _, _, w in entries)) + need + 1
                entry = (gpus, need, relaxed_window([*entries, entry], free, capacity, high))
        entries.append(entry)
        horizon = max(horizon, last, entry[2])
